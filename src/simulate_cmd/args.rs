//! The arguments of `payhub-verify simulate`: the seed range, the shard, the world and the output format.

use payhub_model::client::After503;
use payhub_sim::Readings;
use payhub_sim::tape::SimulationArgs;
use std::path::PathBuf;

pub use crate::seeds::{SeedRange, Shard};

/// What world a run uses.
#[derive(clap::Args, Debug, Clone)]
pub struct WorldArgs {
    /// Client policy: reference, reference-random, or anti-patterns joined by '+'
    /// (e.g. new_key_after_timeout+new_order_no_after_timeout).
    #[arg(long, default_value = "reference", value_parser = crate::usage::policy)]
    pub policy: String,
    /// Servers of merchant 1 (test) sharing one database, 1 to 8.
    #[arg(long, default_value_t = 2, value_parser = crate::usage::clients)]
    pub clients: u8,
    /// Most choices per run (at least 1).
    #[arg(long, default_value_t = 400, value_parser = crate::usage::steps)]
    pub steps: usize,
    /// Use the default fault profile for every seed instead of drawing one per seed.
    #[arg(long)]
    pub no_swarm: bool,
    /// The clients' reading of five 503s (S13 against the reference code,
    /// A-S13-REFERENCE-CODE): not_accepted (the default) or result_unknown.
    #[arg(long = "after-503", value_parser = crate::usage::reading)]
    pub after_503: Option<After503>,
    /// The clients' reading of five 429s (A-429-REFERENCE-CODE): result_unknown (the
    /// default) or not_accepted.
    #[arg(long = "after-429", value_parser = crate::usage::reading)]
    pub after_429: Option<After503>,
}

impl WorldArgs {
    /// The settings these flags give (what a tape records).
    pub fn simulation(&self) -> SimulationArgs {
        SimulationArgs {
            policy: self.policy.clone(),
            clients: self.clients,
            steps: self.steps,
            no_swarm: self.no_swarm,
            readings: self.readings(),
        }
    }

    /// The readings these flags give, the reference client's where a flag is absent.
    pub fn readings(&self) -> Readings {
        let d = Readings::default();
        Readings {
            after_503: self.after_503.unwrap_or(d.after_503),
            after_429: self.after_429.unwrap_or(d.after_429),
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    /// Seeds to run, A..B (B excluded).
    #[arg(long, default_value = "0..10000")]
    pub seeds: SeedRange,
    /// Run only shard I of N of the seed range (for CI matrices).
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Worker threads (the output does not depend on it).
    #[arg(long, default_value_t = 2, value_parser = crate::usage::threads)]
    pub threads: usize,
    #[command(flatten)]
    pub world: WorldArgs,
    /// Stop after this many seconds; the seeds run so far are reported, not judged
    /// (incomplete: exit 3).
    #[arg(long, alias = "duration", value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Where to save the shrunk counterexample's tape and script (default:
    /// target/payhub-report in the repository, or in the current folder outside it).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Output format: a summary (text, json), or the shrunk counterexample as a what-if
    /// script that `payhub-verify run` reproduces (script).
    #[arg(long, value_enum, default_value = "text")]
    pub format: SweepFormat,
}

/// How `simulate` prints its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SweepFormat {
    Text,
    Json,
    Script,
    /// JUnit XML: a test case per property over the sweep (docs/ci.md).
    Junit,
}
