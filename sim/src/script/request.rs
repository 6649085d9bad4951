//! Request lines: `POST /v1/payments  Idempotency-Key: K  {"amount":10000,…}` to an
//! [`ApiRequest`] and back.
//!
//! A request line is a method, a path, headers (`Idempotency-Key: K`,
//! `Authorization: Bearer ak_3`) and an optional body: a JSON object, or `raw …` for
//! bytes sent as they are (a malformed body). Paths the contract names become their
//! endpoint; any other method or path is sent as it is (the platform answers 404 or 405).

use super::cursor::{Cursor, Parsed, fail};
use payhub_model::{
    ApiKeyId, ApiRequest, Card, ConfirmBody, CreatePaymentBody, Endpoint, Json, Method, PaymentId,
    RefundBody, RefundId, SessionBody, Text,
};
use serde_json::{Map, Value};

/// Parses a request after `NAME:`; `api_key` is the server's key.
pub(crate) fn parse(cur: &mut Cursor, api_key: ApiKeyId) -> Parsed<ApiRequest> {
    let method = cur.read("a method (GET, POST or DELETE)", Method::from_name, |m| {
        format!("unknown method '{m}' (methods: GET, POST, DELETE)")
    })?;
    let (path, pcol) = cur.expect_word("a path (/v1/payments)")?;
    if !path.starts_with('/') {
        fail!(pcol, "a path starts with '/', not '{path}'");
    }
    let other = Endpoint::Other {
        method,
        path: path.as_str().into(),
    };
    let mut request = ApiRequest {
        api_key,
        idempotency_key: None,
        endpoint: other,
    };
    let mut body = None;
    while let Some(next) = cur.peek() {
        let col = cur.col();
        if next == '{' {
            body = Some(json_object(cur)?);
            break;
        }
        let (word, _) = cur.word().expect("not at end");
        if word == "raw" {
            let (text, rcol) = cur.rest();
            if text.is_empty() {
                fail!(rcol, "'raw' needs the body's bytes after it");
            }
            body = Some((Body::Raw(text), col));
            break;
        }
        let Some(name) = word.strip_suffix(':') else {
            fail!(
                col,
                "expected a header (Idempotency-Key: K), a JSON body or 'raw …', found '{word}'"
            );
        };
        header(cur, &mut request, name, col)?;
    }
    request.endpoint = endpoint(method, &path, body, pcol)?;
    Ok(request)
}

/// The rest of the line as a JSON object body, and its column.
fn json_object(cur: &mut Cursor) -> Parsed<(Body, u32)> {
    let (text, col) = cur.rest();
    let value = serde_json::from_str(&text);
    let value = value.map_err(|e| {
        (
            col + e.column().saturating_sub(1) as u32,
            format!("bad JSON body: {e}"),
        )
    })?;
    let Value::Object(map) = value else {
        fail!(col, "a body must be a JSON object");
    };
    Ok((Body::Json(map, text), col))
}

/// `Idempotency-Key: K` or `Authorization: Bearer ak_N | none`, after its `NAME:`.
fn header(cur: &mut Cursor, request: &mut ApiRequest, name: &str, col: u32) -> Parsed<()> {
    match name.to_ascii_lowercase().as_str() {
        "idempotency-key" => {
            let vcol = cur.col();
            let Some((value, _)) = cur.value()? else {
                fail!(
                    vcol,
                    "Idempotency-Key: needs a value (\"\" for an empty key)"
                );
            };
            request.idempotency_key = Some(value.into());
        }
        "authorization" => {
            let (scheme, scol) = cur.expect_word("Bearer ak_N or none")?;
            request.api_key = match scheme.as_str() {
                "none" => ApiKeyId(0),
                "Bearer" => cur.read("an API key (ak_1)", parse_api_key, |k| {
                    format!("'{k}' is not an API key (ak_1 … ak_5)")
                })?,
                _ => fail!(scol, "Authorization: Bearer ak_N or none, not '{scheme}'"),
            };
        }
        _ => fail!(
            col,
            "unknown header '{name}' (headers: Idempotency-Key, Authorization)"
        ),
    }
    Ok(())
}

/// `ak_3` → `ApiKeyId(3)`.
pub(crate) fn parse_api_key(s: &str) -> Option<ApiKeyId> {
    s.strip_prefix("ak_")?.parse().ok().map(ApiKeyId)
}

/// `pay_demo_001` → 1 for the prefix `pay_demo_`: digits only.
pub(super) fn numbered(s: &str, prefix: &str) -> Option<u32> {
    let digits = s.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `pay_demo_001` → `PaymentId(1)`.
pub(crate) fn parse_payment_id(s: &str) -> Option<PaymentId> {
    numbered(s, "pay_demo_").map(PaymentId)
}

/// `ref_demo_001` → `RefundId(1)`.
pub(crate) fn parse_refund_id(s: &str) -> Option<RefundId> {
    numbered(s, "ref_demo_").map(RefundId)
}

enum Body {
    Json(Map<String, Value>, String),
    Raw(String),
}

fn endpoint(method: Method, path: &str, body: Option<(Body, u32)>, pcol: u32) -> Parsed<Endpoint> {
    let (route, query) = match path.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (path, None),
    };
    let segments: Vec<&str> = route.trim_start_matches('/').split('/').collect();
    // A cancel names a Payment, a GET an object or a list; neither takes a body.
    let bodyless = match (method, segments.as_slice(), query) {
        (Method::Post, ["v1", "payments", id, "cancel"], None) => {
            parse_payment_id(id).map(|payment_id| Endpoint::CancelPayment { payment_id })
        }
        (Method::Get, ..) => get_endpoint(&segments, query),
        _ => None,
    };
    Ok(match (method, segments.as_slice(), query) {
        (Method::Post, ["v1", "payments"], None) => Endpoint::CreatePayment {
            body: json_body(body, create_payment_body)?,
        },
        (Method::Post, ["v1", "payments", id, "confirm"], None)
            if parse_payment_id(id).is_some() =>
        {
            Endpoint::ConfirmPayment {
                payment_id: parse_payment_id(id).expect("checked"),
                body: json_body(body, confirm_body)?,
            }
        }
        (Method::Post, ["v1", "checkout", "sessions"], None) => Endpoint::CreateCheckoutSession {
            body: json_body(body, session_body)?,
        },
        (Method::Post, ["v1", "refunds"], None) => Endpoint::CreateRefund {
            body: json_body(body, refund_body)?,
        },
        _ => match (bodyless, body) {
            (Some(_), Some((_, col))) => fail!(col, "{method} {path} takes no body"),
            (Some(endpoint), None) => endpoint,
            (None, body) => unrouted(method, path, &segments, query, body, pcol)?,
        },
    })
}

/// The endpoint a `GET` of `segments?query` names, if the contract has one.
fn get_endpoint(segments: &[&str], query: Option<&str>) -> Option<Endpoint> {
    let value = |name: &str| query?.strip_prefix(name)?.strip_prefix('=');
    Some(match (segments, query) {
        (["v1", "payments", id], None) => Endpoint::GetPayment {
            payment_id: parse_payment_id(id)?,
        },
        (["v1", "payments"], Some(_)) => Endpoint::ListPayments {
            merchant_order_no: value("merchant_order_no")?.into(),
        },
        (["v1", "refunds", id], None) => Endpoint::GetRefund {
            refund_id: parse_refund_id(id)?,
        },
        (["v1", "refunds"], Some("status=processing")) => Endpoint::ListRefundsProcessing,
        (["v1", "refunds"], Some(_)) => Endpoint::ListRefundsByNo {
            merchant_refund_no: value("merchant_refund_no")?.into(),
        },
        _ => return None,
    })
}

/// The platform's routes, as a did-you-mean names them.
const ROUTES: &str = "POST /v1/payments, POST /v1/payments/{id}/confirm, \
    POST /v1/payments/{id}/cancel, POST /v1/checkout/sessions, POST /v1/refunds, \
    GET /v1/payments/{id}, GET /v1/payments?merchant_order_no, GET /v1/refunds/{id}, \
    GET /v1/refunds?merchant_refund_no, GET /v1/refunds?status";

/// A method and path the platform does not route: a near miss of a route is a typo
/// (`/v1/paymnets`), not a request for a 404; any other is sent as it is, without a body.
fn unrouted(
    method: Method,
    path: &str,
    segments: &[&str],
    query: Option<&str>,
    body: Option<(Body, u32)>,
    pcol: u32,
) -> Parsed<Endpoint> {
    let id = |s: &str| parse_payment_id(s).is_some() || parse_refund_id(s).is_some();
    let shape: Vec<&str> = segments
        .iter()
        .map(|s| if id(s) { "{id}" } else { s })
        .collect();
    let query = query.map(|q| format!("?{}", q.split('=').next().unwrap_or(q)));
    let asked = format!("{method} /{}{}", shape.join("/"), query.unwrap_or_default());
    let routes: Vec<&str> = ROUTES.split(", ").collect();
    if let Some(route) = super::suggest::closest_route(&asked, &routes) {
        fail!(
            pcol,
            "unknown endpoint {method} {path} (did you mean {route}?)"
        );
    }
    match body {
        Some((_, col)) => fail!(
            col,
            "{method} {path} is not an endpoint the platform routes (it answers 404): it takes no body (endpoints: {ROUTES})"
        ),
        None => Ok(Endpoint::Other {
            method,
            path: path.into(),
        }),
    }
}

/// A JSON body for an endpoint: `raw …` stays malformed; a JSON object is read field by
/// field (unknown fields and wrong types are script errors).
fn json_body<T: Default>(
    body: Option<(Body, u32)>,
    read: fn(&FieldReader) -> Parsed<T>,
) -> Parsed<Json<T>> {
    match body {
        None => Ok(Json::Parsed(T::default())),
        Some((Body::Raw(raw), _)) => Ok(Json::Malformed(raw.into())),
        Some((Body::Json(map, text), col)) => {
            Ok(Json::Parsed(read(&FieldReader { map, text, col })?))
        }
    }
}

struct FieldReader {
    map: Map<String, Value>,
    text: String,
    col: u32,
}

impl FieldReader {
    /// The column of `"name"` in the body, or of the body.
    fn col_of(&self, name: &str) -> u32 {
        let byte = self.text.find(&format!("\"{name}\""));
        self.col + byte.map_or(0, |b| self.text[..b].chars().count() as u32)
    }

    /// Fails at a field `allowed` (space-separated) does not name.
    fn only(&self, allowed: &str, what: &str) -> Parsed<()> {
        let unknown = |n: &&String| !allowed.split(' ').any(|a| a == *n);
        if let Some(name) = self.map.keys().find(unknown) {
            let fields = allowed.replace(' ', ", ");
            fail!(
                self.col_of(name),
                "unknown field '{name}' in a {what} body (fields: {fields})"
            );
        }
        Ok(())
    }

    fn string(&self, name: &str) -> Parsed<Option<Text>> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.into())),
            Some(_) => fail!(self.col_of(name), "'{name}' must be a string"),
        }
    }

    fn integer(&self, name: &str) -> Parsed<Option<i64>> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
            Some(_) => fail!(self.col_of(name), "'{name}' must be an integer"),
        }
    }

    fn card(&self) -> Parsed<Option<Card>> {
        let Some(s) = self.string("card")? else {
            return Ok(None);
        };
        match one_letter(&s) {
            Some(c) => Ok(Some(Card(c))),
            None => fail!(
                self.col_of("card"),
                "'card' is a one-letter label (\"A\"), not \"{s}\""
            ),
        }
    }
}

/// The only character of `s`, if it has one.
pub(super) fn one_letter(s: &str) -> Option<char> {
    let mut chars = s.chars();
    chars.next().filter(|_| chars.next().is_none())
}

fn create_payment_body(r: &FieldReader) -> Parsed<CreatePaymentBody> {
    r.only("merchant_order_no amount currency card", "create-payment")?;
    Ok(CreatePaymentBody {
        merchant_order_no: r.string("merchant_order_no")?,
        amount: r.integer("amount")?,
        currency: r.string("currency")?,
        card: r.card()?,
    })
}

fn confirm_body(r: &FieldReader) -> Parsed<ConfirmBody> {
    r.only("card", "confirm")?;
    Ok(ConfirmBody { card: r.card()? })
}

fn session_body(r: &FieldReader) -> Parsed<SessionBody> {
    r.only("merchant_order_no amount currency", "checkout-session")?;
    Ok(SessionBody {
        merchant_order_no: r.string("merchant_order_no")?,
        amount: r.integer("amount")?,
        currency: r.string("currency")?,
    })
}

fn refund_body(r: &FieldReader) -> Parsed<RefundBody> {
    r.only("payment_id merchant_refund_no amount", "refund")?;
    let payment_id = r.string("payment_id")?.map(|s| {
        let not = || format!("'payment_id' is a payment id (pay_demo_001), not \"{s}\"");
        parse_payment_id(&s).ok_or_else(|| (r.col_of("payment_id"), not()))
    });
    Ok(RefundBody {
        payment_id: payment_id.transpose()?,
        merchant_refund_no: r.string("merchant_refund_no")?,
        amount: r.integer("amount")?,
    })
}

/// The request as a script line after `NAME: `; `api_key` is the server's key (an
/// `Authorization` header is written only when the request carries another one).
pub(crate) fn render(request: &ApiRequest, api_key: ApiKeyId) -> String {
    let mut s = format!("{} {}", request.endpoint.method(), request.endpoint.path());
    if request.api_key != api_key {
        s += &format!("  Authorization: Bearer {}", request.api_key);
    }
    if let Some(key) = &request.idempotency_key {
        s += &format!("  Idempotency-Key: {}", render_value(key));
    }
    let body = match &request.endpoint {
        Endpoint::CreatePayment { body } => render_body(body),
        Endpoint::ConfirmPayment { body, .. } => render_body(body),
        Endpoint::CreateCheckoutSession { body } => render_body(body),
        Endpoint::CreateRefund { body } => render_body(body),
        _ => None,
    };
    if let Some(text) = body.filter(|j| j != "{}") {
        s += &format!("  {text}");
    }
    s
}

fn render_body<T: serde::Serialize>(body: &Json<T>) -> Option<String> {
    match body {
        Json::Parsed(b) => serde_json::to_string(b).ok(),
        Json::Malformed(raw) => Some(format!("raw {raw}")),
    }
}

/// A value as the cursor reads it back: bare when that is unambiguous, else a JSON
/// string (`""`), or a repetition (`"x"*256`).
pub(crate) fn render_value(value: &str) -> String {
    let mut chars = value.chars();
    if let Some(first) = chars.next() {
        let n = value.chars().count();
        if n > 16 && value.chars().all(|c| c == first) {
            let one = serde_json::to_string(&first.to_string()).unwrap_or_default();
            return format!("{one}*{n}");
        }
    }
    let bare = !value.is_empty()
        && !value.starts_with('"')
        && !value.starts_with('{')
        && !value.chars().any(char::is_whitespace);
    if bare {
        value.to_owned()
    } else {
        serde_json::to_string(value).unwrap_or_default()
    }
}
