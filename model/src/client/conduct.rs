//! The reference client's decision points, and the anti-patterns that answer them
//! otherwise.
//!
//! The merchant server reads as the contract's reference code. At each point where an
//! anti-pattern departs from it, the server asks its [`Policy`] instead of deciding alone:
//! each method here is one such decision point, named for what it decides, whose
//! reference answer is the contract's (cited by rule) and which one or two
//! [`AntiPattern`]s answer otherwise. A departure is returned as the [`AntiPattern`]
//! taken (`None` for the contract's answer); the server records it where it takes
//! effect (`Decision::Deviate`, with the rule it breaks), so a trace shows the exact step
//! where a variant left the reference.

use super::db::SubmissionKind;
use super::keys::Keys;
use super::policy::{AntiPattern, Policy};

/// The anti-pattern a decision point takes, or `None` where the policy answers as the
/// contract does.
pub type Departure = Option<AntiPattern>;

impl Policy {
    /// Whether the server follows `pattern`: read by the decision points below only.
    fn has(&self, pattern: AntiPattern) -> bool {
        self.anti_patterns.contains(&pattern)
    }

    fn departs(&self, pattern: AntiPattern) -> Departure {
        self.has(pattern).then_some(pattern)
    }

    // ---- keys (GEN-04..06, UNKNOWN-01, UNKNOWN-04) -------------------------------------

    /// Where a new key is kept: GEN-06, in the database before the request leaves.
    /// `KeyNotPersisted`: a random key in memory only, lost by a crash.
    pub fn key_kept_in_memory(&self) -> Departure {
        self.departs(AntiPattern::KeyNotPersisted)
            .filter(|_| self.keys == Keys::RandomPersisted)
    }

    /// The key a retry carries: RETRY-01, GEN-04, the original key read back.
    /// `KeyRegeneratedOnRetry`: a new random key for every retry.
    pub fn key_drawn_again_on_retry(&self) -> Departure {
        self.departs(AntiPattern::KeyRegeneratedOnRetry)
            .filter(|_| self.keys == Keys::RandomPersisted)
    }

    /// The key of a cancel or a refund: GEN-05, one key per submission and endpoint.
    /// `KeyReusedAcrossEndpoints`: the order's payment key.
    pub fn key_of_follow_up(&self) -> Departure {
        self.departs(AntiPattern::KeyReusedAcrossEndpoints)
    }

    /// An amended order: UNKNOWN-04, never re-sent under its original key (the
    /// parameters are bound to it). `ChangedParamsSameKey`: re-sent under it.
    pub fn amends_under_original_key(&self) -> Departure {
        self.departs(AntiPattern::ChangedParamsSameKey)
    }

    // ---- unknown results (UNKNOWN-01..03, RETRY-03) ------------------------------------

    /// What follows a timeout or a result unknown after the last try of a `kind`
    /// submission (`timeout`: the unknown came from a timeout): UNKNOWN-01, the same key
    /// and order number, and queries. `NewOrderNoAfterTimeout` (a create, after a
    /// timeout), `NewKeyAfterTimeout` (after a timeout) and `UnknownAsFailure` (any
    /// unknown) charge again as new business.
    pub fn charges_again_after_unknown(&self, timeout: bool, kind: SubmissionKind) -> Departure {
        if timeout && kind == SubmissionKind::Create {
            if let Some(p) = self.departs(AntiPattern::NewOrderNoAfterTimeout) {
                return Some(p);
            }
        }
        if timeout {
            if let Some(p) = self.departs(AntiPattern::NewKeyAfterTimeout) {
                return Some(p);
            }
        }
        self.departs(AntiPattern::UnknownAsFailure)
    }

    // ---- retries (RETRY-02, RATE-03, S13) ----------------------------------------------

    /// The wait after a 429: RATE-03, its Retry-After. `IgnoreRetryAfter`: the usual
    /// backoff.
    pub fn ignores_retry_after(&self) -> Departure {
        self.departs(AntiPattern::IgnoreRetryAfter)
    }

    /// How the backoff is computed: RETRY-02, `min(30 s, 1 s × 2^(n-1))` plus a jitter
    /// below 250 ms. `BackoffNotDoubled` (always 1 s) and `JitterNotCapped` (four times the
    /// jitter) get it wrong, in that order.
    pub fn backoff_departures(&self) -> impl Iterator<Item = AntiPattern> + '_ {
        [AntiPattern::BackoffNotDoubled, AntiPattern::JitterNotCapped]
            .into_iter()
            .filter(|p| self.has(*p))
    }

    /// What the payer is shown while a create or confirm is answered 503 (S13,
    /// PausedMessage): "temporarily unavailable". `ConfirmingOn503`: "confirming".
    pub fn payer_told_confirming_on_503(&self) -> Departure {
        self.departs(AntiPattern::ConfirmingOn503)
    }

    /// A submission whose last try was answered 503: S13, not accepted (or, under
    /// A-S13-REFERENCE-CODE's other reading, unknown once). `LoopOn503`: unknown, with a
    /// fresh query window after every round.
    pub fn loops_on_503(&self) -> Departure {
        self.departs(AntiPattern::LoopOn503)
    }

    /// How long a request waits for its answer: TIMEOUT-01, 20 s for a POST and 10 s
    /// for a GET (`query`). `QueryTimeout5s` (a GET) and `PostTimeout5s` (a create or a
    /// confirm) give up after 5 s.
    pub fn short_timeout(&self, query: bool) -> Departure {
        self.departs(if query {
            AntiPattern::QueryTimeout5s
        } else {
            AntiPattern::PostTimeout5s
        })
    }

    // ---- queries (SCHED-01, SCHED-02) --------------------------------------------------

    /// The spacing of one order's queries: SCHED-02, at least 10 s and the schedule's
    /// times. `PollTooFast`: every second.
    pub fn polls_too_fast(&self) -> Departure {
        self.departs(AntiPattern::PollTooFast)
    }

    /// Whether queries stop at a final status: SCHED-01, yes. `QueriesAfterFinal`: the
    /// schedule goes on.
    pub fn queries_after_final(&self) -> Departure {
        self.departs(AntiPattern::QueriesAfterFinal)
    }

    /// Whether queries stop at failed too: SCHED-01, yes (`failed` is one of the four).
    /// `QueriesAfterFailed`: the schedule goes on after failed.
    pub fn queries_after_failed(&self) -> Departure {
        self.departs(AntiPattern::QueriesAfterFailed)
    }

    /// Whether the schedule of an order in `state` goes on: at a final status, only
    /// under `QueriesAfterFinal` (or `QueriesAfterFailed` for a failed order).
    pub fn queries_go_on(&self, state: crate::client::OrderState) -> bool {
        !state.is_settled()
            || self.queries_after_final().is_some()
            || (state == crate::client::OrderState::Failed && self.queries_after_failed().is_some())
    }

    /// How long the schedule runs: SCHED-01, 24 hours. `QueriesStopAt1h`: it ends after
    /// the 1-hour query.
    pub fn queries_stop_at_1h(&self) -> Departure {
        self.departs(AntiPattern::QueriesStopAt1h)
    }

    // ---- what an answer or a webhook means (CANCEL-02, WEBHOOK-02, RES-04, RES-07) -----

    /// A 202 on cancel: CANCEL-02, not canceled; wait for payment.canceled, or query.
    /// `Cancel202AsCanceled`: the order is closed.
    pub fn cancel_202_closes(&self) -> Departure {
        self.departs(AntiPattern::Cancel202AsCanceled)
    }

    /// A webhook older than the applied version: WEBHOOK-02, ignored (the latest version
    /// prevails). `WebhookIgnoresVersion`: applied.
    pub fn applies_older_webhook(&self) -> Departure {
        self.departs(AntiPattern::WebhookIgnoresVersion)
    }

    /// A card retry while the Payment is processing or requires_action: ATTEMPT-07,
    /// refused (only after `failed`). `CardRetryWhileInProgress`: sent.
    pub fn card_retry_while_in_progress(&self) -> Departure {
        self.departs(AntiPattern::CardRetryWhileInProgress)
    }

    /// A Payment seen `failed`: TerminalStatuses, the order stays open for a card retry.
    /// `CloseOnFailed`: the order is closed as canceled.
    pub fn closes_on_failed(&self) -> Departure {
        self.departs(AntiPattern::CloseOnFailed)
    }

    /// A Payment entering manual_review: RES-04, pending confirmation, never charged
    /// again. `RechargeOnManualReview`: charged again under a new order number.
    pub fn recharges_on_manual_review(&self) -> Departure {
        self.departs(AntiPattern::RechargeOnManualReview)
    }

    /// Fulfilment beside RES-07's (once per order, on the first `succeeded`): given the
    /// Payment is `succeeded` and whether the order was fulfilled. `FulfilPerVersion`:
    /// again for every newer `succeeded` version; `FulfilBeforeSucceeded`: before it
    /// succeeded.
    pub fn fulfils_otherwise(&self, succeeded: bool, fulfilled: bool) -> Departure {
        if succeeded {
            return self.departs(AntiPattern::FulfilPerVersion);
        }
        self.departs(AntiPattern::FulfilBeforeSucceeded)
            .filter(|_| !fulfilled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every decision point's answer under `policy`, in every situation it is asked in.
    fn departures(policy: &Policy) -> Vec<AntiPattern> {
        let mut all = vec![
            policy.key_kept_in_memory(),
            policy.key_drawn_again_on_retry(),
            policy.key_of_follow_up(),
            policy.amends_under_original_key(),
            policy.ignores_retry_after(),
            policy.payer_told_confirming_on_503(),
            policy.loops_on_503(),
            policy.short_timeout(true),
            policy.short_timeout(false),
            policy.polls_too_fast(),
            policy.queries_after_final(),
            policy.queries_after_failed(),
            policy.queries_stop_at_1h(),
            policy.cancel_202_closes(),
            policy.applies_older_webhook(),
            policy.card_retry_while_in_progress(),
            policy.closes_on_failed(),
            policy.recharges_on_manual_review(),
        ];
        for kind in [SubmissionKind::Create, SubmissionKind::Confirm] {
            for timeout in [false, true] {
                all.push(policy.charges_again_after_unknown(timeout, kind));
            }
        }
        for succeeded in [false, true] {
            for fulfilled in [false, true] {
                all.push(policy.fulfils_otherwise(succeeded, fulfilled));
            }
        }
        let mut found: Vec<AntiPattern> = all.into_iter().flatten().collect();
        found.extend(policy.backoff_departures());
        found.sort();
        found.dedup();
        found
    }

    #[test]
    fn the_reference_answers_every_point_as_the_contract() {
        assert!(departures(&Policy::reference()).is_empty());
        assert!(departures(&Policy::reference_random()).is_empty());
    }

    #[test]
    fn each_anti_pattern_departs_at_its_own_points_only() {
        for &pattern in AntiPattern::ALL {
            let policy = Policy::reference_random().with(pattern);
            assert_eq!(departures(&policy), vec![pattern], "{}", pattern.name());
        }
    }

    #[test]
    fn a_random_key_is_needed_to_lose_or_redraw_it() {
        for pattern in [
            AntiPattern::KeyNotPersisted,
            AntiPattern::KeyRegeneratedOnRetry,
        ] {
            assert!(departures(&Policy::reference().with(pattern)).is_empty());
        }
    }

    #[test]
    fn a_new_order_number_is_drawn_for_a_timed_out_create_only() {
        let policy = Policy::reference().with(AntiPattern::NewOrderNoAfterTimeout);
        let create = policy.charges_again_after_unknown(true, SubmissionKind::Create);
        assert_eq!(create, Some(AntiPattern::NewOrderNoAfterTimeout));
        assert_eq!(
            policy.charges_again_after_unknown(true, SubmissionKind::Confirm),
            None
        );
        assert_eq!(
            policy.charges_again_after_unknown(false, SubmissionKind::Create),
            None
        );
    }
}
