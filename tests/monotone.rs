//! Verdicts are monotone: a violation once witnessed is never withdrawn by later input
//! that lacks evidence. For every source (the sandbox's verdict, `judge` of an event
//! stream, `check-log` of a HAR and of an access log) and every property family that
//! source judges (the registry's over the platform and the ledger, the wire properties
//! of the client and of the platform), a violated input with unjudgeable requests added
//! (keys of no known owner, no key, answers refused 401, exchanges with no answer, answers
//! with no body) keeps every violation it had. (The sandbox's requests with unknown
//! keys and every attack: tests/serve_stray.rs.)

mod common;
mod serve_support;

use common::*;
use serde_json::{Value, json};
use serve_support::*;
use std::collections::BTreeSet;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn violated(properties: &Value) -> BTreeSet<String> {
    properties
        .as_array()
        .expect("properties")
        .iter()
        .filter(|p| p["status"] == "violated")
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

/// (The planted renumbered order is a violation only with the same purchase read by
/// amount, so every file is read so.)
fn check_log(path: &str) -> (BTreeSet<String>, i32) {
    let o = run(&[
        "check-log",
        "--format",
        "json",
        "--same-purchase-by-amount",
        path,
    ]);
    no_panic(&o);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {path}"));
    (violated(&v["files"][0]["properties"]), code(&o))
}

/// HAR entries a stranger's browser or a sanitized export adds.
fn stray_har_entries(at: &str) -> Vec<Value> {
    let create = |auth: Option<&str>, status: i64, body: Option<&str>| {
        let mut headers = vec![json!({"name": "Idempotency-Key", "value": "k-stray"})];
        if let Some(a) = auth {
            headers.push(json!({"name": "Authorization", "value": a}));
        }
        let mut response = json!({"status": status, "headers": []});
        if let Some(b) = body {
            response["content"] = json!({"text": b, "mimeType": "application/json"});
        }
        json!({
            "startedDateTime": at,
            "time": 5,
            "request": {"method": "POST", "url": "http://127.0.0.1:8080/v1/payments", "headers": headers,
                "postData": {"mimeType": "application/json", "text": "{\"merchant_order_no\":\"ORDER-STRAY\",\"amount\":1,\"currency\":\"USD\",\"card\":\"A\"}"}},
            "response": response,
        })
    };
    let unauth = r#"{"error":{"code":"unauthorized","message":"no key","retryable":false}}"#;
    vec![
        create(Some("Bearer sk_unknown_1"), 401, Some(unauth)),
        create(None, 401, Some(unauth)),
        create(Some("Bearer sk_unknown_2"), 0, None),
        create(Some("Bearer ak_1"), 201, None),
    ]
}

#[test]
fn monotone_check_log_of_a_har_keeps_every_violation_of_the_client_and_the_platform() {
    let dir = fixture("har");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("client-") || name.starts_with("platform-"))
            || !name.ends_with(".har")
        {
            continue;
        }
        let (before, code_before) = check_log(path.to_str().unwrap());
        assert_eq!(code_before, 1, "{name} is a planted violation");
        let mut har: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let entries = har["log"]["entries"].as_array_mut().unwrap();
        let last = entries.last().unwrap()["startedDateTime"]
            .as_str()
            .unwrap()
            .to_owned();
        let first = entries[0]["startedDateTime"].as_str().unwrap().to_owned();
        // Stray entries before, among and after the witnesses.
        let mut mixed = stray_har_entries(&first);
        mixed.append(entries);
        mixed.extend(stray_har_entries(&last));
        *entries = mixed;
        let stray = temp(
            &format!("stray-{name}"),
            &serde_json::to_string(&har).unwrap(),
        );
        let (after, code_after) = check_log(stray.to_str().unwrap());
        assert_eq!(code_after, 1, "{name}: a violation withdrawn");
        assert!(
            after.is_superset(&before),
            "{name}: {before:?} then {after:?}"
        );
        seen += 1;
    }
    assert!(seen >= 10, "{seen} fixtures");
}

#[test]
fn monotone_check_log_of_an_access_log_keeps_its_violation() {
    let log = std::fs::read_to_string(fixture("access/dont-do-this.jsonl")).unwrap();
    let (before, code_before) = check_log(&fixture("access/dont-do-this.jsonl"));
    assert_eq!(code_before, 1);
    let stray = [
        r#"{"time":"2026-12-01T10:00:21.500Z","duration_ms":5,"method":"POST","path":"/v1/payments","api_key":"sk_nobody","idempotency_key":"k-1","request_body":"{\"merchant_order_no\":\"X\",\"amount\":1,\"currency\":\"USD\"}","status":401}"#,
        r#"{"time":"2026-12-01T10:00:22.000Z","duration_ms":5,"method":"POST","path":"/v1/payments","idempotency_key":"k-9","request_body":"{}","status":401}"#,
        r#"{"time":"2026-12-01T10:00:23.000Z","duration_ms":5,"method":"POST","path":"/v1/payments","api_key":"sk_other","idempotency_key":"k-1","request_body":"{}","status":null,"error":"timeout"}"#,
    ];
    // Among the witnesses, in the order they started (a log's order is evidence: an
    // entry out of it is refused, not re-timed).
    let mut lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.extend(stray);
    let time = |l: &&str| serde_json::from_str::<Value>(l).unwrap()["time"].to_string();
    lines.sort_by_key(time);
    let mixed = lines.join("\n") + "\n";
    let f = temp("stray-access.jsonl", &mixed);
    let (after, code_after) = check_log(f.to_str().unwrap());
    assert_eq!(code_after, 1);
    assert!(after.is_superset(&before), "{before:?} then {after:?}");
    // With the key map as well.
    let o = run(&[
        "check-log",
        "--format",
        "json",
        f.to_str().unwrap(),
        "--api-key-map",
        &fixture("access/keys.json"),
    ]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
}

/// The sandbox: a double charge (the registry's `client-never-charges-an-order-twice`,
/// over the ledger) stays violated after requests with unknown and missing keys, in the
/// verdict and in `judge` of the session's events.
#[test]
fn monotone_the_sandbox_keeps_a_registry_violation_after_refused_requests() {
    let s = Serve::start("monotone", &[]);
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#;
    assert_eq!(s.control("POST", "/__sandbox/faults", plan).status, 200);
    assert!(matches!(
        s.create("ak_1", "k1", "ORDER-1", 10000),
        Outcome::Reset(_)
    ));
    assert_eq!(s.created("k2", "ORDER-1-retry", 10000).status, 201);
    let before = violated(&s.verdict()["properties"]);
    assert!(
        before.contains("client-never-charges-an-order-twice"),
        "{before:?}"
    );
    for key in ["ak_0", "ak_99", "garbage"] {
        let o = s.create(key, "k1", "ORDER-1", 10000);
        let Outcome::Answer(r) = o else {
            panic!("{key}: no answer")
        };
        assert_eq!(r.status, 401, "{key}");
    }
    let after = s.verdict();
    assert_eq!(after["holds"], false);
    assert!(
        violated(&after["properties"]).is_superset(&before),
        "{after:#}"
    );
    let (judged, _) = s.judged_and_run("monotone");
    assert!(violated(&judged["properties"]).is_superset(&before));

    // `judge` of the events with a request of a key of no known owner added, never
    // answered (its scope unknown: a pass could not be claimed, a violation stands).
    let events = s.control("GET", "/__sandbox/events", "").body;
    let mut stray: Value = events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["kind"] == "sent")
        .expect("a sent event");
    stray["id"] = json!("req_99999");
    stray["request"]["api_key"] = json!("ak_99");
    // Sent last, at the stream's last instant (a stream's order is evidence).
    let last: Value = serde_json::from_str(events.lines().last().unwrap()).unwrap();
    stray["at"] = last["at"].clone();
    let f = temp(
        "monotone-stray.jsonl",
        &(events + &stray.to_string() + "\n"),
    );
    let o = run(&["judge", "--format", "json", f.to_str().unwrap()]);
    no_panic(&o);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let j: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(violated(&j["properties"]).is_superset(&before), "{j:#}");
    assert_eq!(j["unscoped"]["scope_unknown"], 1, "{:#}", j["unscoped"]);
}
