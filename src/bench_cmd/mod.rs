//! `payhub-verify bench`: how fast the simulator steps and the checker covers states, and
//! (`--traffic N`) how fast check-log judges a log and what it holds.
//!
//! Measured, never asserted: the numbers go to docs/performance.md.

use crate::Format;
use payhub_model::client::Policy;
use payhub_properties::checker::{Limits, Order, Search, check_with};
use payhub_properties::presets::ScopeChange;
use payhub_properties::{AlwaysCheck, presets};
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::{Trace, worlds};
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

mod scopes;
mod traffic;
mod vs_stateright;

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
    /// The growth table instead: unique states, seconds and peak memory of each client
    /// preset at 0, 1 and 2 faults of its kind, with and without each reduction, each
    /// run in a process of its own (bounded by --growth-timeout and --growth-max-states).
    #[arg(long)]
    pub growth: bool,
    /// Seconds one run of the growth table may take (then it is shown as cut).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub growth_timeout: u64,
    /// States (repeats included) one run of the growth table may generate.
    #[arg(long, default_value_t = 200_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub growth_max_states: u64,
    /// The scope and search of the preset measured (as `check` takes them; used by the
    /// growth table's child processes).
    #[arg(long, value_parser = crate::check_cmd::faults)]
    pub faults: Option<crate::check_cmd::Faults>,
    #[arg(long, value_enum, value_delimiter = ',')]
    pub reduce: Vec<crate::check_cmd::Reduction>,
    #[arg(long, value_enum, default_value = "bfs")]
    pub search: crate::check_cmd::SearchOrder,
    /// With the growth table's bounds (a child's).
    #[arg(long, hide = true)]
    pub max_states: Option<u64>,
    #[arg(long, hide = true)]
    pub timeout: Option<u64>,
    /// The checker against stateright's BFS and DFS on the same model (`--preset`,
    /// default create-lossy): unique states/s, the ratio to stateright's DFS, and the
    /// speed-up from 1 to 2 threads, each search in a process of its own.
    #[arg(long)]
    pub vs_stateright: bool,
    /// The scopes table: every client preset at every combination of N faults of drops,
    /// dups, fail_500, upstream_drops and crashes (with the scopes of fewer faults
    /// first, for the growth), each in a process of its own with `check`'s default
    /// search, bounded by --scope-timeout and --scope-memory-mib.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=9))]
    pub scopes: Option<u8>,
    /// Seconds one scope of --scopes may take (then it is shown as cut).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub scope_timeout: u64,
    /// Resident memory one scope of --scopes may hold, in MiB (then it is shown as cut).
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(64..))]
    pub scope_memory_mib: u64,
    /// With the scopes table's memory bound (a child's).
    #[arg(long, hide = true)]
    pub max_memory_mib: Option<u64>,
    /// Which checker a child process of `--vs-stateright` runs.
    #[arg(long, hide = true, value_enum, default_value = "engine")]
    pub searcher: vs_stateright::Searcher,
    /// check-log instead: a generated log of N exchanges judged on 1 and 2 threads (MB/s,
    /// exchanges/s, peak memory, bytes per retained key, outputs compared).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub traffic: Option<u64>,
    /// With --traffic: the log's format.
    #[arg(long, value_enum, default_value = "access-log")]
    pub traffic_format: crate::check_log::generate::Shape,
    /// With --traffic: the merchants the orders are spread over.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub traffic_merchants: u32,
}

/// The growth table's presets, each with the fault kind it grows.
const GROWTH: &[(&str, &str)] = &[
    ("create-lossy", "drops"),
    ("create-crash", "crashes"),
    ("two-servers-one-order", "drops"),
];

/// The searches the growth table compares, as `check` flags.
const GROWTH_SEARCHES: &[(&str, &[&str])] = &[
    ("bfs", &[]),
    ("bfs, ids", &["--reduce", "ids"]),
    ("dfs", &["--search", "dfs"]),
    ("dfs, ids", &["--search", "dfs", "--reduce", "ids"]),
    (
        "dfs, requests",
        &["--search", "dfs", "--reduce", "requests"],
    ),
    ("dfs, por", &["--search", "dfs", "--reduce", "por"]),
    (
        "dfs, requests+por",
        &["--search", "dfs", "--reduce", "requests,por"],
    ),
];

#[derive(Debug, Serialize)]
struct GrowthRow {
    preset: &'static str,
    faults: String,
    search: &'static str,
    complete: bool,
    unique_states: usize,
    total_states: usize,
    seconds: f64,
    peak_rss_bytes: Option<u64>,
}

/// The growth table: every (preset, faults, search) in a child process.
fn growth(args: &BenchArgs) -> Result<ExitCode, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut rows = Vec::new();
    for (preset, kind) in GROWTH {
        if args.preset.as_deref().is_some_and(|p| p != *preset) {
            continue;
        }
        for n in 0..=2 {
            // The preset's own faults of every kind are replaced: `n` of `kind` only.
            let faults = ["drops", "dups", "fail_500", "upstream_drops", "crashes"]
                .iter()
                .map(|k| format!("{k}={}", if k == kind { n } else { 0 }))
                .collect::<Vec<_>>()
                .join(",");
            for (search, flags) in GROWTH_SEARCHES {
                let mut child_flags: Vec<String> =
                    ["--preset", preset, "--runs", "1", "--faults", &faults]
                        .map(String::from)
                        .into();
                child_flags.extend([
                    "--checker-threads".into(),
                    args.checker_threads.to_string(),
                    "--timeout".into(),
                    args.growth_timeout.to_string(),
                    "--max-states".into(),
                    args.growth_max_states.to_string(),
                ]);
                child_flags.extend(flags.iter().map(|f| (*f).to_owned()));
                let what = format!("{preset} --faults {faults} ({search})");
                let c = bench_in_child(&exe, &what, &child_flags)?;
                let row = GrowthRow {
                    preset,
                    faults: format!("{kind}={n}"),
                    search,
                    complete: c.complete,
                    unique_states: c.unique_states,
                    total_states: c.total_states,
                    seconds: c.seconds,
                    peak_rss_bytes: c.peak_rss_bytes,
                };
                if args.format == Format::Text {
                    print_growth(&row);
                }
                rows.push(row);
            }
        }
    }
    if args.format == Format::Json {
        println!("{}", crate::outcome::json(&rows)?);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_growth(r: &GrowthRow) {
    println!(
        "    {:<22} {:<10} {:<17} {:>11} unique  {:>12} total  {:>8.2}s  {:>9}{}",
        r.preset,
        r.faults,
        r.search,
        r.unique_states,
        r.total_states,
        r.seconds,
        r.peak_rss_bytes
            .map(|b| format!("{:.0} MiB", b as f64 / (1024.0 * 1024.0)))
            .unwrap_or_default(),
        if r.complete {
            ""
        } else {
            "  (cut: incomplete)"
        }
    );
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
    /// Whether the search ran to the end (the growth table's bounds may cut it).
    #[serde(default = "yes")]
    complete: bool,
}

fn yes() -> bool {
    true
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
    args: &BenchArgs,
) -> Result<CheckBench, String> {
    let runs = args.runs;
    let (before, peak_before) = (rss(), peak_rss());
    let limits = Limits {
        threads,
        max_states: args.max_states.map(|n| n as usize),
        timeout: args.timeout.map(std::time::Duration::from_secs),
        ..Limits::default()
    };
    let preset = &preset
        .clone()
        .with_scope(&ScopeChange {
            faults: args.faults.clone().map(|f| f.0).unwrap_or_default(),
            ..ScopeChange::default()
        })
        .map_err(|e| e.to_string())?;
    if args.searcher == vs_stateright::Searcher::Stateright {
        use crate::check_cmd::Reduction;
        if args.reduce.iter().any(|r| *r != Reduction::Por) {
            return Err("stateright's checker fingerprints the state as it is: of the reductions only --reduce por (the model's own actions) applies to it".into());
        }
        let dfs = args.search == crate::check_cmd::SearchOrder::Dfs;
        let partial_order = Reduction::search(&args.reduce).partial_order;
        return vs_stateright::stateright_here(preset, dfs, partial_order, runs);
    }
    let search = Search {
        order: match args.search {
            crate::check_cmd::SearchOrder::Bfs => Order::Breadth,
            crate::check_cmd::SearchOrder::Dfs => Order::Depth,
        },
        interrupted: args.max_memory_mib.map(|mib| {
            scopes::MEMORY_LIMIT.store(mib * 1024 * 1024, std::sync::atomic::Ordering::Relaxed);
            scopes::over_memory as fn() -> bool
        }),
        ..crate::check_cmd::Reduction::search(&args.reduce)
    };
    let mut seconds = Vec::new();
    let mut counts = None;
    let mut complete = true;
    for _ in 0..runs {
        let report = check_with(preset, limits, search).map_err(|e| e.to_string())?;
        complete &= report.complete;
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
        complete,
    })
}

/// Checks `preset` in a child process of this binary, so that its peak memory is its own.
fn check_in_child(name: &str, args: &BenchArgs) -> Result<CheckBench, String> {
    check_in_child_with(name, args, args.checker_threads, &[])
}

/// `--faults …` as a child takes it, when this run was given a scope
/// (`--vs-stateright` passes it on).
fn faults_flag(args: &BenchArgs) -> Vec<String> {
    args.faults
        .iter()
        .flat_map(|f| {
            let knobs: Vec<String> =
                f.0.iter()
                    .map(|(k, n)| format!("{}={n}", k.name()))
                    .collect();
            ["--faults".to_owned(), knobs.join(",")]
        })
        .collect()
}

/// [`check_in_child`] with `threads` checker threads and `extra` flags for the child.
fn check_in_child_with(
    name: &str,
    args: &BenchArgs,
    threads: usize,
    extra: &[&str],
) -> Result<CheckBench, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut flags: Vec<String> = vec![
        "--preset".into(),
        name.into(),
        "--runs".into(),
        args.runs.to_string(),
        "--checker-threads".into(),
        threads.to_string(),
    ];
    flags.extend(extra.iter().map(|f| (*f).to_owned()));
    bench_in_child(&exe, name, &flags)
}

/// `exe bench --no-simulation --in-process --format json FLAGS…` in a process of its
/// own: its one checker measurement, or why there is none (`what` names it).
fn bench_in_child(
    exe: &std::path::Path,
    what: &str,
    flags: &[String],
) -> Result<CheckBench, String> {
    let output = std::process::Command::new(exe)
        .args([
            "bench",
            "--no-simulation",
            "--in-process",
            "--format",
            "json",
        ])
        .args(flags)
        .output()
        .map_err(|e| format!("cannot run the benchmark of {what}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the benchmark of {what} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    #[derive(serde::Deserialize)]
    struct Child {
        checker: Vec<CheckBench>,
    }
    let child: Child = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("the benchmark of {what} printed no report: {e}"))?;
    child
        .checker
        .into_iter()
        .next()
        .ok_or_else(|| format!("the benchmark of {what} measured nothing"))
}

/// Steps a simulator benchmark's worker ran.
#[derive(Default)]
struct Steps(u64);

impl payhub_sim::sweep::Fold for Steps {
    fn merge(&mut self, other: Steps) {
        self.0 += other.0;
    }
}

fn sim(seeds: u64, threads: usize, recording: bool) -> SimBench {
    let config = worlds::simulation(&Policy::reference(), 2);
    let started = Instant::now();
    let (Steps(steps), _) = payhub_sim::sweep::fan_out(
        threads,
        |i| (i < seeds).then_some(i),
        &payhub_sim::sweep::never,
        |seed, steps: &mut Steps| {
            let mut check = AlwaysCheck { config: &config };
            let profile = FaultProfile::for_seed(seed);
            let mut trace = Trace::new();
            let (_, outcome) = driver::run_seed(
                &config,
                seed,
                &profile,
                400,
                &mut check,
                recording.then_some(&mut trace),
            );
            steps.0 += outcome.steps as u64;
        },
    );
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
    if let Some(n) = args.traffic {
        return traffic::traffic(n, args.traffic_format, args.traffic_merchants);
    }
    if args.growth {
        return growth(args);
    }
    if let Some(n) = args.scopes {
        return scopes::table(args, n);
    }
    if let Some(name) = &args.preset {
        if !presets().iter().any(|p| p.name == name) {
            return Err(crate::usage::unknown(
                "preset",
                name,
                presets().iter().map(|p| p.name),
            ));
        }
    }
    if args.vs_stateright {
        return vs_stateright::compare(args);
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
            check_here(&preset, args.checker_threads.max(1), args)?
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
        Format::Json => println!("{}", crate::outcome::json(&bench)?),
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
