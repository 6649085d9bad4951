//! `check`'s scope knobs, reductions and bitstate mode at the command line: bad knobs
//! are one-line errors (exit 2) with a did-you-mean, a grown scope is checked and shown,
//! a bitstate run is incomplete (exit 3) with its estimate, never a pass.

mod common;

use common::*;

#[test]
fn a_misspelled_knob_is_named_with_the_closest_one() {
    let o = run(&["check", "--preset", "create-lossy", "--faults", "drop=2"]);
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(
        e.contains("unknown fault knob 'drop'") && e.contains("did you mean 'drops'"),
        "{e}"
    );
    for bad in ["drops=x", "drops", "drops=1,drops=2", "drops=99"] {
        let o = run(&["check", "--preset", "create-lossy", "--faults", bad]);
        assert_eq!(code(&o), 2, "{bad}: {}", stderr(&o));
    }
    let o = run(&["check", "--preset", "refund", "--servers", "2"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("platform preset"), "{}", stderr(&o));
    let o = run(&["check", "--preset", "create-lossy", "--servers", "0"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn the_list_shows_each_default_scope() {
    let o = run(&["check", "--list"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(
        out.contains("default scope: drops=1; servers 1, orders 1"),
        "{out}"
    );
    assert!(
        out.contains("default scope: crashes=1; servers 1, orders 1"),
        "{out}"
    );
}

/// A grown scope is checked and shown; canonical ids and depth first agree with the
/// plain search on it.
#[test]
fn a_grown_scope_is_checked_with_each_reduction() {
    let mut seen = Vec::new();
    for flags in [&[][..], &["--reduce", "ids"], &["--search", "dfs"]] {
        let mut args = vec![
            "check",
            "--preset",
            "two-servers-one-order",
            "--faults",
            "drops=1",
        ];
        args.extend_from_slice(flags);
        let o = run(&args);
        assert_eq!(code(&o), 0, "{flags:?}: {}", stdout(&o));
        let out = stdout(&o);
        assert!(out.contains("scope drops=1; servers 2, orders 1"), "{out}");
        let verdicts: Vec<String> = out
            .lines()
            .filter(|l| l.starts_with("    ") && !l.contains("scope"))
            .map(str::to_owned)
            .collect();
        seen.push(verdicts);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

#[test]
fn a_bitstate_run_is_incomplete_with_its_estimate() {
    let o = run(&[
        "check",
        "--preset",
        "two-servers-one-order",
        "--bitstate",
        "16",
    ]);
    assert_eq!(code(&o), 3, "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("not judged (incomplete): a bitstate search (2^16 bits"),
        "{out}"
    );
    assert!(out.contains("may have missed about"), "{out}");
    assert!(out.contains("reproduce: payhub-verify check"), "{out}");
    let o = run(&[
        "check",
        "--preset",
        "two-servers-one-order",
        "--bitstate",
        "40",
    ]);
    assert_eq!(code(&o), 2);
}
