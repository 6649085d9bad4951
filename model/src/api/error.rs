//! The `error` object of a non-2xx response: its code, field and retryability.

use crate::ids::ResourceId;
use serde::{Deserialize, Serialize};

macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $status:literal; )*) => {
        /// `error.code`, as the API writes it, and the HTTP status that carries it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum ErrorCode {
            $( $(#[doc = $doc])* #[serde(rename = $name)] $variant, )*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name,)* }
            }

            /// The HTTP status that carries this code.
            pub fn http_status(self) -> u16 {
                match self { $(ErrorCode::$variant => $status,)* }
            }
        }
    };
}

error_codes! {
    /// 400: a header or body field is missing or malformed (`error.field` says which).
    InvalidRequest = "invalid_request", 400;
    /// 401: unknown or revoked API key.
    AuthenticationFailed = "authentication_failed", 401;
    /// 403: the API key may not call this endpoint.
    PermissionDenied = "permission_denied", 403;
    /// 404: unknown object or path.
    ResourceMissing = "resource_missing", 404;
    /// 405: known path, wrong method.
    MethodNotAllowed = "method_not_allowed", 405;
    /// 409: same key, conflicting safety-relevant parameters (CONFLICT-01).
    IdempotencyConflict = "idempotency_conflict", 409;
    /// 409: same key still executing and the wait timed out (CONC-03).
    OperationInProgress = "operation_in_progress", 409;
    /// 409: the merchant order number already has a Payment (ORDER-01).
    OrderNoConflict = "order_no_conflict", 409;
    /// 409: the merchant refund number already has a Refund (UNIQ-04; code assumed).
    RefundNoConflict = "refund_no_conflict", 409;
    /// 409: confirm while an attempt is unfinished (ATTEMPT-01).
    PaymentInProgress = "payment_in_progress", 409;
    /// 422: the currency is well formed but not supported.
    UnsupportedCurrency = "unsupported_currency", 422;
    /// 422: confirm on a Payment whose status allows no new attempt (ATTEMPT-02).
    PaymentNotConfirmable = "payment_not_confirmable", 422;
    /// 422: the Payment is past `expires_at` (ATTEMPT-04).
    PaymentExpired = "payment_expired", 422;
    /// 422: the attempt limit is reached (ATTEMPT-05).
    AttemptsExhausted = "attempts_exhausted", 422;
    /// 422: cancel on a Payment that can no longer be canceled.
    PaymentNotCancelable = "payment_not_cancelable", 422;
    /// 422: refund of a Payment that has not succeeded.
    PaymentNotRefundable = "payment_not_refundable", 422;
    /// 422: the refund would exceed the captured amount (REFUND-03).
    RefundAmountExceeded = "refund_amount_exceeded", 422;
    /// 429 (RATE-01).
    RateLimited = "rate_limited", 429;
    /// 500: result unknown (UNKNOWN-02).
    InternalError = "internal_error", 500;
    /// 503: the channel suspended new transactions (RATE-04).
    TemporarilyUnavailable = "temporarily_unavailable", 503;
}

impl ErrorCode {
    /// `error.retryable`: whether the client should send the same request with the same
    /// key again (A-RETRYABLE: the contract shows the flag for internal_error and
    /// temporarily_unavailable only). Not payment_in_progress: S8 says "等待结果或查询"
    /// (wait for the result, or query) and the card-retry section "会被拒绝" (will be
    /// rejected).
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::OperationInProgress
                | ErrorCode::RateLimited
                | ErrorCode::InternalError
                | ErrorCode::TemporarilyUnavailable
        )
    }
}

/// `error.field`: which header or body field a 400/422 is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    #[serde(rename = "Idempotency-Key")]
    IdempotencyKey,
    Body,
    MerchantOrderNo,
    Amount,
    Currency,
    PaymentId,
    MerchantRefundNo,
    Card,
}

/// The `error` object of a non-2xx response.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiError {
    pub code: ErrorCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<Field>,
    pub retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related_resource_id: Option<ResourceId>,
}

impl ApiError {
    pub fn new(code: ErrorCode) -> ApiError {
        ApiError {
            code,
            field: None,
            retryable: code.retryable(),
            related_resource_id: None,
        }
    }
    pub fn related(mut self, id: ResourceId) -> ApiError {
        self.related_resource_id = Some(id);
        self
    }
}
