//! The reference client, bullet by bullet of the contract. Each test carries the tag of
//! the rule it shows (`retry_02_…` for RETRY-02). Tests named `…_with_platform` run the
//! client against the real platform through `ClientBench`; the others feed responses by
//! hand through `Solo` to pin exact times.

mod client_bench;
mod solo;

use client_bench::{ClientBench, Fate, Sent};
use payhub_model::api::req;
use payhub_model::api_keys::M1_TEST;
use payhub_model::client::*;
use payhub_model::*;
use solo::{Solo, only_send, sends};

const ORDER: &str = "ORDER-001";

fn pay(order: &str, card: char) -> Command {
    Command::PayOrder {
        order: order.into(),
        amount: 10_000,
        currency: "USD".into(),
        card: Card(card),
    }
}

fn key(request: &ApiRequest) -> &str {
    request.idempotency_key.as_deref().expect("a keyed request")
}

fn posts(b: &ClientBench) -> Vec<Sent> {
    b.sent()
        .into_iter()
        .filter(|s| s.request.endpoint.method() == Method::Post)
        .collect()
}

/// The Idempotency-Keys of every POST sent, in order.
fn post_keys(b: &ClientBench) -> Vec<String> {
    posts(b)
        .iter()
        .map(|s| key(&s.request).to_owned())
        .collect()
}

fn gets(b: &ClientBench) -> Vec<Sent> {
    b.sent()
        .into_iter()
        .filter(|s| s.request.endpoint.method() == Method::Get)
        .collect()
}

fn decisions_of(outputs: &[ClientOutput]) -> Vec<(Decision, Rule)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            ClientOutput::Decision { decision, rule, .. } => Some((decision.clone(), *rule)),
            _ => None,
        })
        .collect()
}

fn has_decision(outputs: &[ClientOutput], wanted: &Decision, rule: Rule) -> bool {
    decisions_of(outputs)
        .iter()
        .any(|(d, r)| d == wanted && *r == rule)
}

fn order(b: &ClientBench) -> &OrderRecord {
    b.db.order(ORDER).expect("the order exists")
}

fn retry_at(outputs: &[ClientOutput]) -> Option<(u32, Millis)> {
    decisions_of(outputs)
        .into_iter()
        .find_map(|(d, _)| match d {
            Decision::RetryScheduled { try_no, at } => Some((try_no, at)),
            _ => None,
        })
}

/// The create of `handle` is answered 201 failed (version 2); the payer changes card (B).
fn declined_then_card_retry(s: &mut Solo, handle: Handle) -> Vec<ClientOutput> {
    let failed = solo::payment(1, ORDER, PaymentStatus::Failed, ResolutionStatus::Known, 2);
    s.respond(handle, solo::with_payment(201, failed));
    s.command(Command::RetryWithCard {
        order: ORDER.into(),
        card: Card('B'),
    })
}

fn processing(version: u32) -> PaymentView {
    solo::payment(
        1,
        ORDER,
        PaymentStatus::Processing,
        ResolutionStatus::NeedsQuery,
        version,
    )
}

fn succeeded(version: u32) -> PaymentView {
    solo::payment(
        1,
        ORDER,
        PaymentStatus::Succeeded,
        ResolutionStatus::Known,
        version,
    )
}

// ---- GEN: keys ---------------------------------------------------------------------

#[test]
fn gen_01_deterministic_keys_for_create_card_retry_and_refund_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Decline);
    assert_eq!(order(&b).state(), OrderState::Failed);
    b.command(
        0,
        Command::RetryWithCard {
            order: ORDER.into(),
            card: Card('B'),
        },
    );
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(order(&b).state(), OrderState::Paid);
    b.command(
        0,
        Command::RefundOrder {
            order: ORDER.into(),
            refund: "REFUND-001".into(),
            amount: 4_000,
        },
    );
    let keys = post_keys(&b);
    assert_eq!(
        keys,
        [
            "payment.create:ORDER-001:1",
            "payment.confirm:ORDER-001:2",
            "refund.create:REFUND-001:1"
        ]
    );
    let persisted: Vec<Rule> = b
        .decisions()
        .into_iter()
        .filter(|(_, _, _, d, _)| matches!(d, Decision::KeyPersisted { .. }))
        .map(|(_, _, _, _, r)| r)
        .collect();
    assert_eq!(
        persisted,
        [
            Rule::DeterministicKeys,
            Rule::SequenceOnlyForNewSubmission,
            Rule::DeterministicKeys
        ]
    );
    assert_eq!(b.bench.acquirer.ledger.captures_on(Card('B')), 1);
    assert_eq!(b.bench.acquirer.ledger.captures_on(Card('A')), 0);
}

#[test]
fn gen_01_two_servers_compute_the_same_key_and_one_payment_results_with_platform() {
    // S5: the payer's "pay" reaches two servers of the merchant; both send the same key.
    let mut b = ClientBench::new([Policy::reference(), Policy::reference()]);
    b.branches
        .insert(BranchPoint::ConcurrentSameKey, Branch::S5InProgress);
    b.command(0, pay(ORDER, 'A'));
    b.command(1, pay(ORDER, 'A'));
    let sent = posts(&b);
    assert_eq!(sent.len(), 2);
    assert_eq!(key(&sent[0].request), key(&sent[1].request));
    assert_eq!(sent[1].rule, Rule::DeterministicKeys);
    // Server 1 got 409 operation_in_progress: it retries later with the same key (S5).
    let (_, server, _, decision, rule) = b.decisions().last().cloned().unwrap();
    assert_eq!(server, 1);
    assert!(matches!(
        decision,
        Decision::RetryScheduled { try_no: 2, .. }
    ));
    assert_eq!(rule, Rule::RetryBackoff);
    b.upstream(AcquirerDecision::Approve);
    b.advance(Millis::secs(5));
    assert_eq!(order(&b).state(), OrderState::Paid);
    assert_eq!(b.bench.platform.payments().len(), 1);
    assert_eq!(b.bench.acquirer.ledger.entries.len(), 1);
    // The payer clicking again on a paid order starts nothing.
    b.command(1, pay(ORDER, 'A'));
    assert_eq!(posts(&b).len(), 2, "no third submission");
}

#[test]
fn gen_02_sequence_increments_only_for_a_new_business_submission() {
    let mut s = Solo::new(Policy::reference());
    let (h1, r1, _) = only_send(&s.pay(ORDER, 'A'));
    s.respond(h1, solo::error(ErrorCode::InternalError, None));
    let (h2, r2, _) = only_send(&s.wake_next());
    assert_eq!(key(&r2), key(&r1), "a retry is not a new submission");
    let out = declined_then_card_retry(&mut s, h2);
    let (h3, r3, _) = only_send(&out);
    assert_eq!(key(&r3), "payment.confirm:ORDER-001:2");
    assert!(has_decision(
        &out,
        &Decision::KeyPersisted {
            key: "payment.confirm:ORDER-001:2".into(),
            seq: 2
        },
        Rule::SequenceOnlyForNewSubmission
    ));
    s.network_error(h3);
    let (_, r4, _) = only_send(&s.wake_next());
    assert_eq!(key(&r4), "payment.confirm:ORDER-001:2");
    assert_eq!(s.db.order(ORDER).unwrap().submission.seq, 2);
}

#[test]
fn gen_03_keys_carry_no_card_or_personal_data_and_the_db_only_the_card_label() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'Z'));
    b.upstream(AcquirerDecision::Approve);
    for sent in posts(&b) {
        let k = key(&sent.request);
        assert!(!k.contains('Z'), "{k}");
        assert_eq!(k, keys::derived(KeyPurpose::CreatePayment, ORDER, 1));
    }
    // An order number carrying an e-mail would carry it into the key: refused.
    b.command(0, pay("jane@example.com", 'Z'));
    let (_, _, _, refused, rule) = b.decisions().last().cloned().unwrap();
    assert_eq!(
        refused,
        Decision::Refused {
            reason: Refusal::InvalidOrder
        }
    );
    assert_eq!(rule, Rule::NoSensitiveDataInKeys);
    assert_eq!(posts(&b).len(), 1);
    // The database keeps the opaque card label of the current submission, nothing else.
    let json = serde_json::to_value(&b.db).unwrap();
    let text = json.to_string();
    assert_eq!(text.matches("\"card\"").count(), 1, "{text}");
    assert_eq!(json["orders"][ORDER]["submission"]["card"], "Z");
}

#[test]
fn gen_04_random_key_is_persisted_before_sending_and_read_back_with_platform() {
    let mut b = ClientBench::one(Policy::reference_random());
    b.fates.push_back(Fate::NetworkError);
    b.command(0, pay(ORDER, 'A'));
    let stored = order(&b).submission.key.clone().expect("persisted");
    assert_eq!(stored.len(), 36, "a UUID: {stored}");
    let persisted = b
        .decisions()
        .into_iter()
        .find(|(_, _, _, d, _)| matches!(d, Decision::KeyPersisted { .. }))
        .unwrap();
    assert_eq!(persisted.4, Rule::RandomKeyPersistedFirst);
    // The retry after the network error reads the key back.
    b.advance(Millis::secs(2));
    // A crash while the retry waits for the upstream; the new process finds the Payment
    // by order number (RETRY-04) and sends no new create.
    b.crash(0);
    b.restart(0);
    b.upstream(AcquirerDecision::Approve);
    let keys = post_keys(&b);
    assert_eq!(keys.len(), 2);
    assert!(keys.iter().all(|k| *k == stored), "{keys:?}");
    assert_eq!(gets(&b)[0].request, req::by_order(ORDER));
    assert_eq!(order(&b).state(), OrderState::Paid);
    assert_eq!(b.bench.platform.payments().len(), 1);
    assert_eq!(b.bench.acquirer.ledger.entries.len(), 1);
}

#[test]
fn gen_05_one_key_per_endpoint_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::RequireAction);
    assert_eq!(order(&b).state(), OrderState::AwaitingPayer);
    b.command(
        0,
        Command::CancelOrder {
            order: ORDER.into(),
        },
    );
    let sent = posts(&b);
    assert_eq!(key(&sent[1].request), "payment.cancel:ORDER-001:1");
    assert_ne!(key(&sent[0].request), key(&sent[1].request));
    let persisted = b
        .decisions()
        .into_iter()
        .filter(|(_, _, _, d, _)| matches!(d, Decision::KeyPersisted { .. }))
        .map(|(_, _, _, _, r)| r)
        .collect::<Vec<_>>();
    assert_eq!(
        persisted,
        [Rule::DeterministicKeys, Rule::OneKeyPerSubmission]
    );
}

#[test]
fn gen_06_crash_between_persisting_the_key_and_sending_retries_with_the_same_key_with_platform() {
    let mut b = ClientBench::one(Policy::reference_random());
    // The key is in the database; the process dies before the request leaves.
    b.command_then_crash(0, pay(ORDER, 'A'));
    let stored = order(&b).submission.key.clone().expect("persisted first");
    assert_eq!(b.bench.platform.payments().len(), 0);
    b.restart(0);
    let sent = b.sent();
    // RETRY-04: no Payment id was saved: the new process looks the order up …
    let lookup = &sent[1];
    assert_eq!(
        lookup.request.endpoint.path(),
        "/v1/payments?merchant_order_no=ORDER-001"
    );
    assert_eq!(lookup.rule, Rule::QueryByOrderNoAfterCrash);
    // … finds nothing, and creates with the original key (QUERY-06).
    let create = &sent[2];
    assert_eq!(key(&create.request), stored);
    assert_eq!(create.rule, Rule::NotFoundRetryOriginalKey);
    assert_eq!(create.handle.boot, 1, "sent by the new process");
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(order(&b).state(), OrderState::Paid);
}

#[test]
fn gen_06_confirm_in_flight_at_a_crash_is_resent_under_its_persisted_key() {
    let mut s = Solo::new(Policy::reference());
    let (h1, _, _) = only_send(&s.pay(ORDER, 'A'));
    let failed = solo::payment(1, ORDER, PaymentStatus::Failed, ResolutionStatus::Known, 2);
    s.respond(h1, solo::with_payment(201, failed));
    let (_, before, _) = only_send(&s.command(Command::RetryWithCard {
        order: ORDER.into(),
        card: Card('B'),
    }));
    s.crash();
    assert_eq!(s.server.poll_timeout(), None, "timers die with the process");
    let out = s.restart();
    let (_, after, rule) = only_send(&out);
    assert_eq!(after, before, "same key, same card, same Payment");
    assert_eq!(rule, Rule::PersistBeforeSend);
}

// ---- RETRY: the reference retry implementation ---------------------------------------

#[test]
fn retry_01_network_errors_timeouts_429_and_5xx_retry_with_the_same_key() {
    let mut s = Solo::new(Policy::reference());
    let (mut h, first, _) = only_send(&s.pay(ORDER, 'A'));
    let failures: [Option<ApiResponse>; 4] = [
        Some(solo::error(ErrorCode::InternalError, None)),
        Some(solo::error(ErrorCode::TemporarilyUnavailable, None)),
        None,
        Some(solo::rate_limited(2)),
    ];
    for failure in failures {
        let out = match failure {
            Some(r) => s.respond(h, r),
            None => s.network_error(h),
        };
        assert!(retry_at(&out).is_some(), "{out:#?}");
        let (next, request, rule) = only_send(&s.wake_next());
        assert_eq!(request, first, "the same request, the same key");
        assert!(matches!(
            rule,
            Rule::RetrySameKey | Rule::RetryAfterHonoured
        ));
        h = next;
    }
    // 503 tells the payer to try later (WORDING-01).
    assert!(decisions_of(&s.out).iter().any(|(d, r)| *d
        == Decision::ShowPayer {
            message: PayerMessage::TemporarilyUnavailable
        }
        && *r == Rule::PausedMessage));
    // Every other response goes to the caller: a 422 is not retried.
    let out = s.respond(h, solo::error(ErrorCode::UnsupportedCurrency, None));
    assert!(sends(&out).is_empty());
    assert_eq!(s.server.poll_timeout(), None);
    assert_eq!(
        s.db.order(ORDER).unwrap().state(),
        OrderState::Rejected(ErrorCode::UnsupportedCurrency)
    );
}

#[test]
fn retry_01_timeout_and_operation_in_progress_retry_with_the_same_key() {
    let mut s = Solo::new(Policy::reference());
    let (h, first, _) = only_send(&s.pay(ORDER, 'A'));
    s.at(Millis::secs(20));
    s.time_out(h);
    let (h, second, _) = only_send(&s.wake_next());
    assert_eq!(second, first);
    s.respond(h, solo::error(ErrorCode::OperationInProgress, None));
    let (_, third, _) = only_send(&s.wake_next());
    assert_eq!(third, first);
}

#[test]
fn retry_02_backoff_is_min_30s_and_1s_times_2_pow_n_minus_1_plus_jitter() {
    let mut s = Solo::new(Policy::reference());
    let (mut h, _, _) = only_send(&s.pay(ORDER, 'A'));
    let jitters = [17, 249, 0, 123];
    let backoffs = [1_000, 2_000, 4_000, 8_000];
    s.at(Millis::secs(3));
    for (n, (jitter, backoff)) in jitters.into_iter().zip(backoffs).enumerate() {
        let failed_at = s.now;
        s.jitter(Millis::ms(jitter));
        let out = s.respond(h, solo::error(ErrorCode::InternalError, None));
        let expected = failed_at.after(Millis::ms(backoff + jitter));
        assert_eq!(retry_at(&out), Some((n as u32 + 2, expected)));
        assert_eq!(s.server.poll_timeout(), Some(expected));
        let out = s.wake_next();
        assert_eq!(s.now, expected, "try {} leaves exactly on time", n + 2);
        h = only_send(&out).0;
    }
    // The schedule function caps at 30 s for later tries.
    let params = ClientParams::default();
    assert_eq!(schedule::backoff(&params, 6), Millis::secs(30));
    assert_eq!(
        schedule::retry_delay(&params, 9, Millis::ms(249), None),
        Millis::ms(30_249)
    );
}

#[test]
fn retry_02_jitter_must_stay_below_250ms() {
    let mut s = Solo::new(Policy::reference());
    let mut out = Vec::new();
    let before = s.server.clone();
    let err = s.server.step(
        Millis::ZERO,
        &mut s.db,
        ClientInput::Command {
            command: pay(ORDER, 'A'),
            draw: Draw::new(Millis::ms(250), 1),
        },
        &mut out,
    );
    assert_eq!(err, Err(ClientError::JitterOutOfRange(Millis::ms(250))));
    assert!(out.is_empty());
    assert_eq!(s.server, before);
    assert_eq!(s.db.orders().count(), 0);
}

#[test]
fn retry_03_after_five_tries_the_order_is_confirming_and_queries_begin() {
    let mut s = Solo::new(Policy::reference());
    let (mut h, first, _) = only_send(&s.pay(ORDER, 'A'));
    for try_no in 1..=5 {
        let out = s.network_error(h);
        if try_no < 5 {
            h = only_send(&s.wake_next()).0;
            continue;
        }
        assert!(sends(&out).is_empty());
        assert!(has_decision(
            &out,
            &Decision::ResultUnknown,
            Rule::RetryMaxAttempts
        ));
        assert!(has_decision(
            &out,
            &Decision::ShowPayer {
                message: PayerMessage::Confirming
            },
            Rule::ConfirmingMessage
        ));
        let at = s.now.after(Millis::secs(10));
        assert!(has_decision(
            &out,
            &Decision::QueryScheduled { at },
            Rule::QuerySchedule
        ));
    }
    let tries = sends(&s.out).len();
    assert_eq!(tries, 5, "at most 5 tries");
    let rec = s.db.order(ORDER).unwrap();
    assert_eq!(rec.submission.outcome, OrderOutcome::Unknown);
    assert_eq!(rec.state(), OrderState::Confirming);
    // Later, "not found" re-sends the create: only with the same key.
    let (hq, q, rule) = only_send(&s.wake_next());
    assert_eq!(
        q.endpoint.path(),
        "/v1/payments?merchant_order_no=ORDER-001"
    );
    assert_eq!(rule, Rule::QueryByOrderNoAfterCrash);
    let (_, again, rule) = only_send(&s.respond(hq, solo::listed(vec![])));
    assert_eq!(again, first);
    assert_eq!(rule, Rule::NotFoundRetryOriginalKey);
}

#[test]
fn retry_04_no_payment_id_after_a_crash_queries_by_order_number_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.webhook_target = None;
    b.fates.push_back(Fate::LoseResponse);
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(order(&b).payment_id, None, "the response never came back");
    b.crash(0);
    b.restart(0);
    let lookup = b.sent().last().cloned().unwrap();
    assert_eq!(lookup.request, req::by_order(ORDER));
    assert_eq!(lookup.rule, Rule::QueryByOrderNoAfterCrash);
    assert_eq!(lookup.timeout, Millis::secs(10));
    assert_eq!(order(&b).state(), OrderState::Paid);
    assert_eq!(order(&b).payment_id, Some(PaymentId(1)));
    assert_eq!(posts(&b).len(), 1, "found: no second create");
    assert_eq!(b.bench.acquirer.ledger.entries.len(), 1);
}

/// The liveness invariant behind the three tests below: a persisted submission still
/// sending always has a request in flight or a timer; otherwise nothing will ever resolve it.
fn assert_not_forgotten(s: &Solo) {
    let rec = s.db.order(ORDER).expect("the order exists");
    if rec.submission.outcome == OrderOutcome::Sending {
        let busy = s.server.in_flight().next().is_some() || s.server.timers().next().is_some();
        assert!(
            busy,
            "{ORDER} is sending with no request and no timer: {rec:#?}"
        );
    }
}

#[test]
fn retry_04_a_lookup_with_no_answer_resends_the_create_with_the_original_key() {
    // Seed 0 of the simulation: the create is lost, the process crashes, and the lookup
    // by order number after the restart times out. The create must not be forgotten.
    let mut s = Solo::new(Policy::reference());
    let (_, first, _) = only_send(&s.pay(ORDER, 'A'));
    s.crash();
    let (hq, lookup, rule) = only_send(&s.restart());
    assert_eq!(lookup, req::by_order(ORDER));
    assert_eq!(rule, Rule::QueryByOrderNoAfterCrash);
    s.at(Millis::secs(10));
    let (mut h, again, rule) = only_send(&s.time_out(hq));
    assert_eq!(again, first, "the same request under the original key");
    assert_eq!(rule, Rule::RetrySameKey);
    assert_not_forgotten(&s);
    // The usual loop follows: 5 tries, then "result unknown" and queries.
    for try_no in 1..=5 {
        let out = s.network_error(h);
        assert_not_forgotten(&s);
        if try_no < 5 {
            let (next, request, _) = only_send(&s.wake_next());
            assert_eq!(key(&request), key(&first));
            h = next;
        } else {
            assert!(has_decision(
                &out,
                &Decision::ResultUnknown,
                Rule::RetryMaxAttempts
            ));
            let at = s.now.after(Millis::secs(10));
            assert!(has_decision(
                &out,
                &Decision::QueryScheduled { at },
                Rule::QuerySchedule
            ));
        }
    }
}

#[test]
fn sched_01_a_processing_webhook_that_ends_the_retries_starts_the_queries() {
    // The create times out; before its retry, a webhook shows the Payment processing. The
    // retry is no longer needed, but the result is not final: queries must take over, or
    // a lost `payment.succeeded` leaves the order "confirming" for good.
    let mut s = Solo::new(Policy::reference());
    let (h, _, _) = only_send(&s.pay(ORDER, 'A'));
    s.at(Millis::secs(20));
    s.time_out(h);
    let out = s.webhook(solo::payment_event(1, processing(2)));
    let at = Millis::secs(30);
    assert!(has_decision(
        &out,
        &Decision::QueryScheduled { at },
        Rule::QuerySchedule
    ));
    assert_eq!(order_of(&s).state(), OrderState::Confirming);
    // The retry timer fires first and is dropped; the query follows at 30 s, by id.
    let out = s.wake_next();
    assert!(sends(&out).is_empty());
    let (hq, query, _) = only_send(&s.wake_next());
    assert_eq!(s.now, at);
    assert_eq!(query.endpoint.path(), "/v1/payments/pay_demo_001");
    s.respond(hq, solo::with_payment(200, succeeded(3)));
    assert_eq!(order_of(&s).state(), OrderState::Paid);
}

#[test]
fn sched_01_an_unknown_result_a_day_after_an_older_window_gets_its_own_queries() {
    // The tries run out (window 1 from t0), a lookup finds no Payment and the create is
    // sent again; the process crashes and comes back after the 24 hours of window 1. The
    // lookup and every try fail again: the new unknown result gets its own window.
    let mut s = Solo::new(Policy::reference());
    let (mut h, _, _) = only_send(&s.pay(ORDER, 'A'));
    for try_no in 1..=5 {
        s.network_error(h);
        if try_no < 5 {
            h = only_send(&s.wake_next()).0;
        }
    }
    let (hq, _, _) = only_send(&s.wake_next());
    only_send(&s.respond(hq, solo::listed(vec![])));
    s.crash();
    s.at(Millis::hours(25));
    let (hq, _, _) = only_send(&s.restart());
    let (mut h, _, _) = only_send(&s.time_out(hq));
    for try_no in 1..=5 {
        let out = s.network_error(h);
        assert_not_forgotten(&s);
        if try_no < 5 {
            h = only_send(&s.wake_next()).0;
        } else {
            let at = s.now.after(Millis::secs(10));
            assert!(has_decision(
                &out,
                &Decision::QueryScheduled { at },
                Rule::QuerySchedule
            ));
        }
    }
    assert_eq!(order_of(&s).confirming_since, Some(s.now));
}

fn order_of(s: &Solo) -> &OrderRecord {
    s.db.order(ORDER).expect("the order exists")
}

// ---- RATE-03, TIMEOUT-01 -------------------------------------------------------------

#[test]
fn rate_03_retry_after_overrides_the_backoff_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.jitter = Millis::ms(200);
    b.bench.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: true,
    });
    b.command(0, pay(ORDER, 'A'));
    let (at, _, _, decision, rule) = b.decisions().last().cloned().unwrap();
    // S10: wait exactly Retry-After (2 s): no backoff, no jitter.
    assert_eq!(
        decision,
        Decision::RetryScheduled {
            try_no: 2,
            at: at.after(Millis::secs(2))
        }
    );
    assert_eq!(rule, Rule::RetryAfterHonoured);
    b.bench.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: false,
    });
    b.advance(Millis::ms(1_999));
    assert_eq!(posts(&b).len(), 1, "not before Retry-After");
    b.advance(Millis::ms(1));
    let sent = posts(&b);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].at, Millis::secs(2));
    assert_eq!(sent[1].request, sent[0].request);
    assert_eq!(sent[1].rule, Rule::RetryAfterHonoured);
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(order(&b).state(), OrderState::Paid);
}

#[test]
fn timeout_01_posts_wait_20s_and_queries_10s_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    // The upstream is silent: the platform answers 202 at 15 s, before the client's 20 s.
    b.advance(Millis::secs(30));
    let sent = b.sent();
    assert_eq!(sent[0].timeout, Millis::secs(20));
    assert_eq!(sent[1].timeout, Millis::secs(10));
    assert_eq!(sent[1].request, req::get(PaymentId(1)));
    assert!(
        !b.decisions()
            .iter()
            .any(|(_, _, _, d, _)| matches!(d, Decision::RetryScheduled { .. })),
        "a 20 s timeout outlasts the platform's 15 s synchronous wait"
    );
    let params = ClientParams::default();
    assert!(params.post_timeout >= Millis::secs(20));
    assert!(params.query_timeout >= Millis::secs(10));
}

// ---- SCHED: query frequency ----------------------------------------------------------

#[test]
fn sched_01_queries_at_10s_30s_2min_5min_15min_1h_then_every_4h_until_24h_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    // The charge is never answered: 202 at 15 s, then the platform keeps verifying.
    b.advance(Millis::hours(30));
    let anchor = Millis::secs(15);
    let queried: Vec<Millis> = gets(&b).iter().map(|s| s.at.since(anchor)).collect();
    let expected: Vec<Millis> = [
        Millis::secs(10),
        Millis::secs(30),
        Millis::mins(2),
        Millis::mins(5),
        Millis::mins(15),
        Millis::hours(1),
        Millis::hours(5),
        Millis::hours(9),
        Millis::hours(13),
        Millis::hours(17),
        Millis::hours(21),
    ]
    .into();
    assert_eq!(queried, expected);
    assert!(gets(&b).iter().all(|s| s.request == req::get(PaymentId(1))));
    // The platform turned it over to manual review meanwhile: still pending (RES-04).
    assert_eq!(order(&b).state(), OrderState::PendingConfirmation);
    let ended = b
        .decisions()
        .into_iter()
        .filter(|(_, _, _, d, _)| *d == Decision::ScheduleEnded)
        .count();
    assert_eq!(ended, 1);
    assert_eq!(posts(&b).len(), 1, "never charged again");
}

#[test]
fn sched_01_queries_stop_at_a_final_status_or_its_webhook_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::secs(50)); // 202 at 15 s, queries at 25 s and 45 s
    assert_eq!(gets(&b).len(), 2);
    b.upstream(AcquirerDecision::Approve); // the charge's late answer → payment.succeeded
    let stopped = b
        .decisions()
        .into_iter()
        .find(|(_, _, _, d, _)| *d == Decision::QueryStopped)
        .expect("the webhook stops the queries");
    assert_eq!(stopped.4, Rule::QuerySchedule);
    assert_eq!(b.servers[0].poll_timeout(), None);
    b.advance(Millis::hours(25));
    assert_eq!(gets(&b).len(), 2, "no query after the final status");
    assert_eq!(order(&b).state(), OrderState::Paid);
}

#[test]
fn sched_02_at_least_10s_between_two_queries_of_one_order_by_any_server() {
    let mut s = Solo::new(Policy::reference());
    let (h, _, _) = only_send(&s.pay(ORDER, 'A'));
    s.respond(h, solo::with_payment(202, processing(2)));
    let (hq, _, _) = only_send(&s.wake_next()); // 10 s
    assert_eq!(s.now, Millis::secs(10));
    s.at(Millis::secs(12));
    s.respond(hq, solo::with_payment(200, processing(2)));
    // The process restarts 3 s after its last query: the next waits until 20 s.
    s.at(Millis::secs(13));
    s.crash();
    let out = s.restart();
    assert!(sends(&out).is_empty(), "{out:#?}");
    assert_eq!(s.server.poll_timeout(), Some(Millis::secs(30)));
    // A second server shares the database. Its cancel gets 202, so it queries too.
    let mut other = MerchantServer::new(ServerConfig::new(M1_TEST, Policy::reference()));
    let cancel = Command::CancelOrder {
        order: ORDER.into(),
    };
    s.at(Millis::secs(14));
    let out = s.input_on(&mut other, command(cancel));
    let (hc, _, _) = only_send(&out);
    s.at(Millis::secs(15));
    let response = solo::with_payment(202, processing(2));
    s.input_on(&mut other, respond(hc, response));
    // The cancel's 202 starts its own schedule: first query at 25 s.
    assert_eq!(other.poll_timeout(), Some(Millis::secs(25)));
    s.at(Millis::secs(25));
    let out = s.input_on(&mut other, ClientInput::Wake);
    assert_eq!(sends(&out).len(), 1);
    // The first server's 30 s slot comes 5 s after the other's query: deferred to 35 s.
    let out = s.at(Millis::secs(30)).input(ClientInput::Wake);
    assert!(has_decision(
        &out,
        &Decision::QueryDeferred {
            until: Millis::secs(35)
        },
        Rule::QuerySpacing
    ));
    assert!(sends(&out).is_empty());
    let out = s.wake_next();
    assert_eq!(s.now, Millis::secs(35));
    assert_eq!(sends(&out).len(), 1);
    assert_eq!(
        s.db.order(ORDER).unwrap().last_query_at,
        Some(Millis::secs(35))
    );
}

fn command(command: Command) -> ClientInput {
    ClientInput::Command {
        command,
        draw: Draw::ZERO,
    }
}

fn respond(handle: Handle, response: ApiResponse) -> ClientInput {
    ClientInput::Response {
        handle,
        response,
        draw: Draw::ZERO,
    }
}

#[test]
fn sched_02_the_schedule_itself_keeps_10s_between_queries() {
    let params = ClientParams::default();
    let times = schedule::query_offsets(&params);
    assert_eq!(times[0], Millis::secs(10));
    for pair in times.windows(2) {
        assert!(pair[1].since(pair[0]) >= params.query_spacing_min);
    }
}

#[test]
fn sched_03_refunds_are_not_polled_and_reconciled_daily_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    b.command(
        0,
        Command::RefundOrder {
            order: ORDER.into(),
            refund: "REFUND-001".into(),
            amount: 10_000,
        },
    );
    let refund = b.db.refund("REFUND-001").unwrap().clone();
    assert_eq!(refund.refund_id, Some(RefundId(1)));
    assert_eq!(refund.applied.unwrap().status, RefundStatus::Processing);
    b.webhook_target = None; // the refund's webhooks are lost
    b.advance(Millis::mins(10));
    b.lose_upstream_calls();
    assert!(gets(&b).is_empty(), "refunds are not polled");
    b.advance(Millis::hours(23));
    b.command(0, Command::Reconcile);
    let reconcile = gets(&b);
    assert_eq!(reconcile.len(), 1);
    assert_eq!(
        reconcile[0].request.endpoint.path(),
        "/v1/refunds?status=processing"
    );
    assert_eq!(reconcile[0].rule, Rule::RefundNoPolling);
}

#[test]
fn sched_03_reconciliation_learns_how_a_refund_ended_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    b.webhook_target = None;
    b.command(
        0,
        Command::RefundOrder {
            order: ORDER.into(),
            refund: "REFUND-001".into(),
            amount: 10_000,
        },
    );
    b.upstream(AcquirerDecision::Approve); // refunded; its webhook is not delivered
    b.command(0, Command::Reconcile);
    // Not listed as processing any more: one query by id learns the final status.
    let sent = gets(&b);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].request, req::get_refund(RefundId(1)));
    let applied = b.db.refund("REFUND-001").unwrap().applied.clone().unwrap();
    assert_eq!(applied.status, RefundStatus::Succeeded);
    assert_eq!(b.bench.acquirer.ledger.refunds_of(RefundId(1)), 1);
}

// ---- WEBHOOK-02: versions -------------------------------------------------------------

#[test]
fn webhook_02_an_older_webhook_version_is_ignored_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.webhook_target = None;
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::secs(16)); // 202 processing/needs_query, version 2
    b.upstream(AcquirerDecision::Approve); // succeeded, version 3
    assert_eq!(b.bench.webhooks.len(), 2);
    let older = b.bench.webhooks[0].clone();
    let newer = b.bench.webhooks[1].clone();
    assert!(older.object.version() < newer.object.version());
    let draw = b.draw();
    b.input(0, ClientInput::Webhook { event: newer, draw });
    let draw = b.draw();
    b.input(0, ClientInput::Webhook { event: older, draw });
    let (_, _, _, decision, rule) = b
        .decisions()
        .into_iter()
        .rev()
        .find(|(_, _, _, d, _)| matches!(d, Decision::Stale { .. }))
        .unwrap();
    assert_eq!(
        decision,
        Decision::Stale {
            version: 2,
            applied: 3,
            via: Via::Webhook
        }
    );
    assert_eq!(rule, Rule::LatestVersionWins);
    assert_eq!(order(&b).state(), OrderState::Paid);
    assert_eq!(order(&b).version(), 3);
}

#[test]
fn webhook_02_a_query_older_than_the_webhook_is_ignored() {
    let mut s = Solo::new(Policy::reference());
    let (h, _, _) = only_send(&s.pay(ORDER, 'A'));
    s.respond(h, solo::with_payment(202, processing(2)));
    let (hq, _, _) = only_send(&s.wake_next());
    // The webhook (version 3) overtakes the query's answer (version 2).
    s.webhook(solo::payment_event(7, succeeded(3)));
    let out = s.respond(hq, solo::with_payment(200, processing(2)));
    assert!(has_decision(
        &out,
        &Decision::Stale {
            version: 2,
            applied: 3,
            via: Via::Query
        },
        Rule::LatestVersionWins
    ));
    assert_eq!(s.db.order(ORDER).unwrap().state(), OrderState::Paid);
}

/// SCOPE-04: the client's key is its submission's, never its API key's: a retry carries
/// the key it was first sent with, which names no API key (so a rotation changes nothing).
#[test]
fn scope_04_a_retry_keeps_the_submissions_key_which_names_no_api_key() {
    let mut s = Solo::new(Policy::reference());
    let (h, first, _) = only_send(&s.pay(ORDER, 'A'));
    s.at(Millis::secs(20));
    s.time_out(h);
    let (_, again, _) = only_send(&s.wake_next());
    assert_eq!(again.idempotency_key, first.idempotency_key);
    let k = first.idempotency_key.clone().expect("a key");
    assert!(!k.contains(&first.api_key.to_string()), "{k}");
}

/// SETTLE-01 is outside the model: a paid and refunded order's client sends nothing about
/// settlements or payouts (it has no such endpoint or event to rely on).
#[test]
fn settle_01_the_client_sends_nothing_about_settlements_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    b.command(
        0,
        Command::RefundOrder {
            order: ORDER.into(),
            refund: "REFUND-001".into(),
            amount: 4_000,
        },
    );
    b.settle(AcquirerDecision::Approve);
    let sent = b.sent();
    assert!(!sent.is_empty());
    assert!(
        sent.iter()
            .all(|s| !s.request.endpoint.path().contains("settlement"))
    );
}

/// CONC-04: "在途冲突稍后用同一个键重试" (for an in-flight conflict, retry later with the
/// same key): a 409 operation_in_progress is retried after the backoff, under the key.
#[test]
fn conc_04_operation_in_progress_is_retried_later_with_the_same_key() {
    let mut s = Solo::new(Policy::reference());
    let (h, first, _) = only_send(&s.pay(ORDER, 'A'));
    s.respond(h, solo::error(ErrorCode::OperationInProgress, None));
    let (_, again, _) = only_send(&s.wake_next());
    assert_eq!(again, first);
    assert!(s.now > Millis::ZERO, "later, not at once");
}

/// REFUND-04 (S11): a refund whose answer was lost is retried with its key and its
/// refund number, never renumbered; one refund upstream.
#[test]
fn refund_04_a_refund_whose_answer_is_lost_keeps_its_key_and_number_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    b.fates.push_back(Fate::LoseResponse);
    b.command(
        0,
        Command::RefundOrder {
            order: ORDER.into(),
            refund: "REFUND-001".into(),
            amount: 4_000,
        },
    );
    b.settle(AcquirerDecision::Approve);
    b.advance(Millis::secs(30));
    let refunds: Vec<Sent> = posts(&b)
        .into_iter()
        .filter(|s| matches!(s.request.endpoint, Endpoint::CreateRefund { .. }))
        .collect();
    assert!(refunds.len() >= 2, "the lost answer is retried");
    for s in &refunds {
        assert_eq!(
            s.request, refunds[0].request,
            "same key, same refund number"
        );
    }
    assert_eq!(b.bench.platform.refunds().len(), 1);
}

// ---- UNKNOWN: never re-charge on a guess ---------------------------------------------

#[test]
fn unknown_03_after_a_timeout_the_same_key_and_order_number_are_retried_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.webhook_target = None;
    b.fates.push_back(Fate::LoseResponse);
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    b.advance(Millis::secs(21));
    let sent = posts(&b);
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[1].at,
        Millis::secs(21),
        "timeout at 20 s, then 1 s backoff"
    );
    assert_eq!(
        sent[1].request, sent[0].request,
        "same key, same order number"
    );
    // S1: the platform answers 200 with the same Payment; one charge.
    assert_eq!(order(&b).state(), OrderState::Paid);
    assert_eq!(b.bench.platform.payments().len(), 1);
    assert_eq!(b.bench.acquirer.ledger.entries.len(), 1);
}

#[test]
fn unknown_04_idempotency_conflict_is_reported_as_a_defect_never_retried() {
    let mut s = Solo::new(Policy::reference());
    let (h, _, _) = only_send(&s.pay(ORDER, 'A'));
    let out = s.respond(h, solo::error(ErrorCode::IdempotencyConflict, None));
    assert!(has_decision(
        &out,
        &Decision::Defect {
            code: ErrorCode::IdempotencyConflict
        },
        Rule::ConflictIsDefect
    ));
    assert!(sends(&out).is_empty());
    assert_eq!(
        s.server.poll_timeout(),
        None,
        "nothing is retried around it"
    );
    assert_eq!(s.db.order(ORDER).unwrap().state(), OrderState::Defect);
    // Changing the amount and replaying the key is refused too.
    let out = s.command(Command::AmendOrder {
        order: ORDER.into(),
        amount: 12_000,
    });
    assert!(has_decision(
        &out,
        &Decision::Refused {
            reason: Refusal::ParametersBound
        },
        Rule::ConflictIsDefect
    ));
    assert!(sends(&out).is_empty());
}

#[test]
fn unknown_05_order_no_conflict_queries_the_existing_payment_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    // Someone created ORDER-001 under another key (say, before a key-scheme change).
    b.bench
        .send(req::create("legacy-key", ORDER, 10_000, "USD", 'A'));
    b.bench.upstream(AcquirerDecision::Approve);
    b.command(0, pay(ORDER, 'A'));
    let sent = b.sent();
    assert_eq!(sent.len(), 2);
    // S4: 409 order_no_conflict names pay_demo_001: the client queries it.
    assert_eq!(sent[1].request, req::get(PaymentId(1)));
    assert_eq!(sent[1].rule, Rule::OrderConflictQueryExisting);
    assert!(b.decisions().iter().any(|(_, _, _, d, r)| *d
        == Decision::Adopted {
            object: ResourceId::Payment(PaymentId(1))
        }
        && *r == Rule::OrderConflictQueryExisting));
    assert_eq!(order(&b).state(), OrderState::Paid);
    assert!(
        posts(&b)
            .iter()
            .all(|s| s.request.endpoint.path() == "/v1/payments"
                && s.request.to_string().contains("ORDER-001\"")),
        "never another order number"
    );
    assert_eq!(b.bench.acquirer.ledger.entries.len(), 1);
}

// ---- QUERY-06 -----------------------------------------------------------------------------

#[test]
fn query_06_not_found_by_order_number_creates_with_the_original_key_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    for _ in 0..5 {
        b.fates.push_back(Fate::LoseRequest);
    }
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::secs(126)); // 5 timeouts and backoffs end at 115 s; query at 125 s
    let sent = b.sent();
    // Five creates timed out, the order is confirming, the query by order number finds
    // nothing: the create is sent again with the original key.
    assert_eq!(sent.len(), 7, "{:#?}", b.trace_lines());
    assert!(sent[..5].iter().all(|s| s.request == sent[0].request));
    assert_eq!(sent[5].request, req::by_order(ORDER));
    assert_eq!(sent[6].request, sent[0].request);
    assert_eq!(sent[6].rule, Rule::NotFoundRetryOriginalKey);
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(order(&b).state(), OrderState::Paid);
}

// ---- RES: manual review, fulfilment ---------------------------------------------------

#[test]
fn res_04_manual_review_stays_pending_and_is_never_charged_again_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::hours(2)); // the upstream stays silent past the automatic window
    assert_eq!(order(&b).state(), OrderState::PendingConfirmation);
    let pending = b
        .decisions()
        .into_iter()
        .find(|(_, _, _, d, _)| *d == Decision::PendingConfirmation)
        .unwrap();
    assert_eq!(pending.4, Rule::ManualReviewClient);
    b.command(
        0,
        Command::RetryWithCard {
            order: ORDER.into(),
            card: Card('B'),
        },
    );
    let (_, _, _, refusal, rule) = b.decisions().last().cloned().unwrap();
    assert!(matches!(
        refusal,
        Decision::Refused {
            reason: Refusal::NotFailed { .. }
        }
    ));
    assert_eq!(rule, Rule::ManualReviewClient);
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::hours(30));
    assert_eq!(posts(&b).len(), 1, "never charged again");
}

/// WORDING-03 and RES-04: "超过 24 小时仍未确认可联系技术支持并提供支付号" (if still not
/// confirmed after more than 24 hours, contact technical support with the payment number):
/// the merchant is told, with the payment id, more than 24 hours after the order went to
/// manual_review, not when the query schedule ends (21 h after its anchor), and the payer
/// is never shown it.
#[test]
fn wording_03_contact_support_goes_to_the_merchant_more_than_24_hours_into_manual_review() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::hours(2));
    assert_eq!(order(&b).state(), OrderState::PendingConfirmation);
    let pending_at = b
        .decisions()
        .into_iter()
        .find(|(_, _, _, d, _)| *d == Decision::PendingConfirmation)
        .map(|(at, ..)| at)
        .unwrap();
    b.advance(Millis::hours(22)); // the schedule ended at 21 h: nothing said yet
    let support = |b: &ClientBench| {
        b.decisions()
            .into_iter()
            .filter(|(_, _, _, d, _)| matches!(d, Decision::ContactSupport { .. }))
            .collect::<Vec<_>>()
    };
    assert!(
        b.decisions()
            .iter()
            .any(|(_, _, _, d, _)| *d == Decision::ScheduleEnded)
    );
    assert!(support(&b).is_empty(), "too early: {:?}", support(&b));
    b.advance(Millis::hours(4));
    let told = support(&b);
    assert_eq!(told.len(), 1, "{:#?}", b.trace_lines());
    let (at, _, _, decision, rule) = &told[0];
    assert!(at.since(pending_at) > Millis::hours(24));
    assert_eq!(rule, &Rule::ManualReviewSupport);
    assert!(
        matches!(decision, Decision::ContactSupport { payment } if Some(*payment) == order(&b).payment_id)
    );
    assert_eq!(posts(&b).len(), 1, "never charged again");
}

#[test]
fn res_07_fulfilled_once_whatever_the_channels_and_servers_with_platform() {
    let mut b = ClientBench::new([Policy::reference(), Policy::reference()]);
    b.ack_webhooks = false; // the platform re-delivers
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    b.command(1, pay(ORDER, 'A')); // refused: already paid
    b.advance(Millis::mins(10)); // re-deliveries
    b.webhook_target = Some(1);
    b.advance(Millis::mins(10));
    let fulfil: Vec<_> = b
        .decisions()
        .into_iter()
        .filter(|(_, _, _, d, _)| matches!(d, Decision::Fulfil { .. }))
        .collect();
    assert_eq!(fulfil.len(), 1);
    assert_eq!(fulfil[0].4, Rule::FulfilByPaymentId);
    assert_eq!(
        fulfil[0].3,
        Decision::Fulfil {
            payment: PaymentId(1)
        }
    );
    assert_eq!(order(&b).fulfilled, Some(PaymentId(1)));
    assert!(b.bench.webhooks.len() > 1, "re-delivered");
}

// ---- CANCEL-02 ------------------------------------------------------------------------

#[test]
fn cancel_02_a_202_on_cancel_is_not_canceled_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::RequireAction);
    b.command(
        0,
        Command::CancelOrder {
            order: ORDER.into(),
        },
    );
    b.lose_upstream_calls(); // the cancel call to the upstream is lost
    b.advance(Millis::secs(15));
    let (_, _, _, decision, rule) = b
        .decisions()
        .into_iter()
        .find(|(_, _, _, d, _)| *d == Decision::CancelNotConfirmed)
        .expect("202");
    assert_eq!(decision, Decision::CancelNotConfirmed);
    assert_eq!(rule, Rule::Cancel202NotCanceled);
    assert_eq!(order(&b).state(), OrderState::AwaitingPayer, "not canceled");
    assert!(b.servers[0].poll_timeout().is_some(), "queries follow");
    // The platform's next verification cancels at the upstream: payment.canceled.
    b.advance(Millis::mins(1));
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(order(&b).state(), OrderState::Closed);
    assert_eq!(b.bench.acquirer.ledger.entries.len(), 0);
}

// ---- ATTEMPT-07: the client's side of ATTEMPT-02 ----------------------------------------

#[test]
fn attempt_07_card_retry_only_after_failed_within_attempts_and_before_expiry() {
    let mut s = Solo::new(Policy::reference());
    let (h, _, _) = only_send(&s.pay(ORDER, 'A'));
    s.respond(h, solo::with_payment(202, processing(2)));
    let retry = |card| Command::RetryWithCard {
        order: ORDER.into(),
        card: Card(card),
    };
    let out = s.command(retry('B'));
    assert!(sends(&out).is_empty(), "processing: no card retry");
    assert!(has_decision(
        &out,
        &Decision::Refused {
            reason: Refusal::NotFailed {
                status: Some(PaymentStatus::Processing)
            }
        },
        Rule::CardRetryOnlyAfterFailed
    ));
    let mut failed = solo::payment(1, ORDER, PaymentStatus::Failed, ResolutionStatus::Known, 3);
    failed.attempt_count = 3;
    s.webhook(solo::payment_event(1, failed.clone()));
    let out = s.command(retry('B'));
    assert!(has_decision(
        &out,
        &Decision::Refused {
            reason: Refusal::AttemptsExhausted
        },
        Rule::AttemptsMax
    ));
    failed.attempt_count = 1;
    failed.version = 4;
    s.webhook(solo::payment_event(2, failed));
    s.at(Millis::hours(24));
    let out = s.command(retry('B'));
    assert!(has_decision(
        &out,
        &Decision::Refused {
            reason: Refusal::Expired
        },
        Rule::CardRetryBeforeExpiry
    ));
    assert_eq!(sends(&s.out).len(), 1, "the create only");
}

// ---- the whole: no double charge under lost messages ------------------------------------

#[test]
fn effect_01_reference_clients_never_double_charge_under_lost_messages_and_crashes() {
    use Fate::*;
    let fates = [Deliver, LoseRequest, LoseResponse, NetworkError];
    let mut runs = 0;
    let branches = [
        [Branch::S4Conflict, Branch::S5Wait],
        [Branch::S4ReturnExisting, Branch::S5InProgress],
    ];
    for policy in [Policy::reference(), Policy::reference_random()] {
        for a in &fates {
            for c in &fates {
                for (crash, branches) in [false, true].into_iter().zip(branches) {
                    for decision in [AcquirerDecision::Approve, AcquirerDecision::Decline] {
                        let mut b = ClientBench::new([policy.clone(), policy.clone()]);
                        b.branches.extend(branches.map(|br| (br.point(), br)));
                        b.fates.extend([a.clone(), c.clone()]);
                        b.command(0, pay(ORDER, 'A'));
                        b.command(1, pay(ORDER, 'A'));
                        if crash {
                            b.crash(0);
                        }
                        b.settle(decision);
                        b.advance(Millis::mins(5));
                        if crash {
                            b.restart(0);
                        }
                        b.settle(decision);
                        b.advance(Millis::hours(25));
                        b.settle(decision);
                        b.advance(Millis::mins(5));
                        runs += 1;
                        let ledger = &b.bench.acquirer.ledger;
                        assert!(ledger.entries.len() <= 1, "{:#?}", b.trace_lines());
                        assert!(b.bench.platform.payments().len() <= 1);
                        let state = order(&b).state();
                        match decision {
                            AcquirerDecision::Approve => {
                                assert_eq!(state, OrderState::Paid, "{:#?}", b.trace_lines());
                                assert_eq!(ledger.entries.len(), 1);
                            }
                            // A failed Payment expires after 24 hours (EXPIRY-01).
                            _ => assert!(
                                matches!(state, OrderState::Failed | OrderState::Closed),
                                "{:#?}",
                                b.trace_lines()
                            ),
                        }
                    }
                }
            }
        }
    }
    assert_eq!(runs, 2 * 4 * 4 * 2 * 2);
}

// ---- driver errors, late answers, serialization ------------------------------------------

#[test]
fn a_crashed_server_takes_only_restart_and_ignores_answers_of_its_old_process() {
    let mut s = Solo::new(Policy::reference());
    let (h, _, _) = only_send(&s.pay(ORDER, 'A'));
    s.crash();
    let mut out = Vec::new();
    let down = s.server.clone();
    let wake = s.server.step(s.now, &mut s.db, ClientInput::Wake, &mut out);
    assert_eq!(wake, Err(ClientError::Down));
    assert_eq!(s.server, down, "nothing changed");
    s.restart(); // RETRY-04 lookup by the new process
    let restart = s.server.step(
        s.now,
        &mut s.db,
        ClientInput::Restart { draw: Draw::ZERO },
        &mut out,
    );
    assert_eq!(restart, Err(ClientError::AlreadyUp));
    assert!(out.is_empty());
    // An answer for the old process's request is not taken for the new one's.
    let late = s.respond(h, solo::with_payment(201, succeeded(2)));
    assert_eq!(
        decisions_of(&late),
        [(Decision::LateReply { handle: h }, Rule::ClientTimeouts)]
    );
    assert_eq!(s.db.order(ORDER).unwrap().applied, None);
}

#[test]
fn server_database_and_trace_serialize_to_json() {
    let mut b = ClientBench::new([Policy::reference(), Policy::reference_random()]);
    b.command(0, pay(ORDER, 'A'));
    b.command(1, pay("ORDER-002", 'B'));
    b.advance(Millis::secs(40));
    b.settle(AcquirerDecision::Approve);
    let outputs: Vec<&ClientOutput> = b.trace.iter().map(|(_, _, o)| o).collect();
    let trace = serde_json::to_value(outputs).expect("the trace serializes");
    assert_eq!(trace[0]["output"], "decision");
    assert_eq!(trace[0]["decision"]["decision"], "key_persisted");
    assert_eq!(trace[1]["output"], "send");
    assert!(serde_json::to_string(&b.servers).is_ok());
    assert!(serde_json::to_string(&b.db).is_ok());
    let input = ClientInput::Webhook {
        event: b.bench.webhooks[0].clone(),
        draw: Draw::ZERO,
    };
    assert_eq!(serde_json::to_value(&input).unwrap()["input"], "webhook");
    assert!(b.trace_lines().iter().all(|l| l.contains("merchant-")));
}

// ---- every Client rule has a test -------------------------------------------------------

#[test]
fn every_client_rule_is_cited_by_a_test_name() {
    let tests = [
        include_str!("client_reference.rs"),
        include_str!("client_antipatterns.rs"),
    ]
    .concat();
    let names: Vec<&str> = tests
        .lines()
        .filter_map(|l| l.trim().strip_prefix("fn "))
        .filter_map(|l| l.split('(').next())
        .collect();
    for rule in Rule::ALL
        .iter()
        .filter(|r| r.enforcer() == Enforcer::Client)
    {
        let tag = rule.test_tag();
        assert!(
            names.iter().any(|n| n.starts_with(&format!("{tag}_"))),
            "no client test named {tag}_…"
        );
    }
}

// ---- S8's advice, and a corrected request after a rejection -----------------

/// S8: "wait for the result, or query" (等待结果或查询). A card retry answered 409
/// payment_in_progress is never sent again: the result is unknown, the client queries the
/// Payment on the SCHED-01 schedule (A-CLIENT-S8-WAIT).
#[test]
fn attempt_01_payment_in_progress_the_client_waits_and_queries_and_never_resends() {
    let mut s = Solo::new(Policy::reference());
    let (h, _, _) = only_send(&s.pay(ORDER, 'A'));
    let out = declined_then_card_retry(&mut s, h);
    let (h, confirm, _) = only_send(&out);
    assert_eq!(key(&confirm), "payment.confirm:ORDER-001:2");
    let related = Some(ResourceId::Payment(PaymentId(1)));
    let out = s.respond(h, solo::error(ErrorCode::PaymentInProgress, related));
    assert!(has_decision(
        &out,
        &Decision::ResultUnknown,
        Rule::ConfirmWhileProcessing
    ));
    assert!(retry_at(&out).is_none(), "no retry of the confirm");
    let (h, query, _) = only_send(&out);
    assert_eq!(query, req::get(PaymentId(1)));
    assert_eq!(
        s.db.order(ORDER).unwrap().submission.outcome,
        OrderOutcome::Unknown
    );
    // The query shows the other attempt processing: the order is confirming.
    let mut other = processing(3);
    other.attempt_count = 2;
    s.respond(h, solo::with_payment(200, other));
    assert_eq!(s.db.order(ORDER).unwrap().state(), OrderState::Confirming);
    // A day of the schedule: queries only, the confirm never again.
    let mut wakes = 0;
    while s.server.poll_timeout().is_some() && wakes < 50 {
        wakes += 1;
        for (_, request, _, _) in sends(&s.wake_next()) {
            assert_eq!(request.endpoint.method(), Method::Get, "{request}");
        }
    }
    assert!(wakes > 1, "the schedule ran");
    let confirms = sends(&s.out)
        .into_iter()
        .filter(|(_, r, _, _)| r.idempotency_key.as_deref() == Some("payment.confirm:ORDER-001:2"))
        .count();
    assert_eq!(confirms, 1);
}

/// REJECT-01: "after correcting them, submit with a new key" (修正后用新键提交). A create
/// rejected with 422 leaves the order rejected; paying it again, corrected, is a new
/// business submission under payment.create:ORDER:2 (A-CLIENT-CORRECTED-KEY).
#[test]
fn reject_01_a_rejected_create_paid_again_corrected_goes_under_a_new_key_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    let pay_in = |currency: &str| Command::PayOrder {
        order: ORDER.into(),
        amount: 10_000,
        currency: currency.into(),
        card: Card('A'),
    };
    b.command(0, pay_in("XYZ"));
    assert_eq!(
        order(&b).state(),
        OrderState::Rejected(ErrorCode::UnsupportedCurrency)
    );
    assert!(
        b.bench.platform.records().is_empty(),
        "the key was not used up"
    );
    b.command(0, pay_in("USD"));
    b.settle(AcquirerDecision::Approve);
    let keys = post_keys(&b);
    assert_eq!(
        keys,
        ["payment.create:ORDER-001:1", "payment.create:ORDER-001:2"]
    );
    assert_eq!(posts(&b)[1].rule, Rule::RejectionsDoNotOccupyKey);
    assert_eq!(order(&b).submission.seq, 2);
    assert_eq!(order(&b).currency, "USD");
    assert_eq!(order(&b).state(), OrderState::Paid);
    assert_eq!(b.bench.platform.payments().len(), 1);
    // A paid order is not paid again: the resubmission is for rejected creates only.
    b.command(0, pay_in("USD"));
    assert_eq!(posts(&b).len(), 2);
}

// ---- Issue-free fidelity: 503s, a cancel's lost 202, a rejected refund ------------------

fn shown(b: &ClientBench, message: PayerMessage) -> usize {
    b.decisions()
        .iter()
        .filter(|(_, _, _, d, _)| *d == Decision::ShowPayer { message })
        .count()
}

/// RATE-04 and S13 (A-S13-REFERENCE-CODE, the default reading): five 503s executed
/// nothing; the order is refused for now, never "confirming", never queried, and no
/// loop of lookups and re-creates follows. Paying it again once the channel is back
/// re-sends it under the same key ("稍后用 K 重试").
#[test]
fn rate_04_a_paused_channel_is_not_accepted_and_the_order_is_paid_later_under_the_same_key_with_platform()
 {
    let mut b = ClientBench::one(Policy::reference());
    b.bench.control(Control::SetChannelPaused { on: true });
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::hours(6));
    assert_eq!(posts(&b).len(), 5, "{:#?}", b.trace_lines());
    assert!(
        gets(&b).is_empty(),
        "nothing to query: nothing was accepted"
    );
    assert_eq!(
        order(&b).state(),
        OrderState::Rejected(ErrorCode::TemporarilyUnavailable)
    );
    assert_eq!(shown(&b, PayerMessage::Confirming), 0);
    assert_eq!(shown(&b, PayerMessage::TemporarilyUnavailable), 5);
    assert!(b.decisions().iter().any(|(_, _, _, d, r)| *d
        == Decision::Rejected {
            code: ErrorCode::TemporarilyUnavailable
        }
        && *r == Rule::ChannelPaused));
    b.bench.control(Control::SetChannelPaused { on: false });
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(order(&b).state(), OrderState::Paid);
    let keys = post_keys(&b);
    assert_eq!(keys.len(), 6);
    assert!(keys.iter().all(|k| k == "payment.create:ORDER-001:1"));
    assert_eq!(posts(&b)[5].rule, Rule::ChannelPaused);
}

/// RATE-04 under the reference code's reading (A-S13-REFERENCE-CODE, `result_unknown`):
/// confirming and queried; each "not found" re-creates under the original key
/// (QUERY-06), but the window is anchored once, so the traffic ends within the 24 hours
/// of SCHED-01 (before, every round of 503s restarted it: thousands of requests).
#[test]
fn rate_04_the_reference_code_reading_queries_and_re_creates_within_one_window_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.servers[0] = MerchantServer::new(ServerConfig {
        api_key: M1_TEST,
        policy: Policy::reference(),
        params: ClientParams {
            after_503: After503::ResultUnknown,
            ..ClientParams::default()
        },
    });
    b.bench.control(Control::SetChannelPaused { on: true });
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::hours(30));
    let (posts, gets) = (posts(&b).len(), gets(&b).len());
    // 11 scheduled lookups, each "not found" and followed by five 503s.
    assert_eq!(gets, 11, "{:#?}", b.trace_lines());
    assert_eq!(posts, 5 * (1 + 11));
    assert_eq!(order(&b).state(), OrderState::Confirming);
    assert!(
        post_keys(&b)
            .iter()
            .all(|k| k == "payment.create:ORDER-001:1")
    );
}

/// CANCEL-02 with a lost 202: the cancel's retry under the same key is a replay,
/// answered 200 with the Payment still requires_action (REPLAY-02, A-REPLAY-AFTER-202).
/// That 200 is not "canceled" either: the client queries until the Payment is final.
#[test]
fn cancel_02_a_200_replay_of_a_cancel_whose_202_was_lost_is_not_canceled_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.webhook_target = None; // the Payment's events never arrive: only queries tell
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::RequireAction);
    assert_eq!(order(&b).state(), OrderState::AwaitingPayer);
    b.fates.push_back(Fate::LoseResponse);
    b.command(
        0,
        Command::CancelOrder {
            order: ORDER.into(),
        },
    );
    b.upstream(AcquirerDecision::Fail); // the upstream could not confirm: 202, lost
    b.advance(Millis::secs(22)); // timeout at 20 s, try 2 at 21 s: a replay
    let cancels: Vec<Sent> = posts(&b)
        .into_iter()
        .filter(|s| s.request.endpoint.path().ends_with("/cancel"))
        .collect();
    assert_eq!(cancels.len(), 2, "{:#?}", b.trace_lines());
    assert!(
        b.decisions()
            .iter()
            .any(|(_, _, _, d, r)| *d == Decision::CancelNotConfirmed
                && *r == Rule::Cancel202NotCanceled)
    );
    assert_eq!(
        order(&b).cancel.as_ref().unwrap().outcome,
        OrderOutcome::Unknown
    );
    b.advance(Millis::mins(1));
    b.settle(AcquirerDecision::Approve); // the platform's re-sent cancel is confirmed
    b.advance(Millis::mins(10));
    assert_eq!(
        order(&b).state(),
        OrderState::Closed,
        "{:#?}",
        b.trace_lines()
    );
}

/// REJECT-01 for refunds (A-CLIENT-CORRECTED-KEY): a refund rejected with 422
/// (refund_amount_exceeded) executed nothing and bound no number; asked for again with
/// the amount corrected it is a new submission under a new key, refund.create:R:2.
#[test]
fn reject_01_a_rejected_refund_is_corrected_under_a_new_key_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    let refund = |amount| Command::RefundOrder {
        order: ORDER.into(),
        refund: "REFUND-001".into(),
        amount,
    };
    b.command(0, refund(20_000));
    let rec = b.db.refund("REFUND-001").unwrap().clone();
    assert_eq!(
        rec.outcome,
        OrderOutcome::Rejected(ErrorCode::RefundAmountExceeded)
    );
    b.command(0, refund(4_000));
    let rec = b.db.refund("REFUND-001").unwrap().clone();
    assert_eq!(rec.key.as_deref(), Some("refund.create:REFUND-001:2"));
    assert_eq!(rec.seq, 2);
    assert_eq!(rec.amount, 4_000);
    assert_eq!(rec.outcome, OrderOutcome::Answered);
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(b.bench.acquirer.ledger.refunds_of(RefundId(1)), 1);
    assert!(!b.decisions().iter().any(|(_, _, _, d, _)| *d
        == Decision::Refused {
            reason: Refusal::RefundExists
        }));
}

/// RATE-01 against RETRY-03 (A-429-REFERENCE-CODE). The default reading follows the
/// reference code: five 429s are "result unknown", the order confirming and queried.
/// Under `after_429 = not_accepted` (RATE-01: "本次请求没有执行") the order is refused for
/// now, nothing is queried, and paying it again re-sends it under the same key.
#[test]
fn rate_01_five_429s_either_reading_of_the_reference_code_with_platform() {
    let mut b = ClientBench::one(Policy::reference());
    b.bench.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: true,
    });
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::secs(9));
    assert_eq!(posts(&b).len(), 5, "{:#?}", b.trace_lines());
    assert_eq!(order(&b).state(), OrderState::Confirming);
    assert_eq!(shown(&b, PayerMessage::Confirming), 1);

    let mut b = ClientBench::one(Policy::reference());
    b.servers[0] = MerchantServer::new(ServerConfig {
        api_key: M1_TEST,
        policy: Policy::reference(),
        params: ClientParams {
            after_429: After503::NotAccepted,
            ..ClientParams::default()
        },
    });
    b.bench.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: true,
    });
    b.command(0, pay(ORDER, 'A'));
    b.advance(Millis::hours(6));
    assert_eq!(posts(&b).len(), 5, "{:#?}", b.trace_lines());
    assert!(
        gets(&b).is_empty(),
        "nothing to query: nothing was executed"
    );
    assert_eq!(
        order(&b).state(),
        OrderState::Rejected(ErrorCode::RateLimited)
    );
    assert_eq!(shown(&b, PayerMessage::Confirming), 0);
    b.bench.control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: false,
    });
    b.command(0, pay(ORDER, 'A'));
    b.upstream(AcquirerDecision::Approve);
    assert_eq!(order(&b).state(), OrderState::Paid);
    let keys = post_keys(&b);
    assert_eq!(keys.len(), 6);
    assert!(keys.iter().all(|k| k == "payment.create:ORDER-001:1"));
}
