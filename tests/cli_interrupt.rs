//! Ctrl-C during `verify` and `mutants`: the partial result is printed as
//! "not judged (incomplete)", with the command that runs it all, and the exit code is 3;
//! never a pass. The test sends SIGINT to a child process; no timing is asserted (a run
//! that ended before the signal, or a signal that came before the handler was installed,
//! is tried again with another delay, a bounded number of times).

#![cfg(unix)]

mod common;

use common::*;
use std::process::{Output, Stdio};
use std::time::Duration;

/// Runs `args`, sends SIGINT after `delay`, and returns what it printed; `None` if the
/// run ended on its own first, or the signal came before the handler.
fn interrupted(args: &[&str], delay: Duration) -> Option<Output> {
    let child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    std::thread::sleep(delay);
    let pid = child.id() as libc::pid_t;
    // SAFETY: signals a child this test started (and has not reaped yet).
    unsafe { libc::kill(pid, libc::SIGINT) };
    let o = child.wait_with_output().expect("it ends");
    match o.status.code() {
        // Killed by the signal: the handler was not installed yet.
        None => None,
        Some(3) => Some(o),
        // Ended before the signal (or failed): not this test's case, unless it failed.
        Some(c) => {
            assert!(c == 0, "exit {c}: {}{}", stdout(&o), stderr(&o));
            None
        }
    }
}

fn interrupt_until(args: &[&str]) -> Output {
    for ms in [1500, 800, 3000, 400] {
        if let Some(o) = interrupted(args, Duration::from_millis(ms)) {
            return o;
        }
    }
    panic!("no run of {args:?} was interrupted");
}

#[test]
fn verify_interrupted_prints_not_judged_incomplete_with_the_command_and_exits_3() {
    let out = std::env::temp_dir().join(format!("payhub-verify-interrupt-{}", std::process::id()));
    let out = out.to_str().unwrap();
    // A sweep far longer than the test: Ctrl-C is what ends it.
    let args = [
        "verify",
        "--seeds",
        "100000000",
        "--preset",
        "replay-conflict",
        "--no-mutants",
        "--out",
        out,
    ];
    let o = interrupt_until(&args);
    let text = stdout(&o);
    no_panic(&o);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("payhub-verify: not judged (incomplete)"),
        "{text}"
    );
    assert!(text.contains("interrupted (Ctrl-C)"), "{text}");
    assert!(
        text.contains(&format!(
            "reproduce: {}",
            ["payhub-verify"]
                .iter()
                .chain(&args)
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        )),
        "{text}"
    );
    assert!(
        !text.contains("PASSED") && !text.contains("all hold\n"),
        "{text}"
    );
    // The report says so too.
    let md = std::fs::read_to_string(std::path::Path::new(out).join("report.md")).unwrap();
    assert!(
        md.lines()
            .take(20)
            .any(|l| l.contains("not judged (incomplete)")),
        "{md}"
    );
}

#[test]
fn mutants_interrupted_prints_the_partial_matrix_as_not_judged_and_exits_3() {
    let args = ["mutants", "--no-reference", "--seeds", "100000"];
    let o = interrupt_until(&args);
    let text = stdout(&o);
    no_panic(&o);
    assert!(
        text.contains("bug zoo: not judged (incomplete): interrupted (Ctrl-C) after"),
        "{text}"
    );
    assert!(
        text.contains("reproduce: payhub-verify mutants --no-reference --seeds 100000"),
        "{text}"
    );
}
