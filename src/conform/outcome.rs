//! What `conform` found, as the outcome document (its JUnit): the generated cases, the
//! registry's properties judging the target, and the kill matrix.

use crate::outcome::{Item, ItemResult, Outcome, Part};

/// `conform --format junit`: one case for the generated cases (failed with every
/// violating seed's shrunk exchanges and the answers the model allowed; skipped when a
/// case could not be finished or none ran; the seeds not reached in its body), and a case
/// per property of the registry judging the target.
pub fn outcome(r: &super::report::Report) -> Outcome {
    let mut body: Vec<String> = r
        .violations
        .iter()
        .map(|v| {
            format!(
                "case seed {}: round {} of the case shrunk to {} requests: no model state explains the answers\nthe model allowed:\n{}\n\nas a what-if script:\n{}",
                v.seed,
                v.breaking_round + 1,
                v.shrunk_requests,
                v.allowed.join("\n"),
                v.script
            )
        })
        .collect();
    body.extend(
        r.incomplete
            .iter()
            .map(|(seed, why)| format!("case seed {seed}: not judged: {why}")),
    );
    let conformed = r
        .cases_run
        .saturating_sub(r.violations.len() + r.incomplete.len());
    let mut summary = format!(
        "{conformed} of {} cases of seeds {} conform",
        r.cases_run, r.seeds
    );
    if r.not_run > 0 {
        summary.push_str(&format!("; {} cases not run", r.not_run));
        if let Some(c) = &r.continue_with {
            summary.push_str(&format!("; continue with: {c}"));
        }
    }
    let result = if let Some(v) = r.violations.first() {
        ItemResult::Failed {
            message: format!(
                "{} of {} cases do not conform; first: case seed {}",
                r.violations.len(),
                r.cases_run,
                v.seed
            ),
            detail: body.join("\n\n"),
        }
    } else if r.cases_run == 0 || !r.incomplete.is_empty() || r.not_run > 0 {
        ItemResult::Skipped(format!("not judged in full: {summary}"))
    } else {
        ItemResult::Passed
    };
    let mut cases = vec![Item::new("conform", "cases", result).with_output(summary)];
    if let Some(out) = cases[0].output.as_mut().filter(|_| !body.is_empty()) {
        out.push('\n');
        out.push_str(&body.join("\n\n"));
    }
    registry_cases(&r.registry, &mut cases);
    let mut suite = Part::new("conform", cases);
    suite.seconds = Some(r.elapsed_s);
    Outcome::new("payhub-verify conform", vec![suite])
}

/// The registry's verdicts over conform's exchanges: a case per property judging the
/// target (failed with its witness, skipped when the exchanges cannot judge it).
fn registry_cases(g: &super::registry::Registry, cases: &mut Vec<Item>) {
    use super::registry::Judges;
    use payhub_properties::verdict::Status;
    for p in g.properties.iter().filter(|p| p.judges == Judges::Target) {
        let result = match p.status {
            Status::Violated => ItemResult::Failed {
                message: format!("{} ({})", p.name, p.rules.join(", ")),
                detail: p.violation_text(),
            },
            Status::CannotJudge => ItemResult::not_judged(
                "it needs the acquirer's ledger, the platform's store or the merchant's process",
            ),
            Status::Unreached => ItemResult::Skipped(
                "not reached by these exchanges (a sometimes property: not a failure)".into(),
            ),
            Status::Holds | Status::Reached => ItemResult::Passed,
        };
        cases.push(Item::new("conform.registry", p.name, result).with_rules(&p.rules));
    }
}

/// `conform --kill-matrix --format junit`: a case per mutant; found passes, blind is
/// skipped with why the wire cannot show it, missed fails.
pub fn matrix(rows: &[super::matrix::Row]) -> Outcome {
    let cases = rows
        .iter()
        .map(|r| {
            let result = if r.found {
                ItemResult::Passed
            } else if let Some(why) = &r.reason {
                ItemResult::Skipped(format!("the wire cannot show it: {why}"))
            } else {
                ItemResult::failed(format!("missed: {} cases found nothing", r.cases))
            };
            let mut case = Item::new(
                "conform.kill-matrix",
                format!("mutant {}", r.mutant),
                result,
            );
            case.seconds = r.seconds_to_detection;
            case
        })
        .collect();
    Outcome::new(
        "payhub-verify conform --kill-matrix",
        vec![Part::new("conform kill matrix", cases)],
    )
}
