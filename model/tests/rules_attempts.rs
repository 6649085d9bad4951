//! Retrying with a different card (换卡重试), one unfinished attempt (UNIQ-02),
//! confirm while processing (S8), cancel (S12), expiry and manual review.

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::api_keys::M1_TEST;
use payhub_model::harness::Bench;
use payhub_model::*;

use AcquirerDecision::{Approve, Decline, Fail};

// ---- one unfinished attempt, confirm while processing ---------------------------------

#[test]
fn uniq_02_never_a_second_unfinished_attempt_in_either_s8_branch() {
    for branch in BranchPoint::ConfirmWhileProcessing.alternatives() {
        let mut b = Bench::default();
        let create = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
        let before = effects(&b);
        for (k, card) in [("K2", 'B'), ("K3", 'C')] {
            let id = b.send_with(req::confirm(k, PaymentId(1), card), branch);
            assert!(b.response(id).is_some(), "answered at once");
        }
        assert_eq!(effects(&b), before, "{}", branch.as_str());
        let unfinished = b
            .platform
            .attempts()
            .values()
            .filter(|a| a.status.is_unfinished())
            .count();
        assert_eq!(unfinished, 1);
        b.upstream(Approve);
        assert_eq!(b.answered(create).status, 201);
        assert_eq!(charges_sent(&b).len(), 1);
    }
}

/// The card-retry section: a new-key confirm while requires_action "will be rejected (409
/// payment_in_progress)"; S8's "or the original status" is about processing only, so
/// there is no branch here (A-S8-CARD-RETRY).
#[test]
fn attempt_01_confirm_with_new_key_while_requires_action_is_409_payment_in_progress() {
    let mut b = Bench::default();
    let (pay, attempt) = requiring_action(&mut b, "K1", "ORDER-001");
    let before = effects(&b);
    let confirm = req::confirm("K2", pay, 'B');
    assert_eq!(b.platform.branch_point(b.now, &confirm), None);
    let id = b.send(confirm);
    let e = assert_error(b.answered(id), 409, ErrorCode::PaymentInProgress);
    assert_eq!(e.related_resource_id, Some(ResourceId::Payment(pay)));
    assert!(!e.retryable, "A-RETRYABLE: wait or query, not a retry");
    // A branch given anyway is not taken: still the 409.
    let id = b.send_with(req::confirm("K3", pay, 'B'), Branch::S8OriginalStatus);
    assert_error(b.answered(id), 409, ErrorCode::PaymentInProgress);
    assert_eq!(effects(&b), before, "no new charge");
    // The payer completes authentication: card A is charged, never card B.
    b.payer_authenticates(attempt, true);
    b.advance(Millis::mins(1));
    b.upstream(Approve);
    assert_eq!(
        b.platform.payment_view(pay).unwrap().status,
        PaymentStatus::Succeeded
    );
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 0);
    assert_eq!(b.acquirer.ledger.captures_on(Card('A')), 1);
}

// ---- card retry ------------------------------------------------------------------------

#[test]
fn attempt_02_card_retry_only_after_failed() {
    let mut b = Bench::default();
    // Succeeded: no new attempt.
    let paid_id = paid(&mut b, "K1", "ORDER-001");
    let r = call(&mut b, req::confirm("K2", paid_id, 'B'));
    assert_error(&r, 422, ErrorCode::PaymentNotConfirmable);
    // Canceled: no new attempt.
    let canceled = declined(&mut b, "K3", "ORDER-002");
    assert_eq!(call(&mut b, req::cancel("K4", canceled)).status, 200);
    let r = call(&mut b, req::confirm("K5", canceled, 'B'));
    assert_error(&r, 422, ErrorCode::PaymentNotConfirmable);
    // Failed: a new attempt.
    let failed = declined(&mut b, "K6", "ORDER-003");
    let id = b.send(req::confirm("K7", failed, 'B'));
    assert_eq!(b.rule_of(id), None, "it executes: waits for the upstream");
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 200);
    assert_eq!(b.rule_of(id), Some(Rule::CardRetryNewKey));
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 1);
    assert_eq!(b.acquirer.ledger.entries.len(), 2);
}

#[test]
fn attempt_03_card_retry_needs_a_new_key_and_the_card_again() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K1", "ORDER-001");
    let confirm = b.send(req::confirm("K2", pay, 'B'));
    b.upstream(Decline);
    assert_eq!(
        payment_of(b.answered(confirm)).status,
        PaymentStatus::Failed
    );
    // The same key again is a replay of the failed attempt, not a new one.
    let before = effects(&b);
    let same = call(&mut b, req::confirm("K2", pay, 'C'));
    assert_eq!(same.status, 200);
    assert_eq!(payment_of(&same).attempt_count, 2);
    assert_eq!(effects(&b), before);
    // Without the card: 400 on `card`.
    let no_card = ApiRequest {
        api_key: M1_TEST,
        idempotency_key: Some("K3".into()),
        endpoint: Endpoint::ConfirmPayment {
            payment_id: pay,
            body: Json::Parsed(ConfirmBody { card: None }),
        },
    };
    let r = call(&mut b, no_card);
    assert_400(&r, Field::Card);
    assert_eq!(effects(&b), before);
    // A new key with the card: a third attempt.
    let third = b.send(req::confirm("K3", pay, 'C'));
    b.upstream(Approve);
    assert_eq!(payment_of(b.answered(third)).attempt_count, 3);
    assert_eq!(b.acquirer.ledger.captures_on(Card('C')), 1);
}

#[test]
fn attempt_04_card_retry_after_expires_at_is_422_payment_expired() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K1", "ORDER-001");
    let expires_at = b.platform.payment_view(pay).unwrap().expires_at;
    assert_eq!(
        expires_at,
        Millis::ZERO.after(b.platform.params().payment_ttl)
    );
    // Just before expires_at: accepted.
    b.advance(Millis::ms(expires_at.0 - 1));
    let ok = b.send(req::confirm("K2", pay, 'B'));
    b.upstream(Decline);
    assert_eq!(b.answered(ok).status, 200);
    // At expires_at: the Payment expires and no new attempt is allowed.
    b.advance(Millis::ms(1));
    let view = b.platform.payment_view(pay).unwrap();
    assert_eq!(view.status, PaymentStatus::Expired);
    let before = effects(&b);
    let id = b.send(req::confirm("K3", pay, 'C'));
    assert_error(b.answered(id), 422, ErrorCode::PaymentExpired);
    assert_eq!(b.rule_of(id), Some(Rule::CardRetryBeforeExpiry));
    assert_eq!(effects(&b), before);
    assert_eq!(b.acquirer.ledger.captures_on(Card('C')), 0);
}

#[test]
fn attempt_05_at_most_three_attempts_per_payment() {
    let mut b = Bench::default();
    assert_eq!(b.platform.params().attempts_max, 3);
    let pay = declined(&mut b, "K1", "ORDER-001");
    for (k, card) in [("K2", 'B'), ("K3", 'C')] {
        let id = b.send(req::confirm(k, pay, card));
        b.upstream(Decline);
        assert_eq!(b.answered(id).status, 200);
    }
    assert_eq!(b.platform.payment_view(pay).unwrap().attempt_count, 3);
    let before = effects(&b);
    let id = b.send(req::confirm("K4", pay, 'D'));
    assert_error(b.answered(id), 422, ErrorCode::AttemptsExhausted);
    assert_eq!(b.rule_of(id), Some(Rule::AttemptsMax));
    assert_eq!(effects(&b), before);
    assert_eq!(charges_sent(&b).len(), 3);
}

#[test]
fn attempt_06_new_attempt_keeps_the_payment_and_the_fee_snapshot_after_a_rate_change() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K1", "ORDER-001");
    let snapshot = b.platform.payment_view(pay).unwrap().fee_rate_bps;
    assert_eq!(snapshot, b.platform.params().fee_rate_bps);
    b.control(Control::SetFeeRate { bps: 450 });
    let id = b.send(req::confirm("K2", pay, 'B'));
    b.upstream(Approve);
    let p = payment_of(b.answered(id));
    assert_eq!(p.id, pay);
    assert_eq!(
        p.fee_rate_bps, snapshot,
        "A-FEE-SNAPSHOT: the rate at creation"
    );
    assert_eq!(p.merchant_order_no, "ORDER-001");
    assert_eq!(b.platform.payments().len(), 1);
    // A new Payment takes the new rate.
    let other = paid(&mut b, "K3", "ORDER-002");
    assert_eq!(b.platform.payment_view(other).unwrap().fee_rate_bps, 450);
}

#[test]
fn attempt_06_first_confirm_of_a_requires_payment_method_payment_is_a_new_version() {
    let mut b = Bench::default();
    let created = call(
        &mut b,
        req::create_as(M1_TEST, "K1", "ORDER-001", 10000, "USD", None),
    );
    let before = payment_of(&created);
    assert_eq!(before.status, PaymentStatus::RequiresPaymentMethod);
    let id = b.send(req::confirm("K2", before.id, 'A'));
    let during = b.platform.payment_view(before.id).unwrap();
    assert_eq!(during.status, PaymentStatus::Processing);
    assert!(
        during.version > before.version,
        "a new status is a new version (WEBHOOK-01)"
    );
    b.upstream(Approve);
    assert_eq!(payment_of(b.answered(id)).attempt_count, 1);
}

// ---- expiry ------------------------------------------------------------------------------

#[test]
fn expiry_01_a_processing_payment_keeps_being_verified_after_expires_at_and_may_succeed() {
    let mut b = Bench::default();
    let create = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream_reply_lost(Approve); // captured; the answer is lost
    let expires_at = b.platform.payment_view(PaymentId(1)).unwrap().expires_at;
    // Every query of the first 25 hours is lost.
    b.advance(Millis::hours(25));
    drop_all(&mut b);
    assert!(b.now > expires_at);
    assert_eq!(b.answered(create).status, 202);
    let view = b.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(view.status, PaymentStatus::Processing, "not expired");
    // The platform still verifies, and the payment succeeds after expires_at.
    b.advance(Millis::hours(1));
    let query = b.upstream(Approve);
    assert_eq!(
        query,
        UpstreamCall::QueryCharge {
            attempt: AttemptId(1)
        }
    );
    let view = b.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(view.status, PaymentStatus::Succeeded);
    assert_eq!(b.acquirer.ledger.entries.len(), 1);
    assert_eq!(b.rule_of(create), Some(Rule::SyncWait));
}

// ---- cancel ------------------------------------------------------------------------------

#[test]
fn cancel_01_cancel_without_evidence_is_202_and_the_payment_may_still_succeed() {
    let mut b = Bench::default();
    let (pay, attempt) = requiring_action(&mut b, "K1", "ORDER-001");
    let cancel = b.send(req::cancel("K2", pay));
    b.upstream(Fail);
    assert_eq!(b.answered(cancel).status, 202);
    assert_eq!(b.rule_of(cancel), Some(Rule::Cancel202KeepsStatus));
    // Meanwhile the payer authenticates: money moves, and the platform says so.
    b.payer_authenticates(attempt, true);
    b.advance(Millis::mins(1));
    b.upstream(Approve); // the repeated cancel finds the charge captured
    let q = call(&mut b, req::get(pay));
    assert_eq!(payment_of(&q).status, PaymentStatus::Succeeded);
    assert_eq!(b.acquirer.ledger.captures_on(Card('A')), 1);
    // A replay of the cancel is a replay: the latest status, 200, nothing new.
    let replay = call(&mut b, req::cancel("K2", pay));
    assert_eq!(replay.status, 200);
    assert_eq!(payment_of(&replay).status, PaymentStatus::Succeeded);
}

#[test]
fn cancel_01_cancel_with_upstream_evidence_is_200_canceled() {
    let mut b = Bench::default();
    // The charge never reached the acquirer.
    let create = b.send(req::create("K1", "ORDER-001", 10000, "USD", 'A'));
    b.drop_upstream();
    let cancel = b.send(req::cancel("K2", PaymentId(1)));
    let sent = b.upstream(Approve);
    assert_eq!(
        sent,
        UpstreamCall::CancelCharge {
            attempt: AttemptId(1)
        }
    );
    let r = b.answered(cancel).clone();
    assert_eq!(r.status, 200);
    assert_eq!(payment_of(&r).status, PaymentStatus::Canceled);
    assert_eq!(
        payment_of(b.answered(create)).status,
        PaymentStatus::Canceled
    );
    // The void holds: the acquirer refuses the reference from now on.
    assert!(b.acquirer.voided.contains(&AttemptId(1)));
    assert_eq!(b.acquirer.ledger.entries.len(), 0);
}

// ---- manual review ---------------------------------------------------------------------

#[test]
fn res_03_manual_review_after_the_window_requery_every_24h_never_failed_automatically() {
    let mut b = Bench::default();
    let window = b.platform.params().auto_query_window;
    assert_eq!(b.platform.params().manual_review_requery, Millis::hours(24));
    b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.drop_upstream(); // the charge is lost
    // Every query in the window fails (upstream 5xx): still needs_query.
    b.advance(Millis::ms(window.0 - 1));
    decide_all(&mut b, Fail);
    let view = b.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(
        (view.status, view.resolution_status),
        (PaymentStatus::Processing, ResolutionStatus::NeedsQuery)
    );
    // Past the window: manual_review, at the next query.
    b.advance(b.platform.params().verify_interval);
    decide_all(&mut b, Fail);
    let view = b.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(
        (view.status, view.resolution_status),
        (PaymentStatus::Processing, ResolutionStatus::ManualReview)
    );
    assert!(
        b.webhooks
            .iter()
            .any(|w| matches!(&w.object, WebhookObject::Payment(p)
                if p.resolution_status == ResolutionStatus::ManualReview))
    );
    // From now on one query every 24 hours, for days, and never `failed`.
    let t_review = b.now;
    for day in 1..=5 {
        let queries = charge_queries_sent(&b);
        b.advance(Millis::ms(Millis::hours(24).0 - Millis::mins(2).0));
        assert_eq!(charge_queries_sent(&b), queries, "day {day}: not yet");
        b.advance(Millis::mins(2));
        assert_eq!(charge_queries_sent(&b), queries + 1, "day {day}: one query");
        decide_all(&mut b, Fail);
        let view = b.platform.payment_view(PaymentId(1)).unwrap();
        assert_eq!(view.status, PaymentStatus::Processing);
        assert_eq!(view.resolution_status, ResolutionStatus::ManualReview);
    }
    assert!(b.now >= t_review.after(Millis::days(5)));
    assert!(
        !b.webhooks.iter().any(|w| w.kind == "payment.failed"),
        "never judged failed without the upstream"
    );
    assert_eq!(charges_sent(&b).len(), 1, "and never charged again");
}

/// A-MANUAL-REVIEW-END: with `manual_review_until = 3d` the daily re-query ends three
/// days after the charge; the Payment stays in manual_review, never failed.
#[test]
fn res_03_manual_review_requery_ends_where_manual_review_until_says() {
    let mut b = Bench::new(PlatformParams {
        manual_review_until: Some(Millis::days(3)),
        ..PlatformParams::default()
    });
    b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.drop_upstream();
    let mut last = 0;
    for _ in 0..(24 * 6) {
        b.advance(Millis::hours(1));
        decide_all(&mut b, Fail);
        let n = charge_queries_sent(&b);
        if n > last {
            last = n;
            assert!(b.now <= Millis::days(3), "a query at {}", b.now);
        }
    }
    assert!(last > 0);
    let view = b.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(view.resolution_status, ResolutionStatus::ManualReview);
    assert_eq!(view.status, PaymentStatus::Processing);
}

#[test]
fn res_03_manual_review_turns_failed_only_on_an_upstream_decline() {
    let mut b = Bench::default();
    b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream_reply_lost(Decline); // declined, but the answer is lost
    b.advance(Millis::hours(2));
    drop_all(&mut b); // and so is every query
    let view = b.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(view.resolution_status, ResolutionStatus::ManualReview);
    assert_eq!(view.status, PaymentStatus::Processing);
    b.advance(Millis::hours(24));
    b.upstream(Approve); // the daily query gets through: the acquirer says declined
    let view = b.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(
        (view.status, view.resolution_status),
        (PaymentStatus::Failed, ResolutionStatus::Known)
    );
    assert_eq!(view.failure.unwrap().code, FailureCode::CardDeclined);
}
