//! `payhub-verify judge`: every property over a recorded event stream (JSON Lines), with no
//! world behind it: the facts are folded one line at a time (memory bounded by the facts,
//! not the file) and judged by the judge `check-log` and the sandbox share
//! (`payhub_properties::verdict`). A property lacking evidence is `cannot_judge`, with the
//! reason; a submission unknown past its window is a liveness violation, one whose window
//! the stream ends before is not judged.

use crate::outcome::{Item, ItemResult, Part, junit};
use payhub_model::event::Event;
use payhub_properties::verdict::{Folded, Status, unscoped_json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct JudgeArgs {
    /// A JSON Lines file of events, as `replay --format events` writes it (`-`: standard
    /// input; read once, so a pipe or FIFO works).
    pub file: PathBuf,
    /// Output format of the verdicts.
    #[arg(long, value_enum, default_value = "text")]
    pub format: JudgeFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum JudgeFormat {
    Text,
    Json,
    /// JUnit XML: a test case per property (docs/ci.md).
    Junit,
}

/// Folds the events of `path` (`-`: standard input) in one pass; an error names
/// `file:line`. A torn last line (a tape cut off by a full disk) is returned instead, so
/// that the verdict over the events before it is incomplete.
fn fold(path: &Path) -> Result<(Folded, Option<String>), String> {
    let mut input = crate::input::open(path)?;
    let mut folded = Folded::harness();
    let name = input.name.clone();
    let mut torn = None;
    let mut last = None;
    crate::input::each_line(&mut input.reader, &name, &mut |line| {
        let n = line.n;
        match event_of(&line) {
            Ok(event) => {
                crate::input::in_order(&mut last, event.at, &format!("{name}:{n}"))?;
                folded.observe(&event);
            }
            Err(why) if line.unended => torn = Some((format!("{name}:{n}"), why)),
            Err(why) => return Err(format!("{name}:{n}: {why}")),
        }
        Ok(())
    })?;
    match torn {
        // A file of one unreadable line is no tape at all.
        Some((place, why)) if folded.events == 0 => Err(format!("{place}: {why}")),
        _ if folded.events == 0 => Err(format!("{name}: no events: nothing to judge")),
        torn => {
            folded.close();
            let torn = torn.map(|(place, why)| format!("{place}: {}", crate::input::torn(&why)));
            Ok((folded, torn))
        }
    }
}

/// A line of an event stream as its event, or why it is none.
pub fn event_of(line: &crate::input::Line) -> Result<Event, String> {
    let text = line.text.ok_or("not UTF-8 text")?;
    serde_json::from_str(text).map_err(|e| format!("not an event: {e}"))
}

pub fn run(args: &JudgeArgs) -> Result<ExitCode, String> {
    let (folded, torn) = fold(&args.file)?;
    let events = folded.events;
    let verdicts = folded.verdicts();
    let violated = verdicts.iter().find(|v| v.status == Status::Violated);
    let judged = verdicts
        .iter()
        .filter(|v| v.status != Status::CannotJudge)
        .count();
    match args.format {
        JudgeFormat::Junit => {
            // A torn last line makes one skipped item: the run is incomplete.
            let cut = torn.as_ref().map(|t| format!("the tape is cut off at {t}"));
            let mut items = crate::outcome::verdicts("judge", &verdicts, cut.as_deref());
            if let Some(t) = &torn {
                items.push(Item::new(
                    "judge",
                    "events read",
                    ItemResult::Skipped(format!("not judged past {t}")),
                ));
            }
            let part = Part::new("judge", items);
            print!("{}", junit::of("payhub-verify judge", vec![part]));
        }
        JudgeFormat::Json => {
            let unscoped = unscoped_json(&folded.side.wire, &|id| format!("exchange {id}"));
            let json = serde_json::json!({ "events": events, "judged": judged,
                "incomplete": torn, "unscoped": unscoped, "properties": verdicts });
            println!("{}", crate::outcome::json(&json)?);
        }
        JudgeFormat::Text => {
            let vacuous = verdicts.iter().filter(|v| v.vacuous).count();
            let verdicts = verdicts.iter().map(crate::outcome::verdict_line);
            let mut out: Vec<String> = verdicts.collect();
            // The closing line `replay` prints for the same run.
            out.extend(match violated {
                Some(v) => Some(crate::outcome::violated_line(
                    v.name,
                    &v.rules,
                    v.detail.as_deref().unwrap_or_default(),
                )),
                None if judged == 0 => None,
                None => Some(format!(
                    "no property violated in {events} events ({vacuous} held vacuously)"
                )),
            });
            out.extend(
                torn.iter()
                    .map(|t| format!("INCOMPLETE: judged up to the line before {t}")),
            );
            let refused = folded.side.wire.refused_auth;
            if refused > 0 {
                out.push(format!(
                    "{refused} request(s) refused for authentication (401): they belong to no scope"
                ));
            }
            println!("{}", out.join("\n"));
        }
    }
    if violated.is_some() {
        return Ok(ExitCode::from(1));
    }
    if judged == 0 {
        // Nothing judged is not a pass (exit 2, as `check-log` says of the same file).
        eprintln!(
            "payhub-verify judge: {}: {events} events, and every property cannot judge from them: nothing judged",
            args.file.display()
        );
        return Ok(ExitCode::from(2));
    }
    if let Some(t) = torn {
        // What the tape holds holds; what was cut off was not judged: not a pass.
        eprintln!(
            "payhub-verify judge: incomplete: no property violated in the {events} events before {t}; what followed was not recorded, not judged"
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}
