//! Every reproduce command a run prints is run here, and must show what the run claimed:
//! the same violation, the same contract finding, the same incomplete verdict.

mod common;

use common::*;

/// The commands after `prefix` in `out`, without the program name.
fn commands(out: &str, prefix: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter_map(|l| l.trim_start().strip_prefix(prefix))
        .map(|cmd| {
            let cmd = cmd
                .trim()
                .strip_prefix("payhub-verify ")
                .expect("a payhub-verify command");
            cmd.split_whitespace().map(str::to_owned).collect()
        })
        .collect()
}

fn run_owned(args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

/// A contract finding's command heals the run as the sweep did, and shows the finding
/// (without the healing phase it would show "no property violated"). Seed 178 reaches
/// A-CLIENT-AFTER-24H since the simulation draws rate limits and channel pauses (the
/// healing phase switches them off, outside the run's budget, in replay too).
#[test]
fn a_contract_findings_reproduce_line_shows_the_finding() {
    let o = run(&["simulate", "--seeds", "178..179"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(
        out.contains("contract finding A-CLIENT-AFTER-24H: reached"),
        "{out}"
    );
    let cmds = commands(&out, "reproduce:");
    assert_eq!(cmds.len(), 1, "{out}");
    let o = run_owned(&cmds[0]);
    let shown = stdout(&o);
    assert_eq!(code(&o), 0, "{shown}");
    let last = shown.lines().last().unwrap();
    assert!(
        last.contains("contract finding A-CLIENT-AFTER-24H reached"),
        "{last}"
    );
}

/// A violating sweep's tape, seed and script commands each show the same violation.
#[test]
fn a_violations_reproduce_lines_show_the_violation() {
    let out_dir = temp("unused", "")
        .parent()
        .unwrap()
        .join("violation-report");
    let o = run(&[
        "simulate",
        "--seeds",
        "0..3",
        "--policy",
        "new_order_no_after_timeout",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(!out.contains("PASSED"), "{out}");
    let property = out
        .lines()
        .find_map(|l| l.strip_prefix("violation: "))
        .and_then(|v| v.split(" [").next())
        .expect("a violation line")
        .to_owned();
    let mut shown = 0;
    for prefix in ["reproduce:", "or:"] {
        for cmd in commands(&out, prefix) {
            let o = run_owned(&cmd);
            let text = stdout(&o);
            assert_eq!(code(&o), 1, "{cmd:?}: {text}");
            let last = text.lines().last().unwrap();
            assert!(
                last.starts_with(&format!("VIOLATED {property} [")),
                "{cmd:?}: {last}"
            );
            shown += 1;
        }
    }
    for cmd in commands(&out, "script:") {
        // The script expects the violation: it passes by showing it.
        let o = run_owned(&cmd);
        let text = stdout(&o);
        assert_eq!(code(&o), 0, "{cmd:?}: {text}{}", stderr(&o));
        assert!(text.contains(&property), "{cmd:?}: {text}");
        shown += 1;
    }
    assert_eq!(shown, 3, "{out}");
    // The tape is named by what it depends on.
    assert!(
        out.contains("new_order_no_after_timeout.clients-2.steps-400.seed-"),
        "{out}"
    );
}

/// An incomplete check says which bound cut it and how to run it again, with every flag.
#[test]
fn an_incomplete_checks_reproduce_line_gives_the_same_verdict() {
    let args = ["check", "--preset", "card-retry", "--max-states", "300"];
    let o = run(&args);
    let out = stdout(&o);
    assert_eq!(code(&o), 3, "{out}");
    assert!(
        out.contains("not judged (incomplete): stopped by --max-states 300"),
        "{out}"
    );
    assert!(!out.contains("unknown (incomplete)"), "{out}");
    let cmds = commands(&out, "reproduce:");
    assert_eq!(cmds, [args.map(str::to_owned).to_vec()], "{out}");
    let again = run_owned(&cmds[0]);
    assert_eq!(code(&again), 3);
    assert_eq!(stdout(&again).lines().count(), out.lines().count());
}

/// Seed 178812 of the million-seed sweep: merchant-2's five creates were lost, it crashed
/// before reading the empty by-order-number answer and came back after its query window.
/// The reference client now looks the order up on restart (RETRY-04) and re-creates it
/// with the original key (QUERY-06): every submission is known after healing.
#[test]
fn seed_178812_resolves_after_the_restart_lookup() {
    let o = run(&["simulate", "--seeds", "178812..178813"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(
        out.contains("PASSED: no property violated in 1 runs"),
        "{out}"
    );
    let o = run(&["replay", "--seed", "178812"]);
    let text = stdout(&o);
    assert_eq!(code(&o), 0);
    let restart = text.find("process 2 resumes").expect("the restart");
    assert!(
        text[restart..].contains("GET /v1/payments?merchant_order_no=ORDER-1"),
        "{text}"
    );
    assert!(
        text.lines()
            .last()
            .unwrap()
            .ends_with("every submission known")
    );
}

/// Every output format of a violating replay carries the verdict: the property and its
/// rule IDs.
#[test]
fn every_replay_format_carries_the_verdict() {
    let args = [
        "replay",
        "--seed",
        "0",
        "--policy",
        "new_order_no_after_timeout",
    ];
    let o = run(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["verdict"]["status"], "violated");
    let property = v["verdict"]["property"]
        .as_str()
        .expect("a property")
        .to_owned();
    assert!(
        v["verdict"]["rules"][0].as_str().unwrap().contains('-'),
        "{v}"
    );
    assert!(v["trace"].as_array().is_some_and(|t| !t.is_empty()));
    let o = run(&[&args[..], &["--format", "mermaid"]].concat());
    assert_eq!(code(&o), 1);
    let m = stdout(&o);
    let note = m.lines().last().unwrap();
    assert!(
        note.trim_start().starts_with("Note over")
            && note.contains(&format!("VIOLATED {property} [")),
        "{note}"
    );
}
