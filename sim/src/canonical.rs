//! Request ids renumbered canonically: the exhaustive checker's second canonical form
//! (`check --reduce requests`), on top of the message multiset of
//! [`World::hash_canonical`].
//!
//! The world numbers HTTP exchanges from one counter (`next_request`), so two states
//! that differ only in how many requests were sent before (a retry re-issued after a
//! crash, a copy the network made and that is gone again) hold different ids for the
//! same exchanges. [`World::hash_canonical_requests`] hashes a copy of the world in
//! which every request id is replaced by its rank among the ids the world holds
//! (1, 2, ...) and the counter by their number; only hashing changes, traces and tapes
//! keep the ids (so `replay --seed 3` cannot move).
//!
//! Where a request id sits (every place, or the renaming is not one of the world):
//! the messages in flight (`Payload::Request`, `Payload::Response`), the world's
//! `origins` and `awaiting` (keyed by id), the platform (`Platform::request_ids`:
//! pending exchanges, executing idempotency records, sync-wait timers) and the
//! world's fold ([`EventFold::request_ids`], [`EventFold::rename_requests`]: the properties' facts
//! list and rename theirs). The test `renaming_reaches_every_request_id`
//! (properties/tests/reduction.rs) checks that the renamed copy's debug rendering holds
//! no other id.
//!
//! Why it is sound. Let `S` and `T` have the same canonical form: then `T = r(S)` for
//! the bijection `r` (T's ranks inverted after S's) between the ids they hold, and `r`
//! is order-preserving. Nothing in the world reads an id's number: the platform, the
//! world and its fold compare ids, look them up and walk them in order, and a new id
//! is always the counter plus one, above every id held. Extend `r` to the new ids of a
//! step (the k-th new id of `S` to the k-th new id of `T`): still an order-preserving
//! bijection, and every step commutes with it: `apply(r(S), c) = r(apply(S, c))` for
//! every choice `c` (no choice names a request id: a choice names a message, an
//! attempt, a merchant). So `S` and `T` have the same futures up to renaming; the
//! properties read an id only as "some witness" (and the counterexample's detail comes
//! from the unreduced search), so every future has the same verdicts.

use crate::event_fold::EventFold;
use crate::network::Payload;
use crate::world::World;
use payhub_model::RequestId;
use smallvec::SmallVec;

/// The ids a world holds, sorted, each once.
type Held = SmallVec<[RequestId; 16]>;

impl<F: EventFold> World<F> {
    /// Hashes the world as [`World::hash_canonical`] does, with every request id
    /// replaced by its rank among those the world holds (see the module doc).
    pub fn hash_canonical_requests<H: std::hash::Hasher>(&self, state: &mut H) {
        let held = self.request_ids();
        let canonical = held.iter().enumerate().all(|(i, id)| id.0 == i as u32 + 1)
            && self.next_request == held.len() as u32;
        if canonical {
            self.hash_canonical(state);
        } else {
            self.renamed(&held).hash_canonical(state);
        }
    }

    /// A copy of the world with its request ids renumbered as the canonical form hashes
    /// it (for tests and inspection; the checker only hashes it).
    pub fn requests_renumbered(&self) -> World<F> {
        self.renamed(&self.request_ids())
    }

    /// Every request id the world holds, sorted, each once.
    fn request_ids(&self) -> Held {
        let mut held = Held::new();
        let mut add = |id: RequestId| held.push(id);
        for (_, payload) in self.net.iter() {
            if let Payload::Request { id, .. } | Payload::Response { id, .. } = payload {
                add(*id);
            }
        }
        self.origins.keys().for_each(|id| add(*id));
        self.awaiting.keys().for_each(|id| add(*id));
        self.platform.request_ids(&mut add);
        self.facts.request_ids(&mut |id| add(*id));
        held.sort_unstable();
        held.dedup();
        held
    }

    /// A copy of the world with each held id replaced by its rank (from 1).
    fn renamed(&self, held: &[RequestId]) -> World<F> {
        let rank = |id: RequestId| {
            let i = held.binary_search(&id).expect("every id is held");
            RequestId(i as u32 + 1)
        };
        let mut w = self.clone();
        w.next_request = held.len() as u32;
        w.net.replace_each(|payload| match payload {
            Payload::Request { from, id, request } => Some(Payload::Request {
                from: *from,
                id: rank(*id),
                request: request.clone(),
            }),
            Payload::Response { to, id, response } => Some(Payload::Response {
                to: *to,
                id: rank(*id),
                response: response.clone(),
            }),
            Payload::Webhook { .. } => None,
        });
        w.origins = w
            .origins
            .iter()
            .map(|(id, o)| (rank(*id), o.clone()))
            .collect();
        w.awaiting = w
            .awaiting
            .iter()
            .map(|(id, a)| (rank(*id), a.clone()))
            .collect();
        w.platform.rename_requests(&rank);
        let mut some = false;
        w.facts.request_ids(&mut |_| some = true);
        if some {
            F::rename_requests(&mut w.facts, &rank);
        }
        w
    }
}

/// A world hashed with its request ids renumbered ([`World::hash_canonical_requests`]).
pub struct CanonicalRequests<'a, F: EventFold>(pub &'a World<F>);

impl<F: EventFold> std::hash::Hash for CanonicalRequests<'_, F> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash_canonical_requests(state);
    }
}
