//! What a `verify` run failed or could not judge, one line each with the command that
//! shows it: the first thing the report and the summary print.

use super::*;

/// Something that failed or was not judged, and the command that shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    pub what: String,
    pub reproduce: String,
}

impl Report {
    /// What failed or was not judged, one line each with its reproduce command: the
    /// first thing the report and the summary show.
    pub fn problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        if let Some(why) = &self.interrupted {
            out.push(Problem {
                what: format!("not judged (incomplete): {why}"),
                reproduce: self.header.command.clone(),
            });
        }
        if let Some(why) = self
            .kill_matrix
            .as_ref()
            .and_then(|z| z.matrix.incomplete.as_ref())
        {
            out.push(Problem {
                what: format!("bug zoo: not judged (incomplete): {why}"),
                reproduce: self.header.command.clone(),
            });
        }
        for r in &self.presets {
            for p in &r.properties {
                let failed = p.status == CheckStatus::Violated
                    || (r.complete && p.status == CheckStatus::Unreached);
                if failed {
                    out.push(Problem {
                        what: format!(
                            "preset {}: `{}` [{}] {}{}",
                            r.name,
                            p.name,
                            p.rules.join(", "),
                            if p.status == CheckStatus::Violated {
                                "violated"
                            } else {
                                "never reached"
                            },
                            p.counterexample
                                .as_ref()
                                .map(|c| format!(": {}", c.detail))
                                .unwrap_or_default()
                        ),
                        // `check` runs the reference platform: a planted bug's preset
                        // is reproduced by `verify --mutant`.
                        reproduce: match self.planted {
                            Some(m) => {
                                format!("payhub-verify verify --mutant {m} --preset {}", r.name)
                            }
                            None => format!("payhub-verify check --preset {}", r.name),
                        },
                    });
                }
            }
            if !r.complete {
                out.push(Problem {
                    what: format!(
                        "preset {}: not judged (incomplete): stopped by {} after {} states",
                        r.name, self.limits, r.total_states
                    ),
                    reproduce: self.header.command.clone(),
                });
            }
        }
        if let Some(why) = &self.simulation.incomplete {
            out.push(Problem {
                what: format!(
                    "simulation: not judged (incomplete): {why} after {} of {} seeds",
                    self.simulation.seeds, self.simulation.seeds_asked
                ),
                reproduce: self.header.command.clone(),
            });
        }
        if let Some(cx) = &self.simulation.counterexample {
            out.push(Problem {
                what: format!(
                    "simulation seed {}: `{}` [{}] violated: {}",
                    cx.seed,
                    cx.property,
                    rules_of(&cx.property).join(", "),
                    cx.detail
                ),
                reproduce: cx.replay.clone(),
            });
        }
        if let (Some(first), Some(replay)) = (
            &self.simulation.first_liveness_failure,
            &self.simulation.first_liveness_replay,
        ) {
            out.push(Problem {
                what: format!(
                    "simulation: {} runs left a submission unresolved after healing: `{}` [{}]; first: {first}",
                    self.simulation.liveness_failures,
                    payhub_properties::liveness::NAME,
                    rules_of(payhub_properties::liveness::NAME).join(", ")
                ),
                reproduce: replay.clone(),
            });
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
            out.push(Problem {
                what: format!(
                    "simulation with the other readings: {} violations, {} left a submission unresolved; first: {first}",
                    other.violations, other.liveness_failures
                ),
                reproduce: replay,
            });
        }
        if let Some(v) = &self.chaos.first_violation {
            out.push(Problem {
                what: format!(
                    "chaos: {} runs violated a property; first: {v}",
                    self.chaos.violations
                ),
                reproduce: self.header.command.clone(),
            });
        }
        for sc in self.scenarios.iter().filter(|x| !x.passed) {
            out.push(Problem {
                what: format!("script {}: {}", sc.name, sc.failures.join("; ")),
                reproduce: format!("payhub-verify run {}", sc.file),
            });
        }
        if let Some(zoo) = &self.kill_matrix {
            for m in zoo.matrix.survivors() {
                out.push(Problem {
                    what: format!(
                        "bug zoo: mutant `{}` [{}] survived",
                        m.name,
                        m.rules.join(", ")
                    ),
                    reproduce: format!("payhub-verify mutants --show {}", m.name),
                });
            }
            for r in zoo.matrix.reference_failures() {
                out.push(Problem {
                    what: format!(
                        "bug zoo: reference configuration {} {}",
                        r.name,
                        if r.caught {
                            "caught by a property"
                        } else {
                            "not judged (incomplete)"
                        }
                    ),
                    reproduce: "payhub-verify mutants".to_owned(),
                });
            }
        }
        if let Some(edges) = &self.edges {
            for c in edges.checks.iter().filter(|c| !c.passed) {
                out.push(Problem {
                    what: format!(
                        "edges: {} on session {} failed: {}",
                        c.check,
                        c.session,
                        c.detail.as_deref().unwrap_or_default()
                    ),
                    reproduce: self.header.command.clone(),
                });
            }
            for d in edges.defects.iter().filter(|d| d.caught_by.is_none()) {
                out.push(Problem {
                    what: format!("edge zoo: defect `{}` ({}) survived", d.name, d.edge),
                    reproduce: self.header.command.clone(),
                });
            }
        }
        if let Some(shortcuts) = self.shortcuts.as_ref().filter(|s| s.failed()) {
            out.push(Problem {
                what: shortcuts.line(),
                reproduce: self.header.command.clone(),
            });
        }
        out
    }
}
