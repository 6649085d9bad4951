//! `payhub-verify simulate`: seeded sweeps; a failing seed is proved, shrunk and saved
//! as a tape (`tapes/seed-N.tape`) and as a what-if script.

use crate::outcome::junit;
use payhub_properties::AlwaysCheck;
use payhub_properties::liveness::LivenessVerdict;
use payhub_sim::driver::{self, RunOutcome};
use payhub_sim::prove::{Shrink, prove};
use payhub_sim::tape::{SimulationArgs, Tape};
use payhub_sim::{Choice, WorldConfig};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

mod args;
mod summary;
#[allow(unused_imports)] // SeedRange and Shard keep their public paths
pub use args::{SeedRange, Shard, SimulateArgs, SweepFormat, WorldArgs};
pub use summary::{GapReached, SimCounterexample, SweepSummary};

fn kind(choice: &Choice) -> String {
    let kind = match choice {
        Choice::Deliver { .. } => "deliver",
        Choice::Drop { .. } => "drop",
        Choice::Duplicate { .. } => "duplicate",
        Choice::Fail500Before { .. } => "500-before",
        Choice::Fail500After { .. } => "500-after",
        Choice::Acquire { decision, .. } => return format!("acquire:{}", decision.as_str()),
        Choice::DeliverUpstream { .. } => "deliver-upstream",
        Choice::DropUpstream { .. } => "drop-upstream",
        Choice::Authenticate { .. } => "authenticate",
        Choice::Command {
            crash_after: true, ..
        } => "command-then-crash",
        Choice::Command { .. } => "command",
        Choice::Crash { .. } => "crash",
        Choice::Restart { .. } => "restart",
        Choice::Control(_) => "control",
        Choice::Send { .. } => "send",
        Choice::Tick => "tick",
        Choice::Advance(_) => "advance",
    };
    kind.to_owned()
}

/// How many failing seeds are shrunk before the shortest is reported.
const SHRINK_CANDIDATES: usize = 8;

struct SeedResult {
    seed: u64,
    outcome: RunOutcome,
    answers: Vec<String>,
    /// The liveness verdict after healing, when no safety property failed.
    liveness: LivenessVerdict,
}

fn run_one(config: &WorldConfig, args: &SimulationArgs, seed: u64) -> SeedResult {
    let profile = args.profile(seed);
    let mut check = AlwaysCheck { config };
    let (world, outcome) = driver::run_seed(config, seed, &profile, args.steps, &mut check, None);
    let world_answers = world
        .facts
        .queries
        .answers
        .iter()
        .map(|(status, code)| match code {
            Some(c) => format!("{status} {}", c.as_str()),
            None => status.to_string(),
        })
        .collect();
    let liveness = if outcome.violation.is_none() {
        payhub_properties::liveness::verdict(config, world, &outcome.tape)
    } else {
        LivenessVerdict::Resolved
    };
    SeedResult {
        seed,
        outcome,
        answers: world_answers,
        liveness,
    }
}

pub fn run(args: &SimulateArgs) -> Result<ExitCode, String> {
    let settings = args.world.simulation();
    let config = settings.config().map_err(|e| e.to_string())?;
    let seeds = match args.shard {
        None => Seeds::range(args.seeds.start, args.seeds.end),
        Some(sh) => Seeds {
            start: args.seeds.start,
            end: args.seeds.end,
            offset: u64::from(sh.index),
            stride: u64::from(sh.count),
        },
    };
    if seeds.is_empty() {
        return Err(format!(
            "nothing to check: shard {} of seeds {}..{} holds no seed",
            args.shard
                .map(|s| format!("{}/{}", s.index, s.count))
                .unwrap_or_default(),
            args.seeds.start,
            args.seeds.end
        ));
    }
    let out = crate::usage::out_dir(args.out.as_deref())?;
    crate::interrupt::install();
    let bounds = Bounds {
        deadline: args.timeout.map(|s| {
            (
                std::time::Instant::now() + std::time::Duration::from_secs(s),
                s,
            )
        }),
        progress: args.format == SweepFormat::Text,
    };
    let summary = sweep(&config, &settings, seeds, args.threads, &out, &bounds)?;
    match args.format {
        SweepFormat::Json => println!("{}", crate::outcome::json(&summary)?),
        SweepFormat::Text => print_summary(&config, args, &summary),
        SweepFormat::Junit => {
            let sweep = crate::report::outcome::sweep("simulate", &summary);
            print!("{}", junit::of("payhub-verify simulate", vec![sweep]))
        }
        SweepFormat::Script => match &summary.counterexample {
            Some(cx) => match (&cx.script, &cx.no_script) {
                (Some(script), _) => print!("{script}"),
                (None, why) => eprintln!(
                    "this counterexample cannot be written as a script ({}); it replays with: {}",
                    why.as_deref().unwrap_or("unknown reason"),
                    cx.replay
                ),
            },
            None => eprintln!("no counterexample: nothing to write as a script"),
        },
    }
    Ok(ExitCode::from(summary.exit_code()))
}

/// What may stop a sweep early, and whether it shows progress on a terminal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bounds {
    /// Stop at this instant (`--timeout SECONDS`, the seconds given).
    pub deadline: Option<(std::time::Instant, u64)>,
    /// A progress bar on stderr, if it is a terminal.
    pub progress: bool,
}

/// The seeds of a sweep, without holding them: `start..end`, every `stride`-th from
/// `start + offset` (a shard). `simulate --seeds 0..100000000` takes no memory for them.
#[derive(Clone, Copy, Debug)]
pub struct Seeds {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    pub stride: u64,
}

impl Seeds {
    /// `start..end`, all of them.
    pub fn range(start: u64, end: u64) -> Seeds {
        Seeds {
            start,
            end,
            offset: 0,
            stride: 1,
        }
    }

    pub fn len(&self) -> u64 {
        let first = self.start.saturating_add(self.offset);
        if first >= self.end {
            0
        } else {
            (self.end - first).div_ceil(self.stride)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: u64) -> Option<u64> {
        (i < self.len()).then(|| self.start + self.offset + i * self.stride)
    }
}

/// What one worker found, folded as it goes: memory does not grow with the seeds.
#[derive(Default)]
struct Acc {
    done: u64,
    steps: u64,
    choices: BTreeMap<String, u64>,
    answers: BTreeMap<String, u64>,
    violations: u64,
    /// The smallest violating seeds this worker ran, with their tapes (at most
    /// [`SHRINK_CANDIDATES`]): the global smallest are among the workers' smallest.
    violating: Vec<SeedResult>,
    liveness: u64,
    first_liveness: Option<(u64, String)>,
    /// Per assumption: runs, and the smallest seed with its detail.
    gaps: BTreeMap<&'static str, (u64, u64, String)>,
    /// Per violated property: runs, and the smallest seed with its detail.
    by_property: BTreeMap<String, (u64, u64, String)>,
}

impl Acc {
    fn absorb(&mut self, r: SeedResult) {
        self.done += 1;
        self.steps += r.outcome.steps as u64;
        for c in &r.outcome.tape {
            *self.choices.entry(kind(c)).or_default() += 1;
        }
        for a in &r.answers {
            *self.answers.entry(a.clone()).or_default() += 1;
        }
        match &r.liveness {
            LivenessVerdict::Resolved => {}
            LivenessVerdict::Unresolved(u) => {
                self.liveness += 1;
                if self
                    .first_liveness
                    .as_ref()
                    .is_none_or(|(s, _)| r.seed < *s)
                {
                    self.first_liveness = Some((r.seed, u.detail.clone()));
                }
            }
            // A healed run is judged whole: never incomplete; were it, it is listed with
            // the gaps, neither a pass nor a violation.
            LivenessVerdict::Incomplete(detail) => {
                let gap = self
                    .gaps
                    .entry("not judged")
                    .or_insert((0, r.seed, detail.clone()));
                gap.0 += 1;
            }
            LivenessVerdict::Gap { assumption, detail } => {
                let gap = self
                    .gaps
                    .entry(assumption.id())
                    .or_insert((0, r.seed, detail.clone()));
                gap.0 += 1;
                if r.seed < gap.1 {
                    (gap.1, gap.2) = (r.seed, detail.clone());
                }
            }
        }
        if let Some(v) = &r.outcome.violation {
            let first =
                self.by_property
                    .entry(v.property.clone())
                    .or_insert((0, r.seed, v.detail.clone()));
            first.0 += 1;
            if r.seed < first.1 {
                (first.1, first.2) = (r.seed, v.detail.clone());
            }
        }
        if r.outcome.violation.is_some() {
            self.violations += 1;
            self.violating.push(r);
            self.violating.sort_by_key(|r| r.seed);
            self.violating.truncate(SHRINK_CANDIDATES);
        }
    }
}

impl payhub_sim::sweep::Fold for Acc {
    fn merge(&mut self, other: Acc) {
        self.done += other.done;
        self.steps += other.steps;
        for (k, n) in other.choices {
            *self.choices.entry(k).or_default() += n;
        }
        for (k, n) in other.answers {
            *self.answers.entry(k).or_default() += n;
        }
        self.violations += other.violations;
        self.violating.extend(other.violating);
        self.violating.sort_by_key(|r| r.seed);
        self.violating.truncate(SHRINK_CANDIDATES);
        self.liveness += other.liveness;
        if let Some((seed, u)) = other.first_liveness
            && self.first_liveness.as_ref().is_none_or(|(s, _)| seed < *s)
        {
            self.first_liveness = Some((seed, u));
        }
        for (name, (runs, seed, detail)) in other.by_property {
            let first = self
                .by_property
                .entry(name)
                .or_insert((0, seed, detail.clone()));
            first.0 += runs;
            if seed < first.1 {
                (first.1, first.2) = (seed, detail);
            }
        }
        for (id, (runs, seed, detail)) in other.gaps {
            let gap = self.gaps.entry(id).or_insert((0, seed, detail.clone()));
            gap.0 += runs;
            if seed < gap.1 {
                (gap.1, gap.2) = (seed, detail);
            }
        }
    }
}

/// Runs `seeds` on `config` over `threads` workers (the result does not depend on
/// the thread count), shrinks the first failures and saves the shortest one's tape.
pub fn sweep(
    config: &WorldConfig,
    world: &SimulationArgs,
    seeds: Seeds,
    threads: usize,
    out: &Path,
    bounds: &Bounds,
) -> Result<SweepSummary, String> {
    let bar = crate::progress::Bar::new(bounds.progress, seeds.len(), "seeds");
    let stop_now = || {
        crate::interrupt::requested()
            || bounds
                .deadline
                .is_some_and(|(at, _)| std::time::Instant::now() >= at)
    };
    let (acc, swept) = payhub_sim::sweep::fan_out(
        threads,
        |i| seeds.get(i),
        &stop_now,
        |seed, acc: &mut Acc| {
            acc.absorb(run_one(config, world, seed));
            bar.inc();
        },
    );
    bar.done();

    let replay = |seed: u64| format!("payhub-verify replay --seed {seed} {}", world.flags());
    let mut summary = SweepSummary {
        seeds: acc.done,
        seeds_asked: seeds.len(),
        steps: acc.steps,
        violations: acc.violations,
        liveness_failures: acc.liveness,
        choices: acc.choices,
        answers: acc.answers,
        ..SweepSummary::default()
    };
    if let Some((seed, u)) = &acc.first_liveness {
        summary.first_liveness_failure = Some(format!("seed {seed}: {u}"));
        summary.first_liveness_replay = Some(replay(*seed));
    }
    for (id, (runs, seed, detail)) in &acc.gaps {
        summary.gaps_reached.insert(
            (*id).to_owned(),
            GapReached {
                runs: *runs,
                first: format!("seed {seed}: {detail}"),
                replay: replay(*seed),
            },
        );
    }
    for (name, (runs, seed, detail)) in &acc.by_property {
        summary.violations_by_property.insert(
            name.clone(),
            GapReached {
                runs: *runs,
                first: format!("seed {seed}: {detail}"),
                replay: replay(*seed),
            },
        );
    }
    if swept.stopped && acc.done < seeds.len() {
        summary.incomplete = Some(match bounds.deadline {
            Some((at, secs)) if std::time::Instant::now() >= at => format!("--timeout {secs}"),
            _ => "interrupted (Ctrl-C)".to_owned(),
        });
        summary.first_not_run = seeds.get(acc.done);
    }
    let results = acc.violating;
    // Shrink the first few failing seeds and report the shortest counterexample.
    let mut best: Option<SimCounterexample> = None;
    for failing in results
        .iter()
        .filter(|r| r.outcome.violation.is_some())
        .take(SHRINK_CANDIDATES)
    {
        let cx = shrink_and_save(config, world, failing, out)?;
        if best.as_ref().is_none_or(|b| cx.tape.len() < b.tape.len()) {
            best = Some(cx);
        }
    }
    summary.counterexample = best;
    Ok(summary)
}

/// Proves and shrinks a failing seed's run, and saves it as a tape and (if it can be
/// one) as a what-if script.
fn shrink_and_save(
    config: &WorldConfig,
    args: &SimulationArgs,
    r: &SeedResult,
    out: &Path,
) -> Result<SimCounterexample, String> {
    let mut check = AlwaysCheck { config };
    let cx = prove(config, &r.outcome.tape, &mut check, Shrink::Yes)
        .map_err(|e| format!("seed {}: {e}", r.seed))?;
    let dir = out.join("tapes");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = tape_name(args, r.seed);
    let file = dir.join(format!("{name}.tape"));
    let tape = Tape::new(args.clone(), Some(r.seed), cx.choices.clone());
    write_new(&file, &tape.to_json())?;
    let about = format!(
        "counterexample of seed {} ({}): {}",
        r.seed, config.name, cx.property
    );
    let (script, no_script, script_file) = match cx.script(&mut check, &about) {
        Ok(text) => {
            let path = dir.join(format!("{name}.pha"));
            write_new(&path, &text)?;
            (Some(text), None, Some(path.display().to_string()))
        }
        Err(e) => (None, Some(e.to_string()), None),
    };
    let verdict = format!("VIOLATED {}: {}", cx.property, cx.detail);
    let diagram = cx.trace.to_diagram(Some(&verdict), |_| false);
    Ok(SimCounterexample {
        seed: r.seed,
        profile: args.profile(r.seed).key_values(),
        tape: cx.labels(),
        trace: cx.trace.to_text(),
        mermaid: diagram.to_mermaid(),
        diagram,
        property: cx.property,
        detail: cx.detail,
        original_steps: r.outcome.steps,
        tape_file: file.display().to_string(),
        replay: format!("payhub-verify replay --tape {}", file.display()),
        script,
        no_script,
        script_file,
    })
}

/// A counterexample's file name, from what it depends on: the policy, the world's and
/// driver's settings (the fault profile is drawn from the seed unless `--no-swarm`), and
/// the seed: `reference.clients-2.steps-400.seed-17`.
pub fn tape_name(args: &SimulationArgs, seed: u64) -> String {
    format!(
        "{}.clients-{}.steps-{}{}.seed-{seed}",
        args.policy.replace(['+', ','], "+"),
        args.clients,
        args.steps,
        if args.no_swarm { ".no-swarm" } else { "" }
    )
}

/// Writes `text` to `path`; a file there with other content (written by another build of
/// the model) is replaced, and stderr says so: never silently.
fn write_new(path: &Path, text: &str) -> Result<(), String> {
    if let Ok(old) = std::fs::read_to_string(path)
        && old != text
    {
        eprintln!(
            "payhub-verify: replacing {} (its content differs: written by another build)",
            path.display()
        );
    }
    crate::whole_file::write(path, text)
}

fn print_summary(config: &WorldConfig, args: &SimulateArgs, s: &SweepSummary) {
    let shard = args.shard.map(|s| format!("{}/{}", s.index, s.count));
    let (start, end) = (args.seeds.start, args.seeds.end);
    let mut out = vec![
        format!("world: {}", config.name),
        format!(
            "seeds={start}..{end} shard={} runs={} steps={} (max {} per run)",
            shard.as_deref().unwrap_or("-"),
            s.seeds,
            s.steps,
            args.world.steps
        ),
        "choices applied:".to_owned(),
    ];
    out.extend(s.choices.iter().map(|(k, n)| format!("    {k:<26} {n}")));
    out.push("answers (runs in which each occurred):".to_owned());
    out.extend(s.answers.iter().map(|(k, n)| format!("    {k:<34} {n}")));
    let first = s.first_liveness_failure.as_ref();
    out.push(format!(
        "{}: {} runs healed (faults stopped, 25 h) with a submission still unresolved{}",
        payhub_properties::liveness::NAME,
        s.liveness_failures,
        first.map(|f| format!("; first: {f}")).unwrap_or_default()
    ));
    out.extend(
        s.first_liveness_replay
            .iter()
            .map(|r| format!("    reproduce: {r}")),
    );
    out.extend(s.gaps_reached.iter().map(|(id, gap)| format!(
        "contract finding {id}: reached in {} runs, as assumed (not a failure); first: {}\n    reproduce: {}",
        gap.runs, gap.first, gap.replay
    )));
    let flags = args.world.simulation().flags();
    let again = |seeds: String| match &shard {
        Some(sh) => format!("payhub-verify simulate --seeds {seeds} --shard {sh} {flags}"),
        None => format!("payhub-verify simulate --seeds {seeds} {flags}"),
    };
    match (&s.counterexample, &s.incomplete) {
        (None, _) if s.liveness_failures > 0 => out.push(format!(
            "FAILED: {} of {} runs left a submission unresolved after healing ({})",
            s.liveness_failures,
            s.seeds,
            payhub_properties::liveness::NAME
        )),
        (None, Some(why)) => {
            out.push(format!("not judged (incomplete): stopped by {why} after {} of {} runs, none violated a property", s.seeds, s.seeds_asked));
            out.push(format!("reproduce: {}", again(format!("{start}..{end}"))));
            if let (Some(first), None) = (s.first_not_run, args.shard) {
                out.push(format!(" continue: {}", again(format!("{first}..{end}"))));
            }
        }
        (None, None) => out.push(format!("PASSED: no property violated in {} runs", s.seeds)),
        (Some(cx), _) => {
            let rules = payhub_properties::rules_of(&cx.property).join(", ");
            out.push(format!(
                "FAILED: {} of {} runs violated a property\nSEED={} {}\nviolation: {} [{rules}]: {}\nshrunk from {} to {} choices:\n{}reproduce: {}",
                s.violations, s.seeds, cx.seed, cx.profile, cx.property, cx.detail,
                cx.original_steps, cx.tape.len(), cx.trace, cx.replay
            ));
            match (&cx.script_file, &cx.no_script) {
                (Some(file), _) => out.push(format!("   script: payhub-verify run {file}")),
                (None, Some(why)) => out.push(format!("   (no script: {why})")),
                (None, None) => {}
            }
            out.push(format!(
                "       or: payhub-verify replay --seed {} {flags}",
                cx.seed
            ));
        }
    }
    println!("{}", out.join("\n"));
}
