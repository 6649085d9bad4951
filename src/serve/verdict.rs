//! The session's verdict: every property of the harness over the session's facts (the
//! judge of `payhub-verify judge`, so that the session's event stream judged there gives
//! the same verdicts), as JSON and as Markdown with the session's sequence diagram.
//!
//! What the session supplied is read from its stream: the sandbox observes the platform,
//! the acquirer and the wire, never the merchant's own process or database, so the
//! properties over client decisions are `cannot_judge` here; the wire properties judge
//! the client's requests as the wire carried them.

use crate::judge_cmd::{Folded, Status, Verdict, judge_all};
use payhub_model::event::Event;
use payhub_sim::facts::wire::Seen;
use payhub_sim::{Facts, Trace};
use std::fmt::Write as _;

/// The session's verdicts: the registry's over the world's facts, with the evidence and
/// the wire facts of its stream (what `judge` gives for the stream's JSON Lines).
pub fn verdicts(facts: &Facts, stream: &[Event]) -> Vec<Verdict> {
    let folded = Folded::of_stream(stream);
    judge_all(facts, &folded.wire, &folded.supply, &|s: &Seen| {
        format!("exchange {} (at {})", s.id, s.sent)
    })
}

/// Trace lines beyond which the Markdown verdict leaves the diagram out.
const DIAGRAM_LINES_MAX: usize = 400;

/// `{"holds":…,"events":N,"properties":[…]}`: the shape of `judge --format json`, with
/// whether every always property holds.
pub fn to_json(facts: &Facts, stream: &[Event]) -> String {
    let verdicts = verdicts(facts, stream);
    let events = stream.len();
    let holds = !verdicts.iter().any(|v| v.status == Status::Violated);
    let json = serde_json::json!({ "holds": holds, "events": events, "properties": verdicts });
    serde_json::to_string_pretty(&json).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The verdict as Markdown: a table of every property, then each violation with its
/// rules and the session as a Mermaid sequence diagram in the contract's notation.
pub fn to_markdown(facts: &Facts, trace: &Trace) -> String {
    let verdicts = verdicts(facts, &trace.stream);
    let violated: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| v.status == Status::Violated)
        .collect();
    let mut s = String::from("# Sandbox verdict\n\n");
    match violated.first() {
        None => {
            let _ = writeln!(s, "**All hold** over {} events.\n", trace.stream.len());
        }
        Some(v) => {
            let _ = writeln!(
                s,
                "**VIOLATED** `{}` over {} events: {}\n",
                v.name,
                trace.stream.len(),
                v.detail.as_deref().unwrap_or_default()
            );
        }
    }
    s.push_str("| property | status | rules | detail |\n|---|---|---|---|\n");
    for v in &verdicts {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} |",
            v.name,
            v.status_text(),
            v.rules.join(", "),
            v.detail.as_deref().unwrap_or("").replace('|', "\\|")
        );
    }
    for v in &violated {
        let _ = writeln!(
            s,
            "\n## {}\n\n{}\n\nRules: {}.",
            v.name,
            v.detail.as_deref().unwrap_or_default(),
            v.rules.join(", ")
        );
    }
    if !violated.is_empty() {
        if trace.events.len() <= DIAGRAM_LINES_MAX {
            let _ = write!(
                s,
                "\n## The session\n\n```mermaid\n{}```\n",
                trace.to_mermaid()
            );
        } else {
            let _ = writeln!(
                s,
                "\nThe session has {} trace lines, too many for a diagram: `GET /__sandbox/events` has them all.",
                trace.events.len()
            );
        }
    }
    s
}
