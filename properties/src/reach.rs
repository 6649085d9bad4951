//! Reachability ("sometimes") properties: each interesting situation of the contract is
//! reached in the presets meant to reach it, so a model in which nothing happens fails.

use crate::Facts;
use crate::evidence::PLATFORM;
use crate::property::{Predicate, Property};
use payhub_model::{ErrorCode, PaymentStatus, RefundStatus, ResolutionStatus, Rule};

fn answered(f: &Facts, status: u16, code: Option<ErrorCode>) -> bool {
    f.queries.answers.contains(&(status, code))
}

/// Each a row: the property's name, the rules whose situation it reaches, what it
/// reaches, and its predicate over a run's facts.
macro_rules! reach_properties {
    ($( $const:ident = $name:literal, [$($rule:path),+], $about:literal, $reached:expr; )*) => {$(
        pub const $const: Property = Property {
            name: $name,
            rules: &[$($rule),+],
            about: $about,
            needs: PLATFORM,
            exercised_by: &[],
            predicate: Predicate::Sometimes($reached),
        };
    )*};
}

reach_properties! {
    REPLAY_ANSWERED_200 = "reach:replay-answered-200", [Rule::ReplayLatestStatus200],
        "A replay is answered 200 with the original object.",
        |f| f.queries.rules_exercised.contains(Rule::ReplayLatestStatus200);

    IDEMPOTENCY_CONFLICT = "reach:409-idempotency-conflict", [Rule::IdempotencyConflict],
        "A replay with other parameters is answered 409 idempotency_conflict.",
        |f| answered(f, 409, Some(ErrorCode::IdempotencyConflict));

    ORDER_NO_CONFLICT = "reach:409-order-no-conflict", [Rule::OrderNoNewKey],
        "A new key for a used order number is answered 409 order_no_conflict.",
        |f| answered(f, 409, Some(ErrorCode::OrderNoConflict));

    OPERATION_IN_PROGRESS = "reach:409-operation-in-progress", [Rule::ConcurrentWaitTimeout],
        "A concurrent same-key request is answered 409 operation_in_progress.",
        |f| answered(f, 409, Some(ErrorCode::OperationInProgress));

    PAYMENT_IN_PROGRESS = "reach:409-payment-in-progress", [Rule::ConfirmWhileProcessing],
        "A confirm while processing is answered 409 payment_in_progress.",
        |f| answered(f, 409, Some(ErrorCode::PaymentInProgress));

    REFUND_NO_CONFLICT = "reach:409-refund-no-conflict", [Rule::UniqueRefundNo],
        "A new key for a used refund number is answered 409 refund_no_conflict.",
        |f| answered(f, 409, Some(ErrorCode::RefundNoConflict));

    // A create's or confirm's 202 only: a cancel's 202 is `reach:cancel-202`.
    ACCEPTED_202 = "reach:202-result-unknown", [Rule::SyncWait, Rule::UnknownResult],
        "A create or confirm is answered 202 after the synchronous wait.",
        |f| {
            let by = &f.queries.rules_202;
            by.contains(Rule::SyncWait) || by.contains(Rule::UnknownResult)
        };

    // The rule that put a Payment there, or the store holding one there now (a recorded
    // stream's store events carry no rule).
    NEEDS_QUERY = "reach:needs-query", [Rule::NeedsQuery],
        "A Payment is processing with resolution_status needs_query.",
        |f| {
            f.queries.rules_exercised.contains(Rule::NeedsQuery)
                || f.attempts.payments.values().any(|p| {
                    p.status == PaymentStatus::Processing
                        && p.resolution == ResolutionStatus::NeedsQuery
                })
        };

    // Ever in manual_review, also if resolved since (the cadence family's history).
    MANUAL_REVIEW = "reach:manual-review", [Rule::ManualReview],
        "A Payment passes the automatic query window and goes to manual_review.",
        |f| !f.cadence.history.manual_review.is_empty();

    SECOND_CARD_SUCCEEDED = "reach:second-card-succeeded", [Rule::CardRetryAfterFailure, Rule::RetryKeepsPaymentAndFee],
        "A card retry after a failure succeeds on the same Payment.",
        |f| {
            f.attempts
                .payments
                .values()
                .any(|p| p.attempts.len() >= 2 && p.status == PaymentStatus::Succeeded)
        };

    REPLAY_AFTER_RETENTION = "reach:replay-after-retention", [Rule::RetentionSevenDays, Rule::RetentionOrderNoOutlives],
        "A key is answered again after its 7-day retention has passed.",
        |f| f.money.replay_after_retention;

    RATE_LIMITED = "reach:429-rate-limited", [Rule::RateLimited],
        "A request is answered 429 with Retry-After.",
        |f| answered(f, 429, Some(ErrorCode::RateLimited));

    CHANNEL_PAUSED = "reach:503-temporarily-unavailable", [Rule::ChannelPaused],
        "A request is answered 503 temporarily_unavailable.",
        |f| answered(f, 503, Some(ErrorCode::TemporarilyUnavailable));

    // The cancel's own 202: not a cancel's 200 (the same rule) next to a create's 202.
    CANCEL_202 = "reach:cancel-202", [Rule::Cancel202KeepsStatus],
        "A cancel the upstream could not confirm is answered 202 with the original status.",
        |f| f.queries.rules_202.contains(Rule::Cancel202KeepsStatus);

    NEW_CHECKOUT_SESSION = "reach:new-checkout-session-same-payment", [Rule::CheckoutNewSession],
        "A checkout session with a new key and the same order is a new session for the same Payment.",
        |f| f.queries.rules_exercised.contains(Rule::CheckoutNewSession);

    REFUND_SUCCEEDED = "reach:refund-succeeded", [Rule::RefundReplaySameRefund],
        "A refund reaches succeeded.",
        |f| f.refunds.refunds.values().any(|r| r.status == RefundStatus::Succeeded);

    REFUND_REJECTED_IN_REVIEW = "reach:refund-rejected-in-review", [Rule::RefundNotBeyondCaptured],
        "A refund's review rejects it: pending_review, then failed (A-REFUND-REVIEW).",
        |f| !f.refunds.rejected.is_empty();
}
