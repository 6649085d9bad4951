//! `payhub-verify verify` (the default run): every preset exhaustively, a simulation
//! sweep of the reference client, a seeded chaos sweep, the contract's scenarios and
//! findings as scripts, and the bug zoo; then the report.

use crate::script_cmd;
use crate::simulate_cmd;
use payhub_properties::AlwaysCheck;
use payhub_properties::checker::shortcuts::{self, Planted};
use payhub_properties::checker::{Limits, Order, Search};
use payhub_properties::presets;
use payhub_properties::zoo::Subject;
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::tape::SimulationArgs;
use payhub_sim::worlds;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub mod coverage;
pub mod readings;
pub mod report;

use report::{Example, Phase, Report, ScenarioResult, Shortcuts, ZooReport};

#[derive(clap::Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Seeds of the reference-client simulation sweep (at least 1).
    #[arg(long, default_value_t = 10_000, value_parser = crate::usage::seeds)]
    pub seeds: u64,
    /// Worker threads (checker and sweeps; results do not depend on it).
    #[arg(long, default_value_t = 2, value_parser = crate::usage::threads)]
    pub threads: usize,
    /// A quick run: the presets depth-first with the sound reductions (the same
    /// verdicts, fewer states), 1,000 seeds, 200 of chaos, and the bug zoo on 500 seeds
    /// without its reference configurations.
    #[arg(long)]
    pub quick: bool,
    /// Only this checker preset (default: all).
    #[arg(long)]
    pub preset: Option<String>,
    /// Stop each preset after this many generated states, repeats included (the run is
    /// then incomplete: exit 3).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_states: Option<u64>,
    /// Stop each preset after this many seconds (incomplete: exit 3).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Skip the bug zoo and the edge zoo (the edges' end-to-end checks still run).
    #[arg(long)]
    pub no_mutants: bool,
    /// Plant this bug of the zoo (`mutants --list`) and check the presets the zoo tries
    /// for it, the bug in (with --preset: that one): the run fails where a property
    /// catches the bug. The simulation, chaos, scripts and the zoo are not run (they run
    /// the reference platform, or are the zoo).
    #[arg(long, value_name = "NAME")]
    pub mutant: Option<String>,
    /// Plant an unsound shortcut of the search in place of the real ones, where `verify`
    /// cross-checks them (`forgets_facts`, `delivers_any_answer_first`): the run fails
    /// there. The simulation, chaos, scripts, edges and the zoo are not run.
    #[arg(long, value_name = "NAME")]
    pub unsound_shortcut: Option<String>,
    /// Report folder (Markdown and JSON; default: target/payhub-report in the repository,
    /// or in the current folder outside it).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Output format of the summary on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: VerifyFormat,
}

/// How `verify` searches its presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresetSearch {
    /// Every state, breadth-first: the state counts the report prints are the model's own.
    Every,
    /// Depth-first with canonical request ids and the partial-order reduction
    /// (`check --search dfs --reduce requests,por`): the same verdicts and the same
    /// witnesses reached on every preset (`properties/tests/reduction.rs`) for about a
    /// quarter of the work. `verify --quick` searches so.
    Reduced,
}

impl PresetSearch {
    /// In the report's words.
    pub fn describe(self) -> &'static str {
        match self {
            PresetSearch::Every => "breadth-first, every state",
            PresetSearch::Reduced => "depth-first, reduced: requests, por",
        }
    }

    fn search(self) -> Search {
        match self {
            PresetSearch::Every => Search::default(),
            PresetSearch::Reduced => Search {
                order: Order::Depth,
                ..crate::check_cmd::Reduction::search(&[
                    crate::check_cmd::Reduction::Requests,
                    crate::check_cmd::Reduction::Por,
                ])
            },
        }
    }
}

/// How `verify` prints its summary (the report's files are written either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VerifyFormat {
    Text,
    Json,
    /// JUnit XML: a test case per property of each preset and of the sweep, per
    /// scenario and per mutant (docs/ci.md).
    Junit,
    /// The report as one self-contained HTML page (also written as `report.html`).
    Html,
}

impl Default for VerifyArgs {
    fn default() -> Self {
        VerifyArgs {
            seeds: 10_000,
            threads: 2,
            quick: false,
            preset: None,
            max_states: None,
            timeout: None,
            no_mutants: false,
            mutant: None,
            unsound_shortcut: None,
            out: None,
            format: VerifyFormat::Text,
        }
    }
}

/// The zoo's progress and stop flag for this process (one `verify` run).
static ZOO: payhub_properties::zoo::ZooControl = payhub_properties::zoo::ZooControl::new();

/// The parts of a run, in order, for what an interrupted run did not reach.
const PARTS: [&str; 6] = [
    "presets",
    "simulation sweep",
    "chaos",
    "scripts",
    "edges",
    "bug zoo",
];

/// `interrupted (Ctrl-C) during PART; not run: …`, if Ctrl-C was pressed by the end of
/// part `i` of [`PARTS`].
fn interrupted_at(i: usize, no_mutants: bool) -> Option<String> {
    if !crate::interrupt::requested() {
        return None;
    }
    let rest: Vec<&str> = PARTS[i + 1..]
        .iter()
        .copied()
        .filter(|p| !(no_mutants && *p == "bug zoo"))
        .collect();
    Some(if rest.is_empty() {
        format!("interrupted (Ctrl-C) during the {}", PARTS[i])
    } else {
        format!(
            "interrupted (Ctrl-C) during the {}; not run: {}",
            PARTS[i],
            rest.join(", ")
        )
    })
}

pub fn run(args: &VerifyArgs) -> Result<ExitCode, String> {
    let started = Instant::now();
    let out = crate::usage::out_dir(args.out.as_deref())?;
    // Ctrl-C: each part stops after the work in hand (a preset, the seeds being run, a
    // zoo job), the rest is not run, and the report says what was not judged (exit 3
    // unless something already failed). A second Ctrl-C ends the process at once.
    crate::interrupt::install();
    let progress =
        crate::progress::Progress::with_lines(args.format == VerifyFormat::Text, "payhub-verify");

    // 0. A planted bug (`--mutant NAME`): its presets, the bug in, and nothing else.
    let planted = args.mutant.as_deref().map(|name| {
        let names = Subject::all().into_iter().map(Subject::name);
        Subject::from_name(name).ok_or_else(|| crate::usage::unknown("mutant", name, names))
    });
    let planted = planted.transpose()?;
    let unsound = args.unsound_shortcut.as_deref().map(|name| {
        let names = Planted::ALL.iter().map(|p| p.name());
        let unknown = || crate::usage::unknown("unsound shortcut", name, names);
        Planted::from_name(name).ok_or_else(unknown)
    });
    let unsound = unsound.transpose()?;
    let rest = planted.is_none() && unsound.is_none();

    // 1. Exhaustive presets.
    let all = match planted {
        Some(subject) => subject.presets(),
        None => presets(),
    };
    let names = || all.iter().map(|p| p.name);
    let known = |n: &&String| names().any(|p| p == *n);
    if let Some(name) = args.preset.iter().find(|n| !known(n)) {
        return Err(crate::usage::unknown("preset", name, names()));
    }
    let limits = Limits {
        threads: args.threads.max(1),
        max_states: args.max_states.map(|n| n as usize),
        timeout: args.timeout.map(Duration::from_secs),
        max_depth: None,
    };
    let selected: Vec<_> = all
        .iter()
        .filter(|p| args.preset.as_ref().is_none_or(|n| n == p.name))
        .collect();
    let mut phases = Vec::new();
    let mut phase_started = Instant::now();
    // Ends the part in hand: its time, and whether it ran at all.
    let mut end_phase = |name: &'static str, ran: bool| {
        phases.push(Phase {
            name,
            seconds: phase_started.elapsed().as_secs_f64(),
            ran,
        });
        phase_started = Instant::now();
    };
    let preset_search = [PresetSearch::Every, PresetSearch::Reduced][usize::from(args.quick)];
    let mut presets_run = Vec::new();
    for (i, preset) in selected.iter().enumerate() {
        if crate::interrupt::requested() {
            break;
        }
        progress.say(&format!(
            "check {}/{}: {}",
            i + 1,
            selected.len(),
            preset.name
        ));
        presets_run.push(
            payhub_properties::checker::check_with(preset, limits, preset_search.search())
                .map_err(|e| e.to_string())?,
        );
    }

    // The shortcuts those searches take, cross-checked on the small presets against the
    // plain breadth-first search and stateright (a fraction of a second), unless one
    // preset or one planted bug was asked for.
    let shortcuts = (planted.is_none() && args.preset.is_none() && !crate::interrupt::requested())
        .then(|| {
            progress.say("cross-check the search's shortcuts");
            Shortcuts {
                check: shortcuts::cross_check(unsound, args.threads),
                planted: unsound.map(Planted::name),
            }
        });
    end_phase(PARTS[0], !presets_run.is_empty());
    let skipped_presets = selected.len() - presets_run.len();
    let mut interrupted = interrupted_at(0, args.no_mutants).map(|why| {
        format!(
            "{why} ({skipped_presets} of {} presets not run)",
            selected.len()
        )
    });

    // 2. The reference client under swarm faults (it stops by itself on Ctrl-C).
    let seeds = [args.seeds, args.seeds.min(1_000)][usize::from(args.quick)];
    let world = SimulationArgs::default();
    let config = world.config().map_err(|e| e.to_string())?;
    let seeds_run = [seeds, 0][usize::from(interrupted.is_some() || !rest)];
    progress.say(&format!(
        "simulate {seeds_run} seeds of the reference client"
    ));
    let sweep = if !rest {
        simulate_cmd::SweepSummary::default()
    } else if seeds_run == 0 {
        simulate_cmd::SweepSummary {
            seeds_asked: seeds,
            incomplete: Some("interrupted (Ctrl-C)".into()),
            ..Default::default()
        }
    } else {
        simulate_cmd::sweep(
            &config,
            &world,
            simulate_cmd::Seeds::range(0, seeds),
            args.threads,
            &out,
            &simulate_cmd::Bounds::default(),
        )?
    };
    // The same sweep with the contradictions read the other way (A-S13-REFERENCE-CODE,
    // A-429-REFERENCE-CODE): a fifth of the seeds.
    let other_seeds = seeds_run / 5;
    let other_readings = if other_seeds == 0 {
        None
    } else {
        progress.say(&format!(
            "simulate {other_seeds} seeds with the other readings"
        ));
        let other = SimulationArgs {
            readings: payhub_sim::Readings::other(),
            ..SimulationArgs::default()
        };
        let config = other.config().map_err(|e| e.to_string())?;
        Some(simulate_cmd::sweep(
            &config,
            &other,
            simulate_cmd::Seeds::range(0, other_seeds),
            args.threads,
            &out.join("other-readings"),
            &simulate_cmd::Bounds::default(),
        )?)
    };
    end_phase(PARTS[1], sweep.seeds > 0);
    interrupted = interrupted.or_else(|| interrupted_at(1, args.no_mutants));

    // 3. The chaos sweep: adversarial raw requests against the reference platform.
    let chaos_seeds = [seeds / 5, 0][usize::from(interrupted.is_some() || !rest)];
    progress.say(&format!(
        "chaos: {chaos_seeds} seeds of adversarial requests"
    ));
    let chaos = chaos_sweep(chaos_seeds, args.threads);
    end_phase(PARTS[2], chaos_seeds > 0);
    interrupted = interrupted.or_else(|| interrupted_at(2, args.no_mutants));

    // 4. The contract's scenarios and findings, as scripts.
    let scenarios = if interrupted.is_some() || !rest {
        Vec::new()
    } else {
        progress.say("scenarios");
        run_scenarios()?
    };
    end_phase(PARTS[3], !scenarios.is_empty());
    interrupted = interrupted.or_else(|| interrupted_at(3, args.no_mutants));

    // 5. The edges end to end (sandbox, check-log, judge, conform) and the edge zoo
    // (docs/testing.md): about a second; --no-mutants leaves the edge zoo out.
    let edges = if interrupted.is_some() || !rest {
        None
    } else {
        progress.say("edges: sandbox, check-log, conform, edge zoo");
        Some(crate::edges::run(&out.join("edges"), !args.no_mutants)?)
    };
    end_phase(PARTS[4], edges.is_some());
    interrupted = interrupted.or_else(|| interrupted_at(4, args.no_mutants));

    // 6. The bug zoo: every mutant must be killed, no reference configuration caught.
    let zoo = if args.no_mutants || interrupted.is_some() || !rest {
        None
    } else {
        progress.say("bug zoo");
        Some(bug_zoo(args)?)
    };
    if !args.no_mutants {
        end_phase(PARTS[5], zoo.is_some());
    }
    interrupted = interrupted.or_else(|| interrupted_at(5, args.no_mutants));
    progress.done();

    let report = Report {
        verdict: "",
        header: crate::header::Header::now(),
        limits: crate::check_cmd::limits_text(&limits),
        search: preset_search.describe(),
        problems: Vec::new(),
        seconds: started.elapsed().as_secs_f64(),
        phases,
        presets: presets_run,
        simulation: sweep,
        simulation_other_readings: other_readings,
        readings: Vec::new(),
        chaos,
        scenarios,
        coverage: Vec::new(),
        findings: Vec::new(),
        kill_matrix: zoo,
        edges,
        shortcuts,
        interrupted,
        planted: planted.map(|s| s.name()),
    }
    .judged();
    let written = report.write(&out)?;
    match args.format {
        VerifyFormat::Json => println!("{}", report.to_json()),
        VerifyFormat::Junit => print!(
            "{}",
            crate::outcome::junit::render(&crate::report::outcome::verify(&report))
        ),
        VerifyFormat::Html => print!("{}", report.pages().1),
        VerifyFormat::Text => {
            print!("{}", report.summary_text());
            println!("report: {}", written.join(", "));
        }
    }
    Ok(report.exit_code())
}

/// The chaos sweep: adversarial raw requests against the reference platform.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ChaosSummary {
    pub seeds: u64,
    pub steps: u64,
    pub violations: u64,
    pub first_violation: Option<String>,
}

/// Runs the chaos world over `seeds` seeds, checking every always property after every step.
pub fn chaos_sweep(seeds: u64, threads: usize) -> ChaosSummary {
    let config = worlds::chaos();
    let (chaos, _) = payhub_sim::sweep::fan_out(
        threads,
        |i| (i < seeds).then_some(i),
        &payhub_sim::sweep::never,
        |seed, chaos: &mut Chaos| {
            let mut check = AlwaysCheck { config: &config };
            let profile = FaultProfile::for_seed(seed);
            let (_, outcome) = driver::run_seed(&config, seed, &profile, 200, &mut check, None);
            chaos.steps += outcome.steps as u64;
            if let Some(v) = outcome.violation {
                chaos.violations += 1;
                if chaos.first.as_ref().is_none_or(|(s, _)| seed < *s) {
                    chaos.first =
                        Some((seed, format!("seed {seed}: {}: {}", v.property, v.detail)));
                }
            }
        },
    );
    ChaosSummary {
        seeds,
        steps: chaos.steps,
        violations: chaos.violations,
        first_violation: chaos.first.map(|(_, text)| text),
    }
}

/// The chaos sweep's runs, per worker.
#[derive(Default)]
struct Chaos {
    steps: u64,
    violations: u64,
    /// The lowest violating seed, with its violation.
    first: Option<(u64, String)>,
}

impl payhub_sim::sweep::Fold for Chaos {
    fn merge(&mut self, other: Chaos) {
        self.steps += other.steps;
        self.violations += other.violations;
        if let Some((seed, text)) = other.first
            && self.first.as_ref().is_none_or(|(s, _)| seed < *s)
        {
            self.first = Some((seed, text));
        }
    }
}

fn run_scenarios() -> Result<Vec<ScenarioResult>, String> {
    let dir = script_cmd::scenario_dir(None);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: cannot read the scenarios folder: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pha"))
        .collect();
    files.sort();
    let mut results = Vec::new();
    for file in files {
        let script = script_cmd::load(&file).map_err(|e| e.to_string())?;
        let report = script_cmd::execute(&script);
        results.push(ScenarioResult::from_report(&file, &report));
    }
    Ok(results)
}

/// Runs the bug zoo: its kill matrix, with one killed mutant's counterexample as a
/// Mermaid diagram for the report.
fn bug_zoo(args: &VerifyArgs) -> Result<ZooReport, String> {
    use payhub_properties::zoo::{self, ZooOptions};
    let options = ZooOptions {
        threads: args.threads.max(1),
        seeds: if args.quick {
            500
        } else {
            ZooOptions::default().seeds
        },
        // A quick run leaves out the reference configurations (the zoo's check that
        // nothing catches the reference platform and client): `verify` without
        // --quick and `mutants` run them.
        references: !args.quick,
        control: Some(&ZOO),
        ..ZooOptions::default()
    };
    // No bar of its own (the spinner runs): only Ctrl-C turned into the zoo's stop flag.
    let follow = crate::progress::FollowZoo::start(false, &ZOO);
    let matrix = zoo::run(&Subject::all(), &options);
    follow.done();
    let matrix = matrix.map_err(|e| e.to_string())?;
    let example = matrix.mutants.iter().find_map(|m| {
        m.counterexample.as_ref().map(|found| Example {
            name: m.name,
            mermaid: found.proof.trace.to_mermaid(),
        })
    });
    Ok(ZooReport { matrix, example })
}
