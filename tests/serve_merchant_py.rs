//! A merchant integration the harness did not write (tests/merchant_py/merchant.py:
//! Python standard library and SQLite, keys derived from the business and persisted
//! before sending) against a live sandbox: clean, it holds under every fault plan of
//! the table in docs/sandbox.md; with each of its switchable mistakes, the verdict names
//! the property the mistake breaks. The merchant posts its journal (each order's state,
//! fulfilments, carts) at the end of each run, so the properties over its database are
//! judged too. Needs `python3`.

mod common;
mod serve_support;

use common::*;
use serde_json::Value;
use serve_support::*;
use std::path::Path;
use std::process::Command;

/// One row of docs/sandbox.md's table: the mistake, the business flow that meets it, the
/// fault plan that shows it, whether the session's clock is manual, the property named.
/// The `webhook` flow's merchant listens for the sandbox's webhooks (`serve --webhooks`).
struct Row {
    mistake: &'static str,
    flow: &'static str,
    plan: &'static str,
    manual: bool,
    property: &'static str,
}

const TWICE: &str = "client-never-charges-an-order-twice";
const CONFIRM_KEY: &str = "client-card-retry-only-after-failed";

const ROWS: &[Row] = &[
    Row {
        mistake: "renumber_after_lost_create",
        flow: "pay",
        plan: r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#,
        manual: true,
        property: TWICE,
    },
    Row {
        mistake: "new_key_after_lost_create",
        flow: "pay",
        plan: r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#,
        manual: true,
        property: "client-creates-an-order-under-one-key",
    },
    Row {
        mistake: "renumber_after_lost_confirm",
        flow: "pay_then_confirm",
        plan: r#"{"faults":[{"endpoint":"confirm_payment","nth":1,"action":"reset_after"}]}"#,
        manual: true,
        property: TWICE,
    },
    Row {
        mistake: "new_confirm_key_after_lost_confirm",
        flow: "pay_then_confirm",
        plan: r#"{"faults":[{"endpoint":"confirm_payment","nth":1,"action":"500_after"}]}"#,
        manual: true,
        property: CONFIRM_KEY,
    },
    Row {
        mistake: "cancel_202_as_canceled",
        flow: "cancel",
        plan: "{}",
        manual: true,
        property: TWICE,
    },
    Row {
        mistake: "manual_review_as_failed",
        flow: "manual_review",
        plan: "{}",
        manual: true,
        property: TWICE,
    },
    Row {
        mistake: "renumber_lost_refund",
        flow: "refund",
        plan: r#"{"faults":[{"endpoint":"create_refund","nth":1,"action":"reset_after"}]}"#,
        manual: true,
        property: "client-never-refunds-a-request-twice",
    },
    Row {
        mistake: "card_retry_same_key",
        flow: "card_retry",
        plan: "{}",
        manual: true,
        property: "wire-client-retries-a-card-under-a-new-key",
    },
    Row {
        mistake: "new_key_after_503",
        flow: "pay",
        plan: r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"unavailable"}]}"#,
        manual: false,
        property: "client-sends-one-key-per-submission",
    },
    Row {
        mistake: "new_key_after_429",
        flow: "pay",
        plan: r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"rate_limited"}],"retry_after_s":1}"#,
        manual: false,
        property: "client-sends-one-key-per-submission",
    },
    Row {
        mistake: "confirm_while_processing",
        flow: "processing",
        plan: "{}",
        manual: true,
        property: CONFIRM_KEY,
    },
    Row {
        mistake: "queries_too_soon",
        flow: "processing",
        plan: "{}",
        manual: false,
        property: "client-spaces-queries",
    },
    Row {
        mistake: "fulfil_every_success",
        flow: "pay_and_reconcile",
        plan: "{}",
        manual: true,
        property: "client-fulfils-an-order-once-when-succeeded",
    },
    Row {
        mistake: "failed_on_manual_review",
        flow: "manual_review",
        plan: "{}",
        manual: true,
        property: "client-keeps-an-order-pending-until-its-payment-is-final",
    },
    Row {
        mistake: "queries_after_final",
        flow: "slow_and_query",
        plan: "{}",
        manual: true,
        property: "client-stops-querying-at-a-final-status",
    },
    Row {
        mistake: "short_timeout",
        flow: "pay",
        plan: r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"hold","ms":8000}]}"#,
        manual: false,
        property: "client-waits-the-contract-timeouts",
    },
    Row {
        mistake: "queries_after_webhook",
        flow: "webhook",
        plan: "{}",
        manual: true,
        property: "client-stops-querying-at-a-final-status",
    },
];

/// Runs the merchant once against a fresh sandbox with the row's plan; the verdict after
/// the clock was moved on two hours (a silent card's late answer, a refund's end).
fn session(name: &str, row: &Row, mistake: Option<&str>) -> Value {
    let plan = temp(&format!("{name}.json"), row.plan);
    let mut args = vec!["--faults", plan.to_str().unwrap()];
    if row.manual {
        args.extend(["--clock", "manual"]);
    }
    // The merchant's webhook endpoint: a free loopback port, listened on by the merchant
    // before its first request.
    let hooks = (row.flow == "webhook").then(|| {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        (port.to_string(), format!("http://127.0.0.1:{port}/hooks"))
    });
    if let Some((_, url)) = &hooks {
        args.extend(["--webhooks", url.as_str()]);
    }
    let mut s = Serve::start(name, &args);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/merchant_py/merchant.py");
    let mut merchant = Command::new("timeout");
    if let Some((port, _)) = &hooks {
        merchant.env("MERCHANT_WEBHOOK_PORT", port);
    }
    let out = merchant
        .arg("120")
        .arg("python3")
        .arg(&script)
        .arg(format!("http://{}", s.addr))
        .arg(row.flow)
        .args(mistake)
        .output()
        .unwrap_or_else(|e| panic!("python3 does not run: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if row.manual {
        let moved = s.control("POST", "/__sandbox/clock/advance", r#"{"by":"2h"}"#);
        assert_eq!(moved.status, 200, "{}", moved.body);
    }
    let verdict = s.verdict();
    s.healthy();
    verdict
}

fn violated(verdict: &Value) -> Vec<String> {
    verdict["properties"]
        .as_array()
        .expect("a list of properties")
        .iter()
        .filter(|p| p["status"] == "violated")
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn serve_merchant_py_every_mistake_is_named_and_the_clean_integration_holds() {
    let mut missed = Vec::new();
    let mut false_positives = Vec::new();
    for (i, row) in ROWS.iter().enumerate() {
        let clean = session(&format!("merchant-py-clean-{i}"), row, None);
        if clean["holds"] != true {
            false_positives.push(format!(
                "{} under {}: {:?}",
                row.flow,
                row.plan,
                violated(&clean)
            ));
        }
        let caught = session(&format!("merchant-py-{i}"), row, Some(row.mistake));
        let names = violated(&caught);
        if !names.iter().any(|n| n == row.property) {
            missed.push(format!("{} → {}: {names:?}", row.mistake, row.property));
        }
    }
    assert!(
        false_positives.is_empty(),
        "the clean integration: {false_positives:#?}"
    );
    assert!(missed.is_empty(), "mistakes not named: {missed:#?}");
}
