//! `payhub-verify replay`: one run, from a seed or a saved tape, traced.

use crate::simulate_cmd::WorldArgs;
use payhub_properties::AlwaysCheck;
use payhub_sim::driver::{self, RunOutcome};
use payhub_sim::tape::Tape;
use payhub_sim::{Choice, Trace, WorldConfig};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// Re-run this seed.
    #[arg(long, conflicts_with = "tape")]
    pub seed: Option<u64>,
    /// Replay a saved tape file (`simulate` writes them under its report's tapes/).
    #[arg(long)]
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
    /// A what-if script that `payhub-verify run` reproduces.
    Script,
    /// The event stream, one JSON event per line (`payhub-verify judge` reads it).
    Events,
}

/// Reads a tape file: a clear error for a file that cannot be read, is not text or is
/// not a tape.
fn read_tape(path: &Path) -> Result<Tape, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
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
            let config = tape
                .simulation
                .config()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            driver::check_enabled(&config, &tape.choices)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Ok((config, tape.choices))
        }
        (None, Some(seed)) => {
            let settings = args.world.simulation();
            let config = settings.config()?;
            let mut check = AlwaysCheck { config: &config };
            let profile = settings.profile(seed);
            let (_, outcome) =
                driver::run_seed(&config, seed, &profile, settings.steps, &mut check, None);
            Ok((config, outcome.tape))
        }
        (None, None) => Err("replay needs --seed N or --tape FILE".into()),
    }
}

pub fn replay(args: &ReplayArgs) -> Result<ExitCode, String> {
    let (config, tape) = choices(args)?;
    let mut trace = Trace::new();
    let mut check = AlwaysCheck { config: &config };
    let (_, outcome) = driver::replay(&config, &tape, &mut check, Some(&mut trace))
        .map_err(|(i, e)| format!("step {}: {e}", i + 1))?;
    print!("{}", render(&config, &outcome, &trace, args.format)?);
    Ok(if outcome.violation.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What `replay` prints for a run in `format`.
fn render(
    config: &WorldConfig,
    outcome: &RunOutcome,
    trace: &Trace,
    format: TraceFormat,
) -> Result<String, String> {
    Ok(match format {
        TraceFormat::Text => {
            let verdict = match &outcome.violation {
                Some(v) => format!("VIOLATED {}: {}", v.property, v.detail),
                None => format!("no property violated in {} steps", outcome.steps),
            };
            format!("{}{verdict}\n", trace.to_text())
        }
        TraceFormat::Json => trace.to_json(),
        TraceFormat::Mermaid => trace.to_mermaid(),
        TraceFormat::Events => trace.to_events_jsonl(),
        TraceFormat::Script => {
            let property = outcome.violation.as_ref().map(|v| v.property.as_str());
            payhub_sim::script::script_from_tape(config, &outcome.tape, property, &config.name)?
        }
    })
}
