//! JUnit XML, as CI systems read it (GitHub, GitLab, Jenkins, cargo-nextest's shape):
//! one `<testsuites>` document, a `<testsuite>` per part of a run, a `<testcase>` per
//! property, scenario, mutant or case. A violation is a `<failure>` whose message is its
//! witness; what was not judged (an incomplete run, a source that lacks the evidence) is
//! `<skipped>` with the reason. Every command's `--format junit` writes through here.

use crate::report::sweep::SweepSummary;
use payhub_properties::checker::{CheckStatus, PresetReport};
use payhub_properties::{Kind, PROPERTIES};

mod sources;
pub(crate) use sources::{check_log, conform, conform_matrix, judge};

/// What one test case found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseResult {
    Passed,
    /// A violation (or a failed scenario, a surviving mutant): `message` is the witness in
    /// one line, `detail` the rest (the counterexample, the command that replays it).
    Failed {
        message: String,
        detail: String,
    },
    /// Not judged: why.
    Skipped {
        message: String,
    },
}

/// One test case: a property, preset, script or mutant. Its name is the same in every
/// run; what the run found (counts, seeds, witnesses) is only in its body.
#[derive(Clone, Debug)]
pub struct Case {
    pub classname: String,
    pub name: String,
    pub seconds: Option<f64>,
    pub outcome: CaseResult,
    /// What the case saw, for a passing case too (`<system-out>`).
    pub output: Option<String>,
    /// The rules the case judges (`<property name="rules">`).
    pub rules: Vec<&'static str>,
}

impl Case {
    pub fn new(classname: impl Into<String>, name: impl Into<String>, outcome: CaseResult) -> Case {
        Case {
            classname: classname.into(),
            name: name.into(),
            seconds: None,
            outcome,
            output: None,
            rules: Vec::new(),
        }
    }

    pub fn with_output(mut self, output: impl Into<String>) -> Case {
        self.output = Some(output.into());
        self
    }

    pub fn with_rules(mut self, rules: &[&'static str]) -> Case {
        self.rules = rules.to_vec();
        self
    }
}

/// One part of a run (a preset, the simulation sweep, the scenarios, the zoo).
#[derive(Clone, Debug)]
pub struct Suite {
    pub name: String,
    pub seconds: Option<f64>,
    pub cases: Vec<Case>,
}

impl Suite {
    pub fn new(name: impl Into<String>, cases: Vec<Case>) -> Suite {
        Suite {
            name: name.into(),
            seconds: None,
            cases,
        }
    }
}

/// The document: `<testsuites name=…>` with every suite, each carrying the contract it
/// was judged against (`contract`, `contract-version`) in its properties.
pub fn render(name: &str, suites: &[Suite]) -> String {
    use payhub_model::Contract;
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    use std::time::Duration;
    let mut report = Report::new(name);
    for suite in suites {
        let mut ts = TestSuite::new(suite.name.as_str());
        ts.add_property(quick_junit::Property::new("contract", Contract::named()));
        ts.add_property(quick_junit::Property::new(
            "contract-version",
            Contract::VERSION,
        ));
        if let Some(s) = suite.seconds {
            ts.set_time(Duration::from_secs_f64(s.max(0.0)));
        }
        for case in &suite.cases {
            let status = match &case.outcome {
                CaseResult::Passed => TestCaseStatus::success(),
                CaseResult::Failed { message, detail } => {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    st.set_type("violated").set_message(message.as_str());
                    if !detail.is_empty() {
                        st.set_description(detail.as_str());
                    }
                    st
                }
                CaseResult::Skipped { message } => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(message.as_str());
                    st
                }
            };
            let mut tc = TestCase::new(case.name.as_str(), status);
            tc.set_classname(case.classname.as_str());
            if let Some(s) = case.seconds {
                tc.set_time(Duration::from_secs_f64(s.max(0.0)));
            }
            if let Some(out) = &case.output {
                tc.set_system_out(out.as_str());
            }
            if !case.rules.is_empty() {
                tc.add_property(quick_junit::Property::new("rules", case.rules.join(", ")));
            }
            ts.add_test_case(tc);
        }
        report.add_test_suite(ts);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- the JUnit document could not be written: {e} -->\n"))
}

/// The first line of a witness, as a failure's message.
pub fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

/// One suite per checked preset, one case per property: holds or reached passes; a
/// violation fails with its counterexample; a *sometimes* never reached fails; a
/// property of an incomplete run is skipped.
pub fn presets(prefix: &str, reports: &[PresetReport]) -> Vec<Suite> {
    reports
        .iter()
        .map(|p| {
            let class = format!("{prefix}.{}", p.name);
            let cases = p
                .properties
                .iter()
                .map(|q| {
                    let outcome = match q.status {
                        CheckStatus::Holds | CheckStatus::Reached => CaseResult::Passed,
                        CheckStatus::Violated => match &q.counterexample {
                            Some(cx) => CaseResult::Failed {
                                message: first_line(&cx.detail),
                                detail: format!(
                                    "{}\ncounterexample ({} choices): {}",
                                    cx.detail,
                                    cx.tape.len(),
                                    cx.tape.join(" ; ")
                                ),
                            },
                            None => CaseResult::Failed {
                                message: "violated".into(),
                                detail: String::new(),
                            },
                        },
                        CheckStatus::Unreached => CaseResult::Failed {
                            message: format!(
                                "never reached in the complete search of preset {}: the preset cannot show it",
                                p.name
                            ),
                            detail: String::new(),
                        },
                        CheckStatus::Unknown => CaseResult::Skipped {
                            message: format!(
                                "not judged: the search of preset {} was incomplete",
                                p.name
                            ),
                        },
                    };
                    Case::new(class.clone(), q.name, outcome).with_rules(&q.rules)
                })
                .collect();
            Suite {
                name: format!("{prefix} {}", p.name),
                seconds: Some(p.seconds),
                cases,
            }
        })
        .collect()
}

/// The simulation sweep: one case per *always* property (failed with the first
/// violating seed's witness and its replay command), and one for liveness.
pub fn sweep(prefix: &str, s: &SweepSummary) -> Suite {
    let incomplete = s.incomplete.as_ref().map(|why| CaseResult::Skipped {
        message: format!(
            "not judged: the sweep stopped after {} of {} seeds ({why})",
            s.seeds, s.seeds_asked
        ),
    });
    let class = format!("{prefix}.simulation");
    let mut cases: Vec<Case> = PROPERTIES
        .iter()
        .filter(|p| p.over_facts() && p.kind() == Kind::Always)
        .map(|p| {
            let outcome = match s.violations_by_property.get(p.name) {
                Some(v) => {
                    let replay = s
                        .counterexample
                        .as_ref()
                        .filter(|cx| cx.property == p.name)
                        .map(|cx| {
                            format!(
                                "\nshrunk to {} choices; replay: {}",
                                cx.tape.len(),
                                cx.replay
                            )
                        })
                        .unwrap_or_default();
                    CaseResult::Failed {
                        message: first_line(&v.first),
                        detail: format!(
                            "violated in {} of {} runs; first: {}\nreplay: {}{replay}",
                            v.runs, s.seeds, v.first, v.replay
                        ),
                    }
                }
                None => incomplete.clone().unwrap_or(CaseResult::Passed),
            };
            let rules: Vec<&str> = p.rules.iter().map(|r| r.id()).collect();
            Case::new(class.clone(), p.name, outcome).with_rules(&rules)
        })
        .collect();
    let liveness = if s.liveness_failures > 0 {
        CaseResult::Failed {
            message: s.first_liveness_failure.clone().unwrap_or_default(),
            detail: format!(
                "{} runs left a submission unresolved 25 h after faults stopped; replay: {}",
                s.liveness_failures,
                s.first_liveness_replay.as_deref().unwrap_or("")
            ),
        }
    } else {
        incomplete.clone().unwrap_or(CaseResult::Passed)
    };
    let mut case = Case::new(
        class.clone(),
        "eventually:submissions-resolve-within-24h",
        liveness,
    );
    if !s.gaps_reached.is_empty() {
        case = case.with_output(
            s.gaps_reached
                .iter()
                .map(|(id, g)| {
                    format!(
                        "contract finding {id}: reached in {} runs, as assumed (not a failure); first: {}; replay: {}",
                        g.runs, g.first, g.replay
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    cases.push(case);
    Suite::new(format!("{prefix} simulation"), cases)
}

/// A `verify` run: the presets, the simulation sweep, the chaos sweep, every scenario
/// and findings script, and every mutant of the zoo (and reference configuration); a
/// part the run did not reach is one skipped case.
pub fn verify(report: &crate::report::Report) -> String {
    let not_run = |part: &str| {
        let why = report
            .interrupted
            .clone()
            .unwrap_or_else(|| "not run".to_owned());
        Suite::new(
            format!("verify {part}"),
            vec![Case::new(
                format!("verify.{part}"),
                part,
                CaseResult::Skipped {
                    message: format!("not judged: {why}"),
                },
            )],
        )
    };
    let mut suites = presets("verify", &report.presets);
    let ran_rest = report.planted.is_none();
    if ran_rest {
        if report.simulation.seeds > 0 || report.simulation.incomplete.is_none() {
            suites.push(sweep("verify", &report.simulation));
        } else {
            suites.push(not_run("simulation"));
        }
        let chaos = &report.chaos;
        if chaos.seeds > 0 {
            let outcome = match &chaos.first_violation {
                Some(v) => CaseResult::Failed {
                    message: first_line(v),
                    detail: format!(
                        "{} of {} seeds violated; first: {v}",
                        chaos.violations, chaos.seeds
                    ),
                },
                None => CaseResult::Passed,
            };
            suites.push(Suite::new(
                "verify chaos",
                vec![Case::new(
                    "verify.chaos",
                    "every always property after every adversarial request",
                    outcome,
                )],
            ));
        } else {
            suites.push(not_run("chaos"));
        }
        if report.scenarios.is_empty() {
            suites.push(not_run("scenarios"));
        } else {
            let cases = report
                .scenarios
                .iter()
                .map(|s| {
                    let outcome = if s.passed {
                        CaseResult::Passed
                    } else {
                        CaseResult::Failed {
                            message: s.failures.first().cloned().unwrap_or_default(),
                            detail: format!(
                                "{}\nreproduce: payhub-verify run {}",
                                s.failures.join("\n"),
                                s.file
                            ),
                        }
                    };
                    let case = Case::new("verify.scenarios", s.name.as_str(), outcome)
                        .with_rules(&s.rules);
                    match &s.title {
                        Some(t) => case.with_output(t.as_str()),
                        None => case,
                    }
                })
                .collect();
            suites.push(Suite::new("verify scenarios and findings scripts", cases));
        }
        if let Some(shortcuts) = &report.shortcuts {
            suites.push(shortcuts_suite(shortcuts));
        }
        match &report.edges {
            None => suites.push(not_run("edges")),
            Some(e) => suites.push(super::edges::junit(e)),
        }
        match &report.kill_matrix {
            None => suites.push(not_run("bug zoo")),
            Some(zoo) => suites.push(bug_zoo("verify", &zoo.matrix)),
        }
    }
    render("payhub-verify verify", &suites)
}

/// The search's shortcuts: a case per shortcut and preset (judged otherwise fails), and
/// per planted unsound shortcut (uncaught fails).
fn shortcuts_suite(s: &super::Shortcuts) -> Suite {
    let class = "verify.search-shortcuts";
    let mut cases: Vec<Case> = s
        .check
        .compared
        .iter()
        .map(|c| {
            let outcome = match &c.differs {
                None => CaseResult::Passed,
                Some(d) => CaseResult::Failed {
                    message: format!("{} judged otherwise on {}", c.shortcut, c.subject),
                    detail: d.clone(),
                },
            };
            Case::new(class, format!("{} on {}", c.shortcut, c.subject), outcome)
        })
        .collect();
    cases.extend(s.check.planted_caught.iter().map(|(name, caught)| {
        let outcome = if *caught {
            CaseResult::Passed
        } else {
            CaseResult::Failed {
                message: format!("the unsound shortcut {name} judged alike: not caught"),
                detail: String::new(),
            }
        };
        Case::new(class, format!("planted unsound shortcut {name}"), outcome)
    }));
    Suite::new("verify search shortcuts", cases)
}

/// The kill matrix: a case per mutant (killed passes, naming the property; a survivor
/// fails) and per reference configuration (caught fails).
pub fn bug_zoo(prefix: &str, m: &payhub_properties::zoo::KillMatrix) -> Suite {
    let class = format!("{prefix}.bug-zoo");
    let mut cases: Vec<Case> = m
        .mutants
        .iter()
        .map(|row| {
            let outcome = if row.killed {
                CaseResult::Passed
            } else if let Some(why) = &m.incomplete {
                CaseResult::Skipped {
                    message: format!("not judged: {why}"),
                }
            } else {
                CaseResult::Failed {
                    message: format!("survived: no property caught {}", row.name),
                    detail: format!("{} (breaks {})", row.about, row.rules.join(", ")),
                }
            };
            let mut case = Case::new(class.clone(), format!("mutant {}", row.name), outcome);
            case.seconds = Some(row.seconds);
            if let (true, Some(p)) = (row.killed, row.property) {
                case = case.with_output(format!(
                    "killed by {p} ({}){}",
                    row.method.as_deref().unwrap_or("?"),
                    row.detail
                        .as_deref()
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default()
                ));
            }
            case
        })
        .collect();
    cases.extend(m.references.iter().map(|r| {
        let outcome = if r.caught {
            CaseResult::Failed {
                message: format!(
                    "the reference configuration was caught by {}",
                    r.property.unwrap_or("?")
                ),
                detail: r.detail.clone().unwrap_or_default(),
            }
        } else if !r.complete {
            CaseResult::Skipped {
                message: "not judged: the reference run was incomplete".into(),
            }
        } else {
            CaseResult::Passed
        };
        Case::new(
            class.clone(),
            format!("reference {} ({})", r.name, r.method),
            outcome,
        )
    }));
    Suite {
        name: format!("{prefix} bug zoo"),
        seconds: Some(m.seconds),
        cases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_markup_keep_the_document_well_formed() {
        let suites = vec![Suite::new(
            "s",
            vec![Case::new(
                "c",
                "a<b & \"c\"",
                CaseResult::Failed {
                    message: "\u{1}x <y>".into(),
                    detail: "d\u{7}".into(),
                },
            )],
        )];
        let x = render("t", &suites);
        assert!(x.contains("a&lt;b &amp; &quot;c&quot;"), "{x}");
        assert!(!x.contains('\u{1}') && !x.contains('\u{7}'), "{x}");
    }

    #[test]
    fn counts_add_up_over_suites() {
        let suites = vec![Suite::new(
            "s",
            vec![
                Case::new("c", "a", CaseResult::Passed),
                Case::new(
                    "c",
                    "b",
                    CaseResult::Failed {
                        message: "m".into(),
                        detail: "d".into(),
                    },
                ),
                Case::new(
                    "c",
                    "c",
                    CaseResult::Skipped {
                        message: "why".into(),
                    },
                ),
            ],
        )];
        let x = render("t", &suites);
        assert!(x.contains("tests=\"3\""), "{x}");
        assert!(x.contains("failures=\"1\""), "{x}");
        assert!(x.contains("skipped=\"1\""), "{x}");
        assert!(x.contains("message=\"m\""), "{x}");
        assert!(x.contains("type=\"violated\""), "{x}");
        assert!(x.contains("<skipped message=\"why\""), "{x}");
        assert!(
            x.contains(&format!("value=\"{}\"", payhub_model::Contract::VERSION)),
            "{x}"
        );
    }
}
