//! A planted bug of each kind is killed by `verify` alone: for each row of
//! docs/planted-bugs.md (responses, cadence, merchant effects, input edges, the status
//! table, refund queries), `verify --mutant NAME --preset P` with the bug planted fails,
//! naming the property that caught it and a reproduce command that plants the bug again;
//! `verify --preset P` without it passes (a zoo-only preset is not one `verify --preset`
//! takes: the zoo's reference configurations hold in it, `tests/mutants.rs`). (The
//! seventh kind, properties narrower than their names, is
//! `properties/tests/narrowness.rs`: it fails on the predicates before their fix.)

mod common;

use common::*;

/// (kind, mutant, preset that catches it, property that catches it).
const KINDS: &[(&str, &str, &str, &str)] = &[
    (
        "responses",
        "replay_answers_previous_version",
        "replay-conflict",
        "answers-show-the-current-state",
    ),
    (
        "cadence",
        "backoff_not_doubled",
        "create-crash",
        "client-backs-off-as-the-reference-code",
    ),
    (
        "merchant effects",
        "fulfil_before_succeeded",
        "create-crash",
        "client-fulfils-an-order-once-when-succeeded",
    ),
    (
        "input edges",
        "key_length_in_bytes",
        "edges-keys",
        "invalid-key-answered-400-idempotency-key",
    ),
    (
        "status table",
        "requires_action_without_next_action",
        "cancel",
        "payments-shown-as-the-status-table-lists",
    ),
    (
        "refund queries",
        "refund_query_answers_previous_version",
        "zoo-refund-query",
        "queries-answer-known-state",
    ),
];

fn out_dir(name: &str) -> String {
    std::env::temp_dir()
        .join(format!("payhub-planted-{}-{name}", std::process::id()))
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn verify_fails_with_each_kind_of_planted_bug_and_passes_without() {
    for (kind, mutant, preset, property) in KINDS {
        let out = out_dir(mutant);
        let o = run(&[
            "verify", "--mutant", mutant, "--preset", preset, "--out", &out,
        ]);
        let text = stdout(&o);
        assert_eq!(code(&o), 1, "{kind}: {text}{}", stderr(&o));
        let head: Vec<&str> = text.lines().take(4).collect();
        assert!(
            head[0].starts_with("payhub-verify: FAILED"),
            "{kind}: {text}"
        );
        assert!(
            head[1].contains(&format!("planted bug: mutant {mutant}")),
            "{kind}: {text}"
        );
        assert!(
            head[2].contains(&format!("preset {preset}: `{property}`"))
                && head[2].contains("violated"),
            "{kind}: {text}"
        );
        assert_eq!(
            head[3].trim(),
            format!("reproduce: payhub-verify verify --mutant {mutant} --preset {preset}"),
            "{kind}"
        );
    }
    // Without the bug: the same presets, the reference platform and client.
    let mut presets: Vec<&str> = KINDS
        .iter()
        .map(|k| k.2)
        .filter(|p| !p.starts_with("zoo-"))
        .collect();
    presets.sort_unstable();
    presets.dedup();
    for preset in presets {
        let out = out_dir(preset);
        let o = run(&[
            "verify",
            "--preset",
            preset,
            "--no-mutants",
            "--seeds",
            "20",
            "--out",
            &out,
        ]);
        let text = stdout(&o);
        assert_eq!(code(&o), 0, "{preset}: {text}{}", stderr(&o));
        assert!(text.starts_with("payhub-verify: all hold"), "{text}");
    }
}

/// An unknown mutant is one line and exit 2, with a did-you-mean.
#[test]
fn verify_with_an_unknown_mutant_exits_2() {
    let o = run(&["verify", "--mutant", "replay_answers_previous_versoin"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("unknown mutant 'replay_answers_previous_versoin'"),
        "{err}"
    );
    assert!(err.contains("replay_answers_previous_version"), "{err}");
}

/// An unsound search shortcut planted in place of the real ones fails `verify`, naming
/// where it judged otherwise; the real shortcuts hold in the same run's cross-check.
#[test]
fn verify_fails_with_an_unsound_shortcut_planted() {
    for (name, subject) in [
        ("forgets_facts", "order-number"),
        (
            "delivers_any_answer_first",
            "key_claimed_after_charge on two-servers-one-order",
        ),
    ] {
        let out = out_dir(name);
        let o = run(&["verify", "--unsound-shortcut", name, "--out", &out]);
        let text = stdout(&o);
        assert_eq!(code(&o), 1, "{name}: {text}{}", stderr(&o));
        assert!(text.starts_with("payhub-verify: FAILED"), "{name}: {text}");
        assert!(
            text.contains(&format!(
                "search shortcuts: FAILED with the unsound shortcut {name} planted: {name} judged otherwise on {subject}"
            )),
            "{name}: {text}"
        );
    }
    let o = run(&["verify", "--unsound-shortcut", "forgets_fact"]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("forgets_facts"), "a did-you-mean");
}
