//! Every rule the platform must keep has a test here whose name carries the rule's tag
//! (`key_07_…`), and is cited in the model's source at the code that enforces it
//! (`Rule::KeyLength` or `KEY-07`). The workspace has the same check across crates; this
//! one keeps the model crate honest on its own.

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

/// Names of `#[test]` functions in the crate's integration tests.
fn test_names() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut names = Vec::new();
    for file in rust_files(&dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut after_test = false;
        for line in text.lines().map(str::trim) {
            if line == "#[test]" {
                after_test = true;
            } else if let (true, Some(rest)) = (after_test, line.strip_prefix("fn ")) {
                names.push(rest.split('(').next().unwrap().to_owned());
                after_test = false;
            }
        }
    }
    names
}

fn platform_rules() -> impl Iterator<Item = Rule> {
    Rule::ALL
        .iter()
        .copied()
        .filter(|r| r.enforcer() == Enforcer::Platform)
}

#[test]
fn every_platform_rule_has_a_test_named_for_it() {
    let names = test_names();
    assert!(names.len() > 50, "found only {} tests", names.len());
    let missing: Vec<&str> = platform_rules()
        .filter(|r| !names.iter().any(|n| n.contains(&r.test_tag())))
        .map(|r| r.id())
        .collect();
    assert!(
        missing.is_empty(),
        "platform rules without a test: {missing:?}"
    );
}

#[test]
fn every_platform_rule_is_cited_where_the_model_enforces_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let text: String = rust_files(&src)
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "rules.rs"))
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let missing: Vec<&str> = platform_rules()
        .filter(|r| {
            let variant = format!("Rule::{r:?}");
            !text.contains(&variant) && !text.contains(r.id())
        })
        .map(|r| r.id())
        .collect();
    assert!(
        missing.is_empty(),
        "platform rules not cited in model/src: {missing:?}"
    );
}
