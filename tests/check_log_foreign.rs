//! `payhub-verify check-log` on HAR captured from a platform this project did not write:
//! the Python implementation of the contract in `tests/platform_py` (ids like
//! `pay_557eff458b794164bc1a`, its own error codes, extra fields, `null`s, its own
//! version numbering). The platform records every exchange (`--har`); its `clients.py`
//! drives it: `--client probe` (one short exchange per rule the wire shows, on the
//! simulated clock), `--client reference` (the contract's client), `--client dont` (the
//! contract's "do not do this", with its own HAR where a timeout has no answer).
//!
//! The clean platform's capture is judged, platform-side wire properties `holds`; each
//! planted bug the probe's traffic shows is found with its witness entries, each
//! showing its answer; the "do not do this" client is found. Loopback only, free
//! ports, the children killed. Skipped, with a message, when `python3` is missing.

mod common;

use common::platform_py::{DIR, PyPlatform, python};
use common::*;
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The platform's keys: merchant 1 test (its rotation, its read-only key), live;
/// merchant 2 test.
const KEY_MAP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/platform_py/keys.json");

/// The platform's whole description, as `conform` reads it: the same keys, its error
/// codes and its test cards.
const PROFILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/profiles/pyplat.json");

/// How `check-log` is told the platform's dialect.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Told {
    /// `--profile`: keys, error codes, test cards.
    Profile,
    /// `--api-key-map`: the keys only.
    KeyMap,
    /// Nothing: the defaults for unknown keys, printed as assumptions.
    Nothing,
}

/// Judged only with the platform's test cards (`--profile`).
const CARD_PROPERTY: &str = "no-new-attempt-while-one-is-unfinished";

/// `platform.py --port 0 --har HAR [--bug NAME]`, once it listens.
fn start(bug: Option<&str>, har: &Path) -> PyPlatform {
    let mut args = vec![OsStr::new("--har"), har.as_os_str()];
    if let Some(b) = bug {
        args.extend([OsStr::new("--bug"), OsStr::new(b)]);
    }
    common::platform_py::start(&args)
}

/// A file of this test's own in the temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("payhub-check-log-foreign-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `clients.py --client CLIENT` against a fresh platform (with `bug` planted) and
/// returns the HAR: the platform's own, or the client's with `client_har`.
fn capture(client: &str, bug: Option<&str>, client_har: bool) -> PathBuf {
    let name = format!("{client}-{}", bug.unwrap_or("clean"));
    let platform_har = scratch(&format!("{name}.platform.har"));
    let own_har = scratch(&format!("{name}.client.har"));
    let p = start(bug, &platform_har);
    let mut cmd = Command::new("python3");
    cmd.arg(format!("{DIR}/clients.py")).args([
        "--base", &p.url, "--client", client, "--reset", "--tag", "T",
    ]);
    if client_har {
        cmd.arg("--har").arg(&own_har);
    }
    let o = cmd.output().expect("clients.py runs");
    assert!(
        o.status.success(),
        "{client} {bug:?}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    drop(p);
    if client_har { own_har } else { platform_har }
}

/// `check-log HAR --format json --profile pyplat.json`: the exit code and the file's
/// report.
fn judge(har: &Path) -> (i32, Value) {
    judge_with(har, Told::Profile, false)
}

/// `check-log HAR --format json` told `told`, with `--complete-log` when `complete`.
fn judge_with(har: &Path, told: Told, complete: bool) -> (i32, Value) {
    let mut args = vec!["check-log", har.to_str().unwrap(), "--format", "json"];
    match told {
        Told::Profile => args.extend(["--profile", PROFILE]),
        Told::KeyMap => args.extend(["--api-key-map", KEY_MAP]),
        Told::Nothing => {}
    }
    if complete {
        args.push("--complete-log");
    }
    let o = run(&args);
    no_panic(&o);
    let v: Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&o), stderr(&o)));
    (code(&o), v["files"][0].clone())
}

fn properties<'a>(file: &'a Value, side: &str) -> Vec<&'a Value> {
    file["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["side"] == side)
        .collect()
}

fn verdict<'a>(file: &'a Value, name: &str) -> &'a Value {
    file["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no property {name}"))
}

/// Every platform-side wire property holds on the clean platform's capture: its answers
/// are read (foreign ids, partial and extra fields), none is "cannot judge"; with the
/// platform's profile. With its keys only, or with the default (one scope per unknown
/// key, printed), the same, but the property that needs its test cards cannot judge and
/// says what would supply them.
#[test]
fn check_log_judges_the_clean_python_platforms_capture_and_its_platform_side_holds() {
    if !python("check-log") {
        return;
    }
    let har = capture("probe", None, false);
    for told in [Told::Profile, Told::KeyMap, Told::Nothing] {
        let (_, file) = judge_with(&har, told, false);
        let platform = properties(&file, "platform");
        assert_eq!(platform.len(), 14, "{file}");
        for name in COMPLETE_LOG_PROPERTIES {
            let v = verdict(&file, name);
            assert!(
                v.get("side").is_none(),
                "read on the wire only with --complete-log: {v}"
            );
            assert_eq!(v["status"], "cannot_judge", "{v}");
        }
        for p in platform {
            if told != Told::Profile && p["name"] == CARD_PROPERTY {
                assert_eq!(p["status"], "cannot_judge", "{told:?}: {p}");
                assert!(p.to_string().contains("--profile"), "{p}");
                continue;
            }
            assert_eq!(p["status"], "holds", "{told:?}: {p}");
        }
        let key_map = told != Told::Nothing;
        assert_eq!(file["unreadable"], 0, "{file}");
        // The conflict probe re-sends a key with another currency: the client's breach.
        let client = verdict(&file, "client-never-changes-parameters-under-a-key");
        assert_eq!(client["status"], "violated", "{client}");
        let assumed = file["assumptions"].to_string();
        if key_map {
            assert_eq!(
                file["assumptions"].as_array().map(Vec::len),
                Some(0),
                "{assumed}"
            );
        } else {
            assert!(
                assumed.contains("3 API keys") && assumed.contains("one scope per key"),
                "{assumed}"
            );
        }
    }
}

/// The properties read on the wire only with `--complete-log`.
const COMPLETE_LOG_PROPERTIES: [&str; 2] =
    ["rejections-execute-nothing", "replayed-card-never-charged"];

/// With `--complete-log` the clean platform's probe capture (a 429, a 503 and a 422,
/// each key then answered 201) holds too, the two properties that assume it judged,
/// and the assumption is printed.
#[test]
fn check_log_with_a_complete_log_holds_on_the_clean_python_platforms_capture() {
    if !python("check-log") {
        return;
    }
    let har = capture("probe", None, false);
    let (_, file) = judge_with(&har, Told::Profile, true);
    let platform = properties(&file, "platform");
    assert_eq!(platform.len(), 16, "{file}");
    for p in platform {
        assert_eq!(p["status"], "holds", "{p}");
    }
    let assumed = file["assumptions"].to_string();
    assert!(assumed.contains("the log is complete"), "{assumed}");
}

/// The reference client's capture: every wire property holds (but the client's timeouts,
/// which a log cannot show), exit 0, with the
/// platform's keys or with the default for its one key.
#[test]
fn check_log_judges_the_reference_clients_capture_and_everything_holds() {
    if !python("check-log") {
        return;
    }
    let har = capture("reference", None, false);
    let (exit, file) = judge(&har);
    let wire: Vec<&Value> = file["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["side"].is_string())
        .collect();
    for p in &wire {
        // A log never shows who ended an exchange without an answer (TIMEOUT-01).
        let expected = if p["name"] == "client-waits-the-contract-timeouts" {
            "cannot_judge"
        } else {
            "holds"
        };
        assert_eq!(p["status"], expected, "{p}");
    }
    assert_eq!(exit, 0, "{file}");
    // Its 429 and 503 (S10, S13), each key answered 201 later: with the log assumed
    // complete, the refusals executed nothing.
    let (exit, file) = judge_with(&har, Told::Profile, true);
    assert_eq!(exit, 0, "{file}");
    for name in COMPLETE_LOG_PROPERTIES {
        assert_eq!(verdict(&file, name)["status"], "holds", "{name}");
    }
    // Its one API key, of no form this project knows, is one scope without a map: the
    // default is printed as an assumption, and the verdicts are the same.
    let (exit, file) = judge_with(&har, Told::Nothing, false);
    assert_eq!(exit, 0, "{file}");
    let assumed = file["assumptions"].to_string();
    assert!(
        assumed.contains("1 API key no --api-key-map names"),
        "{assumed}"
    );
    assert!(assumed.contains("(one scope)"), "{assumed}");
}

/// The "do not do this" client (its own HAR: the timed-out create has no answer) is
/// found re-sending the order under a new key after the lost answer, with both entries.
#[test]
fn check_log_finds_the_dont_do_this_client_on_the_python_platform() {
    if !python("check-log") {
        return;
    }
    let har = capture("dont", None, true);
    let (exit, file) = judge(&har);
    assert_eq!(exit, 1, "{file}");
    let v = verdict(&file, "client-creates-an-order-under-one-key");
    assert_eq!(v["status"], "violated", "{v}");
    let entries = v["witness"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{v}");
    assert!(entries[0]["answer"].is_null(), "the lost create: {v}");
    assert_ne!(entries[0]["key"], entries[1]["key"], "{v}");
    for name in [
        "client-uses-a-key-on-one-endpoint",
        "client-never-changes-parameters-under-a-key",
        "client-honours-retry-after",
        "client-spaces-queries",
    ] {
        assert_eq!(verdict(&file, name)["status"], "violated", "{name}");
    }
    for p in properties(&file, "platform") {
        assert_eq!(p["status"], "holds", "{p}");
    }
}

/// Planted bug `bug`: `property` is violated, its witness names entries of the capture,
/// each closed with its answer shown.
fn finds(bug: &str, property: &str) {
    if !python("check-log") {
        return;
    }
    let har = capture("probe", Some(bug), false);
    let (exit, file) = judge(&har);
    assert_eq!(exit, 1, "{bug}: {file}");
    let v = verdict(&file, property);
    assert_eq!(v["status"], "violated", "{bug}: {v}");
    let entries = v["witness"]["entries"].as_array().unwrap();
    assert!(!entries.is_empty(), "{bug}: {v}");
    for e in entries {
        assert_eq!(e["open"], false, "{bug}: {e}");
        assert!(
            e["answer"]["status"].is_u64(),
            "{bug}: every entry shows its answer: {e}"
        );
    }
    let detail = v["detail"].as_str().unwrap();
    assert!(detail.contains("entry "), "{bug}: {detail}");
    assert!(!detail.contains("no answer recorded"), "{bug}: {detail}");
}

/// Planted bug `bug`, seen only if the log holds every request: with `--complete-log`
/// `property` is violated with its entries (`finds`'s checks); without it the same
/// capture claims nothing of it (the property is not read on the wire: it cannot be
/// judged; the platform side holds).
fn finds_in_a_complete_log(bug: &str, property: &str) {
    if !python("check-log") {
        return;
    }
    let har = capture("probe", Some(bug), false);
    let (exit, file) = judge_with(&har, Told::Profile, true);
    assert_eq!(exit, 1, "{bug}: {file}");
    let v = verdict(&file, property);
    assert_eq!(v["status"], "violated", "{bug}: {v}");
    let entries = v["witness"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{bug}: {v}");
    for e in entries {
        assert_eq!(e["open"], false, "{bug}: {e}");
        assert!(e["answer"]["status"].is_u64(), "{bug}: {e}");
    }
    let detail = v["detail"].as_str().unwrap();
    assert!(detail.contains("entry "), "{bug}: {detail}");
    let (_, file) = judge_with(&har, Told::Profile, false);
    let v = verdict(&file, property);
    assert_eq!(v["status"], "cannot_judge", "{bug}: {v}");
    assert!(v.get("side").is_none(), "{bug}: {v}");
    for p in properties(&file, "platform") {
        assert_eq!(p["status"], "holds", "{bug} without --complete-log: {p}");
    }
}

#[test]
fn check_log_with_a_complete_log_finds_throttle_executes() {
    finds_in_a_complete_log("throttle_executes", "rejections-execute-nothing");
}

#[test]
fn check_log_with_a_complete_log_finds_maintenance_executes() {
    finds_in_a_complete_log("maintenance_executes", "rejections-execute-nothing");
}

#[test]
fn check_log_with_a_complete_log_finds_rejection_binds_key() {
    finds_in_a_complete_log("rejection_binds_key", "rejections-execute-nothing");
}

#[test]
fn check_log_with_a_complete_log_finds_replay_charges_new_card() {
    finds_in_a_complete_log("replay_charges_new_card", "replayed-card-never-charged");
}

macro_rules! planted {
    ($($test:ident: $bug:literal => $property:literal,)*) => {$(
        #[test]
        fn $test() {
            finds($bug, $property);
        }
    )*};
}

planted! {
    check_log_finds_conflict_ignores_currency:
        "conflict_ignores_currency" => "idempotency-conflict-iff-parameters-differ",
    check_log_finds_replay_returns_first_response:
        "replay_returns_first_response" => "replay-returns-same-object",
    check_log_finds_order_no_expires_with_key:
        "order_no_expires_with_key" => "at-most-one-payment-per-order",
    check_log_finds_refund_no_reused:
        "refund_no_reused" => "refunds-once-and-within-captured",
    check_log_finds_cancel_202_reports_canceled:
        "cancel_202_reports_canceled" => "cancel-202-keeps-the-status",
    check_log_finds_version_frozen_on_async_outcome:
        "version_frozen_on_async_outcome" => "versions-rise-with-every-visible-change",
    check_log_finds_order_lookup_case_insensitive:
        "order_lookup_case_insensitive" => "queries-answer-known-state",
    check_log_finds_rotation_changes_scope:
        "rotation_changes_scope" => "replay-returns-same-object",
    check_log_finds_confirm_accepts_amount:
        "confirm_accepts_amount" => "payments-keep-their-fee-snapshot",
    check_log_finds_concurrent_same_key_both_execute:
        "concurrent_same_key_both_execute" => "same-key-never-new-business",
    check_log_finds_scope_ignores_environment:
        "scope_ignores_environment" => "scopes-never-interfere",
    check_log_finds_refund_over_captured:
        "refund_over_captured" => "refunds-once-and-within-captured",
    check_log_finds_fourth_attempt:
        "fourth_attempt" => "attempts-within-limits",
    check_log_finds_key_length_in_bytes:
        "key_length_in_bytes" => "invalid-key-answered-400-idempotency-key",
    check_log_finds_confirm_while_processing_with_the_profiles_cards:
        "confirm_while_processing" => "no-new-attempt-while-one-is-unfinished",
}
