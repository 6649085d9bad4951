//! What the wire facts hold at a moment, counted (`check-log --stats`): the memory a
//! judge of a long log needs grows with these, not with the requests.

use super::WireFacts;
use payhub_model::event::ScopeKey;
use payhub_model::{Contract, Millis};
use std::collections::BTreeSet;

/// The records the wire facts hold now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retained {
    /// Idempotency scopes within RET-01's retention (their first request and
    /// parameters; older ones are forgotten).
    pub keys: usize,
    /// Order and refund numbers (UNIQ-01 and UNIQ-04 have no window).
    pub numbers: usize,
    /// Objects: Payments seen, objects queried, Payments and refund requests unresolved.
    pub objects: usize,
}

impl WireFacts {
    /// What these facts hold now.
    pub fn retained(&self) -> Retained {
        Retained {
            keys: self.scopes.values().filter(|s| s.first.is_some()).count(),
            numbers: self.order_payments.len()
                + self.refund_numbers.len()
                + self.unknown_orders.len()
                + self.refused_numbers.len(),
            objects: (self.payments.values())
                .filter(|p| p.first().is_some())
                .count()
                + self.last_query.len()
                + self.last_by_number.len()
                + self.unresolved_payments.len()
                + self.scheduled.len()
                + self.unresolved_refunds.len(),
        }
    }
}

/// RET-01: what the facts forget once the retention has passed.
impl WireFacts {
    /// RET-01: a key's first endpoint and its scope's first parameters, past the
    /// retention, are forgotten at the key's next send (not only when a batch of
    /// [`WireFacts::prune`] comes): the key is judged as new.
    pub(super) fn expire(&mut self, scope: &ScopeKey, now: Millis) {
        let window = Millis(now.0.saturating_sub(self.keep_for.0));
        let key = super::fp(&(scope.merchant, scope.environment, &scope.key));
        if (self.key_endpoints.get(&key)).is_some_and(|x| x.sent < window) {
            self.key_endpoints.remove(&key);
        }
        let held = self.scopes.get_mut(&super::fp(scope));
        if let Some(s) = held.filter(|s| s.first.as_ref().is_some_and(|x| x.sent < window)) {
            s.first = None;
        }
    }

    /// Facts that forget a scope, a key and its parameters `window` after their send:
    /// no later request is judged against them (the judges pass RET-01's retention).
    pub fn keeping(mut self, window: Millis) -> Self {
        self.keep_for = window;
        self
    }

    /// Forgets what no later request can be judged against: scopes, keys and their
    /// parameters past the window the judge set (RET-01: the platform forgot them too),
    /// Retry-Afters that ended, a last query sent 10 s before `now` unless an untied
    /// number's query was sent less than 10 s from it (SCHED-02 judges closer ones only; a
    /// later tie may pair it with that one). Order numbers and Payments are kept (UNIQ-01
    /// and versions have no window).
    pub(super) fn prune(&mut self, now: Millis) {
        let spacing = Contract::QUERY_SPACING_MIN.0;
        let untied: BTreeSet<u64> = self.last_by_number.values().map(|q| q.sent.0).collect();
        let near_untied = |t: u64| {
            untied
                .range(t.saturating_sub(spacing - 1)..t + spacing)
                .next()
        };
        self.last_query
            .retain(|_, q| q.sent.0 + spacing > now.0 || near_untied(q.sent.0).is_some());
        let window = Millis(now.0.saturating_sub(self.keep_for.0));
        self.scopes.retain(|_, s| s.prune(window, now));
        self.key_endpoints.retain(|_, x| x.sent >= window);
    }
}
