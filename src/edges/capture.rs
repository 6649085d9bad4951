//! What the client saw, written as the world's tools write a capture, not as the
//! sandbox exports its own HAR: header names lowercase (Node's fetch and every HTTP/2
//! capture send and record them so), `startedDateTime` with a zone offset, the fields
//! viewers add (`pages`, `cache`, `timings`, `_resourceType`, `serverIPAddress`),
//! every other response body base64 (`content.encoding`, as Chrome exports bodies it did
//! not decode), and an answer that never came as Chrome writes it: status 0 and
//! `_error` `net::ERR_CONNECTION_RESET`. The times are the session's clock (the client
//! moved it for every wait).

use super::client::Exchange;
use crate::serve::har::{json_response, no_response, pair, request_entry};
use serde_json::{Value, json};

/// The capture as HAR 1.2 text.
pub fn to_har(seen: &[Exchange]) -> String {
    let entries: Vec<Value> = seen.iter().enumerate().map(|(i, x)| entry(i, x)).collect();
    let har = json!({"log": {
        "version": "1.2",
        "creator": {"name": "payhub-verify reference client", "version": env!("CARGO_PKG_VERSION")},
        "pages": [{"id": "page_1", "title": "checkout", "startedDateTime": started(0), "pageTimings": {}}],
        "entries": entries,
    }});
    serde_json::to_string_pretty(&har).unwrap_or_default()
}

/// `startedDateTime` of session time `ms`, written at UTC+01:00 (an offset, as
/// Firefox writes local times).
fn started(ms: u64) -> String {
    let at = i64::try_from(ms).unwrap_or(i64::MAX);
    let utc = crate::utc::iso_ms(at.saturating_add(3_600_000));
    format!("{}+01:00", utc.trim_end_matches('Z'))
}

fn headers(pairs: &[(String, String)]) -> Vec<Value> {
    pairs
        .iter()
        .map(|(n, v)| pair(&n.to_ascii_lowercase(), v))
        .collect()
}

fn entry(i: usize, x: &Exchange) -> Value {
    let r = &x.request;
    let url = format!("http://127.0.0.1{}", r.target);
    let request = request_entry(
        &r.method,
        url,
        headers(&r.headers),
        Vec::new(),
        r.body.as_deref(),
    );
    let response = match &x.answer {
        Some(a) => {
            let mut out = json_response(a.status, headers(&a.headers), &a.body);
            if i % 2 == 1 {
                out["content"]["text"] = json!(base64(a.body.as_bytes()));
                out["content"]["encoding"] = json!("base64");
            }
            out
        }
        None => {
            let mut out = no_response("");
            out["_error"] = json!("net::ERR_CONNECTION_RESET");
            out
        }
    };
    json!({
        "pageref": "page_1",
        "startedDateTime": started(x.started_ms),
        "time": x.time_ms,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": x.time_ms, "receive": 0, "ssl": -1},
        "serverIPAddress": "127.0.0.1",
        "_resourceType": "fetch",
    })
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_pads_as_the_standard_says() {
        assert_eq!(super::base64(b"{\"a\":1}"), "eyJhIjoxfQ==");
        assert_eq!(super::base64(b"abc"), "YWJj");
        assert_eq!(super::base64(b"ab"), "YWI=");
    }

    #[test]
    fn times_carry_an_offset_and_read_back_as_the_session_time() {
        let s = super::started(5_250);
        assert_eq!(s, "1970-01-01T01:00:05.250+01:00");
        assert_eq!(crate::utc::parse_ms(&s), Some(5_250));
    }
}
