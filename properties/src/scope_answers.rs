//! How an answer under an idempotency scope is read against the scope's execution, and
//! how long the scope's history counts: the reading the money family
//! ([`crate::facts::money`]) records with, judged by `rejections-execute-nothing`,
//! `conflict-iff-parameters-differ` and `same-key-never-new-business` ([`crate::safety`]).
//! The facts record; these decide.

use payhub_model::{ApiResponse, Contract, ErrorCode, Millis};

/// How long the money family keeps a scope's execution, charges and answered object
/// before a new window begins: RET-01's retention ("Idempotency records are retained
/// online for 7 days.", 幂等记录在线保留 7 天。).
pub const SCOPE_HISTORY: Millis = Contract::RETENTION;

/// CONFLICT-01: "同键但金额、币种、订单号等安全业务参数冲突 → HTTP 409
/// `idempotency_conflict`" (same key, but safety-relevant business parameters such as
/// amount, currency or order number conflict → 409 idempotency_conflict). So a conflict
/// is answered exactly when the parameters differ from the scope's execution: a 409
/// `idempotency_conflict` with the same parameters (or with nothing executed) misjudges,
/// and so does a 2xx, or a 409 `operation_in_progress`, with other parameters (the
/// original in flight does not hide a conflict: A-CONFLICT-BEFORE-WAIT, CONC-03).
pub fn conflict_misjudged(answer: &ApiResponse, params_differ: bool) -> bool {
    match answer.error_code() {
        Some(ErrorCode::IdempotencyConflict) => !params_differ,
        None if answer.is_success() => params_differ,
        Some(ErrorCode::OperationInProgress) => params_differ,
        _ => false,
    }
}

/// REPLAY-01, RET-01: a key that executed is, within retention, the same business; the
/// answers of new business to it are `order_no_conflict`, `payment_in_progress` and
/// `refund_no_conflict` ("不会重新解释为新业务", will not be reinterpreted as new
/// business).
pub fn as_new_business(answer: &ApiResponse) -> bool {
    matches!(
        answer.error_code(),
        Some(
            ErrorCode::OrderNoConflict | ErrorCode::PaymentInProgress | ErrorCode::RefundNoConflict
        )
    )
}

/// REJECT-01: "被 400、401、403、422 拒绝的请求不占用幂等键" (requests rejected with 400,
/// 401, 403 or 422 do not use up the idempotency key); 429 and 503 are "not executed"
/// (RATE-01, RATE-04); 404, 405 and the 409s bind nothing either (A-409-NOBIND).
pub fn executes_nothing(answer: &ApiResponse) -> bool {
    matches!(
        answer.status,
        400 | 401 | 403 | 404 | 405 | 409 | 422 | 429 | 503
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::{ApiError, ResponseBody};

    fn error(code: ErrorCode) -> ApiResponse {
        ApiResponse::error(ApiError::new(code))
    }

    fn ok() -> ApiResponse {
        ApiResponse::ok(200, ResponseBody::Payments { data: Vec::new() })
    }

    /// CONFLICT-01's row read both ways: 409 idempotency_conflict exactly when the
    /// parameters differ, and neither the replay's 200 nor an in-flight 409 hides it.
    #[test]
    fn a_conflict_is_answered_exactly_when_the_parameters_differ() {
        let conflict = error(ErrorCode::IdempotencyConflict);
        let in_flight = error(ErrorCode::OperationInProgress);
        assert!(!conflict_misjudged(&conflict, true));
        assert!(conflict_misjudged(&conflict, false));
        assert!(!conflict_misjudged(&ok(), false));
        assert!(conflict_misjudged(&ok(), true));
        assert!(!conflict_misjudged(&in_flight, false));
        assert!(conflict_misjudged(&in_flight, true));
        assert!(!conflict_misjudged(&error(ErrorCode::RateLimited), true));
    }

    /// REPLAY-01: the three answers of new business, and no other.
    #[test]
    fn new_business_is_the_three_uniqueness_answers() {
        for code in [
            ErrorCode::OrderNoConflict,
            ErrorCode::PaymentInProgress,
            ErrorCode::RefundNoConflict,
        ] {
            assert!(as_new_business(&error(code)), "{code:?}");
        }
        assert!(!as_new_business(&error(ErrorCode::IdempotencyConflict)));
        assert!(!as_new_business(&ok()));
    }

    /// REJECT-01, RATE-01, A-409-NOBIND: every refusal executes nothing; a 2xx and a 5xx
    /// may have.
    #[test]
    fn refusals_execute_nothing() {
        for code in [
            ErrorCode::RateLimited,
            ErrorCode::IdempotencyConflict,
            ErrorCode::OrderNoConflict,
        ] {
            assert!(executes_nothing(&error(code)), "{code:?}");
        }
        assert!(!executes_nothing(&ok()));
        let mut failed = error(ErrorCode::RateLimited);
        failed.status = 500;
        assert!(!executes_nothing(&failed));
    }
}
