//! The JUnit of the recorded sources and the platform under test: `judge`, `check-log`
//! and `conform` (its sweep, oracle and registry, and its kill matrix).

use super::{Case, CaseResult, Suite, first_line, render};

/// Verdicts over a recorded source (`judge`, `check-log`): a case per property; cannot
/// judge is skipped with the evidence missing.
fn verdicts(class: &str, vs: &[payhub_properties::verdict::Verdict]) -> Vec<Case> {
    use payhub_properties::verdict::Status as S;
    vs.iter()
        .map(|v| {
            let outcome = match v.status {
                S::Holds | S::Reached => CaseResult::Passed,
                S::Violated => {
                    let detail = v.detail.clone().unwrap_or_default();
                    CaseResult::Failed {
                        message: first_line(&detail),
                        detail,
                    }
                }
                S::Unreached => CaseResult::Skipped {
                    message: "not reached by this recording (a sometimes property: not a failure)"
                        .into(),
                },
                S::CannotJudge => CaseResult::Skipped {
                    message: v.status_text(),
                },
            };
            Case::new(class, v.name, outcome).with_rules(&v.rules)
        })
        .collect()
}

/// `judge FILE --format junit`; a torn last line (`torn`: where and why) makes one
/// skipped case (the run is incomplete).
pub(crate) fn judge(
    file: &std::path::Path,
    vs: &[payhub_properties::verdict::Verdict],
    torn: Option<&str>,
) -> String {
    let mut cases = verdicts("judge", vs);
    if let Some(t) = torn {
        cases.push(Case::new(
            "judge",
            "events read",
            CaseResult::Skipped {
                message: format!("not judged past {t}"),
            },
        ));
    }
    let suite = Suite::new("judge", cases);
    render(&format!("payhub-verify judge {}", file.display()), &[suite])
}

/// `check-log FILE… --format junit`: a suite per file; unreadable entries make one
/// skipped case (the file's run is incomplete).
pub(crate) fn check_log(all: &[crate::check_log::Judged]) -> String {
    let suites: Vec<Suite> = all
        .iter()
        .map(|j| {
            let mut cases = verdicts("check-log", &j.verdicts);
            if j.skipped > 0 {
                cases.push(Case::new(
                    "check-log",
                    "entries read",
                    CaseResult::Skipped {
                        message: format!(
                            "not judged: {} of {} entries unreadable",
                            j.skipped, j.entries
                        ),
                    },
                ));
            }
            Suite::new(format!("check-log {}", j.file.display()), cases)
        })
        .collect();
    render("payhub-verify check-log", &suites)
}

/// `conform --format junit`: one case for the generated cases (failed with every
/// violating seed's shrunk exchanges and the answers the model allowed; skipped when a
/// case could not be finished or none ran; the seeds not reached in its body), and a case
/// per property of the registry judging the target.
pub(crate) fn conform(r: &crate::conform::report::Report) -> String {
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
    let outcome = if let Some(v) = r.violations.first() {
        CaseResult::Failed {
            message: format!(
                "{} of {} cases do not conform; first: case seed {}",
                r.violations.len(),
                r.cases_run,
                v.seed
            ),
            detail: body.join("\n\n"),
        }
    } else if r.cases_run == 0 || !r.incomplete.is_empty() || r.not_run > 0 {
        CaseResult::Skipped {
            message: format!("not judged in full: {summary}"),
        }
    } else {
        CaseResult::Passed
    };
    let mut cases = vec![Case::new("conform", "cases", outcome).with_output(summary)];
    if let Some(out) = cases[0].output.as_mut().filter(|_| !body.is_empty()) {
        out.push('\n');
        out.push_str(&body.join("\n\n"));
    }
    registry_cases(&r.registry, &mut cases);
    let mut suite = Suite::new("conform", cases);
    suite.seconds = Some(r.elapsed_s);
    render(&format!("payhub-verify conform {}", r.target), &[suite])
}

/// The registry's verdicts over conform's exchanges: a case per property judging the
/// target (failed with its witness, skipped when the exchanges cannot judge it).
fn registry_cases(g: &crate::conform::registry::Registry, cases: &mut Vec<Case>) {
    use crate::conform::registry::Judges;
    use payhub_properties::verdict::Status;
    for p in g.properties.iter().filter(|p| p.judges == Judges::Target) {
        let outcome = match p.status {
            Status::Violated => CaseResult::Failed {
                message: format!("{} ({})", p.name, p.rules.join(", ")),
                detail: p.violation_text(),
            },
            Status::CannotJudge => CaseResult::Skipped {
                message: "not judged: it needs the acquirer's ledger, the platform's store or the merchant's process".into(),
            },
            Status::Unreached => CaseResult::Skipped {
                message: "not reached by these exchanges (a sometimes property: not a failure)".into(),
            },
            Status::Holds | Status::Reached => CaseResult::Passed,
        };
        cases.push(Case::new("conform.registry", p.name, outcome).with_rules(&p.rules));
    }
}

/// `conform --kill-matrix --format junit`: a case per mutant; found passes, blind is
/// skipped with why the wire cannot show it, missed fails.
pub(crate) fn conform_matrix(rows: &[crate::conform::matrix::Row]) -> String {
    let cases = rows
        .iter()
        .map(|r| {
            let outcome = if r.found {
                CaseResult::Passed
            } else if let Some(why) = &r.reason {
                CaseResult::Skipped {
                    message: format!("the wire cannot show it: {why}"),
                }
            } else {
                CaseResult::Failed {
                    message: format!("missed: {} cases found nothing", r.cases),
                    detail: String::new(),
                }
            };
            let mut case = Case::new(
                "conform.kill-matrix",
                format!("mutant {}", r.mutant),
                outcome,
            );
            case.seconds = r.seconds_to_detection;
            case
        })
        .collect();
    render(
        "payhub-verify conform --kill-matrix",
        &[Suite::new("conform kill matrix", cases)],
    )
}
