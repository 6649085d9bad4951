//! Every input is bounded in time and memory: a clock jump far beyond anything pending is
//! one step, not a loop over the timers that re-arm themselves on the way, and a jump past
//! the bound is refused.

mod common;

use common::*;
use std::time::{Duration, Instant};

const CREATE: &str = r#"A: POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"A"}"#;

/// A create the acquirer never answers: the platform re-queries it every day for good
/// (RES-03), the timer that re-arms itself on the way. A wait as long as one may be
/// (36500d) is one step; a longer one is refused, naming the bound.
#[test]
fn a_script_waiting_36500_days_finishes_at_once_and_a_longer_wait_is_refused() {
    let script = temp("wait-long.pha", &format!("{CREATE}\nwait 36500d\n"));
    let started = Instant::now();
    let o = run(&["run", script.to_str().unwrap()]);
    let took = started.elapsed();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(took < Duration::from_secs(1), "took {took:?}");
    let out = stdout(&o);
    // Bounded output: the queries up to the horizon, then one firing at the end.
    assert!(out.lines().count() < 200, "{} lines", out.lines().count());
    assert!(out.contains("(clock → 36500d)"), "{out}");
    // The platform's daily query still fires once the jump is over.
    let last_query = out
        .lines()
        .rfind(|l| l.contains("query charge att_001"))
        .expect("a query");
    let secs: f64 = last_query[last_query.find('[').unwrap() + 1..last_query.find("s]").unwrap()]
        .trim()
        .parse()
        .unwrap();
    assert!(secs >= 36_499.0 * 86_400.0, "{last_query}");

    let script = temp("wait-longer.pha", &format!("{CREATE}\nwait 99999999d\n"));
    let o = run(&["run", script.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("at most 36500d"), "{}", stderr(&o));
}

#[test]
fn a_tape_advancing_36500_days_replays_at_once_and_a_longer_advance_is_refused() {
    let tape = |name: &str, by: &str| {
        temp(
            name,
            &format!(
                r#"{{"format": "payhub-verify tape v2", "simulation": {{"policy": "reference", "clients": 2, "steps": 10, "no_swarm": false}}, "choices": ["advance {by}", "advance {by}"]}}"#
            ),
        )
    };
    let long = tape("advance-long.tape", "36500d");
    let started = Instant::now();
    let o = run(&["replay", "--tape", long.to_str().unwrap()]);
    let took = started.elapsed();
    no_panic(&o);
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(
        stdout(&o).contains("36500d"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );

    let longer = tape("advance-longer.tape", "99999999d");
    let o = run(&["replay", "--tape", longer.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("99999999d"), "{}", stderr(&o));
}

/// A sweep of a hundred million seeds stopped by `--timeout` reports the seeds it ran as
/// not judged (exit 3, never PASSED), with the command that reproduces it and the one
/// that continues it; the seeds are never held in memory.
#[test]
fn a_huge_sweep_stopped_by_its_timeout_is_not_judged() {
    let out = temp("unused", "").parent().unwrap().join("timeout-report");
    let started = Instant::now();
    let o = run(&[
        "simulate",
        "--seeds",
        "0..100000000",
        "--timeout",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let took = started.elapsed();
    let text = stdout(&o);
    assert_eq!(code(&o), 3, "{text}{}", stderr(&o));
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(!text.contains("PASSED"), "{text}");
    assert!(
        text.contains("not judged (incomplete): stopped by --timeout 1 after "),
        "{text}"
    );
    assert!(
        text.contains(
            "reproduce: payhub-verify simulate --seeds 0..100000000 --policy reference --clients 2 --steps 400"
        ),
        "{text}"
    );
    assert!(
        text.contains(" continue: payhub-verify simulate --seeds "),
        "{text}"
    );
}

/// Run from a subfolder of the repository, a command writes under the repository's
/// target/payhub-report, never a stray target/ in the subfolder.
#[test]
fn a_run_from_a_subfolder_writes_no_stray_target() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sub = repo.join("scenarios");
    let o = bin()
        .args([
            "simulate",
            "--seeds",
            "0..2",
            "--policy",
            "new_order_no_after_timeout",
        ])
        .current_dir(&sub)
        .output()
        .unwrap();
    let text = stdout(&o);
    assert_eq!(code(&o), 1, "{text}");
    assert!(!sub.join("target").exists());
    let root = repo.canonicalize().unwrap();
    let tape = text
        .lines()
        .find_map(|l| l.strip_prefix("reproduce: payhub-verify replay --tape "))
        .expect("a tape");
    assert!(
        std::path::Path::new(tape).starts_with(root.join("target/payhub-report/tapes")),
        "{tape}"
    );
}
