//! The kill matrix: every subject tried ([`kill`]), the reference configurations run
//! through the same methods, the whole in parallel ([`run`]).

use super::ZooError;
use super::explore::{Explored, Found, explore, sweep};
use super::presets::{client_order, platform_order};
use super::{Side, Subject};
use crate::presets::Preset;
use payhub_model::client::Policy;
use payhub_sim::{WorldConfig, worlds};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// How the zoo runs.
#[derive(Clone, Copy, Debug)]
pub struct ZooOptions {
    /// Worker threads: subjects and reference configurations run in parallel, each
    /// exploration single-threaded (the results do not depend on it).
    pub threads: usize,
    /// Seeds of a simulation sweep.
    pub seeds: u64,
    /// Most choices per seed.
    pub steps: usize,
    /// Whether to run the reference configurations too.
    pub references: bool,
    /// Progress and stop requests, shared with the caller (a progress bar, Ctrl-C): `None`
    /// runs every job and reports nothing on the way.
    pub control: Option<&'static ZooControl>,
}

/// How a caller follows a zoo run and stops it: jobs done of jobs in all, and a stop flag
/// the workers read before each job (a stopped run's matrix is marked incomplete).
#[derive(Debug, Default)]
pub struct ZooControl {
    pub done: AtomicUsize,
    pub total: AtomicUsize,
    pub stop: std::sync::atomic::AtomicBool,
}

impl ZooControl {
    pub const fn new() -> ZooControl {
        ZooControl {
            done: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
            stop: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

impl Default for ZooOptions {
    fn default() -> Self {
        ZooOptions {
            threads: 2,
            seeds: 2_000,
            steps: 400,
            references: true,
            control: None,
        }
    }
}

/// One method tried on a subject or a reference configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Tried {
    /// `exhaustive:<preset>` or `simulation`.
    pub method: String,
    pub states_or_seeds: u64,
    pub seconds: f64,
    pub complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caught_by: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// One line of the kill matrix.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MutantRow {
    pub name: &'static str,
    pub side: Side,
    pub about: &'static str,
    /// The contract rules the bug breaks.
    pub rules: Vec<&'static str>,
    pub killed: bool,
    /// The property that caught it.
    pub property: Option<&'static str>,
    /// `exhaustive:<preset>` or `simulation`.
    pub method: Option<String>,
    /// Time to the first counterexample (every method tried before it included).
    pub seconds: f64,
    /// Unique states (exhaustive) or seeds (simulation), summed over the methods tried.
    pub states_or_seeds: u64,
    /// Length of the shrunk counterexample, in choices from the initial world.
    pub counterexample_steps: Option<usize>,
    /// Choices from the initial world (a preset setup included) to the first violation, before shrinking.
    pub found_steps: Option<usize>,
    pub detail: Option<String>,
    /// The world the counterexample runs in (a preset's name, or the simulation world).
    pub world: Option<String>,
    /// The shrunk counterexample as choice labels: a replayable tape.
    pub tape: Vec<String>,
    pub tried: Vec<Tried>,
    /// The counterexample, proved on its world: choices, trace, script.
    #[serde(skip)]
    pub counterexample: Option<Found>,
}

/// A reference configuration run through one method: nothing may be caught.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReferenceRow {
    pub name: String,
    pub method: String,
    pub caught: bool,
    pub complete: bool,
    pub property: Option<&'static str>,
    pub detail: Option<String>,
    pub tape: Vec<String>,
    pub seconds: f64,
    pub states_or_seeds: u64,
    pub tried: Vec<Tried>,
}

/// The kill matrix.
#[derive(Clone, Debug, Serialize)]
pub struct KillMatrix {
    pub mutants: Vec<MutantRow>,
    pub references: Vec<ReferenceRow>,
    pub killed: usize,
    pub total: usize,
    /// Median and largest time to the first counterexample over the killed subjects.
    pub median_seconds: f64,
    pub max_seconds: f64,
    /// Wall time of the whole run.
    pub seconds: f64,
    pub threads: usize,
    /// Why the run stopped before every job ran (`interrupted (Ctrl-C) after 12 of 86
    /// jobs`): the matrix then holds only the jobs that ran, and claims nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

impl KillMatrix {
    /// Subjects no property caught.
    pub fn survivors(&self) -> Vec<&MutantRow> {
        self.mutants.iter().filter(|m| !m.killed).collect()
    }

    /// Reference configurations that something caught, or that did not complete.
    pub fn reference_failures(&self) -> Vec<&ReferenceRow> {
        self.references
            .iter()
            .filter(|r| r.caught || !r.complete)
            .collect()
    }

    /// Whether some reference configuration was caught by a property.
    pub fn reference_caught(&self) -> bool {
        self.references.iter().any(|r| r.caught)
    }

    /// Whether some reference configuration could not be explored completely (nothing
    /// can then be claimed about it).
    pub fn reference_incomplete(&self) -> bool {
        self.references.iter().any(|r| !r.complete)
    }

    /// Every subject killed, no reference configuration caught, every one complete.
    pub fn passed(&self) -> bool {
        self.survivors().is_empty() && self.reference_failures().is_empty()
    }

    /// The row of a subject.
    pub fn row(&self, name: &str) -> Option<&MutantRow> {
        self.mutants.iter().find(|m| m.name == name)
    }
}

fn tried(method: String, e: &Explored) -> Tried {
    Tried {
        method,
        states_or_seeds: e.states,
        seconds: e.seconds,
        complete: e.complete,
        caught_by: e.found.as_ref().map(|f| f.property.name),
        skipped: e.skipped.clone(),
    }
}

/// Tries to kill one subject: the presets in order, then a simulation sweep.
pub fn kill(subject: Subject, options: &ZooOptions) -> Result<MutantRow, ZooError> {
    let started = Instant::now();
    let mut row = MutantRow {
        name: subject.name(),
        side: subject.side(),
        about: subject.about(),
        rules: subject.rules().iter().map(|r| r.id()).collect(),
        ..MutantRow::default()
    };
    let finish = |row: &mut MutantRow, method: String, e: Explored| {
        row.states_or_seeds += e.states;
        row.tried.push(tried(method.clone(), &e));
        if let Some(found) = e.found {
            row.killed = true;
            row.property = Some(found.property.name);
            row.method = Some(method);
            row.counterexample_steps = Some(found.proof.choices.len());
            row.found_steps = Some(found.proof.found_steps);
            row.detail = Some(found.proof.detail.clone());
            row.tape = found.proof.labels();
            row.world = Some(found.proof.config.name.clone());
            row.counterexample = Some(found);
            row.seconds = started.elapsed().as_secs_f64();
            true
        } else {
            false
        }
    };
    // Iterative broadening: every preset up to a small state budget, then a larger one,
    // then all of it. BFS finds the shortest counterexamples first, and most are a few
    // steps deep, so a bug is caught early wherever it hides; the re-exploration costs at
    // most a tenth more.
    let mut remaining = subject.presets();
    for budget in PASSES {
        let mut next = Vec::new();
        for preset in remaining {
            let e = explore(&preset, *budget)?;
            let unfinished = !e.complete;
            if finish(&mut row, format!("exhaustive:{}", preset.name), e) {
                return Ok(row);
            }
            if unfinished {
                next.push(preset);
            }
        }
        remaining = next;
    }
    let e = sweep(&subject.simulation(), options.seeds, options.steps)?;
    finish(&mut row, "simulation".into(), e);
    row.seconds = started.elapsed().as_secs_f64();
    Ok(row)
}

/// State budgets of the passes over the presets (see [`kill`]).
/// The last one bounds memory: a preset not done by then is left unexplored for this
/// subject (reported in `tried` as incomplete).
const PASSES: &[Option<usize>] = &[Some(3_000), Some(30_000), Some(REFERENCE_BUDGET)];

/// States (generated, repeats included) a reference exploration may take: far above the
/// largest preset (about 312,000), low enough to bound memory if a preset grows by mistake.
const REFERENCE_BUDGET: usize = 1_500_000;

/// A unit of work of [`run`].
enum Job {
    Kill(Subject),
    Preset {
        reference: usize,
        preset: Preset,
    },
    Sweep {
        reference: usize,
        config: WorldConfig,
    },
}

/// The jobs a worker of the matrix ran, each with its index in the job list.
#[derive(Default)]
struct Done(Vec<(usize, Result<JobResult, ZooError>)>);

impl payhub_sim::sweep::Fold for Done {
    fn merge(&mut self, other: Done) {
        self.0.extend(other.0);
    }
}

enum JobResult {
    Kill(MutantRow),
    Reference {
        reference: usize,
        method: String,
        explored: Explored,
    },
}

/// The reference configurations: (name, presets, simulation world).
fn reference_configurations() -> Vec<(String, Vec<Preset>, WorldConfig)> {
    vec![
        (
            "reference platform, reference client (deterministic keys)".into(),
            platform_order(),
            worlds::simulation(&Policy::reference(), 2),
        ),
        (
            "reference platform, reference client (random keys)".into(),
            client_order(&Policy::reference_random()),
            worlds::simulation(&Policy::reference_random(), 2),
        ),
    ]
}

/// Runs the zoo on `subjects` (and the reference configurations if asked).
pub fn run(subjects: &[Subject], options: &ZooOptions) -> Result<KillMatrix, ZooError> {
    let started = Instant::now();
    let references = if options.references {
        reference_configurations()
    } else {
        Vec::new()
    };
    let mut jobs: Vec<Job> = Vec::new();
    // The reference presets first: they are the longest single jobs.
    for (i, (_, presets, _)) in references.iter().enumerate() {
        for p in presets {
            jobs.push(Job::Preset {
                reference: i,
                preset: p.clone(),
            });
        }
    }
    jobs.extend(subjects.iter().map(|s| Job::Kill(*s)));
    for (i, (_, _, config)) in references.iter().enumerate() {
        jobs.push(Job::Sweep {
            reference: i,
            config: config.clone(),
        });
    }
    if let Some(c) = options.control {
        c.total.store(jobs.len(), Ordering::SeqCst);
    }
    let stopped = || options.control.is_some_and(ZooControl::stopped);
    let (Done(mut results), _) = payhub_sim::sweep::fan_out(
        options.threads,
        |i| (i < jobs.len() as u64).then_some(i),
        &stopped,
        |i, done: &mut Done| {
            let i = i as usize;
            let result = match &jobs[i] {
                Job::Kill(s) => kill(*s, options).map(JobResult::Kill),
                Job::Preset { reference, preset } => {
                    explore(preset, Some(REFERENCE_BUDGET)).map(|explored| JobResult::Reference {
                        reference: *reference,
                        method: format!("exhaustive:{}", preset.name),
                        explored,
                    })
                }
                Job::Sweep { reference, config } => sweep(config, options.seeds, options.steps)
                    .map(|explored| JobResult::Reference {
                        reference: *reference,
                        method: "simulation".into(),
                        explored,
                    }),
            };
            done.0.push((i, result));
            if let Some(c) = options.control {
                c.done.fetch_add(1, Ordering::SeqCst);
            }
        },
    );
    results.sort_by_key(|(i, _)| *i);
    let incomplete = (results.len() < jobs.len()).then(|| {
        format!(
            "interrupted (Ctrl-C) after {} of {} jobs",
            results.len(),
            jobs.len()
        )
    });
    let ran: Vec<usize> = results.iter().map(|(i, _)| *i).collect();
    let mut mutants = Vec::new();
    let mut rows = ReferenceRows::default();
    for (_, result) in results {
        match result? {
            JobResult::Kill(row) => mutants.push(row),
            JobResult::Reference {
                reference,
                method,
                explored,
            } => rows.add(&references[reference], reference, options, method, explored),
        }
    }
    rows.cut_short(&jobs, &ran);
    let mut times: Vec<f64> = mutants
        .iter()
        .filter(|m: &&MutantRow| m.killed)
        .map(|m| m.seconds)
        .collect();
    let median_seconds = median(&mut times);
    Ok(KillMatrix {
        killed: mutants.iter().filter(|m: &&MutantRow| m.killed).count(),
        total: mutants.len(),
        mutants,
        references: rows.0.into_values().collect(),
        median_seconds,
        max_seconds: times.last().copied().unwrap_or(0.0),
        seconds: started.elapsed().as_secs_f64(),
        threads: options.threads.max(1),
        incomplete,
    })
}

/// The reference rows, by (reference configuration, exhaustive?): each aggregates the
/// methods run on that configuration.
#[derive(Default)]
struct ReferenceRows(BTreeMap<(usize, bool), ReferenceRow>);

impl ReferenceRows {
    /// A run stopped before some of a row's jobs ran (Ctrl-C): "nothing caught" would
    /// claim presets that never ran, so the row is incomplete and says how many did not.
    fn cut_short(&mut self, jobs: &[Job], ran: &[usize]) {
        let mut missing: BTreeMap<(usize, bool), usize> = BTreeMap::new();
        for (i, job) in jobs.iter().enumerate() {
            let key = match job {
                Job::Preset { reference, .. } => (*reference, true),
                Job::Sweep { reference, .. } => (*reference, false),
                Job::Kill(_) => continue,
            };
            if !ran.contains(&i) {
                *missing.entry(key).or_default() += 1;
            }
        }
        for (key, n) in missing {
            if let Some(row) = self.0.get_mut(&key) {
                row.complete = false;
                let why = format!("interrupted before {n} of its jobs ran");
                row.detail = Some(match row.detail.take() {
                    Some(d) if row.caught => d,
                    Some(d) => format!("{why}; {d}"),
                    None => why,
                });
            }
        }
    }

    fn add(
        &mut self,
        (name, presets, _): &(String, Vec<Preset>, WorldConfig),
        reference: usize,
        options: &ZooOptions,
        method: String,
        explored: Explored,
    ) {
        let exhaustive = method.starts_with("exhaustive");
        let row = self
            .0
            .entry((reference, exhaustive))
            .or_insert_with(|| ReferenceRow {
                name: name.clone(),
                method: if exhaustive {
                    format!("exhaustive ({} presets)", presets.len())
                } else {
                    format!("simulation ({} seeds)", options.seeds)
                },
                complete: true,
                ..ReferenceRow::default()
            });
        row.tried.push(tried(method.clone(), &explored));
        row.seconds += explored.seconds;
        row.states_or_seeds += explored.states;
        row.complete &= explored.complete && explored.skipped.is_none();
        if let (false, Some(found)) = (row.caught, explored.found) {
            row.caught = true;
            row.property = Some(found.property.name);
            row.detail = Some(format!("{method}: {}", found.proof.detail));
            row.tape = found.proof.labels();
        }
        if let Some(why) = explored.skipped {
            row.detail.get_or_insert(format!("{method}: {why}"));
        }
    }
}

/// The median of `values` (sorted in place; the mean of the middle two for an even
/// count, 0 for none): the zoo's time to a first counterexample, `bench`'s run times.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(caught: bool) -> ReferenceRow {
        ReferenceRow {
            name: "reference".into(),
            method: "exhaustive (2 presets)".into(),
            caught,
            complete: true,
            property: None,
            detail: caught.then(|| "exhaustive:x: found".to_owned()),
            tape: Vec::new(),
            seconds: 0.0,
            states_or_seeds: 1,
            tried: Vec::new(),
        }
    }

    /// A Ctrl-C that stops the zoo after one of a reference's two presets ran: the row
    /// is incomplete and says so, never "nothing caught" over the preset that ran.
    #[test]
    fn a_reference_row_cut_short_is_incomplete() {
        let presets = platform_order();
        let jobs: Vec<Job> = presets[..2]
            .iter()
            .map(|p| Job::Preset {
                reference: 0,
                preset: p.clone(),
            })
            .collect();
        for caught in [false, true] {
            let mut rows = ReferenceRows::default();
            rows.0.insert((0, true), row(caught));
            rows.cut_short(&jobs, &[0]);
            let r = &rows.0[&(0, true)];
            assert!(!r.complete);
            let detail = r.detail.as_deref().unwrap_or_default();
            assert_eq!(
                detail.contains("interrupted before 1 of its jobs ran"),
                !caught,
                "{detail}"
            );
            // Every job ran: nothing changes.
            let mut rows = ReferenceRows::default();
            rows.0.insert((0, true), row(caught));
            rows.cut_short(&jobs, &[0, 1]);
            assert!(rows.0[&(0, true)].complete);
        }
    }
}
