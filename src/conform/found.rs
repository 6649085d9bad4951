//! What a conform sweep found, as data: its counts and speed, each violation with its
//! shrunk case, the registry's verdicts, and the exit code they make (rendered by
//! [`super::report`] and [`super::page`]).

use super::registry::Registry;
use super::run::Exchange;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub seed: u64,
    /// Requests of the generated case, and of the shrunk one.
    pub requests: usize,
    pub shrunk_requests: usize,
    /// Runs of the target shrinking took.
    pub shrink_runs: usize,
    /// Cases run until this one, and seconds (shrinking not included).
    pub detected_after_cases: usize,
    pub detected_after_s: f64,
    /// The shrunk case as run: every exchange, the last round's the one that broke.
    pub exchanges: Vec<Exchange>,
    /// The round whose answers no model state explains (0-based).
    pub breaking_round: usize,
    /// The model's answers that round could have had (closest paths), with why each differs.
    pub allowed: Vec<String>,
    pub mermaid: String,
    pub script: String,
    /// The property that judged it.
    pub property: &'static str,
    /// The rules by which the model's closest paths answered the requests whose answers
    /// no model state explains (the rules the target broke).
    pub rules: Vec<&'static str>,
    /// Other seeds that broke the same rule (`--keep-going` keeps one finding per rule).
    pub also_seeds: Vec<u64>,
}

/// The share of a run's exchanges the target may fail (no answer read, with no fault
/// planned) before the run is incomplete whatever its cases say.
pub const TARGET_FAILED_SHARE_PCT: usize = 5;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub target: String,
    pub profile: String,
    pub seeds: String,
    pub proxy_faults: bool,
    pub cases_run: usize,
    pub requests: usize,
    pub elapsed_s: f64,
    pub cases_per_s: f64,
    pub violations: Vec<Finding>,
    /// Cases the oracle could not finish (bounds), or whose judgement depended on an
    /// exchange the target failed: never a pass.
    pub incomplete: Vec<(u64, String)>,
    /// Exchanges sent, those whose answer from the target could not be read or never
    /// came with no fault planned, and the first of those.
    pub exchanged: usize,
    pub target_failed: usize,
    pub target_first_failure: Option<String>,
    /// Seeds not reached (the duration ran out, or the run stopped at a violation).
    pub not_run: usize,
    /// How to continue, when seeds were not reached.
    pub continue_with: Option<String>,
    /// The profile's suppressions, each a registry property with its reason and what it
    /// hid in this run.
    pub suppressed: Vec<String>,
    /// Per silent point, the reading the target took (`silent.rs`).
    pub readings: Vec<super::silent::PointRow>,
    /// The registry's verdicts over the exchanges sent, beside the oracle's.
    pub registry: Registry,
    /// Per rule the platform keeps, the registry's verdict (`rule_rows.rs`).
    pub rules: Vec<super::rule_rows::RuleRow>,
}

impl Report {
    /// 0 conforms, 1 a violation (the oracle's or the registry's), 3 incomplete (the
    /// oracle's bounds, seeds not reached, or a registry that judged nothing: see
    /// [`Registry::exit_code`]), 2 nothing checked.
    pub fn exit_code(&self) -> u8 {
        let registry = self.registry.exit_code(self.cases_run);
        if !self.violations.is_empty() || registry == 1 {
            1
        } else if !self.incomplete.is_empty()
            || self.target_failed_past_share()
            || (self.not_run > 0 && self.continue_with.is_some())
            || registry == 3
        {
            3
        } else if self.cases_run == 0 {
            2
        } else {
            0
        }
    }

    /// Whether the target failed more than [`TARGET_FAILED_SHARE_PCT`] % of the exchanges.
    pub fn target_failed_past_share(&self) -> bool {
        self.target_failed * 100 > self.exchanged * TARGET_FAILED_SHARE_PCT
    }

    pub fn verdict(&self) -> &'static str {
        match self.exit_code() {
            0 => "conforms",
            1 => "VIOLATION",
            3 => "incomplete",
            _ => "nothing checked",
        }
    }
}

impl Finding {
    /// The rule a finding is kept under, one per rule with `--keep-going`.
    pub fn rule(&self) -> &str {
        self.rules.last().copied().unwrap_or("(no rule)")
    }
}
