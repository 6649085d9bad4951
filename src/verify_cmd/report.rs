//! What a `verify` run found, part by part, and its verdict: the data its report
//! (`crate::report`) renders.

use super::coverage::{CoverageRow, coverage};
use super::readings::{self, ReadingRow};
use crate::header::Header;
use crate::report::Problem;
use crate::simulate_cmd::SweepSummary;
use payhub_model::{Assumption, Rule};
use payhub_properties::ScriptReport;
use payhub_properties::checker::{CheckStatus, PresetReport, PropertyReport};
use payhub_properties::zoo::KillMatrix;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;

pub use super::ChaosSummary;

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
    pub readings: Vec<ReadingRow>,
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

/// The search's shortcuts cross-checked (`properties/src/checker/shortcuts.rs`), and the
/// unsound one planted in their place, if one was (`verify --unsound-shortcut NAME`).
#[derive(Clone, Debug, Serialize)]
pub struct Shortcuts {
    #[serde(flatten)]
    pub check: payhub_properties::checker::shortcuts::CrossCheck,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planted: Option<&'static str>,
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
    pub fn exit_code_value(&self) -> u8 {
        let worst = self.problems.iter().map(|p| p.failed).max();
        worst.map_or(0, |failed| if failed { 1 } else { 3 })
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.exit_code_value())
    }
}

/// The properties a preset failed: violated, or a *sometimes* never reached in a
/// complete search.
pub fn failing(r: &PresetReport) -> impl Iterator<Item = &PropertyReport> {
    r.properties.iter().filter(move |p| {
        p.status == CheckStatus::Violated || (r.complete && p.status == CheckStatus::Unreached)
    })
}
