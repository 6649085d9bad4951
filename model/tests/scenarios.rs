//! S1–S13 of the contract (场景示例), request by request, with both branches where the
//! contract says "A or B" (S4, S5, S8). Each test is named for its scenario and the ID
//! of its main rule; it asserts the contract's status and error codes, the scenario's AC
//! number, and the invariants the acquirer's ledger and the platform's state must keep.

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::harness::Bench;
use payhub_model::*;

use AcquirerDecision::{Approve, Decline, Fail};

const K: &str = "K";

fn create_k(card: char) -> ApiRequest {
    req::create(K, "ORDER-001", 10000, "USD", card)
}

// ---- S1 · Network timeout, no response received · AC-014 ------------------------------

#[test]
fn s1_replay_01_timeout_then_retry_with_k_returns_same_payment_200_no_second_charge() {
    assert_eq!(Rule::ReplayReusesObject.ac(), Some("AC-014"));
    assert_eq!(Rule::ReplayLatestStatus200.ac(), Some("AC-014"));
    let mut b = Bench::default();
    // POST /v1/payments  Idempotency-Key: K  → (timeout, no response)
    let first = b.send_response_lost(create_k('A'));
    b.upstream(Approve);
    assert!(b.response(first).is_none(), "the merchant saw a timeout");
    assert_eq!(b.undelivered[&first].0.status, 201);
    // POST /v1/payments  Idempotency-Key: K  → 200 {"id":"pay_demo_001","status":"succeeded",…}
    let retry = b.send(create_k('A'));
    let r = b.answered(retry).clone();
    assert_eq!(r.status, 200, "{r}");
    let p = payment_of(&r);
    assert_eq!(p.id, PaymentId(1));
    assert_eq!(p.id.to_string(), "pay_demo_001");
    assert_eq!(p.status, PaymentStatus::Succeeded);
    assert_eq!(b.rule_of(retry), Some(Rule::ReplayLatestStatus200));
    // No duplicate charge.
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.captures_of(p.id).count(), 1);
    assert_eq!(b.platform.payments().len(), 1);
}

#[test]
fn s1_replay_02_retry_after_the_lost_202_returns_latest_status_then_succeeds_once() {
    let mut b = Bench::default();
    let first = b.send_response_lost(create_k('A'));
    // The acquirer captures, but its answer is lost: the platform answers 202 after its
    // synchronous wait, and that answer is lost too (client timeout 20 s > 15 s).
    b.upstream_reply_lost(Approve);
    b.advance(Millis::secs(15));
    assert_eq!(b.undelivered[&first].0.status, 202);
    let retry = b.send(create_k('A'));
    let p = payment_of(b.answered(retry));
    assert_eq!(b.answered(retry).status, 200);
    assert_eq!(
        (p.status, p.resolution_status),
        (PaymentStatus::Processing, ResolutionStatus::NeedsQuery)
    );
    // The platform verifies with the upstream; the next retry sees the final status.
    b.advance(Millis::mins(1));
    b.upstream(Approve); // the query
    let again = b.send(create_k('A'));
    assert_eq!(
        payment_of(b.answered(again)).status,
        PaymentStatus::Succeeded
    );
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.captures_of(PaymentId(1)).count(), 1);
}

// ---- S2 · 5xx received · AC-069 -----------------------------------------------------------

#[test]
fn s2_unknown_01_500_after_acceptance_retry_with_k_returns_the_original_object() {
    assert_eq!(Rule::FiveXxMayHaveExecuted.ac(), Some("AC-069"));
    let mut b = Bench::default();
    // POST /v1/payments  Idempotency-Key: K  → 500 {"error":{"code":"internal_error","retryable":true},…}
    let first = b.send_answered_500(create_k('A'));
    let r = b.answered(first).clone();
    let error = assert_error(&r, 500, ErrorCode::InternalError);
    assert!(error.retryable);
    // The platform had accepted it: the charge went out; its answer is lost.
    b.upstream_reply_lost(Approve);
    b.advance(Millis::secs(15));
    // POST /v1/payments  Idempotency-Key: K  → 200 {"id":"pay_demo_001","status":"processing",…}
    let retry = b.send(create_k('A'));
    let r = b.answered(retry).clone();
    assert_eq!(r.status, 200, "{r}");
    let p = payment_of(&r);
    assert_eq!((p.id, p.status), (PaymentId(1), PaymentStatus::Processing));
    // Or query by order number: the same Payment.
    let q = call(&mut b, req::by_order("ORDER-001"));
    assert_eq!(payment_of(&q).id, PaymentId(1));
    // It executed once.
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
    assert_eq!(b.platform.payments().len(), 1);
}

#[test]
fn s2_unknown_01_500_before_acceptance_retry_with_k_executes_once() {
    let mut b = Bench::default();
    let before = effects(&b);
    let first = b.gateway_500(create_k('A'));
    assert_error(b.answered(first), 500, ErrorCode::InternalError);
    assert_eq!(effects(&b), before, "the platform never saw it");
    let retry = b.send(create_k('A'));
    b.upstream(Approve);
    assert_eq!(b.answered(retry).status, 201);
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
}

// ---- S3 · Same key, different amount · AC-016 -----------------------------------------

#[test]
fn s3_conflict_01_same_key_different_amount_gives_409() {
    assert_eq!(Rule::IdempotencyConflict.ac(), Some("AC-016"));
    let mut b = Bench::default();
    // {"amount":10000,…} → 201
    let first = b.send(req::create(K, "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    assert_eq!(b.answered(first).status, 201);
    let original = b.platform.payment_view(PaymentId(1)).unwrap();
    let before = effects(&b);
    // {"amount":12000,…} → 409 {"error":{"code":"idempotency_conflict",…}}
    let second = b.send(req::create(K, "ORDER-001", 12000, "USD", 'A'));
    assert_error(b.answered(second), 409, ErrorCode::IdempotencyConflict);
    assert_eq!(b.rule_of(second), Some(Rule::IdempotencyConflict));
    // The original transaction is unchanged.
    assert_eq!(b.platform.payment_view(PaymentId(1)).unwrap(), original);
    assert_eq!(original.amount, 10000);
    assert_eq!(effects(&b), before);
}

// ---- S4 · Different key, same order number · AC-017 -----------------------------------

#[test]
fn s4_order_01_new_key_same_order_conflict_branch_gives_409_order_no_conflict() {
    assert_eq!(Rule::OrderNoNewKey.ac(), Some("AC-017"));
    let mut b = Bench::default();
    let first = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    assert_eq!(b.answered(first).status, 201);
    let k2 = req::create("K2", "ORDER-001", 10000, "USD", 'B');
    // The contract allows two answers: the request cannot be handled without a branch.
    assert_eq!(
        b.platform.branch_point(b.now, &k2),
        Some(BranchPoint::OrderNoReuse)
    );
    let before = effects(&b);
    assert_eq!(
        b.try_send(k2.clone(), None),
        Err(StepError::BranchRequired(BranchPoint::OrderNoReuse))
    );
    assert_eq!(effects(&b), before, "a refused step changes nothing");
    // → 409 {"error":{"code":"order_no_conflict","related_resource_id":"pay_demo_001",…}}
    let second = b.send_with(k2, Branch::S4Conflict);
    let error = assert_error(b.answered(second), 409, ErrorCode::OrderNoConflict);
    assert_eq!(
        error.related_resource_id,
        Some(ResourceId::Payment(PaymentId(1)))
    );
    assert_eq!(b.rule_of(second), Some(Rule::OrderNoNewKey));
    // No second Payment, no charge on card B, K2 not bound.
    assert_eq!(effects(&b), before);
    assert_eq!(b.platform.payments().len(), 1);
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
    // What the merchant should do: query the existing Payment.
    let q = call(&mut b, req::by_order("ORDER-001"));
    assert_eq!(payment_of(&q).id, PaymentId(1));
}

#[test]
fn s4_order_01_new_key_same_order_return_existing_branch_gives_200_existing_payment() {
    let mut b = Bench::default();
    let first = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    assert_eq!(b.answered(first).status, 201);
    let second = b.send_with(
        req::create("K2", "ORDER-001", 10000, "USD", 'B'),
        Branch::S4ReturnExisting,
    );
    let r = b.answered(second).clone();
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(payment_of(&r).id, PaymentId(1));
    assert_eq!(payment_of(&r).status, PaymentStatus::Succeeded);
    assert_eq!(b.rule_of(second), Some(Rule::OrderNoNewKey));
    // A-S4-BIND: K2 now names the same Payment, so its replay agrees without a branch.
    let replay = b.send(req::create("K2", "ORDER-001", 10000, "USD", 'B'));
    assert_eq!(b.answered(replay).status, 200);
    assert_eq!(payment_of(b.answered(replay)).id, PaymentId(1));
    assert_eq!(b.platform.payments().len(), 1);
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
}

// ---- S5 · Same key, concurrent · AC-015 -------------------------------------------------

#[test]
fn s5_conc_02_concurrent_same_key_wait_branch_returns_the_same_object() {
    assert_eq!(Rule::ConcurrentWaitSameObject.ac(), Some("AC-015"));
    let mut b = Bench::default();
    // Server A: POST /v1/payments  Idempotency-Key: K  (executes, waits for the upstream)
    let a = b.send(create_k('A'));
    assert!(b.response(a).is_none());
    assert_eq!(
        b.try_send(create_k('A'), None),
        Err(StepError::BranchRequired(BranchPoint::ConcurrentSameKey))
    );
    // Server B: the same request at the same time, waits for A.
    let server_b = b.send_with(create_k('A'), Branch::S5Wait);
    assert!(b.response(server_b).is_none(), "B waits for A");
    b.upstream(Approve);
    // A → 201 pay_demo_001, B → 200 pay_demo_001
    assert_eq!(b.answered(a).status, 201);
    assert_eq!(b.answered(server_b).status, 200);
    assert_eq!(payment_of(b.answered(a)).id, PaymentId(1));
    assert_eq!(payment_of(b.answered(server_b)).id, PaymentId(1));
    assert_eq!(b.rule_of(server_b), Some(Rule::ConcurrentWaitSameObject));
    // Only one request executed.
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
}

#[test]
fn s5_conc_03_concurrent_same_key_in_progress_branch_gives_409_then_retry_later_with_k() {
    assert_eq!(Rule::ConcurrentWaitTimeout.ac(), Some("AC-015"));
    let mut b = Bench::default();
    let a = b.send(create_k('A'));
    let server_b = b.send_with(create_k('A'), Branch::S5InProgress);
    // B → 409 operation_in_progress (retryable), at once.
    let error = assert_error(b.answered(server_b), 409, ErrorCode::OperationInProgress);
    assert!(error.retryable);
    assert_eq!(b.rule_of(server_b), Some(Rule::ConcurrentWaitTimeout));
    b.upstream(Approve);
    assert_eq!(b.answered(a).status, 201);
    // Retry later with K: the same object.
    let later = b.send(create_k('A'));
    assert_eq!(b.answered(later).status, 200);
    assert_eq!(payment_of(b.answered(later)).id, PaymentId(1));
    assert_eq!(charges_sent(&b).len(), 1);
}

#[test]
fn s5_conc_03_wait_that_times_out_gives_409_operation_in_progress() {
    let mut b = Bench::default();
    let a = b.send(create_k('A'));
    let server_b = b.send_with(create_k('A'), Branch::S5Wait);
    let wait = b.platform.params().concurrent_wait_timeout;
    b.advance(Millis::ms(wait.0 - 1));
    assert!(b.response(server_b).is_none(), "still waiting");
    b.advance(Millis::ms(1));
    assert_error(b.answered(server_b), 409, ErrorCode::OperationInProgress);
    assert_eq!(b.rule_of(server_b), Some(Rule::ConcurrentWaitTimeout));
    assert!(b.response(a).is_none(), "A still executes");
    b.upstream(Approve);
    assert_eq!(b.answered(a).status, 201);
    let later = b.send(create_k('A'));
    assert_eq!(
        payment_of(b.answered(later)).status,
        PaymentStatus::Succeeded
    );
    assert_eq!(charges_sent(&b).len(), 1);
}

// ---- S6 · Same key, repeated sequentially 10 times · AC-014 ---------------------------

#[test]
fn s6_replay_01_effect_02_same_key_ten_times_one_payment_one_charge_one_billing() {
    let mut b = Bench::default();
    let first = b.send(create_k('A'));
    b.upstream(Approve);
    assert_eq!(b.answered(first).status, 201);
    let billed = payment_of(b.answered(first)).fee_rate_bps;
    for _ in 2..=10 {
        let again = b.send(create_k('A'));
        assert_eq!(b.answered(again).status, 200);
        assert_eq!(payment_of(b.answered(again)).id, PaymentId(1));
        // One billing: every answer shows the fee of the one execution.
        assert_eq!(payment_of(b.answered(again)).fee_rate_bps, billed);
        assert_eq!(b.rule_of(again), Some(Rule::ReplayLatestStatus200));
    }
    // Only one Payment, one charge, one billing.
    assert_eq!(b.platform.payments().len(), 1);
    assert_eq!(b.platform.attempts().len(), 1);
    assert_eq!(b.platform.records().len(), 1);
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
    assert!(b.upstream_queue.is_empty());
}

// ---- S7 · New card information sent on retry · AC-018 ---------------------------------

#[test]
fn s7_card_03_retry_with_card_b_reuses_the_original_and_never_charges_card_b() {
    assert_eq!(Rule::CardReplayNotCharged.ac(), Some("AC-018"));
    assert_eq!(Rule::CardNotCompared.ac(), Some("AC-018"));
    let mut b = Bench::default();
    // (card A) → (timeout)
    let first = b.send_response_lost(create_k('A'));
    b.upstream(Approve);
    assert!(b.response(first).is_none());
    // (card B) → 200 result of the original operation
    let retry = b.send(create_k('B'));
    let r = b.answered(retry).clone();
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(payment_of(&r).id, PaymentId(1));
    assert_eq!(payment_of(&r).status, PaymentStatus::Succeeded);
    // Card B will not be charged: it never even reached the upstream.
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
    assert_eq!(b.acquirer.ledger.captures_on(Card('A')), 1);
    assert!(charges_sent(&b).iter().all(|(_, card)| *card == Card('A')));
}

#[test]
fn s7_card_03_retry_with_card_b_while_the_original_is_in_flight_never_charges_card_b() {
    let mut b = Bench::default();
    let first = b.send_response_lost(create_k('A'));
    let retry = b.send_with(create_k('B'), Branch::S5Wait);
    b.upstream(Approve);
    assert!(b.response(first).is_none());
    assert_eq!(b.answered(retry).status, 200);
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
    assert_eq!(charges_sent(&b), vec![(AttemptId(1), Card('A'))]);
}

// ---- S8 · confirm with a new key while processing · AC-027 ----------------------------

#[test]
fn s8_attempt_01_confirm_new_key_while_processing_payment_in_progress_branch_gives_409() {
    assert_eq!(Rule::ConfirmWhileProcessing.ac(), Some("AC-027"));
    let mut b = Bench::default();
    let create = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(
        b.platform.payment_view(PaymentId(1)).unwrap().status,
        PaymentStatus::Processing
    );
    let confirm = req::confirm("K2", PaymentId(1), 'B');
    assert_eq!(
        b.platform.branch_point(b.now, &confirm),
        Some(BranchPoint::ConfirmWhileProcessing)
    );
    let before = effects(&b);
    // POST /v1/payments/pay_demo_001/confirm  Idempotency-Key: K2
    //   → 409 {"error":{"code":"payment_in_progress","related_resource_id":"pay_demo_001",…}}
    let second = b.send_with(confirm, Branch::S8PaymentInProgress);
    let error = assert_error(b.answered(second), 409, ErrorCode::PaymentInProgress);
    assert_eq!(
        error.related_resource_id,
        Some(ResourceId::Payment(PaymentId(1)))
    );
    assert_eq!(b.rule_of(second), Some(Rule::ConfirmWhileProcessing));
    // No new charge, no new attempt.
    assert_eq!(effects(&b), before);
    b.upstream(Approve);
    assert_eq!(b.answered(create).status, 201);
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
}

#[test]
fn s8_attempt_01_confirm_new_key_while_processing_original_status_branch_gives_200() {
    let mut b = Bench::default();
    let create = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
    let before = effects(&b);
    let second = b.send_with(
        req::confirm("K2", PaymentId(1), 'B'),
        Branch::S8OriginalStatus,
    );
    let r = b.answered(second).clone();
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(payment_of(&r).status, PaymentStatus::Processing);
    assert_eq!(payment_of(&r).attempt_count, 1);
    assert_eq!(b.rule_of(second), Some(Rule::ConfirmWhileProcessing));
    // A-S8-NOBIND: nothing executed and K2 is not bound.
    assert_eq!(effects(&b), before);
    b.upstream(Approve);
    assert_eq!(b.answered(create).status, 201);
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
}

// ---- S9 · Change card after a definitive failure · AC-026 -----------------------------

#[test]
fn s9_attempt_02_card_retry_after_failure_new_key_keeps_payment_and_fee_snapshot() {
    assert_eq!(Rule::CardRetryAfterFailure.ac(), Some("AC-026"));
    assert_eq!(Rule::RetryKeepsPaymentAndFee.ac(), Some("AC-026"));
    let mut b = Bench::default();
    let create = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Decline);
    assert_eq!(b.answered(create).status, 201);
    // GET /v1/payments/pay_demo_001 → 200 {"status":"failed","failure":{"code":"card_declined",…}}
    let get = call(&mut b, req::get(PaymentId(1)));
    assert_eq!(get.status, 200);
    let failed = payment_of(&get);
    assert_eq!(failed.status, PaymentStatus::Failed);
    let failure = failed.failure.expect("failure");
    assert_eq!(failure.code, FailureCode::CardDeclined);
    assert_eq!(failure.attempt_id, AttemptId(1));
    // POST /v1/payments/pay_demo_001/confirm  Idempotency-Key: K3 (card B)
    //   → 200 {"status":"succeeded","attempt_count":2,…}
    let retry = b.send(req::confirm("K3", PaymentId(1), 'B'));
    b.upstream(Approve);
    let r = b.answered(retry).clone();
    assert_eq!(r.status, 200, "{r}");
    let p = payment_of(&r);
    assert_eq!(p.id, PaymentId(1));
    assert_eq!(p.status, PaymentStatus::Succeeded);
    assert_eq!(p.attempt_count, 2);
    assert_eq!(p.fee_rate_bps, failed.fee_rate_bps);
    assert_eq!(b.platform.payments().len(), 1);
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 1);
    assert_eq!(b.acquirer.ledger.captures_on(Card('A')), 0);
}

// ---- S10 · 429 received (no AC number) -------------------------------------------------

#[test]
fn s10_rate_01_429_not_executed_then_retry_after_2_seconds_with_k_gives_201() {
    assert_eq!(Rule::RateLimited.ac(), None);
    let mut b = Bench::default();
    b.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: true,
    });
    let before = effects(&b);
    // POST /v1/payments  Idempotency-Key: K → 429  Retry-After: 2
    let first = b.send(create_k('A'));
    let r = b.answered(first).clone();
    assert_error(&r, 429, ErrorCode::RateLimited);
    assert_eq!(r.retry_after_s, Some(2));
    assert_eq!(b.rule_of(first), Some(Rule::RateLimited));
    // This request was not executed: no record, no Payment, nothing upstream.
    assert_eq!(effects(&b), before);
    b.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: false,
    });
    // (wait 2 seconds)
    b.advance(Millis::secs(u64::from(r.retry_after_s.unwrap())));
    // POST /v1/payments  Idempotency-Key: K → 201 pay_demo_001
    let retry = b.send(create_k('A'));
    b.upstream(Approve);
    assert_eq!(b.answered(retry).status, 201);
    assert_eq!(payment_of(b.answered(retry)).id, PaymentId(1));
    assert_eq!(charges_sent(&b).len(), 1);
}

// ---- S11 · Timeout after submitting a refund · AC-033 ---------------------------------

#[test]
fn s11_refund_02_refund_timeout_retry_with_k_gives_the_same_refund_and_one_upstream_refund() {
    assert_eq!(Rule::RefundReplaySameRefund.ac(), Some("AC-033"));
    assert_eq!(Rule::RefundTimeoutNoSecondRefund.ac(), Some("AC-033"));
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    // POST /v1/refunds  Idempotency-Key: K  {"merchant_refund_no":"R-001",…} → (timeout)
    let first = b.send_response_lost(req::refund(K, pay, "R-001", 10000));
    assert!(b.response(first).is_none());
    // The acquirer refunds, but its answer is lost.
    b.upstream_reply_lost(Approve);
    // POST /v1/refunds  Idempotency-Key: K  {"merchant_refund_no":"R-001",…} → 200 ref_demo_001
    let retry = b.send(req::refund(K, pay, "R-001", 10000));
    let r = b.answered(retry).clone();
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(refund_of(&r).id, RefundId(1));
    assert_eq!(refund_of(&r).id.to_string(), "ref_demo_001");
    assert_eq!(b.rule_of(retry), Some(Rule::RefundReplaySameRefund));
    // The platform keeps verifying: it queries, never refunds again.
    b.advance(Millis::secs(15));
    let query = b.upstream(Approve);
    assert_eq!(
        query,
        UpstreamCall::QueryRefund {
            refund: RefundId(1)
        }
    );
    let q = call(&mut b, req::by_refund_no("R-001"));
    assert_eq!(refund_of(&q).status, RefundStatus::Succeeded);
    assert_eq!(refund_calls_sent(&b), vec![RefundId(1)]);
    assert_eq!(b.acquirer.ledger.refunds_of(RefundId(1)), 1);
    assert_eq!(b.platform.refunds().len(), 1);
}

// ---- S12 · Cancel returns 202 · AC-029 ---------------------------------------------------

#[test]
fn s12_cancel_01_cancel_of_requires_action_upstream_unconfirmed_202_keeps_status() {
    assert_eq!(Rule::Cancel202KeepsStatus.ac(), Some("AC-029"));
    let mut b = Bench::default();
    let (pay, _) = requiring_action(&mut b, "K1", "ORDER-007");
    let view_before = b.platform.payment_view(pay).unwrap();
    let webhooks_before = b.webhooks.len();
    // POST /v1/payments/pay_demo_001/cancel  Idempotency-Key: K → 202 {"status":"requires_action",…}
    let cancel = b.send(req::cancel(K, pay));
    let call_sent = b.upstream(Fail); // the upstream could not confirm
    assert_eq!(
        call_sent,
        UpstreamCall::CancelCharge {
            attempt: AttemptId(1)
        }
    );
    let r = b.answered(cancel).clone();
    assert_eq!(r.status, 202, "{r}");
    assert_eq!(payment_of(&r).status, PaymentStatus::RequiresAction);
    assert_eq!(b.rule_of(cancel), Some(Rule::Cancel202KeepsStatus));
    // The original status is kept: the Payment is exactly as before, no event.
    assert_eq!(b.platform.payment_view(pay).unwrap(), view_before);
    assert_eq!(b.webhooks.len(), webhooks_before);
    // It keeps verifying; later payment.canceled arrives and a query gives the final status.
    b.advance(Millis::mins(1));
    let again = b.upstream(Approve);
    assert_eq!(
        again,
        UpstreamCall::CancelCharge {
            attempt: AttemptId(1)
        }
    );
    assert!(
        b.webhooks
            .iter()
            .any(|w| w.kind == "payment.canceled" && w.delivery == 0)
    );
    let q = call(&mut b, req::get(pay));
    assert_eq!(payment_of(&q).status, PaymentStatus::Canceled);
    assert_eq!(b.acquirer.ledger.entries.len(), 0);
}

#[test]
fn s12_cancel_01_cancel_call_lost_202_after_the_synchronous_wait_state_unchanged() {
    let mut b = Bench::default();
    let (pay, _) = requiring_action(&mut b, "K1", "ORDER-007");
    let view_before = b.platform.payment_view(pay).unwrap();
    let cancel = b.send(req::cancel(K, pay));
    b.drop_upstream();
    b.advance(Millis::secs(15));
    let r = b.answered(cancel).clone();
    assert_eq!(r.status, 202, "{r}");
    assert_eq!(payment_of(&r).status, PaymentStatus::RequiresAction);
    assert_eq!(b.platform.payment_view(pay).unwrap(), view_before);
}

// ---- S13 · Channel suspends new transactions (no AC number) ---------------------------

#[test]
fn s13_rate_04_channel_paused_503_no_payment_then_retry_later_with_k_gives_201() {
    assert_eq!(Rule::ChannelPaused.ac(), None);
    let mut b = Bench::default();
    b.control(Control::SetChannelPaused { on: true });
    let before = effects(&b);
    // POST /v1/payments  Idempotency-Key: K → 503 {"error":{"code":"temporarily_unavailable","retryable":true},…}
    let first = b.send(create_k('A'));
    let error = assert_error(b.answered(first), 503, ErrorCode::TemporarilyUnavailable);
    assert!(error.retryable);
    // The response does not state the internal reason.
    assert_eq!((error.field, error.related_resource_id), (None, None));
    assert_eq!(b.rule_of(first), Some(Rule::ChannelPaused));
    // Not accepted: no Payment, no charge, no record.
    assert_eq!(effects(&b), before);
    assert!(b.platform.payments().is_empty());
    // (later)
    b.control(Control::SetChannelPaused { on: false });
    b.advance(Millis::mins(5));
    let retry = b.send(create_k('A'));
    b.upstream(Approve);
    assert_eq!(b.answered(retry).status, 201);
    assert_eq!(payment_of(b.answered(retry)).id, PaymentId(1));
    assert_eq!(charges_sent(&b).len(), 1);
}
