//! A `verify`, `check` or `simulate` run as the outcome document: a part per preset,
//! sweep, scripts, shortcuts, edges and zoo; an item per property, script or mutant.

use crate::outcome::{Item, ItemResult, Outcome, Part, first_line};
use crate::report::sweep::SweepSummary;
use payhub_properties::checker::{CheckStatus, PresetReport, PropertyReport};
use payhub_properties::{Kind, PROPERTIES};

/// One suite per checked preset, one case per property: holds or reached passes; a
/// violation fails with its counterexample; a *sometimes* never reached fails; a
/// property of an incomplete run is skipped.
pub fn presets(prefix: &str, reports: &[PresetReport]) -> Vec<Part> {
    let result = |p: &PresetReport, q: &PropertyReport| match (&q.status, &q.counterexample) {
        (CheckStatus::Holds | CheckStatus::Reached, _) => ItemResult::Passed,
        (CheckStatus::Violated, Some(cx)) => ItemResult::Failed {
            message: first_line(&cx.detail),
            detail: format!(
                "{}\ncounterexample ({} choices): {}",
                cx.detail,
                cx.tape.len(),
                cx.tape.join(" ; ")
            ),
        },
        (CheckStatus::Violated, None) => ItemResult::failed("violated"),
        (CheckStatus::Unreached, _) => ItemResult::failed(format!(
            "never reached in the complete search of preset {}: the preset cannot show it",
            p.name
        )),
        (CheckStatus::Unknown, _) => {
            ItemResult::not_judged(format!("the search of preset {} was incomplete", p.name))
        }
    };
    let part = |p: &PresetReport| {
        let class = format!("{prefix}.{}", p.name);
        let items = p
            .properties
            .iter()
            .map(|q| Item::new(class.clone(), q.name, result(p, q)).with_rules(&q.rules));
        Part {
            name: format!("{prefix} {}", p.name),
            seconds: Some(p.seconds),
            items: items.collect(),
        }
    };
    reports.iter().map(part).collect()
}

/// The simulation sweep: one case per *always* property (failed with the first
/// violating seed's witness and its replay command), and one for liveness.
pub fn sweep(prefix: &str, s: &SweepSummary) -> Part {
    let incomplete = s.incomplete.as_ref().map(|why| {
        ItemResult::not_judged(format!(
            "the sweep stopped after {} of {} seeds ({why})",
            s.seeds, s.seeds_asked
        ))
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
    let why = report.interrupted.as_deref().unwrap_or("not run");
    let not_run = |part: &str| {
        let item = Item::new(format!("verify.{part}"), part, ItemResult::not_judged(why));
        Part::new(format!("verify {part}"), vec![item])
    };
    let (sim, chaos) = (&report.simulation, &report.chaos);
    let chaos_part = || {
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
        let about = "every always property after every adversarial request";
        Part::new(
            "verify chaos",
            vec![Item::new("verify.chaos", about, result)],
        )
    };
    let scenarios = &report.scenarios;
    let scripts_part = || {
        let name = "verify scenarios and findings scripts";
        scripts(name, "verify.scenarios", scenarios)
    };
    let swept = sim.seeds > 0 || sim.incomplete.is_none();
    let zoo = |z: &super::ZooReport| bug_zoo("verify", &z.matrix);
    // Each part the run reaches, or one not run (the search's shortcuts are optional).
    let rest = [
        (Some("simulation"), swept.then(|| sweep("verify", sim))),
        (Some("chaos"), (chaos.seeds > 0).then(chaos_part)),
        (
            Some("scenarios"),
            (!scenarios.is_empty()).then(scripts_part),
        ),
        (None, report.shortcuts.as_ref().map(shortcuts_suite)),
        (Some("edges"), report.edges.as_ref().map(super::edges::part)),
        (Some("bug zoo"), report.kill_matrix.as_ref().map(zoo)),
    ];
    let mut parts = presets("verify", &report.presets);
    if report.planted.is_none() {
        parts.extend(
            rest.into_iter()
                .filter_map(|(name, part)| part.or_else(|| name.map(not_run))),
        );
    }
    Outcome::new("payhub-verify verify", parts)
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
            ItemResult::failed(format!(
                "the unsound shortcut {name} judged alike: not caught"
            ))
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
            ItemResult::not_judged("the reference run was incomplete")
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
