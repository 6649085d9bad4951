//! Request builders that read like the contract's request lines.

use super::*;
use crate::ids::{ApiKeyId, Card, PaymentId, RefundId};
use crate::text::Text;

use crate::platform::api_keys::M1_TEST;

fn key(k: &str) -> Option<Text> {
    Some(k.into())
}

/// `POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":…,"amount":…,"currency":…}` with a card.
pub fn create(k: &str, order: &str, amount: i64, currency: &str, card: char) -> ApiRequest {
    create_as(M1_TEST, k, order, amount, currency, Some(card))
}

/// Create payment with any API key, optionally without a card.
pub fn create_as(
    api_key: ApiKeyId,
    k: &str,
    order: &str,
    amount: i64,
    currency: &str,
    card: Option<char>,
) -> ApiRequest {
    ApiRequest {
        api_key,
        idempotency_key: key(k),
        endpoint: Endpoint::CreatePayment {
            body: Json::Parsed(CreatePaymentBody {
                merchant_order_no: Some(order.into()),
                amount: Some(amount),
                currency: Some(currency.into()),
                card: card.map(Card),
            }),
        },
    }
}

/// `POST /v1/payments/{id}/confirm  Idempotency-Key: K` with a card.
pub fn confirm(k: &str, payment: PaymentId, card: char) -> ApiRequest {
    ApiRequest {
        api_key: M1_TEST,
        idempotency_key: key(k),
        endpoint: Endpoint::ConfirmPayment {
            payment_id: payment,
            body: Json::Parsed(ConfirmBody {
                card: Some(Card(card)),
            }),
        },
    }
}

/// `POST /v1/payments/{id}/cancel  Idempotency-Key: K`.
pub fn cancel(k: &str, payment: PaymentId) -> ApiRequest {
    ApiRequest {
        api_key: M1_TEST,
        idempotency_key: key(k),
        endpoint: Endpoint::CancelPayment {
            payment_id: payment,
        },
    }
}

/// `POST /v1/checkout/sessions  Idempotency-Key: K`.
pub fn session(k: &str, order: &str, amount: i64, currency: &str) -> ApiRequest {
    ApiRequest {
        api_key: M1_TEST,
        idempotency_key: key(k),
        endpoint: Endpoint::CreateCheckoutSession {
            body: Json::Parsed(SessionBody {
                merchant_order_no: Some(order.into()),
                amount: Some(amount),
                currency: Some(currency.into()),
            }),
        },
    }
}

/// `POST /v1/refunds  Idempotency-Key: K`.
pub fn refund(k: &str, payment: PaymentId, refund_no: &str, amount: i64) -> ApiRequest {
    ApiRequest {
        api_key: M1_TEST,
        idempotency_key: key(k),
        endpoint: Endpoint::CreateRefund {
            body: Json::Parsed(RefundBody {
                payment_id: Some(payment),
                merchant_refund_no: Some(refund_no.into()),
                amount: Some(amount),
            }),
        },
    }
}

/// `GET /v1/payments/{id}`.
pub fn get(payment: PaymentId) -> ApiRequest {
    query(Endpoint::GetPayment {
        payment_id: payment,
    })
}

/// `GET /v1/payments?merchant_order_no=…`.
pub fn by_order(order: &str) -> ApiRequest {
    query(Endpoint::ListPayments {
        merchant_order_no: order.into(),
    })
}

/// `GET /v1/refunds/{id}`.
pub fn get_refund(refund: RefundId) -> ApiRequest {
    query(Endpoint::GetRefund { refund_id: refund })
}

/// `GET /v1/refunds?merchant_refund_no=…`.
pub fn by_refund_no(refund_no: &str) -> ApiRequest {
    query(Endpoint::ListRefundsByNo {
        merchant_refund_no: refund_no.into(),
    })
}

/// A GET with merchant 1's test key and no Idempotency-Key.
pub fn query(endpoint: Endpoint) -> ApiRequest {
    ApiRequest {
        api_key: M1_TEST,
        idempotency_key: None,
        endpoint,
    }
}

/// The same request with another API key.
pub fn with_api_key(mut r: ApiRequest, api_key: ApiKeyId) -> ApiRequest {
    r.api_key = api_key;
    r
}

/// The same request with another Idempotency-Key header (None: no header).
pub fn with_key(mut r: ApiRequest, k: Option<&str>) -> ApiRequest {
    r.idempotency_key = k.map(Text::from);
    r
}
