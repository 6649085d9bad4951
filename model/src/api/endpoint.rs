//! [`Endpoint`]: every endpoint of the contract, with its path, method and body.

use super::request::{ConfirmBody, CreatePaymentBody, Json, RefundBody, SessionBody};
use crate::ids::{Card, PaymentId, RefundId};
use crate::text::Text;
use serde::{Deserialize, Serialize};

crate::named! {
    fn as_str, Display;
    /// HTTP method.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    pub enum Method {
        #[serde(rename = "GET")]
        Get = "GET",
        #[serde(rename = "POST")]
        Post = "POST",
        #[serde(rename = "DELETE")]
        Delete = "DELETE",
    }
}

/// Every endpoint of the contract, plus a catch-all for wrong methods and paths.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "endpoint", rename_all = "snake_case", deny_unknown_fields)]
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

    pub(super) fn body_json(&self) -> Option<String> {
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
