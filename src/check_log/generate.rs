//! `check-log --generate N`: a deterministic access log of N exchanges, for measuring
//! memory and throughput on large files (README, "Judge recorded traffic"). Orders one
//! after another, three seconds apart: a create answered 201; every tenth create has no
//! answer (an unknown outcome) and is retried under the same key, answered 200 with the
//! same Payment; every order is queried once, 2 s after its create. Every property the
//! log can judge holds on it.

use payhub_model::{PaymentId, PaymentStatus, PaymentView, ResolutionStatus, ResponseBody};
use std::io::Write;

/// 2026-12-01T00:00:00Z, in milliseconds since the epoch.
const START_MS: i64 = 1_796_083_200_000;

fn time(ms: i64) -> String {
    crate::utc::iso_ms(ms)
}

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

#[allow(clippy::too_many_arguments)]
fn line(
    out: &mut impl Write,
    at: i64,
    method: &str,
    path: &str,
    key: Option<&str>,
    request: Option<&str>,
    status: Option<u16>,
    response: Option<&str>,
) -> std::io::Result<()> {
    let v = serde_json::json!({
        "time": time(at), "duration_ms": 120, "method": method, "path": path,
        "api_key": "ak_1", "idempotency_key": key, "request_body": request,
        "status": status, "response_body": response,
        "error": if status.is_none() { Some("connection reset") } else { None },
    });
    writeln!(out, "{v}")
}

/// Writes `n` exchanges.
pub fn write(n: u64, out: &mut impl Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    let (mut written, mut i) = (0u64, 0u64);
    while written < n {
        i += 1;
        let at = START_MS + i as i64 * 3_000;
        let amount = 1000 + i % 5000;
        let key = format!("key-{i}");
        let body = format!(
            r#"{{"merchant_order_no":"ORDER-{i}","amount":{amount},"currency":"USD","card":"A"}}"#
        );
        let object = payment(i, amount);
        if i % 10 == 0 {
            line(
                &mut out,
                at,
                "POST",
                "/v1/payments",
                Some(&key),
                Some(&body),
                None,
                None,
            )?;
            written += 1;
            let retry = at + 1_000;
            line(
                &mut out,
                retry,
                "POST",
                "/v1/payments",
                Some(&key),
                Some(&body),
                Some(200),
                Some(&object),
            )?;
        } else {
            line(
                &mut out,
                at,
                "POST",
                "/v1/payments",
                Some(&key),
                Some(&body),
                Some(201),
                Some(&object),
            )?;
        }
        written += 1;
        if written < n {
            let path = format!("/v1/payments/{}", PaymentId(i as u32));
            line(
                &mut out,
                at + 2_000,
                "GET",
                &path,
                None,
                None,
                Some(200),
                Some(&object),
            )?;
            written += 1;
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_times_are_iso_dates() {
        assert_eq!(super::time(super::START_MS), "2026-12-01T00:00:00.000Z");
        assert_eq!(
            super::super::entry::parse_time("2026-12-01T00:00:00.000Z"),
            Some(super::START_MS)
        );
    }
}
