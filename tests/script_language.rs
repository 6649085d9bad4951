//! What scripts can say, statement by statement: each test runs a small script and
//! checks both its verdict and the world choices it compiled to.

use payhub_model::{ApiKeyId, Branch, ErrorCode, Millis};
use payhub_properties::ScriptReport as Report;
use payhub_properties::{AlwaysCheck, Kind, PROPERTIES};
use payhub_sim::script;
use payhub_sim::{Choice, WorldConfig};

fn always() -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .filter(|p| p.over_facts() && p.kind() == Kind::Always)
        .map(|p| p.name)
        .collect()
}

fn run(text: &str) -> Report {
    let mut script =
        script::parse("t.pha", text.as_bytes(), &always()).unwrap_or_else(|e| panic!("{e}"));
    script.config = script.config.clone();
    let mut check = AlwaysCheck {
        config: &script.config,
    };
    script::run(&script, &mut check)
}

fn passes(text: &str) -> Report {
    let r = run(text);
    assert!(r.passed(), "{}\n{}", r.failures().join("\n"), r.to_text());
    r
}

fn outcomes(r: &Report) -> Vec<String> {
    r.exchanges.iter().map(|x| x.outcome()).collect()
}

const BODY: &str =
    r#"{"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"A"}"#;

#[test]
fn key_07_invalid_headers_and_bodies_are_sent_as_written() {
    let r = passes(&format!(
        r#"server A merchant=1 env=test
server R key=ak_4
A: POST /v1/payments  {BODY}
expect: 400 invalid_request field=Idempotency-Key
A: POST /v1/payments  Idempotency-Key: ""  {BODY}
expect: 400 invalid_request field=Idempotency-Key
A: POST /v1/payments  Idempotency-Key: "k"*256  {BODY}
expect: 400 invalid_request field=Idempotency-Key
A: POST /v1/payments  Idempotency-Key: K  raw {{"amount":
expect: 400 invalid_request field=body
A: POST /v1/payments  Idempotency-Key: K  Authorization: none  {BODY}
expect: 401 authentication_failed
R: POST /v1/payments  Idempotency-Key: K  {BODY}
expect: 403 permission_denied
A: DELETE /v1/payments
expect: 405 method_not_allowed
A: GET /v2/nothing
expect: 404 resource_missing
expect platform: records = 0
"#
    ));
    let keys: Vec<Option<usize>> = r
        .exchanges
        .iter()
        .map(|x| {
            x.request
                .idempotency_key
                .as_ref()
                .map(|k| k.chars().count())
        })
        .collect();
    assert_eq!(keys[..3], [None, Some(0), Some(256)]);
    assert_eq!(r.exchanges[4].request.api_key, ApiKeyId(0));
    assert_eq!(r.exchanges[5].request.api_key, ApiKeyId(4));
}

#[test]
fn scope_02_servers_name_merchant_environment_and_api_key() {
    let r = passes(&format!(
        r#"server T merchant=1 env=test
server L merchant=1 env=live
server M key=ak_3
T: POST /v1/payments  Idempotency-Key: K  {BODY}
upstream: approve
expect: 201 id=pay_demo_001
L: POST /v1/payments  Idempotency-Key: K  {BODY}
upstream: approve
expect: 201 id=pay_demo_002
M: GET /v1/payments/pay_demo_001
expect: 404 resource_missing
T: GET /v1/payments/pay_demo_001  Authorization: Bearer ak_2
expect: 404
expect platform: payments(env=live) = 1
expect ledger: charges(env=test) = 1
"#
    ));
    assert_eq!(r.exchanges[1].request.api_key, ApiKeyId(2));
    assert_eq!(r.exchanges[2].request.api_key, ApiKeyId(3));
}

#[test]
fn rate_01_rate_04_429_and_503_switch_on_and_off() {
    let r = passes(&format!(
        r#"env: 429 on
A: POST /v1/payments  Idempotency-Key: K  {BODY}
expect: 429 rate_limited retry_after=2
env: 429 off
env: 503 on
A: POST /v1/payments  Idempotency-Key: K  {BODY}
expect: 503 temporarily_unavailable
env: pause-channel off
A: POST /v1/payments  Idempotency-Key: K  {BODY}
upstream: approve
expect: 201
"#
    ));
    let controls = r
        .tape
        .iter()
        .filter(|c| matches!(c, Choice::Control(_)))
        .count();
    assert_eq!(controls, 4);
}

#[test]
fn unknown_01_500_before_and_after_executing() {
    let r = passes(&format!(
        r#"A: POST /v1/payments  Idempotency-Key: K  {BODY}
platform: 500 before
expect: 500 internal_error
expect platform: payments = 0
A: POST /v1/payments  Idempotency-Key: K  {BODY}
platform: 500 after executing
upstream: approve
expect: 500 internal_error
expect platform: payments = 1
"#
    ));
    assert!(
        r.tape
            .iter()
            .any(|c| matches!(c, Choice::Fail500Before { .. }))
    );
    assert!(
        r.tape
            .iter()
            .any(|c| matches!(c, Choice::Fail500After { .. }))
    );
}

#[test]
fn upstream_01_upstream_outcomes_no_answer_and_timing() {
    let r = passes(&format!(
        r#"# No answer within 15 s: 202; the reply comes later.
A: POST /v1/payments  Idempotency-Key: K1  {BODY}
upstream: approve reply=held
wait 15s
expect: 202 status=processing
upstream: reply
A: GET /v1/payments/pay_demo_001
expect: 200 status=succeeded
# The acquirer captures and never answers; the platform queries it.
A: POST /v1/payments  Idempotency-Key: K2  {{"merchant_order_no":"ORDER-002","amount":500,"currency":"EUR","card":"B"}}
upstream: approve_silently
wait 15s
expect: 202
wait 1min
upstream query: approve
expect payment pay_demo_002: status=succeeded
# A lost charge call; the query voids it: failed.
A: POST /v1/payments  Idempotency-Key: K3  {{"merchant_order_no":"ORDER-003","amount":500,"currency":"EUR","card":"C"}}
upstream charge: lost
wait 15s
wait 1min
upstream query: approve
expect payment pay_demo_003: status=failed failure.code=not_received_by_upstream
# Authentication.
A: POST /v1/payments  Idempotency-Key: K4  {{"merchant_order_no":"ORDER-004","amount":500,"currency":"EUR","card":"D"}}
upstream: require_action
expect: 201 status=requires_action
payer: authenticate ok
wait 1min
upstream query: approve
expect payment pay_demo_004: status=succeeded
expect ledger: charges = 3
"#
    ));
    assert!(
        r.tape
            .iter()
            .any(|c| matches!(c, Choice::DropUpstream { .. }))
    );
    assert!(
        r.tape
            .iter()
            .any(|c| matches!(c, Choice::Authenticate { ok: true, .. }))
    );
    assert!(r.tape.contains(&Choice::Advance(Millis::secs(15))));
}

#[test]
fn webhook_01_webhooks_dropped_duplicated_and_reordered() {
    let r = passes(&format!(
        r#"A: POST /v1/payments  Idempotency-Key: K  {BODY}
net: hold response
upstream: approve
net: drop webhook
expect: pending
net: release response
expect: 201
expect no webhook: payment.succeeded
# The platform re-delivers the event a minute later; this time it comes twice.
wait 1min
net: duplicate webhook
expect webhook: payment.succeeded delivery=1 status=succeeded
"#
    ));
    let webhooks: Vec<&str> = r
        .trace
        .events
        .iter()
        .filter_map(|e| match &e.what {
            payhub_sim::TraceWhat::Webhook { event } => Some(event.kind.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(webhooks, ["payment.succeeded", "payment.succeeded"]);
}

#[test]
fn conc_02_branch_statements_choose_the_contracts_alternative() {
    let r = passes(&format!(
        r#"A: POST /v1/payments  Idempotency-Key: K  {BODY}
branch: S5:wait
B: POST /v1/payments  Idempotency-Key: K  {BODY}
wait 10s
expect B: 409 operation_in_progress
upstream: approve
expect A: 201
"#
    ));
    assert!(r.tape.iter().any(|c| matches!(
        c,
        Choice::Deliver {
            branch: Some(Branch::S5Wait),
            ..
        }
    )));
    // Without a branch, the run stops and names both alternatives.
    let r = run(&format!(
        "A: POST /v1/payments  Idempotency-Key: K  {BODY}\nB: POST /v1/payments  Idempotency-Key: K  {BODY}\n"
    ));
    let e = r.error.expect("a branch is required");
    assert_eq!(e.line, 2);
    assert!(
        e.message.contains("branch: S5:wait") && e.message.contains("branch: S5:in-progress"),
        "{e}"
    );
}

#[test]
fn ret_02_wait_7d_passes_the_key_retention_and_order_numbers_stay_unique() {
    passes(&format!(
        r#"A: POST /v1/payments  Idempotency-Key: K  {BODY}
upstream: approve
expect: 201
wait 7d
expect platform: records = 0
branch: S4:conflict
A: POST /v1/payments  Idempotency-Key: K  {BODY}
expect: 409 order_no_conflict related_resource_id=pay_demo_001
expect platform: payments = 1
"#
    ));
}

#[test]
fn gen_06_client_policies_drive_orders_with_crashes_and_until_quiet() {
    let r = passes(
        r#"server C client=reference
server D client=reference
C: pay ORDER-1 10000 USD card A
net: drop response to C
upstream: approve
until quiet
expect C order ORDER-1: state=paid status=succeeded key=payment.create:ORDER-1:1 seq=1
D: pay ORDER-2 5000 EUR card B then crash
expect ledger: charge-calls = 1
restart D
until quiet
expect D order ORDER-2: state=paid payment_id=pay_demo_002
expect ledger: charges = 2
"#,
    );
    assert!(r.tape.iter().any(|c| matches!(
        c,
        Choice::Command {
            crash_after: true,
            ..
        }
    )));
    assert!(r.tape.contains(&Choice::Restart { merchant: 1 }));
    // until quiet does not wait out the 7-day retention.
    assert!(r.world.now < Millis::days(1), "{}", r.world.now);
}

#[test]
fn step_labels_of_a_tape_are_statements() {
    let r = passes(&format!(
        r#"use delivery=manual
A: POST /v1/payments  Idempotency-Key: K  {BODY}
expect: pending
deliver m1
acquire u1 approve
deliver u2
deliver m2
deliver m3
expect: 201
advance 2s
tick
"#
    ));
    let labels: Vec<String> = r.tape.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        labels[1..6],
        [
            "deliver m1",
            "acquire u1 approve",
            "deliver u2",
            "deliver m2",
            "deliver m3"
        ]
    );
}

#[test]
fn a_statement_the_world_cannot_apply_fails_the_run_at_its_line() {
    let r = run("A: GET /v1/payments/pay_demo_001\nupstream: approve\n");
    assert!(!r.passed());
    let e = r.error.expect("nothing to decide");
    assert_eq!((e.line, e.column), (2, 1));
    assert!(e.message.contains("no matching upstream call"), "{e}");
    // A fault that never finds its message fails too.
    let r = run("A: GET /v1/payments/pay_demo_001\nnet: drop webhook\n");
    assert!(!r.passed());
    assert!(
        r.failures()[0].contains("never applied"),
        "{:?}",
        r.failures()
    );
}

#[test]
fn expect_violation_passes_only_for_that_property() {
    // The contract's "don't do this": a new key and order number after a timeout.
    let text = r#"server C client=new_key_after_timeout+new_order_no_after_timeout
webhooks none
C: pay ORDER-1 10000 USD card A
net: drop response to C
upstream: approve
wait 20s
upstream: approve
"#
    .to_owned();
    let r = run(&text);
    assert!(!r.passed());
    assert_eq!(
        r.violation.as_ref().unwrap().0.property,
        "client-never-charges-an-order-twice"
    );
    let expected = run(&format!(
        "{text}expect violation client-never-charges-an-order-twice\n"
    ));
    assert!(expected.passed(), "{}", expected.to_text());
    // The verdict says the violation was the expected one, not that something failed.
    let verdict = expected.verdict();
    assert!(
        verdict.starts_with("PASSED: ")
            && verdict
                .contains("the expected violation witnessed: client-never-charges-an-order-twice")
            && !verdict.contains("VIOLATED"),
        "{verdict}"
    );
    let wrong = run(&format!("{text}expect violation queries-never-charge\n"));
    assert!(!wrong.passed());
    let verdict = wrong.verdict();
    assert!(
        verdict.starts_with("FAILED: ")
            && verdict.contains("1 expectation failed")
            && verdict.contains("VIOLATED client-never-charges-an-order-twice"),
        "{verdict}"
    );
}

#[test]
fn durations_read_what_millis_writes() {
    for ms in [
        0,
        250,
        1_000,
        1_250,
        60_000,
        3_600_000 + 10_000,
        86_400_000 * 7,
        90_061_001,
    ] {
        let d = Millis(ms);
        assert_eq!(script::parse_duration(&d.to_string()), Some(d), "{d}");
    }
    assert_eq!(script::parse_duration("2min"), Some(Millis::mins(2)));
    assert_eq!(script::parse_duration("1d2h"), Some(Millis::hours(26)));
    assert_eq!(script::parse_duration("7"), None);
    assert_eq!(script::parse_duration("5 s"), None);
}

#[test]
fn odd_keys_and_bodies_round_trip_through_an_exported_script() {
    let text = format!(
        r#"A: POST /v1/payments  Idempotency-Key: ""  {BODY}
A: POST /v1/payments  Idempotency-Key: "k"*256  {BODY}
A: POST /v1/payments  Idempotency-Key: "a key with spaces"  {BODY}
A: POST /v1/payments  Idempotency-Key: K  raw {{"amount":
A: POST /v1/payments  Idempotency-Key: K  Authorization: Bearer ak_9  {BODY}
A: POST /v1/payments/pay_demo_001/confirm  Idempotency-Key: K
A: GET /v1/refunds?merchant_refund_no=R-001
"#
    );
    let original = passes(&text);
    let config: &WorldConfig = &original.script.config;
    let exported = script::script_from_tape(config, &original.tape, None, "odd requests")
        .expect("expressible");
    let again = passes(&exported);
    assert_eq!(again.tape, original.tape);
    let codes: Vec<Option<ErrorCode>> = again
        .exchanges
        .iter()
        .map(|x| x.response.as_ref().and_then(|r| r.error_code()))
        .collect();
    assert_eq!(codes[4], Some(ErrorCode::AuthenticationFailed));
    assert_eq!(outcomes(&again), outcomes(&original));
    assert_eq!(
        outcomes(&again)[..3],
        ["400 invalid_request", "400 invalid_request", "pending"]
    );
    assert_eq!(
        again.exchanges[2].request.idempotency_key.as_deref(),
        Some("a key with spaces")
    );
}

#[test]
fn card_03_the_example_of_the_issue_runs_as_written() {
    let r = passes(
        r#"# S7: replay with a different card after a timeout
use platform=reference max_attempts=3
A: POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"A"}
upstream: approve
net: drop response
A: POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"B"}
expect: 200 status=succeeded
expect ledger: charges(card=B) = 0
"#,
    );
    assert_eq!(outcomes(&r), ["lost", "200"]);
    assert_eq!(r.results.len(), 2);
}
