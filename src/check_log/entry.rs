//! One recorded HTTP exchange, whatever file it came from, and how it becomes events.
//!
//! A reader (HAR, access log) turns each record into an [`Entry`]; [`Entry::request`]
//! reads it as the contract's request ([`super::request`]: any platform's ids, the body's
//! safety parameters, never card data), and [`Entry::answer`] reads the answer at the
//! contract's level ([`ObservedAnswer`]: the refusal, the objects and what they hold,
//! ids interned per kind). One that does not read (no body, not JSON) keeps its status
//! only.

use crate::http_map::HttpRequest;
use payhub_model::observation::Dialect;
use payhub_model::observed::{Interner, ObservedAnswer, Shape};

/// Where an entry is in its file, as an explanation names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Label {
    /// `log.entries[i]` of a HAR (shown 1-based: `entry 3`).
    HarEntry(u64),
    /// Line `n` of a JSON Lines file.
    Line(u64),
    /// The `n`th exchange conform's proxy carried in one case (1-based).
    Exchange(u64),
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::HarEntry(i) => write!(f, "entry {i}"),
            Label::Line(n) => write!(f, "line {n}"),
            Label::Exchange(n) => write!(f, "exchange {n}"),
        }
    }
}

/// What came back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
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
    pub outcome: Reply,
}

impl Entry {
    /// The contract's request of an entry of the API ([`Entry::is_api`]), or why it is
    /// unreadable (listed, and the run is incomplete).
    pub fn request(
        &self,
        ids: &mut Interner,
        cards: &super::profile::CardReading,
    ) -> Result<super::request::Read, String> {
        let served = matches!(
            self.outcome,
            Reply::Answered {
                status: 200..=299,
                ..
            }
        );
        super::request::read(
            &self.http.method,
            &super::request::served_target(&self.http.method, &self.http.target, served),
            self.http.idempotency_key.as_deref(),
            &self.http.body,
            ids,
            cards,
        )
        .map_err(|why| format!("the request cannot be the contract's: {why}"))
    }

    /// Whether the entry is a request to the contract's API (`/v1/…`), not a CORS
    /// preflight (`OPTIONS`) nor a probe (`HEAD`): methods the contract names no
    /// operation of and no rule judges.
    pub fn is_api(&self) -> bool {
        let route = self.http.target.split('?').next().unwrap_or_default();
        let probe = ["OPTIONS", "HEAD"]
            .iter()
            .any(|m| self.http.method.eq_ignore_ascii_case(m));
        route.starts_with("/v1/") && !probe
    }

    /// The answer at the contract's level, if its body reads as JSON (`shape`: what the
    /// request's endpoint answers).
    pub fn answer(
        &self,
        shape: Shape,
        dialect: &Dialect,
        ids: &mut Interner,
    ) -> Option<ObservedAnswer> {
        let Reply::Answered {
            status,
            retry_after_s,
            body: Some(body),
        } = &self.outcome
        else {
            return None;
        };
        ObservedAnswer::read(*status, *retry_after_s, body, shape, dialect, ids)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
