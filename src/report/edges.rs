//! The edges' part of the report: the end-to-end checks of the sandbox, check-log,
//! judge and conform over each session, and the edge zoo's kill matrix (summary line,
//! Markdown section, HTML section, JUnit suite).

use super::Report;
use crate::edges::EdgeReport;
use crate::outcome::html::escape;
use crate::outcome::{Item, ItemResult, Part};
use std::fmt::Write as _;

fn counts(e: &EdgeReport) -> (usize, usize, usize) {
    let passed = e.checks.iter().filter(|c| c.passed).count();
    let caught = e.defects.iter().filter(|d| d.caught_by.is_some()).count();
    (passed, caught, e.defects.len())
}

impl Report {
    /// `edges: …` of the summary.
    pub(super) fn edges_line(&self) -> Option<String> {
        let e = match &self.edges {
            Some(e) => e,
            None if !self.ran("edges") => return Some("edges: not judged (not run)".into()),
            None => return None,
        };
        let (passed, caught, total) = counts(e);
        let zoo = if total == 0 {
            "edge zoo: not run (--no-mutants)".to_owned()
        } else {
            format!("edge zoo: {caught} of {total} planted defects caught")
        };
        Some(format!(
            "edges: {passed} of {} end-to-end checks pass (sandbox sessions on loopback, {} exchanges; conform smoke, {} cases); {zoo}",
            e.checks.len(),
            e.exchanges,
            e.smoke_cases
        ))
    }

    /// Short (report.md stays under 30 KB): what failed, and where the whole matrix is.
    pub(super) fn edges_markdown(&self, s: &mut String) {
        let Some(e) = &self.edges else { return };
        let (passed, caught, total) = counts(e);
        let _ = writeln!(s, "\n## Edges: sandbox, check-log, conform\n");
        let _ = writeln!(
            s,
            "{passed} of {} checks pass over the reference edges; edge zoo: {caught} of {total} planted defects caught, each with a shrunk witness ({:.1} s; every check and the kill matrix: report.html, `edges` in report.json).",
            e.checks.len(),
            e.seconds
        );
        for c in e.checks.iter().filter(|c| !c.passed) {
            let _ = writeln!(
                s,
                "- **{}** on `{}`: {}",
                c.check,
                c.session,
                c.detail.as_deref().unwrap_or_default()
            );
        }
        for d in e.defects.iter().filter(|d| d.caught_by.is_none()) {
            let _ = writeln!(
                s,
                "- defect `{}` ({}) **MISSED**: {}",
                d.name, d.edge, d.about
            );
        }
    }

    pub(super) fn edges_html(&self, s: &mut String) {
        let Some(e) = &self.edges else { return };
        let (passed, caught, total) = counts(e);
        let _ = write!(
            s,
            "<h2 id=\"edges\">Edges: {passed} of {} checks pass; edge zoo {caught} of {total} caught</h2>",
            e.checks.len()
        );
        s.push_str("<table><tr><th>session</th><th>check</th><th>verdict</th></tr>");
        for c in &e.checks {
            let verdict = if c.passed {
                "<span class=\"good\">passes</span>".to_owned()
            } else {
                format!(
                    "<span class=\"bad\">fails</span> {}",
                    escape(c.detail.as_deref().unwrap_or_default())
                )
            };
            let _ = write!(
                s,
                "<tr><td>{}</td><td><code>{}</code></td><td>{verdict}</td></tr>",
                escape(&c.session),
                c.check
            );
        }
        s.push_str("</table><table><tr><th>defect</th><th>edge</th><th>caught by</th><th>session</th><th>seconds</th><th>exchanges</th><th>witness</th></tr>");
        for d in &e.defects {
            let caught = match d.caught_by {
                Some(c) => format!("<code>{c}</code>"),
                None => "<span class=\"bad\">MISSED</span>".to_owned(),
            };
            let _ = write!(
                s,
                "<tr><td><code>{}</code> <span class=\"muted\">{}</span></td><td>{}</td><td>{caught}</td><td>{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{}</td><td>{}<br><span class=\"muted\">{}</span></td></tr>",
                d.name,
                escape(d.about),
                d.edge,
                escape(d.session.as_deref().unwrap_or("")),
                d.seconds,
                d.witness_requests
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
                escape(d.detail.as_deref().unwrap_or("")),
                escape(d.witness.as_deref().unwrap_or(""))
            );
        }
        s.push_str("</table>");
    }
}

/// The edges: a case per check and session, and one per planted defect of the edge zoo
/// (caught passes, naming the check; missed fails).
pub(super) fn part(e: &EdgeReport) -> Part {
    let mut cases: Vec<Item> = e
        .checks
        .iter()
        .map(|c| {
            let outcome = if c.passed {
                ItemResult::Passed
            } else {
                let why = c.detail.clone().unwrap_or_default();
                ItemResult::Failed {
                    message: why.lines().next().unwrap_or_default().to_owned(),
                    detail: why,
                }
            };
            Item::new(
                "verify.edges",
                format!("{} on {}", c.check, c.session),
                outcome,
            )
        })
        .collect();
    cases.extend(e.defects.iter().map(|d| {
        let outcome = match d.caught_by {
            Some(_) => ItemResult::Passed,
            None => ItemResult::Failed {
                message: format!("missed: no check caught {}", d.name),
                detail: d.about.to_owned(),
            },
        };
        let case = Item::new("verify.edge-zoo", format!("edge zoo: {}", d.name), outcome);
        match d.caught_by {
            Some(by) => case.with_output(format!("caught by {by}")),
            None => case,
        }
    }));
    Part::new("verify edges", cases)
}
