//! `payhub-verify bench`: how fast the simulator steps and the checker covers states.
//!
//! Measured, never asserted: the numbers go to the README's performance table.

use crate::Format;
use payhub_model::client::Policy;
use payhub_properties::checker::Limits;
use payhub_properties::{AlwaysCheck, check, presets};
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::{Trace, worlds};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Seeds per simulation measurement.
    #[arg(long, default_value_t = 4000)]
    pub seeds: u64,
    /// Threads for the simulation measurement with recording off.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Checker threads.
    #[arg(long, default_value_t = 2)]
    pub checker_threads: usize,
    /// Only this preset (default: every preset).
    #[arg(long)]
    pub preset: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Serialize)]
struct SimBench {
    recording: bool,
    threads: usize,
    seeds: u64,
    steps: u64,
    seconds: f64,
    steps_per_second: f64,
}

#[derive(Debug, Serialize)]
struct CheckBench {
    preset: &'static str,
    threads: usize,
    unique_states: usize,
    total_states: usize,
    seconds: f64,
    unique_states_per_second: f64,
    /// Growth of the peak resident set during the run, per unique state (Linux only).
    bytes_per_unique_state: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Bench {
    simulation: Vec<SimBench>,
    checker: Vec<CheckBench>,
    peak_rss_bytes: Option<u64>,
}

/// Peak resident set size of this process (VmHWM), if the OS tells.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn sim(seeds: u64, threads: usize, recording: bool) -> SimBench {
    let config = worlds::simulation(&Policy::reference(), 2);
    let started = Instant::now();
    let steps: u64 = std::thread::scope(|scope| {
        let per = seeds.div_ceil(threads as u64);
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let config = &config;
                scope.spawn(move || {
                    let mut steps = 0u64;
                    let mut check = AlwaysCheck { config };
                    for seed in (t * per)..((t + 1) * per).min(seeds) {
                        let profile = FaultProfile::swarm(&mut ChaCha8Rng::seed_from_u64(seed));
                        let mut trace = Trace::new();
                        let (_, outcome) = driver::run_seed(
                            config,
                            seed,
                            &profile,
                            400,
                            &mut check,
                            recording.then_some(&mut trace),
                        );
                        steps += outcome.steps as u64;
                    }
                    steps
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench worker"))
            .sum()
    });
    let seconds = started.elapsed().as_secs_f64();
    SimBench {
        recording,
        threads,
        seeds,
        steps,
        seconds,
        steps_per_second: steps as f64 / seconds,
    }
}

pub fn run(args: &BenchArgs) -> Result<ExitCode, String> {
    let threads = args.threads.max(1);
    let simulation = vec![
        sim(args.seeds, 1, false),
        sim(args.seeds, threads, false),
        sim(args.seeds / 4, 1, true),
    ];
    let mut checker = Vec::new();
    for preset in presets() {
        if args.preset.as_deref().is_some_and(|p| p != preset.name) {
            continue;
        }
        let before = peak_rss();
        let limits = Limits {
            threads: args.checker_threads.max(1),
            ..Limits::default()
        };
        let report = check(&preset, limits)?;
        let after = peak_rss();
        let bytes = match (before, after) {
            (Some(b), Some(a)) if a > b && report.unique_states > 10_000 => {
                Some((a - b) as f64 / report.unique_states as f64)
            }
            _ => None,
        };
        checker.push(CheckBench {
            preset: preset.name,
            threads: limits.threads,
            unique_states: report.unique_states,
            total_states: report.total_states,
            seconds: report.seconds,
            unique_states_per_second: report.unique_states as f64 / report.seconds.max(1e-9),
            bytes_per_unique_state: bytes,
        });
    }
    let bench = Bench {
        simulation,
        checker,
        peak_rss_bytes: peak_rss(),
    };
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&bench).map_err(|e| e.to_string())?
        ),
        Format::Text => {
            println!(
                "simulation (reference client, swarm profiles, at most 400 choices per seed):"
            );
            for s in &bench.simulation {
                println!(
                    "    recording {:<3} threads {}  {:>9} steps in {:>6.2}s  {:>12.0} steps/s",
                    if s.recording { "on" } else { "off" },
                    s.threads,
                    s.steps,
                    s.seconds,
                    s.steps_per_second
                );
            }
            println!("checker (BFS, every preset exhaustively):");
            for c in &bench.checker {
                println!(
                    "    {:<22} threads {}  {:>9} unique  {:>10} total  {:>7.2}s  {:>9.0} unique/s  {}",
                    c.preset,
                    c.threads,
                    c.unique_states,
                    c.total_states,
                    c.seconds,
                    c.unique_states_per_second,
                    c.bytes_per_unique_state
                        .map(|b| format!("{b:.0} B/state"))
                        .unwrap_or_else(|| "-".into())
                );
            }
            if let Some(rss) = bench.peak_rss_bytes {
                println!(
                    "peak resident memory: {:.1} MiB",
                    rss as f64 / (1024.0 * 1024.0)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
