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
        .keeping(payhub_properties::wire::RECORDS_KEPT)
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

/// A stream that has ended lacks the scope of requests whose key names no merchant and
/// that were not refused for authentication (those belong to no scope: the platform
/// looked no further than the key). The lack covers those requests only: what the
/// others witness stands.
fn lack_ownerless(wire: &WireFacts, supply: &mut Supply) {
    let unscoped = wire.unscoped();
    if unscoped > 0 {
        supply.lack_part(
            payhub_properties::evidence::Evidence::ApiKeys,
            format!(
                "{unscoped} request(s) with an API key that names no known merchant and no answer refusing it (401): their scope is unknown, so a pass is not claimed"
            ),
        );
    }
}

/// The requests refused for authentication, listed as belonging to no scope.
pub(crate) fn unscoped_json(
    wire: &WireFacts,
    name: &dyn Fn(payhub_model::RequestId) -> String,
) -> serde_json::Value {
    serde_json::json!({
        "refused_for_authentication": wire.refused_auth,
        "listed": wire.refused_auth_ids.iter().map(|id| name(*id)).collect::<Vec<_>>(),
        "scope_unknown": wire.unscoped(),
        "note": "requests answered 401 belong to no idempotency scope (SCOPE-01 starts with the key's merchant) and are judged by nothing that needs one",
    })
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

/// Folds the events of `path` (`-`: standard input) in one pass: a clear error naming
/// `file:line` for a line that is not an event or is past the bound of a line, and for
/// a file with no event at all.
fn fold(path: &Path) -> Result<Folded, String> {
    let mut input = crate::input::open(path)?;
    let mut folded = Folded::new(harness_owners());
    let name = input.name.clone();
    crate::input::each_line(&mut input.reader, &name, &mut |n, text| {
        let text = text.ok_or_else(|| format!("{name}:{n}: not UTF-8 text"))?;
        let event: Event =
            serde_json::from_str(text).map_err(|e| format!("{name}:{n}: not an event: {e}"))?;
        folded.observe(&event);
        Ok(())
    })?;
    if folded.events == 0 {
        return Err(format!("{name}: no events: nothing to judge"));
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
            let mut missing = supply.missing(evidence::needs(p));
            // Judged over the part of the source that has the evidence: a witness found
            // there stands whatever the rest lacks (verdicts are monotone).
            let judgeable = missing.iter().all(|m| m.partial);
            let detail = if judgeable { p.judge(facts) } else { None };
            let reached = judgeable && p.kind() == Kind::Sometimes && p.holds_in(facts);
            let status = match (p.kind(), &detail, missing.is_empty()) {
                (Kind::Always, Some(_), _) => Status::Violated,
                (Kind::Sometimes, _, _) if reached => Status::Reached,
                (_, _, false) => Status::CannotJudge,
                (Kind::Always, None, _) => Status::Holds,
                (Kind::Sometimes, _, _) => Status::Unreached,
            };
            if matches!(status, Status::Violated | Status::Reached) {
                missing.clear();
            }
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
            let mut missing = supply.missing(p.needs);
            // A witness from the part of the source that has the evidence stands.
            let witness = p
                .witness(wire)
                .filter(|_| missing.iter().all(|m| m.partial));
            let status = match (missing.is_empty(), &witness) {
                (_, Some(_)) => Status::Violated,
                (false, None) => Status::CannotJudge,
                (true, None) => Status::Holds,
            };
            if witness.is_some() {
                missing.clear();
            }
            Verdict {
                name: p.name,
                kind: Kind::Always,
                rules: p.rules.iter().map(|r| r.id()).collect(),
                status,
                detail: (witness.as_deref()).map(|w| payhub_properties::wire::explain(w, name)),
                missing,
                side: Some(p.side),
                witness: witness.map(std::borrow::Cow::into_owned),
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
    let judged = verdicts
        .iter()
        .filter(|v| v.status != Status::CannotJudge)
        .count();
    match args.format {
        JudgeFormat::Junit => print!("{}", crate::report::junit::judge(&args.file, &verdicts)),
        JudgeFormat::Json => {
            let unscoped = unscoped_json(&folded.wire, &|id| format!("exchange {id}"));
            let json = serde_json::json!({
                "events": events,
                "judged": judged,
                "unscoped": unscoped,
                "properties": verdicts,
            });
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
                None if judged == 0 => {}
                None => println!("no property violated in {events} events"),
            }
            if folded.wire.refused_auth > 0 {
                println!(
                    "{} request(s) refused for authentication (401): they belong to no scope",
                    folded.wire.refused_auth
                );
            }
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
    Ok(ExitCode::SUCCESS)
}
