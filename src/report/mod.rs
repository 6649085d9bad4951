//! The report of a `verify` run: a Markdown page a code host renders, and JSON for CI.

use payhub_model::{Assumption, Rule};
use payhub_properties::AlwaysCheck;
use payhub_properties::ScriptReport;
use payhub_properties::checker::{CheckStatus, PresetReport};
use payhub_properties::zoo::KillMatrix;
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::worlds;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;
use sweep::SweepSummary;

mod coverage;
mod header;
pub use header::{Header, commit};
mod edges;
mod shortcuts;
pub use shortcuts::Shortcuts;
pub mod outcome;
mod page;
mod problems;
pub mod readings;
mod summary;
pub mod sweep;

pub use problems::Problem;

pub use coverage::{CoverageRow, Judged, coverage, judged};

/// One scenario or finding script, run.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioResult {
    pub name: String,
    /// The script file, as `payhub-verify run` takes it.
    pub file: String,
    pub title: Option<String>,
    pub passed: bool,
    pub failures: Vec<String>,
    pub assumptions: Vec<&'static str>,
    pub rules: Vec<&'static str>,
    pub text: String,
    pub mermaid: String,
    /// The run drawn (for the HTML page).
    #[serde(skip)]
    pub diagram: payhub_sim::Diagram,
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
            file: path.display().to_string(),
            title: report.script.title.clone(),
            passed: report.passed(),
            failures: report.failures(),
            assumptions: report.script.assumptions.iter().map(|a| a.id()).collect(),
            rules: rules.into_iter().map(|r| r.id()).collect(),
            text: report.to_text(),
            mermaid: report.trace.to_mermaid(),
            diagram: report.to_diagram(),
        }
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
    let (chaos, _) = payhub_sim::sweep::fan_out(
        threads,
        |i| (i < seeds).then_some(i),
        &payhub_sim::sweep::never,
        |seed, chaos: &mut Chaos| {
            let mut check = AlwaysCheck { config: &config };
            let profile = FaultProfile::for_seed(seed);
            let (_, outcome) = driver::run_seed(&config, seed, &profile, 200, &mut check, None);
            chaos.steps += outcome.steps as u64;
            if let Some(v) = outcome.violation {
                chaos.violations += 1;
                if chaos.first.as_ref().is_none_or(|(s, _)| seed < *s) {
                    chaos.first =
                        Some((seed, format!("seed {seed}: {}: {}", v.property, v.detail)));
                }
            }
        },
    );
    ChaosSummary {
        seeds,
        steps: chaos.steps,
        violations: chaos.violations,
        first_violation: chaos.first.map(|(_, text)| text),
    }
}

/// The chaos sweep's runs, per worker.
#[derive(Default)]
struct Chaos {
    steps: u64,
    violations: u64,
    /// The lowest violating seed, with its violation.
    first: Option<(u64, String)>,
}

impl payhub_sim::sweep::Fold for Chaos {
    fn merge(&mut self, other: Chaos) {
        self.steps += other.steps;
        self.violations += other.violations;
        if let Some((seed, text)) = other.first
            && self.first.as_ref().is_none_or(|(s, _)| seed < *s)
        {
            self.first = Some((seed, text));
        }
    }
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

/// One part of a `verify` run and its wall-clock time (measured at the edge, never by
/// the model); `ran` is false for a part a Ctrl-C or `--mutant` left out.
#[derive(Clone, Debug, Serialize)]
pub struct Phase {
    pub name: &'static str,
    pub seconds: f64,
    pub ran: bool,
}

/// Everything a `verify` run found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub verdict: &'static str,
    pub header: Header,
    /// The bounds the presets ran under (`--max-states 5000`), for an incomplete one.
    pub limits: String,
    /// How the presets were searched: every state breadth-first, or depth-first with the
    /// sound reductions (`verify --quick`).
    pub search: &'static str,
    pub problems: Vec<Problem>,
    pub seconds: f64,
    /// Where the time went: each part of the run.
    pub phases: Vec<Phase>,
    pub presets: Vec<PresetReport>,
    pub simulation: SweepSummary,
    /// The simulation sweep with the clients' other readings of the contradictions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulation_other_readings: Option<SweepSummary>,
    /// Each reading of each contradiction, with the checker's and the sweep's verdicts.
    pub readings: Vec<readings::ReadingRow>,
    pub chaos: ChaosSummary,
    pub scenarios: Vec<ScenarioResult>,
    pub coverage: Vec<CoverageRow>,
    pub findings: Vec<Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_matrix: Option<ZooReport>,
    /// The edges (sandbox, check-log, conform) end to end, and the edge zoo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges: Option<crate::edges::EdgeReport>,
    /// The search's shortcuts cross-checked against the plain search and stateright.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shortcuts: Option<Shortcuts>,
    /// Why the run stopped early, if it did: nothing is then claimed for what did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// The zoo's bug planted in the presets (`verify --mutant NAME`): only those ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planted: Option<&'static str>,
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
    /// The run's parts as they ran, judged: the coverage, the readings, the findings,
    /// what failed and the verdict are filled in from them.
    pub fn judged(mut self) -> Report {
        self.coverage = coverage(&self.presets, &self.scenarios);
        let other = self.simulation_other_readings.as_ref();
        self.readings = readings::readings(&self.presets, &self.simulation, other);
        let (scenarios, sim) = (&self.scenarios, &self.simulation);
        self.findings = Assumption::ALL
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
                simulation_runs: sim.gaps_reached.get(a.id()).map_or(0, |g| g.runs),
            })
            .collect();
        self.problems = self.problems();
        self.verdict = match self.exit_code_value() {
            0 => "all hold",
            1 => "FAILED",
            _ => "not judged (incomplete)",
        };
        self
    }

    /// Whether the part named `name` ran (a part with no recorded phase did).
    pub fn ran(&self, name: &str) -> bool {
        self.phases
            .iter()
            .find(|p| p.name == name)
            .is_none_or(|p| p.ran)
    }

    /// 1 if something failed, 3 if something was not judged, else 0: read from the
    /// problems, so that the exit code and the list of what failed never disagree.
    fn exit_code_value(&self) -> u8 {
        let worst = self.problems.iter().map(|p| p.failed).max();
        worst.map_or(0, |failed| if failed { 1 } else { 3 })
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.exit_code_value())
    }

    pub fn to_json(&self) -> String {
        let json = serde_json::to_string_pretty(self);
        json.unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Writes `report.md`, `report.html`, `report.json` and the diagrams to `out`;
    /// returns their paths.
    pub fn write(&self, out: &Path) -> Result<Vec<String>, String> {
        let mkdir = |d: &Path| {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))
        };
        mkdir(out)?;
        let (md, html) = self.pages();
        let names = ["report.html", "report.md", "report.json"];
        for (name, text) in names.into_iter().zip([html, md, self.to_json()]) {
            crate::whole_file::write(&out.join(name), text)?;
        }
        // The diagrams, one Mermaid document each.
        let diagrams = out.join("diagrams");
        mkdir(&diagrams)?;
        let scenarios = self.scenarios.iter();
        let mut written: Vec<(String, &str)> = scenarios
            .map(|sc| (format!("{}.mmd", sc.name), sc.mermaid.as_str()))
            .collect();
        let example = self.kill_matrix.as_ref().and_then(|z| z.example.as_ref());
        written.extend(example.map(|e| (format!("mutant-{}.mmd", e.name), e.mermaid.as_str())));
        // An earlier run's drawings that this run does not make are removed, so the
        // folder shows this run alone (only `.mmd` files: nothing else is touched).
        for e in std::fs::read_dir(&diagrams).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".mmd") && !written.iter().any(|(w, _)| *w == name) {
                std::fs::remove_file(e.path())
                    .map_err(|err| format!("cannot remove {}: {err}", e.path().display()))?;
            }
        }
        for (name, text) in written {
            crate::whole_file::write(&diagrams.join(name), text)?;
        }
        let [html, md, json] = names.map(|n| out.join(n).display().to_string());
        Ok(vec![md, html, json, format!("{}/", diagrams.display())])
    }
}

/// The properties a preset failed: violated, or a *sometimes* never reached in a
/// complete search.
pub fn failing(
    r: &PresetReport,
) -> impl Iterator<Item = &payhub_properties::checker::PropertyReport> {
    let failed = |s: &CheckStatus| {
        *s == CheckStatus::Violated || (r.complete && *s == CheckStatus::Unreached)
    };
    r.properties.iter().filter(move |p| failed(&p.status))
}

/// The rule IDs of a property, by name.
pub fn rules_of(property: &str) -> Vec<&'static str> {
    if property == payhub_properties::liveness::NAME {
        return payhub_properties::liveness::RULES
            .iter()
            .map(|r| r.id())
            .collect();
    }
    payhub_properties::PROPERTIES
        .iter()
        .find(|p| p.name == property)
        .map(|p| p.rules.iter().map(|r| r.id()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::header::ContractNamed;
    use super::*;
    use crate::utc::date_time as utc;
    use payhub_properties::checker::Limits;

    fn header() -> Header {
        Header {
            contract: ContractNamed::JUDGED,
            version: "0.1.0",
            commit: "abc1234".into(),
            date: utc(1_764_582_662),
            command: "payhub-verify verify --preset create-lossy".into(),
            cores: 2,
        }
    }

    /// A run of `presets` and `kill_matrix`, nothing else.
    fn report_of(presets: Vec<PresetReport>, kill_matrix: Option<ZooReport>) -> Report {
        Report {
            verdict: "",
            header: header(),
            limits: "no bound (complete)".into(),
            search: crate::verify_cmd::PresetSearch::Every.describe(),
            problems: Vec::new(),
            seconds: 1.0,
            phases: Vec::new(),
            presets,
            simulation: SweepSummary::default(),
            simulation_other_readings: None,
            readings: Vec::new(),
            chaos: ChaosSummary::default(),
            scenarios: Vec::new(),
            coverage: Vec::new(),
            findings: Vec::new(),
            kill_matrix,
            edges: None,
            shortcuts: None,
            interrupted: None,
            planted: None,
        }
        .judged()
    }

    fn report(presets: Vec<PresetReport>) -> Report {
        report_of(presets, None)
    }

    #[test]
    fn a_report_folder_keeps_no_drawing_of_an_earlier_run() {
        let out = std::env::temp_dir().join(format!("payhub-report-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(out.join("diagrams")).unwrap();
        std::fs::write(out.join("diagrams/S99-gone.mmd"), "sequenceDiagram\n").unwrap();
        std::fs::write(out.join("diagrams/notes.txt"), "mine").unwrap();
        report(Vec::new()).write(&out).unwrap();
        assert!(
            !out.join("diagrams/S99-gone.mmd").exists(),
            "a stale drawing stayed"
        );
        assert!(
            out.join("diagrams/notes.txt").exists(),
            "a file not ours was removed"
        );
        assert!(out.join("report.md").exists());
        std::fs::remove_dir_all(&out).ok();
    }

    #[test]
    fn utc_dates_follow_the_civil_calendar() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_764_582_662), "2025-12-01 09:51:02 UTC");
    }

    /// With a violation, the first 20 lines name the verdict, version, commit, date, the
    /// violated property, its rule and the command that reproduces it.
    #[test]
    fn the_first_screen_names_the_violation_its_rule_and_the_reproduce_command() {
        use payhub_model::client::{AntiPattern, Policy};
        let policy = Policy::reference_random().with(AntiPattern::NewOrderNoAfterTimeout);
        let preset = payhub_properties::presets::client_presets(&policy)
            .into_iter()
            .find(|p| p.name == "create-lossy")
            .expect("create-lossy");
        let limits = Limits {
            threads: 1,
            max_states: Some(20_000),
            timeout: None,
            max_depth: None,
        };
        let checked = payhub_properties::check(&preset, limits).expect("checks");
        let violated = checked
            .properties
            .iter()
            .find(|p| p.status == CheckStatus::Violated)
            .expect("the anti-pattern is caught")
            .clone();
        let md = report(vec![checked]).pages().0;
        let screen: Vec<&str> = md.lines().take(20).collect();
        let screen = screen.join("\n");
        for needle in [
            "FAILED",
            "0.1.0",
            "abc1234",
            "2025-12-01",
            violated.name,
            violated.rules[0],
            "reproduce: `payhub-verify check --preset create-lossy`",
        ] {
            assert!(screen.contains(needle), "{needle} not in:\n{screen}");
        }
    }

    /// The simulation's counterexample: drawn as SVG in HTML, a Mermaid block in
    /// Markdown, its rules' sentences beside it.
    #[test]
    fn the_simulations_counterexample_is_drawn_in_both_formats() {
        let mut d = payhub_sim::Diagram::default();
        d.participant("C", "client");
        d.push_verdict("VIOLATED no-new-attempt-while-one-is-unfinished: twice");
        let mut r = report(Vec::new());
        r.simulation.counterexample = Some(sweep::SimCounterexample {
            property: "no-new-attempt-while-one-is-unfinished".into(),
            detail: "twice".into(),
            mermaid: d.to_mermaid(),
            diagram: d,
            ..Default::default()
        });
        let rule = rules_of("no-new-attempt-while-one-is-unfinished")[0];
        let (md, html) = r.pages();
        let sim = &html[html.find("id=\"simulation\"").unwrap()..];
        assert!(sim.contains("<svg") && sim.contains(&format!("data-rule=\"{rule}\"")));
        let sim = &md[md.find("## Simulation").unwrap()..];
        assert!(
            sim.contains("```mermaid\nsequenceDiagram") && sim.contains(rule),
            "{sim}"
        );
    }

    /// The exit code is read from what failed or was not judged: a reference
    /// configuration of the zoo that did not complete makes the run not judged (3), one
    /// that a property caught makes it fail (1), and each is listed with its command.
    #[test]
    fn the_exit_code_follows_the_problems_listed() {
        use payhub_properties::zoo::ReferenceRow;
        let with_reference = |caught: bool, complete: bool| {
            let zoo = ZooReport {
                matrix: KillMatrix {
                    mutants: Vec::new(),
                    references: vec![ReferenceRow {
                        name: "reference".into(),
                        method: "exhaustive".into(),
                        caught,
                        complete,
                        property: None,
                        detail: None,
                        tape: Vec::new(),
                        seconds: 0.0,
                        states_or_seeds: 1,
                        tried: Vec::new(),
                    }],
                    killed: 0,
                    total: 0,
                    median_seconds: 0.0,
                    max_seconds: 0.0,
                    seconds: 0.0,
                    threads: 1,
                    incomplete: None,
                },
                example: None,
            };
            let r = report_of(Vec::new(), Some(zoo));
            (r.exit_code_value(), r.verdict, r.problems.len())
        };
        assert_eq!(with_reference(false, true), (0, "all hold", 0));
        assert_eq!(
            with_reference(false, false),
            (3, "not judged (incomplete)", 1)
        );
        assert_eq!(with_reference(true, true), (1, "FAILED", 1));
    }

    #[test]
    fn a_passing_report_puts_its_verdict_and_header_first() {
        let md = report(Vec::new()).pages().0;
        let screen: Vec<&str> = md.lines().take(20).collect();
        let screen = screen.join("\n");
        for needle in ["all hold", "0.1.0", "abc1234", "2025-12-01", "2 cores"] {
            assert!(screen.contains(needle), "{needle} not in:\n{screen}");
        }
        assert!(!md.contains("## What failed"));
        // The page's own markup is markup: nothing of it escaped as text.
        assert!(md.contains("Each reason in full: `report.html`"), "{md}");
    }
}
