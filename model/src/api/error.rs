//! The `error` object of a non-2xx response: its code, field and retryability.

use crate::ids::ResourceId;
use serde::{Deserialize, Serialize};

/// `error.code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 400: a header or body field is missing or malformed (`error.field` says which).
    InvalidRequest,
    /// 401: unknown or revoked API key.
    AuthenticationFailed,
    /// 403: the API key may not call this endpoint.
    PermissionDenied,
    /// 404: unknown object or path.
    ResourceMissing,
    /// 405: known path, wrong method.
    MethodNotAllowed,
    /// 409: same key, conflicting safety-relevant parameters (CONFLICT-01).
    IdempotencyConflict,
    /// 409: same key still executing and the wait timed out (CONC-03).
    OperationInProgress,
    /// 409: the merchant order number already has a Payment (ORDER-01).
    OrderNoConflict,
    /// 409: the merchant refund number already has a Refund (UNIQ-04; code assumed).
    RefundNoConflict,
    /// 409: confirm while an attempt is unfinished (ATTEMPT-01).
    PaymentInProgress,
    /// 422: the currency is well formed but not supported.
    UnsupportedCurrency,
    /// 422: confirm on a Payment whose status allows no new attempt (ATTEMPT-02).
    PaymentNotConfirmable,
    /// 422: the Payment is past `expires_at` (ATTEMPT-04).
    PaymentExpired,
    /// 422: the attempt limit is reached (ATTEMPT-05).
    AttemptsExhausted,
    /// 422: cancel on a Payment that can no longer be canceled.
    PaymentNotCancelable,
    /// 422: refund of a Payment that has not succeeded.
    PaymentNotRefundable,
    /// 422: the refund would exceed the captured amount (REFUND-03).
    RefundAmountExceeded,
    /// 429 (RATE-01).
    RateLimited,
    /// 500: result unknown (UNKNOWN-02).
    InternalError,
    /// 503: the channel suspended new transactions (RATE-04).
    TemporarilyUnavailable,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidRequest,
        ErrorCode::AuthenticationFailed,
        ErrorCode::PermissionDenied,
        ErrorCode::ResourceMissing,
        ErrorCode::MethodNotAllowed,
        ErrorCode::IdempotencyConflict,
        ErrorCode::OperationInProgress,
        ErrorCode::OrderNoConflict,
        ErrorCode::RefundNoConflict,
        ErrorCode::PaymentInProgress,
        ErrorCode::UnsupportedCurrency,
        ErrorCode::PaymentNotConfirmable,
        ErrorCode::PaymentExpired,
        ErrorCode::AttemptsExhausted,
        ErrorCode::PaymentNotCancelable,
        ErrorCode::PaymentNotRefundable,
        ErrorCode::RefundAmountExceeded,
        ErrorCode::RateLimited,
        ErrorCode::InternalError,
        ErrorCode::TemporarilyUnavailable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::AuthenticationFailed => "authentication_failed",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::ResourceMissing => "resource_missing",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::IdempotencyConflict => "idempotency_conflict",
            ErrorCode::OperationInProgress => "operation_in_progress",
            ErrorCode::OrderNoConflict => "order_no_conflict",
            ErrorCode::RefundNoConflict => "refund_no_conflict",
            ErrorCode::PaymentInProgress => "payment_in_progress",
            ErrorCode::UnsupportedCurrency => "unsupported_currency",
            ErrorCode::PaymentNotConfirmable => "payment_not_confirmable",
            ErrorCode::PaymentExpired => "payment_expired",
            ErrorCode::AttemptsExhausted => "attempts_exhausted",
            ErrorCode::PaymentNotCancelable => "payment_not_cancelable",
            ErrorCode::PaymentNotRefundable => "payment_not_refundable",
            ErrorCode::RefundAmountExceeded => "refund_amount_exceeded",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::TemporarilyUnavailable => "temporarily_unavailable",
        }
    }

    /// The HTTP status that carries this code.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidRequest => 400,
            ErrorCode::AuthenticationFailed => 401,
            ErrorCode::PermissionDenied => 403,
            ErrorCode::ResourceMissing => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::IdempotencyConflict
            | ErrorCode::OperationInProgress
            | ErrorCode::OrderNoConflict
            | ErrorCode::RefundNoConflict
            | ErrorCode::PaymentInProgress => 409,
            ErrorCode::UnsupportedCurrency
            | ErrorCode::PaymentNotConfirmable
            | ErrorCode::PaymentExpired
            | ErrorCode::AttemptsExhausted
            | ErrorCode::PaymentNotCancelable
            | ErrorCode::PaymentNotRefundable
            | ErrorCode::RefundAmountExceeded => 422,
            ErrorCode::RateLimited => 429,
            ErrorCode::InternalError => 500,
            ErrorCode::TemporarilyUnavailable => 503,
        }
    }

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
pub enum Field {
    #[serde(rename = "Idempotency-Key")]
    IdempotencyKey,
    #[serde(rename = "body")]
    Body,
    #[serde(rename = "merchant_order_no")]
    MerchantOrderNo,
    #[serde(rename = "amount")]
    Amount,
    #[serde(rename = "currency")]
    Currency,
    #[serde(rename = "payment_id")]
    PaymentId,
    #[serde(rename = "merchant_refund_no")]
    MerchantRefundNo,
    #[serde(rename = "card")]
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
    pub fn with_field(mut self, field: Field) -> ApiError {
        self.field = Some(field);
        self
    }
    pub fn related(mut self, id: ResourceId) -> ApiError {
        self.related_resource_id = Some(id);
        self
    }
}
