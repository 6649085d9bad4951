//! The session's verdict: every property of the harness over the session's facts (the
//! judge of `payhub-verify judge`, so that the session's event stream judged there gives
//! the same verdicts), as JSON and as Markdown with a diagram of each violation's
//! witnesses ([`super::diagrams`]) and the session's sequence diagram.

use super::witness::Session;
use crate::outcome::doc::Block;
use crate::outcome::text::text;
use payhub_properties::Facts;
use payhub_properties::verdict::{Status, Verdict, WireSide};
use payhub_sim::Trace;

/// The session's verdicts and how many events they judged: judged off the session's
/// lock (`http/verdict.rs`), drawn under it.
pub struct Judged {
    pub verdicts: Vec<Verdict>,
    pub events: usize,
}

/// What the contract asks, for each of a violation's rules: its sentence from the rule
/// catalogue (`model/src/rules/mod.rs`, what `check-log --format html` quotes), in English
/// and in the Chinese original (authoritative): `[{"id","asks","original"}]`.
pub fn contract_of(rules: &[&str]) -> serde_json::Value {
    let each: Vec<_> = rules
        .iter()
        .filter_map(|id| payhub_model::Rule::from_id(id))
        .map(|r| serde_json::json!({ "id": r.id(), "asks": r.text(), "original": r.zh() }))
        .collect();
    serde_json::Value::Array(each)
}

/// Trace lines beyond which the Markdown verdict leaves the diagram out.
const DIAGRAM_LINES_MAX: usize = 400;

/// `{"holds":…,"events":N,"properties":[…]}`, the shape of `judge --format json`, over
/// copies of the facts and the wire side (judged without holding the session).
pub fn json_of(
    facts: &Facts,
    side: &WireSide,
    events: usize,
    reading: &str,
    record: serde_json::Value,
) -> String {
    let verdicts = side.verdicts(facts);
    // Nothing judged holds nothing: `holds` is true only over at least one judged property.
    let holds = verdicts.iter().any(|v| v.status == Status::Holds)
        && !verdicts.iter().any(|v| v.status == Status::Violated);
    let unscoped =
        payhub_properties::verdict::unscoped_json(&side.wire, &|id| format!("exchange {id}"));
    // Violations first, then what holds, then what could not be judged (each kept in
    // the registry's order); a violation with what the contract asks ([`contract_of`]).
    let mut rows: Vec<&Verdict> = verdicts.iter().collect();
    rows.sort_by_key(|v| crate::outcome::html::rank(v.status));
    let properties: Vec<_> = rows
        .into_iter()
        .map(|v| {
            let mut json = serde_json::to_value(v).unwrap_or_default();
            if v.status == Status::Violated {
                json["contract"] = contract_of(&v.rules);
            }
            json
        })
        .collect();
    let json = serde_json::json!({
        "holds": holds,
        "events": events,
        "unscoped": unscoped,
        "same_purchase": reading,
        "properties": properties,
        "record": record,
    });
    serde_json::to_string_pretty(&json).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The verdict as Markdown: [`blocks`], then the session as a Mermaid sequence diagram.
pub fn to_markdown_of(trace: &Trace, session: &Session, judged: &Judged) -> String {
    let mut blocks = blocks(session, judged);
    let violated = judged.verdicts.iter().any(|v| v.status == Status::Violated);
    if violated && trace.events.len() <= DIAGRAM_LINES_MAX {
        blocks.push(Block::h(2, None, "The session"));
        blocks.push(Block::Mermaid(trace.to_mermaid()));
    } else if violated {
        blocks.push(Block::p(text!(
            "The session has {} trace lines, too many for a diagram: `GET /__sandbox/events` has them all.",
            trace.events.len()
        )));
    }
    crate::outcome::doc::markdown(&blocks)
}

/// The verdict as a page (the Markdown's and the sandbox page's): the headline, each
/// violation with its rules' sentences and its witnesses drawn, every property.
pub fn blocks(session: &Session, judged: &Judged) -> Vec<Block> {
    let verdicts = &judged.verdicts;
    let violated: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| v.status == Status::Violated)
        .collect();
    let events = judged.events;
    let judged = verdicts
        .iter()
        .filter(|v| matches!(v.status, Status::Holds | Status::Violated))
        .count();
    let headline = match violated.first() {
        None if judged == 0 => text!(
            "**Nothing judged**: {} events, and every property needs evidence the session does not show.",
            events
        ),
        None => text!(
            "**Holds over what it judged**: {} properties judged over {} events, none violated.",
            judged,
            events
        ),
        Some(v) => text!(
            "**VIOLATED** {} of {} properties judged over {} events; first `{}`: {}",
            violated.len(),
            judged,
            events,
            v.name,
            v.detail.as_deref().unwrap_or_default()
        ),
    };
    let mut blocks = vec![
        Block::h(1, Some("verdict"), "Sandbox verdict"),
        Block::p(headline),
    ];
    if verdicts.iter().any(|v| v.status == Status::CannotJudge) {
        blocks.push(Block::p(text!("**Not judged**: the properties the sandbox cannot see (below); judge them with the client model's runs (`payhub-verify check`), those that need the merchant's database by posting the merchant journal (`POST /__sandbox/journal`).")));
    }
    let reading = session.journal.reading();
    blocks.push(Block::p(format!("Orders and refunds filed by {reading}.")));
    if let Some(note) = session.record.note() {
        blocks.push(Block::p(format!("Every event was judged; {note}.")));
    }
    crate::outcome::verdict_blocks(&mut blocks, 2, verdicts, |v, _| {
        match session.witness_drawing(v) {
            Some((drawing, cut)) => vec![
                Block::p("The entries that witness it:"),
                Block::Figure(drawing),
                Block::p(cut),
            ],
            None => vec![Block::p(
                "The violation names no exchange the record holds: the session's diagram below is its witness.",
            )],
        }
    });
    blocks
}
