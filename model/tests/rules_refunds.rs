//! Refunds: S11 (AC-033), refund-number uniqueness, and its retention.

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::api_keys::{M1_LIVE, M2_TEST};
use payhub_model::harness::Bench;
use payhub_model::*;

use AcquirerDecision::{Approve, Decline, Fail};

#[test]
fn refund_01_lost_refund_is_verified_by_queries_and_never_sent_twice() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    let id = b.send_response_lost(req::refund("K", pay, "R-001", 10000));
    b.drop_upstream(); // the refund call never reaches the acquirer
    // Hours of verification: the platform queries, it never refunds again.
    b.advance(Millis::hours(3));
    decide_all(&mut b, Approve);
    b.advance(Millis::days(2));
    decide_all(&mut b, Fail);
    let refund = b.platform.refund_view(RefundId(1)).unwrap();
    assert_eq!(refund.status, RefundStatus::Processing);
    assert_eq!(refund.resolution_status, ResolutionStatus::ManualReview);
    assert_eq!(refund_calls_sent(&b), vec![RefundId(1)]);
    assert!(
        b.upstream_sent
            .iter()
            .filter(|c| matches!(c, UpstreamCall::QueryRefund { .. }))
            .count()
            > 10
    );
    assert_eq!(b.acquirer.ledger.refunds_of(RefundId(1)), 0);
    // Retrying with K returns the same refund, it does not re-send it either.
    let retry = call(&mut b, req::refund("K", pay, "R-001", 10000));
    assert_eq!(refund_of(&retry).id, RefundId(1));
    assert_eq!(refund_calls_sent(&b).len(), 1);
    assert_eq!(b.undelivered[&id].0.status, 201);
}

#[test]
fn refund_01_lost_answer_of_an_executed_refund_is_found_by_query() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    b.send(req::refund("K", pay, "R-001", 4000));
    b.upstream_reply_lost(Approve);
    b.advance(b.platform.params().sync_wait);
    let query = b.upstream(Approve);
    assert_eq!(
        query,
        UpstreamCall::QueryRefund {
            refund: RefundId(1)
        }
    );
    let r = b.platform.refund_view(RefundId(1)).unwrap();
    assert_eq!(
        (r.status, r.resolution_status),
        (RefundStatus::Succeeded, ResolutionStatus::Known)
    );
    assert_eq!(b.acquirer.ledger.refunds_of(RefundId(1)), 1);
    assert_eq!(refund_calls_sent(&b).len(), 1);
    assert!(
        b.webhooks
            .iter()
            .any(|w| w.kind == "refund.succeeded" && w.delivery == 0)
    );
}

#[test]
fn refund_02_refund_retried_with_its_key_is_the_same_refund_200() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    let first = call(&mut b, req::refund("K", pay, "R-001", 3000));
    assert_eq!(first.status, 201);
    let processing = call(&mut b, req::refund("K", pay, "R-001", 3000));
    assert_eq!(processing.status, 200);
    assert_eq!(refund_of(&processing).id, refund_of(&first).id);
    assert_eq!(refund_of(&processing).status, RefundStatus::Processing);
    b.upstream(Approve);
    let id = b.send(req::refund("K", pay, "R-001", 3000));
    assert_eq!(b.answered(id).status, 200);
    assert_eq!(refund_of(b.answered(id)).status, RefundStatus::Succeeded);
    assert_eq!(b.rule_of(id), Some(Rule::RefundReplaySameRefund));
    assert_eq!(b.acquirer.ledger.refunds_of(RefundId(1)), 1);
    assert_eq!(b.platform.refunds().len(), 1);
}

#[test]
fn refund_03_refunds_never_add_up_to_more_than_was_captured() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    assert_eq!(
        call(&mut b, req::refund("K1", pay, "R-001", 6000)).status,
        201
    );
    let before = effects(&b);
    let over = b.send(req::refund("K2", pay, "R-002", 4001));
    let e = assert_error(b.answered(over), 422, ErrorCode::RefundAmountExceeded);
    assert_eq!(e.field, Some(Field::Amount));
    assert_eq!(b.rule_of(over), Some(Rule::RefundNotBeyondCaptured));
    assert_eq!(effects(&b), before);
    // A refused refund gives its amount back to the Payment.
    b.upstream(Decline);
    assert_eq!(
        b.platform.refund_view(RefundId(1)).unwrap().status,
        RefundStatus::Failed
    );
    let again = b.send(req::refund("K2", pay, "R-002", 10000));
    b.upstream(Approve);
    assert_eq!(b.answered(again).status, 201);
    let view = b.platform.payment_view(pay).unwrap();
    assert_eq!(view.amount_refunded, 10000);
    let (captured, refunded) = b.acquirer.ledger.net_of(AttemptId(1));
    assert!(refunded <= captured);
    assert_eq!((captured, refunded), (10000, 10000));
    let more = call(&mut b, req::refund("K3", pay, "R-003", 1));
    assert_error(&more, 422, ErrorCode::RefundAmountExceeded);
}

#[test]
fn uniq_04_refund_number_is_unique_per_merchant_and_environment() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    let first = call(&mut b, req::refund("K1", pay, "R-001", 1000));
    b.upstream(Approve);
    let before = effects(&b);
    // A new key with the same refund number, Payment and amount: no second refund; the
    // existing one or a conflict (A-REFUND-NO-BRANCH).
    let reuse = req::refund("K2", pay, "R-001", 1000);
    assert_eq!(
        b.platform.branch_point(b.now, &reuse),
        Some(BranchPoint::RefundNoReuse)
    );
    let id = b.send_with(reuse, Branch::RefundNoConflict);
    let e = assert_error(b.answered(id), 409, ErrorCode::RefundNoConflict);
    assert_eq!(
        e.related_resource_id,
        Some(ResourceId::Refund(refund_of(&first).id))
    );
    assert_eq!(b.rule_of(id), Some(Rule::UniqueRefundNo));
    assert_eq!(effects(&b), before);
    let id = b.send_with(
        req::refund("K3", pay, "R-001", 1000),
        Branch::RefundNoExisting,
    );
    assert_eq!(b.answered(id).status, 200);
    assert_eq!(refund_of(b.answered(id)).id, refund_of(&first).id);
    // The existing-object answer binds K3 (as A-S4-BIND): its replay is the same refund.
    let replay = call(&mut b, req::refund("K3", pay, "R-001", 1000));
    assert_eq!(
        (replay.status, refund_of(&replay).id),
        (200, refund_of(&first).id)
    );
    // Another amount under the used number always conflicts (A-REFUND-NO-PARAMS).
    let other = req::refund("K4", pay, "R-001", 500);
    assert_eq!(b.platform.branch_point(b.now, &other), None);
    let id = b.send(other);
    assert_error(b.answered(id), 409, ErrorCode::RefundNoConflict);
    // Only K3's record is new: one refund, sent once.
    assert_eq!(b.platform.refunds().len(), 1);
    assert_eq!(b.acquirer.ledger.refunds_of(RefundId(1)), 1);
    // Other merchants and environments have their own numbers.
    let live_pay = b.send(req::create_as(
        M1_LIVE,
        "K",
        "ORDER-001",
        500,
        "USD",
        Some('A'),
    ));
    b.upstream(Approve);
    let live_pay = payment_of(b.answered(live_pay)).id;
    let live = call(
        &mut b,
        req::with_api_key(req::refund("K2", live_pay, "R-001", 500), M1_LIVE),
    );
    assert_eq!(live.status, 201);
    let m2_pay = b.send(req::create_as(
        M2_TEST,
        "K",
        "ORDER-001",
        500,
        "USD",
        Some('A'),
    ));
    b.upstream(Approve); // the live refund
    b.upstream(Approve); // merchant 2's charge
    let m2_pay = payment_of(b.answered(m2_pay)).id;
    let m2 = call(
        &mut b,
        req::with_api_key(req::refund("K2", m2_pay, "R-001", 500), M2_TEST),
    );
    assert_eq!(m2.status, 201);
}

#[test]
fn ret_03_after_retention_the_refund_number_still_conflicts() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    let first = call(&mut b, req::refund("K", pay, "R-001", 1000));
    b.upstream(Approve);
    b.advance(Millis::days(7));
    assert!(b.platform.records().is_empty(), "the keys have expired");
    let before = effects(&b);
    // The original key after retention meets the refund number like a new key: the
    // contract's "no special handling needed" reads as either answer (A-REFUND-NO-BRANCH).
    for key in ["K", "K-NEW"] {
        let id = b.send_with(
            req::refund(key, pay, "R-001", 1000),
            Branch::RefundNoConflict,
        );
        let e = assert_error(b.answered(id), 409, ErrorCode::RefundNoConflict);
        assert_eq!(
            e.related_resource_id,
            Some(ResourceId::Refund(refund_of(&first).id))
        );
    }
    assert_eq!(effects(&b), before);
    let id = b.send_with(
        req::refund("K", pay, "R-001", 1000),
        Branch::RefundNoExisting,
    );
    assert_eq!(b.answered(id).status, 200);
    assert_eq!(refund_of(b.answered(id)).id, refund_of(&first).id);
    assert_eq!(b.platform.refunds().len(), 1);
    assert_eq!(b.acquirer.ledger.refunds_of(RefundId(1)), 1);
    // The merchant can still find it by its number.
    let q = call(&mut b, req::by_refund_no("R-001"));
    assert_eq!(refund_of(&q).id, RefundId(1));
}
