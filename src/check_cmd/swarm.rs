//! `payhub-verify check --swarm --shard I/N`: one shard of a swarm verification
//! (`properties/src/engine/swarm.rs`) over each selected preset. Never a pass: exit 1
//! when a shard found a violation, 3 (incomplete) otherwise.

use super::{CheckArgs, CheckFormat, Reduction};
use payhub_properties::Preset;
use payhub_properties::engine::swarm::{self, Budget, Shard, ShardReport};
use std::process::ExitCode;

/// The flags of a swarm run, flattened into `check`'s.
#[derive(clap::Args, Debug)]
pub struct SwarmArgs {
    /// Swarm verification: instead of one exhaustive search, shard I of N
    /// differently seeded bounded depth-first searches (`--shard`), bounded by
    /// `--depth` (default 64) and `--max-states` (generated, default 1000000). Never a
    /// pass: exit 1 if the shard found a violation, else 3.
    #[arg(long, requires = "shard")]
    pub swarm: bool,
    /// The shard of `--swarm` to run: I/N with I < N (e.g. 0/4); its report depends on
    /// I and the budget only, so shards run anywhere add up to the same union.
    #[arg(long, requires = "swarm")]
    pub shard: Option<Shard>,
}

/// Runs the shard over every selected preset (their scope already applied).
pub fn run(args: &CheckArgs, shard: Shard, presets: &[Preset]) -> Result<ExitCode, String> {
    if args.search.is_some() || args.bitstate.is_some() {
        return Err(
            "--swarm is its own search (bounded, depth first, seeded): drop --search and --bitstate"
                .into(),
        );
    }
    if args.timeout.is_some() {
        return Err(
            "--swarm is bounded by --depth and --max-states (a deterministic budget), not --timeout"
                .into(),
        );
    }
    let format = args.format;
    if format == CheckFormat::Script {
        return Err(
            "--swarm prints text or json (--format script is for check's counterexamples)".into(),
        );
    }
    let defaults = Budget::default();
    let budget = Budget {
        max_depth: args.depth.map_or(defaults.max_depth, |d| d as usize),
        max_states: args.max_states.map_or(defaults.max_states, |n| n as usize),
    };
    let reduce = Reduction::search(&args.reductions()?);
    let mut reports = Vec::new();
    for preset in presets {
        let report =
            swarm::check_shard(preset, shard, budget, reduce).map_err(|e| e.to_string())?;
        if format == CheckFormat::Text {
            print(&report);
        }
        reports.push(report);
    }
    if format == CheckFormat::Json {
        println!("{}", crate::outcome::json(&reports)?);
    }
    let found = reports.iter().any(|r| !r.violations.is_empty());
    Ok(ExitCode::from(if found { 1 } else { 3 }))
}

fn print(r: &ShardReport) {
    println!(
        "preset {} ({}), swarm shard {}/{} (seed {:#018x}, depth < {}, {} generated at most): {} unique, {} generated, depth {}{}",
        r.preset,
        r.scope,
        r.shard.index,
        r.shard.count,
        r.seed,
        r.budget.max_depth,
        r.budget.max_states,
        r.unique_states,
        r.total_states,
        r.max_depth,
        if r.budget_spent { ", budget spent" } else { "" }
    );
    for v in &r.violations {
        println!(
            "  VIOLATED {} [{}]: {} (path of {} steps found, shrunk to this tape)",
            v.property,
            v.rules.join(", "),
            v.detail,
            v.path_length
        );
        println!("    tape: {}", v.tape.join(" "));
    }
    if r.violations.is_empty() {
        println!("  no violation found; not judged (a swarm shard is incomplete)");
    }
}
