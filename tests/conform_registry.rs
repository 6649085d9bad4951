//! conform's second judge: the registry, judging the exchanges its proxy carried as
//! `check-log` judges a log, beside the oracle. Against `payhub-verify serve` on free
//! loopback ports: the reference sandbox's exchanges hold every wire property judging
//! the target; planted bugs the wire shows (a replay answered 201 as new business,
//! another amount under a key not answered 409, a conflict without its
//! related_resource_id) are reported as the registry's violations with the exchanges
//! that witness them, in JSON, text and HTML, and fail the run. Bounded: at most a few
//! hundred cases per test, children killed.

mod common;
mod serve_support;

use common::*;
use serde_json::Value;
use serve_support::*;

const PROFILE: &str = "docs/profiles/sandbox.json";

fn conform(url: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["conform", "--target", url, "--profile", PROFILE];
    args.extend_from_slice(extra);
    let o = run(&args);
    no_panic(&o);
    o
}

fn json(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// The registry's row for `name`.
fn property<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["registry"]["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {}", report["registry"]))
}

/// Seed 42 replays a key after a clock move of 8 days and gets 409 order_no_conflict
/// (the key's record is gone, RET-01): stamped without the move, that is a replay
/// answered as new business, and this fails.
#[test]
fn conform_the_reference_sandbox_holds_every_wire_property_judging_the_target() {
    let s = Serve::start("conform-reg-ref", &["--clock", "manual"]);
    let url = format!("http://{}", s.addr);
    let o = conform(
        &url,
        &["--seeds", "0..60", "--proxy-faults", "--format", "json"],
    );
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    let r = json(&o);
    let g = &r["registry"];
    assert_eq!(g["cases"], 60, "{g}");
    assert!(g["exchanges"].as_u64().unwrap() > 200, "{g}");
    assert_eq!(g["unreadable"], 0, "{g}");
    let rows = g["properties"].as_array().unwrap();
    let target: Vec<&Value> = rows.iter().filter(|p| p["judges"] == "target").collect();
    assert!(
        target.iter().all(|p| p["status"] != "violated"),
        "{target:?}"
    );
    for name in [
        "replay-returns-same-object",
        "idempotency-conflict-iff-parameters-differ",
        "conflicts-name-the-related-resource",
        "versions-rise-with-every-visible-change",
    ] {
        let p = property(&r, name);
        assert_eq!(p["status"], "holds", "{p}");
        assert_eq!(p["cases"]["holds"], 60, "{p}");
    }
    // What the ledger or the platform's store decides cannot be judged over the wire:
    // named, never a pass.
    assert!(
        target
            .iter()
            .any(|p| p["status"] == "cannot_judge" && p["missing"].as_array().is_some()),
        "{target:?}"
    );
    // conform's own requests break the merchant's rules on purpose: listed, not counted.
    let merchant = rows.iter().filter(|p| p["judges"] == "merchant");
    assert!(merchant.clone().any(|p| p["status"] == "violated"));
    let text = conform(&url, &["--seeds", "0..10"]);
    assert_eq!(code(&text), 0, "{}", stdout(&text));
    assert!(
        stdout(&text).contains("registry over ") && stdout(&text).contains(" 0 violated"),
        "{}",
        stdout(&text)
    );
}

/// `serve --mutant NAME`, conform with --keep-going: the registry's verdict of `name`
/// is a violation, its witness the exchanges of the bug, and the run fails.
fn caught(mutant: &str, property_name: &str, answer: &str) {
    let s = Serve::start(
        &format!("conform-reg-{mutant}"),
        &["--clock", "manual", "--mutant", mutant],
    );
    let url = format!("http://{}", s.addr);
    let o = conform(
        &url,
        &["--seeds", "0..200", "--keep-going", "--format", "json"],
    );
    assert_eq!(code(&o), 1, "{}\n{}", stdout(&o), stderr(&o));
    let r = json(&o);
    let p = property(&r, property_name);
    assert_eq!(p["status"], "violated", "{mutant}: {p}");
    assert_eq!(p["judges"], "target", "{p}");
    let w = &p["witness"];
    let exchanges: Vec<&str> = w["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(!exchanges.is_empty(), "{w}");
    assert!(
        exchanges
            .iter()
            .all(|e| e.starts_with("exchange ") && e.contains("POST /v1/")),
        "{exchanges:?}"
    );
    assert!(
        exchanges.iter().any(|e| e.contains(answer)),
        "{answer}: {exchanges:?}"
    );
    assert!(w["detail"].as_str().unwrap().contains("exchange "), "{w}");
    // The text names the violation and its witness, the page draws it.
    let text = conform(&url, &["--seeds", "0..200", "--keep-going"]);
    assert_eq!(code(&text), 1);
    let out = stdout(&text);
    assert!(
        out.contains(&format!("registry violation of {property_name}")),
        "{out}"
    );
    assert!(out.contains("    exchange "), "{out}");
    let html = conform(
        &url,
        &["--seeds", "0..200", "--keep-going", "--format", "html"],
    );
    let page = stdout(&html);
    assert!(
        page.contains(&format!("data-property=\"{property_name}\""))
            && page
                .split_once("id=\"registry\"")
                .is_some_and(|(_, r)| r.contains("<svg")),
        "{page}"
    );
}

/// REPLAY-02: a replay answered 201 Created, as if it had executed again.
#[test]
fn conform_reports_a_replay_answered_as_new_business_with_its_witness() {
    caught(
        "replay_answers_created",
        "replay-returns-same-object",
        "→  201",
    );
}

/// CONFLICT-01: another amount under a key is answered 200 with the original object.
#[test]
fn conform_reports_a_conflict_not_answered_409_with_its_witness() {
    caught(
        "amount_not_in_fingerprint",
        "idempotency-conflict-iff-parameters-differ",
        "→  200",
    );
}

/// ORDER-01: 409 order_no_conflict without related_resource_id.
#[test]
fn conform_reports_a_conflict_without_its_related_resource() {
    caught(
        "order_no_conflict_without_related",
        "conflicts-name-the-related-resource",
        "→  409",
    );
}
