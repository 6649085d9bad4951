//! Which requests need an idempotency key (哪些请求需要幂等键): KEY-01…KEY-07.
//!
//! Every rejection is checked three ways: the status and `error.field`, that nothing
//! changed (no record, no Payment, nothing upstream), and that the corrected request
//! with the same key then executes (REJECT-01).

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::harness::Bench;
use payhub_model::*;

use AcquirerDecision::{Approve, Decline};

/// Sends `bad`, expects 400 on the Idempotency-Key with `rule`, and nothing changed.
fn rejects_key(b: &mut Bench, bad: ApiRequest, rule: Rule) {
    let before = effects(b);
    let id = b.send(bad);
    assert_400(b.answered(id), Field::IdempotencyKey);
    assert_eq!(b.rule_of(id), Some(rule));
    assert_eq!(effects(b), before, "a 400 leaves nothing behind");
}

#[test]
fn key_01_create_payment_without_key_is_400_on_idempotency_key() {
    let mut b = Bench::default();
    let good = req::create("K", "ORDER-001", 10000, "USD", 'A');
    rejects_key(
        &mut b,
        req::with_key(good.clone(), None),
        Rule::KeyRequiredCreatePayment,
    );
    let id = b.send(good);
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 201);
}

#[test]
fn key_02_confirm_without_key_is_400_on_idempotency_key() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K1", "ORDER-001");
    let good = req::confirm("K2", pay, 'B');
    rejects_key(
        &mut b,
        req::with_key(good.clone(), None),
        Rule::KeyRequiredConfirm,
    );
    let id = b.send(good);
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 200);
    assert_eq!(payment_of(b.answered(id)).attempt_count, 2);
}

#[test]
fn key_03_cancel_without_key_is_400_and_cancel_carries_no_body() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K1", "ORDER-001");
    let good = req::cancel("K2", pay);
    // The request line has no body: `POST /v1/payments/pay_demo_001/cancel  Idempotency-Key: K2`.
    assert_eq!(
        good.to_string(),
        "POST /v1/payments/pay_demo_001/cancel  Idempotency-Key: K2"
    );
    rejects_key(
        &mut b,
        req::with_key(good.clone(), None),
        Rule::KeyRequiredCancel,
    );
    let r = call(&mut b, good);
    assert_eq!(r.status, 200);
    assert_eq!(payment_of(&r).status, PaymentStatus::Canceled);
}

#[test]
fn key_04_checkout_session_without_key_is_400_on_idempotency_key() {
    let mut b = Bench::default();
    let good = req::session("K", "ORDER-001", 10000, "USD");
    rejects_key(
        &mut b,
        req::with_key(good.clone(), None),
        Rule::KeyRequiredCheckoutSession,
    );
    let r = call(&mut b, good);
    assert_eq!(r.status, 201);
    assert_eq!(session_of(&r).payment_id, PaymentId(1));
}

#[test]
fn key_05_refund_without_key_is_400_on_idempotency_key() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K1", "ORDER-001");
    let good = req::refund("K2", pay, "R-001", 5000);
    rejects_key(
        &mut b,
        req::with_key(good.clone(), None),
        Rule::KeyRequiredRefund,
    );
    let r = call(&mut b, good);
    assert_eq!(r.status, 201);
    assert_eq!(refund_of(&r).id, RefundId(1));
}

#[test]
fn key_06_queries_need_no_key_and_ignore_one() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K1", "ORDER-001");
    let refund = call(&mut b, req::refund("K2", pay, "R-001", 5000));
    let refund = refund_of(&refund).id;
    let queries = [
        req::get(pay),
        req::by_order("ORDER-001"),
        req::get_refund(refund),
        req::by_refund_no("R-001"),
        req::query(Endpoint::ListRefundsProcessing),
    ];
    for q in queries {
        assert_eq!(q.idempotency_key, None);
        assert!(!q.endpoint.requires_key());
        let before = effects(&b);
        let without = call(&mut b, q.clone());
        assert_eq!(without.status, 200, "{q} → {without}");
        // With a key, the same answer: queries have no idempotency scope.
        let with = call(&mut b, req::with_key(q.clone(), Some("K-QUERY")));
        assert_eq!(with, without);
        assert_eq!(effects(&b), before);
    }
}

#[test]
fn key_07_missing_empty_and_256_char_keys_are_400_on_idempotency_key() {
    let mut b = Bench::default();
    let good = req::create("K", "ORDER-001", 10000, "USD", 'A');
    let long = "k".repeat(256);
    rejects_key(
        &mut b,
        req::with_key(good.clone(), Some("")),
        Rule::KeyLength,
    );
    rejects_key(
        &mut b,
        req::with_key(good.clone(), Some(&long)),
        Rule::KeyLength,
    );
    rejects_key(
        &mut b,
        req::with_key(good.clone(), None),
        Rule::KeyRequiredCreatePayment,
    );
    let id = b.send(good);
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 201);
}

#[test]
fn key_07_256_char_key_is_400_then_255_char_key_executes() {
    let mut b = Bench::default();
    let k255 = "k".repeat(255);
    let k256 = "k".repeat(256);
    let base = req::create("x", "ORDER-001", 10000, "USD", 'A');
    rejects_key(
        &mut b,
        req::with_key(base.clone(), Some(&k256)),
        Rule::KeyLength,
    );
    let id = b.send(req::with_key(base.clone(), Some(&k255)));
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 201);
    assert_eq!(b.platform.records().len(), 1);
    // The 255-character key is a real key: its replay is a replay.
    let replay = b.send(req::with_key(base, Some(&k255)));
    assert_eq!(b.answered(replay).status, 200);
    assert_eq!(charges_sent(&b).len(), 1);
}

#[test]
fn key_07_length_counts_characters_not_bytes() {
    let mut b = Bench::default();
    // 255 two-byte characters (510 bytes) is a 255-character key.
    let k = "é".repeat(255);
    assert_eq!(k.len(), 510);
    let id = b.send(req::with_key(
        req::create("x", "ORDER-001", 10000, "USD", 'A'),
        Some(&k),
    ));
    b.upstream(Decline);
    assert_eq!(b.answered(id).status, 201);
    let longer = "é".repeat(256);
    rejects_key(
        &mut b,
        req::with_key(req::confirm("x", PaymentId(1), 'B'), Some(&longer)),
        Rule::KeyLength,
    );
}
