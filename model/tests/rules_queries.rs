//! How to query when the result is unknown (结果未知时如何查单), the resolution table,
//! the synchronous wait, and webhook versions.

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::api_keys;
use payhub_model::api_keys::{M1_LIVE, M2_TEST};
use payhub_model::harness::Bench;
use payhub_model::*;
use std::collections::BTreeMap;

use AcquirerDecision::{Approve, ApproveSilently, Decline, Fail, RequireAction};

#[test]
fn query_01_get_payment_by_id_returns_it_to_its_owner_only() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K", "ORDER-001");
    let id = b.send(req::get(pay));
    assert_eq!(b.answered(id).status, 200);
    assert_eq!(
        payment_of(b.answered(id)),
        b.platform.payment_view(pay).unwrap()
    );
    assert_eq!(b.rule_of(id), Some(Rule::QueryReadsKnownState));
    for other in [M1_LIVE, M2_TEST] {
        let r = call(&mut b, req::with_api_key(req::get(pay), other));
        assert_error(&r, 404, ErrorCode::ResourceMissing);
    }
    let missing = b.send(req::get(PaymentId(2)));
    assert_error(b.answered(missing), 404, ErrorCode::ResourceMissing);
    assert_eq!(b.rule_of(missing), Some(Rule::QueryById));
}

#[test]
fn query_02_by_order_number_is_exact_case_sensitive_and_at_most_one() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K", "ORDER-001");
    paid(&mut b, "K2", "ORDER-0011");
    let exact = b.send(req::by_order("ORDER-001"));
    assert_eq!(b.rule_of(exact), Some(Rule::QueryByOrderNo));
    match &b.answered(exact).body {
        ResponseBody::Payments { data } => {
            assert_eq!(data.len(), 1);
            assert_eq!(data[0].id, pay);
        }
        other => panic!("{other:?}"),
    }
    for near in ["order-001", "ORDER-00", "ORDER-001 ", "Order-001"] {
        let r = call(&mut b, req::by_order(near));
        assert_eq!(r.status, 200);
        assert_eq!(
            r.body,
            ResponseBody::Payments { data: vec![] },
            "{near:?} is not ORDER-001"
        );
    }
}

#[test]
fn query_03_refunds_by_id_by_number_and_by_status_processing() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K", "ORDER-001");
    call(&mut b, req::refund("KR1", pay, "R-001", 1000));
    b.upstream(Approve);
    call(&mut b, req::refund("KR2", pay, "R-002", 2000)); // stays processing
    let by_id = call(&mut b, req::get_refund(RefundId(1)));
    assert_eq!(refund_of(&by_id).merchant_refund_no, "R-001");
    let by_no = call(&mut b, req::by_refund_no("R-002"));
    assert_eq!(refund_of(&by_no).id, RefundId(2));
    let none = call(&mut b, req::by_refund_no("r-002"));
    assert_eq!(none.body, ResponseBody::Refunds { data: vec![] });
    let processing = b.send(req::query(Endpoint::ListRefundsProcessing));
    assert_eq!(b.rule_of(processing), Some(Rule::QueryRefunds));
    match &b.answered(processing).body {
        ResponseBody::Refunds { data } => {
            let ids: Vec<RefundId> = data.iter().map(|r| r.id).collect();
            assert_eq!(ids, vec![RefundId(2)]);
        }
        other => panic!("{other:?}"),
    }
    // Another environment sees none of them.
    let live = call(
        &mut b,
        req::with_api_key(req::query(Endpoint::ListRefundsProcessing), M1_LIVE),
    );
    assert_eq!(live.body, ResponseBody::Refunds { data: vec![] });
    let live = call(
        &mut b,
        req::with_api_key(req::get_refund(RefundId(1)), M1_LIVE),
    );
    assert_error(&live, 404, ErrorCode::ResourceMissing);
}

#[test]
fn query_04_queries_never_call_the_upstream_and_never_hurry_the_result() {
    let mut b = Bench::default();
    // A capture the platform does not know of yet, and a refund in verification.
    b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream_reply_lost(Approve);
    b.advance(b.platform.params().sync_wait);
    let pay2 = paid(&mut b, "K2", "ORDER-002");
    call(&mut b, req::refund("KR", pay2, "R-001", 100));
    b.drop_upstream();
    drop_all(&mut b);
    let before = effects(&b);
    let timers: Vec<_> = b.platform.timers().cloned().collect();
    for _ in 0..20 {
        for q in [
            req::get(PaymentId(1)),
            req::by_order("ORDER-001"),
            req::get_refund(RefundId(1)),
            req::by_refund_no("R-001"),
            req::query(Endpoint::ListRefundsProcessing),
        ] {
            let id = b.send(q);
            assert_eq!(b.answered(id).status, 200);
        }
    }
    assert_eq!(effects(&b), before, "no upstream call, no change");
    assert_eq!(b.platform.timers().cloned().collect::<Vec<_>>(), timers);
    // However fast the merchant queries, the platform knows only what it verified.
    let q = call(&mut b, req::get(PaymentId(1)));
    assert_eq!(payment_of(&q).status, PaymentStatus::Processing);
    assert_eq!(b.acquirer.ledger.captures_of(PaymentId(1)).count(), 1);
}

#[test]
fn query_05_no_record_by_order_number_means_never_created() {
    let mut b = Bench::default();
    // Rejected, rate-limited or paused creates leave no Payment to find.
    call(&mut b, req::create("K", "ORDER-001", 10000, "GBP", 'A'));
    b.control(Control::SetChannelPaused { on: true });
    call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.control(Control::SetChannelPaused { on: false });
    b.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: true,
    });
    call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: false,
    });
    let none = b.send(req::by_order("ORDER-001"));
    assert_eq!(
        b.answered(none).body,
        ResponseBody::Payments { data: vec![] }
    );
    assert_eq!(
        b.platform
            .payment_for_order(MerchantId(1), Environment::Test, "ORDER-001"),
        None
    );
    // Retrying with the original key creates it, once.
    let create = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    let found = call(&mut b, req::by_order("ORDER-001"));
    assert_eq!(
        payment_of(&found).id,
        PaymentId(1),
        "visible while in flight"
    );
    b.upstream(Approve);
    assert_eq!(b.answered(create).status, 201);
}

// ---- the resolution table ------------------------------------------------------------

#[test]
fn res_01_after_a_202_processing_needs_query_verified_with_the_original_identifier() {
    let mut b = Bench::default();
    let create = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(ApproveSilently); // captured, never answered
    b.advance(Millis::secs(15));
    let r = b.answered(create).clone();
    assert_eq!(r.status, 202);
    let p = payment_of(&r);
    assert_eq!(
        (p.status, p.resolution_status),
        (PaymentStatus::Processing, ResolutionStatus::NeedsQuery)
    );
    let get = call(&mut b, req::get(PaymentId(1)));
    assert_eq!(
        payment_of(&get).resolution_status,
        ResolutionStatus::NeedsQuery
    );
    // The platform verifies with the attempt's own reference, not a new charge.
    b.advance(b.platform.params().verify_interval);
    let query = b.upstream(Approve);
    assert_eq!(
        query,
        UpstreamCall::QueryCharge {
            attempt: AttemptId(1)
        }
    );
    let get = call(&mut b, req::get(PaymentId(1)));
    let p = payment_of(&get);
    assert_eq!(
        (p.status, p.resolution_status),
        (PaymentStatus::Succeeded, ResolutionStatus::Known)
    );
    assert_eq!(charges_sent(&b).len(), 1);
}

#[test]
fn res_02_processing_known_while_the_platform_waits_for_the_upstream() {
    let mut b = Bench::default();
    let create = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert!(b.response(create).is_none());
    let get = call(&mut b, req::get(PaymentId(1)));
    let p = payment_of(&get);
    assert_eq!(
        (p.status, p.resolution_status),
        (PaymentStatus::Processing, ResolutionStatus::Known)
    );
    assert_eq!(p.failure, None);
    assert!(!p.next_action);
    b.upstream(Approve);
    assert_eq!(b.answered(create).status, 201);
}

#[test]
fn res_05_requires_action_known_with_next_action() {
    let mut b = Bench::default();
    let create = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(RequireAction);
    let r = b.answered(create).clone();
    assert_eq!(r.status, 201);
    assert_eq!(b.rule_of(create), Some(Rule::FirstExecution201));
    let p = payment_of(&r);
    assert_eq!(
        (p.status, p.resolution_status, p.next_action),
        (PaymentStatus::RequiresAction, ResolutionStatus::Known, true)
    );
    // The payer fails authentication: failed, known, with the attempt.
    b.payer_authenticates(AttemptId(1), false);
    b.advance(Millis::mins(1));
    b.upstream(Approve);
    let p = b.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(p.status, PaymentStatus::Failed);
    assert!(!p.next_action);
    assert_eq!(p.failure.unwrap().code, FailureCode::AuthenticationFailed);
    assert_eq!(b.acquirer.ledger.entries.len(), 0);
}

#[test]
fn res_06_terminal_statuses_are_known_and_failed_names_the_latest_attempt() {
    let mut b = Bench::default();
    let succeeded = paid(&mut b, "K1", "ORDER-001");
    let failed = declined(&mut b, "K2", "ORDER-002");
    let retry = b.send(req::confirm("K3", failed, 'B'));
    b.upstream(Decline);
    assert_eq!(b.answered(retry).status, 200);
    let canceled = declined(&mut b, "K4", "ORDER-003");
    call(&mut b, req::cancel("K5", canceled));
    let expired = call(
        &mut b,
        req::create_as(api_keys::M1_TEST, "K6", "ORDER-004", 100, "USD", None),
    );
    let expired = payment_of(&expired).id;
    let view = |b: &mut Bench, id| payment_of(&call(b, req::get(id)));
    // `failed` names the latest attempt (att_003, the Payment's second), not the first.
    let f = view(&mut b, failed);
    assert_eq!(
        (f.status, f.resolution_status),
        (PaymentStatus::Failed, ResolutionStatus::Known)
    );
    let failure = f.failure.expect("failure");
    assert_eq!(failure.attempt_id, AttemptId(3));
    assert_eq!(
        b.platform.payments()[&failed].latest_attempt(),
        Some(failure.attempt_id)
    );
    b.advance(b.platform.params().payment_ttl);
    let s = view(&mut b, succeeded);
    assert_eq!(
        (s.status, s.resolution_status),
        (PaymentStatus::Succeeded, ResolutionStatus::Known)
    );
    let c = view(&mut b, canceled);
    assert_eq!(
        (c.status, c.resolution_status),
        (PaymentStatus::Canceled, ResolutionStatus::Known)
    );
    let e = view(&mut b, expired);
    assert_eq!(
        (e.status, e.resolution_status),
        (PaymentStatus::Expired, ResolutionStatus::Known)
    );
    for status in [
        PaymentStatus::Succeeded,
        PaymentStatus::Failed,
        PaymentStatus::Canceled,
        PaymentStatus::Expired,
    ] {
        assert!(status.is_terminal() && !status.is_in_progress());
    }
}

#[test]
fn res_06_failed_lets_the_payer_change_card() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K1", "ORDER-001");
    let f = b.platform.payment_view(pay).unwrap();
    assert_eq!(f.failure.unwrap().attempt_id, AttemptId(1));
    let retry = b.send(req::confirm("K2", pay, 'B'));
    b.upstream(Approve);
    assert_eq!(
        payment_of(b.answered(retry)).status,
        PaymentStatus::Succeeded
    );
    assert_eq!(payment_of(b.answered(retry)).failure, None);
}

// ---- the synchronous wait and unknown results ------------------------------------------

#[test]
fn upstream_01_the_platform_waits_15_seconds_for_the_upstream_then_answers_202() {
    let mut b = Bench::default();
    let wait = b.platform.params().sync_wait;
    assert_eq!(wait, Millis::secs(15));
    let create = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.advance(Millis::ms(wait.0 - 1));
    assert!(b.response(create).is_none(), "still waiting");
    b.advance(Millis::ms(1));
    assert_eq!(b.answered(create).status, 202);
    assert_eq!(b.rule_of(create), Some(Rule::SyncWait));
    // An answer inside the wait is answered directly.
    let confirmable = b.send(req::create("K2", "ORDER-002", 10000, "USD", 'A'));
    b.drop_upstream(); // the first charge (still queued)
    b.advance(Millis::secs(14));
    b.upstream(Approve);
    assert_eq!(b.answered(confirmable).status, 201);
}

#[test]
fn unknown_02_a_202_may_hide_a_charge_that_was_made() {
    let mut b = Bench::default();
    let create = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(ApproveSilently);
    b.advance(Millis::secs(15));
    assert_eq!(b.answered(create).status, 202);
    assert_eq!(b.acquirer.ledger.captures_on(Card('A')), 1, "money moved");
    assert_eq!(
        payment_of(b.answered(create)).resolution_status,
        ResolutionStatus::NeedsQuery
    );
    // An upstream 5xx is no answer either: 202 at once, result unknown.
    let other = b.send(req::create("K2", "ORDER-002", 10000, "USD", 'A'));
    b.upstream(Fail);
    assert_eq!(b.answered(other).status, 202);
    assert_eq!(b.rule_of(other), Some(Rule::UnknownResult));
    let p = payment_of(b.answered(other));
    assert_eq!(
        (p.status, p.resolution_status),
        (PaymentStatus::Processing, ResolutionStatus::NeedsQuery)
    );
    // Verification settles both: one capture each at most.
    b.advance(Millis::mins(1));
    decide_all(&mut b, Approve);
    assert_eq!(
        b.platform.payment_view(PaymentId(1)).unwrap().status,
        PaymentStatus::Succeeded
    );
    let p2 = b.platform.payment_view(PaymentId(2)).unwrap();
    assert_eq!(p2.status, PaymentStatus::Failed);
    assert_eq!(p2.failure.unwrap().code, FailureCode::NotReceivedByUpstream);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
}

// ---- webhooks ----------------------------------------------------------------------------

#[test]
fn webhook_01_an_unacknowledged_event_is_redelivered_until_acknowledged() {
    // A-WEBHOOK-REDELIVERY: up to 3 re-deliveries, 1, 2 and 4 minutes apart; an ack stops them.
    let mut b = Bench::default();
    paid(&mut b, "K1", "ORDER-001");
    paid(&mut b, "K2", "ORDER-002");
    assert_eq!(b.webhooks.len(), 2, "one payment.succeeded each");
    let (unacked, acked) = (b.webhooks[0].id, b.webhooks[1].id);
    b.ack(acked);
    let mut redelivered = Vec::new();
    for minute in 1..=10u64 {
        let before = b.webhooks.len();
        b.advance(Millis::mins(1));
        for w in &b.webhooks[before..] {
            assert_eq!(
                w.object, b.webhooks[0].object,
                "a re-delivery repeats its event"
            );
            redelivered.push((minute, w.id, w.delivery));
        }
    }
    assert_eq!(
        redelivered,
        [(1, unacked, 1), (3, unacked, 2), (7, unacked, 3)]
    );
}

#[test]
fn webhook_01_versions_strictly_increase_and_one_version_is_one_view() {
    let mut b = Bench::default();
    // A busy life: authentication, success, refunds (one refused), a card retry, a cancel,
    // an expiry, a session's first confirm.
    let (p1, a1) = requiring_action(&mut b, "K1", "ORDER-001");
    b.payer_authenticates(a1, true);
    b.advance(Millis::mins(1));
    b.upstream(Approve);
    call(&mut b, req::refund("R1", p1, "R-001", 3000));
    b.upstream(Decline);
    call(&mut b, req::refund("R2", p1, "R-002", 3000));
    b.upstream_reply_lost(Approve);
    let p2 = declined(&mut b, "K2", "ORDER-002");
    let retry = b.send(req::confirm("K3", p2, 'B'));
    b.drop_upstream();
    b.advance(Millis::secs(15));
    assert_eq!(b.answered(retry).status, 202);
    decide_all(&mut b, Approve);
    b.advance(Millis::mins(2));
    decide_all(&mut b, Approve);
    let session = call(&mut b, req::session("K4", "ORDER-003", 100, "USD"));
    let p3 = session_of(&session).payment_id;
    let first_confirm = b.send(req::confirm("K5", p3, 'A'));
    b.upstream(Decline);
    assert_eq!(b.answered(first_confirm).status, 200);
    call(&mut b, req::cancel("K6", p3));
    let p4 = call(
        &mut b,
        req::create_as(api_keys::M1_TEST, "K7", "ORDER-004", 100, "USD", None),
    );
    let p4 = payment_of(&p4).id;
    b.advance(Millis::days(1)); // expiries, and every webhook re-delivery
    decide_all(&mut b, Approve);
    assert!(
        b.webhooks.iter().any(|w| w.delivery > 0),
        "re-deliveries happened"
    );

    // 1. First deliveries of one object carry strictly increasing versions, and the kind
    //    names the status they carry.
    let mut last: BTreeMap<String, u32> = BTreeMap::new();
    for w in b.webhooks.iter().filter(|w| w.delivery == 0) {
        let (object, status) = match &w.object {
            WebhookObject::Payment(p) => {
                (p.id.to_string(), format!("payment.{}", p.status.as_str()))
            }
            WebhookObject::Refund(r) => (r.id.to_string(), format!("refund.{}", r.status.as_str())),
        };
        assert_eq!(w.kind, status);
        let version = w.object.version();
        if let Some(previous) = last.insert(object.clone(), version) {
            assert!(version > previous, "{object}: v{version} after v{previous}");
        }
    }
    // 2. A re-delivery repeats its event exactly.
    for w in b.webhooks.iter().filter(|w| w.delivery > 0) {
        let original = b
            .webhooks
            .iter()
            .find(|o| o.id == w.id && o.delivery == 0)
            .expect("re-delivery of a delivered event");
        assert_eq!(original.object, w.object);
    }
    // 3. Everything the merchant was ever shown: one version is one view.
    let mut seen: BTreeMap<(PaymentId, u32), PaymentView> = BTreeMap::new();
    let mut shown: Vec<PaymentView> = b
        .webhooks
        .iter()
        .filter_map(|w| match &w.object {
            WebhookObject::Payment(p) => Some(p.clone()),
            WebhookObject::Refund(_) => None,
        })
        .collect();
    shown.extend(
        b.responses
            .values()
            .chain(b.undelivered.values())
            .filter_map(|(r, _)| r.payment().cloned()),
    );
    for id in [p1, p2, p3, p4] {
        shown.push(b.platform.payment_view(id).unwrap());
    }
    for view in shown {
        let key = (view.id, view.version);
        if let Some(other) = seen.insert(key, view.clone()) {
            assert_eq!(other, view, "{} v{} shown two ways", key.0, key.1);
        }
    }
    // 4. The latest webhook of each Payment is not newer than what a query shows.
    for id in [p1, p2, p3, p4] {
        let query = b.platform.payment_view(id).unwrap();
        assert!(last[&id.to_string()] <= query.version);
    }
}
