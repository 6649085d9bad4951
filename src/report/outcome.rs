//! A `verify`, `check` or `simulate` run as the outcome document: a part per preset,
//! the simulation sweep, the chaos sweep, the scripts, the search's shortcuts, the edges
//! and the bug zoo; an item per property, script or mutant.

use crate::outcome::{Item, ItemResult, Outcome, Part, first_line};
use crate::report::sweep::SweepSummary;
use payhub_properties::checker::{CheckStatus, PresetReport};
use payhub_properties::{Kind, PROPERTIES};

/// One suite per checked preset, one case per property: holds or reached passes; a
/// violation fails with its counterexample; a *sometimes* never reached fails; a
/// property of an incomplete run is skipped.
pub fn presets(prefix: &str, reports: &[PresetReport]) -> Vec<Part> {
    reports
        .iter()
        .map(|p| {
            let class = format!("{prefix}.{}", p.name);
            let cases = p
                .properties
                .iter()
                .map(|q| {
                    let result = match q.status {
                        CheckStatus::Holds | CheckStatus::Reached => ItemResult::Passed,
                        CheckStatus::Violated => match &q.counterexample {
                            Some(cx) => ItemResult::Failed {
                                message: first_line(&cx.detail),
                                detail: format!(
                                    "{}\ncounterexample ({} choices): {}",
                                    cx.detail,
                                    cx.tape.len(),
                                    cx.tape.join(" ; ")
                                ),
                            },
                            None => ItemResult::Failed {
                                message: "violated".into(),
                                detail: String::new(),
                            },
                        },
                        CheckStatus::Unreached => ItemResult::Failed {
                            message: format!(
                                "never reached in the complete search of preset {}: the preset cannot show it",
                                p.name
                            ),
                            detail: String::new(),
                        },
                        CheckStatus::Unknown => ItemResult::Skipped {
                            message: format!(
                                "not judged: the search of preset {} was incomplete",
                                p.name
                            ),
                        },
                    };
                    Item::new(class.clone(), q.name, result).with_rules(&q.rules)
                })
                .collect();
            Part {
                name: format!("{prefix} {}", p.name),
                seconds: Some(p.seconds),
                items: cases,
            }
        })
        .collect()
}

/// The simulation sweep: one case per *always* property (failed with the first
/// violating seed's witness and its replay command), and one for liveness.
pub fn sweep(prefix: &str, s: &SweepSummary) -> Part {
    let incomplete = s.incomplete.as_ref().map(|why| ItemResult::Skipped {
        message: format!(
            "not judged: the sweep stopped after {} of {} seeds ({why})",
            s.seeds, s.seeds_asked
        ),
    });
    let class = format!("{prefix}.simulation");
    let mut cases: Vec<Item> = PROPERTIES
        .iter()
        .filter(|p| p.over_facts() && p.kind() == Kind::Always)
        .map(|p| {
            let result = match s.violations_by_property.get(p.name) {
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
                    ItemResult::Failed {
                        message: first_line(&v.first),
                        detail: format!(
                            "violated in {} of {} runs; first: {}\nreplay: {}{replay}",
                            v.runs, s.seeds, v.first, v.replay
                        ),
                    }
                }
                None => incomplete.clone().unwrap_or(ItemResult::Passed),
            };
            let rules: Vec<&str> = p.rules.iter().map(|r| r.id()).collect();
            Item::new(class.clone(), p.name, result).with_rules(&rules)
        })
        .collect();
    let liveness = if s.liveness_failures > 0 {
        ItemResult::Failed {
            message: s.first_liveness_failure.clone().unwrap_or_default(),
            detail: format!(
                "{} runs left a submission unresolved 25 h after faults stopped; replay: {}",
                s.liveness_failures,
                s.first_liveness_replay.as_deref().unwrap_or("")
            ),
        }
    } else {
        incomplete.clone().unwrap_or(ItemResult::Passed)
    };
    let mut case = Item::new(
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
    Part::new(format!("{prefix} simulation"), cases)
}

/// A `verify` run: the presets, the simulation sweep, the chaos sweep, every scenario
/// and findings script, and every mutant of the zoo (and reference configuration); a
/// part the run did not reach is one skipped case.
pub fn verify(report: &crate::report::Report) -> Outcome {
    let not_run = |part: &str| {
        let why = report
            .interrupted
            .clone()
            .unwrap_or_else(|| "not run".to_owned());
        Part::new(
            format!("verify {part}"),
            vec![Item::new(
                format!("verify.{part}"),
                part,
                ItemResult::not_judged(why),
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
            let result = match &chaos.first_violation {
                Some(v) => ItemResult::Failed {
                    message: first_line(v),
                    detail: format!(
                        "{} of {} seeds violated; first: {v}",
                        chaos.violations, chaos.seeds
                    ),
                },
                None => ItemResult::Passed,
            };
            suites.push(Part::new(
                "verify chaos",
                vec![Item::new(
                    "verify.chaos",
                    "every always property after every adversarial request",
                    result,
                )],
            ));
        } else {
            suites.push(not_run("chaos"));
        }
        if report.scenarios.is_empty() {
            suites.push(not_run("scenarios"));
        } else {
            suites.push(scripts(
                "verify scenarios and findings scripts",
                "verify.scenarios",
                &report.scenarios,
            ));
        }
        if let Some(shortcuts) = &report.shortcuts {
            suites.push(shortcuts_suite(shortcuts));
        }
        match &report.edges {
            None => suites.push(not_run("edges")),
            Some(e) => suites.push(super::edges::part(e)),
        }
        match &report.kill_matrix {
            None => suites.push(not_run("bug zoo")),
            Some(zoo) => suites.push(bug_zoo("verify", &zoo.matrix)),
        }
    }
    Outcome::new("payhub-verify verify", suites)
}

/// The search's shortcuts: a case per shortcut and preset (judged otherwise fails), and
/// per planted unsound shortcut (uncaught fails).
fn shortcuts_suite(s: &super::Shortcuts) -> Part {
    let class = "verify.search-shortcuts";
    let mut cases: Vec<Item> = s
        .check
        .compared
        .iter()
        .map(|c| {
            let result = match &c.differs {
                None => ItemResult::Passed,
                Some(d) => ItemResult::Failed {
                    message: format!("{} judged otherwise on {}", c.shortcut, c.subject),
                    detail: d.clone(),
                },
            };
            Item::new(class, format!("{} on {}", c.shortcut, c.subject), result)
        })
        .collect();
    cases.extend(s.check.planted_caught.iter().map(|(name, caught)| {
        let result = if *caught {
            ItemResult::Passed
        } else {
            ItemResult::Failed {
                message: format!("the unsound shortcut {name} judged alike: not caught"),
                detail: String::new(),
            }
        };
        Item::new(class, format!("planted unsound shortcut {name}"), result)
    }));
    Part::new("verify search shortcuts", cases)
}

/// The kill matrix: a case per mutant (killed passes, naming the property; a survivor
/// fails) and per reference configuration (caught fails).
pub fn bug_zoo(prefix: &str, m: &payhub_properties::zoo::KillMatrix) -> Part {
    let class = format!("{prefix}.bug-zoo");
    let mut cases: Vec<Item> = m
        .mutants
        .iter()
        .map(|row| mutant(&class, row, m.incomplete.as_deref()))
        .collect();
    cases.extend(m.references.iter().map(|r| {
        let result = if r.caught {
            ItemResult::Failed {
                message: format!(
                    "the reference configuration was caught by {}",
                    r.property.unwrap_or("?")
                ),
                detail: r.detail.clone().unwrap_or_default(),
            }
        } else if !r.complete {
            ItemResult::Skipped {
                message: "not judged: the reference run was incomplete".into(),
            }
        } else {
            ItemResult::Passed
        };
        Item::new(
            class.clone(),
            format!("reference {} ({})", r.name, r.method),
            result,
        )
    }));
    Part {
        name: format!("{prefix} bug zoo"),
        seconds: Some(m.seconds),
        items: cases,
    }
}

/// Scripts run (`verify`'s scenarios and findings, `run`, `scenario`): an item per
/// script, failed with its failures and the command that reproduces it, its title as
/// its output.
pub fn scripts(name: &str, class: &str, results: &[super::ScenarioResult]) -> Part {
    let items = results
        .iter()
        .map(|s| {
            let result = if s.passed {
                ItemResult::Passed
            } else {
                ItemResult::Failed {
                    message: s.failures.first().cloned().unwrap_or_default(),
                    detail: format!(
                        "{}\nreproduce: payhub-verify run {}",
                        s.failures.join("\n"),
                        s.file
                    ),
                }
            };
            let item = Item::new(class, s.name.as_str(), result).with_rules(&s.rules);
            match &s.title {
                Some(t) => item.with_output(t.as_str()),
                None => item,
            }
        })
        .collect();
    Part::new(name, items)
}

/// One mutant of the zoo: killed passes, naming the property and how; a survivor fails,
/// or is not judged when the zoo's run was cut short (`incomplete`: why).
pub fn mutant(
    class: &str,
    row: &payhub_properties::zoo::MutantRow,
    incomplete: Option<&str>,
) -> Item {
    let result = if row.killed {
        ItemResult::Passed
    } else if let Some(why) = incomplete {
        ItemResult::not_judged(why)
    } else {
        ItemResult::Failed {
            message: format!("survived: no property caught {}", row.name),
            detail: format!("{} (breaks {})", row.about, row.rules.join(", ")),
        }
    };
    let mut item = Item::new(class, format!("mutant {}", row.name), result);
    item.seconds = Some(row.seconds);
    match (row.killed, row.property) {
        (true, Some(p)) => item.with_output(format!(
            "killed by {p} ({}){}",
            row.method.as_deref().unwrap_or("?"),
            row.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )),
        _ => item,
    }
}
