//! The session as HAR 1.2 (`GET /__sandbox/har`): one entry per HTTP exchange the
//! session's events show, request and response as the wire carried them, for any HAR
//! viewer. Built from the event stream alone (`Sent`, `Delivered`, `Lost`); times are the
//! session's clock (`startedDateTime` counts from 1970-01-01T00:00:00Z = the session's
//! time 0), an exchange whose answer never reached the client has status 0 and
//! `_error`. Requests the edge answered itself (a card number, a bad key) are not in the
//! events, so not here either. A session longer than its record holds (`record.rs`) is
//! not exported: `GET /__sandbox/har` answers 410, as the events export does.

use payhub_model::event::{Event, What};
use payhub_model::{ApiRequest, ApiResponse, Endpoint, Json, Millis, RequestId};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The body of a request as the wire carried it (malformed bodies as recorded: redacted).
pub fn request_body(request: &ApiRequest) -> Option<String> {
    fn text<T: serde::Serialize>(body: &Json<T>) -> String {
        match body {
            Json::Parsed(b) => serde_json::to_string(b).unwrap_or_default(),
            Json::Malformed(raw) => raw.to_string(),
        }
    }
    match &request.endpoint {
        Endpoint::CreatePayment { body } => Some(text(body)),
        Endpoint::ConfirmPayment { body, .. } => Some(text(body)),
        Endpoint::CreateCheckoutSession { body } => Some(text(body)),
        Endpoint::CreateRefund { body } => Some(text(body)),
        _ => None,
    }
}

/// `1970-01-01T00:00:05.250Z` for 5.25 s of session time.
/// `at` of the world's clock as a date, the world's 0 at Unix time `origin_ms`.
fn iso(origin_ms: i64, at: Millis) -> String {
    crate::utc::iso_ms(origin_ms.saturating_add(i64::try_from(at.0).unwrap_or(i64::MAX)))
}

/// A HAR request: `headers` and `query` as name/value objects, `body` as its
/// `postData` (JSON).
pub fn request_entry(
    method: &str,
    url: String,
    headers: Vec<Value>,
    query: Vec<Value>,
    body: Option<&str>,
) -> Value {
    let mut out = json!({
        "method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": headers, "queryString": query, "headersSize": -1,
        "bodySize": body.map_or(0, str::len),
    });
    if let Some(body) = body {
        out["postData"] = json!({"mimeType": "application/json", "text": body});
    }
    out
}

/// A HAR response of a JSON `body`, as text.
pub fn json_response(status: u16, headers: Vec<Value>, body: &str) -> Value {
    let content = json!({"size": body.len(), "mimeType": "application/json", "text": body});
    json!({
        "status": status, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": headers, "content": content, "redirectURL": "", "headersSize": -1,
        "bodySize": body.len(),
    })
}

/// A HAR header (or query pair): `{"name", "value"}`.
pub fn pair(name: &str, value: &str) -> Value {
    json!({"name": name, "value": value})
}

/// A HAR entry started at `started` (a date), all its `time` spent waiting.
pub fn entry(started: String, time: u64, request: Value, response: Value) -> Value {
    json!({
        "startedDateTime": started, "time": time, "request": request, "response": response,
        "cache": {}, "timings": {"send": 0, "wait": time, "receive": 0},
    })
}

/// The response of an exchange no answer ended: status 0, `http_version` as the tool
/// writes it.
pub fn no_response(http_version: &str) -> Value {
    json!({
        "status": 0, "statusText": "", "httpVersion": http_version, "cookies": [],
        "headers": [], "content": {"size": 0, "mimeType": "x-unknown"},
        "redirectURL": "", "headersSize": -1, "bodySize": -1,
    })
}

fn request_json(request: &ApiRequest) -> Value {
    let path = request.endpoint.path();
    let bearer = format!("Bearer {}", request.api_key);
    let key = request.idempotency_key.iter();
    let headers = std::iter::once(pair("Authorization", &bearer))
        .chain(key.map(|k| pair("Idempotency-Key", k.as_str())))
        .collect();
    let query = path.as_str().split_once('?').map(|(_, q)| q.split('&'));
    let pair_of = |q: &str| {
        let (name, value) = q.split_once('=').unwrap_or((q, ""));
        pair(name, value)
    };
    let query = query.into_iter().flatten().map(pair_of).collect();
    let (method, url) = (request.endpoint.method(), format!("http://sandbox{path}"));
    let body = request_body(request);
    request_entry(method.as_str(), url, headers, query, body.as_deref())
}

fn response_json(response: Option<&ApiResponse>, origin_ms: i64) -> Value {
    let Some(r) = response else {
        let mut out = no_response("HTTP/1.1");
        out["_error"] = json!("no answer reached the client (connection reset, or it gave up)");
        return out;
    };
    let text = crate::http_map::edge_json(&r.body, origin_ms);
    let mut headers = vec![pair("Content-Type", "application/json")];
    headers.extend(r.retry_after_s.map(|s| pair("Retry-After", &s.to_string())));
    json_response(r.status, headers, &text)
}

/// The session's exchanges as a HAR 1.2 log, its times on the session's clock:
/// `origin_ms` is the Unix time at which the world's clock reads 0
/// (`Sandbox::clock_origin_ms`), for `startedDateTime` and the bodies' `expires_at` alike.
pub fn to_har(events: &[Event], origin_ms: i64) -> String {
    struct Exchange<'a> {
        sent: Millis,
        request: &'a ApiRequest,
        answered: Option<(Millis, &'a ApiResponse)>,
    }
    let mut exchanges: BTreeMap<RequestId, Exchange> = BTreeMap::new();
    for e in events {
        match &e.what {
            What::Sent { id, request, .. } => {
                exchanges.insert(
                    *id,
                    Exchange {
                        sent: e.at,
                        request,
                        answered: None,
                    },
                );
            }
            // On the wire an answer nobody reads any more is an answer all the same.
            What::Delivered { id, response, .. } | What::DeliveredUnread { id, response, .. } => {
                if let Some(x) = exchanges.get_mut(id) {
                    x.answered = Some((e.at, response));
                }
            }
            _ => {}
        }
    }
    let entries: Vec<Value> = exchanges
        .values()
        .map(|x| {
            let wait = x.answered.map_or(0, |(at, _)| at.since(x.sent).0);
            entry(
                iso(origin_ms, x.sent),
                wait,
                request_json(x.request),
                response_json(x.answered.map(|(_, r)| r), origin_ms),
            )
        })
        .collect();
    document("payhub-verify serve", entries)
}

/// A HAR 1.2 log of `entries`, written by `creator`.
pub fn document(creator: &str, entries: Vec<Value>) -> String {
    let har = json!({
        "log": {
            "version": "1.2",
            "creator": {"name": creator, "version": env!("CARGO_PKG_VERSION")},
            "entries": entries,
        }
    });
    serde_json::to_string_pretty(&har).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_times_render_as_iso_dates() {
        assert_eq!(iso(0, Millis::ZERO), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(0, Millis(5_250)), "1970-01-01T00:00:05.250Z");
        assert_eq!(
            iso(0, Millis::days(8).after(Millis::hours(25))),
            "1970-01-10T01:00:00.000Z"
        );
        assert_eq!(iso(0, Millis::days(365 + 59)), "1971-03-01T00:00:00.000Z");
    }
}
