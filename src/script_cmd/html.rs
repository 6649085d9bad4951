//! `run --format html` (and `scenario`): one self-contained page: the verdict and the
//! scripts run first, then every violation (expected or not) with the run drawn, then
//! each script's expectations and the properties checked after every step.

use crate::outcome::doc::{self, Block};
use crate::outcome::html::{self as page, PropertyRow, Tone};
use crate::outcome::text::{Text, text};
use crate::serve::witness::{WitnessEntries, widen};
use payhub_properties::ScriptReport as Report;
use payhub_properties::verdict::Status;
use payhub_sim::Diagram;

/// Bytes of a run's text the page holds at most (the text format prints it all).
const TEXT_MAX: usize = 256 * 1024;

/// `text`, cut at [`TEXT_MAX`] on a line's end, saying so.
fn bounded(text: String) -> String {
    if text.len() <= TEXT_MAX {
        return text;
    }
    let mut end = TEXT_MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text[..end].rfind('\n').map_or(0, |i| i + 1);
    format!(
        "{}… cut at {} of {} bytes: `payhub-verify run FILE` prints it all\n",
        &text[..cut],
        cut,
        text.len()
    )
}

/// The page for the scripts run; `seconds[i]`: how long `reports[i]` took.
pub fn page(reports: &[Report], seconds: &[f64]) -> String {
    let failed = reports.iter().filter(|r| !r.passed()).count();
    let verdict = match reports {
        [one] if one.passed() => format!("PASSED {}", one.script.file),
        [one] => format!("FAILED {}", one.script.file),
        _ => format!(
            "{} of {} scripts passed",
            reports.len() - failed,
            reports.len()
        ),
    };
    let total: f64 = seconds.iter().sum();
    let plural = ["scripts", "script"][usize::from(reports.len() == 1)];
    let mut lines = vec![Text::from(format!(
        "payhub-verify run · {} {plural} in {total:.2} s · exit {}",
        reports.len(),
        u8::from(failed > 0)
    ))];
    let each = reports.iter().zip(seconds);
    lines.extend(each.map(|(r, s)| {
        let (file, steps) = (&r.script.file, r.tape.len());
        text!("`{}`: {} ({} steps, {:.2} s)", file, r.verdict(), steps, s)
    }));
    let tone = Tone::of_exit(u8::from(failed > 0));
    let mut blocks = vec![Block::Banner(tone, verdict.clone(), lines)];
    let violated: Vec<&Report> = reports.iter().filter(|r| r.violation.is_some()).collect();
    if !violated.is_empty() {
        let heading = format!("Violations ({})", violated.len());
        blocks.push(Block::h(2, Some("violations"), heading));
    }
    for r in violated {
        let Some((v, pos)) = &r.violation else {
            continue;
        };
        let expected = r.expected_violation() == Some(v.property.as_str());
        let note = page::note(
            &v.property,
            &r.violation_rules,
            &format!("(line {}) {}", pos.line, v.detail),
        );
        // Built only where the page draws it; a run none of whose exchanges the violation
        // names is drawn whole, none marked.
        let drawing = doc::drawing(&blocks, || diagram(r, &note));
        let whole = matches!(&drawing, Block::Figure(d) if !d.has_witness());
        let whole = whole.then(|| {
            Block::p(
                "The violation names no exchange of the run: the whole run is drawn, none marked.",
            )
        });
        blocks.push(Block::Violation {
            property: v.property.clone(),
            context: text!(
                "in `{}` at line {}{}",
                r.script.file,
                pos.line,
                if expected {
                    ", as the script expects"
                } else {
                    ""
                }
            ),
            rules: r.violation_rules.clone(),
            detail: v.detail.clone(),
            after: [drawing].into_iter().chain(whole).collect(),
        });
    }
    for r in reports {
        rest(&mut blocks, r);
    }
    doc::html(&format!("payhub-verify run: {verdict}"), &blocks)
}

/// The run drawn, the entries that witness what the violation names marked (found as the
/// sandbox's page finds them): its property, judged again over the run's facts, names them.
fn diagram(r: &Report, note: &str) -> Diagram {
    let named = r
        .violation
        .as_ref()
        .and_then(|(v, _)| payhub_properties::property(&v.property))
        .and_then(|p| p.witnessed(&r.world.facts))
        .map(|found| widen(&found.named, &r.world));
    let entries = || r.trace.events.iter().map(|e| (&r.trace, e));
    let witness = named.and_then(|named| WitnessEntries::of(&named, entries()));
    r.trace.to_diagram(Some(note), |e| {
        witness.as_ref().is_some_and(|w| w.keeps(&r.trace, e))
    })
}

/// A script's expectations, the properties checked after every step, and the run as
/// text.
fn rest(blocks: &mut Vec<Block>, r: &Report) {
    let title = r.script.title.as_deref().unwrap_or("");
    blocks.push(Block::h(2, None, text!("`{}` {}", r.script.file, title)));
    let failures = r.failures().into_iter();
    blocks.extend(failures.map(|f| Block::p(text!("**{}**", f))));
    if !r.results.is_empty() {
        let rows = r.results.iter().map(|e| {
            let result = match (&e.failure, e.skipped) {
                (Some(f), _) => text!("**FAILED**: {}", f),
                (None, true) => "not reached (the run stopped at a violation)".into(),
                (None, false) => "holds".into(),
            };
            vec![e.pos.line.to_string().into(), text!("`{}`", e.text), result]
        });
        blocks.push(Block::table("line|expectation|result", rows.collect()));
    }
    let violated = r.violation.as_ref().map(|(v, _)| v);
    let rows: Vec<PropertyRow> = super::always_properties()
        .into_iter()
        .map(|name| {
            let v = violated.filter(|v| v.property == name);
            PropertyRow {
                name: name.to_owned(),
                status: [Status::Holds, Status::Violated][usize::from(v.is_some())],
                rules: super::rules_of(name),
                detail: v.map_or("after every step run".to_owned(), |v| v.detail.clone()),
            }
        })
        .collect();
    blocks.push(Block::Details(
        format!("{} properties checked after every step", rows.len()).into(),
        vec![doc::properties(&rows)],
    ));
    blocks.push(Block::folded("the run as text", bounded(r.to_text())));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_text_is_cut_on_a_line() {
        let line = "é".repeat(40) + "\n";
        let long = line.repeat(TEXT_MAX / line.len() + 10);
        let cut = bounded(long.clone());
        assert!(cut.len() < TEXT_MAX + 100, "{}", cut.len());
        assert!(cut.contains(&format!("of {} bytes", long.len())));
        assert!(
            cut.split('\n')
                .rev()
                .nth(1)
                .unwrap()
                .starts_with("… cut at")
        );
        assert_eq!(bounded("a\n".to_owned()), "a\n");
    }
}
