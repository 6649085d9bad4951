//! The pieces every Markdown page of the harness shares (`check-log`, the sandbox's
//! verdict, `conform`): a violation with what the contract asks instead, each rule's
//! sentence in English and in the Chinese original (authoritative), and its drawing as a
//! Mermaid block a code host draws; the table of properties.

use payhub_model::Rule;
use payhub_properties::verdict::Verdict;
use std::fmt::Write as _;

/// `## heading`, the detail, the rules and each one's sentence, then `mermaid` (a whole
/// Mermaid document) fenced, when there is one.
pub fn violation(heading: &str, detail: &str, rules: &[&str], mermaid: Option<&str>) -> String {
    let mut s = format!(
        "\n## {heading}\n\n{detail}\n\nRules: {}. The contract asks instead:\n\n",
        rules.join(", ")
    );
    for r in rules.iter().filter_map(|id| Rule::from_id(id)) {
        let _ = writeln!(s, "- **{}** {} (原文: {})", r.id(), r.text(), r.zh());
    }
    if let Some(m) = mermaid {
        let _ = write!(s, "\n```mermaid\n{m}```\n");
    }
    s
}

/// `| property | status | rules | detail |`, a row per verdict in the order given.
pub fn properties_table<'a>(verdicts: impl IntoIterator<Item = &'a Verdict>) -> String {
    let mut s = String::from("| property | status | rules | detail |\n|---|---|---|---|\n");
    for v in verdicts {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} |",
            v.name,
            cell(&v.status_text()),
            v.rules.join(", "),
            cell(v.detail.as_deref().unwrap_or(""))
        );
    }
    s
}

/// A table cell: its `|` escaped, on one line.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_violation_quotes_each_rule_in_both_languages_and_fences_its_drawing() {
        let s = violation(
            "p",
            "seen",
            &["KEY-01"],
            Some("sequenceDiagram\n    C->>P: x\n"),
        );
        let rule = Rule::from_id("KEY-01").unwrap();
        assert!(s.contains(rule.text()) && s.contains(rule.zh()), "{s}");
        assert!(s.contains("```mermaid\nsequenceDiagram\n"), "{s}");
        assert!(!violation("p", "seen", &[], None).contains("```"));
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }
}
