//! The bug zoo: every planted bug (platform mutant or client anti-pattern) is caught by a
//! named property, and the reference configurations by none. If a property is weakened
//! so that it no longer catches the bug it exists for, this fails.

use payhub_model::client::{AntiPattern, Policy};
use payhub_model::{Contract, Mutant, ParameterMutant, Variant};
use payhub_properties::AlwaysCheck;
use payhub_properties::zoo::{self, Subject, ZooOptions};
use std::collections::BTreeSet;
use std::process::Command;

/// The matrix's search in a debug build: the same presets in the same order, a smaller
/// simulation sweep (no subject needs one today).
fn options() -> ZooOptions {
    ZooOptions {
        threads: 2,
        seeds: 200,
        steps: 400,
        references: false,
        control: None,
    }
}

/// Every mutant is killed, by a property whose rules overlap the rules the mutant
/// breaks or by one that judges the money (ledger) directly; the counterexample replays
/// and renders.
#[test]
fn every_mutant_is_killed_by_a_named_property() {
    let subjects = Subject::all();
    assert!(subjects.len() >= 24, "{} mutants", subjects.len());
    assert_eq!(
        subjects
            .iter()
            .filter(|s| matches!(s, Subject::Client(_)))
            .count(),
        AntiPattern::ALL.len()
    );
    let matrix = zoo::run(&subjects, &options()).unwrap();
    let survivors: Vec<&str> = matrix.survivors().iter().map(|r| r.name).collect();
    assert!(survivors.is_empty(), "mutants survived: {survivors:?}");
    assert_eq!(matrix.killed, subjects.len());
    let detail = subjects.iter().filter(|s| s.is_detail()).count();
    assert!(detail >= 10, "{detail} detail mutants");
    assert!(
        subjects
            .iter()
            .filter(|s| s.is_detail())
            .all(|s| s.section() == "detail mutants: cadence and effects")
    );
    for row in &matrix.mutants {
        let property = row.property.expect("killed by a property");
        assert!(
            payhub_properties::property(property).is_some(),
            "{}: {property} is not a registered property",
            row.name
        );
        assert!(
            row.method
                .as_deref()
                .is_some_and(|m| m.starts_with("exhaustive:") || m == "simulation")
        );
        let found = row
            .counterexample
            .as_ref()
            .expect("a replayable counterexample");
        let proof = &found.proof;
        assert_eq!(row.counterexample_steps, Some(proof.choices.len()));
        assert!(
            !row.tape.is_empty() && row.tape.len() == proof.choices.len(),
            "{}",
            row.name
        );
        assert_eq!(proof.labels(), row.tape);
        assert_eq!(proof.property, property);
        // The proof's trace is the trace of a replay of its choices on its world.
        let mut check = payhub_properties::property::OneCheck {
            property: found.property,
            config: &proof.config,
        };
        let mut trace = payhub_sim::Trace::new();
        let (_, replayed) =
            payhub_sim::driver::replay(&proof.config, &proof.choices, &mut check, Some(&mut trace))
                .unwrap();
        assert_eq!(replayed.violation, Some(proof.violation()), "{}", row.name);
        assert_witness_names_what_its_words_name(found.property, proof, row.name);
        assert_eq!(trace.to_text(), proof.trace.to_text(), "{}", row.name);
        // What a zoo tape names (`mutants --show NAME --save-tape FILE`) is this world:
        // `replay --tape` rebuilds it.
        let subject = Subject::from_name(row.name).unwrap();
        let (world, _setup) = subject
            .start_of(row.method.as_deref().unwrap())
            .unwrap_or_else(|| panic!("{}: no world for its method", row.name));
        assert_eq!(world, proof.config, "{}", row.name);
        assert!(!trace.to_text().is_empty(), "{}", row.name);
        assert!(
            proof.trace.to_mermaid().starts_with("sequenceDiagram"),
            "{}",
            row.name
        );
    }
    // Every property added for the zoo kills something (a check that cannot fail is worth nothing).
    let killers: BTreeSet<&str> = matrix.mutants.iter().filter_map(|r| r.property).collect();
    for p in [
        "payments-shown-as-the-status-table-lists",
        "queries-answer-known-state",
        "idempotency-conflict-iff-parameters-differ",
        "same-key-never-new-business",
        "answers-name-the-requested-payment",
        "client-spaces-queries",
        "client-honours-retry-after",
        "client-uses-a-key-on-one-endpoint",
        "client-never-changes-parameters-under-a-key",
        "client-creates-an-order-under-one-key",
        "client-card-retry-only-after-failed",
        // cancel_202_as_canceled, which client-never-closes-a-captured-order caught when
        // the capture came (10 steps), is caught when the order is closed (9 steps).
        "client-closes-an-order-once-on-a-closed-payment",
        // detail mutants: cadence and effects
        "client-backs-off-as-the-reference-code",
        "client-waits-the-contract-timeouts",
        "client-queries-until-24-hours",
        "client-stops-querying-at-a-final-status",
        "platform-verifies-unknown-results-within-its-window",
        "platform-requeries-manual-review-every-24-hours",
        "platform-goes-to-manual-review-after-its-automatic-queries",
        "client-fulfils-an-order-once-when-succeeded",
        "client-shows-the-status-table-message",
        // a reading of the contract explored both ways, and a review that rejects
        "confirm-past-retention-kept-to-its-reading",
        "refund-rejected-in-review-is-never-sent",
    ] {
        assert!(
            payhub_properties::property(p).is_some(),
            "{p} is not a registered property"
        );
        assert!(killers.contains(p), "{p} killed no mutant: {killers:?}");
    }
}

/// The typed witness of a violation (what the sandbox and the script pages draw from)
/// names every Payment, attempt, refund and request its words name, and its words name
/// every identifier it names: the two say the same thing.
fn assert_witness_names_what_its_words_name(
    property: &payhub_properties::Property,
    proof: &payhub_properties::Counterexample,
    mutant: &str,
) {
    let Some(witnessed) = property.witnessed(&proof.world.facts) else {
        // A property over the wire reads no world's facts; the zoo runs none.
        panic!("{mutant}: {} does not hold its violation", property.name);
    };
    assert_eq!(witnessed.detail, proof.detail, "{mutant}");
    let named: BTreeSet<String> = witnessed.named.words().collect();
    let ids: BTreeSet<String> = proof
        .detail
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            ["pay_demo_", "att_", "ref_demo_", "req_"]
                .iter()
                .any(|kind| {
                    w.strip_prefix(kind)
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                })
        })
        .map(str::to_owned)
        .collect();
    assert!(
        ids.is_subset(&named),
        "{mutant}: {} names {named:?} but its words name {ids:?}: {}",
        property.name,
        proof.detail
    );
    for word in &named {
        assert!(
            proof.detail.contains(word.as_str()),
            "{mutant}: {} names {word}, which its words do not: {}",
            property.name,
            proof.detail
        );
    }
}

/// The reference platform and the reference clients (deterministic and random keys):
/// nothing is caught in any preset the zoo searches (each explored up to a budget that
/// keeps a debug build quick; `payhub-verify mutants` explores all of every preset), nor
/// in a simulation sweep.
#[test]
fn reference_configurations_are_caught_by_nothing() {
    let budget = Some(40_000);
    let mut explored_fully = 0;
    let mut presets = zoo::platform_order();
    presets.extend(zoo::client_order(&Policy::reference_random()));
    for preset in &presets {
        let e = zoo::explore(preset, budget).unwrap();
        assert!(e.skipped.is_none(), "{}: {:?}", preset.name, e.skipped);
        if let Some(found) = &e.found {
            panic!(
                "reference caught in {} by {}: {}\n{}",
                preset.name,
                found.property.name,
                found.proof.detail,
                found
                    .proof
                    .choices
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        explored_fully += usize::from(e.complete);
    }
    // The zoo's own presets are all small enough to explore completely.
    let zoo_presets =
        zoo::zoo_platform_presets().len() + 2 * zoo::zoo_client_presets(&Policy::reference()).len();
    assert!(
        explored_fully >= zoo_presets,
        "{explored_fully} of {} presets explored completely",
        presets.len()
    );
    for policy in [Policy::reference(), Policy::reference_random()] {
        let config = payhub_sim::worlds::simulation(&policy, 2);
        let e = zoo::sweep(&config, 200, 400).unwrap();
        assert!(
            e.found.is_none(),
            "{}: {:?}",
            config.name,
            e.found.map(|f| f.proof.detail)
        );
    }
}

/// Mutants are configuration: the default world runs the reference platform, a mutant
/// is the world's variant and nothing else (its parameters are the reference's), and each
/// name round-trips. A parameter mutant is the reference platform with one parameter off.
#[test]
fn mutants_are_configuration() {
    let reference = payhub_sim::WorldConfig::default();
    assert_eq!(reference.variant, Variant::REFERENCE);
    assert!(
        payhub_model::Platform::new(reference.params.clone(), []).variant() == Variant::REFERENCE
    );
    // The simulation world's parameters: the reference's, with its refunds reviewed
    // (A-REFUND-REVIEW).
    let simulated = payhub_sim::worlds::simulation(&payhub_model::client::Policy::reference(), 2);
    assert_eq!(
        simulated.params,
        payhub_model::PlatformParams {
            refund_review_from: simulated.params.refund_review_from,
            ..payhub_model::PlatformParams::default()
        }
    );
    for &m in Mutant::ALL {
        assert_eq!(Subject::from_name(m.name()), Some(Subject::Platform(m)));
        let mut config = Subject::Platform(m).simulation();
        assert_eq!(config.variant, Variant::planted(m));
        assert_eq!(config.variant.mutant(), Some(m));
        assert_eq!(config.params, simulated.params);
        config.variant = Variant::REFERENCE;
        assert_eq!(config.variant, reference.variant);
    }
    for &m in ParameterMutant::ALL {
        let config = Subject::Parameter(m).simulation();
        assert_eq!(config.variant, Variant::REFERENCE);
        assert_eq!(config.params, m.apply(simulated.params.clone()));
        assert_ne!(config.params, simulated.params);
    }
}

/// RET-01, ATTEMPT-05: the reference platform run with a number other than the
/// contract's is caught by a property that judges by [`Contract`], not by the platform's
/// parameters: a same-key replay after a day (within the contract's 7) is answered as new
/// business; a fourth attempt is taken.
#[test]
fn ret_01_attempt_05_a_platform_run_with_a_wrong_contract_number_is_killed() {
    let cases = [
        (
            ParameterMutant::Retention1d,
            "same-key-never-new-business",
            "exhaustive:order-number",
        ),
        (
            ParameterMutant::AttemptsMax4,
            "attempts-within-limits",
            "exhaustive:zoo-attempts",
        ),
    ];
    for (m, property, method) in cases {
        let subject = Subject::Parameter(m);
        assert_eq!(Subject::from_name(m.name()), Some(subject));
        assert!(Subject::all().contains(&subject));
        let row = zoo::kill(subject, &options()).unwrap();
        assert!(row.killed, "{m} survived: {:?}", row.tried);
        assert_eq!(row.property, Some(property), "{m}");
        assert_eq!(row.method.as_deref(), Some(method), "{m}");
        let found = row.counterexample.as_ref().expect("a counterexample");
        assert_eq!(
            found.proof.config.params,
            m.apply(found.proof.config.params.clone())
        );
        let (world, outcome) = payhub_sim::driver::replay(
            &found.proof.config,
            &found.proof.choices,
            &mut AlwaysCheck {
                config: &found.proof.config,
            },
            None,
        )
        .unwrap();
        assert_eq!(
            outcome.violation.map(|v| v.property),
            Some(property.to_owned())
        );
        if m == ParameterMutant::Retention1d {
            // Caught between the platform's day and the contract's seven.
            assert!(
                world.now >= found.proof.config.params.retention,
                "{}",
                world.now
            );
            assert!(world.now < Contract::RETENTION, "{}", world.now);
        }
    }
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_payhub-verify"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mutants --show NAME` prints the tape and the Mermaid diagram; an unknown name is one
/// line on stderr and exit 2.
#[test]
fn mutants_show_prints_a_tape_and_a_mermaid_diagram() {
    let (code, out, _) = cli(&["mutants", "--show", "card_in_fingerprint", "--no-reference"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("idempotency-conflict-iff-parameters-differ"),
        "{out}"
    );
    assert!(out.contains("# tape (world"), "{out}");
    assert!(out.contains("sequenceDiagram"), "{out}");
    assert!(out.contains("409"), "{out}");

    let (code, out, err) = cli(&["mutants", "--show", "no_such_mutant"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown mutant 'no_such_mutant'"), "{err}");

    let (code, out, _) = cli(&["mutants", "--list", "--format", "json"]);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), Subject::all().len());
}

/// `mutants --show NAME --save-tape FILE` writes a tape that `replay --tape FILE`
/// replays to the same violation: a platform mutant in a preset with a setup, one in a
/// zoo-only preset, and a client anti-pattern.
#[test]
fn mutants_show_saves_a_tape_that_replay_reproduces() {
    let dir = std::env::temp_dir().join(format!("payhub-zoo-tapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in [
        "requires_action_without_next_action",
        "refund_query_answers_previous_version",
        "new_key_after_timeout",
    ] {
        let tape = dir.join(format!("{name}.tape"));
        let tape = tape.to_str().unwrap();
        let (code, out, err) = cli(&["mutants", "--show", name, "--save-tape", tape]);
        assert_eq!(code, 0, "{out}{err}");
        let killer = out
            .lines()
            .find_map(|l| l.strip_prefix("killed by "))
            .and_then(|l| l.split(' ').next())
            .unwrap_or_else(|| panic!("{out}"))
            .to_owned();
        let (code, out, err) = cli(&["replay", "--tape", tape]);
        assert_eq!(code, 1, "{name}: {out}{err}");
        let last = out.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!("VIOLATED {killer} [")),
            "{name}: {last}"
        );
    }
    // A tape naming no mutant the zoo has is one line, exit 2.
    let bad = dir.join("bad.tape");
    std::fs::write(
        &bad,
        r#"{"format": "payhub-verify tape v2", "simulation": {"policy": "reference", "clients": 2, "steps": 10, "no_swarm": false}, "zoo": {"mutant": "no_such", "method": "simulation"}, "choices": []}"#,
    )
    .unwrap();
    let (code, _, err) = cli(&["replay", "--tape", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown mutant 'no_such'"), "{err}");
}
