//! The edges' part of the report: the end-to-end checks of the sandbox, check-log,
//! judge and conform over each session, and the edge zoo's kill matrix (summary line,
//! Markdown section, HTML section, JUnit suite).

use super::Report;
use super::junit::{Case, Outcome, Suite};
use super::page::escape;
use crate::edges::EdgeReport;
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

    pub(super) fn edges_markdown(&self, s: &mut String) {
        let Some(e) = &self.edges else { return };
        let (passed, caught, total) = counts(e);
        let _ = writeln!(s, "\n## Edges: sandbox, check-log, conform\n");
        let _ = writeln!(
            s,
            "{passed} of {} checks pass over the reference edges: each sandbox session's verdict, `judge` on its events, `check-log` on its HAR and on the client's own capture, the fault plan's effects and the HTTP mapping against its events; conform's smoke run ({} cases, {} requests). {:.1} s in all.\n",
            e.checks.len(),
            e.smoke_cases,
            e.smoke_requests,
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
        if total == 0 {
            let _ = writeln!(s, "\nThe edge zoo was not run (`--no-mutants`).");
            return;
        }
        let _ = writeln!(
            s,
            "\nEdge zoo: {caught} of {total} planted defects caught. Each row: the check that failed, on which session, seconds to detection, and the shrunk witness's HTTP exchanges (the witness itself: `report.json`).\n"
        );
        let _ = writeln!(
            s,
            "| defect | edge | caught by | session | s | exchanges |\n|---|---|---|---|---|---|"
        );
        for d in &e.defects {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {:.2} | {} |",
                d.name,
                d.edge,
                d.caught_by.unwrap_or("**MISSED**"),
                d.session.as_deref().unwrap_or("—"),
                d.seconds,
                d.witness_requests
                    .map_or_else(|| "—".to_owned(), |n| n.to_string())
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
pub(super) fn junit(e: &EdgeReport) -> Suite {
    let mut cases: Vec<Case> = e
        .checks
        .iter()
        .map(|c| {
            let outcome = if c.passed {
                Outcome::Passed
            } else {
                let why = c.detail.clone().unwrap_or_default();
                Outcome::Failed {
                    message: why.lines().next().unwrap_or_default().to_owned(),
                    detail: why,
                }
            };
            Case::new(
                "verify.edges",
                format!("{} on {}", c.check, c.session),
                outcome,
            )
        })
        .collect();
    cases.extend(e.defects.iter().map(|d| {
        let outcome = match d.caught_by {
            Some(_) => Outcome::Passed,
            None => Outcome::Failed {
                message: format!("missed: no check caught {}", d.name),
                detail: d.about.to_owned(),
            },
        };
        let name = match d.caught_by {
            Some(by) => format!("edge zoo: {} (caught by {by})", d.name),
            None => format!("edge zoo: {}", d.name),
        };
        Case::new("verify.edge-zoo", name, outcome)
    }));
    Suite::new("verify edges", cases)
}
