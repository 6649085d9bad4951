//! Who may reach the sandbox on a developer's machine, checked before any route:
//!
//! - **Host**: a loopback name or the bound address; a DNS-rebinding page is refused (421).
//!   Off with `--allow-non-loopback` on an unspecified address.
//! - **Cross-origin browsers**, on every path: a foreign `Origin`, or `Sec-Fetch-Site`
//!   `cross-site` / `same-site`, is refused (403) before anything is recorded.
//! - **JSON only**: a control `POST` with a body needs `Content-Type: application/json`
//!   (415; an HTML form cannot send it).
//! - **The token** (`--control-token T`): every control `POST` needs `X-Sandbox-Token: T`.
//!
//! The API is otherwise unaffected: its `Authorization` header needs a CORS preflight the
//! sandbox never grants, and clients that are not browsers send no `Origin`.

use crate::http_map::HttpReply;
use axum::http::{HeaderMap, header};
use std::net::{IpAddr, SocketAddr};

/// The edge's admission rules. The default admits loopback names only, with no token.
#[derive(Debug, Default)]
pub struct Guard {
    /// The bound address (its IP is an admitted Host too).
    pub addr: Option<SocketAddr>,
    /// `--allow-non-loopback` on an unspecified address: no Host check.
    pub open: bool,
    /// `--control-token`.
    pub token: Option<String>,
}

/// The header that carries `--control-token`.
pub const TOKEN_HEADER: &str = "x-sandbox-token";

/// Whether `host` (a Host header's name, without the port) is a loopback name.
pub fn is_loopback_host(host: &str) -> bool {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>().is_ok_and(super::is_loopback_ip)
}

/// The name part of a Host header value (`[::1]:8080` → `[::1]`, `a:1` → `a`).
fn host_name(value: &str) -> &str {
    if value.starts_with('[') {
        return value.find(']').map_or(value, |end| &value[..=end]);
    }
    value.rsplit_once(':').map_or(value, |(name, _)| name)
}

impl Guard {
    /// The answer refusing this request, if one is due (see the module doc).
    pub fn refuses(&self, path: &str, method: &str, headers: &HeaderMap) -> Option<HttpReply> {
        let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
        // RFC 9112 §3.2: a request with more than one Host field is answered 400.
        if headers.get_all(header::HOST).iter().nth(1).is_some() {
            return Some(HttpReply::refusal(
                400,
                "invalid_request",
                "more than one Host header: a request names one host (RFC 9112)",
            ));
        }
        let host = text(header::HOST);
        if let Some(host) = host {
            let name = host_name(host.trim());
            let bare = name.trim_start_matches('[').trim_end_matches(']');
            let ip = bare.parse::<IpAddr>().ok();
            let bound = self.addr.is_some_and(|a| ip == Some(a.ip()));
            if !(self.open || is_loopback_host(name) || bound) {
                return Some(HttpReply::refusal(
                    421,
                    "misdirected_request",
                    format!(
                        "Host '{name}' is not this sandbox's: only loopback names (localhost, 127.0.0.1, [::1]) and the bound address are served"
                    ),
                ));
            }
        }
        if let Some(origin) = text(header::ORIGIN) {
            let own =
                host.is_some_and(|h| origin.eq_ignore_ascii_case(&format!("http://{}", h.trim())));
            if !own {
                return Some(HttpReply::refusal(
                    403,
                    "cross_origin_refused",
                    format!("a request from another origin ({origin}) to the sandbox is refused"),
                ));
            }
        }
        let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
        if let Some(site @ ("cross-site" | "same-site")) = site {
            return Some(HttpReply::refusal(
                403,
                "cross_origin_refused",
                format!("a {site} browser request to the sandbox is refused"),
            ));
        }
        if !path.starts_with("/__sandbox") || method != "POST" {
            return None;
        }
        if let Some(token) = &self.token {
            let given = headers.get(TOKEN_HEADER).map(|v| v.as_bytes());
            if given != Some(token.as_bytes()) {
                return Some(HttpReply::refusal(
                    403,
                    "control_token_required",
                    "this sandbox's controls need the header X-Sandbox-Token with the token its banner printed",
                ));
            }
        }
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let chunked = headers.contains_key(header::TRANSFER_ENCODING);
        let has_body = chunked || declared.is_some_and(|n| n > 0);
        let json = text(header::CONTENT_TYPE).is_some_and(|t| {
            t.split(';').next().map(str::trim).is_some_and(|m| {
                m.eq_ignore_ascii_case("application/json")
                    || m.eq_ignore_ascii_case("application/x-ndjson")
            })
        });
        if has_body && !json {
            return Some(HttpReply::refusal(
                415,
                "unsupported_media_type",
                "a control body must be JSON, sent with Content-Type: application/json (or application/x-ndjson for the journal)",
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_are_admitted_and_others_refused() {
        for h in [
            "localhost",
            "LOCALHOST.",
            "app.localhost",
            "127.0.0.1",
            "127.1.2.3",
            "[::1]",
            "[::ffff:127.0.0.1]",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "evil.example",
            "10.0.0.1",
            "[::ffff:10.0.0.1]",
            "localhost.evil",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
        assert_eq!(host_name("[::1]:8080"), "[::1]");
        assert_eq!(host_name("localhost:8080"), "localhost");
    }

    #[test]
    fn two_host_headers_are_a_bad_request() {
        let mut headers = HeaderMap::new();
        headers.append(header::HOST, "localhost".parse().unwrap());
        assert!(
            Guard::default()
                .refuses("/v1/payments", "GET", &headers)
                .is_none()
        );
        headers.append(header::HOST, "localhost".parse().unwrap());
        let refused = Guard::default().refuses("/v1/payments", "GET", &headers);
        assert_eq!(refused.map(|r| r.status), Some(400));
    }
}
