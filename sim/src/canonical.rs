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
//! facts: the exchange executing each scope and those waiting (response facts), and,
//! as the first witness of a breach, seven fields of the money facts (and the requests they follow waiting), one of the
//! client facts and the fifteen misanswers of the response facts. The test `renaming_reaches_every_request_id` (properties/tests/reduction.rs)
//! checks that the renamed copy's debug rendering holds no other id.
//!
//! Why it is sound. Let `S` and `T` have the same canonical form: then `T = r(S)` for
//! the bijection `r` (T's ranks inverted after S's) between the ids they hold, and `r`
//! is order-preserving. Nothing in the world reads an id's number: the platform, the
//! world and the facts compare ids, look them up and walk them in order, and a new id
//! is always the counter plus one, above every id held. Extend `r` to the new ids of a
//! step (the k-th new id of `S` to the k-th new id of `T`): still an order-preserving
//! bijection, and every step commutes with it: `apply(r(S), c) = r(apply(S, c))` for
//! every choice `c` (no choice names a request id: a choice names a message, an
//! attempt, a merchant). So `S` and `T` have the same futures up to renaming; the
//! properties read an id only as "some witness" (and the counterexample's detail comes
//! from the unreduced search), so every future has the same verdicts.

use crate::facts::responses::Responses;
use crate::network::Payload;
use crate::world::World;
use payhub_model::RequestId;
use smallvec::SmallVec;

/// The response facts' first misanswers, every field by name (a field added to
/// `Responses` must be placed here too): `&` or `&mut` references, as `$r` is.
macro_rules! misanswers {
    ($r:expr) => {{
        let Responses {
            executing: _,
            waiting: _,
            created_now: _,
            stale_answer,
            wrong_success_code,
            retry_after_missing,
            key_misjudged,
            not_found_misjudged,
            related_misnamed,
            miscounted_attempts,
            unversioned_change,
            in_progress_without_execution,
            query_unknown_state,
            branch_misanswered,
            off_the_status_table,
            wrong_5xx,
            cancel_202_changed,
            foreign_shown,
        } = $r;
        [
            stale_answer,
            wrong_success_code,
            retry_after_missing,
            key_misjudged,
            not_found_misjudged,
            related_misnamed,
            miscounted_attempts,
            unversioned_change,
            in_progress_without_execution,
            query_unknown_state,
            branch_misanswered,
            off_the_status_table,
            wrong_5xx,
            cancel_202_changed,
            foreign_shown,
        ]
    }};
}

/// The ids a world holds, sorted, each once.
type Held = SmallVec<[RequestId; 16]>;

impl World {
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
    pub fn requests_renumbered(&self) -> World {
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
        witnesses(&self.facts, &mut |id| add(*id));
        held.sort_unstable();
        held.dedup();
        held
    }

    /// A copy of the world with each held id replaced by its rank (from 1).
    fn renamed(&self, held: &[RequestId]) -> World {
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
        witnesses(&w.facts, &mut |_| some = true);
        if some {
            rename_witnesses(&mut w.facts, &rank);
        }
        w
    }
}

/// The request ids of the facts: the exchanges the response facts follow (the one
/// executing each scope, those waiting) and the first witnesses of breaches.
fn witnesses(facts: &crate::facts::Facts, out: &mut dyn FnMut(&RequestId)) {
    let m = &facts.money;
    [
        &m.rejected_but_executed,
        &m.replay_mismatch,
        &m.foreign_object,
        &m.charged_other_card,
        &m.conflict_misjudged,
        &m.replay_as_new_business,
        &m.answered_other_payment,
        &facts.client.card_retry_in_progress,
    ]
    .into_iter()
    .flatten()
    .for_each(&mut *out);
    m.waiting.keys().for_each(&mut *out);
    // RATE-03: the 429s still in the network, by exchange.
    facts
        .queries
        .rate_limited_in_flight
        .keys()
        .for_each(&mut *out);
    let r = &facts.responses;
    r.executing.values().for_each(&mut *out);
    r.waiting.iter().for_each(&mut *out);
    misanswers!(&**r)
        .into_iter()
        .flatten()
        .filter_map(|m| m.request.as_ref())
        .for_each(out);
}

fn rename_witnesses(facts: &mut crate::facts::Facts, rank: &impl Fn(RequestId) -> RequestId) {
    let m = &facts.money;
    let money = [
        m.rejected_but_executed,
        m.replay_mismatch,
        m.foreign_object,
        m.charged_other_card,
        m.conflict_misjudged,
        m.replay_as_new_business,
        m.answered_other_payment,
    ];
    if money.iter().any(Option::is_some) || !m.waiting.is_empty() {
        let m = &mut *facts.money;
        m.waiting = m.waiting.iter().map(|(id, w)| (rank(*id), *w)).collect();
        for id in [
            &mut m.rejected_but_executed,
            &mut m.replay_mismatch,
            &mut m.foreign_object,
            &mut m.charged_other_card,
            &mut m.conflict_misjudged,
            &mut m.replay_as_new_business,
            &mut m.answered_other_payment,
        ]
        .into_iter()
        .flatten()
        {
            *id = rank(*id);
        }
    }
    if let Some(id) = facts.client.card_retry_in_progress {
        facts.client.card_retry_in_progress = Some(rank(id));
    }
    if !facts.queries.rate_limited_in_flight.is_empty() {
        let q = &mut *facts.queries;
        q.rate_limited_in_flight = q
            .rate_limited_in_flight
            .iter()
            .map(|(id, v)| (rank(*id), v.clone()))
            .collect();
    }
    let r = &facts.responses;
    let holds = !r.executing.is_empty()
        || !r.waiting.is_empty()
        || misanswers!(&**r)
            .into_iter()
            .flatten()
            .any(|m| m.request.is_some());
    if holds {
        let r = &mut *facts.responses;
        for id in r.executing.values_mut() {
            *id = rank(*id);
        }
        r.waiting = r.waiting.iter().map(|id| rank(*id)).collect();
        for m in misanswers!(r).into_iter().flatten() {
            if let Some(id) = &mut m.request {
                *id = rank(*id);
            }
        }
    }
}

/// A world hashed with its request ids renumbered ([`World::hash_canonical_requests`]).
pub struct CanonicalRequests<'a>(pub &'a World);

impl std::hash::Hash for CanonicalRequests<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash_canonical_requests(state);
    }
}
