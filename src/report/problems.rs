//! What a `verify` run failed or could not judge, one line each with the command that
//! shows it: the first thing the report and the summary print.

use crate::verify_cmd::report::{Report, failing};
use payhub_properties::checker::CheckStatus;
use payhub_properties::rules_of;
use serde::Serialize;

/// Something that failed or was not judged, and the command that shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    pub what: String,
    pub reproduce: String,
    /// A failure (exit 1); otherwise not judged (exit 3).
    #[serde(skip)]
    pub failed: bool,
}

impl Report {
    /// What failed or was not judged, one line each with its reproduce command: the
    /// first thing the report and the summary show, and what the exit code is read from.
    pub fn problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        let mut push = |failed: bool, what: String, reproduce: String| {
            out.push(Problem {
                what,
                reproduce,
                failed,
            })
        };
        let again = || self.header.command.clone();
        if let Some(why) = &self.interrupted {
            push(false, format!("not judged (incomplete): {why}"), again());
        }
        let zoo = self.kill_matrix.as_ref().map(|z| &z.matrix);
        if let Some(why) = zoo.and_then(|m| m.incomplete.as_ref()) {
            push(
                false,
                format!("bug zoo: not judged (incomplete): {why}"),
                again(),
            );
        }
        for r in &self.presets {
            // `check` runs the reference platform: a planted bug's preset is reproduced
            // by `verify --mutant`.
            let reproduce = match self.planted {
                Some(m) => format!("payhub-verify verify --mutant {m} --preset {}", r.name),
                None => format!("payhub-verify check --preset {}", r.name),
            };
            for p in failing(r) {
                let how = match p.status {
                    CheckStatus::Violated => "violated",
                    _ => "never reached",
                };
                let cx = p.counterexample.as_ref();
                let detail = cx.map(|c| format!(": {}", c.detail)).unwrap_or_default();
                let rules = p.rules.join(", ");
                let what = format!("preset {}: `{}` [{rules}] {how}{detail}", r.name, p.name);
                push(true, what, reproduce.clone());
            }
            if !r.complete {
                let what = format!(
                    "preset {}: not judged (incomplete): stopped by {} after {} states",
                    r.name, self.limits, r.total_states
                );
                push(false, what, again());
            }
        }
        let sim = &self.simulation;
        if let Some(why) = &sim.incomplete {
            let (seeds, asked) = (sim.seeds, sim.seeds_asked);
            let what = format!(
                "simulation: not judged (incomplete): {why} after {seeds} of {asked} seeds"
            );
            push(false, what, again());
        }
        let rules = |p: &str| rules_of(p).join(", ");
        if let Some(cx) = &sim.counterexample {
            let (seed, property) = (cx.seed, &cx.property);
            let what = format!(
                "simulation seed {seed}: `{property}` [{}] violated: {}",
                rules(property),
                cx.detail
            );
            push(true, what, cx.replay.clone());
        } else if let Some((property, v)) = sim.violations_by_property.iter().next() {
            let what = format!(
                "simulation: {} runs violated a property; first: `{property}` [{}]: {}",
                sim.violations,
                rules(property),
                v.first
            );
            push(true, what, v.replay.clone());
        }
        if sim.liveness_failures > 0 {
            let name = payhub_properties::liveness::NAME;
            let what = format!(
                "simulation: {} runs left a submission unresolved after healing: `{name}` [{}]; first: {}",
                sim.liveness_failures,
                rules(name),
                sim.first_liveness_failure.as_deref().unwrap_or_default()
            );
            let replay = sim.first_liveness_replay.clone();
            push(true, what, replay.unwrap_or_else(again));
        }
        let other = self.simulation_other_readings.as_ref();
        if let Some(other) = other.filter(|o| o.exit_code() == 1) {
            let first = other.counterexample.as_ref().map(|cx| {
                let first = format!("seed {}: `{}`: {}", cx.seed, cx.property, cx.detail);
                (first, cx.replay.clone())
            });
            let liveness = || {
                let first = other.first_liveness_failure.clone();
                first.zip(other.first_liveness_replay.clone())
            };
            let (first, replay) = first.or_else(liveness).unwrap_or_default();
            let what = format!(
                "simulation with the other readings: {} violations, {} left a submission unresolved; first: {first}",
                other.violations, other.liveness_failures
            );
            push(true, what, replay);
        }
        if let Some(v) = &self.chaos.first_violation {
            let n = self.chaos.violations;
            let what = format!("chaos: {n} runs violated a property; first: {v}");
            push(true, what, again());
        }
        for sc in self.scenarios.iter().filter(|x| !x.passed) {
            let what = format!("script {}: {}", sc.name, sc.failures.join("; "));
            push(true, what, format!("payhub-verify run {}", sc.file));
        }
        for m in zoo.map(|m| m.survivors()).unwrap_or_default() {
            let rules = m.rules.join(", ");
            let what = format!("bug zoo: mutant `{}` [{rules}] survived", m.name);
            push(
                true,
                what,
                format!("payhub-verify mutants --show {}", m.name),
            );
        }
        for r in zoo.map(|m| m.reference_failures()).unwrap_or_default() {
            let what = match r.caught {
                true => "caught by a property",
                false => "not judged (incomplete)",
            };
            let what = format!("bug zoo: reference configuration {} {what}", r.name);
            push(r.caught, what, "payhub-verify mutants".to_owned());
        }
        if let Some(edges) = &self.edges {
            for c in edges.checks.iter().filter(|c| !c.passed) {
                let detail = c.detail.as_deref().unwrap_or_default();
                let what = format!(
                    "edges: {} on session {} failed: {detail}",
                    c.check, c.session
                );
                push(true, what, again());
            }
            for d in edges.defects.iter().filter(|d| d.caught_by.is_none()) {
                let what = format!("edge zoo: defect `{}` ({}) survived", d.name, d.edge);
                push(true, what, again());
            }
        }
        if let Some(shortcuts) = self.shortcuts.as_ref().filter(|s| !s.check.passed()) {
            push(true, shortcuts.line(), again());
        }
        out
    }
}
