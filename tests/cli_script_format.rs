//! Counterexamples exported as what-if scripts (`check --format script`, `mutants --show
//! NAME --format script`) run with `payhub-verify run` and reproduce the violation; worlds
//! a script cannot express are a clear error; saved tapes replay every choice label.

mod common;

use common::*;

const ANTI_PATTERN: &str = "new_key_after_timeout+new_order_no_after_timeout";

/// The script passes `run` (exit 0) as written, and fails (exit 1) without its
/// `expect violation` line: it reproduces the violation, not just any run.
fn reproduces(name: &str, script: &str, property: &str) {
    let expect = format!("expect violation {property}");
    assert!(script.lines().any(|l| l == expect), "{script}");
    let with = temp(&format!("{name}.pha"), script);
    let o = run(&["run", with.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(&format!("violated {property}")),
        "{}",
        stdout(&o)
    );
    let without: String = script
        .lines()
        .filter(|l| *l != expect)
        .map(|l| format!("{l}\n"))
        .collect();
    let without = temp(&format!("{name}-without.pha"), &without);
    let o = run(&["run", without.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains(property), "{}", stderr(&o));
}

#[test]
fn check_counterexample_as_a_script_reproduces_the_violation() {
    let o = run(&[
        "check",
        "--preset",
        "create-lossy",
        "--policy",
        ANTI_PATTERN,
        "--max-states",
        "60000",
        "--format",
        "script",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let script = stdout(&o);
    assert!(
        script.starts_with(&format!(
            "# counterexample of preset create-lossy, policy {ANTI_PATTERN}: client-never-charges-an-order-twice"
        )),
        "{script}"
    );
    assert!(script.contains("use platform=reference delivery=manual"));
    assert!(
        script.contains(&format!("client={ANTI_PATTERN}")),
        "{script}"
    );
    reproduces("check", &script, "client-never-charges-an-order-twice");
}

#[test]
fn check_without_a_counterexample_writes_no_script() {
    let o = run(&["check", "--preset", "replay-conflict", "--format", "script"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(stderr(&o).contains("no counterexample"), "{}", stderr(&o));
}

#[test]
fn anti_pattern_mutant_as_a_script_reproduces_the_violation() {
    let o = run(&[
        "mutants",
        "--show",
        "new_key_after_timeout",
        "--no-reference",
        "--format",
        "script",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let script = stdout(&o);
    assert!(
        script.starts_with("# counterexample of mutant new_key_after_timeout (client)"),
        "{script}"
    );
    reproduces("mutant", &script, "client-sends-one-key-per-submission");
    // The same command writes the same script.
    let again = run(&[
        "mutants",
        "--show",
        "new_key_after_timeout",
        "--no-reference",
        "--format",
        "script",
    ]);
    assert_eq!(stdout(&again), script);
}

/// A platform mutant's world runs a planted bug, which the script language cannot say
/// (`use platform=reference` only): one clear line, exit 2, nothing on stdout.
#[test]
fn platform_mutant_cannot_be_a_script() {
    let o = run(&[
        "mutants",
        "--show",
        "card_in_fingerprint",
        "--no-reference",
        "--format",
        "script",
    ]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "mutant card_in_fingerprint: this counterexample cannot be written as a script"
        ),
        "{err}"
    );
    assert!(err.contains("platform mutant card_in_fingerprint"), "{err}");
}

#[test]
fn script_format_is_for_one_counterexample() {
    for (args, expected) in [
        (&["mutants", "--format", "script"][..], "add --show NAME"),
        (
            &["mutants", "--list", "--format", "script"],
            "add --show NAME",
        ),
        (&["check", "--list", "--format", "script"], "not a script"),
        (&["rules", "--format", "script"], "script"),
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stdout(&o));
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
    }
}

/// A tape holding the labels a script makes (a send outside the world's alphabet, an
/// advance, a control) replays; an unknown label is named, with exit 2.
#[test]
fn a_tape_with_send_and_advance_labels_replays() {
    let tape = |choices: &[&str]| {
        let labels: Vec<String> = choices
            .iter()
            .map(|c| serde_json::to_string(c).unwrap())
            .collect();
        format!(
            r#"{{"format": "payhub-verify tape v2", "simulation": {{"policy": "reference", "clients": 2, "steps": 50, "no_swarm": false}}, "choices": [{}]}}"#,
            labels.join(", ")
        )
    };
    let path = temp(
        "free.tape",
        &tape(&[
            r#"send merchant-5 POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-9","amount":10000,"currency":"USD","card":"A"}"#,
            "deliver m1",
            "advance 15s",
            "fee-rate 350",
            r#"send merchant-5 GET /v1/payments?merchant_order_no=ORDER-9  Authorization: Bearer ak_3"#,
        ]),
    );
    let o = run(&["replay", "--tape", path.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("merchant-5 → platform    POST /v1/payments  Idempotency-Key: K"),
        "{out}"
    );
    assert!(out.contains("(clock → 15s)"), "{out}");
    assert!(out.contains("no property violated in 5 steps"), "{out}");

    let bad = temp("bad.tape", &tape(&["deliver m1", "warp 15s"]));
    let o = run(&["replay", "--tape", bad.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("step 2: 'warp 15s' is not a choice label (column 1: unknown choice 'warp'"),
        "{err}"
    );
    let bad = temp("disabled.tape", &tape(&["deliver m1"]));
    let o = run(&["replay", "--tape", bad.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(
        stderr(&o).contains("step 1: 'deliver m1' is not enabled"),
        "{}",
        stderr(&o)
    );
}
