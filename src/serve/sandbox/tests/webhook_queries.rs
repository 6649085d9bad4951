//! SCHED-01 on the wire: a query of a Payment after the webhook of its final status
//! reached the merchant (its endpoint answered 2xx) is named; a client that stops at the
//! webhook holds, and so does one that queries after a webhook it never acknowledged.

use super::*;

const STOPS: &str = "client-stops-querying-at-a-final-status";

/// The session's verdict of `STOPS` (its wire level included): violated, and its detail.
fn stops_at_final(sb: &Sandbox) -> (bool, String) {
    let session = crate::serve::witness::Session::of(sb);
    let v = session_verdicts(&session)
        .into_iter()
        .find(|v| v.name == STOPS)
        .expect("the property is listed");
    let violated = v.status == payhub_properties::verdict::Status::Violated;
    (violated, v.detail.unwrap_or_default())
}

/// A slow card's Payment (202 processing), then its `payment.succeeded` webhook handed
/// out and acknowledged (`true`) or answered 500 (`false`), ten seconds on.
fn slow_payment_and_its_webhook(acknowledged: bool) -> Sandbox {
    let mut sb = with_webhooks();
    assert_eq!(create(&mut sb, "k1", "ORDER-1", 100, 'D').status, 202);
    sb.advance(Millis::mins(1)).unwrap();
    let out = sb.take_webhooks();
    let succeeded = out
        .iter()
        .find(|w| w.body.contains("payment.succeeded"))
        .unwrap_or_else(|| panic!("the webhook of the capture: {out:?}"));
    sb.webhook_done(succeeded.msg, acknowledged);
    sb.advance(Millis::secs(10)).unwrap();
    sb
}

#[test]
fn sched_01_a_query_after_the_webhook_of_a_final_status_is_named() {
    let mut sb = slow_payment_and_its_webhook(true);
    assert_eq!(get(&mut sb, "/v1/payments/pay_demo_001").status, 200);
    let (violated, detail) = stops_at_final(&sb);
    assert!(violated, "{detail}");
    assert!(
        detail.contains("webhook") && detail.contains("payment.succeeded"),
        "{detail}"
    );
}

#[test]
fn sched_01_a_client_that_stops_at_the_webhook_holds() {
    let sb = slow_payment_and_its_webhook(true);
    // No query at all: it holds over nothing, and says so.
    assert_eq!(
        stops_at_final(&sb),
        (
            false,
            "vacuously: no query (GET /v1/payments, /v1/refunds) in the source".into()
        )
    );
}

/// A webhook answered 500 did not reach the merchant's database: its query goes on.
#[test]
fn sched_01_a_query_after_a_webhook_not_acknowledged_holds() {
    let mut sb = slow_payment_and_its_webhook(false);
    assert_eq!(get(&mut sb, "/v1/payments/pay_demo_001").status, 200);
    let (violated, detail) = stops_at_final(&sb);
    assert!(!violated, "{detail}");
}
