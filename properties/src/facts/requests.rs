//! The request ids the facts hold, and their renaming: the facts' part of the checker's
//! canonical form with request ids renumbered (`check --reduce requests`,
//! `payhub_sim::World::hash_canonical_requests`, whose module doc says why it is sound).
//!
//! Where a request id sits in the facts: the exchange executing each scope and those
//! waiting (response facts), the 429s still in the network (query facts), and, as the
//! first witness of a breach, the creates and confirms waiting for the upstream and the
//! 202s told after the wait (cadence facts), seven fields of the money facts (and the requests they
//! follow waiting), one of the client facts and the fifteen misanswers of the response
//! facts. The test `renaming_reaches_every_request_id` (properties/tests/reduction.rs)
//! checks that the renamed copy's debug rendering holds no other id.

use super::Facts;
use super::responses::Slot;
use payhub_model::{RequestId, Shared};

/// The money family's first witnesses of breaches, each a request: `&`, `&mut` or
/// copied, as the prefix says.
macro_rules! money_witnesses {
    ($m:expr, $($by:tt)*) => {
        [
            $($by)* $m.rejected_but_executed,
            $($by)* $m.replay_mismatch,
            $($by)* $m.foreign_object,
            $($by)* $m.charged_other_card,
            $($by)* $m.conflict_misjudged,
            $($by)* $m.replay_as_new_business,
            $($by)* $m.answered_other_payment,
        ]
    };
}

/// The request ids of the facts: the exchanges the response facts follow (the one
/// executing each scope, those waiting) and the first witnesses of breaches.
pub(super) fn witnesses(facts: &Facts, out: &mut dyn FnMut(&RequestId)) {
    let m = &facts.money;
    let client = [&facts.client.card_retry_in_progress];
    (money_witnesses!(m, &).into_iter().chain(client))
        .flatten()
        .for_each(&mut *out);
    m.waiting.keys().for_each(&mut *out);
    // RATE-03: the 429s still in the network, by exchange.
    facts
        .queries
        .rate_limited_in_flight
        .keys()
        .for_each(&mut *out);
    // UPSTREAM-01: the synchronous waits in flight, and the 202s' witnesses.
    let c = &facts.cadence;
    c.history.waiting_upstream.keys().for_each(&mut *out);
    if let Some(w) = &c.sync_wait_off {
        out(&w.id);
    }
    let r = &facts.responses;
    r.executing.values().for_each(&mut *out);
    r.waiting.iter().for_each(&mut *out);
    (Slot::ALL.iter().flat_map(|slot| r.first(*slot)))
        .filter_map(|m| m.request.as_ref())
        .for_each(out);
}

/// Replaces every request id of [`witnesses`] by `rank(id)`, copying only the families
/// that hold one.
pub(super) fn rename_witnesses(facts: &mut Shared<Facts>, rank: &impl Fn(RequestId) -> RequestId) {
    let facts: &mut Facts = facts;
    let m = &facts.money;
    if money_witnesses!(m,).iter().any(Option::is_some) || !m.waiting.is_empty() {
        let m = &mut *facts.money;
        m.waiting = m.waiting.iter().map(|(id, w)| (rank(*id), *w)).collect();
        for id in money_witnesses!(m, &mut).into_iter().flatten() {
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
    if !facts.cadence.history.waiting_upstream.is_empty() {
        let h = &mut *facts.cadence.history;
        h.waiting_upstream = h
            .waiting_upstream
            .iter()
            .map(|(id, at)| (rank(*id), *at))
            .collect();
    }
    if facts.cadence.sync_wait_off.is_some() {
        let c = &mut *facts.cadence;
        if let Some(w) = c.sync_wait_off.as_mut() {
            w.id = rank(w.id);
        }
    }
    let r = &facts.responses;
    let holds = !r.executing.is_empty()
        || !r.waiting.is_empty()
        || (Slot::ALL.iter().flat_map(|slot| r.first(*slot))).any(|m| m.request.is_some());
    if holds {
        let r = &mut *facts.responses;
        for id in r.executing.values_mut() {
            *id = rank(*id);
        }
        r.waiting = r.waiting.iter().map(|id| rank(*id)).collect();
        for slot in Slot::ALL {
            if let Some(id) = r.first_mut(*slot).as_mut().and_then(|m| m.request.as_mut()) {
                *id = rank(*id);
            }
        }
    }
}
