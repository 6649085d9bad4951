//! Request lines: `POST /v1/payments  Idempotency-Key: K  {"amount":10000,…}` to an
//! [`ApiRequest`] and back.
//!
//! A request line is a method, a path, headers (`Idempotency-Key: K`,
//! `Authorization: Bearer ak_3`) and an optional body: a JSON object, or `raw …` for
//! bytes sent as they are (a malformed body). Paths the contract names become their
//! endpoint; any other method or path is sent as it is (the platform answers 404 or 405).

use super::cursor::{Cursor, LineError};
use payhub_model::{
    ApiKeyId, ApiRequest, Card, ConfirmBody, CreatePaymentBody, Endpoint, Json, Method, PaymentId,
    RefundBody, RefundId, SessionBody, Text,
};
use serde_json::{Map, Value};

/// Parses a request after `NAME:`; `api_key` is the server's key.
pub(crate) fn parse(cur: &mut Cursor, api_key: ApiKeyId) -> Result<ApiRequest, LineError> {
    let method = method(cur)?;
    let (path, pcol) = cur.expect_word("a path (/v1/payments)")?;
    if !path.starts_with('/') {
        return Err((pcol, format!("a path starts with '/', not '{path}'")));
    }
    let mut request = ApiRequest {
        api_key,
        idempotency_key: None,
        endpoint: Endpoint::Other {
            method,
            path: path.as_str().into(),
        },
    };
    let mut body: Option<(Body, u32)> = None;
    while !cur.at_end() {
        let col = cur.col();
        if cur.peek() == Some('{') {
            body = Some(json_object(cur)?);
            break;
        }
        let (word, _) = cur.word().expect("not at end");
        if word == "raw" {
            let (text, rcol) = cur.rest();
            if text.is_empty() {
                return Err((rcol, "'raw' needs the body's bytes after it".to_owned()));
            }
            body = Some((Body::Raw(text), col));
            break;
        }
        let Some(name) = word.strip_suffix(':') else {
            return Err((
                col,
                format!(
                    "expected a header (Idempotency-Key: K), a JSON body or 'raw …', found '{word}'"
                ),
            ));
        };
        header(cur, &mut request, name, col)?;
    }
    request.endpoint = endpoint(method, &path, body, pcol)?;
    Ok(request)
}

fn method(cur: &mut Cursor) -> Result<Method, LineError> {
    let (method, mcol) = cur.expect_word("a method (GET, POST or DELETE)")?;
    Method::from_name(&method).ok_or((
        mcol,
        format!("unknown method '{method}' (methods: GET, POST, DELETE)"),
    ))
}

/// The rest of the line as a JSON object body, and its column.
fn json_object(cur: &mut Cursor) -> Result<(Body, u32), LineError> {
    let (text, col) = cur.rest();
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        (
            col + e.column().saturating_sub(1) as u32,
            format!("bad JSON body: {e}"),
        )
    })?;
    let Value::Object(map) = value else {
        return Err((col, "a body must be a JSON object".to_owned()));
    };
    Ok((Body::Json(map, text), col))
}

/// `Idempotency-Key: K` or `Authorization: Bearer ak_N | none`, after its `NAME:`.
fn header(
    cur: &mut Cursor,
    request: &mut ApiRequest,
    name: &str,
    col: u32,
) -> Result<(), LineError> {
    match name.to_ascii_lowercase().as_str() {
        "idempotency-key" => {
            let (value, _) = cur.value()?.ok_or_else(|| {
                (
                    cur.col(),
                    "Idempotency-Key: needs a value (\"\" for an empty key)".to_owned(),
                )
            })?;
            request.idempotency_key = Some(value.into());
        }
        "authorization" => {
            let (scheme, scol) = cur.expect_word("Bearer ak_N or none")?;
            request.api_key = match scheme.as_str() {
                "none" => ApiKeyId(0),
                "Bearer" => {
                    let (key, kcol) = cur.expect_word("an API key (ak_1)")?;
                    parse_api_key(&key)
                        .ok_or_else(|| (kcol, format!("'{key}' is not an API key (ak_1 … ak_5)")))?
                }
                other => {
                    return Err((
                        scol,
                        format!("Authorization: Bearer ak_N or none, not '{other}'"),
                    ));
                }
            };
        }
        _ => {
            return Err((
                col,
                format!("unknown header '{name}' (headers: Idempotency-Key, Authorization)"),
            ));
        }
    }
    Ok(())
}

/// `ak_3` → `ApiKeyId(3)`.
pub(crate) fn parse_api_key(s: &str) -> Option<ApiKeyId> {
    s.strip_prefix("ak_")?.parse().ok().map(ApiKeyId)
}

fn numbered(s: &str, prefix: &str) -> Option<u32> {
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

fn endpoint(
    method: Method,
    path: &str,
    body: Option<(Body, u32)>,
    pcol: u32,
) -> Result<Endpoint, LineError> {
    let (route, query) = match path.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (path, None),
    };
    let segments: Vec<&str> = route.trim_start_matches('/').split('/').collect();
    let no_body = |endpoint: Endpoint, body: &Option<(Body, u32)>| match body {
        Some((_, col)) => Err((*col, format!("{method} {path} takes no body"))),
        None => Ok(endpoint),
    };
    // A GET names an object or a list, and takes no body.
    let get = (method == Method::Get)
        .then(|| get_endpoint(&segments, query))
        .flatten();
    let endpoint = match (method, segments.as_slice(), query) {
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
        (Method::Post, ["v1", "payments", id, "cancel"], None)
            if parse_payment_id(id).is_some() =>
        {
            no_body(
                Endpoint::CancelPayment {
                    payment_id: parse_payment_id(id).expect("checked"),
                },
                &body,
            )?
        }
        (Method::Post, ["v1", "checkout", "sessions"], None) => Endpoint::CreateCheckoutSession {
            body: json_body(body, session_body)?,
        },
        (Method::Post, ["v1", "refunds"], None) => Endpoint::CreateRefund {
            body: json_body(body, refund_body)?,
        },
        _ => match get {
            Some(endpoint) => no_body(endpoint, &body)?,
            None => unrouted(method, path, &segments, query, body, pcol)?,
        },
    };
    Ok(endpoint)
}

/// The endpoint a `GET` of `segments?query` names, if the contract has one.
fn get_endpoint(segments: &[&str], query: Option<&str>) -> Option<Endpoint> {
    Some(match (segments, query) {
        (["v1", "payments", id], None) => Endpoint::GetPayment {
            payment_id: parse_payment_id(id)?,
        },
        (["v1", "payments"], Some(q)) if q.starts_with("merchant_order_no=") => {
            Endpoint::ListPayments {
                merchant_order_no: q["merchant_order_no=".len()..].into(),
            }
        }
        (["v1", "refunds", id], None) => Endpoint::GetRefund {
            refund_id: parse_refund_id(id)?,
        },
        (["v1", "refunds"], Some(q)) if q.starts_with("merchant_refund_no=") => {
            Endpoint::ListRefundsByNo {
                merchant_refund_no: q["merchant_refund_no=".len()..].into(),
            }
        }
        (["v1", "refunds"], Some("status=processing")) => Endpoint::ListRefundsProcessing,
        _ => return None,
    })
}

/// The platform's routes, as a did-you-mean names them.
const ROUTES: &[&str] = &[
    "POST /v1/payments",
    "POST /v1/payments/{id}/confirm",
    "POST /v1/payments/{id}/cancel",
    "POST /v1/checkout/sessions",
    "POST /v1/refunds",
    "GET /v1/payments/{id}",
    "GET /v1/payments?merchant_order_no",
    "GET /v1/refunds/{id}",
    "GET /v1/refunds?merchant_refund_no",
    "GET /v1/refunds?status",
];

/// A method and path the platform does not route: a near miss of a route is a typo
/// (`/v1/paymnets`), not a request for a 404; any other is sent as it is, without a body.
fn unrouted(
    method: Method,
    path: &str,
    segments: &[&str],
    query: Option<&str>,
    body: Option<(Body, u32)>,
    pcol: u32,
) -> Result<Endpoint, LineError> {
    // A near miss of a route is a typo (`/v1/paymnets`), not a request for a 404.
    let shape: Vec<String> = segments
        .iter()
        .map(|s| {
            if parse_payment_id(s).is_some() || parse_refund_id(s).is_some() {
                "{id}".to_owned()
            } else {
                (*s).to_owned()
            }
        })
        .collect();
    let asked = format!(
        "{method} /{}{}",
        shape.join("/"),
        query
            .map(|q| format!("?{}", q.split('=').next().unwrap_or(q)))
            .unwrap_or_default()
    );
    if let Some(route) = super::suggest::closest_route(&asked, ROUTES) {
        return Err((
            pcol,
            format!("unknown endpoint {method} {path} (did you mean {route}?)"),
        ));
    }
    match body {
        Some((_, col)) => Err((
            col,
            format!(
                "{method} {path} is not an endpoint the platform routes (it answers 404): it takes no body (endpoints: {})",
                ROUTES.join(", ")
            ),
        )),
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
    read: fn(&FieldReader) -> Result<T, LineError>,
) -> Result<Json<T>, LineError> {
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
        let needle = format!("\"{name}\"");
        match self.text.find(&needle) {
            Some(byte) => self.col + self.text[..byte].chars().count() as u32,
            None => self.col,
        }
    }

    fn only(&self, allowed: &[&str], what: &str) -> Result<(), LineError> {
        for name in self.map.keys() {
            if !allowed.contains(&name.as_str()) {
                return Err((
                    self.col_of(name),
                    format!(
                        "unknown field '{name}' in a {what} body (fields: {})",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn string(&self, name: &str) -> Result<Option<Text>, LineError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.into())),
            Some(_) => Err((self.col_of(name), format!("'{name}' must be a string"))),
        }
    }

    fn integer(&self, name: &str) -> Result<Option<i64>, LineError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
            Some(_) => Err((self.col_of(name), format!("'{name}' must be an integer"))),
        }
    }

    fn card(&self) -> Result<Option<Card>, LineError> {
        match self.string("card")? {
            None => Ok(None),
            Some(s) => {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(Some(Card(c))),
                    _ => Err((
                        self.col_of("card"),
                        format!("'card' is a one-letter label (\"A\"), not \"{s}\""),
                    )),
                }
            }
        }
    }
}

fn create_payment_body(r: &FieldReader) -> Result<CreatePaymentBody, LineError> {
    r.only(
        &["merchant_order_no", "amount", "currency", "card"],
        "create-payment",
    )?;
    Ok(CreatePaymentBody {
        merchant_order_no: r.string("merchant_order_no")?,
        amount: r.integer("amount")?,
        currency: r.string("currency")?,
        card: r.card()?,
    })
}

fn confirm_body(r: &FieldReader) -> Result<ConfirmBody, LineError> {
    r.only(&["card"], "confirm")?;
    Ok(ConfirmBody { card: r.card()? })
}

fn session_body(r: &FieldReader) -> Result<SessionBody, LineError> {
    r.only(
        &["merchant_order_no", "amount", "currency"],
        "checkout-session",
    )?;
    Ok(SessionBody {
        merchant_order_no: r.string("merchant_order_no")?,
        amount: r.integer("amount")?,
        currency: r.string("currency")?,
    })
}

fn refund_body(r: &FieldReader) -> Result<RefundBody, LineError> {
    r.only(&["payment_id", "merchant_refund_no", "amount"], "refund")?;
    let payment_id = match r.string("payment_id")? {
        None => None,
        Some(s) => Some(parse_payment_id(&s).ok_or_else(|| {
            (
                r.col_of("payment_id"),
                format!("'payment_id' is a payment id (pay_demo_001), not \"{s}\""),
            )
        })?),
    };
    Ok(RefundBody {
        payment_id,
        merchant_refund_no: r.string("merchant_refund_no")?,
        amount: r.integer("amount")?,
    })
}

/// The request as a script line after `NAME: `; `api_key` is the server's key (an
/// `Authorization` header is written only when the request carries another one).
pub(crate) fn render(request: &ApiRequest, api_key: ApiKeyId) -> String {
    let mut s = format!("{} {}", request.endpoint.method(), request.endpoint.path());
    if request.api_key != api_key {
        s.push_str(&format!("  Authorization: Bearer {}", request.api_key));
    }
    if let Some(key) = &request.idempotency_key {
        s.push_str("  Idempotency-Key: ");
        s.push_str(&render_value(key));
    }
    let body = |json: Option<String>| json.filter(|j| j != "{}");
    let text = match &request.endpoint {
        Endpoint::CreatePayment { body: b } => render_body(b).map(body),
        Endpoint::ConfirmPayment { body: b, .. } => render_body(b).map(body),
        Endpoint::CreateCheckoutSession { body: b } => render_body(b).map(body),
        Endpoint::CreateRefund { body: b } => render_body(b).map(body),
        _ => None,
    };
    if let Some(Some(text)) = text {
        s.push_str("  ");
        s.push_str(&text);
    }
    s
}

fn render_body<T: serde::Serialize>(body: &Json<T>) -> Option<Option<String>> {
    Some(match body {
        Json::Parsed(b) => serde_json::to_string(b).ok(),
        Json::Malformed(raw) => Some(format!("raw {raw}")),
    })
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
