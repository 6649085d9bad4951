//! What `check-log` prints: per file, what was read, every property's verdict, and for
//! each violation its witness entries, Elle-style: the minimal set of exchanges that
//! shows it, with their times and gaps, in the contract's notation (and drawn).

use super::{Closing, Judged, LogFormat};
use crate::outcome::{Item as Case, ItemResult, Part};
use payhub_properties::facts::wire::Seen;
use payhub_properties::verdict::{Status, Verdict};
use payhub_properties::wire::{answer, request};
use payhub_sim::diagram::{Arrow, Diagram, NoteKind, Shape};
use std::fmt::Write as _;

/// Prints every file's report; `seconds`: how long reading and judging took.
pub fn print(all: &[Judged], format: LogFormat, seconds: f64) -> Result<(), String> {
    let out = match format {
        LogFormat::Text => all.iter().map(text).collect::<Vec<_>>().join("\n"),
        LogFormat::Markdown | LogFormat::Html => {
            let html = format == LogFormat::Html;
            crate::outcome::doc::draw(super::page::page(all, seconds), html)
        }
        LogFormat::Junit => {
            // A part per file, an item per property; unreadable entries make one skipped
            // item (the file's run is incomplete).
            let parts = all.iter().map(|j| {
                let unread = (j.skipped > 0)
                    .then(|| format!("{} of {} entries unreadable", j.skipped, j.entries));
                let cut = j.stopped.as_ref().or(unread.as_ref());
                let mut cases =
                    crate::outcome::verdicts("check-log", &j.verdicts, cut.map(|c| c.as_str()));
                if let Some(unread) = unread {
                    let skipped = ItemResult::not_judged(unread);
                    cases.push(Case::new("check-log", "entries read", skipped));
                }
                Part::new(format!("check-log {}", j.file.display()), cases)
            });
            crate::outcome::junit::of("payhub-verify check-log", parts.collect())
        }
        LogFormat::Json => {
            let files: Vec<serde_json::Value> = all.iter().map(json).collect();
            crate::outcome::json(&serde_json::json!({ "files": files }))?
        }
    };
    println!("{}", out.trim_end());
    Ok(())
}

pub(super) fn read_line(j: &Judged) -> String {
    format!(
        "{}: {}, {} entries: {} judged, {} not the API, {} unreadable",
        j.file.display(),
        j.format.about(),
        j.entries,
        j.judged,
        j.ignored,
        j.skipped
    )
}

impl Closing<'_> {
    pub fn line(&self) -> String {
        let (judged, cannot) = (self.judged, self.cannot);
        match (self.exit(), &self.violated) {
            (1, Some((name, rules, detail))) => format!("VIOLATED {name} [{rules}]: {detail}"),
            (3, _) if self.stopped.is_some() => format!(
                "INCOMPLETE: {}; nothing violated in what was judged ({judged} properties judged, {cannot} cannot judge)",
                self.stopped.unwrap_or_default()
            ),
            (3, _) => format!(
                "INCOMPLETE: {} entries unreadable; nothing violated in the rest ({judged} properties judged, {cannot} cannot judge)",
                self.skipped
            ),
            _ => format!(
                "all {judged} properties judged hold ({} of them vacuously); {cannot} cannot judge from this source",
                self.vacuous
            ),
        }
    }
}

fn text(j: &Judged) -> String {
    let mut s = read_line(j) + "\n";
    notes(j).iter().for_each(|n| s += &format!("  {n}\n"));
    for v in j
        .verdicts
        .iter()
        .filter(|v| v.status != Status::CannotJudge)
    {
        let _ = writeln!(s, "{}", crate::outcome::verdict_line(v));
        if let Some(w) = &v.witness {
            for e in &w.entries {
                let _ = writeln!(s, "    {}", witness_line(j, e));
            }
        }
    }
    // One paragraph per missing evidence set, so that a reader sees at a glance what
    // the log lacks rather than one line per property.
    for (needs, names) in crate::outcome::cannot_judge(&j.verdicts) {
        let n = names.len();
        let what = if n == 1 { "property" } else { "properties" };
        let _ = writeln!(
            s,
            "cannot judge, {n} {what}: {needs}\n    {}",
            names.join(", ")
        );
    }
    s + &j.closing().line() + "\n"
}

/// What reading a file stopped at, skipped, assumed and could not scope, one line each.
pub(super) fn notes(j: &Judged) -> Vec<String> {
    let mut notes: Vec<String> = j.stopped.iter().cloned().collect();
    notes.extend(j.skips.iter().map(|(l, why)| format!("skipped {l}: {why}")));
    let more = (j.skipped as usize).saturating_sub(j.skips.len());
    notes.extend((more > 0).then(|| format!("… and {more} more skipped")));
    notes.extend(j.assumptions.iter().map(|a| format!("assumed: {a}")));
    notes.extend((j.unscoped > 0).then(|| {
        let n = j.unscoped;
        format!("{n} request(s) refused for authentication (401): they belong to no scope")
    }));
    notes
}

/// `entry 3  +5.250s → +5.370s  POST /v1/payments … → 201 pay_demo_001 version 1`.
pub(super) fn witness_line(j: &Judged, e: &Seen) -> String {
    format!(
        "{:<10} +{} → +{}  {} → {}",
        name(j, e),
        e.sent,
        e.closed,
        request(e),
        answer(e)
    )
}

fn name(j: &Judged, e: &Seen) -> String {
    match j.format {
        super::Format::Har => format!("entry {}", e.id.0),
        super::Format::AccessLog => format!("line {}", e.id.0),
        super::Format::Events => format!("exchange {}", e.id),
    }
}

fn json(j: &Judged) -> serde_json::Value {
    let skipped: Vec<serde_json::Value> = j
        .skips
        .iter()
        .map(|(l, why)| serde_json::json!({ "entry": l.to_string(), "why": why }))
        .collect();
    serde_json::json!({
        "file": j.file.display().to_string(),
        "format": j.format,
        "entries": j.entries,
        "judged": j.judged,
        "not_the_api": j.ignored,
        "unreadable": j.skipped,
        "skipped": skipped,
        "assumptions": j.assumptions,
        "refused_for_authentication": j.unscoped,
        "exit": j.exit(),
        "shard": j.shard.map(|s| serde_json::json!({"index": s.index, "of": s.of, "partitions": j.partitions,
            "log": {"bytes": j.read.bytes, "fnv1a64": format!("{:016x}", j.read.digest)}})),
        "stopped": j.stopped,
        "verdict": j.closing().line(),
        "properties": j.verdicts,
    })
}

/// The witness entries as a sequence diagram, `verdict` its closing note: each request,
/// its answer (or a lost one), and the gap before the next; every request and answer
/// marked as the witness (the drawing holds the witness alone).
pub fn diagram(j: &Judged, v: &Verdict, verdict: &str) -> Diagram {
    let mut d = Diagram::default();
    let c = d.participant("C", "client");
    let p = d.participant("P", "platform");
    let Some(w) = &v.witness else { return d };
    let clean = |t: String| t.replace([';', '#'], " ");
    let mut last: Option<&Seen> = None;
    for e in &w.entries {
        if let Some(prev) = last {
            let (over, kind) = ((c, p), NoteKind::Clock);
            let gap = format!("{} later", e.sent.since(prev.closed));
            d.push(Shape::Note { over, kind }, gap);
        }
        let (arrow, reply) = match &e.answer {
            Some(_) => (Arrow::Reply, clean(answer(e))),
            None => (Arrow::Lost, "no answer (unknown outcome)".to_owned()),
        };
        let sent = format!("{} +{} {}", name(j, e), e.sent, clean(request(e)));
        for (from, to, arrow, text, at) in [
            (c, p, Arrow::Call, sent, e.sent.0),
            (p, c, arrow, reply, e.closed.0),
        ] {
            let item = d.push(Shape::Message { from, to, arrow }, text);
            (item.at, item.exchange, item.witness) = (Some(at), Some(e.id.to_string()), true);
        }
        last = Some(e);
    }
    d.push_verdict(verdict);
    d
}
