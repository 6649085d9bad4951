//! What `conform` found, as the outcome document (its JUnit): the generated cases, the
//! registry's properties judging the target, and the kill matrix.

use crate::outcome::{Item, ItemResult, Outcome, Part};

/// `conform --format junit`: one case for the generated cases (failed with every
/// violating seed's shrunk exchanges and the answers the model allowed; skipped when a
/// case could not be finished or none ran; the seeds not reached in its body), and a case
/// per property of the registry judging the target.
pub fn outcome(r: &super::Report) -> Outcome {
    let violations = r.violations.iter().map(|v| {
        format!(
            "case seed {}: round {} of the case shrunk to {} requests: no model state explains the answers\nthe model allowed:\n{}\n\nas a what-if script:\n{}",
            v.seed,
            v.breaking_round + 1,
            v.shrunk_requests,
            v.allowed.join("\n"),
            v.script
        )
    });
    let incomplete = r.incomplete.iter();
    let incomplete = incomplete.map(|(seed, why)| format!("case seed {seed}: not judged: {why}"));
    let body: Vec<String> = violations.chain(incomplete).collect();
    let conformed = r
        .cases_run
        .saturating_sub(r.violations.len() + r.incomplete.len());
    let mut summary = format!(
        "{conformed} of {} cases of seeds {} conform",
        r.cases_run, r.seeds
    );
    if r.not_run > 0 {
        summary += &format!("; {} cases not run", r.not_run);
        summary += &r
            .continue_with
            .as_ref()
            .map(|c| format!("; continue with: {c}"))
            .unwrap_or_default();
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
    let output = match body.is_empty() {
        true => summary,
        false => format!("{summary}\n{}", body.join("\n\n")),
    };
    let mut cases = vec![Item::new("conform", "cases", result).with_output(output)];
    registry_cases(&r.registry, &mut cases);
    let suite = Part::new("conform", cases).timed(r.elapsed_s);
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
    let cases = rows.iter().map(|r| {
        let result = match (r.found, &r.reason) {
            (true, _) => ItemResult::Passed,
            (false, Some(why)) => ItemResult::Skipped(format!("the wire cannot show it: {why}")),
            (false, None) => ItemResult::failed(format!("missed: {} cases found nothing", r.cases)),
        };
        let name = format!("mutant {}", r.mutant);
        let case = Item::new("conform.kill-matrix", name, result);
        Item {
            seconds: r.seconds_to_detection,
            ..case
        }
    });
    let cases = cases.collect();
    Outcome::new(
        "payhub-verify conform --kill-matrix",
        vec![Part::new("conform kill matrix", cases)],
    )
}
