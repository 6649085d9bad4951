//! One recorded HTTP exchange, whatever file it came from, and how it becomes events.
//!
//! A reader (HAR, access log) turns each record into an [`Entry`]; [`Entry::request`]
//! maps it to the model's request through the sandbox's own HTTP mapping
//! (`serve::http_map::to_api_request`, one parser of the contract's JSON), after the
//! body's `card` is blanked unless it is a test label (card data is never kept: CARD-02,
//! A-CARD-NOT-STORED). The answer's body is read in the contract's shape; one that is
//! not (absent, truncated, another platform's ids) keeps its status only.

use crate::serve::cards;
use crate::serve::http_map::{self, HttpRequest};
use payhub_model::{ApiRequest, ApiResponse, ResponseBody};

/// Where an entry is in its file, as an explanation names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Label {
    /// `log.entries[i]` of a HAR (shown 1-based: `entry 3`).
    HarEntry(u64),
    /// Line `n` of a JSON Lines file.
    Line(u64),
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::HarEntry(i) => write!(f, "entry {i}"),
            Label::Line(n) => write!(f, "line {n}"),
        }
    }
}

/// What came back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An answer reached the client: its status, `Retry-After`, and its body if recorded.
    Answered {
        status: u16,
        retry_after_s: Option<u32>,
        body: Option<Vec<u8>>,
    },
    /// No answer: the connection failed, the client gave up, the capture shows status 0
    /// or an `_error` (an unknown outcome).
    NoAnswer,
}

/// One recorded exchange.
#[derive(Clone, Debug)]
pub struct Entry {
    pub label: Label,
    /// Milliseconds since 1970-01-01T00:00:00Z when the request started.
    pub started_ms: i64,
    /// How long until the answer (or the failure), in milliseconds.
    pub duration_ms: u64,
    pub http: HttpRequest,
    /// The API key as sent (`Authorization: Bearer …`), kept only to resolve its owner.
    pub api_key: Option<String>,
    pub outcome: Outcome,
}

/// Why an entry is not judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    /// Not a request to the contract's API (another host's page, a preflight): ignored.
    NotTheApi,
    /// Unreadable: the verdict lists it, and the run is incomplete.
    Unreadable(String),
}

impl Entry {
    /// The model's request, or why the entry is not judged.
    pub fn request(&self) -> Result<ApiRequest, Skip> {
        let route = self.http.target.split('?').next().unwrap_or_default();
        if !route.starts_with("/v1/") || self.http.method == "OPTIONS" {
            return Err(Skip::NotTheApi);
        }
        let http = HttpRequest {
            body: without_card_data(&self.http.body),
            ..self.http.clone()
        };
        http_map::to_api_request(&http).map_err(|reply| {
            Skip::Unreadable(format!(
                "the request cannot be the contract's (the platform would answer {})",
                reply.status
            ))
        })
    }

    /// The answer in the contract's shape, if its body reads as one.
    pub fn response(&self) -> Option<ApiResponse> {
        let Outcome::Answered {
            status,
            retry_after_s,
            body: Some(body),
        } = &self.outcome
        else {
            return None;
        };
        let mut value: serde_json::Value = serde_json::from_slice(body).ok()?;
        times_as_millis(&mut value);
        let body: ResponseBody = serde_json::from_value(value).ok()?;
        Some(ApiResponse {
            status: *status,
            retry_after_s: *retry_after_s,
            body,
        })
    }
}

/// A time field (`expires_at`) written as a date (RFC 3339, as the sandbox writes it)
/// read as milliseconds since 1970, the same clock as `startedDateTime`: the contract
/// gives the field no format, so a number and a date are both read.
fn times_as_millis(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match v.as_str().filter(|_| k == "expires_at").map(parse_time) {
                    Some(Some(ms)) => *v = serde_json::Value::from(ms.max(0)),
                    _ => times_as_millis(v),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(times_as_millis),
        _ => {}
    }
}

/// The body with a `card` that is not a test label blanked (`null`): the bytes could be
/// a card number, and `card` is not compared (CARD-01), so nothing judged is lost.
fn without_card_data(body: &[u8]) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return body.to_vec();
    };
    let Some(card) = value.get_mut("card") else {
        return body.to_vec();
    };
    if card.as_str().and_then(cards::test_card).is_none() {
        *card = serde_json::Value::Null;
    }
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The path and query of a URL (`https://host/v1/x?y` → `/v1/x?y`); a bare path as is.
pub fn target_of(url: &str) -> String {
    let rest = match url.split_once("://") {
        Some((_, rest)) => rest,
        None => return url.to_owned(),
    };
    match rest.find('/') {
        Some(i) => rest[i..].split('#').next().unwrap_or_default().to_owned(),
        None => "/".to_owned(),
    }
}

/// `Bearer sk_1` → `sk_1`.
pub fn bearer(value: &str) -> Option<String> {
    let v = value.trim();
    let token = v
        .strip_prefix("Bearer ")
        .or_else(|| v.strip_prefix("bearer "))?;
    Some(token.trim().to_owned()).filter(|t| !t.is_empty())
}

/// Milliseconds since the epoch of an RFC 3339 / ISO 8601 time
/// (`2026-12-01T10:00:00.123Z`, `…+01:00`, fractions of any length).
pub fn parse_time(s: &str) -> Option<i64> {
    crate::utc::parse_ms(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_with_zones_and_fractions() {
        assert_eq!(parse_time("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_time("1970-01-01T00:00:05.25Z"), Some(5_250));
        assert_eq!(parse_time("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(
            parse_time("1970-01-10T01:00:00.000Z"),
            Some(9 * 86_400_000 + 3_600_000)
        );
        assert_eq!(
            parse_time("2026-12-01T10:00:00.123456-05:00").map(|t| t % 1000),
            Some(123)
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-12-01T00:00:00Q",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    /// `expires_at` as a date and as a number of milliseconds read the same.
    #[test]
    fn expires_at_reads_as_a_date_or_a_number() {
        let answer = |body: &str| {
            let mut v: serde_json::Value = serde_json::from_str(body).unwrap();
            times_as_millis(&mut v);
            v
        };
        let date = answer(
            r#"{"id":"pay_1","expires_at":"1970-01-02T00:00:00.000Z","x":[{"expires_at":"1970-01-01T00:00:01Z"}]}"#,
        );
        let number = answer(r#"{"id":"pay_1","expires_at":86400000,"x":[{"expires_at":1000}]}"#);
        assert_eq!(date, number);
        // Another field holding a date, or a date that does not parse, stays as written.
        let kept = answer(r#"{"created":"1970-01-02T00:00:00Z","expires_at":"soon"}"#);
        assert_eq!(kept["created"], "1970-01-02T00:00:00Z");
        assert_eq!(kept["expires_at"], "soon");
    }

    #[test]
    fn card_numbers_are_blanked_and_test_labels_kept() {
        let b = without_card_data(br#"{"amount":1,"card":"4242424242424242"}"#);
        assert_eq!(String::from_utf8(b).unwrap(), r#"{"amount":1,"card":null}"#);
        let b = without_card_data(br#"{"amount":1,"card":"A"}"#);
        assert!(String::from_utf8(b).unwrap().contains(r#""card":"A""#));
    }

    #[test]
    fn urls_become_targets() {
        assert_eq!(
            target_of("https://api.example/v1/payments?a=1"),
            "/v1/payments?a=1"
        );
        assert_eq!(target_of("http://h"), "/");
        assert_eq!(target_of("/v1/refunds"), "/v1/refunds");
        assert_eq!(bearer("Bearer ak_1").as_deref(), Some("ak_1"));
        assert_eq!(bearer("Basic x"), None);
    }
}
