//! The oracle's upstream moves: which link choices a world offers and in what place of
//! the exploration, stray drops, and deduplication of states.

use super::*;
use payhub_model::UpstreamCall;
use payhub_sim::network::UpstreamMsg;

/// What kind of upstream move: its place in the exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LinkMove {
    /// A charge on the slow card (a cancel of a card G charge): decided only after the
    /// synchronous wait, so the exploration places it (before or after the 202).
    SlowCharge,
    /// A charge: in a round of requests at once, when it is decided against the other
    /// requests' arrival is the race window, so the exploration places it.
    Charge,
    /// A refund sent upstream: its completion is asynchronous (A-REFUND-ASYNC), so the
    /// exploration places it at any point of the round, or leaves it for a later one:
    /// a target whose refund settles after 0 s, 5 ms or 3 s is explained alike.
    Refund,
    /// A cancel sent upstream: the acquirer's word on it may come within the synchronous
    /// wait (200 canceled) or after it (S12: 202, the status kept), so the exploration
    /// places it, for a target that is not strict.
    Cancel,
    /// Queries, replies: taken at once (they commute with what the
    /// round's requests can witness; the sandbox, too, drives them at once).
    Other,
}

impl LinkMove {
    /// `async_refunds`: a target the model does not describe exactly (not `strict`); the
    /// sandbox, like the model, settles a refund at once.
    pub(super) fn eager(self, concurrent: bool, async_refunds: bool) -> bool {
        match self {
            LinkMove::SlowCharge => false,
            LinkMove::Charge => !concurrent,
            LinkMove::Refund | LinkMove::Cancel => !async_refunds,
            LinkMove::Other => true,
        }
    }
}

/// The upstream's next moves: each call decided by its test card, each reply delivered,
/// but those on messages of `backlog` (the upstream's work from before the round, whose
/// progress the round's start already chose).
pub(super) fn link_moves(w: &World, backlog: &[MsgId]) -> Vec<(Choice, LinkMove)> {
    w.link
        .iter()
        .filter(|(msg, _)| !backlog.contains(msg))
        .map(|(msg, m)| match m {
            UpstreamMsg::Call(call) => {
                let kind = match call {
                    _ if is_slow(w, m) => LinkMove::SlowCharge,
                    UpstreamCall::Charge { .. } => LinkMove::Charge,
                    UpstreamCall::Refund { .. } => LinkMove::Refund,
                    UpstreamCall::CancelCharge { .. } => LinkMove::Cancel,
                    _ => LinkMove::Other,
                };
                (acquire(w, msg, call), kind)
            }
            UpstreamMsg::Reply(_) => (Choice::DeliverUpstream { msg }, LinkMove::Other),
        })
        .collect()
}

/// Drops webhooks and answers to requests of earlier rounds (nobody reads them).
pub(super) fn drop_stray(o: &Oracle, st: &mut State, ours: &[RequestId]) -> Result<bool, String> {
    let stray: Vec<MsgId> = st
        .world
        .net
        .iter()
        .filter(|(_, p)| match p {
            Payload::Webhook { .. } => true,
            Payload::Response { id, .. } => !ours.contains(id),
            Payload::Request { .. } => false,
        })
        .map(|(m, _)| m)
        .collect();
    for msg in &stray {
        o.apply(st, Choice::Drop { msg: *msg })?;
    }
    Ok(!stray.is_empty())
}

pub(super) fn dedup(states: Vec<State>) -> Vec<State> {
    let mut seen = HashSet::new();
    states
        .into_iter()
        .filter(|s| seen.insert((key_of(&s.world, &s.ids), super::branch_of(s))))
        .collect()
}
