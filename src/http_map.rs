//! HTTP ↔ model: a request's method, target, headers and body to an [`ApiRequest`], and an
//! [`ApiResponse`] back; shared by the sandbox, conform's oracle and check-log (the route
//! table is `payhub_model::api::route`). Pure. What the model cannot represent is answered
//! here in the contract's shape: a method other than GET, POST, DELETE (405 on a contract
//! path, else 404), an `Idempotency-Key` not UTF-8 or over [`KEY_BYTES_MAX`] (400), a
//! `card` that is not a test label (400, field `card`). A body that is not the endpoint's
//! JSON becomes `Json::Malformed`, described, never kept (it could hold card data).

use payhub_model::api::route::{self, Route, percent_decode};
use payhub_model::cards;
use payhub_model::observed::IdKind;
use payhub_model::{
    ApiError, ApiKeyId, ApiRequest, ApiResponse, ConfirmBody, CreatePaymentBody, Endpoint,
    ErrorCode, Field, Json, Method, PaymentId, RefundBody, RefundId, SessionBody, Text,
};
use serde::de::DeserializeOwned;

/// An `Idempotency-Key` longer than this many bytes is answered at the edge (the
/// platform's limit is 255 characters, at most 1020 bytes of UTF-8).
pub const KEY_BYTES_MAX: usize = 1024;

/// One HTTP request as the edge read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: String,
    /// The path and query as sent (`/v1/payments?merchant_order_no=ORDER-1`).
    pub target: String,
    pub authorization: Option<Vec<u8>>,
    pub idempotency_key: Option<Vec<u8>>,
    pub body: Vec<u8>,
}

/// What the edge does with the connection after a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// Writes the reply.
    Answer,
    /// Resets the connection without a byte of answer (a fault on the wire).
    Reset,
}

/// One HTTP reply: status, `Retry-After`, a JSON (or text) body, and what the wire does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpReply {
    pub status: u16,
    pub retry_after_s: Option<u32>,
    pub content_type: &'static str,
    pub body: String,
    pub wire: Wire,
}

impl HttpReply {
    /// A JSON reply.
    pub fn json(status: u16, body: String) -> HttpReply {
        HttpReply {
            status,
            retry_after_s: None,
            content_type: "application/json",
            body,
            wire: Wire::Answer,
        }
    }

    /// A reply of another type (JSON Lines, Markdown, a script).
    pub fn text(status: u16, content_type: &'static str, body: String) -> HttpReply {
        HttpReply {
            content_type,
            ..HttpReply::json(status, body)
        }
    }

    /// The connection is reset instead of answered.
    pub fn reset() -> HttpReply {
        HttpReply {
            wire: Wire::Reset,
            ..HttpReply::json(0, String::new())
        }
    }

    /// The platform's answer on the wire: its status, `Retry-After` and body.
    pub fn from_response(response: &ApiResponse) -> HttpReply {
        HttpReply {
            retry_after_s: response.retry_after_s,
            ..HttpReply::json(response.status, to_json(&response.body))
        }
    }

    /// The platform's answer as the sandbox writes it: times on the session's clock,
    /// RFC 3339 UTC ([`edge_times`]), `origin_ms` the Unix time at which the world's
    /// clock reads 0.
    pub fn from_response_at(response: &ApiResponse, origin_ms: i64) -> HttpReply {
        HttpReply {
            retry_after_s: response.retry_after_s,
            ..HttpReply::json(response.status, edge_json(&response.body, origin_ms))
        }
    }

    /// The sandbox's own refusal (not the platform's) in the error shape.
    pub fn refusal(status: u16, code: &str, message: impl std::fmt::Display) -> HttpReply {
        let message = message.to_string();
        let body = serde_json::json!({ "error": { "code": code, "message": message, "retryable": false } });
        HttpReply::json(status, body.to_string())
    }

    /// The contract's error for `code`, with its own status, in the contract's shape:
    /// `{"error":{"code",…,"retryable"}}`.
    pub fn code(code: ErrorCode, field: Option<Field>) -> HttpReply {
        let mut error = ApiError::new(code);
        error.field = field;
        let body = payhub_model::ResponseBody::Error { error };
        HttpReply::json(code.http_status(), to_json(&body))
    }
}

/// The fields of the sandbox's bodies that hold a time (the model's milliseconds).
pub const TIME_FIELDS: &[&str] = &["expires_at"];

/// Every time field ([`TIME_FIELDS`]) at any depth, a number of the world's milliseconds,
/// rewritten as RFC 3339 UTC (`2026-12-02T10:00:00.000Z`) at `origin_ms` (Unix time of
/// the world's 0) plus it. The model keeps milliseconds; only the edge writes dates.
pub fn edge_times(value: &mut serde_json::Value, origin_ms: i64) {
    times(value, &|v| {
        let ms = i64::try_from(v.as_u64()?).unwrap_or(i64::MAX);
        Some(crate::utc::iso_ms(origin_ms.saturating_add(ms)).into())
    });
}

/// [`edge_times`] undone: every time field written as a date, back to the world's
/// milliseconds from `origin_ms` (never below 0); a date that does not parse is left.
pub fn model_times(value: &mut serde_json::Value, origin_ms: i64) {
    times(value, &|v| {
        let at = v.as_str().and_then(crate::utc::parse_ms)?;
        Some(at.saturating_sub(origin_ms).max(0).into())
    });
}

/// Every time field at any depth that `to` rewrites, rewritten; the others left.
fn times(
    value: &mut serde_json::Value,
    to: &impl Fn(&serde_json::Value) -> Option<serde_json::Value>,
) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match to(v).filter(|_| TIME_FIELDS.contains(&k.as_str())) {
                    Some(rewritten) => *v = rewritten,
                    None => times(v, to),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| times(v, to)),
        _ => {}
    }
}

/// `value` as JSON with its times on the session's clock ([`edge_times`]).
pub fn edge_json<T: serde::Serialize>(value: &T, origin_ms: i64) -> String {
    match serde_json::to_value(value) {
        Ok(mut v) => {
            edge_times(&mut v, origin_ms);
            v.to_string()
        }
        Err(e) => format!("{{\"error\":\"{e}\"}}"),
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The model's request, or the edge's own answer for what the model cannot represent.
pub fn to_api_request(http: &HttpRequest) -> Result<ApiRequest, HttpReply> {
    let route = http
        .target
        .split_once('?')
        .map_or(http.target.as_str(), |(r, _)| r);
    // Outside the API's `/v1/` (`/`, an unknown `/__sandbox/…`): no such resource,
    // whoever asks (the key is the API's, not the server's).
    if route != "/v1" && !route.starts_with("/v1/") {
        return Err(HttpReply::code(ErrorCode::ResourceMissing, None));
    }
    let method = match method(&http.method) {
        Some(m) => m,
        None if route::is_contract_path(route) => {
            return Err(HttpReply::code(ErrorCode::MethodNotAllowed, None));
        }
        None => return Err(HttpReply::code(ErrorCode::ResourceMissing, None)),
    };
    let idempotency_key = match &http.idempotency_key {
        None => None,
        Some(bytes) => match std::str::from_utf8(bytes) {
            Ok(key) if bytes.len() <= KEY_BYTES_MAX => Some(Text::from(key)),
            _ => {
                return Err(HttpReply::code(
                    ErrorCode::InvalidRequest,
                    Some(Field::IdempotencyKey),
                ));
            }
        },
    };
    let endpoint = endpoint(&mut ModelReading, method, &http.target, &http.body)?;
    Ok(ApiRequest {
        api_key: api_key(http.authorization.as_deref()),
        idempotency_key,
        endpoint,
    })
}

/// The contract's method of that name: GET, POST or DELETE.
pub fn method(name: &str) -> Option<Method> {
    match name {
        "GET" => Some(Method::Get),
        "POST" => Some(Method::Post),
        "DELETE" => Some(Method::Delete),
        _ => None,
    }
}

/// `Bearer ak_N` → `ak_N` (the scheme in any case, RFC 7235 §2.1); anything else is no
/// key (`ak_0`, answered 401).
pub fn api_key(header: Option<&[u8]>) -> ApiKeyId {
    header
        .and_then(|h| std::str::from_utf8(h).ok())
        .and_then(|h| h.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .and_then(|(_, k)| k.trim().strip_prefix("ak_"))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
        .map_or(ApiKeyId(0), ApiKeyId)
}

/// What an edge reads its own way once [`endpoint`] knows the route: ids and bodies, as
/// the model writes them (the sandbox) or as any platform does (`check_log::request`).
pub trait Reading {
    /// The edge's own answer to a request it will not read.
    type Refused;
    /// The number of a Payment's or a Refund's id in a path; `None`: it names none.
    fn id(&mut self, kind: IdKind, segment: &str) -> Option<u32>;
    /// A `GET` of an id that names none: `other` (an endpoint of no route), or refused.
    fn no_such_id(&self, other: Endpoint) -> Result<Endpoint, Self::Refused>;
    fn create(&mut self, body: &[u8]) -> Result<Json<CreatePaymentBody>, Self::Refused>;
    fn confirm(&mut self, body: &[u8]) -> Result<Json<ConfirmBody>, Self::Refused>;
    fn session(&mut self, body: &[u8]) -> Result<Json<SessionBody>, Self::Refused>;
    fn refund(&mut self, body: &[u8]) -> Result<Json<RefundBody>, Self::Refused>;
}

/// The sandbox's reading: ids as the model renders them, a `GET` of one of another shape
/// 404 (it names no object, as an unknown one), bodies the model's JSON ([`json_body`]).
struct ModelReading;

impl Reading for ModelReading {
    type Refused = HttpReply;
    fn id(&mut self, kind: IdKind, segment: &str) -> Option<u32> {
        match kind {
            IdKind::Payment => id_of::<PaymentId>(segment).map(|p| p.0),
            IdKind::Refund => id_of::<RefundId>(segment).map(|r| r.0),
            IdKind::Session => None,
        }
    }
    fn no_such_id(&self, _: Endpoint) -> Result<Endpoint, HttpReply> {
        Err(HttpReply::code(ErrorCode::ResourceMissing, None))
    }
    fn create(&mut self, body: &[u8]) -> Result<Json<CreatePaymentBody>, HttpReply> {
        json_body(body)
    }
    fn confirm(&mut self, body: &[u8]) -> Result<Json<ConfirmBody>, HttpReply> {
        json_body(body)
    }
    fn session(&mut self, body: &[u8]) -> Result<Json<SessionBody>, HttpReply> {
        json_body(body)
    }
    fn refund(&mut self, body: &[u8]) -> Result<Json<RefundBody>, HttpReply> {
        json_body(body)
    }
}

/// The endpoint of `method` on `target` (path and query) with `body`, read by `reading`;
/// a path of no route (or naming no object) is `Endpoint::Other`.
pub fn endpoint<R: Reading>(
    reading: &mut R,
    method: Method,
    target: &str,
    body: &[u8],
) -> Result<Endpoint, R::Refused> {
    let (path, query) = match target.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (target, None),
    };
    let other = || Endpoint::Other {
        method,
        path: target.into(),
    };
    let Some(route) = route::route(method, path, query) else {
        return Ok(other());
    };
    let payment = |r: &mut R, id| r.id(IdKind::Payment, id).map(PaymentId);
    Ok(match route {
        Route::CreatePayment => Endpoint::CreatePayment {
            body: reading.create(body)?,
        },
        Route::ConfirmPayment(id) => match payment(reading, id) {
            Some(payment_id) => Endpoint::ConfirmPayment {
                payment_id,
                body: reading.confirm(body)?,
            },
            None => other(),
        },
        Route::CancelPayment(id) => match payment(reading, id) {
            Some(payment_id) => Endpoint::CancelPayment { payment_id },
            None => other(),
        },
        Route::CreateCheckoutSession => Endpoint::CreateCheckoutSession {
            body: reading.session(body)?,
        },
        Route::CreateRefund => Endpoint::CreateRefund {
            body: reading.refund(body)?,
        },
        Route::GetPayment(id) => match payment(reading, id) {
            Some(payment_id) => Endpoint::GetPayment { payment_id },
            None => return reading.no_such_id(other()),
        },
        Route::GetRefund(id) => match reading.id(IdKind::Refund, id) {
            Some(n) => Endpoint::GetRefund {
                refund_id: RefundId(n),
            },
            None => return reading.no_such_id(other()),
        },
        Route::ListPayments(no) => Endpoint::ListPayments {
            merchant_order_no: no.into(),
        },
        Route::ListRefundsByNo(no) => Endpoint::ListRefundsByNo {
            merchant_refund_no: no.into(),
        },
        Route::ListRefundsProcessing => Endpoint::ListRefundsProcessing,
    })
}

/// An id from its rendering (`pay_demo_001`), as the model reads it.
fn id_of<T: DeserializeOwned>(segment: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(percent_decode(segment)?)).ok()
}

/// A JSON body: empty is `{}`; a `card` that is not a test label is the edge's 400; a
/// body that is not the endpoint's JSON is `Malformed`, described, never kept.
fn json_body<T: DeserializeOwned + Default>(body: &[u8]) -> Result<Json<T>, HttpReply> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Json::Parsed(T::default()));
    }
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => return Ok(malformed(body, "not JSON")),
    };
    if let Some(card) = value.get("card") {
        let label = card.as_str().and_then(cards::test_card);
        if label.is_none() && !card.is_null() {
            return Err(HttpReply::code(
                ErrorCode::InvalidRequest,
                Some(Field::Card),
            ));
        }
    }
    Ok(match serde_json::from_value(value) {
        Ok(parsed) => Json::Parsed(parsed),
        Err(_) => malformed(body, "not this endpoint's fields"),
    })
}

/// A body that does not read as `why` says, described by its length only (it could hold
/// card data): the sandbox's and check-log's readers alike.
pub fn malformed<T>(body: &[u8], why: &str) -> Json<T> {
    Json::Malformed(Text::format(format_args!(
        "(a body of {} bytes, {why}; not recorded)",
        body.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::ResponseBody;

    fn req(method: &str, target: &str, body: &str) -> HttpRequest {
        HttpRequest {
            method: method.into(),
            target: target.into(),
            authorization: Some(b"Bearer ak_3".to_vec()),
            idempotency_key: Some(b"K-1".to_vec()),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_create_maps_to_the_models_request() {
        let body = r#"{"merchant_order_no":"ORDER-1","amount":10000,"currency":"USD","card":"A"}"#;
        let r = to_api_request(&req("POST", "/v1/payments", body)).unwrap();
        assert_eq!(r.api_key, ApiKeyId(3));
        assert_eq!(r.idempotency_key.as_ref().map(Text::as_str), Some("K-1"));
        let Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } = &r.endpoint
        else {
            panic!("{:?}", r.endpoint);
        };
        assert_eq!(b.amount, Some(10000));
        assert_eq!(b.card, Some(payhub_model::Card('A')));
    }

    #[test]
    fn ids_and_queries_are_read_from_their_rendering() {
        let r = to_api_request(&req("GET", "/v1/payments/pay_demo_012", "")).unwrap();
        assert_eq!(
            r.endpoint,
            Endpoint::GetPayment {
                payment_id: PaymentId(12)
            }
        );
        let r =
            to_api_request(&req("GET", "/v1/payments?merchant_order_no=ORDER%201", "")).unwrap();
        assert_eq!(
            r.endpoint,
            Endpoint::ListPayments {
                merchant_order_no: "ORDER 1".into()
            }
        );
        let r = to_api_request(&req("GET", "/v1/refunds?status=processing", "")).unwrap();
        assert_eq!(r.endpoint, Endpoint::ListRefundsProcessing);
        let r = to_api_request(&req("POST", "/v1/payments/pay_demo_1/cancel", "")).unwrap();
        assert!(matches!(r.endpoint, Endpoint::Other { .. }), "{r:?}");
    }

    #[test]
    fn bad_bodies_are_malformed_and_never_kept() {
        for body in ["{", "[1,2]", r#"{"amount":"ten"}"#, r#"{"colour":"red"}"#] {
            let r = to_api_request(&req("POST", "/v1/payments", body)).unwrap();
            let Endpoint::CreatePayment {
                body: Json::Malformed(text),
            } = &r.endpoint
            else {
                panic!("{body}: {:?}", r.endpoint);
            };
            assert!(text.as_str().contains("not recorded"), "{text}");
        }
        let r = to_api_request(&HttpRequest {
            body: vec![0xff, 0xfe, b'{'],
            ..req("POST", "/v1/refunds", "")
        })
        .unwrap();
        assert!(matches!(
            r.endpoint,
            Endpoint::CreateRefund {
                body: Json::Malformed(_)
            }
        ));
    }

    #[test]
    fn a_card_number_is_refused_at_the_edge_with_field_card() {
        for card in [r#""4242424242424242""#, r#""Z""#, "4242", "{}"] {
            let body = format!(r#"{{"amount":1,"card":{card}}}"#);
            let reply = to_api_request(&req("POST", "/v1/payments", &body)).unwrap_err();
            assert_eq!(reply.status, 400);
            assert_eq!(
                reply.body,
                r#"{"error":{"code":"invalid_request","field":"card","retryable":false}}"#
            );
            assert!(!reply.body.contains("4242"));
        }
    }

    #[test]
    fn methods_and_keys_the_model_cannot_hold_are_answered_here() {
        let put = to_api_request(&req("PUT", "/v1/payments", "")).unwrap_err();
        assert_eq!(put.status, 405);
        let nowhere = to_api_request(&req("PATCH", "/v2/x", "")).unwrap_err();
        assert_eq!(nowhere.status, 404);
        let bad_key = HttpRequest {
            idempotency_key: Some(vec![0xc3, 0x28]),
            ..req("POST", "/v1/payments", "")
        };
        let reply = to_api_request(&bad_key).unwrap_err();
        assert_eq!(reply.status, 400);
        assert!(reply.body.contains("Idempotency-Key"), "{}", reply.body);
    }

    #[test]
    fn api_keys_are_read_from_bearer_only() {
        assert_eq!(api_key(Some(b"Bearer ak_2")), ApiKeyId(2));
        for h in [
            &b"ak_2"[..],
            b"Bearer ak_",
            b"Bearer ak_x",
            b"Basic ak_1",
            b"\xff",
        ] {
            assert_eq!(api_key(Some(h)), ApiKeyId(0), "{h:?}");
        }
        assert_eq!(api_key(None), ApiKeyId(0));
    }

    #[test]
    fn responses_render_in_the_contracts_shape() {
        let mut error = ApiError::new(ErrorCode::RateLimited);
        error.field = None;
        let response = ApiResponse {
            status: 429,
            retry_after_s: Some(2),
            body: ResponseBody::Error { error },
        };
        let reply = HttpReply::from_response(&response);
        assert_eq!(reply.status, 429);
        assert_eq!(reply.retry_after_s, Some(2));
        assert_eq!(
            reply.body,
            r#"{"error":{"code":"rate_limited","retryable":true}}"#
        );
    }

    /// The sandbox writes `expires_at` as an RFC 3339 UTC date at any depth (a Payment,
    /// a list's Payments) and leaves every other number as it is.
    #[test]
    fn edge_times_write_expires_at_as_a_date_at_any_depth_and_nothing_else() {
        let mut v = serde_json::json!({
            "amount": 100, "expires_at": 86_400_000u64,
            "data": [{"amount": 5, "expires_at": 1_000u64}],
        });
        edge_times(&mut v, 0);
        assert_eq!(v["expires_at"], "1970-01-02T00:00:00.000Z");
        assert_eq!(v["data"][0]["expires_at"], "1970-01-01T00:00:01.000Z");
        assert_eq!(
            (v["amount"].as_u64(), v["data"][0]["amount"].as_u64()),
            (Some(100), Some(5))
        );
        let written = edge_json(&serde_json::json!({"expires_at": 0u64}), 1_000);
        assert_eq!(written, r#"{"expires_at":"1970-01-01T00:00:01.000Z"}"#);
    }

    /// A text reply keeps its content type; a JSON one is `application/json`.
    #[test]
    fn text_replies_keep_their_content_type() {
        let md = HttpReply::text(200, "text/markdown; charset=utf-8", "# x".into());
        assert_eq!(
            (md.status, md.content_type),
            (200, "text/markdown; charset=utf-8")
        );
        assert_eq!(
            HttpReply::json(200, "{}".into()).content_type,
            "application/json"
        );
        assert_eq!(HttpReply::reset().wire, Wire::Reset);
    }
}
