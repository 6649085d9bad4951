//! `payhub-verify bench`: how fast the simulator steps and the checker covers states.
//!
//! Measured, never asserted: the numbers go to the README's performance table.

use crate::Format;
use payhub_model::client::Policy;
use payhub_properties::checker::Limits;
use payhub_properties::{AlwaysCheck, check, presets};
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::{Trace, worlds};
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Seeds per simulation measurement.
    #[arg(long, default_value_t = 4000, value_parser = crate::usage::seeds)]
    pub seeds: u64,
    /// Threads for the simulation measurement with recording off.
    #[arg(long, default_value_t = 2, value_parser = crate::usage::threads)]
    pub threads: usize,
    /// Checker threads.
    #[arg(long, default_value_t = 2, value_parser = crate::usage::threads)]
    pub checker_threads: usize,
    /// Runs of each preset; the median run is reported (this machine's timings vary by
    /// ±15 % from run to run).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
    /// Only this preset (default: every preset).
    #[arg(long)]
    pub preset: Option<String>,
    /// Measure only the checker.
    #[arg(long)]
    pub no_simulation: bool,
    /// Check every preset in this process instead of one child process per preset. The
    /// memory figure is then the growth of this process's peak, which a preset smaller
    /// than an earlier one does not move (it is then left out).
    #[arg(long)]
    pub in_process: bool,
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

#[derive(Debug, Serialize, serde::Deserialize)]
struct CheckBench {
    preset: String,
    threads: usize,
    unique_states: usize,
    total_states: usize,
    /// The median of `runs` runs.
    seconds: f64,
    runs: u32,
    unique_states_per_second: f64,
    /// Peak resident memory during the runs less the resident memory before them, per
    /// unique state (Linux only; presets under 10,000 states are too small to tell).
    bytes_per_unique_state: Option<f64>,
    /// Peak resident memory of the process that checked the preset (its own process
    /// unless `--in-process`).
    peak_rss_bytes: Option<u64>,
}

#[derive(Debug, Serialize)]
struct Bench {
    simulation: Vec<SimBench>,
    checker: Vec<CheckBench>,
    peak_rss_bytes: Option<u64>,
}

/// Resident set size of this process (VmRSS), if the OS tells.
fn rss() -> Option<u64> {
    proc_status_kb("VmRSS:")
}

/// Peak resident set size of this process (VmHWM), if the OS tells.
pub fn peak_rss() -> Option<u64> {
    proc_status_kb("VmHWM:")
}

fn proc_status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Checks `preset` `runs` times in this process and reports the median run.
fn check_here(
    preset: &payhub_properties::Preset,
    threads: usize,
    runs: u32,
) -> Result<CheckBench, String> {
    let (before, peak_before) = (rss(), peak_rss());
    let limits = Limits {
        threads,
        ..Limits::default()
    };
    let mut seconds = Vec::new();
    let mut counts = None;
    for _ in 0..runs {
        let report = check(preset, limits)?;
        seconds.push(report.seconds);
        let these = (report.unique_states, report.total_states);
        if counts.is_some_and(|c| c != these) {
            return Err(format!(
                "{}: two runs covered different numbers of states ({:?} and {these:?})",
                preset.name,
                counts.unwrap_or_default()
            ));
        }
        counts = Some(these);
    }
    let counts = counts.unwrap_or_default();
    let median = payhub_properties::zoo::median(&mut seconds);
    // Only if this preset raised the peak: otherwise the peak is an earlier preset's.
    let bytes = match (before, peak_before, peak_rss()) {
        (Some(b), Some(p), Some(a)) if a > p && a > b && counts.0 >= 10_000 => {
            Some((a - b) as f64 / counts.0 as f64)
        }
        _ => None,
    };
    Ok(CheckBench {
        preset: preset.name.to_owned(),
        threads,
        unique_states: counts.0,
        total_states: counts.1,
        seconds: median,
        runs,
        unique_states_per_second: counts.0 as f64 / median.max(1e-9),
        bytes_per_unique_state: bytes,
        peak_rss_bytes: peak_rss(),
    })
}

/// Checks `preset` in a child process of this binary, so that its peak memory is its own.
fn check_in_child(name: &str, args: &BenchArgs) -> Result<CheckBench, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let output = std::process::Command::new(exe)
        .args([
            "bench",
            "--no-simulation",
            "--in-process",
            "--format",
            "json",
        ])
        .args(["--preset", name])
        .args(["--runs", &args.runs.to_string()])
        .args(["--checker-threads", &args.checker_threads.to_string()])
        .output()
        .map_err(|e| format!("cannot run the benchmark of {name}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the benchmark of {name} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    #[derive(serde::Deserialize)]
    struct Child {
        checker: Vec<CheckBench>,
    }
    let child: Child = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("the benchmark of {name} printed no report: {e}"))?;
    child
        .checker
        .into_iter()
        .next()
        .ok_or_else(|| format!("the benchmark of {name} measured nothing"))
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
                        let profile = FaultProfile::for_seed(seed);
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
    if let Some(name) = &args.preset {
        if !presets().iter().any(|p| p.name == name) {
            return Err(crate::usage::unknown(
                "preset",
                name,
                presets().iter().map(|p| p.name),
            ));
        }
    }
    let threads = args.threads.max(1);
    let simulation = if args.no_simulation {
        Vec::new()
    } else {
        vec![
            sim(args.seeds, 1, false),
            sim(args.seeds, threads, false),
            sim(args.seeds / 4, 1, true),
        ]
    };
    let mut checker = Vec::new();
    for preset in presets() {
        if args.preset.as_deref().is_some_and(|p| p != preset.name) {
            continue;
        }
        checker.push(if args.in_process {
            check_here(&preset, args.checker_threads.max(1), args.runs)?
        } else {
            check_in_child(preset.name, args)?
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
            if !bench.simulation.is_empty() {
                println!(
                    "simulation (reference client, swarm profiles, at most 400 choices per seed):"
                );
            }
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
            if !bench.checker.is_empty() {
                println!(
                    "checker (every preset exhaustively; median of {} runs; memory: peak less resident before, per unique state):",
                    args.runs
                );
            }
            for c in &bench.checker {
                println!(
                    "    {:<22} threads {}  {:>9} unique  {:>10} total  {:>7.2}s  {:>9.0} unique/s  {:>11}  {}",
                    c.preset,
                    c.threads,
                    c.unique_states,
                    c.total_states,
                    c.seconds,
                    c.unique_states_per_second,
                    c.bytes_per_unique_state
                        .map(|b| format!("{b:.0} B/state"))
                        .unwrap_or_else(|| "-".into()),
                    c.peak_rss_bytes
                        .map(|b| format!("peak {:.0} MiB", b as f64 / (1024.0 * 1024.0)))
                        .unwrap_or_default()
                );
            }
            if let Some(rss) = bench
                .peak_rss_bytes
                .filter(|_| !bench.simulation.is_empty())
            {
                println!(
                    "peak resident memory of the simulation benchmark: {:.1} MiB",
                    rss as f64 / (1024.0 * 1024.0)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
