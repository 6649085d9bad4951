//! Every word of `verify`'s summary, passing and failing, is plain English or a term of
//! docs/glossary.md: a new term in the summary fails here until the glossary defines it.
//! Preset names, rule and assumption IDs, property names (in backticks), the words after
//! "violated:" (the property's own explanation) and the reproduce commands are not terms.

mod common;
use common::*;
use std::collections::BTreeSet;

/// Plain English the summary uses, which a reader needs no definition for.
const PLAIN: &[&str] = &[
    "a",
    "can",
    "fail",
    "only",
    "part",
    "that",
    "them",
    "checker",
    "counts",
    "included",
    "its",
    "own",
    "plain",
    "those",
    "judge",
    "adversarial",
    "after",
    "and",
    "as",
    "assumed",
    "below",
    "by",
    "cases",
    "checked",
    "checks",
    "client",
    "confirming",
    "end-to-end",
    "every",
    "failure",
    "faults",
    "first",
    "for",
    "h",
    "in",
    "is",
    "not",
    "of",
    "on",
    "order",
    "payhub-verify",
    "planted",
    "recorded",
    "reference",
    "report",
    "reproduce",
    "run",
    "runs",
    "s",
    "scripts",
    "sessions",
    "still",
    "stopped",
    "submission",
    "tests",
    "the",
    "time",
    "ok",
    "bug",
    "with",
    "violations",
];

/// Whether `w` is a glossary term, or the plural of one.
fn defined(w: &str, terms: &BTreeSet<String>) -> bool {
    let singular = [
        w.strip_suffix("ies").map(|s| format!("{s}y")),
        w.strip_suffix('s').map(str::to_owned),
    ];
    terms.contains(w) || singular.into_iter().flatten().any(|s| terms.contains(&s))
}

/// The glossary's terms: every **bold** span, whole and word by word.
fn terms() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo().join("docs/glossary.md")).unwrap();
    let mut terms = BTreeSet::new();
    for span in text.split("**").skip(1).step_by(2) {
        let span = span.to_lowercase();
        terms.extend(span.split_whitespace().map(str::to_owned));
        terms.insert(span);
    }
    terms
}

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The summary's words, less what is not a term (see the module doc).
fn words(summary: &str, presets: &BTreeSet<String>) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    for line in summary.lines() {
        if line.trim_start().starts_with("reproduce:") || line.starts_with("report:") {
            continue;
        }
        let line = line.split(" violated: ").next().unwrap();
        let mut kept = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '`' => quoted = !quoted,
                _ if quoted => {}
                _ => kept.push(c),
            }
        }
        for w in kept.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')) {
            let w = w.trim_matches('-').to_lowercase();
            let id = w.chars().any(|c| c.is_ascii_digit()) || w.contains('_');
            if w.is_empty() || id || presets.contains(&w) || w.starts_with("client-") {
                continue;
            }
            words.insert(w);
        }
    }
    words
}

#[test]
fn the_glossary_defines_every_term_of_the_summary() {
    let list = stdout(&run(&["check", "--list"]));
    let presets: BTreeSet<String> = list
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert!(presets.contains("create-lossy"), "{list}");
    let dir = std::env::temp_dir().join(format!("payhub-glossary-{}", std::process::id()));
    let out = |name: &str| dir.join(name).display().to_string();
    let passing = run(&["verify", "--quick", "--seeds", "30", "--out", &out("pass")]);
    assert_eq!(code(&passing), 0, "{}", stdout(&passing));
    let failing = run(&[
        "verify",
        "--mutant",
        "backoff_not_doubled",
        "--preset",
        "create-crash",
        "--out",
        &out("fail"),
    ]);
    assert_eq!(code(&failing), 1, "{}", stdout(&failing));
    let terms = terms();
    for o in [&passing, &failing] {
        let summary = stdout(o);
        let missing: Vec<String> = words(&summary, &presets)
            .into_iter()
            .filter(|w| !defined(w, &terms) && !PLAIN.contains(&w.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "words of the summary neither plain nor in docs/glossary.md: {missing:?}\n{summary}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The check can fail: a summary word the glossary lacks is found.
#[test]
fn a_word_the_glossary_lacks_is_found() {
    let presets = BTreeSet::new();
    let found = words("bug zoo: 3 of 3 mutants defenestrated", &presets);
    let terms = terms();
    let missing: Vec<&String> = found
        .iter()
        .filter(|w| !defined(w, &terms) && !PLAIN.contains(&w.as_str()))
        .collect();
    assert_eq!(missing, ["defenestrated"]);
}
