//! The HTTP surface of the contract: requests, responses, objects and errors.
//!
//! Requests are what a merchant server sends (possibly malformed: every body field is
//! optional so that 400s can be produced); responses are what the platform answers.
//! `Display` renders both in the contract's own notation:
//! `POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001",…}` and
//! `409 {"error":{"code":"idempotency_conflict",…}}`.

mod endpoint;
mod error;
mod objects;
pub mod req;
mod request;
mod response;
pub mod route;

pub use endpoint::{Endpoint, Method};
pub use error::{ApiError, ErrorCode, Field};
pub use objects::{
    Failure, FailureCode, PaymentStatus, PaymentView, RefundStatus, RefundView, ResolutionStatus,
    SessionView,
};
pub use request::{ApiRequest, ConfirmBody, CreatePaymentBody, Json, RefundBody, SessionBody};
pub use response::{ApiResponse, ResponseBody};
