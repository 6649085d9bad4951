//! `check-log` over the sandbox's own tapes: the project's Node.js clients (the
//! contract's reference retry, and its "Don't do this") run against a live sandbox with
//! faults; the session's JSON Lines events judged by `check-log` give the sandbox's own
//! verdict, property by property, and its HAR export gives the same verdict for every
//! property the wire can witness, the rest `cannot_judge` with the evidence a HAR lacks.
//! Needs `node` (18 or later); `.ci/install-node` installs it.

mod common;
mod serve_support;

use common::*;
use serde_json::Value;
use serve_support::*;
use std::path::Path;
use std::process::Command;

fn node(script: &str, s: &Serve, args: &[&str]) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/node")
        .join(script);
    let out = Command::new("node")
        .arg(&path)
        .arg(format!("http://{}", s.addr))
        .args(args)
        .env("BACKOFF_BASE_MS", "100")
        .env("QUERY_DELAY_MS", "50")
        .output()
        .unwrap_or_else(|e| panic!("node does not run ({e}): .ci/install-node installs it"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{script}: {text}");
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{script}: {e}: {text}"))
}

/// `check-log --format json` on a file: (its one file's report, exit code).
fn check_log(name: &str, body: &str) -> (Value, i32) {
    let file = temp(name, body);
    let o = run(&["check-log", file.to_str().unwrap(), "--format", "json"]);
    no_panic(&o);
    let v: Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    (v["files"][0].clone(), code(&o))
}

fn by_name(properties: &Value) -> Vec<(String, Value)> {
    properties
        .as_array()
        .expect("a list of properties")
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p.clone()))
        .collect()
}

/// Runs `script` against a sandbox with `plan`, then judges its tapes: the verdict of
/// the session, and check-log's of its events and of its HAR.
fn session(
    name: &str,
    plan: &str,
    script: &str,
    args: &[&str],
) -> (Value, (Value, i32), (Value, i32)) {
    let plan = temp(&format!("{name}-plan.json"), plan);
    let mut s = Serve::start(name, &["--faults", plan.to_str().unwrap()]);
    node(script, &s, args);
    let verdict = s.verdict();
    let events = s.control("GET", "/__sandbox/events", "");
    let har = s.control("GET", "/__sandbox/har", "");
    assert_eq!((events.status, har.status), (200, 200));
    s.healthy();
    let from_events = check_log(&format!("{name}.jsonl"), &events.body);
    let from_har = check_log(&format!("{name}.har"), &har.body);
    (verdict, from_events, from_har)
}

/// The events give the verdict exactly; the HAR gives it for what the wire witnesses.
fn agree(verdict: &Value, events: &Value, har: &Value) {
    assert_eq!(
        statuses(&events["properties"]),
        statuses(&verdict["properties"])
    );
    let har = by_name(&har["properties"]);
    let mut wire_judged = 0;
    for (name, sandbox) in by_name(&verdict["properties"]) {
        let (_, from_har) = har
            .iter()
            .find(|(n, _)| *n == name)
            .expect("every property");
        if from_har["status"] == "cannot_judge" {
            let missing = from_har["missing"].as_array().expect("what was missing");
            assert!(
                !missing.is_empty() && missing.iter().all(|m| m["why"].is_string()),
                "{name}"
            );
        } else {
            assert_eq!(from_har["status"], sandbox["status"], "{name}");
            wire_judged += 1;
        }
    }
    assert!(
        wire_judged >= 10,
        "the wire properties judge the HAR: {wire_judged}"
    );
}

#[test]
fn check_log_reference_client_tapes_give_the_sandboxs_verdict() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"},
                            {"endpoint":"create_payment","nth":2,"action":"500_after"},
                            {"endpoint":"create_payment","nth":3,"action":"rate_limited"},
                            {"endpoint":"create_payment","nth":4,"action":"unavailable"}],
                  "retry_after_s":1}"#;
    let (verdict, (events, events_code), (har, har_code)) = session(
        "cl-ref",
        plan,
        "reference_client.mjs",
        &["ORDER-1", "A", "k-ref-1"],
    );
    assert_eq!(verdict["holds"], true, "{verdict:#}");
    agree(&verdict, &events, &har);
    assert_eq!((events_code, har_code), (0, 0), "{har:#}");
    assert_eq!(har["format"], "har");
    assert!(har["entries"].as_u64().unwrap() >= 4, "{har:#}");
}

#[test]
fn check_log_dont_do_this_tapes_give_the_sandboxs_verdict_and_the_har_its_wire_part() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#;
    let (verdict, (events, events_code), (har, har_code)) = session(
        "cl-dont",
        plan,
        "dont_do_this.mjs",
        &["ORDER-1", "A", "k-dont"],
    );
    agree(&verdict, &events, &har);
    assert_eq!((events_code, har_code), (1, 1));
    let har = by_name(&har["properties"]);
    let find = |n: &str| har.iter().find(|(name, _)| name == n).unwrap().1.clone();
    // The ledger's double charge: the sandbox sees it, a HAR cannot.
    let charged = find("client-never-charges-an-order-twice");
    assert_eq!(charged["status"], "cannot_judge");
    assert!(
        charged["missing"]
            .to_string()
            .contains("the acquirer's ledger is not in a log"),
        "{charged}"
    );
    // What the wire shows of it: a new key for the order whose result was unknown.
    let wire = find("client-creates-an-order-under-one-key");
    assert_eq!(wire["status"], "violated", "{wire}");
    assert!(
        wire["detail"].as_str().unwrap().starts_with("entry 1 "),
        "{wire}"
    );
    assert_eq!(
        wire["witness"]["entries"].as_array().unwrap().len(),
        2,
        "{wire}"
    );
    assert!(wire["rules"].to_string().contains("UNKNOWN-03"));
}
