//! The HTTP surface of the contract: requests, responses, objects and errors.
//!
//! Requests are what a merchant server sends (possibly malformed: every body field is
//! optional so that 400s can be produced); responses are what the platform answers.
//! `Display` renders both in the contract's own notation:
//! `POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001",…}` and
//! `409 {"error":{"code":"idempotency_conflict",…}}`.

use crate::ids::{ApiKeyId, AttemptId, Card, PaymentId, RefundId, ResourceId, SessionId};
use crate::text::Text;
use crate::time::Millis;
use serde::Serialize;

/// HTTP method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Method {
    #[serde(rename = "GET")]
    Get,
    #[serde(rename = "POST")]
    Post,
    #[serde(rename = "DELETE")]
    Delete,
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        })
    }
}

/// Body of `POST /v1/payments`. `card` is present when the payer pays immediately.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct CreatePaymentBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merchant_order_no: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<Card>,
}

/// Body of `POST /v1/payments/{id}/confirm`: the card the payer supplies (again).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ConfirmBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<Card>,
}

/// Body of `POST /v1/checkout/sessions`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SessionBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merchant_order_no: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<Text>,
}

/// Body of `POST /v1/refunds`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RefundBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment_id: Option<PaymentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merchant_refund_no: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
}

/// A JSON body as sent: well-formed, or bytes that do not parse.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(untagged)]
pub enum Json<T> {
    Parsed(T),
    /// A body that is not valid JSON (400 with field `body`).
    Malformed(Text),
}

impl<T: Default> Default for Json<T> {
    fn default() -> Self {
        Json::Parsed(T::default())
    }
}

/// Every endpoint of the contract, plus a catch-all for wrong methods and paths.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "endpoint", rename_all = "snake_case")]
pub enum Endpoint {
    /// `POST /v1/payments`
    CreatePayment { body: Json<CreatePaymentBody> },
    /// `POST /v1/payments/{payment_id}/confirm`
    ConfirmPayment {
        payment_id: PaymentId,
        body: Json<ConfirmBody>,
    },
    /// `POST /v1/payments/{payment_id}/cancel` (no body)
    CancelPayment { payment_id: PaymentId },
    /// `POST /v1/checkout/sessions`
    CreateCheckoutSession { body: Json<SessionBody> },
    /// `POST /v1/refunds`
    CreateRefund { body: Json<RefundBody> },
    /// `GET /v1/payments/{payment_id}`
    GetPayment { payment_id: PaymentId },
    /// `GET /v1/payments?merchant_order_no=…`
    ListPayments { merchant_order_no: Text },
    /// `GET /v1/refunds/{refund_id}`
    GetRefund { refund_id: RefundId },
    /// `GET /v1/refunds?merchant_refund_no=…`
    ListRefundsByNo { merchant_refund_no: Text },
    /// `GET /v1/refunds?status=processing`
    ListRefundsProcessing,
    /// Any other method and path (404, or 405 on a known path).
    Other { method: Method, path: Text },
}

impl Endpoint {
    pub fn method(&self) -> Method {
        match self {
            Endpoint::CreatePayment { .. }
            | Endpoint::ConfirmPayment { .. }
            | Endpoint::CancelPayment { .. }
            | Endpoint::CreateCheckoutSession { .. }
            | Endpoint::CreateRefund { .. } => Method::Post,
            Endpoint::GetPayment { .. }
            | Endpoint::ListPayments { .. }
            | Endpoint::GetRefund { .. }
            | Endpoint::ListRefundsByNo { .. }
            | Endpoint::ListRefundsProcessing => Method::Get,
            Endpoint::Other { method, .. } => *method,
        }
    }

    /// The request path with its query string, as the contract writes it. The checker
    /// computes it for every request (idempotency scopes), hence no `String` on the way.
    pub fn path(&self) -> Text {
        match self {
            Endpoint::CreatePayment { .. } => "/v1/payments".into(),
            Endpoint::ConfirmPayment { payment_id, .. } => {
                Text::format(format_args!("/v1/payments/{payment_id}/confirm"))
            }
            Endpoint::CancelPayment { payment_id } => {
                Text::format(format_args!("/v1/payments/{payment_id}/cancel"))
            }
            Endpoint::CreateCheckoutSession { .. } => "/v1/checkout/sessions".into(),
            Endpoint::CreateRefund { .. } => "/v1/refunds".into(),
            Endpoint::GetPayment { payment_id } => {
                Text::format(format_args!("/v1/payments/{payment_id}"))
            }
            Endpoint::ListPayments { merchant_order_no } => Text::format(format_args!(
                "/v1/payments?merchant_order_no={merchant_order_no}"
            )),
            Endpoint::GetRefund { refund_id } => {
                Text::format(format_args!("/v1/refunds/{refund_id}"))
            }
            Endpoint::ListRefundsByNo { merchant_refund_no } => Text::format(format_args!(
                "/v1/refunds?merchant_refund_no={merchant_refund_no}"
            )),
            Endpoint::ListRefundsProcessing => "/v1/refunds?status=processing".into(),
            Endpoint::Other { path, .. } => path.clone(),
        }
    }

    /// Whether the contract requires an Idempotency-Key on this endpoint (KEY-01…KEY-06).
    pub fn requires_key(&self) -> bool {
        matches!(
            self,
            Endpoint::CreatePayment { .. }
                | Endpoint::ConfirmPayment { .. }
                | Endpoint::CancelPayment { .. }
                | Endpoint::CreateCheckoutSession { .. }
                | Endpoint::CreateRefund { .. }
        )
    }

    /// The card carried by the request, if any (create and confirm).
    pub fn card(&self) -> Option<Card> {
        match self {
            Endpoint::CreatePayment {
                body: Json::Parsed(b),
            } => b.card,
            Endpoint::ConfirmPayment {
                body: Json::Parsed(b),
                ..
            } => b.card,
            _ => None,
        }
    }

    fn body_json(&self) -> Option<String> {
        fn render<T: Serialize>(body: &Json<T>) -> Option<String> {
            match body {
                Json::Parsed(b) => serde_json::to_string(b).ok().filter(|s| s != "{}"),
                Json::Malformed(raw) => Some(raw.to_string()),
            }
        }
        match self {
            Endpoint::CreatePayment { body } => render(body),
            Endpoint::ConfirmPayment { body, .. } => render(body),
            Endpoint::CreateCheckoutSession { body } => render(body),
            Endpoint::CreateRefund { body } => render(body),
            _ => None,
        }
    }
}

/// One HTTP request from a merchant server.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ApiRequest {
    /// `Authorization: Bearer …`: names the merchant and environment (401 if unknown).
    pub api_key: ApiKeyId,
    /// The `Idempotency-Key` header, if sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<Text>,
    #[serde(flatten)]
    pub endpoint: Endpoint,
}

/// `POST /v1/payments  Idempotency-Key: K  {"amount":10000,…}`; card data shows only as its label.
impl std::fmt::Display for ApiRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let method = self.endpoint.method();
        write!(f, "{method:<4} {}", self.endpoint.path())?;
        if let Some(key) = &self.idempotency_key {
            write!(f, "  Idempotency-Key: {key}")?;
        }
        if let Some(body) = self.endpoint.body_json() {
            write!(f, "  {body}")?;
        }
        Ok(())
    }
}

/// `status` of a Payment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PaymentStatus {
    /// Created by a checkout session or without a card; no attempt yet (assumption A-STATUS-RPM).
    RequiresPaymentMethod,
    Processing,
    RequiresAction,
    Succeeded,
    Failed,
    Canceled,
    Expired,
}

impl PaymentStatus {
    /// `succeeded`, `failed`, `canceled`, `expired`: where the query schedule stops (SCHED-01).
    /// `failed` is terminal for the attempt, not for the Payment (ATTEMPT-02 allows a card retry).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            PaymentStatus::Succeeded
                | PaymentStatus::Failed
                | PaymentStatus::Canceled
                | PaymentStatus::Expired
        )
    }

    /// `processing` or `requires_action`: an attempt is unfinished (UNIQ-02).
    pub fn is_in_progress(self) -> bool {
        matches!(
            self,
            PaymentStatus::Processing | PaymentStatus::RequiresAction
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::RequiresPaymentMethod => "requires_payment_method",
            PaymentStatus::Processing => "processing",
            PaymentStatus::RequiresAction => "requires_action",
            PaymentStatus::Succeeded => "succeeded",
            PaymentStatus::Failed => "failed",
            PaymentStatus::Canceled => "canceled",
            PaymentStatus::Expired => "expired",
        }
    }
}

/// `resolution_status` of a Payment or Refund (RES-01…RES-03).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionStatus {
    Known,
    NeedsQuery,
    ManualReview,
}

impl ResolutionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ResolutionStatus::Known => "known",
            ResolutionStatus::NeedsQuery => "needs_query",
            ResolutionStatus::ManualReview => "manual_review",
        }
    }
}

/// `failure` of a failed Payment: the code and the attempt that failed (RES-06).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Failure {
    pub code: FailureCode,
    pub attempt_id: AttemptId,
}

/// Why an attempt definitively failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCode {
    CardDeclined,
    AuthenticationFailed,
    /// The upstream never received the charge and voided its reference on our query.
    NotReceivedByUpstream,
}

/// The Payment object as returned by the API and carried by webhooks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PaymentView {
    pub id: PaymentId,
    pub merchant_order_no: Text,
    pub amount: u64,
    pub currency: Text,
    pub status: PaymentStatus,
    pub resolution_status: ResolutionStatus,
    pub attempt_count: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Present while `requires_action`: the payer must authenticate (RES-05).
    pub next_action: bool,
    pub expires_at: Millis,
    pub fee_rate_bps: u32,
    pub amount_refunded: u64,
    pub version: u32,
}

/// `status` of a Refund.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundStatus {
    Processing,
    Succeeded,
    Failed,
}

impl RefundStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RefundStatus::Processing => "processing",
            RefundStatus::Succeeded => "succeeded",
            RefundStatus::Failed => "failed",
        }
    }
}

/// The Refund object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RefundView {
    pub id: RefundId,
    pub payment_id: PaymentId,
    pub merchant_refund_no: Text,
    pub amount: u64,
    pub status: RefundStatus,
    pub resolution_status: ResolutionStatus,
    pub version: u32,
}

/// The checkout session object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SessionView {
    pub id: SessionId,
    pub payment_id: PaymentId,
    pub expires_at: Millis,
}

/// `error.code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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

    /// `error.retryable`: whether retrying the same request with the same key may succeed.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::OperationInProgress
                | ErrorCode::PaymentInProgress
                | ErrorCode::RateLimited
                | ErrorCode::InternalError
                | ErrorCode::TemporarilyUnavailable
        )
    }
}

/// `error.field`: which header or body field a 400/422 is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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

/// A response body.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(untagged)]
pub enum ResponseBody {
    Payment(PaymentView),
    Refund(RefundView),
    Session(SessionView),
    /// `{"data":[…]}` of a list query.
    Payments {
        data: Vec<PaymentView>,
    },
    Refunds {
        data: Vec<RefundView>,
    },
    Error {
        error: ApiError,
    },
}

/// One HTTP response from the platform.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ApiResponse {
    pub status: u16,
    /// `Retry-After` in seconds (429 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u32>,
    pub body: ResponseBody,
}

impl ApiResponse {
    pub fn ok(status: u16, body: ResponseBody) -> ApiResponse {
        ApiResponse {
            status,
            retry_after_s: None,
            body,
        }
    }

    pub fn error(error: ApiError) -> ApiResponse {
        ApiResponse {
            status: error.code.http_status(),
            retry_after_s: None,
            body: ResponseBody::Error { error },
        }
    }

    /// The error code, for non-2xx responses.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match &self.body {
            ResponseBody::Error { error } => Some(error.code),
            _ => None,
        }
    }

    /// The Payment carried by this response, if any.
    pub fn payment(&self) -> Option<&PaymentView> {
        match &self.body {
            ResponseBody::Payment(p) => Some(p),
            ResponseBody::Payments { data } => data.first(),
            _ => None,
        }
    }

    /// The Refund carried by this response, if any.
    pub fn refund(&self) -> Option<&RefundView> {
        match &self.body {
            ResponseBody::Refund(r) => Some(r),
            ResponseBody::Refunds { data } => data.first(),
            _ => None,
        }
    }

    /// 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// `200 {"id":"pay_demo_001","status":"succeeded",…}` / `409 {"error":{"code":"idempotency_conflict",…}}`.
impl std::fmt::Display for ApiResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.status)?;
        if let Some(s) = self.retry_after_s {
            write!(f, "  Retry-After: {s}")?;
        }
        match &self.body {
            ResponseBody::Payment(p) => write_payment(f, p),
            ResponseBody::Refund(r) => write!(
                f,
                " {{\"id\":\"{}\",\"status\":\"{}\",\"resolution_status\":\"{}\",\"version\":{},…}}",
                r.id,
                r.status.as_str(),
                r.resolution_status.as_str(),
                r.version
            ),
            ResponseBody::Session(s) => write!(
                f,
                " {{\"id\":\"{}\",\"payment_id\":\"{}\",…}}",
                s.id, s.payment_id
            ),
            ResponseBody::Payments { data } => {
                f.write_str(" {\"data\":[")?;
                for (i, p) in data.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(
                        f,
                        "{{\"id\":\"{}\",\"status\":\"{}\",…}}",
                        p.id,
                        p.status.as_str()
                    )?;
                }
                f.write_str("]}")
            }
            ResponseBody::Refunds { data } => {
                f.write_str(" {\"data\":[")?;
                for (i, r) in data.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(
                        f,
                        "{{\"id\":\"{}\",\"status\":\"{}\",…}}",
                        r.id,
                        r.status.as_str()
                    )?;
                }
                f.write_str("]}")
            }
            ResponseBody::Error { error } => {
                write!(f, " {{\"error\":{{\"code\":\"{}\"", error.code.as_str())?;
                if let Some(field) = error.field {
                    let name = serde_json::to_string(&field).unwrap_or_default();
                    write!(f, ",\"field\":{name}")?;
                }
                if let Some(related) = error.related_resource_id {
                    write!(f, ",\"related_resource_id\":\"{related}\"")?;
                }
                write!(f, ",\"retryable\":{}}}}}", error.retryable)
            }
        }
    }
}

fn write_payment(f: &mut std::fmt::Formatter<'_>, p: &PaymentView) -> std::fmt::Result {
    write!(
        f,
        " {{\"id\":\"{}\",\"status\":\"{}\",\"resolution_status\":\"{}\",\"attempt_count\":{},\"version\":{}",
        p.id,
        p.status.as_str(),
        p.resolution_status.as_str(),
        p.attempt_count,
        p.version
    )?;
    if let Some(failure) = &p.failure {
        let code = serde_json::to_string(&failure.code).unwrap_or_default();
        write!(
            f,
            ",\"failure\":{{\"code\":{code},\"attempt_id\":\"{}\"}}",
            failure.attempt_id
        )?;
    }
    f.write_str(",…}")
}
