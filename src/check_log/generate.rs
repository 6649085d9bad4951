//! `check-log --generate N`: a deterministic access log of N exchanges, for measuring
//! memory and throughput on large files (README, "Judge recorded traffic"). Orders one
//! after another, three seconds apart: a create answered 201; every tenth create has no
//! answer (an unknown outcome) and is retried under the same key, answered 200 with the
//! same Payment; every order is queried once, 2 s after its create. Every property the
//! log can judge holds on it. With `--generate-merchants M`, order i is merchant
//! i mod M's (API keys `mk_0` … no map names: each is assumed a merchant of its own). As a HAR (`--generate-format har`), the same exchanges
//! as the entries of one log, written entry by entry (the file is never held whole).

use crate::serve::har::{entry, json_response, no_response, pair, request_entry};
use crate::utc::iso_ms;
use payhub_model::{PaymentId, PaymentStatus, PaymentView, ResolutionStatus, ResponseBody};
use std::io::Write;

/// 2026-12-01T00:00:00Z, in milliseconds since the epoch.
const START_MS: i64 = 1_796_083_200_000;

fn payment(i: u64, amount: u64) -> String {
    let view = PaymentView {
        id: PaymentId(i as u32),
        merchant_order_no: format!("ORDER-{i}").into(),
        amount,
        currency: "USD".into(),
        status: PaymentStatus::Succeeded,
        resolution_status: ResolutionStatus::Known,
        attempt_count: 1,
        failure: None,
        next_action: false,
        expires_at: payhub_model::Millis::days(1),
        fee_rate_bps: 0,
        amount_refunded: 0,
        version: 2,
    };
    serde_json::to_string(&ResponseBody::Payment(view)).unwrap_or_default()
}

/// The file written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// JSON Lines in the access-log shape (docs/check-log.md).
    AccessLog,
    /// HAR 1.2, as a browser or the sandbox exports one.
    Har,
}

/// Writes exchanges one at a time in a [`Shape`]; `first`: none written yet.
struct Writer<W: Write> {
    out: W,
    shape: Shape,
    first: bool,
    /// The API key of the exchanges written now.
    key: String,
}

/// One exchange to write: when, what was sent, and its answer (`None`: reset).
struct Exchange<'a> {
    at: i64,
    method: &'a str,
    path: &'a str,
    key: Option<&'a str>,
    request: Option<&'a str>,
    answer: Option<(u16, &'a str)>,
}

impl<W: Write> Writer<W> {
    fn line(&mut self, x: &Exchange) -> std::io::Result<()> {
        let v = match self.shape {
            Shape::AccessLog => serde_json::json!({
                "time": iso_ms(x.at), "duration_ms": 120, "method": x.method, "path": x.path,
                "api_key": self.key, "idempotency_key": x.key, "request_body": x.request,
                "status": x.answer.map(|a| a.0), "response_body": x.answer.map(|a| a.1),
                "error": if x.answer.is_none() { Some("connection reset") } else { None },
            }),
            Shape::Har => har_entry(&self.key, x),
        };
        match self.shape {
            Shape::AccessLog => writeln!(self.out, "{v}"),
            Shape::Har => {
                let comma = if self.first { "" } else { "," };
                self.first = false;
                write!(self.out, "{comma}\n{v}")
            }
        }
    }
}

/// One HAR entry as a browser writes it: headers, bodies, a reset as status 0 and
/// `_error`.
fn har_entry(api_key: &str, x: &Exchange) -> serde_json::Value {
    let mut headers = vec![pair("Authorization", &format!("Bearer {api_key}"))];
    headers.extend(x.key.map(|k| pair("Idempotency-Key", k)));
    let url = format!("https://api.example{}", x.path);
    let req = request_entry(x.method, url, headers, Vec::new(), x.request);
    let response = match x.answer {
        Some((s, body)) => json_response(s, vec![pair("Content-Type", "application/json")], body),
        None => no_response(""),
    };
    let mut entry = entry(iso_ms(x.at), 120, req, response);
    if x.answer.is_none() {
        entry["_error"] = serde_json::json!("net::ERR_CONNECTION_RESET");
    }
    entry
}

/// Writes `n` exchanges in `shape`, of `merchants` merchants (1: the sandbox's `ak_1`).
pub fn write(n: u64, shape: Shape, merchants: u32, out: &mut impl Write) -> std::io::Result<()> {
    let mut out = Writer {
        out: std::io::BufWriter::new(out),
        shape,
        first: true,
        key: "ak_1".to_owned(),
    };
    if shape == Shape::Har {
        write!(
            out.out,
            r#"{{"log": {{"version": "1.2", "creator": {{"name": "payhub-verify check-log --generate", "version": "{}"}}, "entries": ["#,
            env!("CARGO_PKG_VERSION")
        )?;
    }
    let (mut written, mut i) = (0u64, 0u64);
    while written < n {
        i += 1;
        if merchants > 1 {
            out.key = format!("mk_{}", i % u64::from(merchants));
        }
        let at = START_MS + i as i64 * 3_000;
        let amount = 1000 + i % 5000;
        let key = format!("key-{i}");
        let body = format!(
            r#"{{"merchant_order_no":"ORDER-{i}","amount":{amount},"currency":"USD","card":"A"}}"#
        );
        let object = payment(i, amount);
        let create = |at, answer| Exchange {
            at,
            method: "POST",
            path: "/v1/payments",
            key: Some(&key),
            request: Some(&body),
            answer,
        };
        if i % 10 == 0 {
            out.line(&create(at, None))?;
            written += 1;
            out.line(&create(at + 1_000, Some((200, &object))))?;
        } else {
            out.line(&create(at, Some((201, &object))))?;
        }
        written += 1;
        if written < n {
            let path = format!("/v1/payments/{}", PaymentId(i as u32));
            out.line(&Exchange {
                method: "GET",
                path: &path,
                key: None,
                request: None,
                ..create(at + 2_000, Some((200, &object)))
            })?;
            written += 1;
        }
    }
    if shape == Shape::Har {
        writeln!(out.out, "\n]}}}}")?;
    }
    out.out.flush()
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_times_are_iso_dates() {
        assert_eq!(
            crate::utc::iso_ms(super::START_MS),
            "2026-12-01T00:00:00.000Z"
        );
        assert_eq!(
            crate::utc::parse_ms("2026-12-01T00:00:00.000Z"),
            Some(super::START_MS)
        );
    }
}
