//! What a seeded sweep found (`simulate`, and `verify`'s simulation part): the data the
//! reports render.

use serde::Serialize;
use std::collections::BTreeMap;

/// What a sweep found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SweepSummary {
    /// Seeds run (all asked for, unless `incomplete`).
    pub seeds: u64,
    /// Seeds asked for.
    pub seeds_asked: u64,
    /// Why the sweep stopped before every seed ran (`--timeout 10s`, Ctrl-C): its
    /// result is then not judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// The first seed not run, when incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_not_run: Option<u64>,
    pub steps: u64,
    pub violations: u64,
    /// Runs in which, once faults stopped, a submission stayed unresolved for 25 h
    /// (`eventually:submissions-resolve-within-24h`).
    pub liveness_failures: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_liveness_failure: Option<String>,
    /// The command that shows the first liveness failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_liveness_replay: Option<String>,
    /// Runs in which, once faults stopped, a submission stayed unresolved in a situation
    /// the contract leaves open, per assumption (A-CLIENT-AFTER-24H, A-WEBHOOK-BLACKOUT):
    /// contract findings, neither passes nor failures.
    pub gaps_reached: BTreeMap<String, GapReached>,
    /// Runs that violated each property, with the first (a run stops at its first
    /// violation, so each run counts for one property).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub violations_by_property: BTreeMap<String, GapReached>,
    /// How many choices of each kind were applied, over all runs.
    pub choices: BTreeMap<String, u64>,
    /// In how many runs each answer (status and error code) occurred.
    pub answers: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<SimCounterexample>,
}

/// How often a sweep reached one documented gap of the contract, and the first run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GapReached {
    pub runs: u64,
    pub first: String,
    /// The command that shows the first run reaching it (healing included).
    pub replay: String,
}

/// A failing seed, shrunk.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SimCounterexample {
    pub seed: u64,
    pub profile: String,
    pub property: String,
    pub detail: String,
    pub original_steps: usize,
    pub tape: Vec<String>,
    pub tape_file: String,
    pub replay: String,
    pub trace: String,
    /// The shrunk run as a Mermaid sequence diagram, its verdict the closing note.
    pub mermaid: String,
    /// The same drawing (for the HTML page).
    #[serde(skip)]
    pub diagram: payhub_sim::Diagram,
    /// The counterexample as a what-if script (`payhub-verify run` reproduces it).
    pub script: Option<String>,
    /// Why it cannot be a script (the tape still replays it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_script: Option<String>,
    /// Where the script was saved.
    pub script_file: Option<String>,
}

impl SweepSummary {
    /// 1: a run violated a property or left a submission unresolved; 3: the sweep
    /// stopped early (nothing is claimed for the seeds not run); 0: every seed held.
    pub fn exit_code(&self) -> u8 {
        if self.violations > 0 || self.liveness_failures > 0 {
            1
        } else if self.incomplete.is_some() {
            3
        } else {
            0
        }
    }
}
