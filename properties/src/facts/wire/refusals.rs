//! The refusals of a scope (RATE-01, RATE-04, REJECT-01): requests the contract says
//! executed nothing. A scope whose every recorded request was refused, then answered as
//! if one had executed (a create answered 200, REPLAY-02/03; a 409
//! idempotency_conflict, CONFLICT-01), is kept as a witness. Whether that is a breach
//! depends on the source holding every request (an unrecorded one could have executed):
//! the facts record; the properties that assume a complete log decide.

use super::{Breach, Rec, WireFacts};
use payhub_model::event::ScopeKey;
use payhub_model::observed::{IdKind, ObservedAnswer};
use payhub_model::{ErrorCode, Method};

/// The pattern a refusal that executes nothing starts, if the answer is one.
fn refusal(r: &ObservedAnswer) -> Option<Breach> {
    match (r.status, r.code) {
        // RATE-01: 429 rate_limited, not executed; RATE-04: 503 temporarily_unavailable,
        // not accepted.
        (429, _) | (503, Some(ErrorCode::TemporarilyUnavailable)) => {
            Some(Breach::RefusedThenExecuted)
        }
        // REJECT-01: 400, 403 and 422 use up no key (401 has no scope).
        (400 | 403 | 422, _) => Some(Breach::RejectedThenBound),
        _ => None,
    }
}

impl WireFacts {
    /// Whether the answer shows an execution of its scope before it: a create answered
    /// 200 (REPLAY-02, REPLAY-03: its first execution answers 201) or a 409
    /// idempotency_conflict (CONFLICT-01: against the scope's execution). A 200 with the
    /// object of a create under another key of the same order or refund number (shown
    /// earlier, in flight, or its outcome unknown) may be that key's execution: a new key
    /// for a used number "returns the existing object identifier" (S4, A-S4-BRANCH).
    fn shows_earlier_execution(&self, scope: &ScopeKey, seen: &Rec, r: &ObservedAnswer) -> bool {
        if r.code == Some(ErrorCode::IdempotencyConflict) {
            return true;
        }
        let owner = (scope.merchant, scope.environment);
        let other_key = |first: &Rec| {
            first.method == Method::Post && first.key().is_some_and(|k| Some(k) != seen.key())
        };
        let existing = match seen.path().as_str() {
            "/v1/payments" => r.first(IdKind::Payment).is_some_and(|p| {
                let order = p
                    .number
                    .clone()
                    .or_else(|| super::created(seen, "/v1/payments"));
                let Some(order) = order else { return false };
                let shown = (self
                    .order_payments
                    .get(&super::fp(&(owner.0, owner.1, &order))))
                .is_some_and(|(id, first)| id.0 == p.id && other_key(first));
                let unknown = (self.unknown_orders.get(owner, &order))
                    .is_some_and(|(_, first)| other_key(first));
                let open = self.open.values().any(|(rec, o, ep)| {
                    *o == Some(owner) && super::order_no(ep) == Some(&order) && other_key(rec)
                });
                shown || unknown || open
            }),
            "/v1/refunds" => r.first(IdKind::Refund).is_some_and(|x| {
                let number = x
                    .number
                    .clone()
                    .or_else(|| super::created(seen, "/v1/refunds"));
                number
                    .and_then(|n| self.refund_numbers.get(&(owner.0, owner.1, n)))
                    .is_some_and(|(id, first)| id.0 == x.id && other_key(first))
            }),
            _ => return false,
        };
        seen.method == Method::Post && r.status == 200 && !existing
    }

    /// A known answer read in `scope` (`None`: no body that reads, or an unknown
    /// outcome: it may have executed). A refusal extends the scope's run of refusals;
    /// an answer showing an earlier execution after nothing but refusals, with no
    /// request of the scope still open, is noted with the first refusal.
    pub(super) fn judge_refusals(
        &mut self,
        scope: &ScopeKey,
        seen: &Rec,
        r: Option<&ObservedAnswer>,
    ) {
        let refused = r.and_then(refusal);
        let held = self.scopes.entry(super::fp(scope)).or_default();
        let Some(first) = held.closed_first.clone() else {
            held.closed_first = Some(seen.clone());
            held.set_refused(refused);
            return;
        };
        let (Some(breach), None) = (held.rare().and_then(|r| r.refused), refused) else {
            return;
        };
        held.set_refused(None);
        if r.is_some_and(|r| self.shows_earlier_execution(scope, seen, r)) && !self.open_in(scope) {
            self.note(breach, vec![first, seen.clone()]);
        }
    }

    /// Whether a request of `scope` is still open (it may be executing).
    fn open_in(&self, scope: &ScopeKey) -> bool {
        self.open.values().any(|(rec, owner, _)| {
            owner.and_then(|o| self.scope_of(rec, o)).as_ref() == Some(scope)
        })
    }
}
