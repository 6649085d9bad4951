//! The round trip: a counterexample from a simulation sweep of an anti-pattern, written
//! as a script, runs again to the same violation; the script passes with its
//! `expect violation` line and fails without it.

use payhub_properties::ScriptReport as Report;
use payhub_properties::{AlwaysCheck, Kind, PROPERTIES};
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::script;
use payhub_sim::{Choice, Trace, WorldConfig, shrink, worlds};
use std::path::PathBuf;
use std::process::Command;

fn always() -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .filter(|p| p.over_facts() && p.kind() == Kind::Always)
        .map(|p| p.name)
        .collect()
}

/// The first failing seed of a sweep of clients that re-key and renumber after a
/// timeout, shrunk: (world, tape, property).
fn counterexample() -> (WorldConfig, Vec<Choice>, String) {
    let policy = worlds::parse_policy("new_key_after_timeout+new_order_no_after_timeout")
        .expect("known policy");
    // The simulation world without its outages (429, 503): the world this pinned
    // counterexample was found in.
    let config = WorldConfig {
        controls: Vec::new(),
        ..worlds::simulation(&policy, 2)
    };
    for seed in 0..2_000 {
        let mut check = AlwaysCheck { config: &config };
        let (_, outcome) = driver::run_seed(
            &config,
            seed,
            &FaultProfile::default(),
            400,
            &mut check,
            None,
        );
        if let Some(v) = outcome.violation {
            let tape = shrink::shrink(&config, &outcome.tape, &v.property, &mut check);
            return (config, tape, v.property);
        }
    }
    panic!("no seed in 0..2000 breaks the anti-pattern world");
}

fn run_text(name: &str, text: &str) -> Report {
    let mut script =
        script::parse(name, text.as_bytes(), &always()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    script.config = script.config.clone();
    let mut check = AlwaysCheck {
        config: &script.config,
    };
    script::run(&script, &mut check)
}

fn without_expect_violation(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("expect violation"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn a_simulation_counterexample_written_as_a_script_reproduces_its_violation() {
    let (config, tape, property) = counterexample();
    let text = script::script_from_tape(
        &config,
        &tape,
        Some(&property),
        "counterexample: new_key_after_timeout+new_order_no_after_timeout",
    )
    .expect("expressible as a script");
    assert!(
        text.contains(&format!("\nexpect violation {property}\n")),
        "{text}"
    );
    // The script a reviewer reads, pinned.
    insta::assert_snapshot!("anti_pattern_counterexample", text);

    // With its expect line, the script passes: it violates exactly that property.
    let report = run_text("counterexample.pha", &text);
    assert!(
        report.passed(),
        "{}\n{}",
        report.failures().join("\n"),
        report.to_text()
    );
    let (v, _) = report.violation.as_ref().expect("the violation comes back");
    assert_eq!(v.property, property);

    // Step for step the same run: the same number of choices and the same trace.
    assert_eq!(report.tape.len(), tape.len());
    let mut trace = Trace::new();
    let mut check = AlwaysCheck { config: &config };
    let (_, replayed) = driver::replay(&config, &tape, &mut check, Some(&mut trace))
        .unwrap_or_else(|(i, e)| panic!("step {i}: {e}"));
    assert_eq!(report.trace.to_text(), trace.to_text());
    assert_eq!(
        replayed.violation.map(|v| v.property),
        Some(property.clone())
    );

    // Without the line, the same run fails, naming the property.
    let bare = without_expect_violation(&text);
    let failed = run_text("counterexample.pha", &bare);
    assert!(!failed.passed());
    assert!(
        failed.failures().iter().any(|f| f.contains(&property)),
        "{:?}",
        failed.failures()
    );

    // And so says the command line: exit 0 with the line, 1 without.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("script_roundtrip");
    std::fs::create_dir_all(&dir).unwrap();
    let with = dir.join("counterexample.pha");
    let without = dir.join("counterexample-bare.pha");
    std::fs::write(&with, &text).unwrap();
    std::fs::write(&without, &bare).unwrap();
    let code = |path: &PathBuf| {
        Command::new(env!("CARGO_BIN_EXE_payhub-verify"))
            .arg("run")
            .arg(path)
            .output()
            .expect("the binary runs")
            .status
            .code()
    };
    assert_eq!(code(&with), Some(0));
    assert_eq!(code(&without), Some(1));
}

#[test]
fn a_passing_tape_written_as_a_script_passes_without_an_expect_line() {
    // Every scenario's own tape, written back as a script, runs to the same trace.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let path = dir.join("S05b-concurrent-in-progress.pha");
    let bytes = std::fs::read(&path).unwrap();
    let mut script = script::parse("S05b.pha", &bytes, &always()).unwrap();
    script.config = script.config.clone();
    let mut check = AlwaysCheck {
        config: &script.config,
    };
    let original = script::run(&script, &mut check);
    assert!(original.passed());
    let text = script::script_from_tape(&script.config, &original.tape, None, "S5b, exported")
        .expect("expressible");
    assert!(!text.contains("expect violation"));
    let again = run_text("S05b-exported.pha", &text);
    assert!(again.passed(), "{}", again.failures().join("\n"));
    assert_eq!(again.trace.to_text(), original.trace.to_text());
    assert_eq!(again.tape, original.tape);
}

/// A run of the default simulation world, written as a script, runs again and passes:
/// the export names every platform parameter the world sets (its refund review among
/// them; seeds 8, 11 and 12 deliver a refund the review holds).
#[test]
fn a_default_simulation_run_written_as_a_script_runs_again() {
    let bin = env!("CARGO_BIN_EXE_payhub-verify");
    let dir = std::env::temp_dir().join(format!("payhub-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for seed in ["8", "11", "12"] {
        let o = Command::new(bin)
            .args(["replay", "--seed", seed, "--format", "script"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let path = dir.join(format!("seed-{seed}.pha"));
        std::fs::write(&path, &o.stdout).unwrap();
        let again = Command::new(bin).arg("run").arg(&path).output().unwrap();
        assert!(
            again.status.success(),
            "seed {seed}: {}{}",
            String::from_utf8_lossy(&again.stdout),
            String::from_utf8_lossy(&again.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
