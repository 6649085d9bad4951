//! The project's Node.js test clients (tests/node/, built-in fetch only) against a live
//! sandbox: the contract's reference client survives every fault of the plan with one
//! Payment and a verdict that holds; the contract's "Don't do this" client gets a
//! verdict that names the double charge. Needs `node` (18 or later); `.ci/install-node`
//! installs it.

mod common;
mod serve_support;

use common::*;
use serde_json::Value;
use serve_support::*;
use std::path::Path;
use std::process::Command;

/// Runs a client script against the sandbox and reads its one JSON line.
fn node(script: &str, s: &Serve, args: &[&str]) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/node")
        .join(script);
    let base = format!("http://{}", s.addr);
    let out = Command::new("node")
        .arg(&path)
        .arg(&base)
        .args(args)
        .env("BACKOFF_BASE_MS", "100")
        .env("QUERY_DELAY_MS", "50")
        .output()
        .unwrap_or_else(|e| panic!("node does not run ({e}): .ci/install-node installs it"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{script}: {e}: {text}"))
}

#[test]
fn serve_node_reference_client_survives_reset_500_429_503_with_one_payment() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"},
                            {"endpoint":"create_payment","nth":2,"action":"500_after"},
                            {"endpoint":"create_payment","nth":3,"action":"rate_limited"},
                            {"endpoint":"create_payment","nth":4,"action":"unavailable"}],
                  "retry_after_s":1}"#;
    let plan = temp("node-plan.json", plan);
    let mut s = Serve::start("node-ref", &["--faults", plan.to_str().unwrap()]);
    let result = node("reference_client.mjs", &s, &["ORDER-1", "A", "k-ref-1"]);
    assert_eq!(result["outcome"], "done", "{result}");
    assert_eq!(result["status"], "succeeded", "{result}");
    assert_eq!(result["payment_id"], "pay_demo_001", "{result}");
    assert_eq!(result["trail"], serde_json::json!([200]), "{result}");
    s.holds_everywhere("node-ref");
    s.healthy();
}

#[test]
fn serve_node_reference_client_slow_acquirer_202_then_eight_days_later() {
    let mut s = Serve::start("node-slow", &["--clock", "manual"]);
    let result = node("reference_client.mjs", &s, &["ORDER-1", "D", "k-slow"]);
    assert_eq!(result["trail"], serde_json::json!([202]), "{result}");
    assert_eq!(result["status"], "succeeded", "{result}");
    let moved = s.control("POST", "/__sandbox/clock/advance", r#"{"by":"8d"}"#);
    assert_eq!(moved.status, 200);
    // The key's record expired; the order number is taken: 409, then the query finds it.
    let again = node("reference_client.mjs", &s, &["ORDER-1", "D", "k-slow"]);
    assert_eq!(again["trail"], serde_json::json!([409]), "{again}");
    assert_eq!(again["payment_id"], "pay_demo_001", "{again}");
    s.holds_everywhere("node-slow");
    s.healthy();
}

#[test]
fn serve_node_dont_do_this_client_gets_the_double_charge_named() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#;
    let plan = temp("node-dont.json", plan);
    let mut s = Serve::start("node-dont", &["--faults", plan.to_str().unwrap()]);
    let result = node("dont_do_this.mjs", &s, &["ORDER-1", "A", "k-dont"]);
    assert_eq!(
        result["trail"],
        serde_json::json!(["network error", 409, 201]),
        "{result}"
    );
    let violated = s.the_violation("node-dont");
    assert_eq!(violated["name"], "client-never-charges-an-order-twice");
    let rules = violated["rules"].to_string();
    assert!(
        rules.contains("UNKNOWN-03") && rules.contains("EFFECT-01"),
        "{rules}"
    );
    // The script files each create under the business order the sandbox gave it
    // (`for order ORDER-1 … POST …`), so `run` judges the same double charge: it fails
    // naming the property and its rules, as the session's verdict did; a line
    // `expect violation` accepts it.
    let script = s.control("GET", "/__sandbox/script", "").body;
    assert!(
        script.contains("B: for order ORDER-1 db=2 POST /v1/payments"),
        "{script}"
    );
    assert!(
        script.contains("# The session violated client-never-charges-an-order-twice ["),
        "{script}"
    );
    assert!(!script.contains("\nexpect violation"), "{script}");
    let (_, ran) = s.judged_and_run("node-dont-script");
    assert_eq!(
        ran, 1,
        "run of the script fails as the session's verdict did"
    );
    let file = temp("node-dont-unexpected.pha", &script);
    let out = run(&["run", file.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}");
    assert!(
        text.contains("VIOLATED client-never-charges-an-order-twice"),
        "{text}"
    );
    let accepted = format!("{script}expect violation client-never-charges-an-order-twice\n");
    let accepted_file = temp("node-dont-accepted.pha", &accepted);
    assert_eq!(code(&run(&["run", accepted_file.to_str().unwrap()])), 0);
    let json = run(&["run", file.to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_str(&stdout(&json)).expect("run prints JSON");
    assert_eq!(
        report[0]["violation"]["property"], violated["name"],
        "the property of the sandbox's verdict (whose rules are UNKNOWN-03, EFFECT-01)"
    );
    // Without the filing, the script's world has no business order to charge twice:
    // what fails then is the wire's reading of the same requests (a new key, a new order
    // number, after an unknown outcome).
    let unfiled = script.replace("for order ORDER-1 db=2 ", "");
    let file = temp("node-dont-unfiled.pha", &unfiled);
    let out = run(&["run", file.to_str().unwrap()]);
    let text = stdout(&out);
    assert!(
        !text.contains("VIOLATED client-never-charges-an-order-twice"),
        "{text}"
    );
    assert!(
        text.contains("VIOLATED client-creates-an-order-under-one-key"),
        "{text}"
    );
    s.healthy();
}
