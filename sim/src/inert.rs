//! Answers nobody reads: the partial-order reduction `check --reduce por` rests on.
//!
//! A response in flight to a client node that no longer awaits its exchange (the answer
//! to a duplicated request, or to one the client gave up on (TIMEOUT-01) or lost in a
//! crash) is **inert**: delivering it only takes it out of the network. The client does
//! not read it ([`World::response_to_client`]), no fact reads its delivery (the event
//! `DeliveredUnread`; a recording trace folds it, and no family changes), and it can
//! never become read again (a new exchange takes a new request id). A response to a
//! scripted sender is inert too: its `Delivered` is a trace note, and nobody steps on
//! it.
//!
//! Soundness of delivering an inert message `d` first, and nothing else, in a state `s`
//! (a persistent set of one, in Godefroid's terms): write `s − d` for `s` without `d`.
//! - Delivering `d` commutes with every other choice, and no other choice disables it:
//!   its only effect is removing `d`, which no other step reads. Message ids are taken
//!   from the network's counter, which taking `d` does not move, so `e` then "deliver
//!   `d`" is exactly "deliver `d`" then `e`.
//! - Losing or duplicating `d` (a fault on it) spends budget on nothing: the state is
//!   `s − d` (with a copy of `d`, as inert, for a duplicate) with one fault fewer, and
//!   every run from there is a run from `s − d` that leaves that fault unused, with the
//!   same events. Budgets only enable choices; no property reads them.
//! - `d` in flight only ever blocks time (`time_waits_for_messages`) and quiescence;
//!   `s − d` allows both.
//!
//! So every run from `s` is, event for event, a run from `s − d` with `d` delivered,
//! lost or copied somewhere along it, and the facts (all the properties read) are the
//! same at each step. Exploring only `s → s − d` covers every verdict `s` leads to; and
//! `s` itself is judged, with the same facts as `s − d`. No cycle proviso is needed:
//! each reduced step takes one message out and adds none, so a state is reduced only a
//! bounded number of times before one is fully expanded.
//!
//! One limit, reported rather than hidden: each inert delivery is a step, so under
//! `check --depth N` a violation the plain search finds within `N` steps may lie deeper:
//! the search is then cut, and the run incomplete, never a pass. (The facts' history is
//! part of a state's identity, `properties/src/facts/cadence.rs`, so it sets no second limit.)

use crate::event_fold::EventFold;
use crate::network::{MsgId, Payload};
use crate::world::World;

impl<F: EventFold> World<F> {
    /// Whether a client awaits the answer of exchange `id`: exactly when
    /// [`World::response_to_client`] hands it to the client's code.
    pub(crate) fn awaits(&self, id: payhub_model::RequestId) -> bool {
        self.awaiting.contains_key(&id)
    }

    /// The first inert message in flight, if any (see the module doc).
    pub fn inert_message(&self) -> Option<MsgId> {
        self.net.iter().find_map(|(msg, payload)| match payload {
            Payload::Response { id, .. } if !self.awaits(*id) => Some(msg),
            _ => None,
        })
    }
}
