//! `payhub-verify conform` where the contract is silent: the Python platform of
//! `tests/platform_py` takes each other reading (`--reading POINT=NAME`), conforms with
//! its profile alone, and the report's silent points name the reading it took; a
//! profile pins a reading (another one is a violation; a name that does not exist is
//! exit 2, naming it); a platform that takes two readings of one point is found.
//! Skipped, with a message, when `python3` is not installed.

mod common;

use common::platform_py::{PyPlatform, python};
use common::*;
use serde_json::Value;
use std::ffi::OsStr;

const PROFILE: &str = "docs/profiles/pyplat.json";

/// Every point with a switch in `tests/platform_py/readings.py` and its readings, the
/// platform's default first (`platform.py --list-readings`).
fn switches() -> Vec<(String, Vec<String>)> {
    let o = std::process::Command::new("python3")
        .args([
            &format!("{}/platform.py", common::platform_py::DIR),
            "--list-readings",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<(String, Vec<String>)> = text
        .lines()
        .map(|l| {
            let (point, names) = l.split_once('\t').unwrap();
            (
                point.to_owned(),
                names.split(' ').map(str::to_owned).collect(),
            )
        })
        .collect();
    assert!(rows.len() >= 10, "{text}");
    rows
}

fn start(args: &[String]) -> PyPlatform {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    common::platform_py::start(&args)
}

fn conform(url: &str, profile: &str, seeds: &str) -> std::process::Output {
    run(&[
        "conform",
        "--target",
        url,
        "--profile",
        profile,
        "--seeds",
        seeds,
        "--proxy-faults",
        "--format",
        "json",
    ])
}

/// The names of the readings the report shows at `point`.
fn shown(report: &Value, point: &str) -> Vec<String> {
    let row = report["readings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == point)
        .unwrap_or_else(|| panic!("no row for {point}"));
    row["shown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Every switch in each position: position 0 is every default, position k the k-th
/// other reading of each point (its last where it has fewer). Each run conforms, and
/// the report names the reading taken at every point.
#[test]
fn conform_the_python_platform_with_every_reading_conforms_and_names_each() {
    if !python("conform") {
        return;
    }
    let switches = switches();
    let positions = switches.iter().map(|(_, r)| r.len()).max().unwrap();
    for k in 0..positions {
        let taken: Vec<(&str, &str)> = switches
            .iter()
            .map(|(p, r)| (p.as_str(), r[k.min(r.len() - 1)].as_str()))
            .collect();
        let args: Vec<String> = taken
            .iter()
            .filter(|_| k > 0)
            .flat_map(|(p, r)| ["--reading".to_owned(), format!("{p}={r}")])
            .collect();
        let p = start(&args);
        let o = conform(&p.url, PROFILE, "0..200");
        no_panic(&o);
        assert_eq!(code(&o), 0, "{args:?}: {}\n{}", stdout(&o), stderr(&o));
        let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
        for (point, want) in &taken {
            let seen = shown(&r, point);
            assert!(seen.iter().any(|s| s == want), "{args:?} {point}: {seen:?}");
            // A reading that decides later answers is one per platform.
            if !["unnamed_codes", "refusal_order"].contains(point) {
                assert_eq!(seen.len(), 1, "{args:?} {point}: {seen:?}");
            }
        }
        let row = r["readings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == "rate_limit_scope")
            .unwrap();
        let first = row["shown"][0]["first"].as_str().unwrap();
        assert!(first.contains("GET /v1/payments"), "{first}");
    }
}

#[test]
fn conform_a_pinned_reading_holds_the_target_to_it() {
    if !python("conform") {
        return;
    }
    let text = std::fs::read_to_string(PROFILE).unwrap();
    let pinned = text.replacen(
        "\"volatile\"",
        "\"readings\": {\"rate_limit_scope\": \"every_request\"},\n  \"volatile\"",
        1,
    );
    let profile = temp("pyplat-pinned.json", &pinned);
    let p = start(&["--reading".into(), "rate_limit_scope=posts_only".into()]);
    let o = conform(&p.url, profile.to_str().unwrap(), "0..200");
    no_panic(&o);
    assert_eq!(code(&o), 1, "{}\n{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("posts_only where the profile pins every_request"),
        "{}",
        stdout(&o)
    );
}

/// A platform that counts a key's length in bytes accepts a short non-ASCII key and
/// refuses a long one: two readings of one point, a violation (KEY-07).
#[test]
fn conform_a_key_counted_in_bytes_is_two_readings_of_one_point() {
    if !python("conform") {
        return;
    }
    let p = start(&["--bug".into(), "key_length_in_bytes".into()]);
    let o = conform(&p.url, PROFILE, "0..200");
    no_panic(&o);
    assert_eq!(code(&o), 1, "{}\n{}", stdout(&o), stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let allowed = r["violations"][0]["allowed"].to_string();
    assert!(allowed.contains("key_charset"), "{allowed}");
}

#[test]
fn conform_a_reading_or_suppression_that_does_not_exist_is_exit_2_naming_it() {
    let text = std::fs::read_to_string(PROFILE).unwrap();
    for (readings, named) in [
        (
            r#""readings": {"rate_limit_scope": "gets_only"}"#,
            "\"gets_only\"",
        ),
        (
            r#""readings": {"rate_scope": "posts_only"}"#,
            "\"rate_scope\"",
        ),
        // A suppression names one registry property, never a rule or the oracle.
        (
            r#""suppress": [{"rule": "RATE-02", "reason": "x"}]"#,
            "unknown field `rule`",
        ),
        (
            r#""suppress": [{"property": "target-answers-as-the-model-allows", "reason": "x"}]"#,
            "pin the reading",
        ),
        (
            r#""suppress": [{"property": "wire-keys-are-fine", "reason": "x"}]"#,
            "\"wire-keys-are-fine\"",
        ),
    ] {
        let bad = text.replacen("\"volatile\"", &format!("{readings},\n  \"volatile\""), 1);
        let bad = temp("pyplat-bad-reading.json", &bad);
        let o = run(&[
            "conform",
            "--target",
            "http://127.0.0.1:9",
            "--profile",
            bad.to_str().unwrap(),
        ]);
        assert_eq!(code(&o), 2, "{readings}: {}", stderr(&o));
        assert!(stderr(&o).contains(named), "{readings}: {}", stderr(&o));
    }
}
