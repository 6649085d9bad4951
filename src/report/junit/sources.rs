//! The JUnit of the recorded sources and the platform under test: `judge`, `check-log`
//! and `conform` (its sweep, oracle and registry, and its kill matrix).

use super::{Case, CaseResult, Suite, first_line, named, render};

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
            Case::new(class, named(v.name, &v.rules), outcome)
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
    let suite = Suite::new(format!("judge {}", file.display()), cases);
    render("payhub-verify judge", &[suite])
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

/// `conform --format junit`: a failed case per violating case (its seed; the shrunk
/// exchanges and the answers the model allowed in the failure), a skipped case per case
/// the oracle could not finish, one passing case for the cases that conformed, and a
/// skipped one for the seeds not reached.
pub(crate) fn conform(r: &crate::conform::report::Report) -> String {
    let class = "conform";
    let mut cases = Vec::new();
    for v in &r.violations {
        let allowed = v.allowed.join("\n");
        cases.push(Case::new(
            class,
            format!("case seed {}", v.seed),
            CaseResult::Failed {
                message: format!(
                    "round {} of the case shrunk to {} requests: no model state explains the answers",
                    v.breaking_round + 1,
                    v.shrunk_requests
                ),
                detail: format!("the model allowed:\n{allowed}\n\nas a what-if script:\n{}", v.script),
            },
        ));
    }
    for (seed, why) in &r.incomplete {
        cases.push(Case::new(
            class,
            format!("case seed {seed}"),
            CaseResult::Skipped {
                message: format!("not judged: {why}"),
            },
        ));
    }
    let conformed = r
        .cases_run
        .saturating_sub(r.violations.len() + r.incomplete.len());
    cases.push(Case::new(
        class,
        format!("{conformed} cases of seeds {} conform", r.seeds),
        if conformed > 0 || r.cases_run > 0 {
            CaseResult::Passed
        } else {
            CaseResult::Skipped {
                message: "no case ran".into(),
            }
        },
    ));
    registry_cases(&r.registry, &mut cases);
    if r.not_run > 0 {
        cases.push(Case::new(
            class,
            format!("{} cases not run", r.not_run),
            CaseResult::Skipped {
                message: r
                    .continue_with
                    .clone()
                    .map(|c| format!("not judged; continue with: {c}"))
                    .unwrap_or_else(|| "not run: the run stopped at a violation".into()),
            },
        ));
    }
    let mut suite = Suite::new(format!("conform {}", r.target), cases);
    suite.seconds = Some(r.elapsed_s);
    render("payhub-verify conform", &[suite])
}

/// The registry's verdicts over conform's exchanges: a failed case per violated property
/// judging the target (its witness in the failure), one passing case for those that hold,
/// one skipped case for those the exchanges cannot judge.
fn registry_cases(g: &crate::conform::registry::Registry, cases: &mut Vec<Case>) {
    use crate::conform::registry::Judges;
    use payhub_properties::verdict::Status;
    let class = "conform.registry";
    let target = || g.properties.iter().filter(|p| p.judges == Judges::Target);
    for p in g.violated() {
        cases.push(Case::new(
            class,
            p.name.to_owned(),
            CaseResult::Failed {
                message: format!("{} ({})", p.name, p.rules.join(", ")),
                detail: p.violation_text(),
            },
        ));
    }
    let held: Vec<&str> = target()
        .filter(|p| matches!(p.status, Status::Holds | Status::Reached))
        .map(|p| p.name)
        .collect();
    if !held.is_empty() {
        cases.push(Case::new(
            class,
            format!(
                "{} properties hold over the wire: {}",
                held.len(),
                held.join(", ")
            ),
            CaseResult::Passed,
        ));
    }
    let not_judged = target().filter(|p| p.status == Status::CannotJudge).count();
    if not_judged > 0 {
        cases.push(Case::new(
            class,
            format!("{not_judged} properties cannot be judged over the wire"),
            CaseResult::Skipped {
                message: "not judged: they need the acquirer's ledger, the platform's store or the merchant's process".into(),
            },
        ));
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
