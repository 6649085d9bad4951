//! The merchant network under a script: settling (delivering what is in flight, oldest
//! first), the faults of `net:` and `platform: 500` statements, armed until their
//! message appears, and the branch a delivered request takes.

use super::{Runner, Stop};
use crate::choice::Choice;
use crate::event_fold::EventFold;
use crate::network::{MsgId, Payload};
use crate::script::Exchange;
use crate::script::ast::*;
use payhub_model::{Branch, RequestId};

/// Most deliveries one settling may make before the script is said to loop.
const SETTLE_MAX: usize = 10_000;

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
pub(super) struct Armed {
    op: NetOp,
    kind: MsgKind,
    target: Target,
    pub(super) stmt: usize,
}

fn matches(kind: MsgKind, target: Target, payload: &Payload) -> bool {
    // The node the message is from (a request) or to, and its exchange (a webhook has none).
    let (node, id) = match (kind, payload) {
        (MsgKind::Request, Payload::Request { from, id, .. }) => (*from, Some(*id)),
        (MsgKind::Response, Payload::Response { to, id, .. }) => (*to, Some(*id)),
        (MsgKind::Webhook, Payload::Webhook { to, .. }) => (*to, None),
        _ => return false,
    };
    match target {
        Target::Exchange(x) => id.is_none_or(|id| id == x),
        Target::Node(n) => node == n,
        Target::Any => true,
    }
}

impl<F: EventFold> Runner<'_, F> {
    /// Delivers every message in flight that is not held, oldest first, applying armed
    /// faults to the messages they name.
    pub(super) fn settle(&mut self, stmt: usize) -> Result<(), Stop> {
        for _ in 0..SETTLE_MAX {
            let next = self.world.net.iter().find(|(m, _)| !self.held.contains(m));
            let next = next.map(|(m, p)| (m, p.clone()));
            let Some((msg, payload)) = next else {
                return Ok(());
            };
            let armed = |a: &Armed| matches(a.kind, a.target, &payload);
            if let Some(k) = self.armed.iter().position(armed) {
                let armed = self.armed.remove(k);
                self.fault(armed.op, msg, &payload, armed.stmt)?;
                continue;
            }
            let branch = self.branch_for(&payload, stmt)?;
            self.apply(Choice::Deliver { msg, branch }, stmt)?;
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
                let [a, b] = point.alternatives().map(|b| b.as_str());
                let point = point.as_str();
                Err(self.fail(
                    stmt,
                    format!(
                        "'{request}' reaches the branch point {point}, where the contract allows two behaviours: say which with 'branch: {a}' or 'branch: {b}' before it"
                    ),
                ))
            }
        }
    }

    fn fault(&mut self, op: NetOp, msg: MsgId, payload: &Payload, stmt: usize) -> Result<(), Stop> {
        match op {
            NetOp::Drop => self.apply(Choice::Drop { msg }, stmt),
            NetOp::Duplicate => self.apply(Choice::Duplicate { msg }, stmt),
            NetOp::Hold => {
                self.held.insert(msg);
                Ok(())
            }
            NetOp::Fail500Before => self.apply(Choice::Fail500Before { msg }, stmt),
            NetOp::Fail500After => {
                let branch = self.branch_for(payload, stmt)?;
                self.apply(Choice::Fail500After { msg, branch }, stmt)
            }
            NetOp::Release => Ok(()),
        }
    }

    fn target(&self, kind: MsgKind, server: Option<usize>) -> Target {
        let server = server.map(|s| &self.script.servers[s]);
        // A request or a response is the last request line's (of the server, if named).
        let mine = |x: &&Exchange| server.is_none_or(|s| x.server == s.name);
        let last = self.exchanges.iter().rfind(mine);
        match (last.filter(|_| kind != MsgKind::Webhook), server) {
            (Some(x), _) => Target::Exchange(x.id),
            (None, Some(s)) => Target::Node(s.node),
            (None, None) => Target::Any,
        }
    }

    pub(super) fn net(
        &mut self,
        i: usize,
        op: NetOp,
        kind: Option<MsgKind>,
        server: Option<usize>,
    ) -> Result<(), Stop> {
        if op == NetOp::Release {
            let target = kind.map(|k| (k, self.target(k, server)));
            let released = |m: &MsgId| match (target, self.world.net.get(*m)) {
                (None, _) => true,
                (Some((k, t)), Some(p)) => matches(k, t, p),
                (Some(_), None) => false,
            };
            let held: Vec<MsgId> = self.held.iter().copied().filter(released).collect();
            let before = self.armed.len();
            self.armed.retain(|a| {
                a.op != NetOp::Hold || target.is_some_and(|(k, t)| a.kind != k || a.target != t)
            });
            if held.is_empty() && self.armed.len() == before {
                return Err(self.fail(i, "nothing held matches"));
            }
            self.held.retain(|m| !held.contains(m));
            return Ok(());
        }
        let kind = kind.expect("only release goes without a kind");
        let target = self.target(kind, server);
        let in_flight = self.world.net.iter();
        let now = in_flight.filter(|(_, p)| matches(kind, target, p)).last();
        let now = now.map(|(m, p)| (m, p.clone()));
        if let Some((msg, payload)) = now {
            return self.fault(op, msg, &payload, i);
        }
        if let Target::Exchange(id) = target {
            let x = &self.exchanges[self.by_id[&id]];
            let line = x.line;
            let gone = match kind {
                MsgKind::Request => Some(format!(
                    "the request of line {line} is no longer in flight (it reached the platform or was lost): put this statement right after its request line"
                )),
                MsgKind::Response if x.response.is_some() => {
                    Some(format!("the response to line {line} was already delivered"))
                }
                MsgKind::Response if x.lost => {
                    Some(format!("the exchange of line {line} was already lost"))
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
}
