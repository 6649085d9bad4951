//! A recorded request read as the contract's, whatever platform it was sent to: the
//! method and path name the operation (an id in the path is opaque, interned per kind:
//! `/v1/payments/pay_557eff458b794164bc1a/confirm` is a confirm as
//! `/v1/payments/pay_demo_001/confirm` is), and the body is read for the fields the
//! contract names: SAFE-01's safety parameters (`merchant_order_no`, `amount`,
//! `currency`; `payment_id`, `merchant_refund_no`, `amount`). Other fields (a platform's
//! `description`, `metadata`) are accepted and kept only as a fingerprint
//! ([`Read::other_fields`]: SAFE-01's "etc." lets its platform compare them); a card is kept only as a
//! test card: a label of the model's table under `card`, or a value the platform's
//! profile lists under its `card_field` (card data is never kept: CARD-02,
//! A-CARD-NOT-STORED). A body that is not JSON, or names a field with the wrong type,
//! is `Json::Malformed`, described, never kept.

use super::profile::CardReading;
use crate::http_map::{self, Reading, malformed};
use payhub_model::api::route::percent_decode;
use payhub_model::observed::{IdKind, Interner};
use payhub_model::{
    ApiKeyId, ApiRequest, ConfirmBody, CreatePaymentBody, Endpoint, Json, PaymentId, RefundBody,
    SessionBody, Text,
};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::convert::Infallible;

/// A request read: the contract's, and the fingerprint of the body's fields the contract
/// does not name (the card's aside), if it has any.
#[derive(Debug)]
pub struct Read {
    pub request: ApiRequest,
    pub other_fields: Option<u64>,
}

/// The contract's request, or why the entry is not one.
pub fn read(
    method: &str,
    target: &str,
    idempotency_key: Option<&[u8]>,
    body: &[u8],
    ids: &mut Interner,
    cards: &CardReading,
) -> Result<Read, String> {
    let method = http_map::method(method)
        .ok_or_else(|| format!("the method {method} is none of the contract's"))?;
    let idempotency_key = match idempotency_key {
        None => None,
        Some(bytes) => Some(Text::from(
            std::str::from_utf8(bytes).map_err(|_| "an Idempotency-Key that is not UTF-8")?,
        )),
    };
    let mut reading = LogReading {
        ids,
        cards,
        other_fields: None,
    };
    let Ok(endpoint) = http_map::endpoint(&mut reading, method, target, body);
    let request = ApiRequest {
        // Resolved by the reader's key table.
        api_key: ApiKeyId(0),
        idempotency_key,
        endpoint,
    };
    Ok(Read {
        request,
        other_fields: reading.other_fields,
    })
}

/// The target of a request the platform `served` (answered 2xx), its path written
/// otherwise than the contract's (a trailing slash, `//`, `/./`: `/v1/payments/pay_1/`,
/// `/v1/payments//pay_1/confirm`), read at the contract's path: the contract names none
/// of these forms, so the platform's answer says how it read them. A `GET` of one object
/// drops its query string too (`/v1/payments/pay_1?expand=attempts`). Any other target
/// as written.
pub fn served_target<'a>(method: &str, target: &'a str, served: bool) -> Cow<'a, str> {
    let (path, query) = (target.split_once('?')).map_or((target, None), |(p, q)| (p, Some(q)));
    let get = method.eq_ignore_ascii_case("GET");
    let odd = path.ends_with('/') || path.contains("//") || path.contains("/./");
    if !served || !(odd || get && query.is_some()) {
        return Cow::Borrowed(target);
    }
    let segments = || (path.split('/')).filter(|s| !s.is_empty() && *s != ".");
    let one = get && {
        let mut s = segments();
        matches!(
            (s.next(), s.next(), s.next(), s.next()),
            (Some("v1"), Some("payments" | "refunds"), Some(_), None)
        )
    };
    // A path written as the contract writes it, with a query string it reads (a lookup).
    if !odd && !one {
        return Cow::Borrowed(target);
    }
    let query = query.filter(|_| !one).map(|q| format!("?{q}"));
    let path = segments().collect::<Vec<_>>().join("/");
    let read = format!("/{path}{}", query.unwrap_or_default());
    match read == target {
        true => Cow::Borrowed(target),
        false => Cow::Owned(read),
    }
}

/// check-log's reading: any non-empty id interned, a `GET` of none an endpoint of no
/// route, bodies read for the contract's fields alone.
struct LogReading<'a> {
    ids: &'a mut Interner,
    cards: &'a CardReading,
    other_fields: Option<u64>,
}

const ORDER: &[&str] = &["merchant_order_no", "amount", "currency"];
const REFUND: &[&str] = &["payment_id", "merchant_refund_no", "amount"];

impl LogReading<'_> {
    /// The body's fields as `read` takes them, with the fingerprint of those neither
    /// `named` nor the card (in the order of their names, each with its value).
    fn fields<T: Default>(
        &mut self,
        body: &[u8],
        named: &[&str],
        read: impl FnOnce(&Map<String, Value>, &mut Self) -> Option<T>,
    ) -> Json<T> {
        fields(body, |m| {
            let card = self.cards.field();
            let mut other: Vec<_> = (m.iter())
                .filter(|(k, _)| *k != card && !named.contains(&k.as_str()))
                .map(|(k, v)| (k.as_str(), v.to_string()))
                .collect();
            if !other.is_empty() {
                other.sort();
                let mut h = std::hash::DefaultHasher::new();
                std::hash::Hash::hash(&other, &mut h);
                self.other_fields = Some(std::hash::Hasher::finish(&h));
            }
            read(m, self)
        })
    }
}

impl Reading for LogReading<'_> {
    type Refused = Infallible;
    fn id(&mut self, kind: IdKind, segment: &str) -> Option<u32> {
        percent_decode(segment)
            .filter(|s| !s.is_empty())
            .map(|s| self.ids.intern(kind, &s))
    }
    fn no_such_id(&self, other: Endpoint) -> Result<Endpoint, Infallible> {
        Ok(other)
    }
    fn create(&mut self, body: &[u8]) -> Result<Json<CreatePaymentBody>, Infallible> {
        Ok(self.fields(body, ORDER, |m, r| order(m, r.cards)))
    }
    fn confirm(&mut self, body: &[u8]) -> Result<Json<ConfirmBody>, Infallible> {
        Ok(self.fields(body, &[], |m, r| {
            Some(ConfirmBody {
                card: r.cards.read(m),
            })
        }))
    }
    fn session(&mut self, body: &[u8]) -> Result<Json<SessionBody>, Infallible> {
        Ok(self.fields(body, ORDER, |m, r| {
            let o = order(m, r.cards)?;
            Some(SessionBody {
                merchant_order_no: o.merchant_order_no,
                amount: o.amount,
                currency: o.currency,
            })
        }))
    }
    fn refund(&mut self, body: &[u8]) -> Result<Json<RefundBody>, Infallible> {
        Ok(self.fields(body, REFUND, |m, r| {
            let ids = &mut *r.ids;
            Some(RefundBody {
                payment_id: match m.get("payment_id") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(p)) => Some(PaymentId(ids.intern(IdKind::Payment, p))),
                    Some(_) => return None,
                },
                merchant_refund_no: text(m, "merchant_refund_no")?,
                amount: integer(m, "amount")?,
            })
        }))
    }
}

/// The body's fields as `read` takes them; an empty body is the endpoint's default.
fn fields<T: Default>(body: &[u8], read: impl FnOnce(&Map<String, Value>) -> Option<T>) -> Json<T> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Json::Parsed(T::default());
    }
    let Ok(Object(map)) = serde_json::from_slice(body) else {
        return malformed(body, "not a JSON object");
    };
    match read(&map) {
        Some(t) => Json::Parsed(t),
        None => malformed(body, "a field the contract names has another type"),
    }
}

/// A JSON object's fields, without a name given twice with different values: RFC 8259
/// leaves what a receiver reads then "unpredictable" (the first, the last, or a
/// refusal), so such a field is not known, as if absent (never a change of parameters).
struct Object(Map<String, Value>);

impl<'de> serde::Deserialize<'de> for Object {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Object, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Object;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Object, A::Error> {
                let (mut map, mut twice) = (Map::new(), Vec::new());
                while let Some((k, v)) = a.next_entry::<String, Value>()? {
                    if map.get(&k).is_some_and(|first| *first != v) {
                        twice.push(k.clone());
                    }
                    map.insert(k, v);
                }
                for k in twice {
                    map.remove(&k);
                }
                Ok(Object(map))
            }
        }
        d.deserialize_map(Fields)
    }
}

fn order(m: &Map<String, Value>, cards: &CardReading) -> Option<CreatePaymentBody> {
    Some(CreatePaymentBody {
        merchant_order_no: text(m, "merchant_order_no")?,
        amount: integer(m, "amount")?,
        currency: text(m, "currency")?,
        card: cards.read(m),
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

/// An integer field; JSON does not tell `12000` from `12000.0`.
fn integer(m: &Map<String, Value>, name: &str) -> Option<Option<i64>> {
    match m.get(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => (v.as_i64())
            .or_else(|| v.as_f64().and_then(payhub_model::observed::whole))
            .map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::Card;

    /// A path with a foreign id names the same operation as one with the model's; the
    /// id is interned and named back as written.
    #[test]
    fn foreign_ids_map_to_the_same_operation() {
        let mut ids = Interner::default();
        let r = read(
            "POST",
            "/v1/payments/pay_557eff458b794164bc1a/confirm",
            Some(b"K-1"),
            br#"{"payment_method":"tok_approve","extra":{"a":1}}"#,
            &mut ids,
            &CardReading::default(),
        )
        .unwrap();
        let Endpoint::ConfirmPayment { payment_id, body } = &r.request.endpoint else {
            panic!("{:?}", r.request.endpoint);
        };
        assert_eq!(body, &Json::Parsed(ConfirmBody { card: None }));
        assert_eq!(
            ids.name(IdKind::Payment, payment_id.0).as_str(),
            "pay_557eff458b794164bc1a"
        );
        let get = read(
            "GET",
            "/v1/payments/pay_557eff458b794164bc1a",
            None,
            b"",
            &mut ids,
            &CardReading::default(),
        );
        assert_eq!(
            get.unwrap().request.endpoint,
            Endpoint::GetPayment {
                payment_id: *payment_id
            }
        );
        let refund = br#"{"payment_id":"pay_557eff458b794164bc1a","amount":5,"merchant_refund_no":"R","reason":"x"}"#;
        let r = read(
            "POST",
            "/v1/refunds",
            Some(b"K-2"),
            refund,
            &mut ids,
            &CardReading::default(),
        )
        .unwrap();
        let Endpoint::CreateRefund {
            body: Json::Parsed(b),
        } = &r.request.endpoint
        else {
            panic!("{:?}", r.request.endpoint);
        };
        assert_eq!(b.payment_id, Some(*payment_id));
        // `reason` is none of SAFE-01's fields: kept as a fingerprint only.
        assert!(r.other_fields.is_some());
    }

    #[test]
    fn a_served_path_written_otherwise_is_the_contracts() {
        let served = |m, t| served_target(m, t, true).into_owned();
        assert_eq!(served("GET", "/v1/payments/pay_1/"), "/v1/payments/pay_1");
        assert_eq!(
            served("get", "/v1/refunds/re_1?expand=x"),
            "/v1/refunds/re_1"
        );
        assert_eq!(served("GET", "/v1/payments/pay_1"), "/v1/payments/pay_1");
        let lookup = "/v1/payments?merchant_order_no=O";
        assert_eq!(served("GET", "/v1/payments/?merchant_order_no=O"), lookup);
        assert_eq!(
            served("POST", "/v1/payments//pay_1/./confirm/"),
            "/v1/payments/pay_1/confirm"
        );
        assert_eq!(served("POST", "/v1/payments/"), "/v1/payments");
        assert_eq!(
            served_target("GET", "/v1/payments/pay_1/", false),
            "/v1/payments/pay_1/"
        );
    }

    /// A name given twice with different values is not known; twice with one value, it is.
    #[test]
    fn a_field_given_twice_differently_is_unknown() {
        let create = |body: &str| {
            let r = read(
                "POST",
                "/v1/payments",
                Some(b"K"),
                body.as_bytes(),
                &mut Interner::default(),
                &CardReading::default(),
            )
            .unwrap();
            let Endpoint::CreatePayment {
                body: Json::Parsed(b),
            } = r.request.endpoint
            else {
                panic!("{body}");
            };
            (b.amount, r.other_fields)
        };
        assert_eq!(create(r#"{"amount":100,"amount":200}"#).0, None);
        assert_eq!(create(r#"{"amount":100,"amount":100}"#).0, Some(100));
        let (once, twice) = (create(r#"{"d":"a"}"#).1, create(r#"{"d":"b","d":"a"}"#).1);
        assert!(once.is_some() && once != twice);
    }

    /// Card data is never kept: a card number in `card` is dropped, a test label kept;
    /// another platform's `payment_method` is never read.
    #[test]
    fn card_numbers_are_never_kept() {
        let mut ids = Interner::default();
        for (body, card) in [
            (&br#"{"amount":1,"card":"4242424242424242"}"#[..], None),
            (br#"{"amount":1,"card":"A"}"#, Some(Card('A'))),
            (br#"{"amount":1,"payment_method":"4242424242424242"}"#, None),
        ] {
            let r = read(
                "POST",
                "/v1/payments",
                Some(b"K"),
                body,
                &mut ids,
                &CardReading::default(),
            )
            .unwrap();
            let Endpoint::CreatePayment {
                body: Json::Parsed(b),
            } = &r.request.endpoint
            else {
                panic!("{:?}", r.request.endpoint);
            };
            assert_eq!(b.card, card);
            assert!(!format!("{r:?}").contains("4242"), "{r:?}");
        }
        let r = read(
            "POST",
            "/v1/payments",
            Some(b"K"),
            br#"{"amount":"ten"}"#,
            &mut ids,
            &CardReading::default(),
        );
        assert!(matches!(
            r.unwrap().request.endpoint,
            Endpoint::CreatePayment {
                body: Json::Malformed(_)
            }
        ));
    }
}
