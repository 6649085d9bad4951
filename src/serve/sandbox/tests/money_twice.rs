//! The ledger has the last word: each way a merchant can make the acquirer move money
//! twice for one purchase or one refund request after an outcome it could not know
//! (UNKNOWN-03, CANCEL-02, RES-04, S11) is a violation whose witness names both money
//! movements, and the exchanges that led to them are in its diagram.

use super::*;

fn refunds(sb: &Sandbox) -> usize {
    let refund = |e: &&payhub_model::event::Event| {
        matches!(
            e.what,
            What::Ledger {
                entry: LedgerEntry::Refund { .. }
            }
        )
    };
    sb.trace().stream.iter().filter(refund).count()
}

fn verdict_of(sb: &Sandbox, name: &str) -> payhub_properties::verdict::Verdict {
    payhub_properties::verdict::verdicts(&sb.world().facts)
        .into_iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no property {name}"))
}

/// The Markdown verdict's witness diagram of the first violation.
fn witness(sb: &Sandbox) -> String {
    let session = crate::serve::witness::Session::of(sb);
    let md = session_markdown(sb.trace(), &session);
    let (_, witness) = md
        .split_once("The entries that witness it:")
        .unwrap_or_else(|| panic!("no witness diagram: {md}"));
    witness.to_owned()
}

const TWICE: &str = "client-never-charges-an-order-twice";

/// Both Payments named in the detail, the order in the diagram, and the violation first.
fn charged_twice(sb: &Sandbox, first: &str, then: &str) {
    assert_eq!(captures(sb), 2, "the ledger captured twice");
    assert_eq!(violated(sb), [TWICE]);
    let v = verdict_of(sb, TWICE);
    let detail = v.detail.unwrap_or_default();
    assert!(
        detail.contains(first) && detail.contains(then),
        "both captures named: {detail}"
    );
    let w = witness(sb);
    for named in [first, then, "ORDER-1-retry"] {
        assert!(w.contains(named), "{named} not in {w}");
    }
}

fn lost_confirm() -> Sandbox {
    let plan = r#"{"faults":[{"endpoint":"confirm_payment","action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let created = send(
        &mut sb,
        "POST",
        "/v1/payments",
        Some("payment.create:ORDER-1:1"),
        r#"{"merchant_order_no":"ORDER-1","amount":100,"currency":"USD"}"#,
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let lost = send(
        &mut sb,
        "POST",
        "/v1/payments/pay_demo_001/confirm",
        Some("payment.confirm:ORDER-1:1"),
        r#"{"card":"A"}"#,
    );
    assert_eq!(lost.wire, Wire::Reset);
    assert_eq!(create(&mut sb, "k3", "ORDER-1-retry", 100, 'A').status, 201);
    sb
}

#[test]
fn unknown_03_a_lost_confirm_then_the_cart_paid_again_as_a_new_order_is_two_captures() {
    charged_twice(&lost_confirm(), "pay_demo_001", "pay_demo_002");
}

fn canceled_202() -> Sandbox {
    let mut sb = plain();
    assert_eq!(create(&mut sb, "k1", "ORDER-1", 100, 'G').status, 202);
    let c = send(
        &mut sb,
        "POST",
        "/v1/payments/pay_demo_001/cancel",
        Some("k2"),
        "",
    );
    assert_eq!(c.status, 202, "{}", c.body);
    assert_eq!(create(&mut sb, "k3", "ORDER-1-retry", 100, 'A').status, 201);
    sb.advance(Millis::hours(2)).unwrap();
    sb
}

#[test]
fn cancel_02_a_cancel_202_read_as_canceled_then_paid_again_is_two_captures() {
    charged_twice(&canceled_202(), "pay_demo_001", "pay_demo_002");
}

fn manual_review() -> Sandbox {
    let mut sb = plain();
    assert_eq!(create(&mut sb, "k1", "ORDER-1", 100, 'E').status, 202);
    sb.advance(Millis::hours(2)).unwrap();
    let seen = get(&mut sb, "/v1/payments/pay_demo_001");
    assert_eq!(json(&seen)["resolution_status"], "manual_review");
    assert_eq!(create(&mut sb, "k3", "ORDER-1-retry", 100, 'A').status, 201);
    sb
}

#[test]
fn res_04_manual_review_read_as_failed_then_charged_again_is_two_captures() {
    charged_twice(&manual_review(), "pay_demo_001", "pay_demo_002");
}

const REFUNDED_TWICE: &str = "client-never-refunds-a-request-twice";
/// REFUND-04: the renumbering itself, read in the facts when the renumbered refund is
/// sent to the acquirer, a step before it is paid back.
const RENUMBERED: &str = "client-keeps-the-refund-number-while-unresolved";

fn lost_refund() -> Sandbox {
    let plan = r#"{"faults":[{"endpoint":"create_refund","action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    assert_eq!(create(&mut sb, "k1", "ORDER-1", 100, 'A').status, 201);
    let refund = |no: &str| {
        format!(r#"{{"payment_id":"pay_demo_001","merchant_refund_no":"{no}","amount":30}}"#)
    };
    let lost = send(
        &mut sb,
        "POST",
        "/v1/refunds",
        Some("r1"),
        &refund("REFUND-1"),
    );
    assert_eq!(lost.wire, Wire::Reset);
    let again = send(
        &mut sb,
        "POST",
        "/v1/refunds",
        Some("r2"),
        &refund("REFUND-1-again"),
    );
    assert!(again.status < 300, "{}", again.body);
    sb.advance(Millis::hours(2)).unwrap();
    sb
}

#[test]
fn s11_a_lost_refund_applied_again_under_a_new_refund_number_is_two_refunds() {
    let sb = lost_refund();
    assert_eq!(refunds(&sb), 2, "the ledger refunded twice");
    assert_eq!(violated(&sb), [RENUMBERED, REFUNDED_TWICE]);
    let detail = verdict_of(&sb, REFUNDED_TWICE).detail.unwrap_or_default();
    assert!(
        detail.contains("ref_demo_001") && detail.contains("ref_demo_002"),
        "{detail}"
    );
    let w = witness(&sb);
    for named in ["REFUND-1", "REFUND-1-again"] {
        assert!(w.contains(named), "{named} not in {w}");
    }
}

/// Each session's events judged alone give its verdict, and its exported script, run,
/// moves the money twice again and names the same property.
#[test]
fn the_events_and_the_script_of_each_session_judge_the_same() {
    use crate::script_cmd;
    for (sb, all) in [
        (lost_confirm(), &[TWICE][..]),
        (canceled_202(), &[TWICE]),
        (manual_review(), &[TWICE]),
        (lost_refund(), &[RENUMBERED, REFUNDED_TWICE]),
    ] {
        let name = all[0];
        let from_events = payhub_properties::Facts::from_events(&sb.trace().stream);
        let judged: Vec<_> = payhub_properties::verdict::verdicts(&from_events)
            .into_iter()
            .filter(|v| v.status == payhub_properties::verdict::Status::Violated)
            .map(|v| v.name)
            .collect();
        assert_eq!(judged, all);
        let script = crate::serve::script::export(&sb).unwrap();
        let named = format!("# The session violated {name} [");
        assert!(script.contains(&named), "{script}");
        assert!(!script.contains("\nexpect violation"), "{script}");
        let bare = script;
        let parsed = payhub_sim::script::parse(
            "session.pha",
            bare.as_bytes(),
            &script_cmd::expectable_properties(),
        )
        .unwrap_or_else(|e| panic!("{e:?}: {bare}"));
        let report = script_cmd::execute(&parsed);
        let ran = report
            .violation
            .as_ref()
            .map(|(v, _)| v.property.to_string());
        assert_eq!(ran.as_deref(), Some(name), "{bare}");
    }
}

/// The contract's way after each unknown outcome: the same key, or a query, and no new
/// business; one capture, one refund, nothing violated.
#[test]
fn the_contracts_way_after_the_same_unknown_outcomes_moves_money_once() {
    let plan = r#"{"faults":[{"endpoint":"confirm_payment","action":"reset_after"},
                            {"endpoint":"create_refund","action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let body = r#"{"merchant_order_no":"ORDER-1","amount":100,"currency":"USD"}"#;
    send(&mut sb, "POST", "/v1/payments", Some("c1"), body);
    for _ in 0..2 {
        send(
            &mut sb,
            "POST",
            "/v1/payments/pay_demo_001/confirm",
            Some("f1"),
            r#"{"card":"A"}"#,
        );
    }
    let refund = r#"{"payment_id":"pay_demo_001","merchant_refund_no":"REFUND-1","amount":30}"#;
    for _ in 0..2 {
        send(&mut sb, "POST", "/v1/refunds", Some("r1"), refund);
    }
    sb.advance(Millis::hours(2)).unwrap();
    assert_eq!((captures(&sb), refunds(&sb)), (1, 1));
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
}

/// Two purchases of one amount at once, each answered with its result, are two
/// purchases: nothing was unresolved to the merchant when the second was created.
#[test]
fn two_purchases_of_one_amount_each_answered_hold() {
    let mut sb = plain();
    let first = sb.handle(Millis::ZERO, &create_request("k1", "ORDER-1", 'A'));
    let second = sb.handle(Millis::ZERO, &create_request("k2", "ORDER-2", 'A'));
    assert_eq!(
        (answered(first).status, answered(second).status),
        (201, 201)
    );
    assert_eq!(captures(&sb), 2);
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
}

/// The headline holds only over what was judged, counts what was not and why, and the
/// table starts with the violation.
#[test]
fn the_markdown_headline_counts_what_it_could_not_judge_and_puts_violations_first() {
    let mut sb = plain();
    // A fresh session judged nothing: it says so, and does not hold.
    let fresh = session_markdown(sb.trace(), &crate::serve::witness::Session::of(&sb));
    assert!(fresh.contains("**Nothing judged**: 0 events"), "{fresh}");
    let (facts, side) = sb.held().judged();
    let json = crate::serve::verdict::json_of(&facts, &side, 0, "", Value::Null);
    assert!(json.contains("\"holds\": false"), "{json}");
    create(&mut sb, "k1", "ORDER-1", 100, 'A');
    let session = crate::serve::witness::Session::of(&sb);
    let md = session_markdown(sb.trace(), &session);
    assert!(md.contains("**Holds over what it judged**"), "{md}");
    assert!(
        md.contains("**Not judged**: ") && md.contains("## Cannot judge from this source ("),
        "{md}"
    );
    assert!(md.contains("the same purchase read from the wire"), "{md}");
    let plan = r#"{"faults":[{"endpoint":"create_payment","action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    create(&mut sb, "k1", "ORDER-1", 100, 'A');
    create(&mut sb, "k2", "ORDER-1-retry", 100, 'A');
    let session = crate::serve::witness::Session::of(&sb);
    let md = session_markdown(sb.trace(), &session);
    let first_row = md
        .lines()
        .find(|l| l.starts_with("| `"))
        .expect("a table row");
    assert!(
        first_row.contains(&format!("`{TWICE}` | violated")),
        "{first_row}"
    );
}

/// A session whose only violation is a wire property: its script, run, fails naming it
/// (`run` judges the wire properties over the replayed exchanges at its end), and
/// `expect violation` of it accepts it.
#[test]
fn the_script_of_a_session_violating_only_a_wire_property_fails_under_run() {
    use crate::script_cmd;
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let lost = create(&mut sb, "k1", "ORDER-1", 100, 'A');
    assert_eq!(lost.wire, Wire::Reset);
    let again = create(&mut sb, "k2", "ORDER-1", 100, 'A');
    assert_eq!(again.status, 409, "{}", again.body);
    const WIRE: &str = "client-creates-an-order-under-one-key";
    assert_eq!(captures(&sb), 1);
    assert!(violated(&sb).is_empty(), "{:?}", violated(&sb));
    let session = session_verdicts(&crate::serve::witness::Session::of(&sb));
    let named: Vec<_> = session
        .iter()
        .filter(|v| v.status == payhub_properties::verdict::Status::Violated)
        .map(|v| v.name)
        .collect();
    assert_eq!(named, [WIRE]);
    let script = crate::serve::script::export(&sb).unwrap();
    assert!(
        script.contains(&format!("# The session violated {WIRE} [")),
        "{script}"
    );
    let run = |text: &str| {
        let parsed = payhub_sim::script::parse(
            "session.pha",
            text.as_bytes(),
            &script_cmd::expectable_properties(),
        )
        .unwrap_or_else(|e| panic!("{e:?}: {text}"));
        script_cmd::execute(&parsed)
    };
    let report = run(&script);
    let ran = report.violation.as_ref().map(|(v, _)| v.property.as_str());
    assert_eq!(ran, Some(WIRE), "{script}");
    assert!(!report.passed());
    assert!(run(&format!("{script}expect violation {WIRE}\n")).passed());
}

/// Each violation quotes its rules' sentences, in English and in the Chinese original,
/// as what the contract asks instead, before the table of every property; the JSON lists
/// the violation first with the same sentences.
#[test]
fn a_violation_quotes_what_the_contract_asks_in_english_and_in_the_original() {
    let sb = lost_confirm();
    let session = crate::serve::witness::Session::of(&sb);
    let md = session_markdown(sb.trace(), &session);
    let asks = md
        .find("The contract asks instead:")
        .expect("the contract's ask");
    let table = md.find("## Properties judged").expect("the table");
    assert!(asks < table, "{md}");
    for quoted in [
        "**EFFECT-01** However many times one business submission is sent",
        "(原文: 幂等保证同一次业务提交无论发送多少次",
        "**UNKNOWN-03** When the result is unknown never change the idempotency key",
    ] {
        assert!(md.contains(quoted), "{quoted} not in {md}");
    }
    let (facts, side) = sb.held().judged();
    let json = crate::serve::verdict::json_of(&facts, &side, 0, "", Value::Null);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let first = &json["properties"][0];
    assert_eq!(first["name"], TWICE);
    assert_eq!(first["contract"][0]["id"], "EFFECT-01");
    let original = first["contract"][0]["original"].as_str().unwrap();
    assert!(original.starts_with("幂等保证"), "{original}");
    let page: serde_json::Value = serde_json::from_str(&crate::serve::page::to_json_of(
        &session,
        session_judged(&session),
    ))
    .unwrap();
    let html = page["html"].as_str().unwrap();
    assert!(
        html.contains("<li data-rule=\"UNKNOWN-03\">") && html.contains(original),
        "{html}"
    );
}
