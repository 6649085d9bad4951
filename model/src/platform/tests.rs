//! Smoke tests of the platform at the request level. The rule-by-rule and scenario
//! tests live in `model/tests/`.

use crate::api::req;
use crate::harness::Bench;
use crate::*;

#[test]
fn replay_02_s1_timeout_then_retry_returns_same_payment_200() {
    let mut b = Bench::default();
    let first = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert!(
        b.response(first).is_none(),
        "the platform waits for the upstream"
    );
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(b.answered(first).status, 201);
    // S1: the response is lost; the retry with K gets the same Payment, 200.
    let retry = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    let r = b.answered(retry);
    assert_eq!(r.status, 200);
    assert_eq!(r.payment().unwrap().id, PaymentId(1));
    assert_eq!(r.payment().unwrap().status, PaymentStatus::Succeeded);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
}
