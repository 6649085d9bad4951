//! `bench --vs-stateright`: the checker's own searches against stateright's, on the same
//! model (a preset's [`PresetModel`] with every property combined into one, as `check`
//! judges states), each search in a process of its own.
//!
//! Measured, never asserted. Wall-clock figures on a shared machine are noisy; the
//! deterministic comparison is the instruction count of each single-threaded search
//! under `valgrind --tool=callgrind` (docs/performance.md gives the commands).

use super::{BenchArgs, CheckBench, check_in_child_with};
use crate::Format;
use payhub_properties::checker::{PresetModel, Registration};
use serde::Serialize;
use stateright::{Checker, Model};
use std::process::ExitCode;
use std::time::Instant;

/// Which search a child process of `bench --vs-stateright` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Searcher {
    /// This project's engine (`properties/src/engine/mod.rs`, `engine/dfs.rs`).
    Engine,
    /// stateright 0.31's own checker (`spawn_bfs` / `spawn_dfs`).
    Stateright,
}

/// The searches compared, in the order printed: (searcher, order, threads, `--reduce`).
/// The partial-order reduction lives in the model's actions, so stateright runs it too;
/// the canonical fingerprints (`ids`, `requests`) are the engine's own.
const SEARCHES: &[(Searcher, &str, usize, &str)] = &[
    (Searcher::Stateright, "bfs", 1, ""),
    (Searcher::Stateright, "dfs", 1, ""),
    (Searcher::Engine, "bfs", 1, ""),
    (Searcher::Engine, "dfs", 1, ""),
    (Searcher::Engine, "bfs", 2, ""),
    (Searcher::Engine, "dfs", 2, ""),
    (Searcher::Stateright, "dfs", 1, "por"),
    (Searcher::Engine, "dfs", 1, "por"),
    (Searcher::Engine, "dfs", 1, "requests,por"),
    (Searcher::Engine, "dfs", 2, "requests,por"),
];

#[derive(Debug, Serialize)]
struct Row {
    searcher: Searcher,
    search: &'static str,
    threads: usize,
    /// The reductions on (`--reduce`), empty for none.
    reduce: &'static str,
    unique_states: usize,
    total_states: usize,
    seconds: f64,
    unique_states_per_second: f64,
    /// Unique states per second over stateright's unreduced depth-first search's.
    vs_stateright_dfs: f64,
    /// stateright's unreduced depth-first search's seconds over this one's: the time to
    /// the same verdicts (a reduction covers fewer states and judges alike,
    /// `properties/tests/reduction.rs`).
    verdicts_vs_stateright_dfs: f64,
}

#[derive(Debug, Serialize)]
struct Comparison {
    preset: String,
    /// The scope, when not the preset's own (`--faults`).
    faults: Option<String>,
    runs: u32,
    rows: Vec<Row>,
    /// The engine's 2-thread rate over its 1-thread rate, breadth-first and depth-first
    /// (unreduced), and depth-first with `--reduce requests,por`.
    speedup_bfs_1_to_2: f64,
    speedup_dfs_1_to_2: f64,
    speedup_dfs_reduced_1_to_2: f64,
}

/// Runs a stateright checker on `preset` in this process, `runs` times; the median run.
pub(super) fn stateright_here(
    preset: &payhub_properties::Preset,
    depth_first: bool,
    partial_order: Option<payhub_properties::checker::FirstDelivery>,
    runs: u32,
) -> Result<CheckBench, String> {
    let mut seconds = Vec::new();
    let mut counts = None;
    for _ in 0..runs {
        let mut model = PresetModel::with_registration(
            preset.clone(),
            Registration::Combined {
                stop_at_violation: false,
            },
        )
        .map_err(|e| e.to_string())?;
        model.partial_order = partial_order;
        let started = Instant::now();
        let builder = model.checker().threads(1);
        let these = if depth_first {
            let c = builder.spawn_dfs().join();
            (c.unique_state_count(), c.state_count())
        } else {
            let c = builder.spawn_bfs().join();
            (c.unique_state_count(), c.state_count())
        };
        seconds.push(started.elapsed().as_secs_f64());
        if counts.is_some_and(|c| c != these) {
            return Err(format!(
                "{}: two stateright runs covered different numbers of states",
                preset.name
            ));
        }
        counts = Some(these);
    }
    let (unique, total) = counts.unwrap_or_default();
    let median = payhub_properties::zoo::median(&mut seconds);
    Ok(CheckBench {
        preset: preset.name.to_owned(),
        threads: 1,
        unique_states: unique,
        total_states: total,
        seconds: median,
        runs,
        unique_states_per_second: unique as f64 / median.max(1e-9),
        bytes_per_unique_state: None,
        peak_rss_bytes: super::peak_rss(),
        complete: true,
    })
}

/// Every search of [`SEARCHES`] on the preset (default `create-lossy`), one child
/// process each.
pub(super) fn compare(args: &BenchArgs) -> Result<ExitCode, String> {
    let name = args.preset.as_deref().unwrap_or("create-lossy");
    let mut measured = Vec::new();
    for &(searcher, search, threads, reduce) in SEARCHES {
        let searcher_flag = match searcher {
            Searcher::Engine => "engine",
            Searcher::Stateright => "stateright",
        };
        let scope = super::faults_flag(args);
        let mut flags = vec!["--searcher", searcher_flag, "--search", search];
        flags.extend(scope.iter().map(String::as_str));
        if !reduce.is_empty() {
            flags.extend(["--reduce", reduce]);
        }
        let c = check_in_child_with(name, args, threads, &flags)?;
        measured.push((searcher, search, threads, reduce, c));
    }
    let stateright_dfs = measured
        .iter()
        .find(|(s, o, _, r, _)| *s == Searcher::Stateright && *o == "dfs" && r.is_empty())
        .map(|m| (m.4.unique_states_per_second, m.4.seconds))
        .unwrap_or((f64::NAN, f64::NAN));
    let rate = |o: &str, t: usize, reduce: &str| {
        measured
            .iter()
            .find(|(s, so, st, r, _)| {
                *s == Searcher::Engine && *so == o && *st == t && *r == reduce
            })
            .map(|m| m.4.unique_states_per_second)
            .unwrap_or(f64::NAN)
    };
    let comparison = Comparison {
        preset: name.to_owned(),
        faults: super::faults_flag(args).get(1).cloned(),
        runs: args.runs,
        speedup_bfs_1_to_2: rate("bfs", 2, "") / rate("bfs", 1, ""),
        speedup_dfs_1_to_2: rate("dfs", 2, "") / rate("dfs", 1, ""),
        speedup_dfs_reduced_1_to_2: rate("dfs", 2, "requests,por") / rate("dfs", 1, "requests,por"),
        rows: measured
            .into_iter()
            .map(|(searcher, search, threads, reduce, c)| Row {
                searcher,
                search,
                threads,
                reduce,
                unique_states: c.unique_states,
                total_states: c.total_states,
                seconds: c.seconds,
                unique_states_per_second: c.unique_states_per_second,
                vs_stateright_dfs: c.unique_states_per_second / stateright_dfs.0,
                verdicts_vs_stateright_dfs: stateright_dfs.1 / c.seconds,
            })
            .collect(),
    };
    match args.format {
        Format::Json => println!("{}", crate::outcome::json(&comparison)?),
        Format::Text => {
            println!(
                "checker against stateright on {}{} (the same model; median of {} runs, one process per search):",
                comparison.preset,
                match &comparison.faults {
                    Some(f) => format!(" --faults {f}"),
                    None => String::new(),
                },
                comparison.runs
            );
            for r in &comparison.rows {
                println!(
                    "    {:<10} {}  threads {}  {:<12}  {:>9} unique  {:>10} total  {:>7.2}s  {:>9.0} unique/s  {:>5.2}x stateright dfs's rate  {:>6.2}x its time to the verdicts",
                    match r.searcher {
                        Searcher::Engine => "engine",
                        Searcher::Stateright => "stateright",
                    },
                    r.search,
                    r.threads,
                    if r.reduce.is_empty() { "-" } else { r.reduce },
                    r.unique_states,
                    r.total_states,
                    r.seconds,
                    r.unique_states_per_second,
                    r.vs_stateright_dfs,
                    r.verdicts_vs_stateright_dfs
                );
            }
            println!(
                "    engine 1 -> 2 threads: {:.2}x breadth-first, {:.2}x depth-first, {:.2}x depth-first with requests,por",
                comparison.speedup_bfs_1_to_2,
                comparison.speedup_dfs_1_to_2,
                comparison.speedup_dfs_reduced_1_to_2
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
