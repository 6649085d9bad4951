//! Reachability ("sometimes") properties: each interesting situation of the contract is
//! reached in the presets meant to reach it, so a model in which nothing happens fails.

use crate::Facts;
use crate::evidence::PLATFORM;
use crate::property::{Predicate, Property};
use payhub_model::{ErrorCode, PaymentStatus, RefundStatus, ResolutionStatus, Rule};

fn answered(f: &Facts, status: u16, code: Option<ErrorCode>) -> bool {
    f.queries.answers.contains(&(status, code))
}

pub const REPLAY_ANSWERED_200: Property = Property {
    name: "reach:replay-answered-200",
    rules: &[Rule::ReplayLatestStatus200],
    about: "A replay is answered 200 with the original object.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| {
        f.queries
            .rules_exercised
            .contains(Rule::ReplayLatestStatus200)
    }),
};

pub const IDEMPOTENCY_CONFLICT: Property = Property {
    name: "reach:409-idempotency-conflict",
    rules: &[Rule::IdempotencyConflict],
    about: "A replay with other parameters is answered 409 idempotency_conflict.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| answered(f, 409, Some(ErrorCode::IdempotencyConflict))),
};

pub const ORDER_NO_CONFLICT: Property = Property {
    name: "reach:409-order-no-conflict",
    rules: &[Rule::OrderNoNewKey],
    about: "A new key for a used order number is answered 409 order_no_conflict.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| answered(f, 409, Some(ErrorCode::OrderNoConflict))),
};

pub const OPERATION_IN_PROGRESS: Property = Property {
    name: "reach:409-operation-in-progress",
    rules: &[Rule::ConcurrentWaitTimeout],
    about: "A concurrent same-key request is answered 409 operation_in_progress.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| answered(f, 409, Some(ErrorCode::OperationInProgress))),
};

pub const PAYMENT_IN_PROGRESS: Property = Property {
    name: "reach:409-payment-in-progress",
    rules: &[Rule::ConfirmWhileProcessing],
    about: "A confirm while processing is answered 409 payment_in_progress.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| answered(f, 409, Some(ErrorCode::PaymentInProgress))),
};

pub const REFUND_NO_CONFLICT: Property = Property {
    name: "reach:409-refund-no-conflict",
    rules: &[Rule::UniqueRefundNo],
    about: "A new key for a used refund number is answered 409 refund_no_conflict.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| answered(f, 409, Some(ErrorCode::RefundNoConflict))),
};

pub const ACCEPTED_202: Property = Property {
    name: "reach:202-result-unknown",
    rules: &[Rule::SyncWait, Rule::UnknownResult],
    about: "A create or confirm is answered 202 after the synchronous wait.",
    // A create's or confirm's 202 only: a cancel's 202 is `reach:cancel-202`.
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| {
        let by = &f.queries.rules_202;
        by.contains(Rule::SyncWait) || by.contains(Rule::UnknownResult)
    }),
};

pub const NEEDS_QUERY: Property = Property {
    name: "reach:needs-query",
    rules: &[Rule::NeedsQuery],
    about: "A Payment is processing with resolution_status needs_query.",
    // The rule that put a Payment there, or the store holding one there now (a recorded
    // stream's store events carry no rule).
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| {
        f.queries.rules_exercised.contains(Rule::NeedsQuery)
            || f.attempts.payments.values().any(|p| {
                p.status == PaymentStatus::Processing
                    && p.resolution == ResolutionStatus::NeedsQuery
            })
    }),
};

pub const MANUAL_REVIEW: Property = Property {
    name: "reach:manual-review",
    rules: &[Rule::ManualReview],
    about: "A Payment passes the automatic query window and goes to manual_review.",
    // Ever in manual_review, also if resolved since (the cadence family's history).
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| !f.cadence.history.manual_review.is_empty()),
};

pub const SECOND_CARD_SUCCEEDED: Property = Property {
    name: "reach:second-card-succeeded",
    rules: &[Rule::CardRetryAfterFailure, Rule::RetryKeepsPaymentAndFee],
    about: "A card retry after a failure succeeds on the same Payment.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| {
        f.attempts
            .payments
            .values()
            .any(|p| p.attempts.len() >= 2 && p.status == PaymentStatus::Succeeded)
    }),
};

pub const REPLAY_AFTER_RETENTION: Property = Property {
    name: "reach:replay-after-retention",
    rules: &[Rule::RetentionSevenDays, Rule::RetentionOrderNoOutlives],
    about: "A key is answered again after its 7-day retention has passed.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| f.money.replay_after_retention),
};

pub const RATE_LIMITED: Property = Property {
    name: "reach:429-rate-limited",
    rules: &[Rule::RateLimited],
    about: "A request is answered 429 with Retry-After.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| answered(f, 429, Some(ErrorCode::RateLimited))),
};

pub const CHANNEL_PAUSED: Property = Property {
    name: "reach:503-temporarily-unavailable",
    rules: &[Rule::ChannelPaused],
    about: "A request is answered 503 temporarily_unavailable.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| answered(f, 503, Some(ErrorCode::TemporarilyUnavailable))),
};

pub const CANCEL_202: Property = Property {
    name: "reach:cancel-202",
    rules: &[Rule::Cancel202KeepsStatus],
    about: "A cancel the upstream could not confirm is answered 202 with the original status.",
    // The cancel's own 202: not a cancel's 200 (the same rule) next to a create's 202.
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| f.queries.rules_202.contains(Rule::Cancel202KeepsStatus)),
};

pub const NEW_CHECKOUT_SESSION: Property = Property {
    name: "reach:new-checkout-session-same-payment",
    rules: &[Rule::CheckoutNewSession],
    about: "A checkout session with a new key and the same order is a new session for the same Payment.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| {
        f.queries.rules_exercised.contains(Rule::CheckoutNewSession)
    }),
};

pub const REFUND_SUCCEEDED: Property = Property {
    name: "reach:refund-succeeded",
    rules: &[Rule::RefundReplaySameRefund],
    about: "A refund reaches succeeded.",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| {
        f.refunds
            .refunds
            .values()
            .any(|r| r.status == RefundStatus::Succeeded)
    }),
};

pub const REFUND_REJECTED_IN_REVIEW: Property = Property {
    name: "reach:refund-rejected-in-review",
    rules: &[Rule::RefundNotBeyondCaptured],
    about: "A refund's review rejects it: pending_review, then failed (A-REFUND-REVIEW).",
    needs: PLATFORM,
    predicate: Predicate::Sometimes(|f| !f.refunds.rejected.is_empty()),
};
