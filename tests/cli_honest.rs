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
        "did you mean 'new_key_after_timeout'? policies: reference,",
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
    one_line_2(&["run", "-", "-"], "'-' (standard input) given twice");
    one_line_2(
        &["mutants", "--show", "card_in_fingerprnt"],
        "did you mean 'card_in_fingerprint'?",
    );
}

/// `scenario --help` names every script in scenarios/ (`S02b` as `S2b`).
#[test]
fn scenario_help_lists_every_scenario() {
    let help = stdout(&run(&["scenario", "--help"]));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let prefix = stem.split('-').next().unwrap();
        let letter = &prefix[..1];
        let rest = prefix[1..].trim_start_matches('0');
        let short = format!("{letter}{rest}");
        assert!(
            help.split_whitespace().any(|w| w == short),
            "{short} ({stem}) not in:\n{help}"
        );
        n += 1;
    }
    assert!(n >= 23);
}

/// model/ASSUMPTIONS.md names `payhub-verify assumptions`: it exists and prints every
/// assumption the page lists.
#[test]
fn the_assumptions_command_the_docs_name_prints_every_assumption() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("model/ASSUMPTIONS.md"),
    )
    .unwrap();
    assert!(doc.contains("`payhub-verify assumptions`"));
    let o = run(&["assumptions"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    let ids: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `A-"))
        .filter_map(|l| l.split('`').next())
        .collect();
    assert!(ids.len() > 30, "{ids:?}");
    for id in ids {
        assert!(out.contains(&format!("A-{id} (")), "A-{id}");
    }
    one_line_2(
        &["assumptions", "--id", "A-WEBHOOK-BLACKOT"],
        "did you mean 'A-WEBHOOK-BLACKOUT'?",
    );
}

/// Two scripts as Mermaid are two documents: one fenced block each.
#[test]
fn several_scripts_as_mermaid_are_one_document_each() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let a = dir.join("S01-timeout-retry.pha");
    let b = dir.join("S03-same-key-different-amount.pha");
    let o = run(&[
        "run",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "mermaid",
    ]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    let blocks: Vec<&str> = out.split("```mermaid\n").skip(1).collect();
    assert_eq!(blocks.len(), 2, "{out}");
    for block in blocks {
        let doc = block.split("```").next().unwrap();
        assert_eq!(doc.matches("sequenceDiagram").count(), 1, "{doc}");
    }
}
