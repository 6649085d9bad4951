//! What a `verify` run failed or could not judge, one line each with the command that
//! shows it: the first thing the report and the summary print.

use super::*;

/// Something that failed or was not judged, and the command that shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    pub what: String,
    pub reproduce: String,
    /// A failure (exit 1); otherwise not judged (exit 3).
    #[serde(skip)]
    pub failed: bool,
}

impl Problem {
    fn failed(what: String, reproduce: String) -> Problem {
        Problem {
            what,
            reproduce,
            failed: true,
        }
    }

    fn not_judged(what: String, reproduce: String) -> Problem {
        Problem {
            what,
            reproduce,
            failed: false,
        }
    }
}

impl Report {
    /// What failed or was not judged, one line each with its reproduce command: the
    /// first thing the report and the summary show, and what the exit code is read from.
    pub fn problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        let again = || self.header.command.clone();
        if let Some(why) = &self.interrupted {
            out.push(Problem::not_judged(
                format!("not judged (incomplete): {why}"),
                again(),
            ));
        }
        if let Some(why) = self
            .kill_matrix
            .as_ref()
            .and_then(|z| z.matrix.incomplete.as_ref())
        {
            let what = format!("bug zoo: not judged (incomplete): {why}");
            out.push(Problem::not_judged(what, again()));
        }
        for r in &self.presets {
            // `check` runs the reference platform: a planted bug's preset is reproduced
            // by `verify --mutant`.
            let reproduce = match self.planted {
                Some(m) => format!("payhub-verify verify --mutant {m} --preset {}", r.name),
                None => format!("payhub-verify check --preset {}", r.name),
            };
            for p in failing(r) {
                let what = format!(
                    "preset {}: `{}` [{}] {}{}",
                    r.name,
                    p.name,
                    p.rules.join(", "),
                    match p.status {
                        CheckStatus::Violated => "violated",
                        _ => "never reached",
                    },
                    p.counterexample
                        .as_ref()
                        .map(|c| format!(": {}", c.detail))
                        .unwrap_or_default()
                );
                out.push(Problem::failed(what, reproduce.clone()));
            }
            if !r.complete {
                let what = format!(
                    "preset {}: not judged (incomplete): stopped by {} after {} states",
                    r.name, self.limits, r.total_states
                );
                out.push(Problem::not_judged(what, again()));
            }
        }
        let sim = &self.simulation;
        if let Some(why) = &sim.incomplete {
            let what = format!(
                "simulation: not judged (incomplete): {why} after {} of {} seeds",
                sim.seeds, sim.seeds_asked
            );
            out.push(Problem::not_judged(what, again()));
        }
        if let Some(cx) = &sim.counterexample {
            let what = format!(
                "simulation seed {}: `{}` [{}] violated: {}",
                cx.seed,
                cx.property,
                rules_of(&cx.property).join(", "),
                cx.detail
            );
            out.push(Problem::failed(what, cx.replay.clone()));
        } else if let Some((property, v)) = sim.violations_by_property.iter().next() {
            let what = format!(
                "simulation: {} runs violated a property; first: `{property}` [{}]: {}",
                sim.violations,
                rules_of(property).join(", "),
                v.first
            );
            out.push(Problem::failed(what, v.replay.clone()));
        }
        if sim.liveness_failures > 0 {
            let what = format!(
                "simulation: {} runs left a submission unresolved after healing: `{}` [{}]; first: {}",
                sim.liveness_failures,
                payhub_properties::liveness::NAME,
                rules_of(payhub_properties::liveness::NAME).join(", "),
                sim.first_liveness_failure.as_deref().unwrap_or_default()
            );
            let replay = sim.first_liveness_replay.clone();
            out.push(Problem::failed(what, replay.unwrap_or_else(again)));
        }
        if let Some(other) = self
            .simulation_other_readings
            .as_ref()
            .filter(|o| o.exit_code() == 1)
        {
            let first = other
                .counterexample
                .as_ref()
                .map(|cx| {
                    (
                        format!("seed {}: `{}`: {}", cx.seed, cx.property, cx.detail),
                        cx.replay.clone(),
                    )
                })
                .or_else(|| {
                    other
                        .first_liveness_failure
                        .clone()
                        .zip(other.first_liveness_replay.clone())
                });
            let (first, replay) = first.unwrap_or_default();
            let what = format!(
                "simulation with the other readings: {} violations, {} left a submission unresolved; first: {first}",
                other.violations, other.liveness_failures
            );
            out.push(Problem::failed(what, replay));
        }
        if let Some(v) = &self.chaos.first_violation {
            let what = format!(
                "chaos: {} runs violated a property; first: {v}",
                self.chaos.violations
            );
            out.push(Problem::failed(what, again()));
        }
        for sc in self.scenarios.iter().filter(|x| !x.passed) {
            let what = format!("script {}: {}", sc.name, sc.failures.join("; "));
            out.push(Problem::failed(
                what,
                format!("payhub-verify run {}", sc.file),
            ));
        }
        if let Some(zoo) = &self.kill_matrix {
            for m in zoo.matrix.survivors() {
                let what = format!(
                    "bug zoo: mutant `{}` [{}] survived",
                    m.name,
                    m.rules.join(", ")
                );
                out.push(Problem::failed(
                    what,
                    format!("payhub-verify mutants --show {}", m.name),
                ));
            }
            for r in zoo.matrix.reference_failures() {
                let again = "payhub-verify mutants".to_owned();
                out.push(match r.caught {
                    true => Problem::failed(
                        format!(
                            "bug zoo: reference configuration {} caught by a property",
                            r.name
                        ),
                        again,
                    ),
                    false => Problem::not_judged(
                        format!(
                            "bug zoo: reference configuration {} not judged (incomplete)",
                            r.name
                        ),
                        again,
                    ),
                });
            }
        }
        if let Some(edges) = &self.edges {
            for c in edges.checks.iter().filter(|c| !c.passed) {
                let what = format!(
                    "edges: {} on session {} failed: {}",
                    c.check,
                    c.session,
                    c.detail.as_deref().unwrap_or_default()
                );
                out.push(Problem::failed(what, again()));
            }
            for d in edges.defects.iter().filter(|d| d.caught_by.is_none()) {
                let what = format!("edge zoo: defect `{}` ({}) survived", d.name, d.edge);
                out.push(Problem::failed(what, again()));
            }
        }
        if let Some(shortcuts) = self.shortcuts.as_ref().filter(|s| !s.check.passed()) {
            out.push(Problem::failed(shortcuts.line(), again()));
        }
        out
    }
}
