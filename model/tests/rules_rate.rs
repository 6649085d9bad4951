//! 429 and Retry-After (429 与 Retry-After), 503, and what other 5xx mean.

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::api_keys::{M1_LIVE, M1_TEST_ROTATED, M2_TEST, rotated_key_spec};
use payhub_model::harness::Bench;
use payhub_model::*;

use AcquirerDecision::{Approve, Decline};

fn limit(b: &mut Bench, merchant: u32, on: bool) {
    b.control(Control::SetRateLimited {
        merchant: MerchantId(merchant),
        on,
    });
}

#[test]
fn rate_01_429_executes_nothing_and_says_retry_after() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K0", "ORDER-000");
    limit(&mut b, 1, true);
    let before = effects(&b);
    let requests = [
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
        req::confirm("K", pay, 'B'),
        req::cancel("K", pay),
        req::session("K", "ORDER-002", 100, "USD"),
        req::get(pay),
        // A replay is not answered from the record either: the request is not executed.
        req::create("K0", "ORDER-000", 10000, "USD", 'A'),
    ];
    for request in requests {
        let id = b.send(request.clone());
        let r = b.answered(id).clone();
        assert_error(&r, 429, ErrorCode::RateLimited);
        assert_eq!(
            r.retry_after_s,
            b.platform.params().retry_after_s,
            "{request}"
        );
        assert_eq!(b.rule_of(id), Some(Rule::RateLimited));
    }
    assert_eq!(effects(&b), before);
    limit(&mut b, 1, false);
    let retry = b.send(req::confirm("K", pay, 'B'));
    b.upstream(Approve);
    assert_eq!(b.answered(retry).status, 200);
}

#[test]
fn rate_02_switching_key_does_not_get_around_the_merchants_limit() {
    let mut b = Bench::default();
    b.control(Control::IssueApiKey(rotated_key_spec()));
    limit(&mut b, 1, true);
    let before = effects(&b);
    // Another idempotency key, another API key, another environment: all merchant 1.
    for request in [
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
        req::create("K-OTHER", "ORDER-001", 10000, "USD", 'A'),
        req::create_as(M1_TEST_ROTATED, "K", "ORDER-001", 10000, "USD", Some('A')),
        req::create_as(M1_LIVE, "K", "ORDER-001", 10000, "USD", Some('A')),
    ] {
        let r = call(&mut b, request);
        assert_error(&r, 429, ErrorCode::RateLimited);
    }
    assert_eq!(effects(&b), before);
    // Merchant 2 has its own limit.
    let m2 = b.send(req::create_as(
        M2_TEST,
        "K",
        "ORDER-001",
        10000,
        "USD",
        Some('A'),
    ));
    b.upstream(Approve);
    assert_eq!(b.answered(m2).status, 201);
    assert!(b.platform.is_rate_limited(MerchantId(1)));
    assert!(!b.platform.is_rate_limited(MerchantId(2)));
}

#[test]
fn rate_04_paused_channel_refuses_new_transactions_with_503_and_no_reason() {
    let mut b = Bench::default();
    let failed = declined(&mut b, "K0", "ORDER-000");
    let pay = paid(&mut b, "K1", "ORDER-001");
    b.control(Control::SetChannelPaused { on: true });
    assert!(b.platform.channel_paused());
    let before = effects(&b);
    for request in [
        req::create("K", "ORDER-002", 10000, "USD", 'A'),
        req::confirm("K", failed, 'B'),
        req::session("K", "ORDER-003", 100, "USD"),
    ] {
        let id = b.send(request.clone());
        let e = assert_error(b.answered(id), 503, ErrorCode::TemporarilyUnavailable);
        assert!(e.retryable);
        assert_eq!((e.field, e.related_resource_id), (None, None), "{request}");
        assert_eq!(b.rule_of(id), Some(Rule::ChannelPaused));
    }
    assert_eq!(effects(&b), before, "no Payment, no record, no charge");
    // Not new transactions: replays and queries are answered, refunds go through.
    let replay = call(&mut b, req::create("K1", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(replay.status, 200);
    assert_eq!(call(&mut b, req::get(pay)).status, 200);
    let refund = call(&mut b, req::refund("KR", pay, "R-001", 100));
    assert_eq!(refund.status, 201);
    b.upstream(Approve);
    // Resumed: the same key executes.
    b.control(Control::SetChannelPaused { on: false });
    let retry = b.send(req::confirm("K", failed, 'B'));
    b.upstream(Decline);
    assert_eq!(b.answered(retry).status, 200);
}

#[test]
fn rate_05_only_503_means_not_accepted_other_5xx_may_have_executed() {
    // 503: nothing exists afterwards.
    let mut b = Bench::default();
    b.control(Control::SetChannelPaused { on: true });
    let before = effects(&b);
    let r = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(r.status, 503);
    assert_eq!(effects(&b), before);
    // Every 5xx the platform itself gives is 503.
    assert!(b.trace.iter().all(|o| match o {
        PlatformOutput::Response { response, .. } =>
            response.status < 500 || response.status == 503,
        _ => true,
    }));
    // A 500 (from anything between merchant and platform) may hide an accepted request:
    // the charge went out, and the retry with the same key finds it.
    let mut b = Bench::default();
    let first = b.send_answered_500(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(b.answered(first).status, 500);
    assert_eq!(charges_sent(&b).len(), 1, "accepted despite the 500");
    b.upstream(Approve);
    let retry = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(retry.status, 200);
    assert_eq!(payment_of(&retry).status, PaymentStatus::Succeeded);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
}

#[test]
fn unknown_01_after_a_5xx_a_retry_with_the_same_key_returns_the_original_or_executes_once() {
    assert_eq!(Rule::FiveXxMayHaveExecuted.ac(), Some("AC-069"));
    // Accepted before the 500: the retry returns the original object.
    let mut b = Bench::default();
    b.send_answered_500(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    let retry = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(b.answered(retry).status, 200);
    assert_eq!(b.rule_of(retry), Some(Rule::ReplayLatestStatus200));
    assert_eq!(charges_sent(&b).len(), 1);
    // Accepted and still executing: the retry meets it (S5), it does not start another.
    let mut b = Bench::default();
    b.send_answered_500(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    let retry = b.send_with(
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
        Branch::S5Wait,
    );
    b.upstream(Approve);
    assert_eq!(b.answered(retry).status, 200);
    assert_eq!(charges_sent(&b).len(), 1);
    // Never accepted: the retry executes, once.
    let mut b = Bench::default();
    b.gateway_500(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    let retry = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    assert_eq!(b.answered(retry).status, 201);
    let again = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(again.status, 200);
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
}
