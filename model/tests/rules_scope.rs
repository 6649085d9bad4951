//! The platform's idempotency rules (平台的幂等规则) and retention (保留期): scope,
//! replay, conflict, concurrency, order-number reuse, safety-relevant parameters, card
//! data, checkout sessions, retention; and EFFECT-01 over all of them.

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::api_keys::{M1_LIVE, M1_TEST, M1_TEST_ROTATED, M2_TEST, rotated_key_spec};
use payhub_model::harness::Bench;
use payhub_model::platform::Route;
use payhub_model::*;

use AcquirerDecision::{Approve, Decline};

// ---- scope ---------------------------------------------------------------------------

#[test]
fn scope_01_method_and_path_are_part_of_the_scope() {
    let mut b = Bench::default();
    // The same key on create, on confirm of two Payments, on cancel and on refund:
    // five scopes, five executions, no conflict.
    let p1 = declined(&mut b, "K", "ORDER-001");
    let p2 = b.send(req::create("K2", "ORDER-002", 10000, "USD", 'A'));
    b.upstream(Decline);
    let p2 = payment_of(b.answered(p2)).id;
    let c1 = b.send(req::confirm("K", p1, 'B'));
    b.upstream(Approve);
    assert_eq!(b.answered(c1).status, 200, "confirm path ≠ create path");
    let c2 = b.send(req::confirm("K", p2, 'B'));
    b.upstream(Decline);
    assert_eq!(b.answered(c2).status, 200, "confirm of p2 ≠ confirm of p1");
    let x2 = call(&mut b, req::cancel("K", p2));
    assert_eq!(x2.status, 200);
    assert_eq!(payment_of(&x2).status, PaymentStatus::Canceled);
    let r1 = call(&mut b, req::refund("K", p1, "R-001", 100));
    assert_eq!(r1.status, 201);
    let routes: Vec<Route> = b
        .platform
        .records()
        .keys()
        .filter(|s| s.key == "K")
        .map(|s| s.route)
        .collect();
    assert_eq!(
        routes,
        vec![
            Route::CreatePayment,
            Route::Confirm(p1),
            Route::Confirm(p2),
            Route::Cancel(p2),
            Route::Refund
        ]
    );
    assert_eq!(charges_sent(&b).len(), 4);
}

#[test]
fn scope_01_merchants_do_not_share_keys_or_order_numbers() {
    let mut b = Bench::default();
    let m1 = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    let m2 = b.send(req::create_as(
        M2_TEST,
        "K",
        "ORDER-001",
        12000,
        "USD",
        Some('B'),
    ));
    b.upstream(Approve);
    assert_eq!(b.answered(m1).status, 201);
    assert_eq!(b.answered(m2).status, 201, "no conflict across merchants");
    assert_ne!(payment_of(b.answered(m1)).id, payment_of(b.answered(m2)).id);
    assert_eq!(b.platform.payments().len(), 2);
    assert_eq!(b.acquirer.ledger.entries.len(), 2);
}

#[test]
fn scope_02_test_and_live_are_independent() {
    let mut b = Bench::default();
    let test = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    let live = b.send(req::create_as(
        M1_LIVE,
        "K",
        "ORDER-001",
        10000,
        "USD",
        Some('A'),
    ));
    b.upstream(Approve);
    assert_eq!(b.answered(test).status, 201);
    assert_eq!(b.answered(live).status, 201, "same key in live is new");
    let (pt, pl) = (
        payment_of(b.answered(test)).id,
        payment_of(b.answered(live)).id,
    );
    assert_ne!(pt, pl);
    // Each environment sees only its own Payment.
    let q_test = call(&mut b, req::by_order("ORDER-001"));
    let q_live = call(
        &mut b,
        req::with_api_key(req::by_order("ORDER-001"), M1_LIVE),
    );
    assert_eq!(payment_of(&q_test).id, pt);
    assert_eq!(payment_of(&q_live).id, pl);
    // And a conflict in one does not show in the other.
    let conflict = call(&mut b, req::create("K", "ORDER-001", 99, "USD", 'A'));
    assert_error(&conflict, 409, ErrorCode::IdempotencyConflict);
    let replay_live = call(
        &mut b,
        req::create_as(M1_LIVE, "K", "ORDER-001", 10000, "USD", Some('A')),
    );
    assert_eq!(replay_live.status, 200);
    assert_eq!(payment_of(&replay_live).id, pl);
}

#[test]
fn scope_03_api_key_rotation_keeps_the_scope() {
    let mut b = Bench::default();
    let first = b.send_response_lost(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    assert!(b.response(first).is_none());
    // Rotation: issue the new key, revoke the old one.
    b.control(Control::IssueApiKey(rotated_key_spec()));
    b.control(Control::RevokeApiKey(M1_TEST));
    let old = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_error(&old, 401, ErrorCode::AuthenticationFailed);
    // The original key K, under the new API key: the same scope, the same Payment.
    let retry = call(
        &mut b,
        req::create_as(M1_TEST_ROTATED, "K", "ORDER-001", 10000, "USD", Some('B')),
    );
    assert_eq!(retry.status, 200);
    assert_eq!(payment_of(&retry).id, PaymentId(1));
    let conflict = call(
        &mut b,
        req::create_as(M1_TEST_ROTATED, "K", "ORDER-001", 1, "USD", Some('A')),
    );
    assert_error(&conflict, 409, ErrorCode::IdempotencyConflict);
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
}

/// SCOPE-04, the merchant's half of SCOPE-03: after rotation the original key replays the
/// original Payment; a key made afresh at rotation is no replay (the order number stops a
/// second Payment, but the answer is a conflict, not the object).
#[test]
fn scope_04_a_retry_with_the_original_key_after_rotation_replays_the_same_payment() {
    let mut b = Bench::default();
    let first = b.send_response_lost(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    assert!(b.response(first).is_none());
    b.control(Control::IssueApiKey(rotated_key_spec()));
    let original = call(
        &mut b,
        req::create_as(M1_TEST_ROTATED, "K", "ORDER-001", 10000, "USD", Some('A')),
    );
    assert_eq!(original.status, 200);
    assert_eq!(payment_of(&original).id, PaymentId(1));
    let fresh = b.send_with(
        req::create_as(M1_TEST_ROTATED, "K2", "ORDER-001", 10000, "USD", Some('A')),
        Branch::S4Conflict,
    );
    assert_error(b.answered(fresh), 409, ErrorCode::OrderNoConflict);
    assert_eq!(b.platform.payments().len(), 1);
    assert_eq!(charges_sent(&b).len(), 1);
}

/// SETTLE-01 is outside the model: its webhooks carry Payments and refunds only, no
/// settlement.* event (the match below stops compiling if another object is added).
#[test]
fn settle_01_webhooks_carry_payments_and_refunds_only() {
    let mut b = Bench::default();
    b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    b.send(req::refund("R", PaymentId(1), "R-1", 4000));
    b.upstream(Approve);
    assert!(b.webhooks.len() >= 2, "{:?}", b.webhooks);
    for w in &b.webhooks {
        let prefix = match w.object {
            WebhookObject::Payment(_) => "payment.",
            WebhookObject::Refund(_) => "refund.",
        };
        assert!(w.kind.starts_with(prefix), "{}", w.kind);
        assert!(!w.kind.starts_with("settlement."));
    }
}

// ---- replay ----------------------------------------------------------------------------

#[test]
fn replay_01_every_idempotent_endpoint_reuses_its_object_and_executes_nothing() {
    assert_eq!(Rule::ReplayReusesObject.ac(), Some("AC-014"));
    let mut b = Bench::default();
    let pay = declined(&mut b, "K-CREATE", "ORDER-001");
    let confirm = b.send(req::confirm("K-CONFIRM", pay, 'B'));
    b.upstream(Approve);
    assert_eq!(b.answered(confirm).status, 200);
    let refund = call(&mut b, req::refund("K-REFUND", pay, "R-001", 100));
    b.upstream(Approve);
    let session = call(&mut b, req::session("K-SESSION", "ORDER-002", 500, "EUR"));
    let p2 = session_of(&session).payment_id;
    let cancel = call(&mut b, req::cancel("K-CANCEL", p2));
    let before = effects(&b);
    let replays = [
        (
            req::create("K-CREATE", "ORDER-001", 10000, "USD", 'C'),
            ResourceId::Payment(pay),
        ),
        (
            req::confirm("K-CONFIRM", pay, 'C'),
            ResourceId::Payment(pay),
        ),
        (
            req::refund("K-REFUND", pay, "R-001", 100),
            ResourceId::Refund(refund_of(&refund).id),
        ),
        (
            req::session("K-SESSION", "ORDER-002", 500, "EUR"),
            ResourceId::Session(session_of(&session).id),
        ),
        (req::cancel("K-CANCEL", p2), ResourceId::Payment(p2)),
    ];
    for (request, resource) in replays {
        let r = call(&mut b, request.clone());
        assert_eq!(r.status, 200, "{request} → {r}");
        let got = match &r.body {
            ResponseBody::Payment(p) => ResourceId::Payment(p.id),
            ResponseBody::Refund(x) => ResourceId::Refund(x.id),
            ResponseBody::Session(s) => ResourceId::Session(s.id),
            _ => panic!("{r}"),
        };
        assert_eq!(got, resource, "{request}");
    }
    assert_eq!(payment_of(&cancel).status, PaymentStatus::Canceled);
    assert_eq!(effects(&b), before, "no replay executed anything");
    assert_eq!(b.acquirer.ledger.captures_on(Card('C')), 0);
}

#[test]
fn replay_02_replay_returns_the_latest_status_with_200() {
    let mut b = Bench::default();
    let (pay, attempt) = requiring_action(&mut b, "K", "ORDER-001");
    let early = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(early.status, 200);
    assert_eq!(payment_of(&early).status, PaymentStatus::RequiresAction);
    // The payer authenticates; the platform learns of it by its own query.
    b.payer_authenticates(attempt, true);
    b.advance(Millis::mins(1));
    b.upstream(Approve);
    let late = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(b.answered(late).status, 200);
    let p = payment_of(b.answered(late));
    assert_eq!((p.id, p.status), (pay, PaymentStatus::Succeeded));
    assert!(p.version > payment_of(&early).version);
    assert_eq!(b.rule_of(late), Some(Rule::ReplayLatestStatus200));
}

#[test]
fn replay_03_first_execution_of_a_create_answers_201() {
    assert_eq!(Rule::FirstExecution201.ac(), Some("AC-014"));
    let mut b = Bench::default();
    let with_card = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    assert_eq!(b.answered(with_card).status, 201);
    assert_eq!(b.rule_of(with_card), Some(Rule::FirstExecution201));
    let without_card = call(
        &mut b,
        req::create_as(M1_TEST, "K2", "ORDER-002", 10000, "USD", None),
    );
    assert_eq!(without_card.status, 201);
    assert_eq!(
        payment_of(&without_card).status,
        PaymentStatus::RequiresPaymentMethod
    );
    let refund = call(&mut b, req::refund("K3", PaymentId(1), "R-001", 100));
    assert_eq!(refund.status, 201);
    let session = call(&mut b, req::session("K4", "ORDER-003", 100, "USD"));
    assert_eq!(session.status, 201);
    // Confirm is not a create: its first execution answers 200 (S9).
    let confirm = b.send(req::confirm("K5", PaymentId(2), 'A'));
    b.upstream(Approve); // the refund, still queued
    b.upstream(Approve); // the charge of the confirm
    assert_eq!(b.answered(confirm).status, 200);
}

// ---- conflict ----------------------------------------------------------------------------

#[test]
fn conflict_01_same_key_conflicting_amount_currency_or_order_gives_409_original_unchanged() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K", "ORDER-001");
    let original = b.platform.payment_view(pay).unwrap();
    let before = effects(&b);
    for conflicting in [
        req::create("K", "ORDER-001", 12000, "USD", 'A'),
        req::create("K", "ORDER-001", 10000, "EUR", 'A'),
        req::create("K", "ORDER-002", 10000, "USD", 'A'),
    ] {
        let id = b.send(conflicting.clone());
        assert_error(b.answered(id), 409, ErrorCode::IdempotencyConflict);
        assert_eq!(
            b.rule_of(id),
            Some(Rule::IdempotencyConflict),
            "{conflicting}"
        );
    }
    assert_eq!(b.platform.payment_view(pay).unwrap(), original);
    assert_eq!(effects(&b), before);
    // A conflicting request in flight is a conflict too, not a concurrent replay.
    let in_flight = b.send(req::create("K2", "ORDER-009", 10000, "USD", 'A'));
    let clash = call(&mut b, req::create("K2", "ORDER-009", 1, "USD", 'A'));
    assert_error(&clash, 409, ErrorCode::IdempotencyConflict);
    b.upstream(Approve);
    assert_eq!(b.answered(in_flight).status, 201);
}

#[test]
fn safe_01_each_endpoint_compares_its_own_safety_parameters() {
    let mut b = Bench::default();
    let p1 = paid(&mut b, "K-P1", "ORDER-001");
    let p2 = paid(&mut b, "K-P2", "ORDER-002");
    let first = call(&mut b, req::refund("K", p1, "R-001", 100));
    assert_eq!(first.status, 201);
    b.upstream(Approve);
    // Refund: payment id, refund number and amount are compared.
    for conflicting in [
        req::refund("K", p1, "R-001", 200),
        req::refund("K", p1, "R-002", 100),
        req::refund("K", p2, "R-001", 100),
    ] {
        let r = call(&mut b, conflicting.clone());
        assert_error(&r, 409, ErrorCode::IdempotencyConflict);
    }
    // Checkout session: order number, amount and currency are compared.
    let s = call(&mut b, req::session("K-S", "ORDER-003", 700, "EUR"));
    assert_eq!(s.status, 201);
    for conflicting in [
        req::session("K-S", "ORDER-003", 701, "EUR"),
        req::session("K-S", "ORDER-003", 700, "USD"),
        req::session("K-S", "ORDER-004", 700, "EUR"),
    ] {
        let r = call(&mut b, conflicting.clone());
        assert_error(&r, 409, ErrorCode::IdempotencyConflict);
    }
    assert_eq!(refund_calls_sent(&b).len(), 1);
    assert_eq!(b.platform.sessions().len(), 1);
}

// ---- concurrency -------------------------------------------------------------------------

#[test]
fn conc_01_of_many_concurrent_same_key_requests_only_one_executes() {
    assert_eq!(Rule::ConcurrentOneExecutes.ac(), Some("AC-015"));
    let mut b = Bench::default();
    let executor = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    let waiters: Vec<RequestId> = ['B', 'C', 'D', 'E']
        .into_iter()
        .map(|card| {
            b.send_with(
                req::create("K", "ORDER-001", 10000, "USD", card),
                Branch::S5Wait,
            )
        })
        .collect();
    let rushed = b.send_with(
        req::create("K", "ORDER-001", 10000, "USD", 'F'),
        Branch::S5InProgress,
    );
    assert_error(b.answered(rushed), 409, ErrorCode::OperationInProgress);
    assert_eq!(
        charges_sent(&b).len(),
        1,
        "only the executor reached the upstream"
    );
    b.upstream(Approve);
    assert_eq!(b.answered(executor).status, 201);
    for w in waiters {
        assert_eq!(b.answered(w).status, 200);
        assert_eq!(payment_of(b.answered(w)).id, PaymentId(1));
    }
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
    assert_eq!(b.platform.payments().len(), 1);
}

#[test]
fn conc_02_a_waiter_gets_the_same_object_when_the_executor_answers_202() {
    let mut b = Bench::default();
    let executor = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.drop_upstream();
    // The waiter arrives 6 s later: its own wait would end at 16 s, after the 202 at 15 s.
    b.advance(Millis::secs(6));
    let waiter = b.send_with(
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
        Branch::S5Wait,
    );
    b.advance(Millis::secs(9));
    assert_eq!(b.answered(executor).status, 202);
    assert_eq!(b.answered(waiter).status, 200);
    assert_eq!(b.rule_of(waiter), Some(Rule::ConcurrentWaitSameObject));
    let p = payment_of(b.answered(waiter));
    assert_eq!(
        (p.id, p.status, p.resolution_status),
        (
            PaymentId(1),
            PaymentStatus::Processing,
            ResolutionStatus::NeedsQuery
        )
    );
}

#[test]
fn conc_03_wait_timeout_gives_409_operation_in_progress_and_nothing_executes() {
    let mut b = Bench::default();
    let executor = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    let waiter = b.send_with(
        req::create("K", "ORDER-001", 10000, "USD", 'B'),
        Branch::S5Wait,
    );
    b.advance(b.platform.params().concurrent_wait_timeout);
    let error = assert_error(b.answered(waiter), 409, ErrorCode::OperationInProgress);
    assert!(error.retryable);
    assert!(b.response(executor).is_none());
    assert_eq!(charges_sent(&b), vec![(AttemptId(1), Card('A'))]);
}

// ---- order numbers -----------------------------------------------------------------------

#[test]
fn order_01_new_key_same_order_never_creates_a_second_payment_in_either_branch() {
    for branch in BranchPoint::OrderNoReuse.alternatives() {
        let mut b = Bench::default();
        // Even while the first is still in flight.
        let first = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
        let second = b.send_with(req::create("K2", "ORDER-001", 10000, "USD", 'B'), branch);
        match branch {
            Branch::S4Conflict => {
                let e = assert_error(b.answered(second), 409, ErrorCode::OrderNoConflict);
                assert_eq!(
                    e.related_resource_id,
                    Some(ResourceId::Payment(PaymentId(1)))
                );
            }
            _ => {
                assert_eq!(b.answered(second).status, 200);
                assert_eq!(
                    payment_of(b.answered(second)).status,
                    PaymentStatus::Processing
                );
            }
        }
        assert_eq!(b.rule_of(second), Some(Rule::OrderNoNewKey));
        b.upstream(Approve);
        assert_eq!(b.answered(first).status, 201);
        assert_eq!(b.platform.payments().len(), 1, "{}", branch.as_str());
        assert_eq!(charges_sent(&b).len(), 1);
        assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
    }
}

#[test]
fn uniq_01_order_number_with_other_amount_and_new_key_is_409_order_no_conflict() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K1", "ORDER-001");
    let before = effects(&b);
    // Not a branch point: returning the existing object would misstate the amount.
    let other = req::create("K2", "ORDER-001", 12000, "USD", 'B');
    assert_eq!(b.platform.branch_point(b.now, &other), None);
    let id = b.send(other);
    let e = assert_error(b.answered(id), 409, ErrorCode::OrderNoConflict);
    assert_eq!(e.related_resource_id, Some(ResourceId::Payment(pay)));
    assert_eq!(b.rule_of(id), Some(Rule::UniqueOrderNo));
    assert_eq!(effects(&b), before);
    // The order number is per merchant and environment: live may use it.
    let live = b.send(req::create_as(
        M1_LIVE,
        "K2",
        "ORDER-001",
        12000,
        "USD",
        Some('B'),
    ));
    b.upstream(Approve);
    assert_eq!(b.answered(live).status, 201);
}

// ---- card data -------------------------------------------------------------------------

#[test]
fn card_01_card_is_not_compared_same_key_other_card_is_a_replay_not_a_conflict() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K", "ORDER-001");
    let replay = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'B'));
    assert_eq!(replay.status, 200);
    assert_eq!(payment_of(&replay).id, pay);
    // Also without any card.
    let bare = call(
        &mut b,
        req::create_as(M1_TEST, "K", "ORDER-001", 10000, "USD", None),
    );
    assert_eq!(bare.status, 200);
    let confirm = b.send(req::confirm("K-C", pay, 'C'));
    b.upstream(Decline);
    assert_eq!(b.answered(confirm).status, 200);
    let confirm_replay = call(&mut b, req::confirm("K-C", pay, 'D'));
    assert_eq!(confirm_replay.status, 200);
}

#[test]
fn card_03_replay_of_create_or_confirm_never_charges_the_new_card() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K", "ORDER-001");
    // Replaying the failed create with card B: the failed object, no charge.
    let replay = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'B'));
    assert_eq!(payment_of(&replay).status, PaymentStatus::Failed);
    let confirm = b.send(req::confirm("K-C", pay, 'C'));
    b.upstream(Decline);
    assert_eq!(
        payment_of(b.answered(confirm)).status,
        PaymentStatus::Failed
    );
    // Replaying the failed confirm with card D: the failed object, no charge.
    let replay = call(&mut b, req::confirm("K-C", pay, 'D'));
    assert_eq!(payment_of(&replay).status, PaymentStatus::Failed);
    assert_eq!(payment_of(&replay).attempt_count, 2);
    assert!(b.upstream_queue.is_empty());
    let cards: Vec<Card> = charges_sent(&b).into_iter().map(|(_, c)| c).collect();
    assert_eq!(cards, vec![Card('A'), Card('C')]);
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
    assert_eq!(b.acquirer.ledger.captures_on(Card('D')), 0);
}

// ---- checkout sessions -----------------------------------------------------------------

#[test]
fn uniq_03_checkout_sessions_of_one_order_share_one_payment() {
    let mut b = Bench::default();
    let s1 = call(&mut b, req::session("K1", "ORDER-001", 10000, "USD"));
    assert_eq!(s1.status, 201);
    let pay = session_of(&s1).payment_id;
    assert_eq!(
        b.platform.payment_view(pay).unwrap().status,
        PaymentStatus::RequiresPaymentMethod
    );
    let s1_replay = call(&mut b, req::session("K1", "ORDER-001", 10000, "USD"));
    assert_eq!(s1_replay.status, 200);
    assert_eq!(session_of(&s1_replay), session_of(&s1));
    // A create payment of the same order does not make a second Payment either.
    let create = b.send_with(
        req::create("K3", "ORDER-001", 10000, "USD", 'A'),
        Branch::S4Conflict,
    );
    assert_error(b.answered(create), 409, ErrorCode::OrderNoConflict);
    assert_eq!(b.platform.payments().len(), 1);
}

#[test]
fn cko_01_new_key_same_order_amount_currency_is_a_new_session_for_the_same_payment() {
    let mut b = Bench::default();
    let s1 = call(&mut b, req::session("K1", "ORDER-001", 10000, "USD"));
    // The old session has expired.
    b.advance(b.platform.params().session_ttl);
    let s2 = b.send(req::session("K2", "ORDER-001", 10000, "USD"));
    assert_eq!(b.answered(s2).status, 201, "not a conflict");
    assert_eq!(b.rule_of(s2), Some(Rule::CheckoutNewSession));
    let (s1, s2) = (session_of(&s1), session_of(b.answered(s2)));
    assert_ne!(s1.id, s2.id);
    assert_eq!(s1.payment_id, s2.payment_id);
    assert_eq!(b.platform.payments().len(), 1);
    assert_eq!(b.platform.sessions().len(), 2);
    // Same order, other amount: that is a conflict.
    let other = call(&mut b, req::session("K3", "ORDER-001", 9999, "USD"));
    let e = assert_error(&other, 409, ErrorCode::OrderNoConflict);
    assert_eq!(
        e.related_resource_id,
        Some(ResourceId::Payment(s1.payment_id))
    );
    // After a failed attempt the Payment is payable again: a new session is fine.
    let confirm = b.send(req::confirm("K4", s1.payment_id, 'A'));
    b.upstream(Decline);
    assert_eq!(b.answered(confirm).status, 200);
    let s3 = call(&mut b, req::session("K5", "ORDER-001", 10000, "USD"));
    assert_eq!(s3.status, 201);
    assert_eq!(session_of(&s3).payment_id, s1.payment_id);
}

// ---- retention ---------------------------------------------------------------------------

#[test]
fn ret_01_records_are_kept_7_days_then_removed() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K", "ORDER-001");
    let retention = b.platform.params().retention;
    assert_eq!(retention, Millis::days(7));
    b.advance(Millis::ms(retention.0 - 1));
    let replay = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
    assert_eq!(replay.status, 200, "still a replay just before 7 days");
    assert_eq!(b.platform.records().len(), 1);
    b.advance(Millis::ms(1));
    assert!(
        b.platform.records().is_empty(),
        "the record is gone after 7 days"
    );
    // The Payment itself is not: it is only the key that expired.
    assert!(b.platform.payment_view(pay).is_some());
}

#[test]
fn ret_02_after_retention_the_order_number_still_conflicts_and_never_charges_again() {
    for branch in BranchPoint::OrderNoReuse.alternatives() {
        let mut b = Bench::default();
        let pay = paid(&mut b, "K", "ORDER-001");
        b.advance(Millis::days(7));
        assert!(b.platform.records().is_empty());
        // The same key and order after the record expired: not new business.
        let same_key = req::create("K", "ORDER-001", 10000, "USD", 'B');
        assert_eq!(
            b.platform.branch_point(b.now, &same_key),
            Some(BranchPoint::OrderNoReuse)
        );
        let id = b.send_with(same_key, branch);
        match branch {
            Branch::S4Conflict => {
                let e = assert_error(b.answered(id), 409, ErrorCode::OrderNoConflict);
                assert_eq!(e.related_resource_id, Some(ResourceId::Payment(pay)));
            }
            _ => assert_eq!(payment_of(b.answered(id)).id, pay),
        }
        // Other amount, any key: a conflict, no branch.
        let other = call(&mut b, req::create("K9", "ORDER-001", 1, "USD", 'B'));
        assert_error(&other, 409, ErrorCode::OrderNoConflict);
        assert_eq!(b.platform.payments().len(), 1);
        assert_eq!(charges_sent(&b).len(), 1);
        assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
    }
}

// ---- one business effect -----------------------------------------------------------------

#[test]
fn effect_01_retries_of_every_kind_produce_one_business_effect() {
    let mut b = Bench::default();
    // Create: lost answer, 500, replay, concurrent, new key: one Payment, one capture.
    let first = b.send_answered_500(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream_reply_lost(Approve);
    // The waiter arrives late enough for its 10 s wait to outlast the 15 s 202.
    b.advance(Millis::secs(6));
    let waiter = b.send_with(
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
        Branch::S5Wait,
    );
    let rushed = b.send_with(
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
        Branch::S5InProgress,
    );
    b.advance(Millis::secs(9));
    assert_eq!(b.undelivered[&first].0.status, 202);
    assert_eq!(b.answered(waiter).status, 200);
    assert_eq!(b.answered(rushed).status, 409);
    for _ in 0..3 {
        let replay = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'A'));
        assert_eq!(replay.status, 200);
    }
    let new_key = b.send_with(
        req::create("K2", "ORDER-001", 10000, "USD", 'A'),
        Branch::S4ReturnExisting,
    );
    assert_eq!(b.answered(new_key).status, 200);
    b.advance(Millis::mins(1));
    b.upstream(Approve); // the platform's query finds the capture
    assert_eq!(
        b.platform.payment_view(PaymentId(1)).unwrap().status,
        PaymentStatus::Succeeded
    );
    // Refund: lost answer, replays: one refund paid out.
    let refund = b.send_response_lost(req::refund("KR", PaymentId(1), "R-001", 10000));
    b.upstream(Approve);
    for _ in 0..3 {
        let replay = call(&mut b, req::refund("KR", PaymentId(1), "R-001", 10000));
        assert_eq!(replay.status, 200);
    }
    assert_eq!(b.undelivered[&refund].0.status, 201);
    assert_eq!(b.platform.payments().len(), 1);
    assert_eq!(b.acquirer.ledger.captures_of(PaymentId(1)).count(), 1);
    assert_eq!(b.acquirer.ledger.refunds_of(RefundId(1)), 1);
    assert_eq!(b.acquirer.ledger.net_of(AttemptId(1)), (10000, 10000));
    assert_eq!(charges_sent(&b).len(), 1);
    assert_eq!(refund_calls_sent(&b).len(), 1);
}
