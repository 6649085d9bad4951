//! `payhub-verify judge`: every property over a recorded event stream (JSON Lines), with
//! no world behind it. The first consumer of the stream that is not the world: the facts
//! are folded from the file's events one line at a time (memory bounded by the facts, not
//! by the file) and every property judges them, as `replay` judges its run.
//!
//! Each verdict is `holds`, `violated` (always properties), `reached`, `unreached`
//! (sometimes properties) or `cannot_judge`: the stream lacked evidence the property
//! needs (`payhub_properties::evidence`), named with the reason. The wire properties
//! (`payhub_properties::wire`) follow the registry's, judged over the stream's wire
//! events; `check-log` and the sandbox's verdict share this judge.

use payhub_model::Shared;
use payhub_model::event::Event;
use payhub_model::harness::{default_api_keys, rotated_key_spec};
use payhub_properties::evidence::{self, Missing, Supply};
use payhub_properties::wire::{Side, WIRE_PROPERTIES};
use payhub_properties::{Kind, PROPERTIES};
use payhub_sim::Facts;
use payhub_sim::facts::wire::{Seen, WireFacts, Witness};
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
    /// JUnit XML: a test case per property (docs/ci.md).
    Junit,
}

/// What a verdict says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// An always property held over what was judged.
    Holds,
    /// An always property was violated.
    Violated,
    /// A sometimes property was reached.
    Reached,
    /// A sometimes property was not reached.
    Unreached,
    /// The source lacked evidence the property needs (`missing` says which and why).
    CannotJudge,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Holds => "holds",
            Status::Violated => "violated",
            Status::Reached => "reached",
            Status::Unreached => "unreached",
            Status::CannotJudge => "cannot_judge",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One property's verdict over the file (or over a sandbox session's facts).
#[derive(Debug, Serialize)]
pub(crate) struct Verdict {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) rules: Vec<&'static str>,
    pub(crate) status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
    /// For `cannot_judge`: the evidence missing and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) missing: Vec<Missing>,
    /// For a wire property: which side it judges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) side: Option<Side>,
    /// For a violated wire property: the exchanges that witness it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) witness: Option<Witness>,
}

impl Verdict {
    /// `cannot_judge (needs the acquirer's ledger: the acquirer's ledger is not in a log)`.
    pub(crate) fn status_text(&self) -> String {
        if self.missing.is_empty() {
            return self.status.to_string();
        }
        let needs: Vec<String> = self
            .missing
            .iter()
            .map(|m| format!("{}: {}", m.evidence, m.why))
            .collect();
        format!("cannot judge (needs {})", needs.join("; "))
    }
}

/// Everything a stream of events gives the judges: the facts, the wire facts, and what
/// evidence it supplied.
pub(crate) struct Folded {
    pub(crate) facts: Shared<Facts>,
    pub(crate) wire: WireFacts,
    pub(crate) supply: Supply,
    pub(crate) events: usize,
}

/// The owners of the API keys of the harness's worlds (and of the sandbox).
pub(crate) fn harness_owners() -> WireFacts {
    let keys = default_api_keys().into_iter().chain([rotated_key_spec()]);
    WireFacts::new(keys.map(|k| (k.id, (k.merchant, k.environment))))
}

impl Folded {
    pub(crate) fn new(wire: WireFacts) -> Folded {
        Folded {
            facts: Shared::new(Facts::default()),
            wire,
            supply: Supply::empty(),
            events: 0,
        }
    }

    pub(crate) fn observe(&mut self, e: &Event) {
        Facts::observe(&mut self.facts, e);
        self.wire.observe(e.at, &e.what);
        self.supply.saw(&e.what);
        self.events += 1;
    }

    /// The stream has ended: what its wire facts lacked.
    pub(crate) fn close(&mut self) {
        lack_ownerless(&self.wire, &mut self.supply);
    }

    /// Every verdict, exchanges named `exchange #N`.
    pub(crate) fn verdicts(&self) -> Vec<Verdict> {
        judge_all(&self.facts, &self.wire, &self.supply, &|s: &Seen| {
            format!("exchange {} (at {})", s.id, s.sent)
        })
    }
}

/// A stream that has ended lacks the API keys of requests whose key names no merchant.
fn lack_ownerless(wire: &WireFacts, supply: &mut Supply) {
    if wire.ownerless > 0 {
        supply.lack(
            payhub_properties::evidence::Evidence::ApiKeys,
            format!(
                "{} request(s) with an API key that names no known merchant",
                wire.ownerless
            ),
        );
    }
}

/// The wire facts of a stream and what it supplied: what the judges need beside the
/// world's facts. The sandbox keeps one, folded from every event as it is recorded, so
/// that its verdict judges the whole session even after its record dropped old events.
#[derive(Clone, Debug)]
pub(crate) struct WireSide {
    pub(crate) wire: WireFacts,
    pub(crate) supply: Supply,
}

impl Default for WireSide {
    fn default() -> WireSide {
        WireSide {
            wire: harness_owners(),
            supply: Supply::empty(),
        }
    }
}

impl WireSide {
    pub(crate) fn observe(&mut self, e: &Event) {
        self.wire.observe(e.at, &e.what);
        self.supply.saw(&e.what);
    }

    /// The stream has ended (so far): what its wire facts lacked.
    pub(crate) fn close(&mut self) {
        lack_ownerless(&self.wire, &mut self.supply);
    }

    /// Every verdict over `facts` and this wire side, exchanges named `exchange #N`.
    pub(crate) fn verdicts(&self, facts: &Facts) -> Vec<Verdict> {
        judge_all(facts, &self.wire, &self.supply, &|s: &Seen| {
            format!("exchange {} (at {})", s.id, s.sent)
        })
    }
}

/// Folds the events of `path`: a clear error naming `file:line` for a line that is not
/// an event, and for a file with no event at all.
fn fold(path: &Path) -> Result<Folded, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut folded = Folded::new(harness_owners());
    for (i, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        let line = line.map_err(|e| format!("{}: cannot read: {e}", at()))?;
        let text = std::str::from_utf8(&line).map_err(|_| format!("{}: not UTF-8 text", at()))?;
        if text.trim().is_empty() {
            continue;
        }
        let event: Event =
            serde_json::from_str(text).map_err(|e| format!("{}: not an event: {e}", at()))?;
        folded.observe(&event);
    }
    if folded.events == 0 {
        return Err(format!("{}: no events: nothing to judge", path.display()));
    }
    folded.close();
    Ok(folded)
}

/// The registry's verdicts over facts whose source saw everything (the world's own).
pub(crate) fn verdicts(facts: &Facts) -> Vec<Verdict> {
    registry_verdicts(facts, &Supply::complete())
}

fn registry_verdicts(facts: &Facts, supply: &Supply) -> Vec<Verdict> {
    PROPERTIES
        .iter()
        .map(|p| {
            let missing = supply.missing(evidence::needs(p));
            let detail = if missing.is_empty() {
                p.judge(facts)
            } else {
                None
            };
            let status = match (p.kind(), &detail, missing.is_empty()) {
                (_, _, false) => Status::CannotJudge,
                (Kind::Always, Some(_), _) => Status::Violated,
                (Kind::Always, None, _) => Status::Holds,
                (Kind::Sometimes, _, _) if p.holds_in(facts) => Status::Reached,
                (Kind::Sometimes, _, _) => Status::Unreached,
            };
            Verdict {
                name: p.name,
                kind: p.kind(),
                rules: p.rules.iter().map(|r| r.id()).collect(),
                status,
                detail,
                missing,
                side: None,
                witness: None,
            }
        })
        .collect()
}

/// The wire properties' verdicts, each exchange of a witness named by `name`.
pub(crate) fn wire_verdicts(
    wire: &WireFacts,
    supply: &Supply,
    name: &dyn Fn(&Seen) -> String,
) -> Vec<Verdict> {
    WIRE_PROPERTIES
        .iter()
        .map(|p| {
            let missing = supply.missing(p.needs);
            let witness = p.witness(wire).filter(|_| missing.is_empty());
            let status = match (missing.is_empty(), witness) {
                (false, _) => Status::CannotJudge,
                (true, Some(_)) => Status::Violated,
                (true, None) => Status::Holds,
            };
            Verdict {
                name: p.name,
                kind: Kind::Always,
                rules: p.rules.iter().map(|r| r.id()).collect(),
                status,
                detail: witness.map(|w| payhub_properties::wire::explain(w, name)),
                missing,
                side: Some(p.side),
                witness: witness.cloned(),
            }
        })
        .collect()
}

/// The registry's verdicts, then the wire properties'.
pub(crate) fn judge_all(
    facts: &Facts,
    wire: &WireFacts,
    supply: &Supply,
    name: &dyn Fn(&Seen) -> String,
) -> Vec<Verdict> {
    let mut all = registry_verdicts(facts, supply);
    all.extend(wire_verdicts(wire, supply, name));
    all
}

pub fn run(args: &JudgeArgs) -> Result<ExitCode, String> {
    let folded = fold(&args.file)?;
    let events = folded.events;
    let verdicts = folded.verdicts();
    let violated = verdicts.iter().find(|v| v.status == Status::Violated);
    match args.format {
        JudgeFormat::Junit => print!("{}", crate::report::junit::judge(&args.file, &verdicts)),
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
                    v.status_text(),
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
