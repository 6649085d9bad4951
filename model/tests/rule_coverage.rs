//! Every rule the platform or the merchant client must keep has a test in this crate
//! whose name carries the rule's tag (`key_07_…`), and is cited in the model's source at
//! the code that enforces it (`Rule::KeyLength` or `KEY-07`). Wording rules are
//! documented, not machine-checked. The workspace has the same check across crates
//! (`tests/rule_catalogue.rs`); this one keeps the model crate honest on its own.

use payhub_model::{Enforcer, Rule};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Names of the functions marked `#[test]` (possibly after other attributes) in `source`,
/// read the way `tests/rule_catalogue.rs` reads them.
fn test_names_in(source: &str) -> Vec<String> {
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

/// Names of `#[test]` functions in the crate: its integration tests and the unit tests
/// of its source.
fn test_names() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = Vec::new();
    for dir in ["tests", "src"] {
        for file in rust_files(&root.join(dir)) {
            names.extend(test_names_in(&std::fs::read_to_string(&file).unwrap()));
        }
    }
    names
}

/// The rules a model implements: the platform's and the merchant client's.
fn implemented_rules() -> impl Iterator<Item = Rule> {
    Rule::ALL
        .iter()
        .copied()
        .filter(|r| matches!(r.enforcer(), Enforcer::Platform | Enforcer::Client))
}

#[test]
fn every_platform_and_client_rule_has_a_test_named_for_it() {
    let names = test_names();
    assert!(names.len() > 50, "found only {} tests", names.len());
    let missing: Vec<String> = implemented_rules()
        .filter(|r| !names.iter().any(|n| n.contains(&r.test_tag())))
        .map(|r| format!("{} ({:?})", r.id(), r.enforcer()))
        .collect();
    assert!(missing.is_empty(), "rules without a test: {missing:?}");
}

#[test]
fn every_platform_and_client_rule_is_cited_where_the_model_enforces_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let text: String = rust_files(&src)
        .into_iter()
        .filter(|f| !f.starts_with(src.join("rules")))
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let missing: Vec<String> = implemented_rules()
        .filter(|r| {
            let variant = format!("Rule::{r:?}");
            !text.contains(&variant) && !text.contains(r.id())
        })
        .map(|r| format!("{} ({:?})", r.id(), r.enforcer()))
        .collect();
    assert!(
        missing.is_empty(),
        "rules not cited in model/src: {missing:?}"
    );
}

#[test]
fn both_enforcers_are_covered_and_only_wording_is_left_out() {
    let rules: Vec<Rule> = implemented_rules().collect();
    assert!(rules.iter().any(|r| r.enforcer() == Enforcer::Platform));
    assert!(rules.iter().any(|r| r.enforcer() == Enforcer::Client));
    let left_out: Vec<Rule> = Rule::ALL
        .iter()
        .copied()
        .filter(|r| !rules.contains(r))
        .collect();
    assert!(
        left_out.iter().all(|r| r.enforcer() == Enforcer::Wording),
        "{left_out:?}"
    );
}

#[test]
fn test_name_scanner_finds_attributed_tests() {
    let src = "#[test]\nfn key_07_long_key() {}\n#[test]\n#[should_panic]\nfn scope_02_x() {}";
    assert_eq!(test_names_in(src), ["key_07_long_key", "scope_02_x"]);
}
