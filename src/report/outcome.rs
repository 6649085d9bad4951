//! A `verify`, `check` or `simulate` run as the outcome document: a part per preset,
//! sweep, scripts, shortcuts, edges and zoo; an item per property, script or mutant.

use crate::edges::EdgeReport;
use crate::outcome::{Item, ItemResult, Outcome, Part, first_line};
use crate::simulate_cmd::SweepSummary;
use crate::verify_cmd::report::{Report, ScenarioResult, Shortcuts, ZooReport};
use payhub_properties::checker::{CheckStatus, PresetReport, PropertyReport};
use payhub_properties::{Kind, PROPERTIES};

/// One suite per checked preset, one case per property: holds or reached passes; a
/// violation fails with its counterexample; a *sometimes* never reached fails; a
/// property of an incomplete run is skipped.
pub fn presets(prefix: &str, reports: &[PresetReport]) -> Vec<Part> {
    let result = |p: &PresetReport, q: &PropertyReport| match (&q.status, &q.counterexample) {
        (CheckStatus::Holds | CheckStatus::Reached, _) => ItemResult::Passed,
        (CheckStatus::Violated, Some(cx)) => ItemResult::fail(
            first_line(&cx.detail),
            format!(
                "{}\ncounterexample ({} choices): {}",
                cx.detail,
                cx.tape.len(),
                cx.tape.join(" ; ")
            ),
        ),
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
        let items = p.properties.iter();
        let items = items.map(|q| Item::new(&class, q.name, result(p, q)).with_rules(&q.rules));
        let part = Part::new(format!("{prefix} {}", p.name), items.collect());
        part.timed(p.seconds)
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
    let passed = || incomplete.clone().unwrap_or(ItemResult::Passed);
    let class = format!("{prefix}.simulation");
    let always = PROPERTIES.iter();
    let always = always.filter(|p| p.over_facts() && p.kind() == Kind::Always);
    let mut cases: Vec<Item> = always
        .map(|p| {
            let result = match s.violations_by_property.get(p.name) {
                Some(v) => {
                    let cx = s.counterexample.as_ref().filter(|cx| cx.property == p.name);
                    let replay = cx.map(|cx| {
                        let n = cx.tape.len();
                        format!("\nshrunk to {n} choices; replay: {}", cx.replay)
                    });
                    let (runs, seeds, first) = (v.runs, s.seeds, &v.first);
                    ItemResult::fail(
                        first_line(first),
                        format!(
                            "violated in {runs} of {seeds} runs; first: {first}\nreplay: {}{}",
                            v.replay,
                            replay.unwrap_or_default()
                        ),
                    )
                }
                None => passed(),
            };
            let rules: Vec<&str> = p.rules.iter().map(|r| r.id()).collect();
            Item::new(&class, p.name, result).with_rules(&rules)
        })
        .collect();
    let liveness = match s.liveness_failures {
        0 => passed(),
        n => ItemResult::fail(
            s.first_liveness_failure.clone().unwrap_or_default(),
            format!(
                "{n} runs left a submission unresolved 25 h after faults stopped; replay: {}",
                s.first_liveness_replay.as_deref().unwrap_or("")
            ),
        ),
    };
    let gaps = s.gaps_reached.iter().map(|(id, g)| {
        format!(
            "contract finding {id}: reached in {} runs, as assumed (not a failure); first: {}; replay: {}",
            g.runs, g.first, g.replay
        )
    });
    let gaps: Vec<String> = gaps.collect();
    let case = Item::new(
        &class,
        "eventually:submissions-resolve-within-24h",
        liveness,
    );
    cases.push(match gaps.is_empty() {
        true => case,
        false => case.with_output(gaps.join("\n")),
    });
    Part::new(format!("{prefix} simulation"), cases)
}

/// A `verify` run: the presets, the simulation sweep, the chaos sweep, every scenario
/// and findings script, and every mutant of the zoo (and reference configuration); a
/// part the run did not reach is one skipped case.
pub fn verify(report: &Report) -> Outcome {
    let why = report.interrupted.as_deref().unwrap_or("not run");
    let not_run = |part: &str| {
        let item = Item::new(format!("verify.{part}"), part, ItemResult::not_judged(why));
        Part::new(format!("verify {part}"), vec![item])
    };
    let (sim, chaos) = (&report.simulation, &report.chaos);
    let chaos_part = || {
        let result = match &chaos.first_violation {
            Some(v) => ItemResult::fail(
                first_line(v),
                format!(
                    "{} of {} seeds violated; first: {v}",
                    chaos.violations, chaos.seeds
                ),
            ),
            None => ItemResult::Passed,
        };
        let about = "every always property after every adversarial request";
        let item = Item::new("verify.chaos", about, result);
        Part::new("verify chaos", vec![item])
    };
    let scenarios = &report.scenarios;
    let scripts_part = || {
        let name = "verify scenarios and findings scripts";
        scripts(name, "verify.scenarios", scenarios)
    };
    let swept = sim.seeds > 0 || sim.incomplete.is_none();
    let zoo = |z: &ZooReport| bug_zoo("verify", &z.matrix);
    // Each part the run reaches, or one not run (the search's shortcuts are optional).
    let rest = [
        (Some("simulation"), swept.then(|| sweep("verify", sim))),
        (Some("chaos"), (chaos.seeds > 0).then(chaos_part)),
        (
            Some("scenarios"),
            (!scenarios.is_empty()).then(scripts_part),
        ),
        (None, report.shortcuts.as_ref().map(shortcuts_suite)),
        (Some("edges"), report.edges.as_ref().map(edges)),
        (Some("bug zoo"), report.kill_matrix.as_ref().map(zoo)),
    ];
    let mut parts = presets("verify", &report.presets);
    if report.planted.is_none() {
        let rest = rest.into_iter();
        parts.extend(rest.filter_map(|(name, part)| part.or_else(|| name.map(not_run))));
    }
    Outcome::new("payhub-verify verify", parts)
}

/// The search's shortcuts: a case per shortcut and preset (judged otherwise fails), and
/// per planted unsound shortcut (uncaught fails).
fn shortcuts_suite(s: &Shortcuts) -> Part {
    let class = "verify.search-shortcuts";
    let compared = s.check.compared.iter().map(|c| {
        let result = match &c.differs {
            None => ItemResult::Passed,
            Some(d) => ItemResult::fail(
                format!("{} judged otherwise on {}", c.shortcut, c.subject),
                d.clone(),
            ),
        };
        Item::new(class, format!("{} on {}", c.shortcut, c.subject), result)
    });
    let planted = s.check.planted_caught.iter().map(|(name, caught)| {
        let result = match caught {
            true => ItemResult::Passed,
            false => ItemResult::failed(format!(
                "the unsound shortcut {name} judged alike: not caught"
            )),
        };
        Item::new(class, format!("planted unsound shortcut {name}"), result)
    });
    Part::new("verify search shortcuts", compared.chain(planted).collect())
}

/// The kill matrix: a case per mutant (killed passes, naming the property; a survivor
/// fails) and per reference configuration (caught fails).
pub fn bug_zoo(prefix: &str, m: &payhub_properties::zoo::KillMatrix) -> Part {
    let class = format!("{prefix}.bug-zoo");
    let mutants = m.mutants.iter();
    let mutants = mutants.map(|row| mutant(&class, row, m.incomplete.as_deref()));
    let references = m.references.iter().map(|r| {
        let result = if r.caught {
            ItemResult::fail(
                format!(
                    "the reference configuration was caught by {}",
                    r.property.unwrap_or("?")
                ),
                r.detail.clone().unwrap_or_default(),
            )
        } else if !r.complete {
            ItemResult::not_judged("the reference run was incomplete")
        } else {
            ItemResult::Passed
        };
        let name = format!("reference {} ({})", r.name, r.method);
        Item::new(&class, name, result)
    });
    let items = mutants.chain(references).collect();
    Part::new(format!("{prefix} bug zoo"), items).timed(m.seconds)
}

/// Scripts run (`verify`'s scenarios and findings, `run`, `scenario`): an item per
/// script, failed with its failures and the command that reproduces it, its title as
/// its output.
pub fn scripts(name: &str, class: &str, results: &[ScenarioResult]) -> Part {
    let items = results.iter().map(|s| {
        let result = match s.passed {
            true => ItemResult::Passed,
            false => ItemResult::fail(
                s.failures.first().cloned().unwrap_or_default(),
                format!(
                    "{}\nreproduce: payhub-verify run {}",
                    s.failures.join("\n"),
                    s.file
                ),
            ),
        };
        let item = Item::new(class, s.name.as_str(), result).with_rules(&s.rules);
        match &s.title {
            Some(t) => item.with_output(t.as_str()),
            None => item,
        }
    });
    Part::new(name, items.collect())
}

/// One mutant of the zoo: killed passes, naming the property and how; a survivor fails,
/// or is not judged when the zoo's run was cut short (`incomplete`: why).
pub fn mutant(
    class: &str,
    row: &payhub_properties::zoo::MutantRow,
    incomplete: Option<&str>,
) -> Item {
    let result = match (row.killed, incomplete) {
        (true, _) => ItemResult::Passed,
        (false, Some(why)) => ItemResult::not_judged(why),
        (false, None) => ItemResult::fail(
            format!("survived: no property caught {}", row.name),
            format!("{} (breaks {})", row.about, row.rules.join(", ")),
        ),
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

/// The edges: a case per check and session, and one per planted defect of the edge zoo
/// (caught passes, naming the check; missed fails).
fn edges(e: &EdgeReport) -> Part {
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
