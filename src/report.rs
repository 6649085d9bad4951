//! The report of a `verify` run: a Markdown page any code host renders, and the same
//! content as JSON for CI tooling.

use crate::simulate_cmd::SweepSummary;
use payhub_model::{Assumption, Enforcer, Rule};
use payhub_properties::checker::{PresetReport, Status};
use payhub_properties::zoo::KillMatrix;
use payhub_properties::{AlwaysCheck, PROPERTIES};
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::script::Report as ScriptReport;
use payhub_sim::worlds;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// One scenario or finding script, run.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioResult {
    pub name: String,
    pub title: Option<String>,
    pub passed: bool,
    pub failures: Vec<String>,
    pub assumptions: Vec<&'static str>,
    pub rules: Vec<&'static str>,
    pub text: String,
    pub mermaid: String,
}

impl ScenarioResult {
    pub fn from_report(path: &Path, report: &ScriptReport) -> ScenarioResult {
        let rules: BTreeSet<Rule> = report.trace.events.iter().filter_map(|e| e.rule).collect();
        ScenarioResult {
            name: path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("?")
                .to_owned(),
            title: report.title.clone(),
            passed: report.passed(),
            failures: report.failures(),
            assumptions: report.assumptions.iter().map(|a| a.id()).collect(),
            rules: rules.into_iter().map(|r| r.id()).collect(),
            text: report.to_text(),
            mermaid: report.trace.to_mermaid(),
        }
    }

    fn is_finding(&self) -> bool {
        self.name.starts_with('F')
    }
}

/// The chaos sweep: adversarial raw requests against the reference platform.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ChaosSummary {
    pub seeds: u64,
    pub steps: u64,
    pub violations: u64,
    pub first_violation: Option<String>,
}

/// Runs the chaos world over `seeds` seeds, checking every always property after every step.
pub fn chaos_sweep(seeds: u64, threads: usize) -> ChaosSummary {
    let config = worlds::chaos();
    let threads = threads.max(1) as u64;
    let per = seeds.div_ceil(threads).max(1);
    let parts: Vec<(u64, u64, Option<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let config = &config;
                scope.spawn(move || {
                    let (mut steps, mut violations, mut first) = (0u64, 0u64, None);
                    let mut check = AlwaysCheck { config };
                    for seed in (t * per)..((t + 1) * per).min(seeds) {
                        let profile = FaultProfile::for_seed(seed);
                        let (_, outcome) =
                            driver::run_seed(config, seed, &profile, 200, &mut check, None);
                        steps += outcome.steps as u64;
                        if let Some(v) = outcome.violation {
                            violations += 1;
                            first.get_or_insert(format!(
                                "seed {seed}: {}: {}",
                                v.property, v.detail
                            ));
                        }
                    }
                    (steps, violations, first)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("chaos worker"))
            .collect()
    });
    let mut summary = ChaosSummary {
        seeds,
        ..ChaosSummary::default()
    };
    for (steps, violations, first) in parts {
        summary.steps += steps;
        summary.violations += violations;
        if summary.first_violation.is_none() {
            summary.first_violation = first;
        }
    }
    summary
}

/// A rule, who checks it, and where it was exercised.
#[derive(Clone, Debug, Serialize)]
pub struct CoverageRow {
    pub id: &'static str,
    pub enforcer: Enforcer,
    pub text: &'static str,
    pub properties: Vec<&'static str>,
    pub presets: Vec<&'static str>,
    pub scenarios: Vec<String>,
    /// Why no property checks it, if none does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// Where the contract is silent or ambiguous, and what the harness assumed.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub id: &'static str,
    pub gap: payhub_model::Gap,
    pub contract: &'static str,
    pub assumed: &'static str,
    pub parameter: Option<&'static str>,
    /// Scripts whose outcome depends on it.
    pub scripts: Vec<String>,
    /// Runs of the simulation sweep that ended in the situation it leaves open (a
    /// submission unresolved after healing, judged a gap of the contract, not a failure).
    pub simulation_runs: u64,
}

/// Why a rule is checked by tests rather than by a world property.
pub fn coverage_reason(rule: Rule) -> Option<&'static str> {
    if !PROPERTIES.iter().any(|p| p.rules.contains(&rule)) {
        Some(match rule.enforcer() {
            Enforcer::Wording => {
                "wording shown to a payer or operator: documented, not machine-checked"
            }
            Enforcer::Client => {
                "a client obligation on timing or form: checked by the client model's unit tests named after it, and exercised by the simulation sweeps"
            }
            Enforcer::Platform => {
                "a response shape or status: checked by the platform model's unit tests named after it and by the scenario scripts"
            }
        })
    } else {
        None
    }
}

/// The coverage table: every rule with the properties that check it, the presets and
/// scenarios that exercised it.
pub fn coverage(presets: &[PresetReport], scenarios: &[ScenarioResult]) -> Vec<CoverageRow> {
    Rule::ALL
        .iter()
        .map(|&rule| CoverageRow {
            id: rule.id(),
            enforcer: rule.enforcer(),
            text: rule.text(),
            properties: PROPERTIES
                .iter()
                .filter(|p| p.rules.contains(&rule))
                .map(|p| p.name)
                .collect(),
            presets: presets
                .iter()
                .filter(|p| p.rules_exercised.contains(&rule.id()))
                .map(|p| p.name)
                .collect(),
            scenarios: scenarios
                .iter()
                .filter(|s| s.rules.contains(&rule.id()))
                .map(|s| s.name.clone())
                .collect(),
            reason: coverage_reason(rule),
        })
        .collect()
}

/// Everything a `verify` run found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub verdict: &'static str,
    pub seconds: f64,
    pub presets: Vec<PresetReport>,
    pub simulation: SweepSummary,
    pub chaos: ChaosSummary,
    pub scenarios: Vec<ScenarioResult>,
    pub coverage: Vec<CoverageRow>,
    pub findings: Vec<Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_matrix: Option<ZooReport>,
}

/// The bug zoo's part of the report: the kill matrix, and one killed mutant's
/// counterexample as a diagram.
#[derive(Clone, Debug, Serialize)]
pub struct ZooReport {
    #[serde(flatten)]
    pub matrix: KillMatrix,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Example>,
}

/// A killed mutant's counterexample as a Mermaid sequence diagram.
#[derive(Clone, Debug, Serialize)]
pub struct Example {
    pub name: &'static str,
    pub mermaid: String,
}

impl Report {
    pub fn new(
        presets: Vec<PresetReport>,
        simulation: SweepSummary,
        chaos: ChaosSummary,
        scenarios: Vec<ScenarioResult>,
        kill_matrix: Option<ZooReport>,
        seconds: f64,
    ) -> Report {
        let coverage = coverage(&presets, &scenarios);
        let findings = Assumption::ALL
            .iter()
            .map(|a| Finding {
                id: a.id(),
                gap: a.gap(),
                contract: a.contract(),
                assumed: a.taken(),
                parameter: a.parameter(),
                scripts: scenarios
                    .iter()
                    .filter(|s| s.assumptions.contains(&a.id()))
                    .map(|s| s.name.clone())
                    .collect(),
                simulation_runs: simulation.gaps_reached.get(a.id()).map_or(0, |g| g.runs),
            })
            .collect();
        let mut report = Report {
            verdict: "",
            seconds,
            presets,
            simulation,
            chaos,
            scenarios,
            coverage,
            findings,
            kill_matrix,
        };
        report.verdict = match report.exit_code_value() {
            0 => "all hold",
            1 => "FAILED",
            _ => "INCOMPLETE",
        };
        report
    }

    fn zoo_failed(&self) -> bool {
        self.kill_matrix
            .as_ref()
            .is_some_and(|zoo| !zoo.matrix.survivors().is_empty() || zoo.matrix.reference_caught())
    }

    fn exit_code_value(&self) -> u8 {
        let preset_failed = self.presets.iter().any(|r| {
            r.properties.iter().any(|p| {
                p.status == Status::Violated || (r.complete && p.status == Status::Unreached)
            })
        });
        let failed = preset_failed
            || self.simulation.violations > 0
            || self.simulation.liveness_failures > 0
            || self.chaos.violations > 0
            || self.scenarios.iter().any(|s| !s.passed)
            || self.zoo_failed();
        if failed {
            1
        } else if self.presets.iter().any(|r| !r.complete) {
            3
        } else {
            0
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.exit_code_value())
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The summary a reviewer reads first.
    pub fn summary_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "payhub-verify: {} ({:.1}s)", self.verdict, self.seconds);
        let _ = writeln!(s, "exhaustive presets:");
        for r in &self.presets {
            let bad: Vec<&str> = r
                .properties
                .iter()
                .filter(|p| !matches!(p.status, Status::Holds | Status::Reached))
                .map(|p| p.name)
                .collect();
            let _ = writeln!(
                s,
                "    {:<24} {:<10} {:>9} states {:>7.2}s  {}",
                r.name,
                if r.complete { "complete" } else { "INCOMPLETE" },
                r.unique_states,
                r.seconds,
                if bad.is_empty() {
                    "all hold, all reached".to_owned()
                } else {
                    format!("NOT OK: {}", bad.join(", "))
                }
            );
        }
        let _ = writeln!(
            s,
            "simulation: {} seeds of the reference client, {} steps, {} violations; {} runs with a submission unresolved 25 h after faults stopped{}",
            self.simulation.seeds,
            self.simulation.steps,
            self.simulation.violations,
            self.simulation.liveness_failures,
            self.simulation
                .first_liveness_failure
                .as_ref()
                .map(|f| format!(" (first: {f})"))
                .unwrap_or_default()
        );
        for (id, gap) in &self.simulation.gaps_reached {
            let _ = writeln!(
                s,
                "    contract finding {id}: reached in {} runs, as assumed (not a failure; first: {})",
                gap.runs, gap.first
            );
        }
        let _ = writeln!(
            s,
            "chaos: {} seeds of adversarial requests, {} steps, {} violations{}",
            self.chaos.seeds,
            self.chaos.steps,
            self.chaos.violations,
            self.chaos
                .first_violation
                .as_ref()
                .map(|v| format!(" (first: {v})"))
                .unwrap_or_default()
        );
        let passed = self.scenarios.iter().filter(|x| x.passed).count();
        let _ = writeln!(
            s,
            "scenarios and findings scripts: {passed} of {} pass",
            self.scenarios.len()
        );
        for f in self.scenarios.iter().filter(|x| !x.passed) {
            let _ = writeln!(s, "    FAILED {}: {}", f.name, f.failures.join("; "));
        }
        if let Some(zoo) = &self.kill_matrix {
            let _ = writeln!(
                s,
                "bug zoo: {} of {} mutants killed",
                zoo.matrix.killed, zoo.matrix.total
            );
        }
        let gaps = self
            .coverage
            .iter()
            .filter(|c| c.properties.is_empty())
            .count();
        let _ = writeln!(
            s,
            "rules: {} in the catalogue, {} checked by properties, {} by unit tests and scenarios; {} assumptions recorded",
            self.coverage.len(),
            self.coverage.len() - gaps,
            gaps,
            self.findings.len()
        );
        s
    }

    /// The Markdown page.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# payhub-verify report\n");
        let _ = writeln!(
            s,
            "Verdict: **{}** in {:.1} s. Reproduce with `cargo run --release`.\n",
            self.verdict, self.seconds
        );
        let _ = writeln!(s, "```text\n{}```\n", self.summary_text());

        let _ = writeln!(s, "## Verdict per property and preset\n");
        for r in &self.presets {
            let _ = writeln!(
                s,
                "### {} — {}\n\n{}\n\n{} unique / {} total states, depth {}, {:.2} s.\n",
                r.name,
                if r.complete {
                    "complete"
                } else {
                    "**incomplete**"
                },
                r.about,
                r.unique_states,
                r.total_states,
                r.max_depth,
                r.seconds
            );
            let _ = writeln!(s, "| property | kind | rules | status |\n|---|---|---|---|");
            for p in &r.properties {
                let _ = writeln!(
                    s,
                    "| `{}` | {:?} | {} | {:?} |",
                    p.name,
                    p.kind,
                    p.rules.join(", "),
                    p.status
                );
            }
            s.push('\n');
            for p in r.properties.iter().filter(|p| p.counterexample.is_some()) {
                let cx = p.counterexample.as_ref().expect("filtered");
                let _ = writeln!(
                    s,
                    "Counterexample of `{}`: {}\n\n```text\n{}\n```\n",
                    p.name,
                    cx.detail,
                    cx.tape.join("\n")
                );
            }
        }

        let _ = writeln!(s, "## Simulation\n");
        let _ = writeln!(
            s,
            "{} seeds of the reference client (two servers sharing a database, one live server; swarm fault profiles), {} steps, {} violations.\n",
            self.simulation.seeds, self.simulation.steps, self.simulation.violations
        );
        let _ = writeln!(s, "| choice | applied |\n|---|---|");
        for (k, n) in &self.simulation.choices {
            let _ = writeln!(s, "| {k} | {n} |");
        }
        let _ = writeln!(s, "\n| answer | runs |\n|---|---|");
        for (k, n) in &self.simulation.answers {
            let _ = writeln!(s, "| {k} | {n} |");
        }
        if let Some(cx) = &self.simulation.counterexample {
            let _ = writeln!(
                s,
                "\n### Counterexample: `{}`\n\n{}\n\nReplay: `{}`\n\n```text\n{}```\n",
                cx.property, cx.detail, cx.replay, cx.trace
            );
        }
        let _ = writeln!(
            s,
            "\nChaos: {} seeds of adversarial requests against the reference platform, {} steps, {} violations.\n",
            self.chaos.seeds, self.chaos.steps, self.chaos.violations
        );

        let _ = writeln!(s, "## Scenarios S1–S13 (and their alternatives)\n");
        let _ = writeln!(s, "| script | title | result |\n|---|---|---|");
        for sc in &self.scenarios {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} |",
                sc.name,
                sc.title.clone().unwrap_or_default(),
                if sc.passed { "pass" } else { "**FAIL**" }
            );
        }
        if let Some(s1) = self.scenarios.iter().find(|x| x.name.starts_with("S07")) {
            let _ = writeln!(
                s,
                "\nOne of them as a sequence diagram (`{}`):\n\n```mermaid\n{}```\n",
                s1.name, s1.mermaid
            );
        }

        let _ = writeln!(s, "## Contract findings\n");
        let _ = writeln!(
            s,
            "Where the contract allows several behaviours (the checkers explore all), is silent, can be read two ways, or contradicts itself (both readings explored; listed first), and what the harness assumed. Change an assumption through its parameter or branch, not the code.\n"
        );
        let contradictions = self
            .findings
            .iter()
            .filter(|f| f.gap == payhub_model::Gap::Contradiction);
        for f in contradictions {
            let _ = writeln!(
                s,
                "**Contradiction `{}`.** {}\n\nWhat the harness does, and what a client must do: {} Scripts: {}.\n",
                f.id,
                f.contract,
                f.assumed,
                f.scripts.join(", ")
            );
        }
        let _ = writeln!(
            s,
            "| ID | gap | the contract | assumed | parameter | scripts | simulation runs that reached it |\n|---|---|---|---|---|---|---|"
        );
        for f in &self.findings {
            let _ = writeln!(
                s,
                "| `{}` | {:?} | {} | {} | {} | {} | {} |",
                f.id,
                f.gap,
                md_cell(f.contract),
                md_cell(f.assumed),
                f.parameter
                    .map(|p| format!("`{}`", md_cell(p)))
                    .unwrap_or_else(|| "—".into()),
                f.scripts.join(", "),
                f.simulation_runs
            );
        }
        let _ = writeln!(
            s,
            "\nBehaviours the contract permits that a reader would not expect, each with its trace:\n"
        );
        for f in self.scenarios.iter().filter(|x| x.is_finding()) {
            let _ = writeln!(
                s,
                "### {} — {}\n\n```mermaid\n{}```\n\n<details><summary>trace in the contract's notation</summary>\n\n```text\n{}```\n</details>\n",
                f.name,
                f.title.clone().unwrap_or_default(),
                f.mermaid,
                f.text
            );
        }

        let _ = writeln!(s, "## Rule coverage\n");
        let _ = writeln!(
            s,
            "| rule | kept by | properties | presets that exercised it | scenarios | note |\n|---|---|---|---|---|---|"
        );
        for c in &self.coverage {
            let _ = writeln!(
                s,
                "| `{}` | {:?} | {} | {} | {} | {} |",
                c.id,
                c.enforcer,
                c.properties.join(", "),
                c.presets.join(", "),
                c.scenarios.join(", "),
                c.reason.unwrap_or("")
            );
        }

        if let Some(zoo) = &self.kill_matrix {
            kill_matrix_markdown(&mut s, zoo);
        }
        s
    }

    /// Writes `report.md` and `report.json` to `out`; returns their paths.
    pub fn write(&self, out: &Path) -> Result<Vec<String>, String> {
        std::fs::create_dir_all(out)
            .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        let md = out.join("report.md");
        let json = out.join("report.json");
        std::fs::write(&md, self.markdown())
            .map_err(|e| format!("cannot write {}: {e}", md.display()))?;
        std::fs::write(&json, self.to_json())
            .map_err(|e| format!("cannot write {}: {e}", json.display()))?;
        Ok(vec![md.display().to_string(), json.display().to_string()])
    }
}

/// The kill matrix section of the Markdown page.
fn kill_matrix_markdown(s: &mut String, zoo: &ZooReport) {
    let _ = writeln!(s, "\n## Kill matrix\n");
    let _ = writeln!(
        s,
        "| mutant | side | rules | killed | property | method | seconds | counterexample steps |\n|---|---|---|---|---|---|---|---|"
    );
    for r in &zoo.matrix.mutants {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {:.3} | {} |",
            r.name,
            crate::mutants_cmd::side_name(r.side),
            r.rules.join(", "),
            r.killed,
            r.property.unwrap_or("—"),
            r.method.as_deref().unwrap_or("—"),
            r.seconds,
            // As the JSON of a missing length reads.
            r.counterexample_steps
                .map_or_else(|| "null".to_owned(), |n| n.to_string()),
        );
    }
    if let Some(example) = &zoo.example {
        let _ = writeln!(
            s,
            "\nExample counterexample (`{}`):\n\n```mermaid\n{}```\n",
            example.name, example.mermaid
        );
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
