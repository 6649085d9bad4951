//! The core without a socket: requests in, replies out, on the session's own clock.

use super::*;
use crate::http_map::Wire;
use crate::serve::faults::Plan;
use crate::serve::verdict::Judged;
use crate::serve::witness::Session;
use payhub_model::event::What;
use payhub_model::{LedgerEntry, Millis};
use serde_json::Value;

fn sandbox(branches: Branches, plan: &str) -> Sandbox {
    Sandbox::new(Settings {
        seed: 7,
        branches,
        plan: Plan::from_json(plan).unwrap(),
        webhooks: false,
        planted: Planted::Reference,
        seam: Default::default(),
    })
}

/// The session's verdicts as it stands, the journal folded in (the edge takes them off
/// the session's lock: `Sandbox::held`).
pub(crate) fn session_judged(session: &Session) -> Judged {
    let (world, record) = (session.world, session.record);
    let journal = session.journal.events(record.last_at(), &world.facts);
    let (facts, side) = crate::serve::journal::fold(&journal, &world.facts, record.wire_side());
    Judged {
        verdicts: side.verdicts(&facts),
        events: record.events_total(),
    }
}

pub(crate) fn session_verdicts(session: &Session) -> Vec<payhub_properties::verdict::Verdict> {
    session_judged(session).verdicts
}

pub(crate) fn session_markdown(trace: &payhub_sim::Trace, session: &Session) -> String {
    crate::serve::verdict::to_markdown_of(trace, session, &session_judged(session))
}

fn plain() -> Sandbox {
    sandbox(Branches::A, "{}")
}

fn send(sb: &mut Sandbox, method: &str, target: &str, key: Option<&str>, body: &str) -> HttpReply {
    let http = HttpRequest {
        method: method.into(),
        target: target.into(),
        authorization: Some(b"Bearer ak_1".to_vec()),
        idempotency_key: key.map(|k| k.as_bytes().to_vec()),
        body: body.as_bytes().to_vec(),
    };
    let now = sb.now();
    answered(sb.handle(now, &http))
}

fn answered(step: Step) -> HttpReply {
    match step {
        Step::Answered(reply) => reply,
        Step::Pending(id) => panic!("{id} is pending"),
    }
}

fn create_request(key: &str, order: &str, card: char) -> HttpRequest {
    HttpRequest {
        method: "POST".into(),
        target: "/v1/payments".into(),
        authorization: Some(b"Bearer ak_1".to_vec()),
        idempotency_key: Some(key.as_bytes().to_vec()),
        body: format!(
            r#"{{"merchant_order_no":"{order}","amount":100,"currency":"USD","card":"{card}"}}"#
        )
        .into_bytes(),
    }
}

fn create(sb: &mut Sandbox, key: &str, order: &str, amount: i64, card: char) -> HttpReply {
    let body = format!(
        r#"{{"merchant_order_no":"{order}","amount":{amount},"currency":"USD","card":"{card}"}}"#
    );
    send(sb, "POST", "/v1/payments", Some(key), &body)
}

fn get(sb: &mut Sandbox, target: &str) -> HttpReply {
    send(sb, "GET", target, None, "")
}

fn json(reply: &HttpReply) -> Value {
    serde_json::from_str(&reply.body).unwrap_or_else(|e| panic!("{e}: {}", reply.body))
}

/// Captures, as the session's event stream shows the ledger.
fn captures(sb: &Sandbox) -> usize {
    let capture = |e: &&payhub_model::event::Event| {
        matches!(
            e.what,
            What::Ledger {
                entry: LedgerEntry::Capture { .. }
            }
        )
    };
    sb.trace().stream.iter().filter(capture).count()
}

fn violated(sb: &Sandbox) -> Vec<&'static str> {
    payhub_properties::verdict::verdicts(&sb.world().facts)
        .into_iter()
        .filter(|v| v.status == payhub_properties::verdict::Status::Violated)
        .map(|v| v.name)
        .collect()
}

#[test]
fn replay_02_the_same_key_replayed_answers_the_same_payment_and_charges_once() {
    let mut sb = plain();
    let first = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    let again = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!((first.status, again.status), (201, 200));
    assert_eq!(first.body, again.body);
    assert_eq!(json(&first)["status"], "succeeded");
    assert_eq!(captures(&sb), 1);
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
}

#[test]
fn conflict_01_a_changed_amount_under_the_key_is_409() {
    let mut sb = plain();
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    let changed = create(&mut sb, "k1", "ORDER-1", 10001, 'A');
    assert_eq!(changed.status, 409);
    assert_eq!(json(&changed)["error"]["code"], "idempotency_conflict");
    assert_eq!(captures(&sb), 1);
}

#[test]
fn upstream_01_a_slow_card_answers_202_after_the_wait_and_is_captured_after() {
    let mut sb = plain();
    let reply = create(&mut sb, "k1", "ORDER-1", 500, 'D');
    assert_eq!(reply.status, 202);
    assert_eq!(json(&reply)["status"], "processing");
    assert_eq!(sb.world().now, payhub_model::Contract::SYNC_WAIT);
    let later = get(&mut sb, "/v1/payments/pay_demo_001");
    assert_eq!(json(&later)["status"], "succeeded");
    assert_eq!(captures(&sb), 1);
}

#[test]
fn res_03_a_silent_card_goes_to_manual_review_when_the_query_window_ends() {
    let mut sb = plain();
    let reply = create(&mut sb, "k1", "ORDER-1", 500, 'E');
    assert_eq!(reply.status, 202);
    assert_eq!(json(&reply)["resolution_status"], "needs_query");
    sb.advance(Millis::hours(2)).unwrap();
    let later = get(&mut sb, "/v1/payments/pay_demo_001");
    assert_eq!(
        json(&later)["resolution_status"],
        "manual_review",
        "{}",
        later.body
    );
    assert_eq!(captures(&sb), 1, "the silent acquirer did capture");
}

#[test]
fn res_05_card_c_requires_action_until_the_payer_authenticates() {
    let mut sb = plain();
    let reply = create(&mut sb, "k1", "ORDER-1", 500, 'C');
    assert_eq!(json(&reply)["status"], "requires_action", "{}", reply.body);
    assert!(sb.authenticate(payhub_model::PaymentId(2), true).is_err());
    sb.authenticate(payhub_model::PaymentId(1), true).unwrap();
    sb.advance(Millis::mins(5)).unwrap();
    let later = get(&mut sb, "/v1/payments/pay_demo_001");
    assert_eq!(json(&later)["status"], "succeeded", "{}", later.body);
}

#[test]
fn declined_and_failing_cards_end_failed_without_money() {
    let mut sb = plain();
    let declined = create(&mut sb, "k1", "ORDER-1", 500, 'B');
    assert_eq!(json(&declined)["status"], "failed", "{}", declined.body);
    create(&mut sb, "k2", "ORDER-2", 500, 'F');
    sb.advance(Millis::mins(5)).unwrap();
    let failed = get(&mut sb, "/v1/payments/pay_demo_002");
    assert_eq!(json(&failed)["status"], "failed", "{}", failed.body);
    assert_eq!(captures(&sb), 0);
}

#[test]
fn unknown_02_execute_then_reset_and_the_same_key_charges_once() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let lost = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!(lost.wire, Wire::Reset);
    assert_eq!(captures(&sb), 1, "it executed");
    let retried = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!(retried.status, 200);
    assert_eq!(json(&retried)["id"], "pay_demo_001");
    assert_eq!(captures(&sb), 1);
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
}

#[test]
fn unknown_03_a_new_key_and_order_number_after_a_reset_is_the_double_charge() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    let again = create(&mut sb, "k2", "ORDER-1-retry", 10000, 'A');
    assert_eq!(again.status, 201);
    assert_eq!(captures(&sb), 2);
    assert_eq!(violated(&sb), ["client-never-charges-an-order-twice"]);
    let json = super::super::verdict::json_of(
        &sb.world().facts,
        &sb.record().wire_side(),
        sb.record().events_total(),
        &sb.journal().reading(),
        Value::Null,
    );
    assert!(
        json.contains("UNKNOWN-03") && json.contains("EFFECT-01"),
        "{json}"
    );
}

#[test]
fn an_order_whose_result_the_client_learned_is_not_a_resubmission() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","action":"reset_before"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let lost = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!(lost.wire, Wire::Reset);
    assert_eq!(captures(&sb), 0, "nothing executed");
    let list = get(&mut sb, "/v1/payments?merchant_order_no=ORDER-1");
    assert_eq!(list.status, 200, "{}", list.body);
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!(captures(&sb), 1);
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
}

#[test]
fn unknown_01_500_after_executing_then_the_same_key_answers_the_payment() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","action":"500_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let failed = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!(failed.status, 500);
    assert_eq!(json(&failed)["error"]["code"], "internal_error");
    let retried = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!((retried.status, captures(&sb)), (200, 1));
}

#[test]
fn rate_01_and_rate_04_429_with_the_plans_retry_after_then_503() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"rate_limited"},
                            {"endpoint":"create_payment","nth":2,"action":"unavailable"}],
                  "retry_after_s":1}"#;
    let mut sb = sandbox(Branches::A, plan);
    let limited = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!((limited.status, limited.retry_after_s), (429, Some(1)));
    sb.advance(Millis::secs(1)).unwrap();
    let paused = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!(paused.status, 503);
    assert_eq!(json(&paused)["error"]["code"], "temporarily_unavailable");
    let ok = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!((ok.status, captures(&sb)), (201, 1));
}

#[test]
fn order_01_the_branch_setting_picks_the_s4_answer() {
    for (branches, status) in [(Branches::A, 409), (Branches::B, 200)] {
        let mut sb = sandbox(branches, "{}");
        create(&mut sb, "k1", "ORDER-1", 10000, 'A');
        let second = create(&mut sb, "k2", "ORDER-1", 10000, 'A');
        assert_eq!(second.status, status, "{branches:?}: {}", second.body);
        assert_eq!(captures(&sb), 1);
    }
}

#[test]
fn ret_01_advancing_eight_days_fires_the_timers_and_the_key_is_free_again() {
    let mut sb = plain();
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    let now = sb.advance(Millis::days(8)).unwrap();
    assert_eq!(now, Millis::days(8));
    let after = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_ne!(after.status, 200, "the record expired: {}", after.body);
    assert_eq!(captures(&sb), 1);
}

/// RET-01 and memory: a session of many keys holds the records of the last 7 days only;
/// the platform drops each as its retention timer fires, and the sandbox fires them as
/// its clock moves.
#[test]
fn ret_01_expired_idempotency_records_are_dropped_as_the_model_drops_them() {
    let mut sb = plain();
    for day in 0..10 {
        for i in 0..20 {
            let key = format!("k-{day}-{i}");
            let reply = create(&mut sb, &key, &format!("ORDER-{day}-{i}"), 100, 'A');
            assert_eq!(reply.status, 201, "{}", reply.body);
        }
        sb.advance(Millis::days(1)).unwrap();
    }
    // Now day 10: the records of days 4..=9 are under 7 days old; those of days 0..=3
    // are gone.
    assert_eq!(sb.world().platform.records().len(), 6 * 20);
    sb.advance(Millis::days(8)).unwrap();
    assert_eq!(sb.world().platform.records().len(), 0);
    assert_eq!(captures(&sb), 200, "the Payments themselves stay (RET-02)");
}

#[test]
fn the_events_judged_alone_give_the_sessions_verdict_and_the_script_exports() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    create(&mut sb, "k2", "ORDER-1-retry", 10000, 'A');
    let from_events = payhub_properties::Facts::from_events(&sb.trace().stream);
    let session = payhub_properties::verdict::verdicts(&sb.world().facts);
    let judged = payhub_properties::verdict::verdicts(&from_events);
    let status = |v: &[payhub_properties::verdict::Verdict]| -> Vec<_> {
        v.iter().map(|v| v.status).collect()
    };
    assert_eq!(status(&session), status(&judged));
    let script = crate::serve::script::export(&sb).unwrap();
    assert!(
        script.contains("use platform=reference delivery=manual"),
        "{script}"
    );
    // The script files both creates under the first order, as the session did, and
    // names the double charge the verdict names (`run` fails on it).
    assert_eq!(
        script
            .matches("for order ORDER-1 db=2 POST /v1/payments")
            .count(),
        2,
        "{script}"
    );
    assert!(
        script.ends_with("# The session violated client-never-charges-an-order-twice [EFFECT-01, UNKNOWN-03, RES-04, GEN-06]: `payhub-verify run` exits 1 naming it; a line `expect violation client-never-charges-an-order-twice` accepts it.\n"),
        "{script}"
    );
}

#[test]
fn reset_starts_a_new_session_at_the_edges_time() {
    let mut sb = plain();
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    sb.reset(Millis::secs(30));
    assert_eq!((sb.now(), sb.world().now), (Millis::secs(30), Millis::ZERO));
    assert!(sb.record().tape().unwrap().is_empty());
    let again = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!((again.status, captures(&sb)), (201, 1));
}

#[test]
fn the_real_clock_moves_the_world_and_never_back() {
    let mut sb = plain();
    let http = HttpRequest {
        method: "GET".into(),
        target: "/v1/payments/pay_demo_001".into(),
        authorization: Some(b"Bearer ak_1".to_vec()),
        ..HttpRequest::default()
    };
    sb.handle(Millis::secs(3), &http);
    assert_eq!(sb.world().now, Millis::secs(3));
    sb.advance(Millis::secs(60)).unwrap();
    let reply = answered(sb.handle(Millis::secs(4), &http));
    assert_eq!(reply.status, 404);
    assert_eq!(sb.world().now, Millis::secs(63));
}

const SLOW: &str =
    r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"slow_upstream","ms":1000}]}"#;

#[test]
fn conc_02_a_concurrent_same_key_create_waits_and_gets_the_same_payment() {
    let mut sb = sandbox(Branches::A, SLOW);
    let create = create_request("k1", "ORDER-1", 'A');
    let Step::Pending(first) = sb.handle(Millis::ZERO, &create) else {
        panic!("the first create waits for its slow upstream");
    };
    let Step::Pending(second) = sb.handle(Millis::ms(200), &create) else {
        panic!("the second create waits for the first (S5, wait)");
    };
    assert_eq!(sb.wake_at(), Some(Millis::secs(1)));
    assert!(sb.poll(Millis::ms(500), first).is_none());
    let a = sb
        .poll(Millis::secs(1), first)
        .expect("answered once the upstream answers");
    let b = sb.poll(Millis::secs(1), second).expect("answered with it");
    assert_eq!((a.status, b.status), (201, 200), "{} / {}", a.body, b.body);
    assert_eq!(json(&a)["id"], json(&b)["id"]);
    assert_eq!(captures(&sb), 1, "one execution");
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
    let script = crate::serve::script::export(&sb).unwrap();
    assert!(
        script.contains("S5:wait") || script.contains("S5"),
        "{script}"
    );
}

#[test]
fn conc_03_the_other_s5_branch_answers_operation_in_progress_at_once() {
    let mut sb = sandbox(Branches::B, SLOW);
    let create = create_request("k1", "ORDER-1", 'A');
    let Step::Pending(first) = sb.handle(Millis::ZERO, &create) else {
        panic!("the first create waits for its slow upstream");
    };
    let second = answered(sb.handle(Millis::ms(200), &create));
    assert_eq!(second.status, 409);
    assert_eq!(json(&second)["error"]["code"], "operation_in_progress");
    let a = sb.poll(Millis::secs(2), first).unwrap();
    assert_eq!((a.status, captures(&sb)), (201, 1));
}

#[test]
fn an_abandoned_exchange_loses_its_answer_and_the_order_stays_unknown() {
    let mut sb = sandbox(Branches::A, SLOW);
    let Step::Pending(first) = sb.handle(Millis::ZERO, &create_request("k1", "ORDER-1", 'A'))
    else {
        panic!("pending");
    };
    sb.abandon(first, None);
    sb.catch_up(Millis::secs(1));
    assert_eq!(sb.wake_at(), None, "its answer was lost once it came");
    assert_eq!(captures(&sb), 1);
    let again = answered(sb.handle(Millis::secs(2), &create_request("k2", "ORDER-2", 'A')));
    assert_eq!(again.status, 201);
    assert_eq!(violated(&sb), ["client-never-charges-an-order-twice"]);
}

fn with_webhooks() -> Sandbox {
    webhooks_with("{}")
}

fn webhooks_with(plan: &str) -> Sandbox {
    Sandbox::new(Settings {
        seed: 0,
        branches: Branches::A,
        plan: Plan::from_json(plan).unwrap(),
        webhooks: true,
        planted: Planted::Reference,
        seam: Default::default(),
    })
}

#[test]
fn webhook_faults_lose_duplicate_and_delay_webhooks() {
    // Every rule counts every webhook it matches: the first, its re-delivery, the copy,
    // then ORDER-2's, the fourth.
    let mut sb = webhooks_with(
        r#"{"webhook_faults":[{"type":"payment.succeeded","nth":1,"action":"drop"},
                              {"nth":2,"action":"duplicate"},
                              {"nth":4,"action":"delay","ms":700}]}"#,
    );
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert!(sb.take_webhooks().is_empty(), "the first is lost");
    sb.advance(Millis::mins(2)).unwrap();
    let twice = sb.take_webhooks();
    assert_eq!(twice.len(), 2, "the re-delivery, duplicated: {twice:?}");
    assert_eq!(twice[0].body, twice[1].body);
    for w in &twice {
        sb.webhook_done(w.msg, true);
    }
    create(&mut sb, "k2", "ORDER-2", 10000, 'A');
    let late = sb.take_webhooks();
    assert_eq!(late.len(), 1);
    assert_eq!(late[0].delay_ms, 700);
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
    crate::serve::script::export(&sb).unwrap();
}

#[test]
fn webhook_01_an_acknowledged_webhook_is_not_delivered_again() {
    let mut sb = with_webhooks();
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    let out = sb.take_webhooks();
    assert_eq!(out.len(), 1, "{out:?}");
    let body: Value = serde_json::from_str(&out[0].body).unwrap();
    assert_eq!(body["type"], "payment.succeeded");
    assert_eq!(body["object"]["id"], "pay_demo_001");
    assert!(body["id"].is_string() && body["version"].is_u64(), "{body}");
    assert!(sb.take_webhooks().is_empty(), "handed out once");
    assert!(!sb.webhooks_settled());
    sb.webhook_done(out[0].msg, true);
    assert!(sb.webhooks_settled());
    sb.advance(Millis::hours(1)).unwrap();
    assert!(sb.take_webhooks().is_empty());
    crate::serve::script::export(&sb).unwrap();
}

#[test]
fn a_lost_webhook_is_delivered_again_as_time_passes() {
    let mut sb = with_webhooks();
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    let out = sb.take_webhooks();
    sb.webhook_done(out[0].msg, false);
    assert!(sb.take_webhooks().is_empty());
    sb.advance(Millis::mins(2)).unwrap();
    let again = sb.take_webhooks();
    assert_eq!(again.len(), 1, "re-delivered");
    assert_eq!(
        serde_json::from_str::<Value>(&again[0].body).unwrap()["id"],
        serde_json::from_str::<Value>(&out[0].body).unwrap()["id"]
    );
}

const HOLD: &str =
    r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"hold","ms":1500}]}"#;

#[test]
fn timeout_01_a_held_answer_is_written_late() {
    let mut sb = sandbox(Branches::A, HOLD);
    let Step::Pending(id) = sb.handle(Millis::ZERO, &create_request("k1", "ORDER-1", 'A')) else {
        panic!("held");
    };
    assert_eq!(captures(&sb), 1, "executed before the hold");
    assert_eq!(sb.wake_at(), Some(Millis::ms(1500)));
    assert!(sb.poll(Millis::secs(1), id).is_none());
    assert_eq!(sb.poll(Millis::ms(1500), id).unwrap().status, 201);
}

#[test]
fn timeout_01_a_client_that_gives_up_on_a_held_answer_has_an_unknown_result() {
    let mut sb = sandbox(Branches::A, HOLD);
    let Step::Pending(id) = sb.handle(Millis::ZERO, &create_request("k1", "ORDER-1", 'A')) else {
        panic!("held");
    };
    sb.abandon(id, None);
    assert_eq!(sb.wake_at(), None, "nothing pending any more");
    let retried = answered(sb.handle(Millis::secs(2), &create_request("k1", "ORDER-1", 'A')));
    assert_eq!((retried.status, captures(&sb)), (200, 1));
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
    let renumbered = answered(sb.handle(Millis::secs(3), &create_request("k2", "ORDER-2", 'A')));
    assert_eq!(renumbered.status, 201);
    assert!(
        violated(&sb).is_empty(),
        "the replay told the client the result: {:?}",
        violated(&sb)
    );
}

/// TIMEOUT-01: a hang-up the edge saw under the real clock is the client's timeout on
/// the wire: before 20 s on a create it is named, after 20 s it is not.
#[test]
fn timeout_01_a_hang_up_before_20_s_is_named_and_one_after_is_not() {
    const WAITS: &str = "client-waits-the-contract-timeouts";
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"hold","ms":60000}]}"#;
    for (after, named) in [(Millis::secs(5), true), (Millis::secs(25), false)] {
        let mut sb = sandbox(Branches::A, plan);
        let Step::Pending(id) = sb.handle(Millis::ZERO, &create_request("k1", "ORDER-1", 'A'))
        else {
            panic!("held");
        };
        assert!(sb.poll(after, id).is_none());
        sb.abandon(id, Some(after));
        let session = crate::serve::witness::Session::of(&sb);
        let v = session_verdicts(&session)
            .into_iter()
            .find(|v| v.name == WAITS)
            .unwrap();
        let status = payhub_properties::verdict::Status::Violated;
        assert_eq!(v.status == status, named, "{after}: {:?}", v.detail);
        if named {
            let detail = v.detail.unwrap_or_default();
            assert!(
                detail.contains("hung up") && detail.contains("5s"),
                "{detail}"
            );
        }
    }
}

/// The verdict's diagram of a violation draws its witnesses only: the two creates of the
/// double charge (the second under its new order number) and their charges, with the
/// property and its rules as a note; an unrelated order of the session is not in it,
/// though the session's diagram has it.
#[test]
fn unknown_03_the_double_charges_diagram_draws_its_witnesses_only() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","order":"ORDER-1","nth":1,"action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    assert_eq!(create(&mut sb, "k0", "ORDER-OTHER", 500, 'A').status, 201);
    create(&mut sb, "k1", "ORDER-1", 10000, 'A');
    assert_eq!(
        create(&mut sb, "k2", "ORDER-1-retry", 10000, 'A').status,
        201
    );
    let session = crate::serve::witness::Session::of(&sb);
    let md = session_markdown(sb.trace(), &session);
    let (_, witness) = md
        .split_once("The entries that witness it:")
        .unwrap_or_else(|| panic!("no witness diagram: {md}"));
    let (witness, whole) = witness
        .split_once("## The session")
        .expect("the session's diagram");
    for named in [
        "Idempotency-Key: k1",
        "Idempotency-Key: k2",
        "ORDER-1-retry",
        "att_002",
        "att_003",
    ] {
        assert!(witness.contains(named), "{named} not in {witness}");
    }
    assert!(
        witness.contains("Note over")
            && witness.contains("client-never-charges-an-order-twice [EFFECT-01, UNKNOWN-03"),
        "{witness}"
    );
    assert!(
        !witness.contains("ORDER-OTHER") && !witness.contains("att_001"),
        "{witness}"
    );
    assert!(whole.contains("ORDER-OTHER"), "{whole}");
}

/// The load benchmark's setup: `fill` creates Payments as merchant 1's creates would,
/// numbered on from those held, each charged once.
#[test]
fn fill_creates_payments_as_creates_would() {
    let mut sb = plain();
    assert_eq!(create(&mut sb, "k1", "ORDER-1", 100, 'A').status, 201);
    assert_eq!(sb.fill(sb.now(), 30), Ok(31));
    assert_eq!(sb.fill(sb.now(), 9), Ok(40));
    assert_eq!(captures(&sb), 40);
    let again = get(&mut sb, "/v1/payments?merchant_order_no=FILL-39");
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(violated(&sb).is_empty());
}

#[test]
fn rate_02_and_rate_04_the_controls_switch_the_platforms_own_429_and_503_until_off() {
    let mut sb = plain();
    let merchant = MerchantId(1);
    let on = Control::SetRateLimited { merchant, on: true };
    let now = sb.now();
    sb.control(now, on).unwrap();
    for _ in 0..2 {
        let r = create(&mut sb, "K1", "ORDER-1", 100, 'A');
        assert_eq!((r.status, r.retry_after_s), (429, Some(2)), "{}", r.body);
    }
    let now = sb.now();
    sb.control(
        now,
        Control::SetRateLimited {
            merchant,
            on: false,
        },
    )
    .unwrap();
    sb.control(now, Control::SetChannelPaused { on: true })
        .unwrap();
    let r = create(&mut sb, "K1", "ORDER-1", 100, 'A');
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body.contains("temporarily_unavailable"), "{}", r.body);
    sb.control(now, Control::SetChannelPaused { on: false })
        .unwrap();
    let r = create(&mut sb, "K1", "ORDER-1", 100, 'A');
    assert_eq!(
        r.status, 201,
        "neither the 429s nor the 503 bound K1: {}",
        r.body
    );
    assert_eq!(captures(&sb), 1);
}

#[test]
fn cancel_02_a_card_g_cancel_is_answered_by_the_acquirer_after_the_wait_202() {
    let mut sb = plain();
    let r = create(&mut sb, "K1", "ORDER-1", 100, 'G');
    assert_eq!(r.status, 202, "{}", r.body);
    let id = json(&r)["id"].as_str().unwrap().to_owned();
    let c = send(
        &mut sb,
        "POST",
        &format!("/v1/payments/{id}/cancel"),
        Some("K2"),
        "",
    );
    assert_eq!(c.status, 202, "{}", c.body);
    assert_eq!(json(&c)["status"], "processing", "{}", c.body);
}

mod faults;
mod held;
mod journal;
mod money_twice;
mod webhook_queries;
