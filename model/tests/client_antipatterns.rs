//! Each anti-pattern of the contract, as a variant of the reference policy: the same
//! script runs under both, and the test pins the exact point where the variant departs
//! (the first request that differs, or the first decision), and what the platform does
//! about it. Tests are named `<tag of the rule it breaks>_<variant name>_…`.

mod client_bench;

use client_bench::{ClientBench, Fate, Sent};
use payhub_model::api::req;
use payhub_model::client::*;
use payhub_model::*;

const ORDER: &str = "ORDER-001";

fn pay() -> Command {
    Command::PayOrder {
        order: ORDER.into(),
        amount: 10_000,
        currency: "USD".into(),
        card: Card('A'),
    }
}

/// Runs `script` on a fresh bench with one server following `policy`.
fn run(policy: Policy, script: impl Fn(&mut ClientBench)) -> ClientBench {
    let mut b = ClientBench::one(policy);
    script(&mut b);
    b
}

/// The first request that differs between two runs (time and request), from each run.
fn departure(reference: &ClientBench, variant: &ClientBench) -> (Option<Sent>, Option<Sent>) {
    let (a, b) = (reference.sent(), variant.sent());
    let same = |x: &Sent, y: &Sent| x.at == y.at && x.request == y.request;
    let i = a.iter().zip(&b).take_while(|(x, y)| same(x, y)).count();
    (a.get(i).cloned(), b.get(i).cloned())
}

fn key(sent: &Sent) -> &str {
    sent.request.idempotency_key.as_deref().expect("keyed")
}

fn deviations(b: &ClientBench) -> Vec<(Millis, AntiPattern, Rule)> {
    b.decisions()
        .into_iter()
        .filter_map(|(at, _, _, d, rule)| match d {
            Decision::Deviate { pattern } => Some((at, pattern, rule)),
            _ => None,
        })
        .collect()
}

fn state(b: &ClientBench) -> OrderState {
    b.db.order(ORDER).expect("order").state()
}

fn captures(b: &ClientBench) -> usize {
    b.bench.acquirer.ledger.captures_on(Card('A'))
}

// ---- UNKNOWN-03: "don't do this" -------------------------------------------------------

/// The create's response is lost after the charge went through.
fn lost_response(b: &mut ClientBench) {
    b.webhook_target = None;
    b.fates.push_back(Fate::LoseResponse);
    b.command(0, pay());
    b.upstream(AcquirerDecision::Approve);
    b.advance(Millis::secs(25));
    b.settle(AcquirerDecision::Approve);
}

#[test]
fn unknown_03_new_key_after_timeout_sends_a_different_key_at_the_timeout() {
    let pattern = AntiPattern::NewKeyAfterTimeout;
    let reference = run(Policy::reference(), lost_response);
    let variant = run(Policy::reference().with(pattern), lost_response);
    let (r, v) = departure(&reference, &variant);
    let (r, v) = (r.unwrap(), v.unwrap());
    // Reference: the same key after the 1 s backoff. Variant: a new key at once.
    assert_eq!(
        (r.at, key(&r)),
        (Millis::secs(21), "payment.create:ORDER-001:1")
    );
    assert_eq!(v.at, Millis::secs(20));
    assert_ne!(key(&v), "payment.create:ORDER-001:1");
    assert_eq!(v.rule, Rule::NeverSwitchKeyOnUnknown);
    assert_eq!(
        deviations(&variant),
        [(Millis::secs(20), pattern, pattern.breaks())]
    );
    // The platform keeps its promise: the order number is taken (S4, ORDER-01).
    assert_eq!(variant.bench.platform.payments().len(), 1);
    assert_eq!(captures(&variant), 1);
    assert_eq!(state(&variant), OrderState::Paid);
}

#[test]
fn unknown_03_new_order_no_after_timeout_creates_a_second_payment_and_charges_twice() {
    let pattern = AntiPattern::NewOrderNoAfterTimeout;
    let reference = run(Policy::reference(), lost_response);
    let variant = run(Policy::reference().with(pattern), lost_response);
    let (r, v) = departure(&reference, &variant);
    let (r, v) = (r.unwrap(), v.unwrap());
    assert_eq!(
        r.request,
        req::create("payment.create:ORDER-001:1", ORDER, 10_000, "USD", 'A')
    );
    assert_eq!(v.at, Millis::secs(20));
    assert_eq!(
        v.request,
        req::create(
            "payment.create:ORDER-001-retry:1",
            "ORDER-001-retry",
            10_000,
            "USD",
            'A'
        )
    );
    assert_eq!(pattern.breaks(), Rule::NeverSwitchKeyOnUnknown);
    // "New order number = new payment": nothing can stop the second charge.
    assert_eq!(captures(&reference), 1);
    assert_eq!(variant.bench.platform.payments().len(), 2);
    assert_eq!(captures(&variant), 2, "the payer is charged twice");
}

// ---- GEN-06, GEN-04: keys that do not survive ------------------------------------------

#[test]
fn gen_06_key_not_persisted_is_lost_on_crash_and_replaced_by_a_new_one() {
    let pattern = AntiPattern::KeyNotPersisted;
    let script = |b: &mut ClientBench| {
        b.webhook_target = None;
        b.fates.push_back(Fate::LoseResponse);
        b.command(0, pay());
        b.upstream(AcquirerDecision::Approve);
        b.crash(0);
        b.restart(0);
    };
    let reference = run(Policy::reference_random(), script);
    let variant = run(Policy::reference_random().with(pattern), script);
    // First departure: the key never reaches the database.
    let before = reference.sent()[0].clone();
    assert_eq!(
        reference.db.order(ORDER).unwrap().submission.key.as_deref(),
        Some(key(&before))
    );
    assert_eq!(variant.db.order(ORDER).unwrap().submission.key, None);
    assert_eq!(
        deviations(&variant)[0],
        (Millis::ZERO, pattern, Rule::PersistBeforeSend)
    );
    // Second: after the restart the reference looks the order up; the variant creates
    // again under a key it just made up.
    let (r, v) = departure(&reference, &variant);
    let (r, v) = (r.unwrap(), v.unwrap());
    assert_eq!(r.request, req::by_order(ORDER));
    assert_eq!(v.request.endpoint.path(), "/v1/payments");
    assert_ne!(key(&v), key(&variant.sent()[0]));
    assert_eq!(v.handle.boot, 1);
    // The order number still protects the payer (ORDER-01).
    assert_eq!(captures(&variant), 1);
}

#[test]
fn gen_06_key_not_persisted_changes_nothing_with_deterministic_keys() {
    let script = |b: &mut ClientBench| {
        b.fates.push_back(Fate::LoseRequest);
        b.command(0, pay());
        b.crash(0);
        b.restart(0);
    };
    let reference = run(Policy::reference(), script);
    let variant = run(
        Policy::reference().with(AntiPattern::KeyNotPersisted),
        script,
    );
    assert_eq!(departure(&reference, &variant), (None, None));
    assert!(
        deviations(&variant).is_empty(),
        "a derived key is recomputed"
    );
}

/// Two network errors, then the platform answers.
fn flaky(b: &mut ClientBench) {
    b.fates.extend([Fate::NetworkError, Fate::NetworkError]);
    b.command(0, pay());
    b.advance(Millis::secs(5));
    b.upstream(AcquirerDecision::Approve);
}

#[test]
fn gen_04_key_regenerated_on_retry_sends_a_new_key_on_every_try() {
    let pattern = AntiPattern::KeyRegeneratedOnRetry;
    let reference = run(Policy::reference_random(), flaky);
    let variant = run(Policy::reference_random().with(pattern), flaky);
    let keys = |b: &ClientBench| {
        b.sent()
            .iter()
            .map(|s| key(s).to_owned())
            .collect::<Vec<_>>()
    };
    let (rk, vk) = (keys(&reference), keys(&variant));
    assert_eq!(rk.len(), 3);
    assert!(
        rk.iter().all(|k| *k == rk[0]),
        "the reference reads its key back"
    );
    assert_eq!(vk.len(), 3);
    assert_eq!(vk[0], rk[0], "same first key");
    assert!(
        vk[1] != vk[0] && vk[2] != vk[1],
        "a new key per retry: {vk:?}"
    );
    let (r, v) = departure(&reference, &variant);
    assert_eq!(r.unwrap().at, v.clone().unwrap().at, "same time, other key");
    assert_eq!(v.unwrap().rule, Rule::RandomKeyPersistedFirst);
    assert_eq!(deviations(&variant).len(), 2);
    // With derived keys there is nothing to regenerate.
    let derived = run(Policy::reference().with(pattern), flaky);
    assert!(
        keys(&derived)
            .iter()
            .all(|k| k == "payment.create:ORDER-001:1")
    );
}

// ---- UNKNOWN-04 ------------------------------------------------------------------------

#[test]
fn unknown_04_changed_params_same_key_replays_the_original_key_with_a_new_amount() {
    let pattern = AntiPattern::ChangedParamsSameKey;
    let script = |b: &mut ClientBench| {
        b.command(0, pay());
        b.upstream(AcquirerDecision::Approve);
        b.command(
            0,
            Command::AmendOrder {
                order: ORDER.into(),
                amount: 12_000,
            },
        );
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    let refused = Decision::Refused {
        reason: Refusal::ParametersBound,
    };
    assert!(
        reference
            .decisions()
            .iter()
            .any(|(_, _, _, d, _)| *d == refused)
    );
    let (r, v) = departure(&reference, &variant);
    assert_eq!(r, None, "the reference sends nothing");
    // S3: the same key with 12000 instead of 10000.
    let v = v.unwrap();
    assert_eq!(
        v.request,
        req::create("payment.create:ORDER-001:1", ORDER, 12_000, "USD", 'A')
    );
    assert_eq!(v.rule, Rule::ConflictIsDefect);
    // The platform answers 409 idempotency_conflict and keeps the original (CONFLICT-01).
    let defect = Decision::Defect {
        code: ErrorCode::IdempotencyConflict,
    };
    assert!(
        variant
            .decisions()
            .iter()
            .any(|(_, _, _, d, _)| *d == defect)
    );
    assert_eq!(
        variant
            .bench
            .platform
            .payment_view(PaymentId(1))
            .unwrap()
            .amount,
        10_000
    );
    assert_eq!(captures(&variant), 1);
}

// ---- RETRY-03: an unknown result taken for a failure --------------------------------------

/// The upstream is silent: the platform answers 202 at 15 s.
fn accepted_202(b: &mut ClientBench) {
    b.command(0, pay());
    b.advance(Millis::secs(20));
}

#[test]
fn retry_03_unknown_as_failure_submits_again_right_after_a_202() {
    let pattern = AntiPattern::UnknownAsFailure;
    let reference = run(Policy::reference(), accepted_202);
    let mut variant = run(Policy::reference().with(pattern), accepted_202);
    let (r, v) = departure(&reference, &variant);
    // Reference: its first query at 25 s; variant: a confirm with sequence + 1 at 15 s.
    assert_eq!(r, None, "the reference has not queried yet at 20 s");
    let v = v.unwrap();
    assert_eq!(v.at, Millis::secs(15));
    assert_eq!(
        v.request,
        req::confirm("payment.confirm:ORDER-001:2", PaymentId(1), 'A')
    );
    assert_eq!(v.rule, Rule::RetryMaxAttempts);
    // S8: 409 payment_in_progress; no second charge, whatever happens next.
    variant.settle(AcquirerDecision::Approve);
    variant.advance(Millis::mins(5));
    variant.settle(AcquirerDecision::Approve);
    assert_eq!(captures(&variant), 1);
    assert_eq!(variant.bench.platform.attempts().len(), 1);
}

// ---- CANCEL-02 ---------------------------------------------------------------------------

#[test]
fn cancel_02_cancel_202_as_canceled_closes_an_order_that_can_still_be_paid() {
    let pattern = AntiPattern::Cancel202AsCanceled;
    let script = |b: &mut ClientBench| {
        b.command(0, pay());
        b.upstream(AcquirerDecision::RequireAction);
        b.command(
            0,
            Command::CancelOrder {
                order: ORDER.into(),
            },
        );
        b.lose_upstream_calls();
        b.advance(Millis::secs(15)); // 202: the upstream could not confirm
    };
    let reference = run(Policy::reference(), script);
    let mut variant = run(Policy::reference().with(pattern), script);
    assert_eq!(state(&reference), OrderState::AwaitingPayer);
    assert_eq!(state(&variant), OrderState::Closed);
    assert_eq!(
        deviations(&variant),
        [(Millis::secs(15), pattern, Rule::Cancel202NotCanceled)]
    );
    assert!(
        reference.servers[0].poll_timeout().is_some(),
        "the reference queries"
    );
    assert_eq!(
        variant.servers[0].poll_timeout(),
        None,
        "the variant stops looking"
    );
    // The payer authenticates after all: the money moves for a "canceled" order.
    let attempt = variant.bench.acquirer.awaiting_payer().next().unwrap();
    variant.bench.payer_authenticates(attempt, true);
    assert_eq!(captures(&variant), 1);
    let view = variant.bench.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(
        view.status,
        PaymentStatus::RequiresAction,
        "the platform never said canceled"
    );
}

// ---- ATTEMPT-07: the client's side of ATTEMPT-02 ------------------------------------------

#[test]
fn attempt_07_card_retry_while_in_progress_sends_a_confirm_while_processing() {
    let pattern = AntiPattern::CardRetryWhileInProgress;
    assert_eq!(pattern.breaks(), Rule::CardRetryOnlyAfterFailed);
    let script = |b: &mut ClientBench| {
        accepted_202(b);
        b.command(
            0,
            Command::RetryWithCard {
                order: ORDER.into(),
                card: Card('B'),
            },
        );
    };
    let reference = run(Policy::reference(), script);
    let mut variant = run(Policy::reference().with(pattern), script);
    let refused = Decision::Refused {
        reason: Refusal::NotFailed {
            status: Some(PaymentStatus::Processing),
        },
    };
    assert!(
        reference
            .decisions()
            .iter()
            .any(|(_, _, _, d, r)| *d == refused && *r == Rule::CardRetryOnlyAfterFailed)
    );
    assert_eq!(
        deviations(&variant),
        [(Millis::secs(20), pattern, Rule::CardRetryOnlyAfterFailed)]
    );
    let (r, v) = departure(&reference, &variant);
    assert_eq!(r, None);
    let v = v.unwrap();
    assert_eq!(v.at, Millis::secs(20));
    assert_eq!(
        v.request,
        req::confirm("payment.confirm:ORDER-001:2", PaymentId(1), 'B')
    );
    // S8: the platform refuses (409 payment_in_progress): card B is never charged.
    variant.settle(AcquirerDecision::Approve);
    variant.advance(Millis::mins(2));
    assert_eq!(variant.bench.acquirer.ledger.captures_on(Card('B')), 0);
    assert_eq!(captures(&variant), 1);
}

// ---- WEBHOOK-02 ----------------------------------------------------------------------------

#[test]
fn webhook_02_webhook_ignores_version_lets_an_old_event_undo_a_payment() {
    let pattern = AntiPattern::WebhookIgnoresVersion;
    let script = |b: &mut ClientBench| {
        b.webhook_target = None;
        b.command(0, pay());
        b.advance(Millis::secs(16)); // 202: processing, version 2
        b.upstream(AcquirerDecision::Approve); // succeeded, version 3
        let (older, newer) = (b.bench.webhooks[0].clone(), b.bench.webhooks[1].clone());
        for event in [newer, older] {
            let draw = b.draw();
            b.input(0, ClientInput::Webhook { event, draw });
        }
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    assert_eq!(state(&reference), OrderState::Paid);
    assert_eq!(reference.db.order(ORDER).unwrap().version(), 3);
    // The re-delivered version 2 ("processing") is applied over version 3 ("succeeded").
    assert_eq!(
        deviations(&variant),
        [(Millis::secs(16), pattern, Rule::LatestVersionWins)]
    );
    assert_eq!(state(&variant), OrderState::Confirming);
    assert_eq!(variant.db.order(ORDER).unwrap().version(), 2);
}

// ---- SCHED-02 ------------------------------------------------------------------------------

#[test]
fn sched_02_poll_too_fast_queries_every_second() {
    let pattern = AntiPattern::PollTooFast;
    let reference = run(Policy::reference(), accepted_202);
    let variant = run(Policy::reference().with(pattern), accepted_202);
    let (r, v) = departure(&reference, &variant);
    assert_eq!(r, None, "the reference's first query is at 25 s");
    let v = v.unwrap();
    assert_eq!(v.at, Millis::secs(16));
    assert_eq!(v.request, req::get(PaymentId(1)));
    let times: Vec<Millis> = variant
        .sent()
        .iter()
        .filter(|s| s.request.endpoint.method() == Method::Get)
        .map(|s| s.at)
        .collect();
    assert_eq!(times, [16, 17, 18, 19, 20].map(Millis::secs));
    assert!(
        times
            .windows(2)
            .all(|w| w[1].since(w[0]) < Millis::secs(10))
    );
    assert_eq!(pattern.breaks(), Rule::QuerySpacing);
}

// ---- RATE-03 -------------------------------------------------------------------------------

#[test]
fn rate_03_ignore_retry_after_retries_after_the_backoff_instead() {
    let pattern = AntiPattern::IgnoreRetryAfter;
    let script = |b: &mut ClientBench| {
        b.jitter = Millis::ms(100);
        b.bench.control(Control::SetRateLimited {
            merchant: MerchantId(1),
            on: true,
        });
        b.command(0, pay());
        b.advance(Millis::secs(3));
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    let (r, v) = departure(&reference, &variant);
    assert_eq!(r.unwrap().at, Millis::secs(2), "Retry-After: 2");
    let v = v.unwrap();
    assert_eq!(v.at, Millis::ms(1_100), "1 s backoff + 100 ms jitter");
    assert_eq!(v.rule, Rule::RetryAfterHonoured);
    assert_eq!(
        deviations(&variant)[0],
        (Millis::ZERO, pattern, pattern.breaks())
    );
    // RATE-01, RATE-02: the early retry is not executed either.
    assert_eq!(variant.bench.platform.payments().len(), 0);
}

// ---- RES-04 --------------------------------------------------------------------------------

#[test]
fn res_04_recharge_on_manual_review_charges_a_second_payment() {
    let pattern = AntiPattern::RechargeOnManualReview;
    let script = |b: &mut ClientBench| {
        b.command(0, pay());
        b.advance(Millis::hours(2)); // silent upstream: manual_review after 1 h
        b.settle(AcquirerDecision::Approve); // then the acquirer answers everything
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    let (_, v) = departure(&reference, &variant);
    let v = v.unwrap();
    assert_eq!(
        v.request,
        req::create(
            "payment.create:ORDER-001-R2:1",
            "ORDER-001-R2",
            10_000,
            "USD",
            'A'
        )
    );
    assert_eq!(v.rule, Rule::ManualReviewClient);
    let (at, _, rule) = deviations(&variant)[0];
    assert_eq!(at, v.at, "the moment manual_review arrives");
    assert_eq!(rule, Rule::ManualReviewClient);
    assert_eq!(captures(&reference), 1);
    assert_eq!(captures(&variant), 2, "the original payment succeeded too");
}

// ---- GEN-05 --------------------------------------------------------------------------------

#[test]
fn gen_05_key_reused_across_endpoints_sends_the_payment_key_to_cancel_and_refunds() {
    let pattern = AntiPattern::KeyReusedAcrossEndpoints;
    let cancel = |b: &mut ClientBench| {
        b.command(0, pay());
        b.upstream(AcquirerDecision::RequireAction);
        b.command(
            0,
            Command::CancelOrder {
                order: ORDER.into(),
            },
        );
    };
    let reference = run(Policy::reference(), cancel);
    let variant = run(Policy::reference().with(pattern), cancel);
    let (r, v) = departure(&reference, &variant);
    assert_eq!(key(&r.unwrap()), "payment.cancel:ORDER-001:1");
    let v = v.unwrap();
    assert_eq!(key(&v), "payment.create:ORDER-001:1");
    assert_eq!(
        v.request.endpoint.path(),
        "/v1/payments/pay_demo_001/cancel"
    );
    // Two refunds of one order under one key: the second is a conflict, not a refund.
    let refunds = |b: &mut ClientBench| {
        b.command(0, pay());
        b.upstream(AcquirerDecision::Approve);
        for (no, amount) in [("REFUND-001", 3_000), ("REFUND-002", 2_000)] {
            b.command(
                0,
                Command::RefundOrder {
                    order: ORDER.into(),
                    refund: no.into(),
                    amount,
                },
            );
        }
    };
    let reference = run(Policy::reference(), refunds);
    let variant = run(Policy::reference().with(pattern), refunds);
    assert_eq!(reference.bench.platform.refunds().len(), 2);
    assert_eq!(variant.bench.platform.refunds().len(), 1);
    let second = variant.db.refund("REFUND-002").unwrap();
    assert_eq!(second.outcome, OrderOutcome::Conflict);
    assert_eq!(pattern.breaks(), Rule::OneKeyPerSubmission);
}

// ---- the platform's side: whatever the variant ----------------------------------------------

#[test]
fn effect_01_the_platform_charges_each_payment_once_whatever_the_variant() {
    use Fate::*;
    let new_order_no = [
        AntiPattern::NewOrderNoAfterTimeout,
        AntiPattern::RechargeOnManualReview,
    ];
    // The key variants act on random keys only (derived keys are recomputed).
    let random_keys = [
        AntiPattern::KeyNotPersisted,
        AntiPattern::KeyRegeneratedOnRetry,
    ];
    let mut double_charged = std::collections::BTreeSet::new();
    for &pattern in AntiPattern::ALL {
        let base = if random_keys.contains(&pattern) {
            Policy::reference_random()
        } else {
            Policy::reference()
        };
        for first in [Deliver, LoseRequest, LoseResponse, NetworkError] {
            for second in [Deliver, LoseResponse] {
                for crash in [false, true] {
                    let policy = base.clone().with(pattern);
                    let mut b = ClientBench::new([policy.clone(), policy]);
                    b.fates.extend([first.clone(), second.clone()]);
                    b.command(0, pay());
                    b.command(1, pay());
                    if crash {
                        b.crash(0);
                    }
                    b.advance(Millis::mins(2));
                    let retry = Command::RetryWithCard {
                        order: ORDER.into(),
                        card: Card('B'),
                    };
                    b.command(1, retry);
                    if crash {
                        b.restart(0);
                    }
                    b.advance(Millis::hours(2));
                    b.settle(AcquirerDecision::Approve);
                    b.advance(Millis::hours(25));
                    b.settle(AcquirerDecision::Approve);
                    let ledger = &b.bench.acquirer.ledger;
                    // EFFECT-01, the platform's promise: one charge per Payment.
                    for payment in b.bench.platform.payments().keys() {
                        assert!(ledger.captures_of(*payment).count() <= 1, "{pattern}");
                    }
                    let charges = ledger.captures_on(Card('A')) + ledger.captures_on(Card('B'));
                    if charges > 1 {
                        assert!(new_order_no.contains(&pattern), "{pattern}: {charges}");
                        double_charged.insert(pattern);
                    }
                }
            }
        }
    }
    // Only a new order number gets past the platform, and both such variants do.
    assert_eq!(double_charged.into_iter().collect::<Vec<_>>(), new_order_no);
}

// ---- detail mutants: cadence and effects ------------------------------------------------------

/// The channel is paused: every create is answered 503 and retried.
fn paused(b: &mut ClientBench) {
    b.bench.control(Control::SetChannelPaused { on: true });
    b.command(0, pay());
    b.advance(Millis::secs(20));
}

/// When the server sent its requests of `method`.
fn times(b: &ClientBench, method: Method) -> Vec<Millis> {
    b.sent()
        .iter()
        .filter(|s| s.request.endpoint.method() == method)
        .map(|s| s.at)
        .collect()
}

fn post_times(b: &ClientBench) -> Vec<Millis> {
    times(b, Method::Post)
}

fn get_times(b: &ClientBench) -> Vec<Millis> {
    times(b, Method::Get)
}

fn shown(b: &ClientBench) -> Vec<PayerMessage> {
    b.decisions()
        .into_iter()
        .filter_map(|(_, _, _, d, _)| match d {
            Decision::ShowPayer { message } => Some(message),
            _ => None,
        })
        .collect()
}

fn fulfilments(b: &ClientBench) -> Vec<Millis> {
    b.decisions()
        .into_iter()
        .filter_map(|(at, _, _, d, _)| matches!(d, Decision::Fulfil { .. }).then_some(at))
        .collect()
}

#[test]
fn retry_02_backoff_not_doubled_waits_one_second_before_every_retry() {
    let pattern = AntiPattern::BackoffNotDoubled;
    let reference = run(Policy::reference(), paused);
    let variant = run(Policy::reference().with(pattern), paused);
    assert_eq!(post_times(&reference), [0, 1, 3, 7, 15].map(Millis::secs));
    assert_eq!(post_times(&variant)[..5], [0, 1, 2, 3, 4].map(Millis::secs));
    assert_eq!(
        deviations(&variant)[0],
        (Millis::ZERO, pattern, Rule::RetryBackoff)
    );
}

#[test]
fn retry_02_jitter_not_capped_adds_four_times_the_jitter() {
    let pattern = AntiPattern::JitterNotCapped;
    let script = |b: &mut ClientBench| {
        b.jitter = Millis::ms(100);
        paused(b);
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    assert_eq!(post_times(&reference)[1], Millis::ms(1_100));
    // 400 ms of jitter: beyond the contract's 250 ms.
    assert_eq!(post_times(&variant)[1], Millis::ms(1_400));
}

#[test]
fn timeout_01_post_timeout_5s_gives_up_on_a_create_after_5_seconds() {
    let pattern = AntiPattern::PostTimeout5s;
    let reference = run(Policy::reference(), accepted_202);
    let variant = run(Policy::reference().with(pattern), accepted_202);
    assert_eq!(reference.sent()[0].timeout, Millis::secs(20));
    assert_eq!(variant.sent()[0].timeout, Millis::secs(5));
    assert!(variant.sent()[0].timeout < Contract::POST_TIMEOUT_MIN);
}

#[test]
fn timeout_01_query_timeout_5s_gives_up_on_a_query_after_5_seconds() {
    let pattern = AntiPattern::QueryTimeout5s;
    let script = |b: &mut ClientBench| {
        accepted_202(b);
        b.advance(Millis::secs(10));
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    let query = |b: &ClientBench| {
        b.sent()
            .into_iter()
            .find(|s| s.request.endpoint.method() == Method::Get)
            .expect("a query")
    };
    assert_eq!(query(&reference).timeout, Millis::secs(10));
    assert_eq!(query(&variant).timeout, Millis::secs(5));
    // Creates keep their 20 s.
    assert_eq!(variant.sent()[0].timeout, Millis::secs(20));
}

#[test]
fn sched_01_queries_stop_at_1h_ends_the_schedule_after_an_hour() {
    let pattern = AntiPattern::QueriesStopAt1h;
    let script = |b: &mut ClientBench| {
        b.webhook_target = None;
        accepted_202(b);
        b.advance(Millis::hours(6));
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    let last = |b: &ClientBench| *get_times(b).last().expect("queries");
    // The schedule counts from the 202 at 15 s.
    assert_eq!(last(&reference), Millis::secs(15).after(Millis::hours(5)));
    assert_eq!(last(&variant), Millis::secs(15).after(Millis::hours(1)));
    assert!(
        variant
            .decisions()
            .iter()
            .any(|(_, _, _, d, _)| *d == Decision::ScheduleEnded)
    );
}

#[test]
fn sched_01_queries_after_final_goes_on_querying_a_succeeded_payment() {
    let pattern = AntiPattern::QueriesAfterFinal;
    let script = |b: &mut ClientBench| {
        b.webhook_target = None;
        accepted_202(b);
        b.advance(Millis::secs(10)); // the query at 25 s: processing
        b.settle(AcquirerDecision::Approve);
        b.advance(Millis::mins(10));
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    assert_eq!(state(&reference), OrderState::Paid);
    assert_eq!(state(&variant), OrderState::Paid);
    let after = |b: &ClientBench| {
        get_times(b)
            .into_iter()
            .filter(|t| *t > Millis::secs(45))
            .count()
    };
    assert_eq!(after(&reference), 0, "{:?}", get_times(&reference));
    assert!(after(&variant) > 0, "{:?}", get_times(&variant));
}

#[test]
fn sched_01_queries_after_failed_goes_on_querying_a_failed_payment_only() {
    let pattern = AntiPattern::QueriesAfterFailed;
    let script = |decision: AcquirerDecision| {
        move |b: &mut ClientBench| {
            b.webhook_target = None;
            accepted_202(b);
            b.advance(Millis::secs(10)); // the query at 25 s: processing
            b.settle(decision);
            b.advance(Millis::mins(10));
        }
    };
    let after = |b: &ClientBench| {
        get_times(b)
            .into_iter()
            .filter(|t| *t > Millis::secs(45))
            .count()
    };
    let reference = run(Policy::reference(), script(AcquirerDecision::Decline));
    let variant = run(
        Policy::reference().with(pattern),
        script(AcquirerDecision::Decline),
    );
    assert_eq!(state(&reference), OrderState::Failed);
    assert_eq!(state(&variant), OrderState::Failed);
    assert_eq!(after(&reference), 0, "{:?}", get_times(&reference));
    assert!(after(&variant) > 0, "{:?}", get_times(&variant));
    // At succeeded it stops as the reference does.
    let paid = run(
        Policy::reference().with(pattern),
        script(AcquirerDecision::Approve),
    );
    assert_eq!(state(&paid), OrderState::Paid);
    assert_eq!(after(&paid), 0, "{:?}", get_times(&paid));
}

#[test]
fn res_07_fulfil_per_version_fulfils_again_after_a_refund() {
    let pattern = AntiPattern::FulfilPerVersion;
    let script = |b: &mut ClientBench| {
        b.command(0, pay());
        b.settle(AcquirerDecision::Approve);
        b.command(
            0,
            Command::RefundOrder {
                order: ORDER.into(),
                refund: "R-1".into(),
                amount: 4_000,
            },
        );
        b.settle(AcquirerDecision::Approve);
        b.deliver_webhooks(0);
        b.advance(Millis::secs(30));
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    assert_eq!(fulfilments(&reference).len(), 1);
    assert!(
        fulfilments(&variant).len() >= 2,
        "{:?}",
        fulfilments(&variant)
    );
}

#[test]
fn res_07_fulfil_before_succeeded_fulfils_a_processing_payment() {
    let pattern = AntiPattern::FulfilBeforeSucceeded;
    let reference = run(Policy::reference(), accepted_202);
    let variant = run(Policy::reference().with(pattern), accepted_202);
    assert_eq!(fulfilments(&reference), []);
    assert_eq!(fulfilments(&variant), [Millis::secs(15)]);
    assert_eq!(state(&variant), OrderState::Confirming);
}

#[test]
fn wording_01_confirming_on_503_shows_confirming_instead_of_unavailable() {
    let pattern = AntiPattern::ConfirmingOn503;
    let reference = run(Policy::reference(), paused);
    let variant = run(Policy::reference().with(pattern), paused);
    assert_eq!(shown(&reference)[0], PayerMessage::TemporarilyUnavailable);
    assert_eq!(shown(&variant)[0], PayerMessage::Confirming);
    assert!(!shown(&variant).contains(&PayerMessage::TemporarilyUnavailable));
}

#[test]
fn res_06_close_on_failed_closes_a_declined_order() {
    let pattern = AntiPattern::CloseOnFailed;
    let script = |b: &mut ClientBench| {
        b.command(0, pay());
        b.settle(AcquirerDecision::Decline);
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    assert_eq!(state(&reference), OrderState::Failed);
    assert_eq!(state(&variant), OrderState::Closed);
    assert_eq!(
        variant
            .bench
            .platform
            .payment_view(PaymentId(1))
            .unwrap()
            .status,
        PaymentStatus::Failed
    );
}

#[test]
fn sched_01_loop_on_503_restarts_the_query_window_after_every_round_of_503s() {
    let pattern = AntiPattern::LoopOn503;
    let script = |b: &mut ClientBench| {
        b.bench.control(Control::SetChannelPaused { on: true });
        b.command(0, pay());
        b.advance(Millis::hours(1));
    };
    let reference = run(Policy::reference(), script);
    let variant = run(Policy::reference().with(pattern), script);
    // The reference: five 503s, not accepted, nothing more (S13).
    assert_eq!(reference.sent().len(), 5);
    // The variant: lookup, "not found", five more 503s, again and again.
    let gets = times(&variant, Method::Get).len();
    assert!(gets > 11, "more queries than one schedule has: {gets}");
    assert!(variant.sent().len() > 200, "{}", variant.sent().len());
}

// ---- every variant has its test ---------------------------------------------------------------

#[test]
fn every_anti_pattern_has_a_test_named_after_the_rule_it_breaks() {
    let source = include_str!("client_antipatterns.rs");
    for &pattern in AntiPattern::ALL {
        let prefix = format!("fn {}_{}_", pattern.breaks().test_tag(), pattern.name());
        assert!(source.contains(&prefix), "no test `{prefix}…`");
    }
}
