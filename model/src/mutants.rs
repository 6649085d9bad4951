//! The bug zoo, platform side: planted bugs as configuration.
//!
//! A [`Mutant`] is a realistic bug class of payment platforms. It is planted by handing
//! the platform a [`crate::Variant`] (`Platform::with_variant`); the reference platform
//! asks its variant at each decision point a bug changes (`platform/variant.rs`) and calls
//! one seam where a bug does what the contract never does (`platform/mutant_hooks.rs`).
//! There is no copy of the model per bug; the reference platform is [`crate::Variant::REFERENCE`].
//!
//! A [`ParameterMutant`] is a bug made by a number alone: the reference platform run
//! with a parameter other than the contract's ([`crate::Contract`]).
//!
//! The client side of the zoo is [`crate::client::AntiPattern`]: each anti-pattern is a
//! variant of the reference merchant policy.

use crate::PlatformParams;
use crate::rules::Rule;
use crate::time::Millis;
use serde::Serialize;

macro_rules! mutants {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, [$($rule:ident),+ $(,)?]; )*) => {
        /// A planted platform bug. See the module doc.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Mutant {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Mutant {
            /// Every platform mutant, in declaration order.
            pub const ALL: &'static [Mutant] = &[$(Mutant::$variant),*];

            /// snake_case name, as in the kill matrix and on the command line.
            pub const fn name(self) -> &'static str {
                match self { $(Mutant::$variant => $name,)* }
            }

            /// The contract rules the bug breaks.
            pub const fn breaks(self) -> &'static [Rule] {
                match self { $(Mutant::$variant => &[$(Rule::$rule),+],)* }
            }

            /// One line: what the buggy platform does.
            pub fn about(self) -> &'static str {
                match self { $(Mutant::$variant => first_line(concat!($($doc, "\n"),*)),)* }
            }
        }

        impl std::fmt::Display for Mutant {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// The first line of a doc comment, without the space rustdoc keeps.
fn first_line(doc: &'static str) -> &'static str {
    doc.trim_start().lines().next().unwrap_or("")
}

mutants! {
    /// The idempotency key is claimed only when the upstream answers (check, charge, then insert): a same-key retry meanwhile is handled as new business.
    KeyClaimedAfterCharge = "key_claimed_after_charge", [ConcurrentOneExecutes, ReplayReusesObject];
    /// The in-flight lock expires after the concurrent wait (10 s), before the upstream answers (15 s): a same-key request then takes over and runs the operation again.
    LockExpiresBeforeUpstream = "lock_expires_before_upstream", [ConcurrentOneExecutes, OneBusinessEffect];
    /// A request that waited for a same-key execution runs the operation again when it ends instead of reading the stored result.
    WaiterReexecutes = "waiter_reexecutes", [ConcurrentWaitSameObject, OneBusinessEffect];
    /// The fingerprint is taken over the whole body, card included: a replay with another card is a 409 conflict.
    CardInFingerprint = "card_in_fingerprint", [CardNotCompared];
    /// The fingerprint leaves out the amount: a replay with another amount returns the original object.
    AmountNotInFingerprint = "amount_not_in_fingerprint", [IdempotencyConflict, SafeParameters];
    /// The fingerprint leaves out the currency: a replay with another currency returns the original object.
    CurrencyNotInFingerprint = "currency_not_in_fingerprint", [IdempotencyConflict, SafeParameters];
    /// The record lookup ignores the merchant: another merchant's key finds this merchant's object.
    ScopeWithoutMerchant = "scope_without_merchant", [ScopeComponents];
    /// The record lookup ignores the environment: the same key in test and live collide.
    ScopeWithoutEnvironment = "scope_without_environment", [ScopeComponents, ScopeEnvironments];
    /// The record lookup ignores method and path: one key on two endpoints collides.
    ScopeWithoutRoute = "scope_without_route", [ScopeComponents];
    /// The record lookup takes the path template, not the path: one key on two Payments' confirm collides.
    ScopeWithoutPaymentInPath = "scope_without_payment_in_path", [ScopeComponents, ReplayReusesObject];
    /// A request rejected with 400, 403 or 422 is stored against its key: the corrected retry finds the key used up.
    RejectionBindsKey = "rejection_binds_key", [RejectionsDoNotOccupyKey];
    /// A 429 is stored against the key: the retry after Retry-After finds the key used up.
    RateLimitBindsKey = "rate_limit_binds_key", [RateLimited, RejectionsDoNotOccupyKey];
    /// A create answered 503 temporarily_unavailable has already inserted its Payment.
    PauseCreatesPayment = "pause_creates_payment", [ChannelPaused, Only503NotAccepted];
    /// An upstream 5xx on a charge is stored as a final failure instead of "unknown, keep verifying".
    UpstreamErrorIsFinal = "upstream_error_is_final", [UnknownResult, NeedsQuery, TerminalStatuses];
    /// The order-number binding is deleted with the idempotency record at 7 days: the order can be created and charged again.
    OrderNoDroppedWithKey = "order_no_dropped_with_key", [RetentionOrderNoOutlives, UniqueOrderNo];
    /// The order number is checked at admission but committed only when the charge returns: two keys for one order both create.
    OrderNoCheckNotAtomic = "order_no_check_not_atomic", [UniqueOrderNo, OrderNoNewKey];
    /// Idempotency records expire after 24 hours instead of 7 days.
    RetentionExpiresEarly = "retention_expires_early", [RetentionSevenDays];
    /// A confirm with a new key is accepted while an attempt is processing or requires_action.
    SecondUnfinishedAttempt = "second_unfinished_attempt", [OneUnfinishedAttempt, ConfirmWhileProcessing];
    /// The attempt limit is off by one: a fourth attempt is accepted.
    FourthAttempt = "fourth_attempt", [AttemptsMax];
    /// A confirm key replayed after its 7-day retention is answered as not new business (the Payment as it stands) and its card charged all the same.
    RetentionReplayChargedAnyway = "retention_replay_charged_anyway", [RetentionSevenDays];
    /// Card retries are not checked against expires_at (nor the expired status).
    AttemptAfterExpiry = "attempt_after_expiry", [CardRetryBeforeExpiry];
    /// Cancel of an unfinished payment answers 200 canceled at once, without the upstream's word, while the charge may still go through.
    CancelReportsCanceled = "cancel_reports_canceled", [Cancel202KeepsStatus];
    /// At the end of the automatic query window the payment is judged failed instead of going to manual_review.
    ManualReviewFailsOnTimer = "manual_review_fails_on_timer", [ManualReview];
    /// A new key with a used merchant_refund_no creates a second refund.
    RefundNoNotUnique = "refund_no_not_unique", [UniqueRefundNo];
    /// A refund its review rejects is shown failed and sent upstream all the same: money moves for a refund the merchant is told failed.
    RejectedRefundSentAnyway = "rejected_refund_sent_anyway", [RefundNotBeyondCaptured];
    /// Refunds are not limited to the captured amount.
    RefundBeyondCaptured = "refund_beyond_captured", [RefundNotBeyondCaptured];
    /// GET of a processing payment re-submits its charge upstream to refresh the status.
    QueryTriggersCharge = "query_triggers_charge", [QueryReadsKnownState];
    /// An upstream requires_action is reported as succeeded.
    ActionRequiredAsSucceeded = "action_required_as_succeeded", [RequiresAction, TerminalStatuses];
    /// A checkout-session replay with its original key makes a new session instead of returning the original one.
    SessionReplayNewSession = "session_replay_new_session", [ReplayReusesObject, CheckoutNewSession];
    /// A card retry re-snapshots the fee rate: the Payment takes the platform's rate of the retry.
    CardRetryTakesCurrentFee = "card_retry_takes_current_fee", [RetryKeepsPaymentAndFee];
    /// A refund whose answer is unknown is sent upstream again instead of queried.
    RefundResentWhenUnknown = "refund_resent_when_unknown", [RefundTimeoutNoSecondRefund];

    // ---- detail mutants: responses --------------------------------------------------
    // What the platform answers, as the contract prescribes it in detail: status codes,
    // headers, error fields, the object's current state, versions. Each is killed by a
    // property of `properties/src/responses/mod.rs`.

    /// A replay answers the object one version behind the store (a cache refreshed one write late).
    ReplayAnswersPreviousVersion = "replay_answers_previous_version", [ReplayLatestStatus200];
    /// A replay is answered 201 Created, as if it had executed again.
    ReplayAnswersCreated = "replay_answers_created", [ReplayLatestStatus200, FirstExecution201];
    /// A paused channel's 503 names its cause (error.field = card), which the response must not state.
    PauseStatesItsCause = "pause_states_its_cause", [ChannelPaused];
    /// A paused channel answers 500 internal_error instead of 503 temporarily_unavailable.
    PauseAnswersInternalError = "pause_answers_internal_error", [ChannelPaused, Only503NotAccepted];
    /// A missing or invalid Idempotency-Key is answered 400 without error.field.
    KeyErrorWithoutField = "key_error_without_field", [KeyRequiredCreatePayment, KeyLength];
    /// The key length is counted in bytes: a key of 255 characters or fewer but more than 255 bytes is refused.
    KeyLengthInBytes = "key_length_in_bytes", [KeyLength];
    /// A GET of a Payment the merchant does not have answers 403 permission_denied instead of 404.
    MissingPaymentAnswersForbidden = "missing_payment_answers_forbidden", [QueryById, NotFoundMeansNeverCreated];
    /// 409 order_no_conflict is answered without related_resource_id.
    OrderNoConflictWithoutRelated = "order_no_conflict_without_related", [UniqueOrderNo, OrderNoNewKey];
    /// 409 payment_in_progress is answered without related_resource_id.
    PaymentInProgressWithoutRelated = "payment_in_progress_without_related", [ConfirmWhileProcessing];
    /// A cancel answered 202 has already marked the Payment canceled.
    CancelAcceptedMarksCanceled = "cancel_accepted_marks_canceled", [Cancel202KeepsStatus];
    /// failure.attempt_id names the Payment's first attempt, not the one that failed last.
    FailureNamesFirstAttempt = "failure_names_first_attempt", [TerminalStatuses, CardRetryAfterFailure];
    /// attempt_count in answers leaves out the attempt still in progress.
    AttemptCountOffByOne = "attempt_count_off_by_one", [ReplayLatestStatus200, CardRetryAfterFailure];
    /// The switch to needs_query is stored without a new version (and without its webhook).
    VersionNotBumpedOnNeedsQuery = "version_not_bumped_on_needs_query", [NeedsQuery, WebhookPrimary];
    /// A replay of a Payment still in progress is answered 409 operation_in_progress though nothing is executing.
    ReplayInProgressAnswersConflict = "replay_in_progress_answers_conflict", [ConcurrentWaitTimeout, ReplayLatestStatus200];
    /// A query of a Payment under verification answers resolution_status known (a state never stored).
    QueryHidesNeedsQuery = "query_hides_needs_query", [QueryReadsKnownState, NeedsQuery];
    /// S8: a confirm while an attempt is unfinished is answered 422 payment_not_confirmable, neither of the contract's two answers.
    ConfirmWhileProcessingUnconfirmable = "confirm_while_processing_unconfirmable", [ConfirmWhileProcessing];
    /// S4: a new key for an existing order number is answered 201 with the existing Payment, as if it had been created.
    OrderNoReuseAnswersCreated = "order_no_reuse_answers_created", [OrderNoNewKey, FirstExecution201];
    /// A same-key request with other parameters, while the original executes, waits or gets 409 operation_in_progress instead of idempotency_conflict.
    InFlightHidesConflict = "in_flight_hides_conflict", [IdempotencyConflict, SafeParameters];
    /// RES-05: a requires_action Payment is answered without next_action: the payer is never guided to authenticate.
    RequiresActionWithoutNextAction = "requires_action_without_next_action", [RequiresAction];
    /// S12: a cancel the upstream could not confirm is answered 202 with an error object (operation_in_progress) instead of the Payment, so the merchant never sees the status it must keep.
    CancelAcceptedWithoutPayment = "cancel_accepted_without_payment", [Cancel202KeepsStatus];
    /// QUERY-03: refund queries (by id, by merchant_refund_no, ?status=processing) answer from a read replica one write behind: the refund's previous version.
    RefundQueryAnswersPreviousVersion = "refund_query_answers_previous_version", [QueryRefunds, QueryReadsKnownState];

    // ---- detail mutants: cadence and effects ----
    /// The automatic verification of an unknown charge waits 24 hours between queries, as slowly as manual_review, instead of verifying within the automatic window.
    VerificationStalls = "verification_stalls", [NeedsQuery, ManualReview];
    /// A charge unanswered within the synchronous wait goes straight to manual_review: no automatic query window.
    ManualReviewAtOnce = "manual_review_at_once", [ManualReview, NeedsQuery];
}

impl Mutant {
    /// Looks a mutant up by its [`Mutant::name`].
    pub fn from_name(name: &str) -> Option<Mutant> {
        Mutant::ALL.iter().copied().find(|m| m.name() == name)
    }
}

crate::named! {
    fn name, Display;
    /// A planted bug made by a parameter alone: the reference platform, run with a number
    /// other than the contract's ([`crate::Contract`]). Properties judge by the contract's
    /// figures, never by the platform's parameters, so a wrong number is caught like a wrong
    /// line of code.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
    pub enum ParameterMutant {
        /// `retention = 1d`: idempotency records expire after a day instead of 7.
        #[serde(rename = "retention-1d")]
        Retention1d = "retention-1d",
        /// `attempts_max = 4`: a Payment takes a fourth attempt.
        #[serde(rename = "attempts-max-4")]
        AttemptsMax4 = "attempts-max-4",
        // ---- detail mutants: cadence and effects ----
        /// `manual_review_requery = 48h`: under manual_review the upstream is queried every
        /// 48 hours instead of 24.
        #[serde(rename = "manual-review-requery-48h")]
        ManualReviewRequery48h = "manual-review-requery-48h",
        /// `sync_wait = 90s`: the platform waits 90 seconds for the upstream before its 202,
        /// past the client's 20-second timeout, instead of about 15.
        #[serde(rename = "sync-wait-90s")]
        SyncWait90s = "sync-wait-90s",
    }
}

impl ParameterMutant {
    /// The contract rules the wrong number breaks.
    pub const fn breaks(self) -> &'static [Rule] {
        match self {
            ParameterMutant::Retention1d => &[Rule::RetentionSevenDays],
            ParameterMutant::AttemptsMax4 => &[Rule::AttemptsMax],
            ParameterMutant::ManualReviewRequery48h => &[Rule::ManualReview],
            ParameterMutant::SyncWait90s => &[Rule::SyncWait],
        }
    }

    /// One line: what the misconfigured platform does.
    pub const fn about(self) -> &'static str {
        match self {
            ParameterMutant::Retention1d => {
                "The reference platform run with retention = 1d: idempotency records expire after a day instead of 7."
            }
            ParameterMutant::AttemptsMax4 => {
                "The reference platform run with attempts_max = 4: a Payment takes a fourth attempt."
            }
            ParameterMutant::ManualReviewRequery48h => {
                "The reference platform run with manual_review_requery = 48h: under manual_review the upstream is queried every 48 hours instead of 24."
            }
            ParameterMutant::SyncWait90s => {
                "The reference platform run with sync_wait = 90s: a 202 comes 90 seconds after the charge was sent, past the client's 20-second timeout, instead of about 15."
            }
        }
    }

    /// `params` with the wrong number in place of the contract's.
    pub fn apply(self, params: PlatformParams) -> PlatformParams {
        match self {
            ParameterMutant::Retention1d => PlatformParams {
                retention: Millis::days(1),
                ..params
            },
            ParameterMutant::AttemptsMax4 => PlatformParams {
                attempts_max: crate::Contract::ATTEMPTS_MAX + 1,
                ..params
            },
            ParameterMutant::ManualReviewRequery48h => PlatformParams {
                manual_review_requery: Millis(crate::Contract::MANUAL_REVIEW_REQUERY.0 * 2),
                ..params
            },
            ParameterMutant::SyncWait90s => PlatformParams {
                sync_wait: Millis::secs(90),
                ..params
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_mutant_has_a_name_a_line_and_rules() {
        let mut names = BTreeSet::new();
        for &m in Mutant::ALL {
            assert!(names.insert(m.name()), "{m}");
            assert_eq!(Mutant::from_name(m.name()), Some(m));
            assert!(!m.about().is_empty() && !m.about().contains('\n'), "{m}");
            assert!(!m.breaks().is_empty(), "{m}");
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.name()));
        }
        assert!(Mutant::ALL.len() >= 20);
        assert_eq!(Mutant::from_name("nope"), None);
    }

    /// RET-01, ATTEMPT-05: a parameter mutant changes exactly one number, away from the
    /// contract's.
    #[test]
    fn ret_01_attempt_05_parameter_mutants_change_one_contract_number() {
        let reference = PlatformParams::default();
        for &m in ParameterMutant::ALL {
            assert_eq!(ParameterMutant::from_name(m.name()), Some(m));
            assert_eq!(Mutant::from_name(m.name()), None, "{m}");
            assert!(!m.about().is_empty() && !m.breaks().is_empty(), "{m}");
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.name()));
            assert_ne!(m.apply(reference.clone()), reference, "{m}");
        }
        let short = ParameterMutant::Retention1d.apply(reference.clone());
        assert_eq!(short.retention, Millis::days(1));
        assert!(short.retention < crate::Contract::RETENTION);
        let more = ParameterMutant::AttemptsMax4.apply(reference.clone());
        assert_eq!(more.attempts_max, 4);
        assert_eq!(
            PlatformParams {
                retention: reference.retention,
                ..short
            },
            reference
        );
    }
}
