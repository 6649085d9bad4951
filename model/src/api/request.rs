//! [`ApiRequest`]: one HTTP request, and the JSON bodies it may carry.

use super::endpoint::Endpoint;
use crate::ids::{ApiKeyId, Card, PaymentId};
use crate::text::Text;
use serde::{Deserialize, Serialize};

/// Body of `POST /v1/payments`. `card` is present when the payer pays immediately.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
/// A-UNNAMED-FIELDS: a field the endpoint does not name (an `amount`) is refused, as in
/// every body here.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<Card>,
}

/// Body of `POST /v1/checkout/sessions`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merchant_order_no: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency: Option<Text>,
}

/// Body of `POST /v1/refunds`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefundBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment_id: Option<PaymentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merchant_refund_no: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
}

/// A JSON body as sent: well-formed, or bytes that do not parse.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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

/// One HTTP request from a merchant server.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
