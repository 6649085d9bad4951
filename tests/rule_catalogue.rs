//! The rule catalogue is complete and every rule the models implement is cited and tested.
//!
//! A rule kept by the platform or by the merchant client must be
//! - cited in `model/src` (outside the catalogue) as `Rule::Variant` or by its ID, at the
//!   code that enforces it, and
//! - carried by the name of at least one `#[test]` in the workspace (`KEY-07` → a test
//!   named `key_07_…`).
//!
//! A rule nobody tests therefore fails the build.

use payhub_model::{Enforcer, Rule};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// Names of the functions marked `#[test]` (possibly after other attributes) in `source`.
fn test_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("#[test]") {
        rest = &rest[at + "#[test]".len()..];
        if let Some(fn_at) = rest.find("fn ") {
            let name: String = rest[fn_at + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.push(name);
        }
    }
    names
}

#[test]
fn catalogue_has_at_least_55_rules_with_sections() {
    assert!(Rule::ALL.len() >= 55, "{} rules", Rule::ALL.len());
    for rule in Rule::ALL {
        assert!(!rule.section().title().is_empty());
    }
}

#[test]
fn every_implemented_rule_is_cited_by_the_model_and_carried_by_a_test_name() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["model", "sim", "properties", "tests", "src"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut tests = BTreeSet::new();
    let mut model_source = String::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("readable source");
        tests.extend(test_names(&text));
        let in_model = file.starts_with(root.join("model/src"));
        if in_model && !file.starts_with(root.join("model/src/rules")) {
            model_source.push_str(&text);
        }
    }
    assert!(tests.len() > 10, "found only {} tests", tests.len());

    let mut missing = Vec::new();
    for rule in Rule::ALL {
        if rule.enforcer() == Enforcer::Wording {
            continue;
        }
        let variant = format!("Rule::{rule:?}");
        if !model_source.contains(&variant) && !model_source.contains(rule.id()) {
            missing.push(format!(
                "{} is not cited in model/src ({variant})",
                rule.id()
            ));
        }
        let tag = rule.test_tag();
        if !tests.iter().any(|t| t.contains(&tag)) {
            missing.push(format!(
                "{} has no test whose name contains `{tag}`",
                rule.id()
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "rules without code or test:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn test_name_scanner_finds_attributed_tests() {
    let src = "#[test]\nfn key_07_long_key() {}\n#[test]\n#[should_panic]\nfn scope_02_x() {}";
    assert_eq!(test_names(src), ["key_07_long_key", "scope_02_x"]);
}

/// `rules --coverage`: a rule no property judges says why, and names the tests and
/// scripts that check it instead; each of those exists (a test by that name in that file,
/// a script that cites the rule). A rule a property judges carries no stale reason.
/// A rule judged in part is judged (by a property that can fail) and quotes what is not.
#[test]
fn a_rule_judged_in_part_is_judged_and_quotes_what_is_not() {
    for rule in Rule::ALL {
        if let Some(part) = rule.judged_in_part() {
            assert!(
                payhub_properties::judging(*rule).next().is_some(),
                "{rule}: in part, but no property judges it"
            );
            assert!(part.contains('"') && part.len() > 60, "{rule}: {part}");
        }
    }
}

#[test]
fn every_rule_no_property_judges_says_why_and_names_tests_that_exist() {
    let root = workspace();
    let mut problems = Vec::new();
    let mut unjudged = 0;
    for rule in Rule::ALL {
        // Judged: by a property whose predicate can fail (a reach check never judges).
        let judged = payhub_properties::judging(*rule).next().is_some();
        match (judged, rule.unjudged()) {
            (true, Some(_)) => problems.push(format!(
                "{} is judged by a property but the catalogue says why none does",
                rule.id()
            )),
            (false, None) => problems.push(format!(
                "{} is judged by no property and the catalogue gives no reason",
                rule.id()
            )),
            (true, None) => {}
            (false, Some(u)) => {
                unjudged += 1;
                if u.why.len() < 60 || !u.why.contains('"') {
                    problems.push(format!(
                        "{}: the reason should quote what the rule asks for",
                        rule.id()
                    ));
                }
                if u.checked_by.is_empty() {
                    problems.push(format!("{}: names no test or script", rule.id()));
                }
                for place in u.checked_by {
                    if let Some((path, name)) = place.split_once("::") {
                        let text = fs::read_to_string(root.join(path)).unwrap_or_default();
                        if !test_names(&text).iter().any(|t| t == name) {
                            problems.push(format!("{}: no #[test] {name} in {path}", rule.id()));
                        }
                    } else {
                        let text = fs::read_to_string(root.join(place)).unwrap_or_default();
                        if !text.contains(rule.id()) {
                            problems.push(format!(
                                "{}: {place} does not exist or does not cite it",
                                rule.id()
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(unjudged > 0, "no unjudged rule was checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
