//! `payhub-verify judge`: every property over a recorded event stream (JSON Lines), with
//! no world behind it. The first consumer of the stream that is not the world: the facts
//! are folded from the file's events one line at a time (memory bounded by the facts, not
//! by the file) and every property judges them, as `replay` judges its run.

use payhub_model::Shared;
use payhub_model::event::Event;
use payhub_properties::{Kind, PROPERTIES};
use payhub_sim::Facts;
use serde::Serialize;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct JudgeArgs {
    /// A JSON Lines file of events, as `replay --format events` writes it.
    pub file: PathBuf,
    /// Output format of the verdicts.
    #[arg(long, value_enum, default_value = "text")]
    pub format: JudgeFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum JudgeFormat {
    Text,
    Json,
}

/// One property's verdict over the file (or over a sandbox session's facts).
#[derive(Debug, Serialize)]
pub(crate) struct Verdict {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) rules: Vec<&'static str>,
    /// `holds` / `violated` for an always property, `reached` / `unreached` for a
    /// sometimes one.
    pub(crate) status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
}

/// Folds the events of `path` into facts: a clear error naming `file:line` for a line
/// that is not an event, and for a file with no event at all.
fn fold(path: &Path) -> Result<(Facts, usize), String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut facts = Shared::new(Facts::default());
    let mut events = 0;
    for (i, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        let line = line.map_err(|e| format!("{}: cannot read: {e}", at()))?;
        let text = std::str::from_utf8(&line).map_err(|_| format!("{}: not UTF-8 text", at()))?;
        if text.trim().is_empty() {
            continue;
        }
        let event: Event =
            serde_json::from_str(text).map_err(|e| format!("{}: not an event: {e}", at()))?;
        Facts::observe(&mut facts, &event);
        events += 1;
    }
    if events == 0 {
        return Err(format!("{}: no events: nothing to judge", path.display()));
    }
    Ok((Facts::clone(&facts), events))
}

pub(crate) fn verdicts(facts: &Facts) -> Vec<Verdict> {
    PROPERTIES
        .iter()
        .map(|p| {
            let detail = p.judge(facts);
            let status = match (p.kind(), &detail, p.holds_in(facts)) {
                (Kind::Always, Some(_), _) => "violated",
                (Kind::Always, None, _) => "holds",
                (Kind::Sometimes, _, true) => "reached",
                (Kind::Sometimes, _, false) => "unreached",
            };
            Verdict {
                name: p.name,
                kind: p.kind(),
                rules: p.rules.iter().map(|r| r.id()).collect(),
                status,
                detail,
            }
        })
        .collect()
}

pub fn run(args: &JudgeArgs) -> Result<ExitCode, String> {
    let (facts, events) = fold(&args.file)?;
    let verdicts = verdicts(&facts);
    let violated = verdicts.iter().find(|v| v.status == "violated");
    match args.format {
        JudgeFormat::Json => {
            let json = serde_json::json!({ "events": events, "properties": verdicts });
            println!(
                "{}",
                serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?
            );
        }
        JudgeFormat::Text => {
            for v in &verdicts {
                let detail = v
                    .detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                println!(
                    "{:<9} {}{detail}  [{}]",
                    v.status,
                    v.name,
                    v.rules.join(", ")
                );
            }
            // The closing line `replay` prints for the same run.
            match violated {
                Some(v) => println!(
                    "VIOLATED {} [{}]: {}",
                    v.name,
                    v.rules.join(", "),
                    v.detail.as_deref().unwrap_or_default()
                ),
                None => println!("no property violated in {events} events"),
            }
        }
    }
    Ok(if violated.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
