//! The edges' part of the report (its summary line and JUnit part): the end-to-end
//! checks over each session, and the edge zoo's kill matrix.

use crate::edges::EdgeReport;
use crate::outcome::{Item, ItemResult, Part};
use crate::verify_cmd::report::Report;

impl Report {
    /// `edges: …` of the summary.
    pub(super) fn edges_line(&self) -> Option<String> {
        let e = match &self.edges {
            Some(e) => e,
            None if !self.ran("edges") => return Some("edges: not judged (not run)".into()),
            None => return None,
        };
        let passed = e.checks.iter().filter(|c| c.passed).count();
        let caught = e.defects.iter().filter(|d| d.caught_by.is_some()).count();
        let total = e.defects.len();
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
}

/// The edges: a case per check and session, and one per planted defect of the edge zoo
/// (caught passes, naming the check; missed fails).
pub(super) fn part(e: &EdgeReport) -> Part {
    let checks = e.checks.iter().map(|c| {
        let outcome = match c.passed {
            true => ItemResult::Passed,
            false => ItemResult::witnessed(c.detail.clone().unwrap_or_default()),
        };
        let name = format!("{} on {}", c.check, c.session);
        Item::new("verify.edges", name, outcome)
    });
    let defects = e.defects.iter().map(|d| {
        let name = format!("edge zoo: {}", d.name);
        match d.caught_by {
            Some(by) => Item::new("verify.edge-zoo", name, ItemResult::Passed)
                .with_output(format!("caught by {by}")),
            None => {
                let missed = format!("missed: no check caught {}", d.name);
                Item::new("verify.edge-zoo", name, ItemResult::fail(missed, d.about))
            }
        }
    });
    Part::new("verify edges", checks.chain(defects).collect())
}
