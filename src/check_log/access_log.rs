//! The access-log shape for gateways (docs/check-log.md): JSON Lines, one object per
//! exchange, in the order requests started.
//!
//! ```json
//! {"time":"2026-12-01T10:00:00.000Z","duration_ms":120,"method":"POST","path":"/v1/payments",
//!  "api_key":"ak_1","idempotency_key":"K-1","request_body":"{\"merchant_order_no\":\"O-1\",…}",
//!  "status":201,"retry_after":null,"response_body":"{\"id\":\"pay_demo_001\",…}","error":null}
//! ```
//!
//! `time`, `method` and `path` are required; a missing `status`, status 0 or an `error`
//! is an unknown outcome. Other fields a gateway writes are ignored.

use super::entry::{Entry, Label, Reply, bearer, target_of};
use crate::http_map::HttpRequest;
use serde::Deserialize;
use std::borrow::Cow;

/// One line as read: strings borrowed from the line where they hold no escape.
#[derive(Deserialize)]
pub struct AccessLine<'a> {
    #[serde(borrow)]
    time: Cow<'a, str>,
    #[serde(default)]
    duration_ms: Option<f64>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(borrow, default)]
    api_key: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    idempotency_key: Option<Cow<'a, str>>,
    #[serde(default)]
    request_body: Option<String>,
    #[serde(default)]
    status: Option<u16>,
    #[serde(borrow, default)]
    retry_after: Option<RetryAfterField<'a>>,
    #[serde(default)]
    response_body: Option<String>,
    #[serde(borrow, default)]
    error: Option<Cow<'a, str>>,
}

/// `retry_after` as a gateway writes it: a number of seconds, or the header's text
/// (`"0"`, an HTTP date), read as the reference code reads it (A-RETRY-AFTER-429).
#[derive(Deserialize)]
#[serde(untagged)]
enum RetryAfterField<'a> {
    Seconds(u32),
    Text(#[serde(borrow)] Cow<'a, str>),
}

impl RetryAfterField<'_> {
    fn seconds(&self) -> Option<u32> {
        match self {
            RetryAfterField::Seconds(s) => Some(*s),
            RetryAfterField::Text(t) => crate::retry_after::seconds(Some(t)),
        }
    }
}

/// Line `n` as an entry, or why it does not read.
pub fn entry(n: u64, text: &str) -> Result<Entry, String> {
    let l: AccessLine =
        serde_json::from_str(text).map_err(|e| format!("not the access-log shape: {e}"))?;
    let started_ms =
        crate::utc::parse_ms(&l.time).ok_or_else(|| format!("time '{}' is not a date", l.time))?;
    let outcome = match (l.status, &l.error) {
        (Some(status), None) if status > 0 => Reply::Answered {
            status,
            retry_after_s: l.retry_after.as_ref().and_then(RetryAfterField::seconds),
            body: l.response_body.map(String::into_bytes),
        },
        _ => Reply::NoAnswer,
    };
    let api_key = l
        .api_key
        .as_deref()
        .map(|k| bearer(k).unwrap_or_else(|| k.trim().to_owned()))
        .filter(|k| !k.is_empty());
    Ok(Entry {
        label: Label::Line(n),
        started_ms,
        duration_ms: l.duration_ms.filter(|d| *d > 0.0).map_or(0, |d| d as u64),
        http: HttpRequest {
            method: l.method.to_ascii_uppercase(),
            target: target_of(&l.path),
            authorization: None,
            idempotency_key: l.idempotency_key.map(|k| k.as_bytes().to_vec()),
            body: l.request_body.map(String::into_bytes).unwrap_or_default(),
        },
        api_key,
        outcome,
    })
}
