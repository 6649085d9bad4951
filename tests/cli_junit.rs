//! `--format junit`, parsed as a CI system parses it: a well-formed `<testsuites>`
//! document whose counts add up, a test case per property (and per scenario, mutant,
//! case), the witness in a violation's failure message, what was not judged as skipped.

mod common;

use common::*;
use std::collections::BTreeSet;

/// One parsed test case: its name, and `failure` / `skipped` messages if any.
#[derive(Debug)]
struct TestCase {
    suite: String,
    name: String,
    failure: Option<String>,
    skipped: Option<String>,
    /// The rules the case judges (its `rules` property).
    rules: Option<String>,
}

/// Parses a JUnit document and checks that every count attribute matches its cases.
fn parse(xml: &str) -> Vec<TestCase> {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("not XML: {e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let attr = |n: roxmltree::Node, a: &str| -> usize {
        n.attribute(a)
            .unwrap_or_else(|| panic!("no {a}"))
            .parse()
            .unwrap()
    };
    let mut cases = Vec::new();
    for suite in root.children().filter(|n| n.has_tag_name("testsuite")) {
        let mine: Vec<TestCase> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|c| {
                let child = |t: &str| {
                    c.children()
                        .find(|n| n.has_tag_name(t))
                        .map(|n| n.attribute("message").unwrap_or("").to_owned())
                };
                let rules = c
                    .descendants()
                    .find(|n| n.has_tag_name("property") && n.attribute("name") == Some("rules"))
                    .and_then(|n| n.attribute("value"))
                    .map(str::to_owned);
                TestCase {
                    rules,
                    suite: suite.attribute("name").unwrap().to_owned(),
                    name: c.attribute("name").unwrap().to_owned(),
                    failure: child("failure"),
                    skipped: child("skipped"),
                }
            })
            .collect();
        assert_eq!(attr(suite, "tests"), mine.len());
        // Every suite names the contract it was judged against.
        let version = suite
            .descendants()
            .find(|n| n.has_tag_name("property") && n.attribute("name") == Some("contract-version"))
            .and_then(|n| n.attribute("value"));
        assert_eq!(
            version,
            Some("v1.0.0"),
            "suite without the contract's version"
        );
        // And the command line that reproduces it.
        let command = suite
            .descendants()
            .find(|n| n.has_tag_name("property") && n.attribute("name") == Some("command"))
            .and_then(|n| n.attribute("value"));
        assert!(
            command
                .is_some_and(|c| c.starts_with("payhub-verify ") && c.contains("--format junit")),
            "suite without its command: {command:?}"
        );
        assert_eq!(
            attr(suite, "failures"),
            mine.iter().filter(|c| c.failure.is_some()).count()
        );
        assert_eq!(
            attr(suite, "skipped"),
            mine.iter().filter(|c| c.skipped.is_some()).count()
        );
        cases.extend(mine);
    }
    assert_eq!(attr(root, "tests"), cases.len());
    cases
}

/// The property names a JSON `check` report lists for a preset.
fn preset_properties(preset: &str) -> BTreeSet<String> {
    let o = run(&["check", "--preset", preset, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    v[0]["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

fn out_dir(name: &str) -> String {
    std::env::temp_dir()
        .join(format!("payhub-junit-{}-{name}", std::process::id()))
        .display()
        .to_string()
}

#[test]
fn check_junit_has_a_case_per_property_of_the_preset() {
    let o = run(&["check", "--preset", "scope", "--format", "junit"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let cases = parse(&stdout(&o));
    let names: BTreeSet<String> = cases.iter().map(|c| c.name.clone()).collect();
    assert_eq!(names, preset_properties("scope"));
    assert!(
        cases
            .iter()
            .all(|c| c.failure.is_none() && c.skipped.is_none())
    );
    // The rules are the case's property, so a CI page shows what each case checks
    // while its name stays the property's.
    let scope = cases
        .iter()
        .find(|c| c.name == "scopes-never-interfere")
        .expect("a case per property");
    assert!(
        scope
            .rules
            .as_deref()
            .is_some_and(|r| r.starts_with("SCOPE-01")),
        "{scope:?}"
    );
}

#[test]
fn verify_junit_has_a_case_per_property_scenario_and_part() {
    let out = out_dir("verify");
    let o = run(&[
        "verify",
        "--preset",
        "scope",
        "--seeds",
        "20",
        "--no-mutants",
        "--format",
        "junit",
        "--out",
        &out,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let cases = parse(&stdout(&o));
    let names: BTreeSet<String> = cases.iter().map(|c| c.name.clone()).collect();
    // At least one case per property of the registry: every property of the preset,
    // and every always property again over the simulation sweep.
    for p in preset_properties("scope") {
        assert!(names.contains(&p), "no case for {p}");
    }
    let in_suite = |prefix: &str| cases.iter().filter(|c| c.suite.starts_with(prefix)).count();
    assert!(in_suite("verify simulation") > 40);
    // One case per script of the scenarios folder.
    let scripts = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pha"))
        .count();
    assert!(scripts >= 39, "{scripts} scripts");
    assert_eq!(in_suite("verify scenarios"), scripts);
    assert_eq!(in_suite("verify chaos"), 1);
    // The zoo was not run: one skipped case says so, nothing claims it passed.
    let zoo: Vec<&TestCase> = cases
        .iter()
        .filter(|c| c.suite == "verify bug zoo")
        .collect();
    assert_eq!(zoo.len(), 1);
    assert!(zoo[0].skipped.is_some());
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn a_planted_bug_is_a_failure_whose_message_is_the_witness() {
    let out = out_dir("planted");
    let o = run(&[
        "verify",
        "--mutant",
        "replay_answers_previous_version",
        "--preset",
        "replay-conflict",
        "--format",
        "junit",
        "--out",
        &out,
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let cases = parse(&stdout(&o));
    let failed: Vec<&TestCase> = cases.iter().filter(|c| c.failure.is_some()).collect();
    assert!(
        failed
            .iter()
            .any(|c| c.name.clone() == "answers-show-the-current-state"),
        "{failed:?}"
    );
    assert!(
        failed
            .iter()
            .all(|c| !c.failure.as_ref().unwrap().is_empty())
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn simulate_junit_names_the_violated_property_with_its_seed() {
    let out = out_dir("simulate");
    let o = run(&[
        "simulate",
        "--seeds",
        "0..40",
        "--policy",
        "new_key_after_timeout",
        "--format",
        "junit",
        "--out",
        &out,
    ]);
    assert_eq!(code(&o), 1);
    let cases = parse(&stdout(&o));
    let failed: Vec<&TestCase> = cases.iter().filter(|c| c.failure.is_some()).collect();
    assert!(!failed.is_empty());
    for c in &failed {
        assert!(c.failure.as_ref().unwrap().starts_with("seed "), "{c:?}");
    }
    assert!(
        cases
            .iter()
            .any(|c| c.name == "eventually:submissions-resolve-within-24h")
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn judge_and_check_log_junit_skip_what_cannot_be_judged() {
    let o = run(&["replay", "--seed", "3", "--format", "events"]);
    let events = temp("junit-events.jsonl", &o.stdout);
    let o = run(&["judge", events.to_str().unwrap(), "--format", "junit"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let cases = parse(&stdout(&o));
    assert!(cases.len() > 40);
    assert!(cases.iter().all(|c| c.failure.is_none()));

    let har = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/har/client-new-key-after-unknown.har");
    let o = run(&["check-log", har.to_str().unwrap(), "--format", "junit"]);
    assert_eq!(code(&o), 1);
    let cases = parse(&stdout(&o));
    let failed: Vec<&TestCase> = cases.iter().filter(|c| c.failure.is_some()).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].name, "client-creates-an-order-under-one-key");
    assert!(failed[0].failure.as_ref().unwrap().contains("entry 2"));
    // A log holds no ledger: those properties are skipped with the evidence missing.
    let skipped: Vec<&TestCase> = cases.iter().filter(|c| c.skipped.is_some()).collect();
    assert!(!skipped.is_empty());
    assert!(
        skipped
            .iter()
            .all(|c| c.skipped.as_ref().unwrap().contains("needs")),
        "{skipped:?}"
    );
}

/// A tape cut off mid-line is judged up to the cut (exit 3): no always property passes,
/// those that held are not judged, naming the cut; a witness reached before it stands.
#[test]
fn an_incomplete_judge_passes_nothing_in_junit() {
    let o = run(&["replay", "--seed", "3", "--format", "events"]);
    let whole = stdout(&o);
    let cut = &whole[..whole.len() / 2];
    assert!(!cut.ends_with('\n'));
    let events = temp("junit-cut.jsonl", cut);
    let o = run(&["judge", events.to_str().unwrap(), "--format", "junit"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let cases = parse(&stdout(&o));
    let passed: Vec<&TestCase> = cases
        .iter()
        .filter(|c| c.failure.is_none() && c.skipped.is_none())
        .collect();
    assert!(
        passed.iter().all(|c| c.name.starts_with("reach:")),
        "{passed:?}"
    );
    assert!(cases.iter().any(|c| {
        c.skipped
            .as_ref()
            .unwrap()
            .contains("it held over what was read")
    }));
}

#[test]
fn escaped_text_stays_well_formed() {
    // Witnesses quote bodies (quotes, braces, `&`); the document must still parse
    // (parse() asserts it and its counts).
    let har = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/har/platform-conflict-missing.har");
    let o = run(&["check-log", har.to_str().unwrap(), "--format", "junit"]);
    parse(&stdout(&o));
}

/// The suite and test names of a `verify` run's JUnit, in order.
fn names_of_verify(seeds: &str, tag: &str) -> Vec<(String, String)> {
    let out = out_dir(tag);
    let o = run(&[
        "verify",
        "--preset",
        "scope",
        "--seeds",
        seeds,
        "--no-mutants",
        "--format",
        "junit",
        "--out",
        &out,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    std::fs::remove_dir_all(&out).ok();
    parse(&stdout(&o))
        .into_iter()
        .map(|c| (c.suite, c.name))
        .collect()
}

#[test]
fn suite_and_test_names_are_the_same_whatever_the_seed_count() {
    // A CI's test history keys on names: counts and results belong in the body.
    let few = names_of_verify("5", "few");
    let more = names_of_verify("30", "more");
    assert!(few.len() > 40, "{few:?}");
    assert_eq!(few, more);
    for (suite, name) in &few {
        assert!(
            !suite.chars().any(|c| c.is_ascii_digit()),
            "a count in the suite name {suite:?}"
        );
        assert!(!name.contains(" of "), "a result in the test name {name:?}");
    }
}

#[test]
fn run_junit_has_a_case_per_script_named_by_its_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let s01 = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("S01-"))
        .unwrap();
    // The same script, expecting a violation it does not have: it fails.
    let text = std::fs::read_to_string(&s01).unwrap();
    let wrong = temp(
        "junit-wrong-expectation.pha",
        format!("{text}\nexpect violation client-never-charges-an-order-twice\n").as_bytes(),
    );
    let o = run(&[
        "run",
        s01.to_str().unwrap(),
        wrong.to_str().unwrap(),
        "--format",
        "junit",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let cases = parse(&stdout(&o));
    assert_eq!(cases.len(), 2, "{cases:?}");
    assert!(cases[0].name.starts_with("S01-") && cases[0].failure.is_none());
    assert_eq!(cases[1].name, "junit-wrong-expectation");
    assert!(cases[1].failure.is_some(), "{cases:?}");
    assert!(cases[1].rules.is_some(), "{cases:?}");
}

#[test]
fn replay_junit_fails_the_violated_property_alone() {
    let saved = out_dir("replay.tape");
    let o = run(&[
        "mutants",
        "--show",
        "new_key_after_timeout",
        "--save-tape",
        &saved,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run(&["replay", "--tape", &saved, "--format", "junit"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let cases = parse(&stdout(&o));
    let failed: Vec<&TestCase> = cases.iter().filter(|c| c.failure.is_some()).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].rules.is_some());
    std::fs::remove_file(&saved).ok();

    let o = run(&["replay", "--seed", "3", "--format", "junit"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let cases = parse(&stdout(&o));
    assert!(cases.len() > 10 && cases.iter().all(|c| c.failure.is_none()));
    assert!(
        cases
            .iter()
            .any(|c| c.name == "eventually:submissions-resolve-within-24h")
    );
}
