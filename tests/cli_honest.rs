//! What a new user trips on, from the outside: a run that checks nothing is an error, not
//! a pass; counts read the same in every subcommand; a near-miss name gets a did-you-mean;
//! every usage error is one line.

mod common;

use common::*;

/// Exit 2 with exactly one line on stderr containing `needle`.
fn one_line_2(args: &[&str], needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!stdout(&o).contains("PASSED"), "{args:?}");
}

#[test]
fn an_empty_or_comment_only_script_checks_nothing_and_exits_2() {
    let empty = temp("empty.pha", "");
    let comments = temp("comments.pha", "# only a comment\n\n# and another\n");
    for f in [empty, comments] {
        one_line_2(&["run", f.to_str().unwrap()], "nothing to check");
    }
}

#[test]
fn zero_seeds_or_steps_check_nothing_and_exit_2() {
    one_line_2(&["verify", "--seeds", "0"], "nothing to check");
    one_line_2(&["simulate", "--steps", "0"], "nothing to check");
    one_line_2(&["mutants", "--seeds", "0"], "nothing to check");
    one_line_2(
        &["simulate", "--seeds", "0..1", "--shard", "1/2"],
        "nothing to check",
    );
}

#[test]
fn thread_counts_are_validated_alike_by_every_subcommand() {
    let message = "must be a number of threads from 1 to 1024, not '0'";
    for sub in ["check", "simulate", "verify", "mutants", "bench"] {
        one_line_2(&[sub, "--threads", "0"], message);
    }
    one_line_2(&["bench", "--checker-threads", "0"], message);
}

#[test]
fn client_counts_say_the_same_range_whatever_the_value() {
    for n in ["0", "9", "1000"] {
        one_line_2(
            &["simulate", "--clients", n],
            &format!("must be a number of merchant servers from 1 to 8, not '{n}'"),
        );
        one_line_2(&["replay", "--seed", "1", "--clients", n], "from 1 to 8");
    }
}

#[test]
fn policies_reject_reference_plus_duplicates_and_platform_presets() {
    one_line_2(
        &["simulate", "--policy", "reference+new_key_after_timeout"],
        "write --policy new_key_after_timeout",
    );
    one_line_2(
        &["simulate", "--policy", "poll_too_fast+poll_too_fast"],
        "names 'poll_too_fast' twice",
    );
    one_line_2(
        &["check", "--preset", "scope", "--policy", "poll_too_fast"],
        "'scope' is a platform preset",
    );
}

#[test]
fn near_misses_get_a_did_you_mean() {
    one_line_2(
        &["simulate", "--policy", "new_key_after_timout"],
        "did you mean 'new_key_after_timeout'?",
    );
    one_line_2(
        &["check", "--preset", "card-rerty"],
        "did you mean 'card-retry'?",
    );
    one_line_2(
        &["verify", "--preset", "card-rerty"],
        "did you mean 'card-retry'?",
    );
    one_line_2(&["scenario", "S4c"], "did you mean 'S04");
    one_line_2(&["verfy"], "'verify'");
    one_line_2(
        &["mutants", "--show", "card_in_fingerprnt"],
        "did you mean 'card_in_fingerprint'?",
    );
}
