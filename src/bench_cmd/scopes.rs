//! `bench --scopes N`: every client preset at every combination of N faults of the five
//! fault knobs (drops, dups, fail_500, upstream_drops, crashes; a knob may take several,
//! e.g. `drops=2,crashes=1`), each checked in a process of its own with `check`'s
//! default search (depth first, `--reduce requests,por`) and bounded in time and memory.
//!
//! The scopes of fewer faults are checked first (0, 1, …, N faults): they give each scope
//! its growth (the states of the chain of scopes it extends, one fault at a time), and a
//! scope that extends a cut one is not run (a fault budget is an upper bound, so the
//! larger scope holds every state of the smaller one). A cut scope is shown with what
//! would finish it: its states extrapolated from the growth, the time that takes at the
//! rate measured, and the bitstate search (with its expected omissions) or the swarm
//! that fits the bounds.

use super::{BenchArgs, CheckBench};
use crate::Format;
use payhub_properties::engine::visited::{BITSTATE_HASHES, expected_missed};
use payhub_properties::presets::Knob;
use serde::Serialize;
use std::process::ExitCode;

/// A scope: how many faults of each fault knob (`Knob::FAULTS`' order).
type Counts = [u8; 5];

#[derive(Debug, Serialize)]
struct ScopeRow {
    preset: &'static str,
    faults: String,
    /// Faults in all.
    size: u8,
    /// `complete`, `cut by time`, `cut by memory`, or `not run: <sub-scope> was cut`.
    outcome: String,
    complete: bool,
    unique_states: Option<usize>,
    total_states: Option<usize>,
    seconds: Option<f64>,
    peak_rss_bytes: Option<u64>,
    /// Unique states of the scopes this one extends, 0 faults first, this one last.
    growth: Vec<Option<usize>>,
    /// For a cut scope: its states estimated from the growth, and what would finish it.
    estimated_states: Option<f64>,
    finish: Option<String>,
}

impl ScopeRow {
    /// A scope that was not run, and why (`outcome`).
    fn not_run(preset: &'static str, c: &Counts, outcome: String) -> ScopeRow {
        ScopeRow {
            preset,
            faults: text(c),
            size: c.iter().sum(),
            outcome,
            complete: false,
            unique_states: None,
            total_states: None,
            seconds: None,
            peak_rss_bytes: None,
            growth: Vec::new(),
            estimated_states: None,
            finish: None,
        }
    }
}

/// Every way to share `n` faults among the five knobs, in a fixed order.
fn combinations(n: u8) -> Vec<Counts> {
    let mut out = Vec::new();
    let mut c = [0u8; 5];
    fn fill(i: usize, left: u8, c: &mut Counts, out: &mut Vec<Counts>) {
        if i == c.len() - 1 {
            c[i] = left;
            out.push(*c);
            return;
        }
        for k in (0..=left).rev() {
            c[i] = k;
            fill(i + 1, left - k, c, out);
        }
    }
    fill(0, n, &mut c, &mut out);
    out
}

/// `drops=2,crashes=1`, or `none`.
fn text(c: &Counts) -> String {
    let set: Vec<String> = Knob::FAULTS
        .iter()
        .zip(c)
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{}={n}", k.name()))
        .collect();
    if set.is_empty() {
        "none".into()
    } else {
        set.join(",")
    }
}

/// The `--faults` flag that sets every fault knob (the preset's own faults replaced).
fn flag(c: &Counts) -> String {
    Knob::FAULTS
        .iter()
        .zip(c)
        .map(|(k, n)| format!("{}={n}", k.name()))
        .collect::<Vec<_>>()
        .join(",")
}

/// The scope with one fault fewer, taken from the last knob that has one.
fn parent(c: &Counts) -> Option<Counts> {
    let i = c.iter().rposition(|n| *n > 0)?;
    let mut p = *c;
    p[i] -= 1;
    Some(p)
}

/// Every scope with one fault fewer.
fn parents(c: &Counts) -> Vec<Counts> {
    (0..c.len())
        .filter(|i| c[*i] > 0)
        .map(|i| {
            let mut p = *c;
            p[i] -= 1;
            p
        })
        .collect()
}

pub fn table(args: &BenchArgs, n: u8) -> Result<ExitCode, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let client: Vec<&'static str> = payhub_properties::presets()
        .into_iter()
        .filter(|p| p.is_client())
        .map(|p| p.name)
        .filter(|p| args.preset.as_deref().is_none_or(|only| only == *p))
        .collect();
    let limit_bytes = args.scope_memory_mib * 1024 * 1024;
    if args.format == Format::Text {
        println!(
            "every client preset at every {n} faults of drops, dups, fail_500, upstream_drops, crashes; check's default search (dfs, requests+por), {} threads, each scope at most {} s and {} MiB (the scopes of fewer faults first: the growth)",
            args.checker_threads, args.scope_timeout, args.scope_memory_mib
        );
    }
    let mut rows: Vec<ScopeRow> = Vec::new();
    for preset in client {
        let mut done: Vec<(Counts, ScopeRow)> = Vec::new();
        for size in 0..=n {
            for c in combinations(size) {
                let growth = {
                    let mut chain = vec![c];
                    while let Some(p) = parent(chain.last().unwrap_or(&c)) {
                        chain.push(p);
                    }
                    chain.reverse();
                    chain
                };
                let find = |s: &Counts| done.iter().find(|(d, _)| d == s).map(|(_, r)| r);
                let cut_parent = parents(&c)
                    .into_iter()
                    .find(|p| find(p).is_some_and(|r| !r.complete && r.unique_states.is_some()));
                let mut row = if let Some(p) = cut_parent {
                    ScopeRow::not_run(preset, &c, format!("not run: {} was cut", text(&p)))
                } else if let Err(setup) = preset_accepts(preset, &c) {
                    // The preset's setup does not run in this scope (its own faults come
                    // on top of a scope's, `Preset::with_scope`, so no client preset
                    // shows this today): no such scope.
                    ScopeRow::not_run(preset, &c, format!("no such scope: {setup}"))
                } else {
                    let c_bench = run_one(&exe, preset, &c, args)?;
                    let outcome = if c_bench.complete {
                        "complete".to_owned()
                    } else if c_bench.peak_rss_bytes.is_some_and(|b| b >= limit_bytes) {
                        "cut by memory".to_owned()
                    } else {
                        "cut by time".to_owned()
                    };
                    ScopeRow {
                        preset,
                        faults: text(&c),
                        size,
                        outcome,
                        complete: c_bench.complete,
                        unique_states: Some(c_bench.unique_states),
                        total_states: Some(c_bench.total_states),
                        seconds: Some(c_bench.seconds),
                        peak_rss_bytes: c_bench.peak_rss_bytes,
                        growth: Vec::new(),
                        estimated_states: None,
                        finish: None,
                    }
                };
                row.growth = growth[..growth.len() - 1]
                    .iter()
                    .map(|s| find(s).and_then(|r| r.complete.then_some(r.unique_states?)))
                    .chain([row.unique_states])
                    .collect();
                // A scope that ran and was cut, or was not run because one it extends was.
                if !row.complete && !row.outcome.starts_with("no such scope") {
                    row.estimated_states = estimate(&c, row.unique_states, &done);
                    row.finish = Some(finish(&row, &c, &done, args));
                }
                if args.format == Format::Text {
                    print_row(&row);
                }
                done.push((c, row));
            }
        }
        rows.extend(done.into_iter().map(|(_, r)| r));
    }
    if args.format == Format::Json {
        println!("{}", crate::outcome::json(&rows)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// The states a cut scope is estimated to have: for each scope `p` it extends by one
/// fault of kind `k`, the states of `p` (or its own estimate, if cut) times the growth
/// of `k`: the ratio `q + k` to `q` of the largest complete pair of scopes measured;
/// the largest of these, and never fewer than the states the cut run reached.
fn estimate(c: &Counts, reached: Option<usize>, done: &[(Counts, ScopeRow)]) -> Option<f64> {
    let of = |s: &Counts| done.iter().find(|(d, _)| d == s).map(|(_, r)| r);
    let growth_of = |k: usize| -> Option<f64> {
        done.iter()
            .filter(|(q, r)| r.complete && q[k] > 0)
            .filter_map(|(q, r)| {
                let mut below = *q;
                below[k] -= 1;
                let b = of(&below).filter(|b| b.complete)?;
                Some((b.unique_states? as f64, r.unique_states? as f64))
            })
            .filter(|(b, _)| *b > 0.0)
            .max_by(|x, y| x.0.total_cmp(&y.0))
            .map(|(b, a)| (a / b).max(1.0))
    };
    let from_parents = (0..c.len())
        .filter(|i| c[*i] > 0)
        .filter_map(|k| {
            let mut p = *c;
            p[k] -= 1;
            let r = of(&p)?;
            let states = if r.complete {
                r.unique_states? as f64
            } else {
                r.estimated_states?
            };
            Some(states * growth_of(k)?)
        })
        .max_by(f64::total_cmp);
    match (from_parents, reached) {
        (Some(e), Some(r)) => Some(e.max(r as f64)),
        (e, r) => e.or(r.map(|r| r as f64)),
    }
}

/// What would finish a cut scope: its estimated states, the time they take at the rate
/// measured (its own run's, else that of the scope it extends that was cut), the memory
/// at its bytes per state; then a bitstate search if the states do not fit the memory
/// bound, more cores or a swarm if they fit but not in time.
fn finish(row: &ScopeRow, c: &Counts, done: &[(Counts, ScopeRow)], args: &BenchArgs) -> String {
    let Some(estimate) = row.estimated_states else {
        return "no complete scopes below it to estimate its growth from".into();
    };
    let of = |s: &Counts| done.iter().find(|(d, _)| d == s).map(|(_, r)| r);
    // The rate and bytes per state: of this run if it ran, else of a cut scope below it.
    let measured = std::iter::once(row)
        .chain(parents(c).iter().filter_map(of))
        .find_map(|r| match (r.unique_states, r.seconds, r.peak_rss_bytes) {
            (Some(u), Some(s), Some(b)) if u > 0 && !r.complete => Some((u as f64, s, b as f64)),
            _ => None,
        });
    let Some((states, seconds, bytes)) = measured else {
        return format!("about {estimate:.2e} states");
    };
    let rate = states / seconds.max(1e-3);
    let time = estimate / rate;
    let memory = estimate * bytes / states;
    let limit = (args.scope_memory_mib * 1024 * 1024) as f64;
    // No growth measured below it: what the cut run reached is all that is known.
    let about = if row.unique_states.is_some_and(|u| u as f64 >= estimate) {
        "at least"
    } else {
        "about"
    };
    let mut text = format!(
        "{about} {estimate:.2e} states, {time:.0} s at {rate:.0} states/s, {:.0} MiB",
        memory / (1024.0 * 1024.0)
    );
    if memory > limit {
        // A quarter of the bound for the bits, the rest for the search's stack.
        let log2 = ((limit / 4.0 * 8.0).log2().floor() as u32).min(35);
        let missed = expected_missed(estimate, 2f64.powi(log2 as i32), f64::from(BITSTATE_HASHES));
        text.push_str(&format!(
            "; fits with --bitstate {log2} (expected to miss about {missed:.0} states)"
        ));
    }
    if time > args.scope_timeout as f64 {
        let shards = (time / args.scope_timeout as f64).ceil();
        text.push_str(&format!(
            "; {shards:.0}x the time bound: a swarm (check --swarm --shard I/{shards:.0}, incomplete) or {shards:.0}x the cores"
        ));
    }
    text
}

/// Whether `preset` with the faults `c` can be set up (its setup may spend faults).
fn preset_accepts(preset: &str, c: &Counts) -> Result<(), String> {
    let p = payhub_properties::preset(preset).ok_or_else(|| format!("no preset {preset}"))?;
    let change = payhub_properties::presets::ScopeChange {
        faults: Knob::FAULTS
            .iter()
            .copied()
            .zip(c.iter().copied())
            .collect(),
        ..Default::default()
    };
    let p = p.with_scope(&change).map_err(|e| e.to_string())?;
    payhub_properties::checker::initial_state(&p)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn run_one(
    exe: &std::path::Path,
    preset: &str,
    c: &Counts,
    args: &BenchArgs,
) -> Result<CheckBench, String> {
    let faults = flag(c);
    let flags: Vec<String> = [
        "--preset",
        preset,
        "--runs",
        "1",
        "--faults",
        &faults,
        "--checker-threads",
        &args.checker_threads.to_string(),
        "--search",
        "dfs",
        "--reduce",
        "requests,por",
        "--timeout",
        &args.scope_timeout.to_string(),
        "--max-memory-mib",
        &args.scope_memory_mib.to_string(),
    ]
    .iter()
    .map(|f| (*f).to_owned())
    .collect();
    super::bench_in_child(exe, &format!("{preset} --faults {faults}"), &flags)
}

fn print_row(r: &ScopeRow) {
    let mib = |b: u64| format!("{:.0} MiB", b as f64 / (1024.0 * 1024.0));
    let growth: Vec<String> = r
        .growth
        .iter()
        .map(|g| g.map_or("?".into(), |u| u.to_string()))
        .collect();
    println!(
        "    {:<24} {} {:<40} {:>11} unique {:>8} {:>9}  {}  growth {}{}",
        r.preset,
        r.size,
        r.faults,
        r.unique_states.map_or("-".into(), |u| u.to_string()),
        r.seconds.map_or("-".into(), |s| format!("{s:.1}s")),
        r.peak_rss_bytes.map_or("-".into(), mib),
        r.outcome,
        growth.join(" -> "),
        r.finish
            .as_ref()
            .map_or(String::new(), |f| format!("; to finish: {f}"))
    );
}

/// The memory bound of a child: `true` once this process holds more than it.
pub fn over_memory() -> bool {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    // Reading /proc costs microseconds: once every 4096 asks.
    if CALLS.fetch_add(1, Relaxed) % 4096 != 0 {
        return false;
    }
    let limit = MEMORY_LIMIT.load(Relaxed);
    limit > 0 && super::rss().is_some_and(|b| b >= limit)
}

/// The bytes `over_memory` allows (0: no bound).
pub static MEMORY_LIMIT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_faults_of_five_knobs_are_thirty_five_scopes() {
        let all = combinations(3);
        assert_eq!(all.len(), 35);
        assert!(all.iter().all(|c| c.iter().sum::<u8>() == 3));
        assert_eq!(text(&all[0]), "drops=3");
        assert_eq!(parent(&[1, 0, 0, 0, 2]), Some([1, 0, 0, 0, 1]));
        assert_eq!(parents(&[1, 0, 0, 0, 2]).len(), 2);
    }
}
