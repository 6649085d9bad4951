//! The outcome as JUnit XML, as CI systems read it (GitHub, GitLab, Jenkins,
//! cargo-nextest's shape), through quick-junit: one `<testsuites>` document, a
//! `<testsuite>` per part, a `<testcase>` per item. A violation is a `<failure>` whose
//! message is its witness; what was not judged is `<skipped>` with the reason. Every
//! suite carries the contract it was judged against (`contract`, `contract-version`),
//! the command line that reproduces it (`command`, where one does) and the commit the
//! binary was built from (`commit`, where known).

use super::{ItemResult, Outcome};
use payhub_model::Contract;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// The document of this process's `command` and its `parts`.
pub fn of(command: &str, parts: Vec<super::Part>) -> String {
    render(&Outcome::new(command, parts))
}

/// The document.
pub fn render(outcome: &Outcome) -> String {
    let mut report = Report::new(outcome.command.as_str());
    for part in &outcome.parts {
        let mut ts = TestSuite::new(part.name.as_str());
        ts.add_property(Property::new("contract", Contract::named()));
        ts.add_property(Property::new("contract-version", Contract::VERSION));
        if let Some(line) = &outcome.command_line {
            ts.add_property(Property::new("command", line.as_str()));
        }
        if let Some(commit) = &outcome.commit {
            ts.add_property(Property::new("commit", commit.as_str()));
        }
        if let Some(s) = part.seconds {
            ts.set_time(Duration::from_secs_f64(s.max(0.0)));
        }
        for item in &part.items {
            let status = match &item.result {
                ItemResult::Passed => TestCaseStatus::success(),
                ItemResult::Failed { message, detail } => {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    st.set_type("violated").set_message(message.as_str());
                    if !detail.is_empty() {
                        st.set_description(detail.as_str());
                    }
                    st
                }
                ItemResult::Skipped(message) => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(message.as_str());
                    st
                }
            };
            let mut tc = TestCase::new(item.name.as_str(), status);
            tc.set_classname(item.class.as_str());
            if let Some(s) = item.seconds {
                tc.set_time(Duration::from_secs_f64(s.max(0.0)));
            }
            if let Some(out) = &item.output {
                tc.set_system_out(out.as_str());
            }
            if !item.rules.is_empty() {
                tc.add_property(Property::new("rules", item.rules.join(", ")));
            }
            ts.add_test_case(tc);
        }
        report.add_test_suite(ts);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- the JUnit document could not be written: {e} -->\n"))
}

#[cfg(test)]
mod tests {
    use super::super::{Item, Part};
    use super::*;

    #[test]
    fn control_characters_and_markup_keep_the_document_well_formed() {
        let o = Outcome::new(
            "t",
            vec![Part::new(
                "s",
                vec![Item::new(
                    "c",
                    "a<b & \"c\"",
                    ItemResult::Failed {
                        message: "\u{1}x <y>".into(),
                        detail: "d\u{7}".into(),
                    },
                )],
            )],
        );
        let x = render(&o);
        assert!(x.contains("a&lt;b &amp; &quot;c&quot;"), "{x}");
        assert!(!x.contains('\u{1}') && !x.contains('\u{7}'), "{x}");
    }

    #[test]
    fn counts_add_up_over_suites() {
        let items = vec![
            Item::new("c", "a", ItemResult::Passed),
            Item::new(
                "c",
                "b",
                ItemResult::Failed {
                    message: "m".into(),
                    detail: "d".into(),
                },
            ),
            Item::new("c", "c", ItemResult::not_judged("why")),
        ];
        let x = render(&Outcome::new("t", vec![Part::new("s", items)]));
        assert!(x.contains("tests=\"3\""), "{x}");
        assert!(x.contains("failures=\"1\""), "{x}");
        assert!(x.contains("skipped=\"1\""), "{x}");
        assert!(x.contains("message=\"m\""), "{x}");
        assert!(x.contains("type=\"violated\""), "{x}");
        assert!(x.contains("<skipped message=\"not judged: why\""), "{x}");
        assert!(
            x.contains(&format!("value=\"{}\"", Contract::VERSION)),
            "{x}"
        );
        let mut pinned = Outcome::new("t", vec![Part::new("s", vec![])]);
        pinned.command_line = Some("payhub-verify check --preset create-lossy".into());
        let x = render(&pinned);
        assert!(
            x.contains(
                "<property name=\"command\" value=\"payhub-verify check --preset create-lossy\"/>"
            ),
            "{x}"
        );
        let session = render(&Outcome {
            command_line: None,
            ..Outcome::new("t", vec![Part::new("s", vec![])])
        });
        assert!(!session.contains("name=\"command\""), "{session}");
    }
}
