//! A recorded request read as the contract's, whatever platform it was sent to: the
//! method and path name the operation (an id in the path is opaque, interned per kind:
//! `/v1/payments/pay_557eff458b794164bc1a/confirm` is a confirm as
//! `/v1/payments/pay_demo_001/confirm` is), and the body is read for the fields the
//! contract names: SAFE-01's safety parameters (`merchant_order_no`, `amount`,
//! `currency`; `payment_id`, `merchant_refund_no`, `amount`). Other fields (a platform's
//! `payment_method`, `description`, `metadata`) are accepted and never kept; a `card` is
//! kept only if it is a test label (card data is never kept: CARD-02,
//! A-CARD-NOT-STORED). A body that is not JSON, or names a field with the wrong type, is
//! `Json::Malformed`, described, never kept.

use crate::serve::cards;
use crate::serve::http_map::{param, percent_decode};
use payhub_model::observed::{IdKind, Interner};
use payhub_model::{
    ApiKeyId, ApiRequest, Card, ConfirmBody, CreatePaymentBody, Endpoint, Json, Method, PaymentId,
    RefundBody, RefundId, SessionBody, Text,
};
use serde_json::{Map, Value};

/// The contract's request, or why the entry is not one.
pub fn read(
    method: &str,
    target: &str,
    idempotency_key: Option<&[u8]>,
    body: &[u8],
    ids: &mut Interner,
) -> Result<ApiRequest, String> {
    let (route, query) = match target.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (target, None),
    };
    let method = match method {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "DELETE" => Method::Delete,
        other => return Err(format!("the method {other} is none of the contract's")),
    };
    let idempotency_key = match idempotency_key {
        None => None,
        Some(bytes) => Some(Text::from(
            std::str::from_utf8(bytes).map_err(|_| "an Idempotency-Key that is not UTF-8")?,
        )),
    };
    Ok(ApiRequest {
        // Resolved by the reader's key table.
        api_key: ApiKeyId(0),
        idempotency_key,
        endpoint: endpoint(method, target, route, query, body, ids),
    })
}

fn endpoint(
    method: Method,
    target: &str,
    route: &str,
    query: Option<&str>,
    body: &[u8],
    ids: &mut Interner,
) -> Endpoint {
    let segments: Vec<&str> = route.trim_start_matches('/').split('/').collect();
    let other = || Endpoint::Other {
        method,
        path: target.into(),
    };
    match (method, segments.as_slice(), query) {
        (Method::Post, ["v1", "payments"], _) => Endpoint::CreatePayment {
            body: fields(body, ids, |m, ids| order(m, ids)),
        },
        (Method::Post, ["v1", "payments", p, "confirm"], _) => match id(ids, IdKind::Payment, p) {
            Some(n) => Endpoint::ConfirmPayment {
                payment_id: PaymentId(n),
                body: fields(body, ids, |m, _| {
                    Some(ConfirmBody {
                        card: test_card(m)?,
                    })
                }),
            },
            None => other(),
        },
        (Method::Post, ["v1", "payments", p, "cancel"], _) => match id(ids, IdKind::Payment, p) {
            Some(n) => Endpoint::CancelPayment {
                payment_id: PaymentId(n),
            },
            None => other(),
        },
        (Method::Post, ["v1", "checkout", "sessions"], _) => Endpoint::CreateCheckoutSession {
            body: fields(body, ids, |m, ids| {
                let o = order(m, ids)?;
                Some(SessionBody {
                    merchant_order_no: o.merchant_order_no,
                    amount: o.amount,
                    currency: o.currency,
                })
            }),
        },
        (Method::Post, ["v1", "refunds"], _) => Endpoint::CreateRefund {
            body: fields(body, ids, |m, ids| {
                Some(RefundBody {
                    payment_id: match m.get("payment_id") {
                        None | Some(Value::Null) => None,
                        Some(Value::String(p)) => Some(PaymentId(ids.intern(IdKind::Payment, p))),
                        Some(_) => return None,
                    },
                    merchant_refund_no: text(m, "merchant_refund_no")?,
                    amount: integer(m, "amount")?,
                })
            }),
        },
        (Method::Get, ["v1", "payments", p], None) => match id(ids, IdKind::Payment, p) {
            Some(n) => Endpoint::GetPayment {
                payment_id: PaymentId(n),
            },
            None => other(),
        },
        (Method::Get, ["v1", "refunds", r], None) => match id(ids, IdKind::Refund, r) {
            Some(n) => Endpoint::GetRefund {
                refund_id: RefundId(n),
            },
            None => other(),
        },
        (Method::Get, ["v1", "payments"], Some(q)) => match param(q, "merchant_order_no") {
            Some(no) => Endpoint::ListPayments {
                merchant_order_no: no.into(),
            },
            None => other(),
        },
        (Method::Get, ["v1", "refunds"], Some(q)) => {
            if let Some(no) = param(q, "merchant_refund_no") {
                Endpoint::ListRefundsByNo {
                    merchant_refund_no: no.into(),
                }
            } else if param(q, "status").as_deref() == Some("processing") {
                Endpoint::ListRefundsProcessing
            } else {
                other()
            }
        }
        _ => other(),
    }
}

/// An id in a path, interned as `kind`.
fn id(ids: &mut Interner, kind: IdKind, segment: &str) -> Option<u32> {
    percent_decode(segment)
        .filter(|s| !s.is_empty())
        .map(|s| ids.intern(kind, &s))
}

/// The body's fields as `read` takes them; an empty body is the endpoint's default.
fn fields<T: Default>(
    body: &[u8],
    ids: &mut Interner,
    read: impl FnOnce(&Map<String, Value>, &mut Interner) -> Option<T>,
) -> Json<T> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Json::Parsed(T::default());
    }
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let Some(map) = parsed.as_ref().and_then(Value::as_object) else {
        return malformed(body, "not a JSON object");
    };
    match read(map, ids) {
        Some(t) => Json::Parsed(t),
        None => malformed(body, "a field the contract names has another type"),
    }
}

fn malformed<T>(body: &[u8], why: &str) -> Json<T> {
    Json::Malformed(Text::format(format_args!(
        "(a body of {} bytes, {why}; not recorded)",
        body.len()
    )))
}

fn order(m: &Map<String, Value>, _: &mut Interner) -> Option<CreatePaymentBody> {
    Some(CreatePaymentBody {
        merchant_order_no: text(m, "merchant_order_no")?,
        amount: integer(m, "amount")?,
        currency: text(m, "currency")?,
        card: test_card(m)?,
    })
}

/// `Some(None)` when absent or `null`, `None` when of another type.
fn text(m: &Map<String, Value>, name: &str) -> Option<Option<Text>> {
    match m.get(name) {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(Text::from(s.as_str()))),
        Some(_) => None,
    }
}

fn integer(m: &Map<String, Value>, name: &str) -> Option<Option<i64>> {
    match m.get(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => v.as_i64().map(Some),
    }
}

/// A `card` that is a test label; anything else (a card number) is not kept.
fn test_card(m: &Map<String, Value>) -> Option<Option<Card>> {
    Some(
        m.get("card")
            .and_then(Value::as_str)
            .and_then(cards::test_card)
            .map(|t| Card(t.label)),
    )
}
