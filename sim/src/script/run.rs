//! The runner: statements to world choices, applied one at a time.
//!
//! Every step goes through [`World::apply`] with the trace on, then through the check
//! (every *always* property); the first violation stops the run, as in
//! [`crate::driver::replay`]. Between statements the network *settles* (every message
//! in flight on the merchant network that is not held is delivered, oldest first),
//! unless the next statement is passive (`net:`, `platform: 500`, a step label) and so
//! acts on what is in flight right now, or the script says
//! `use delivery=manual`.

use super::ScriptError;
use super::ast::*;
use super::report::{CallRecord, Exchange, ExpectResult, Report};
use crate::choice::Choice;
use crate::driver::{Check, Violation};
use crate::network::{MsgId, Node, Payload, UpstreamMsg};
use crate::trace::{Trace, What};
use crate::world::World;
use payhub_model::{
    Acquirer, AcquirerDecision, Branch, RequestId, Timer, UpstreamCall, WebhookEvent,
};
use std::collections::{BTreeMap, BTreeSet};

/// Most deliveries one settling may make before the script is said to loop.
const SETTLE_MAX: usize = 10_000;
/// Most steps `until quiet` may take.
const QUIET_MAX: usize = 5_000;

/// Which message a `net:` statement means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// The request or the response of this exchange.
    Exchange(RequestId),
    /// The next request from this node / response or webhook to this node.
    Node(u8),
    Any,
}

/// A fault waiting for its message to appear.
#[derive(Clone, Debug)]
struct Armed {
    op: NetOp,
    kind: MsgKind,
    target: Target,
    stmt: usize,
}

fn matches(kind: MsgKind, target: Target, payload: &Payload) -> bool {
    match (kind, payload) {
        (MsgKind::Request, Payload::Request { from, id, .. }) => match target {
            Target::Exchange(x) => *id == x,
            Target::Node(n) => *from == n,
            Target::Any => true,
        },
        (MsgKind::Response, Payload::Response { to, id, .. }) => match target {
            Target::Exchange(x) => *id == x,
            Target::Node(n) => *to == n,
            Target::Any => true,
        },
        (MsgKind::Webhook, Payload::Webhook { to, .. }) => match target {
            Target::Node(n) => *to == n,
            _ => true,
        },
        _ => false,
    }
}

/// Why a run stopped early.
enum Stop {
    Violation,
    Error(ScriptError),
}

pub(crate) struct Runner<'s> {
    pub(crate) script: &'s Script,
    pub(crate) world: World,
    pub(crate) trace: Trace,
    tape: Vec<Choice>,
    step_stmt: Vec<usize>,
    pub(crate) exchanges: Vec<Exchange>,
    by_id: BTreeMap<RequestId, usize>,
    last_exchange: Option<usize>,
    last_of_server: BTreeMap<usize, usize>,
    held: BTreeSet<MsgId>,
    armed: Vec<Armed>,
    branches: Vec<(Branch, usize)>,
    pub(crate) webhooks: Vec<(u8, WebhookEvent)>,
    pub(crate) calls: Vec<CallRecord>,
    results: Vec<ExpectResult>,
    violation: Option<(Violation, usize)>,
}

/// Runs a parsed script; `check` runs after every step (pass every *always* property).
pub fn run(script: &Script, check: &mut dyn Check) -> Report {
    let mut r = Runner {
        script,
        world: World::new(&script.config),
        trace: Trace::new(),
        tape: Vec::new(),
        step_stmt: Vec::new(),
        exchanges: Vec::new(),
        by_id: BTreeMap::new(),
        last_exchange: None,
        last_of_server: BTreeMap::new(),
        held: BTreeSet::new(),
        armed: Vec::new(),
        branches: Vec::new(),
        webhooks: Vec::new(),
        calls: Vec::new(),
        results: Vec::new(),
        violation: None,
    };
    let mut stop = None;
    if let Some(v) = check.check(&r.world) {
        r.violation = Some((v, 0));
        stop = Some(Stop::Violation);
    }
    let n = script.statements.len();
    let mut next = 0;
    while stop.is_none() && next < n {
        let i = next;
        next += 1;
        let mut outcome = r.statement(i, check);
        let next_passive = script
            .statements
            .get(i + 1)
            .is_some_and(|s| s.action.is_passive());
        if outcome.is_ok() && !script.manual && !next_passive {
            outcome = r.settle(i, check);
        }
        if let Err(s) = outcome {
            stop = Some(s);
        }
    }
    // Statements never reached (the run stopped): their expectations did not run.
    for s in &script.statements[next.min(n)..] {
        if matches!(s.action, Action::Expect(_)) {
            r.results.push(ExpectResult {
                pos: s.pos,
                text: r.line_text(s.pos),
                failure: None,
                skipped: true,
            });
        }
    }
    let error = match stop {
        Some(Stop::Error(e)) => Some(e),
        _ => None,
    };
    if error.is_none() && r.violation.is_none() {
        r.leftovers();
    }
    if let Some((name, pos)) = &script.expected_violation {
        let failure = match &r.violation {
            Some((v, _)) if v.property == *name => None,
            Some((v, _)) => Some(format!("{} was violated instead: {}", v.property, v.detail)),
            None if error.is_some() => Some("the run stopped before any violation".to_owned()),
            None => Some(format!("no step violated {name}")),
        };
        r.results.push(ExpectResult {
            pos: *pos,
            text: r.line_text(*pos),
            failure,
            skipped: false,
        });
    }
    r.results.sort_by_key(|x| x.pos);
    let violation = r.violation.take().map(|(v, stmt)| {
        let pos = script
            .statements
            .get(stmt)
            .map_or(Pos::default(), |s| s.pos);
        (v, pos)
    });
    let step_lines = r
        .step_stmt
        .iter()
        .map(|i| script.statements[*i].pos.line)
        .collect();
    Report {
        file: script.file.clone(),
        title: script.title.clone(),
        servers: script.servers.clone(),
        assumptions: script.assumptions.clone(),
        config: script.config.clone(),
        manual: script.manual,
        source: script.source.clone(),
        statements: script.statements.iter().map(|s| s.pos).collect(),
        trace: r.trace,
        tape: r.tape,
        step_lines,
        exchanges: r.exchanges,
        results: r.results,
        violation,
        expected_violation: script.expected_violation.as_ref().map(|(n, _)| n.clone()),
        error,
        world: r.world,
    }
}

impl Runner<'_> {
    fn line_text(&self, pos: Pos) -> String {
        self.script
            .source
            .get(pos.line as usize - 1)
            .map(|l| l.trim().to_owned())
            .unwrap_or_default()
    }

    fn fail(&self, stmt: usize, message: impl Into<String>) -> Stop {
        let pos = self.script.statements[stmt].pos;
        Stop::Error(ScriptError::new(
            &self.script.file,
            pos.line,
            pos.column,
            message,
        ))
    }

    /// Applies one choice, records what it did, and checks the properties.
    fn apply(&mut self, choice: Choice, stmt: usize, check: &mut dyn Check) -> Result<(), Stop> {
        let config = &self.script.config;
        let key = match &choice {
            Choice::Deliver { msg, .. } | Choice::Fail500After { msg, .. } => {
                match self.world.net.get(*msg) {
                    Some(Payload::Request { request, .. }) => {
                        request.idempotency_key.as_deref().map(str::to_owned)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let from = self.trace.events.len();
        self.trace.begin_step(self.tape.len() as u32);
        if let Err(e) = self.world.apply(config, &choice, Some(&mut self.trace)) {
            return Err(self.fail(stmt, format!("cannot apply '{choice}': {e}")));
        }
        if let Choice::Drop { msg } = &choice {
            self.held.remove(msg);
        }
        self.tape.push(choice);
        self.step_stmt.push(stmt);
        self.observe(from, key);
        if let Some(v) = check.check(&self.world) {
            self.violation = Some((v, stmt));
            return Err(Stop::Violation);
        }
        Ok(())
    }

    /// Reads what the last step did from its trace events.
    fn observe(&mut self, from: usize, key: Option<String>) {
        for e in &self.trace.events[from..] {
            match &e.what {
                What::Response { id, response } => {
                    if let Some(&x) = self.by_id.get(id) {
                        self.exchanges[x].response = Some(response.clone());
                    }
                }
                What::Lost { id, .. } => {
                    if let Some(&x) = self.by_id.get(id) {
                        self.exchanges[x].lost = true;
                    }
                }
                What::Webhook { event } => {
                    if let Node::Merchant(n) = e.to {
                        self.webhooks.push((n, event.clone()));
                    }
                }
                What::UpstreamCall {
                    call:
                        UpstreamCall::Charge {
                            attempt,
                            payment,
                            card,
                            ..
                        },
                } => self.calls.push(CallRecord {
                    attempt: *attempt,
                    payment: *payment,
                    card: *card,
                    key: key.clone(),
                }),
                _ => {}
            }
        }
    }

    /// Delivers every message in flight that is not held, oldest first, applying armed
    /// faults to the messages they name.
    fn settle(&mut self, stmt: usize, check: &mut dyn Check) -> Result<(), Stop> {
        for _ in 0..SETTLE_MAX {
            let next = self
                .world
                .net
                .iter()
                .find(|(m, _)| !self.held.contains(m))
                .map(|(m, p)| (m, p.clone()));
            let Some((msg, payload)) = next else {
                return Ok(());
            };
            if let Some(k) = self
                .armed
                .iter()
                .position(|a| matches(a.kind, a.target, &payload))
            {
                let armed = self.armed.remove(k);
                self.fault(armed.op, msg, &payload, armed.stmt, check)?;
                continue;
            }
            let branch = self.branch_for(&payload, stmt)?;
            self.apply(Choice::Deliver { msg, branch }, stmt, check)?;
        }
        Err(self.fail(
            stmt,
            format!("the network did not settle after {SETTLE_MAX} deliveries"),
        ))
    }

    /// The branch a request takes if it reaches a branch point now (from `branch:`).
    fn branch_for(&mut self, payload: &Payload, stmt: usize) -> Result<Option<Branch>, Stop> {
        let Payload::Request { request, .. } = payload else {
            return Ok(None);
        };
        let Some(point) = self.world.platform.branch_point(self.world.now, request) else {
            return Ok(None);
        };
        match self.branches.iter().position(|(b, _)| b.point() == point) {
            Some(k) => Ok(Some(self.branches.remove(k).0)),
            None => {
                let [a, b] = point.alternatives();
                Err(self.fail(
                    stmt,
                    format!(
                        "'{request}' reaches the branch point {point:?}, where the contract allows two behaviours: say which with 'branch: {}' or 'branch: {}' before it",
                        a.as_str(),
                        b.as_str()
                    ),
                ))
            }
        }
    }

    fn fault(
        &mut self,
        op: NetOp,
        msg: MsgId,
        payload: &Payload,
        stmt: usize,
        check: &mut dyn Check,
    ) -> Result<(), Stop> {
        match op {
            NetOp::Drop => self.apply(Choice::Drop { msg }, stmt, check),
            NetOp::Duplicate => self.apply(Choice::Duplicate { msg }, stmt, check),
            NetOp::Hold => {
                self.held.insert(msg);
                Ok(())
            }
            NetOp::Fail500Before => self.apply(Choice::Fail500Before { msg }, stmt, check),
            NetOp::Fail500After => {
                let branch = self.branch_for(payload, stmt)?;
                self.apply(Choice::Fail500After { msg, branch }, stmt, check)
            }
            NetOp::Release => Ok(()),
        }
    }

    fn target(&self, kind: MsgKind, server: Option<usize>) -> Target {
        match (kind, server) {
            (MsgKind::Webhook, Some(s)) => Target::Node(self.script.servers[s].node),
            (MsgKind::Webhook, None) => Target::Any,
            (_, Some(s)) => match self.last_of_server.get(&s) {
                Some(&x) => Target::Exchange(self.exchanges[x].id),
                None => Target::Node(self.script.servers[s].node),
            },
            (_, None) => match self.last_exchange {
                Some(x) => Target::Exchange(self.exchanges[x].id),
                None => Target::Any,
            },
        }
    }

    fn statement(&mut self, i: usize, check: &mut dyn Check) -> Result<(), Stop> {
        let action = self.script.statements[i].action.clone();
        match action {
            Action::Request { server, request } => {
                let node = self.script.servers[server].node;
                self.apply(
                    Choice::Send {
                        merchant: node,
                        request: request.clone().into(),
                    },
                    i,
                    check,
                )?;
                let id = match self.world.net.iter().last() {
                    Some((_, Payload::Request { id, .. })) => *id,
                    _ => return Err(self.fail(i, "the request did not leave")),
                };
                let pos = self.script.statements[i].pos;
                self.by_id.insert(id, self.exchanges.len());
                self.last_exchange = Some(self.exchanges.len());
                self.last_of_server.insert(server, self.exchanges.len());
                self.exchanges.push(Exchange {
                    line: pos.line,
                    server: self.script.servers[server].name.clone(),
                    node,
                    id,
                    request,
                    response: None,
                    lost: false,
                });
                Ok(())
            }
            Action::Command {
                item, crash_after, ..
            } => self.apply(Choice::Command { item, crash_after }, i, check),
            Action::Net { op, kind, server } => self.net(i, op, kind, server, check),
            Action::Upstream {
                call,
                decision,
                reply,
            } => self.upstream(i, call, decision, reply, check),
            Action::UpstreamLost { call } => {
                let msg = self.find_call(i, call)?;
                self.apply(Choice::DropUpstream { msg }, i, check)
            }
            Action::UpstreamReply { deliver } => {
                let msg = self
                    .world
                    .link
                    .iter()
                    .find(|(_, m)| matches!(m, UpstreamMsg::Reply(_)))
                    .map(|(m, _)| m)
                    .ok_or_else(|| self.fail(i, "no acquirer reply is in flight"))?;
                let choice = if deliver {
                    Choice::DeliverUpstream { msg }
                } else {
                    Choice::DropUpstream { msg }
                };
                self.apply(choice, i, check)
            }
            Action::Payer { attempt, ok } => {
                let attempt = match attempt {
                    Some(a) => a,
                    None => self
                        .world
                        .acquirer
                        .awaiting_payer()
                        .next()
                        .ok_or_else(|| self.fail(i, "no charge is waiting for the payer"))?,
                };
                self.apply(Choice::Authenticate { attempt, ok }, i, check)
            }
            Action::Control(c) => self.apply(Choice::Control(c), i, check),
            Action::Branch(b) => {
                self.branches.push((b, i));
                Ok(())
            }
            Action::Wait(d) => self.apply(Choice::Advance(d), i, check),
            Action::Tick => {
                if self.world.next_deadline().is_none() {
                    return Err(self.fail(i, "tick: no timer is set"));
                }
                self.apply(Choice::Tick, i, check)
            }
            Action::UntilQuiet { decision } => self.until_quiet(i, decision, check),
            Action::Crash { server } => self.apply(
                Choice::Crash {
                    merchant: self.script.servers[server].node,
                },
                i,
                check,
            ),
            Action::Restart { server } => self.apply(
                Choice::Restart {
                    merchant: self.script.servers[server].node,
                },
                i,
                check,
            ),
            Action::Step(choice) => {
                if let Choice::Drop { msg } | Choice::Deliver { msg, .. } = &choice {
                    self.held.remove(msg);
                }
                self.apply(choice, i, check)
            }
            Action::Expect(e) => {
                let pos = self.script.statements[i].pos;
                let failure = super::expect::evaluate(self, &e).err();
                self.results.push(ExpectResult {
                    pos,
                    text: self.line_text(pos),
                    failure,
                    skipped: false,
                });
                Ok(())
            }
        }
    }

    fn net(
        &mut self,
        i: usize,
        op: NetOp,
        kind: Option<MsgKind>,
        server: Option<usize>,
        check: &mut dyn Check,
    ) -> Result<(), Stop> {
        if op == NetOp::Release {
            let target = kind.map(|k| (k, self.target(k, server)));
            let held: Vec<MsgId> = self
                .held
                .iter()
                .copied()
                .filter(|m| match (target, self.world.net.get(*m)) {
                    (None, _) => true,
                    (Some((k, t)), Some(p)) => matches(k, t, p),
                    (Some(_), None) => false,
                })
                .collect();
            let before = self.armed.len();
            self.armed.retain(|a| {
                a.op != NetOp::Hold || target.is_some_and(|(k, t)| a.kind != k || a.target != t)
            });
            if held.is_empty() && self.armed.len() == before {
                return Err(self.fail(i, "nothing held matches"));
            }
            for m in held {
                self.held.remove(&m);
            }
            return Ok(());
        }
        let kind = kind.expect("only release goes without a kind");
        let target = self.target(kind, server);
        let now = self
            .world
            .net
            .iter()
            .filter(|(_, p)| matches(kind, target, p))
            .last()
            .map(|(m, p)| (m, p.clone()));
        if let Some((msg, payload)) = now {
            return self.fault(op, msg, &payload, i, check);
        }
        if let Target::Exchange(id) = target {
            let x = &self.exchanges[self.by_id[&id]];
            let gone = match kind {
                MsgKind::Request => Some(format!(
                    "the request of line {} is no longer in flight (it reached the platform or was lost): put this statement right after its request line",
                    x.line
                )),
                MsgKind::Response if x.response.is_some() => Some(format!(
                    "the response to line {} was already delivered",
                    x.line
                )),
                MsgKind::Response if x.lost => {
                    Some(format!("the exchange of line {} was already lost", x.line))
                }
                _ => None,
            };
            if let Some(message) = gone {
                return Err(self.fail(i, message));
            }
        }
        self.armed.push(Armed {
            op,
            kind,
            target,
            stmt: i,
        });
        Ok(())
    }

    fn find_call(&self, i: usize, kind: CallKind) -> Result<MsgId, Stop> {
        let found = self.world.link.iter().find(|(m, msg)| {
            let UpstreamMsg::Call(call) = msg else {
                return false;
            };
            match kind {
                CallKind::Any => true,
                CallKind::Charge => matches!(call, UpstreamCall::Charge { .. }),
                CallKind::Query => matches!(call, UpstreamCall::QueryCharge { .. }),
                CallKind::Cancel => matches!(call, UpstreamCall::CancelCharge { .. }),
                CallKind::Refund => matches!(call, UpstreamCall::Refund { .. }),
                CallKind::QueryRefund => matches!(call, UpstreamCall::QueryRefund { .. }),
                CallKind::Id(n) => m.0 == n,
            }
        });
        found.map(|(m, _)| m).ok_or_else(|| {
            let in_flight: Vec<String> = self
                .world
                .link
                .iter()
                .map(|(m, msg)| match msg {
                    UpstreamMsg::Call(c) => format!("u{}: {c}", m.0),
                    UpstreamMsg::Reply(r) => format!("u{}: reply {r}", m.0),
                })
                .collect();
            let what = if in_flight.is_empty() {
                "nothing".to_owned()
            } else {
                in_flight.join("; ")
            };
            self.fail(
                i,
                format!("no matching upstream call is in flight (in flight: {what})"),
            )
        })
    }

    fn upstream(
        &mut self,
        i: usize,
        kind: CallKind,
        decision: AcquirerDecision,
        reply: ReplyFate,
        check: &mut dyn Check,
    ) -> Result<(), Stop> {
        let msg = self.find_call(i, kind)?;
        if let Some(UpstreamMsg::Call(call)) = self.world.link.get(msg) {
            let allowed = Acquirer::decisions_for(call);
            if !allowed.contains(&decision) {
                let names: Vec<String> = allowed
                    .iter()
                    .map(|d| {
                        serde_json::to_string(d)
                            .unwrap_or_default()
                            .trim_matches('"')
                            .to_owned()
                    })
                    .collect();
                return Err(self.fail(i, format!("'{call}' takes {} only", names.join(", "))));
            }
        }
        let last = self.world.link.iter().last().map_or(0, |(m, _)| m.0);
        self.apply(Choice::Acquire { msg, decision }, i, check)?;
        let replies: Vec<MsgId> = self
            .world
            .link
            .iter()
            .filter(|(m, msg)| m.0 > last && matches!(msg, UpstreamMsg::Reply(_)))
            .map(|(m, _)| m)
            .collect();
        for msg in replies {
            match reply {
                ReplyFate::Deliver => self.apply(Choice::DeliverUpstream { msg }, i, check)?,
                ReplyFate::Lost => self.apply(Choice::DropUpstream { msg }, i, check)?,
                ReplyFate::Held => {}
            }
        }
        Ok(())
    }

    fn until_quiet(
        &mut self,
        i: usize,
        decision: AcquirerDecision,
        check: &mut dyn Check,
    ) -> Result<(), Stop> {
        for _ in 0..QUIET_MAX {
            self.settle(i, check)?;
            let next = self
                .world
                .link
                .iter()
                .next()
                .map(|(m, msg)| (m, msg.clone()));
            match next {
                Some((msg, UpstreamMsg::Call(call))) => {
                    let d = if Acquirer::decisions_for(&call).contains(&decision) {
                        decision
                    } else {
                        AcquirerDecision::Approve
                    };
                    self.apply(Choice::Acquire { msg, decision: d }, i, check)?;
                }
                Some((msg, UpstreamMsg::Reply(_))) => {
                    self.apply(Choice::DeliverUpstream { msg }, i, check)?;
                }
                None => {
                    if !self.busy() {
                        return Ok(());
                    }
                    self.apply(Choice::Tick, i, check)?;
                }
            }
        }
        Err(self.fail(i, format!("not quiet after {QUIET_MAX} steps")))
    }

    /// Whether something is still due besides housekeeping: a platform timer other than
    /// a key's retention or a Payment's expiry, a client timer, a client's timeout.
    fn busy(&self) -> bool {
        let platform = self
            .world
            .platform
            .timers()
            .any(|(_, t)| !matches!(t, Timer::Retention(_) | Timer::PaymentExpiry(_)));
        let clients = self
            .world
            .servers
            .iter()
            .flatten()
            .any(|s| s.poll_timeout().is_some());
        platform || clients || !self.world.awaiting.is_empty()
    }

    /// After the last statement: faults that never found their message and branches
    /// never taken are failures.
    fn leftovers(&mut self) {
        for a in std::mem::take(&mut self.armed) {
            let pos = self.script.statements[a.stmt].pos;
            self.results.push(ExpectResult {
                pos,
                text: self.line_text(pos),
                failure: Some("never applied: no such message appeared".to_owned()),
                skipped: false,
            });
        }
        for (b, stmt) in std::mem::take(&mut self.branches) {
            let pos = self.script.statements[stmt].pos;
            self.results.push(ExpectResult {
                pos,
                text: self.line_text(pos),
                failure: Some(format!(
                    "branch {} was never taken: no request reached {:?}",
                    b.as_str(),
                    b.point()
                )),
                skipped: false,
            });
        }
    }
}
