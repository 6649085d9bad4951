//! The runner: statements to world choices, applied one at a time.
//!
//! Every step goes through [`World::apply`] with the trace on, then through the check
//! (every *always* property); the first violation stops the run, as in
//! [`crate::driver::replay`]. Between statements the network *settles* (every message
//! in flight on the merchant network that is not held is delivered, oldest first),
//! unless the next statement is passive (`net:`, `platform: 500`, a step label) and so
//! acts on what is in flight right now, or the script says
//! `use delivery=manual`.

mod expect;
mod net;
mod upstream;

use super::ScriptError;
use super::ast::*;
use super::report::{CallRecord, Exchange, ExpectResult, Report};
use crate::choice::Choice;
use crate::driver::{Check, Violation};
use crate::event_fold::EventFold;
use crate::network::{MsgId, Node, Payload};
use crate::trace::{Trace, TraceWhat};
use crate::world::World;
use net::Armed;
use payhub_model::event::BusinessOrder;
use payhub_model::{ApiRequest, Branch, RefundId, RequestId, UpstreamCall, WebhookEvent};
use std::collections::{BTreeMap, BTreeSet};

/// Why a run stopped early.
enum Stop {
    Violation,
    Error(ScriptError),
}

pub(crate) struct Runner<'s, F: EventFold> {
    pub(crate) script: &'s Script,
    /// Runs after every step (every *always* property).
    check: &'s mut dyn Check<F>,
    pub(crate) world: World<F>,
    pub(crate) trace: Trace,
    tape: Vec<Choice>,
    step_stmt: Vec<usize>,
    pub(crate) exchanges: Vec<Exchange>,
    by_id: BTreeMap<RequestId, usize>,
    held: BTreeSet<MsgId>,
    armed: Vec<Armed>,
    branches: Vec<(Branch, usize)>,
    pub(crate) webhooks: Vec<(u8, WebhookEvent)>,
    pub(crate) calls: Vec<CallRecord>,
    /// Upstream refund calls, per refund.
    pub(crate) refund_calls: BTreeMap<RefundId, u8>,
    results: Vec<ExpectResult>,
    violation: Option<(Violation, usize)>,
}

/// Runs a parsed script; `check` runs after every step (pass every *always* property).
pub fn run<F: EventFold>(script: &Script, check: &mut dyn Check<F>) -> Report<F> {
    let mut r = Runner::new(script, check);
    let mut stop = None;
    if let Some(v) = r.check.check(&r.world) {
        r.violation = Some((v, 0));
        stop = Some(Stop::Violation);
    }
    let (next, stop) = r.statements(stop);
    r.not_reached(next);
    let error = match stop {
        Some(Stop::Error(e)) => Some(e),
        _ => None,
    };
    if error.is_none() && r.violation.is_none() {
        r.leftovers();
    }
    r.compare_expected_violation(error.is_some());
    r.results.sort_by_key(|x| x.pos);
    r.report(error)
}

impl<'s, F: EventFold> Runner<'s, F> {
    fn new(script: &'s Script, check: &'s mut dyn Check<F>) -> Runner<'s, F> {
        Runner {
            script,
            check,
            world: World::new(&script.config),
            trace: Trace::new(),
            tape: Vec::new(),
            step_stmt: Vec::new(),
            exchanges: Vec::new(),
            by_id: BTreeMap::new(),
            held: BTreeSet::new(),
            armed: Vec::new(),
            branches: Vec::new(),
            webhooks: Vec::new(),
            calls: Vec::new(),
            refund_calls: BTreeMap::new(),
            results: Vec::new(),
            violation: None,
        }
    }

    /// Runs the statements in order until one stops the run (unless `stop` already
    /// did), settling the network after each unless the script or the next statement
    /// says not to. Returns the index of the first statement not run, and why it stopped.
    fn statements(&mut self, mut stop: Option<Stop>) -> (usize, Option<Stop>) {
        let script = self.script;
        let n = script.statements.len();
        let mut next = 0;
        while stop.is_none() && next < n {
            let i = next;
            next += 1;
            let mut outcome = self.statement(i);
            let following = script.statements.get(i + 1);
            let next_passive = following.is_some_and(|s| s.action.is_passive());
            if outcome.is_ok() && !script.manual && !next_passive {
                outcome = self.settle(i);
            }
            if let Err(s) = outcome {
                stop = Some(s);
            }
        }
        (next, stop)
    }

    /// Statements never reached (the run stopped): their expectations did not run.
    fn not_reached(&mut self, next: usize) {
        let statements = &self.script.statements;
        for s in &statements[next.min(statements.len())..] {
            if matches!(s.action, Action::Expect(_)) {
                self.result(s.pos, None, true);
            }
        }
    }

    /// `expect violation NAME`: the run violated that property, and no other.
    fn compare_expected_violation(&mut self, stopped_by_error: bool) {
        let Some((name, pos)) = &self.script.expected_violation else {
            return;
        };
        let failure = match &self.violation {
            Some((v, _)) if v.property == *name => None,
            Some((v, _)) => Some(format!("{} was violated instead: {}", v.property, v.detail)),
            None if stopped_by_error => Some("the run stopped before any violation".to_owned()),
            None => Some(format!("no step violated {name}")),
        };
        self.result(*pos, failure, false);
    }

    fn report(mut self, error: Option<ScriptError>) -> Report<F> {
        let script = self.script;
        let violation = self.violation.take().map(|(v, stmt)| {
            let statement = script.statements.get(stmt);
            (v, statement.map_or(Pos::default(), |s| s.pos))
        });
        let line = |i: &usize| script.statements[*i].pos.line;
        let step_lines = self.step_stmt.iter().map(line).collect();
        Report {
            script: script.clone(),
            trace: self.trace,
            tape: self.tape,
            step_lines,
            exchanges: self.exchanges,
            results: self.results,
            violation,
            violation_rules: Vec::new(),
            error,
            world: self.world,
        }
    }
}

impl<F: EventFold> Runner<'_, F> {
    /// The verdict on the statement at `pos` (`failure`: `None` when it holds).
    fn result(&mut self, pos: Pos, failure: Option<String>, skipped: bool) {
        let source = self.script.source.get(pos.line as usize - 1);
        self.results.push(ExpectResult {
            pos,
            text: source.map(|l| l.trim().to_owned()).unwrap_or_default(),
            failure,
            skipped,
        });
    }

    fn fail(&self, stmt: usize, message: impl Into<String>) -> Stop {
        let Pos { line, column } = self.script.statements[stmt].pos;
        Stop::Error(ScriptError::new(&self.script.file, line, column, message))
    }

    /// Applies one choice, records what it did, and checks the properties.
    fn apply(&mut self, choice: Choice, stmt: usize) -> Result<(), Stop> {
        let config = &self.script.config;
        // The Idempotency-Key of a request this step delivers, for the calls it causes.
        let key = match &choice {
            Choice::Deliver { msg, .. } | Choice::Fail500After { msg, .. } => {
                self.world.net.get(*msg)
            }
            _ => None,
        };
        let key = match key {
            Some(Payload::Request { request, .. }) => request.idempotency_key.as_deref(),
            _ => None,
        };
        let key = key.map(str::to_owned);
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
        if let Some(v) = self.check.check(&self.world) {
            self.violation = Some((v, stmt));
            return Err(Stop::Violation);
        }
        Ok(())
    }

    /// Reads what the last step did from its trace events.
    fn observe(&mut self, from: usize, key: Option<String>) {
        for e in &self.trace.events[from..] {
            match &e.what {
                TraceWhat::Response { id, response } if self.by_id.contains_key(id) => {
                    self.exchanges[self.by_id[id]].response = Some(response.clone());
                }
                TraceWhat::Lost { id, .. } if self.by_id.contains_key(id) => {
                    self.exchanges[self.by_id[id]].lost = true;
                }
                TraceWhat::Webhook { event } => {
                    if let Node::Merchant(n) = e.to {
                        self.webhooks.push((n, event.clone()));
                    }
                }
                TraceWhat::UpstreamCall { call } => match *call {
                    UpstreamCall::Charge {
                        attempt,
                        payment,
                        card,
                        ..
                    } => {
                        let key = key.clone();
                        self.calls.push(CallRecord {
                            attempt,
                            payment,
                            card,
                            key,
                        })
                    }
                    UpstreamCall::Refund { refund, .. } => {
                        let n = self.refund_calls.entry(refund).or_insert(0);
                        *n = n.saturating_add(1);
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }

    fn statement(&mut self, i: usize) -> Result<(), Stop> {
        let node = |server: usize| self.script.servers[server].node;
        let choice = match self.script.statements[i].action.clone() {
            Action::Request {
                server,
                request,
                business,
            } => return self.request(i, server, request, business),
            Action::Net { op, kind, server } => return self.net(i, op, kind, server),
            Action::Upstream {
                call,
                decision,
                reply,
            } => return self.upstream(i, call, decision, reply),
            Action::UpstreamReply { deliver } => return self.upstream_reply(i, deliver),
            Action::Payer { attempt, ok } => return self.payer(i, attempt, ok),
            Action::UntilQuiet { decision } => return self.until_quiet(i, decision),
            Action::Branch(b) => {
                self.branches.push((b, i));
                return Ok(());
            }
            Action::Expect(e) => {
                let pos = self.script.statements[i].pos;
                self.result(pos, self.evaluate(&e).err(), false);
                return Ok(());
            }
            Action::Command {
                item, crash_after, ..
            } => Choice::Command { item, crash_after },
            Action::UpstreamLost { call } => Choice::DropUpstream {
                msg: self.find_call(i, call)?,
            },
            Action::Control(c) => Choice::Control(c),
            Action::Wait(d) => Choice::Advance(d),
            Action::Tick if self.world.next_deadline().is_none() => {
                return Err(self.fail(i, "tick: no timer is set"));
            }
            Action::Tick => Choice::Tick,
            Action::Crash { server } => Choice::Crash {
                merchant: node(server),
            },
            Action::Restart { server } => Choice::Restart {
                merchant: node(server),
            },
            Action::Step(choice) => {
                if let Choice::Drop { msg } | Choice::Deliver { msg, .. } = &choice {
                    self.held.remove(msg);
                }
                choice
            }
        };
        self.apply(choice, i)
    }

    /// A request line: the server sends it, and it becomes the script's latest exchange.
    fn request(
        &mut self,
        i: usize,
        server: usize,
        request: ApiRequest,
        business: Option<BusinessOrder>,
    ) -> Result<(), Stop> {
        let merchant = self.script.servers[server].node;
        let send = Choice::Send {
            merchant,
            request: request.clone().into(),
        };
        self.apply(send, i)?;
        let id = match self.world.net.iter().last() {
            Some((_, Payload::Request { id, .. })) => *id,
            _ => return Err(self.fail(i, "the request did not leave")),
        };
        // As the sandbox files a create: on the origin, before the request is delivered.
        if let (Some(b), Some(origin)) = (business, self.world.origins.get_mut(&id)) {
            origin.business = Some(b);
        }
        let pos = self.script.statements[i].pos;
        self.by_id.insert(id, self.exchanges.len());
        self.exchanges.push(Exchange {
            line: pos.line,
            server: self.script.servers[server].name.clone(),
            id,
            request,
            response: None,
            lost: false,
        });
        Ok(())
    }

    /// After the last statement: faults that never found their message and branches
    /// never taken are failures.
    fn leftovers(&mut self) {
        for a in std::mem::take(&mut self.armed) {
            let pos = self.script.statements[a.stmt].pos;
            let failure = "never applied: no such message appeared".to_owned();
            self.result(pos, Some(failure), false);
        }
        for (b, stmt) in std::mem::take(&mut self.branches) {
            let pos = self.script.statements[stmt].pos;
            let (branch, point) = (b.as_str(), b.point().as_str());
            let failure = format!("branch {branch} was never taken: no request reached {point}");
            self.result(pos, Some(failure), false);
        }
    }
}
