//! `payhub-verify conform` against a platform this project did not write: the Python
//! implementation of the contract in `tests/platform_py` (its own ids, error codes,
//! extra fields, nulls, version numbering, asynchronous refunds and control endpoints),
//! with its profile `docs/profiles/pyplat.json` only. The clean platform conforms; its
//! planted bugs (`--bug NAME`) are found. Bounded: a few hundred cases, the child killed.
//! Skipped, with a message, when `python3` is not installed.

mod common;

use common::platform_py::{PyPlatform, python};
use common::*;
use serde_json::Value;
use std::ffi::OsStr;

const PROFILE: &str = "docs/profiles/pyplat.json";

/// `platform.py --port 0 [--bug NAME]…`, once it listens.
fn start(bugs: &[&str]) -> PyPlatform {
    let args: Vec<&OsStr> = bugs
        .iter()
        .flat_map(|b| [OsStr::new("--bug"), OsStr::new(*b)])
        .collect();
    common::platform_py::start(&args)
}

fn conform(url: &str, seeds: &str) -> std::process::Output {
    run(&[
        "conform",
        "--target",
        url,
        "--profile",
        PROFILE,
        "--seeds",
        seeds,
        "--proxy-faults",
        "--format",
        "json",
    ])
}

#[test]
fn conform_the_clean_python_platform_conforms_with_proxy_faults() {
    if !python("conform") {
        return;
    }
    let p = start(&[]);
    let o = conform(&p.url, "0..150");
    no_panic(&o);
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["cases_run"], 150);
    assert_eq!(r["violations"].as_array().unwrap().len(), 0);
    assert_eq!(r["incomplete"].as_array().unwrap().len(), 0);
}

/// docs/conform.md's worked control plane: the platform's controls behind a token
/// header (`--admin-token`), PUT verbs, cards as JSON objects (`--card-objects`). Its
/// profile alone conforms it, and a planted bug is still found through it; the plain
/// profile, without the token, is exit 2 naming the control that did not take effect.
#[test]
fn conform_a_control_plane_behind_a_token_with_card_objects_needs_its_profile_only() {
    if !python("conform") {
        return;
    }
    const CONTROL_PLANE: &str = "docs/profiles/pyplat-control-plane.json";
    let flags = ["--admin-token", "s3cret", "--card-objects"];
    let with = |bug: Option<&str>| {
        let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
        if let Some(b) = bug {
            args.extend([OsStr::new("--bug"), OsStr::new(b)]);
        }
        common::platform_py::start(&args)
    };
    let sweep = |url: &str, profile: &str, seeds: &str| {
        let args = [
            "conform",
            "--target",
            url,
            "--profile",
            profile,
            "--seeds",
            seeds,
        ];
        run(&[&args[..], &["--proxy-faults", "--format", "json"]].concat())
    };
    let p = with(None);
    let o = sweep(&p.url, CONTROL_PLANE, "0..120");
    no_panic(&o);
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["cases_run"], 120);
    let plain = sweep(&p.url, PROFILE, "0..5");
    assert_eq!(code(&plain), 2, "{}", stderr(&plain));
    let why = stderr(&plain);
    assert!(why.contains("controls.") && why.contains("401"), "{why}");
    assert!(why.lines().count() <= 2, "{why}");

    let p = with(Some("replay_returns_first_response"));
    let o = sweep(&p.url, CONTROL_PLANE, "0..200");
    assert_eq!(code(&o), 1, "{}\n{}", stdout(&o), stderr(&o));
}

/// Each planted bug is found and shrunk, and the finding names the rule it breaks.
#[test]
fn conform_finds_the_python_platforms_planted_bugs() {
    if !python("conform") {
        return;
    }
    for (bug, rule) in [
        ("conflict_ignores_currency", "CONFLICT-01"),
        ("replay_returns_first_response", "REPLAY-02"),
        ("throttle_executes", ""),
        ("order_no_expires_with_key", "ORDER-01"),
    ] {
        let p = start(&[bug]);
        let o = conform(&p.url, "0..150");
        no_panic(&o);
        assert_eq!(code(&o), 1, "{bug}: {}\n{}", stdout(&o), stderr(&o));
        let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let f = &r["violations"][0];
        assert_eq!(f["property"], "target-answers-as-the-model-allows", "{bug}");
        let rules: Vec<&str> = f["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(rule.is_empty() || rules.contains(&rule), "{bug}: {rules:?}");
        assert!(f["shrunk_requests"].as_u64().unwrap() <= 4, "{bug}: {f}");
    }
}

/// A profile that names a card outcome the contract does not describe, or a control
/// placeholder conform does not fill, is exit 2 naming it.
#[test]
fn conform_a_foreign_profile_with_a_bad_field_is_named_and_exit_2() {
    let text = std::fs::read_to_string(PROFILE).unwrap();
    for (from, to, named) in [
        ("\"decline_slow\"", "\"decline_later\"", "decline_later"),
        ("{seconds}", "{secs}", "{secs}"),
        (
            "\"card_field\": \"payment_method\"",
            "\"card_field\": 7",
            "card_field",
        ),
    ] {
        let bad = temp("pyplat-bad.json", &text.replacen(from, to, 1));
        let o = run(&[
            "conform",
            "--target",
            "http://127.0.0.1:9",
            "--profile",
            bad.to_str().unwrap(),
        ]);
        assert_eq!(code(&o), 2, "{from}: {}", stderr(&o));
        assert!(stderr(&o).contains(named), "{from}: {}", stderr(&o));
    }
}

/// The kill matrix of a platform this project did not write: `--start` runs its own
/// command once per planted bug (`{mutant}` replaced), reads the address it prints, and
/// tabulates each bug found with the rules of the violation, or missed (exit 1).
#[test]
fn conform_kill_matrix_starts_any_platform_once_per_planted_bug() {
    if !python("conform") {
        return;
    }
    let start = format!(
        "exec python3 {}/platform.py --port 0 --bug {{mutant}}",
        common::platform_py::DIR
    );
    let o = run(&[
        "conform",
        "--profile",
        PROFILE,
        "--kill-matrix",
        "--start",
        &start,
        "--mutants",
        "conflict_ignores_currency,replay_returns_first_response",
        "--seeds",
        "0..150",
        "--format",
        "json",
    ]);
    no_panic(&o);
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(rows.len(), 2);
    for (row, rule) in rows.iter().zip(["CONFLICT-01", "REPLAY-02"]) {
        assert_eq!(row["found"], true, "{row}");
        let rules: Vec<&str> = row["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(rules.contains(&rule), "{row}");
        assert!(row["seconds_to_detection"].as_f64().is_some(), "{row}");
    }
    // A command that never prints an address is one line and exit 2.
    let o = run(&[
        "conform",
        "--profile",
        PROFILE,
        "--kill-matrix",
        "--start",
        "echo no address; sleep 1",
        "--mutants",
        "x",
        "--seeds",
        "0..1",
    ]);
    no_panic(&o);
    assert_eq!(code(&o), 2, "{}\n{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("printed no http:// address"),
        "{}",
        stderr(&o)
    );
}
