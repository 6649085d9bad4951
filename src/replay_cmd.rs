//! `payhub-verify replay`: one run, from a seed or a saved tape, traced; then healed as
//! `simulate` heals every run (faults stop for 25 simulated hours) and judged for
//! liveness, so that a command `simulate` prints shows what it claimed.

use crate::outcome::{Item, ItemResult, Outcome, Part};
use crate::simulate_cmd::WorldArgs;
use payhub_properties::liveness::{self, LivenessVerdict};
use payhub_properties::rules_of;
use payhub_properties::{AlwaysCheck, World};
use payhub_sim::driver::{self, RunOutcome};
use payhub_sim::tape::Tape;
use payhub_sim::{Choice, Trace, WorldConfig};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// Re-run this seed.
    #[arg(long, conflicts_with = "tape")]
    pub seed: Option<u64>,
    /// Replay a saved tape file (`simulate` writes them under its report's tapes/); the
    /// tape names its world, so the world's flags go with --seed only.
    #[arg(long, conflicts_with_all = ["policy", "clients", "steps", "no_swarm", "after_503", "after_429"])]
    pub tape: Option<PathBuf>,
    #[command(flatten)]
    pub world: WorldArgs,
    /// Output format of the trace.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TraceFormat,
}

/// How a trace is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    Text,
    Json,
    Mermaid,
    /// The sequence diagram as one self-contained SVG drawing.
    Svg,
    /// A what-if script that `payhub-verify run` reproduces.
    Script,
    /// The event stream, one JSON event per line (`payhub-verify judge` reads it).
    Events,
    /// JUnit XML: a test case per always property and one for liveness (docs/ci.md).
    Junit,
}

/// The largest tape `replay` reads: 64 MiB (a tape of 400 choices is a few KiB).
const TAPE_MAX: usize = 64 << 20;

/// Reads a tape file: a clear error for a file that cannot be read, is larger than
/// [`TAPE_MAX`], is not text or is not a tape.
fn read_tape(path: &Path) -> Result<Tape, String> {
    let bytes = crate::input::read_all(path, TAPE_MAX)?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{}: not a text file", path.display()))?;
    Tape::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The run to replay: a tape's choices (each checked to be enabled at its turn), or the
/// choices seed `seed` makes.
fn choices(args: &ReplayArgs) -> Result<(WorldConfig, Vec<Choice>), String> {
    match (&args.tape, args.seed) {
        (Some(path), _) => {
            let tape = read_tape(path)?;
            let at = |e: String| format!("{}: {e}", path.display());
            let config = match &tape.zoo {
                // A bug zoo counterexample: the zoo's world with the mutant planted, from
                // its preset's setup.
                Some(z) => {
                    let (config, setup) = zoo_world(z).map_err(at)?;
                    check_zoo_tape(&config, &setup, &tape.choices).map_err(at)?;
                    config
                }
                None => {
                    let config = tape.simulation.config().map_err(|e| at(e.to_string()))?;
                    driver::check_enabled(&config, &tape.choices).map_err(|e| at(e.to_string()))?;
                    config
                }
            };
            match tape.choices.is_empty() {
                true => Err(at(
                    "the tape holds no choice: replaying it checks nothing".into()
                )),
                false => Ok((config, tape.choices)),
            }
        }
        (None, Some(seed)) => {
            let settings = args.world.simulation();
            let config = settings.config().map_err(|e| e.to_string())?;
            let mut check = AlwaysCheck { config: &config };
            let profile = settings.profile(seed);
            let (_, outcome) =
                driver::run_seed(&config, seed, &profile, settings.steps, &mut check, None);
            Ok((config, outcome.tape))
        }
        (None, None) => Err("replay needs --seed N or --tape FILE".into()),
    }
}

/// A zoo tape replays as the checker explored it: each choice enabled at its turn, free
/// (as `driver::check_enabled` takes them: a send, an advance, a control, a tick), or one
/// of its preset's setup (which may apply choices the world does not list, such as an
/// acquirer decision outside the preset's own; shrinking may have dropped some of the
/// setup). Errors name the step.
fn check_zoo_tape(config: &WorldConfig, setup: &[Choice], tape: &[Choice]) -> Result<(), String> {
    let mut world = World::new(config);
    let mut enabled = Vec::new();
    for (i, choice) in tape.iter().enumerate() {
        world.enabled(config, &mut enabled);
        if !driver::is_free(choice) && !enabled.contains(choice) && !setup.contains(choice) {
            return Err(format!(
                "step {}: '{choice}' is not enabled, nor a step of the preset's setup",
                i + 1
            ));
        }
        world
            .apply(config, choice, None)
            .map_err(|e| format!("step {}: '{choice}': {e}", i + 1))?;
    }
    Ok(())
}

/// The world a zoo tape names (`mutants --show NAME --save-tape FILE`), with its setup.
fn zoo_world(z: &payhub_sim::tape::ZooWorld) -> Result<(WorldConfig, Vec<Choice>), String> {
    use payhub_properties::zoo::Subject;
    let subject = Subject::from_name(&z.mutant).ok_or_else(|| {
        let names: Vec<&str> = Subject::all().into_iter().map(|s| s.name()).collect();
        crate::usage::unknown("mutant", &z.mutant, names.iter().copied())
    })?;
    subject.start_of(&z.method).ok_or_else(|| {
        format!(
            "mutant {}: no world for method '{}' (exhaustive:PRESET or simulation)",
            z.mutant, z.method
        )
    })
}

/// What a replayed run found, as its JSON spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RunStatus {
    #[serde(rename = "holds")]
    Holds,
    /// No property violated, and the healed run reached a contract finding.
    #[serde(rename = "holds, contract finding reached")]
    HoldsFindingReached,
    /// The healed run could not decide liveness.
    #[serde(rename = "not judged")]
    NotJudged,
    #[serde(rename = "violated")]
    Violated,
}

/// The verdict of a replayed run, in every format.
#[derive(Clone, Debug, Serialize)]
pub struct RunVerdict {
    pub status: RunStatus,
    /// The violated property, if one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// Its rules (`REPLAY-03`).
    pub rules: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The documented gap of the contract the healed run reached (`A-WEBHOOK-BLACKOUT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<&'static str>,
    pub steps: usize,
    /// Choices of the healing phase (faults stopped, 25 simulated hours), when it ran.
    pub healing_steps: usize,
}

impl RunVerdict {
    /// The closing line of the text format.
    pub fn line(&self) -> String {
        match (&self.property, self.finding) {
            (Some(p), _) => {
                let detail = self.detail.as_deref().unwrap_or_default();
                crate::outcome::violated_line(p, &self.rules, detail)
            }
            (None, Some(f)) => format!(
                "no property violated in {} steps; then healed (faults stopped, 25 simulated hours, {} choices): contract finding {f} reached, as assumed (not a failure): {}",
                self.steps,
                self.healing_steps,
                self.detail.as_deref().unwrap_or_default()
            ),
            (None, None) => format!(
                "no property violated in {} steps; then healed (faults stopped, 25 simulated hours, {} choices): every submission known",
                self.steps, self.healing_steps
            ),
        }
    }

    /// The run as the outcome document: an item per always property (the run stops at
    /// the first violation, so after one the others are not judged past it), and one for
    /// liveness (judged over the healed run).
    fn outcome(&self) -> Outcome {
        let failed = |line: String| ItemResult::fail(line.clone(), line);
        let violated = self.property.as_deref();
        let mut items: Vec<Item> = crate::script_cmd::always_properties()
            .into_iter()
            .map(|name| {
                let result = match violated {
                    Some(v) if v == name => failed(self.line()),
                    // The run stops at the first property violated: the others held
                    // before that step, and nothing after it was run.
                    Some(v) => ItemResult::not_judged(format!(
                        "the run stopped where {v} was violated; this property held in every step before"
                    )),
                    None => ItemResult::Passed,
                };
                Item::new("replay", name, result).with_rules(&rules_of(name))
            })
            .collect();
        let liveness = if violated == Some(liveness::NAME) {
            failed(self.line())
        } else if violated.is_some() {
            ItemResult::not_judged("the run stopped at a violation, before healing")
        } else if self.status == RunStatus::NotJudged {
            ItemResult::not_judged(self.detail.as_deref().unwrap_or_default())
        } else {
            ItemResult::Passed
        };
        items.push(
            Item::new("replay", liveness::NAME, liveness)
                .with_rules(&rules_of(liveness::NAME))
                .with_output(self.line()),
        );
        Outcome::new("payhub-verify replay", vec![Part::new("replay", items)])
    }

    fn exit_code(&self) -> ExitCode {
        if self.property.is_some() {
            ExitCode::from(1)
        } else if self.status == RunStatus::NotJudged {
            ExitCode::from(3)
        } else {
            ExitCode::SUCCESS
        }
    }
}

pub fn replay(args: &ReplayArgs) -> Result<ExitCode, String> {
    let (config, tape) = choices(args)?;
    let mut check = AlwaysCheck { config: &config };
    let (world, outcome) = driver::replay(&config, &tape, &mut check, None)
        .map_err(|(i, e)| format!("step {}: {e}", i + 1))?;
    let mut verdict = RunVerdict {
        status: RunStatus::Holds,
        property: None,
        rules: Vec::new(),
        detail: None,
        finding: None,
        steps: outcome.steps,
        healing_steps: 0,
    };
    // The run as traced: the tape, then (no safety violation) its healing phase.
    let mut healing_choices = Vec::new();
    match &outcome.violation {
        Some(v) => {
            verdict.status = RunStatus::Violated;
            verdict.rules = rules_of(&v.property);
            verdict.property = Some(v.property.clone());
            verdict.detail = Some(v.detail.clone());
        }
        None => {
            let mut healed = world.clone();
            let healing = driver::heal_recorded(
                &config,
                &mut healed,
                liveness::SPAN,
                liveness::HEAL_STEPS,
                None,
            );
            verdict.healing_steps = healing.choices.len();
            healing_choices = healing.choices;
            match liveness::verdict(&config, world, &tape) {
                LivenessVerdict::Resolved => {}
                LivenessVerdict::Gap { assumption, detail } => {
                    verdict.status = RunStatus::HoldsFindingReached;
                    verdict.finding = Some(assumption.id());
                    verdict.detail = Some(detail);
                }
                LivenessVerdict::Incomplete(detail) => {
                    verdict.status = RunStatus::NotJudged;
                    verdict.detail = Some(detail);
                }
                LivenessVerdict::Unresolved(witnessed) => {
                    verdict.status = RunStatus::Violated;
                    verdict.property = Some(liveness::NAME.to_owned());
                    verdict.rules = rules_of(liveness::NAME);
                    verdict.detail = Some(witnessed.detail);
                }
            }
        }
    }
    let mut trace = Trace::new();
    let mut quiet = AlwaysCheck { config: &config };
    let (mut traced, _) = driver::replay(&config, &tape, &mut quiet, Some(&mut trace))
        .map_err(|(i, e)| format!("step {}: {e}", i + 1))?;
    // The healing phase as the sweep applied it: the outages it switches off are the
    // environment's own controls, outside the run's budget (driver::heal_recorded).
    let free = WorldConfig {
        controls: Vec::new(),
        ..config.clone()
    };
    for (i, choice) in healing_choices.iter().enumerate() {
        let step = tape.len() + i;
        trace.begin_step(step as u32);
        let under = if matches!(choice, Choice::Control(_)) {
            &free
        } else {
            &config
        };
        traced
            .apply(under, choice, Some(&mut trace))
            .map_err(|e| format!("healing step {}: {e}", step + 1))?;
    }
    print!(
        "{}",
        render(&config, &outcome, &trace, &verdict, tape.len(), args.format)?
    );
    Ok(verdict.exit_code())
}

/// What `replay` prints for a run in `format`; every format carries the verdict.
fn render(
    config: &WorldConfig,
    outcome: &RunOutcome,
    trace: &Trace,
    verdict: &RunVerdict,
    run_steps: usize,
    format: TraceFormat,
) -> Result<String, String> {
    // The verdict as the drawing's closing note, where something was found.
    let note = (verdict.property.is_some() || verdict.finding.is_some()).then(|| verdict.line());
    Ok(match format {
        TraceFormat::Text => {
            let (mut run, mut healing) = (trace.clone(), trace.clone());
            run.events.retain(|e| (e.step as usize) < run_steps);
            healing.events.retain(|e| (e.step as usize) >= run_steps);
            let healed = (verdict.healing_steps > 0).then(|| format!(
                "--- healing: faults stop; deliveries, approvals and restarts first; 25 simulated hours ({} choices) ---\n{}",
                verdict.healing_steps,
                healing.to_text()
            ));
            let healed = healed.unwrap_or_default();
            format!("{}{healed}{}\n", run.to_text(), verdict.line())
        }
        TraceFormat::Json => {
            // The trace's JSON as `Trace::to_json` writes it, after the verdict.
            let verdict = crate::outcome::json(verdict)?;
            format!(
                "{{\n\"verdict\": {verdict},\n\"trace\": {}\n}}\n",
                trace.to_json()
            )
        }
        TraceFormat::Mermaid => trace.to_mermaid_with_verdict(note.as_deref()),
        TraceFormat::Svg => trace.to_diagram(note.as_deref(), |_| false).to_svg() + "\n",
        TraceFormat::Events => trace.to_events_jsonl(),
        TraceFormat::Junit => crate::outcome::junit::render(&verdict.outcome()),
        TraceFormat::Script => {
            let property = outcome.violation.as_ref().map(|v| v.property.as_str());
            payhub_sim::script::script_from_tape(config, &outcome.tape, property, &config.name)
                .map_err(|e| e.to_string())?
        }
    })
}
