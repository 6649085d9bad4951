//! `run --format html` (and `scenario`): one self-contained page. The first screen holds
//! the verdict, the scripts run and how long each took; then every violation (expected
//! or not) with the run drawn as inline SVG, the entries that witness it marked, the
//! property, its rules and their sentences in the closing note; then each script's
//! expectations and the properties checked after every step.

use crate::outcome::html::{self as page, PropertyRow, Tone, escape};
use crate::serve::diagrams::{WitnessEntries, widen};
use payhub_properties::ScriptReport as Report;
use payhub_sim::Diagram;
use std::fmt::Write as _;

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
        [one] if one.passed() => format!("PASSED {}", one.file),
        [one] => format!("FAILED {}", one.file),
        _ => format!(
            "{} of {} scripts passed",
            reports.len() - failed,
            reports.len()
        ),
    };
    let total: f64 = seconds.iter().sum();
    let mut s = page::head(&format!("payhub-verify run: {verdict}"));
    let mut lines = vec![format!(
        "payhub-verify run · {} {} in {total:.2} s · exit {}",
        reports.len(),
        if reports.len() == 1 {
            "script"
        } else {
            "scripts"
        },
        u8::from(failed > 0)
    )];
    lines.extend(
        reports
            .iter()
            .map(|r| format!("<code>{}</code>: {}", escape(&r.file), escape(&r.verdict()))),
    );
    s.push_str(&page::banner(
        Tone::of_exit(u8::from(failed > 0)),
        &verdict,
        &lines,
    ));
    s.push_str(
        "<h2 id=\"checked\">What was checked</h2><table><tr><th>script</th><th>title</th><th>steps</th><th>expectations</th><th>result</th><th>seconds</th></tr>",
    );
    for (r, secs) in reports.iter().zip(seconds) {
        let _ = write!(
            s,
            "<tr><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{secs:.2}</td></tr>",
            escape(&r.file),
            escape(r.title.as_deref().unwrap_or("")),
            r.tape.len(),
            r.results.len(),
            if r.passed() {
                "<span class=\"good\">pass</span>"
            } else {
                "<span class=\"bad\">FAILED</span>"
            }
        );
    }
    s.push_str("</table>");
    violations(&mut s, reports);
    for (n, r) in reports.iter().enumerate() {
        rest(&mut s, n, r);
    }
    s.push_str(page::END);
    s
}

/// Every violation, its run drawn with the witness marked.
fn violations(s: &mut String, reports: &[Report]) {
    let violated: Vec<&Report> = reports.iter().filter(|r| r.violation.is_some()).collect();
    if violated.is_empty() {
        return;
    }
    s.push_str(&page::violations_heading(violated.len()));
    for (n, r) in violated.into_iter().enumerate() {
        let Some((v, pos)) = &r.violation else {
            continue;
        };
        let expected = r.expected_violation.as_deref() == Some(v.property.as_str());
        let note = page::note(
            &v.property,
            &r.violation_rules,
            &format!("(line {}) {}", pos.line, v.detail),
        );
        // Built only where the page draws it; a run none of whose exchanges the violation
        // names is drawn whole, none marked.
        let drawn = (n < page::FIGURES_MAX).then(|| diagram(r, &note));
        let draw = || drawn.clone().unwrap_or_default();
        let v = page::Violation {
            property: &v.property,
            context: format!(
                "in {} at line {}{}",
                escape(&r.file),
                pos.line,
                if expected {
                    ", as the script expects"
                } else {
                    ""
                }
            ),
            rules: &r.violation_rules,
            detail: &v.detail,
            after: if drawn.as_ref().is_none_or(|d| d.has_witness()) {
                String::new()
            } else {
                "<p class=\"muted\">The violation names no exchange of the run: the whole run is drawn, none marked.</p>".to_owned()
            },
            drawing: Some(&draw),
        };
        s.push_str(&v.html(n));
    }
}

/// The run as a drawing: the entries that witness what the violation names (an order, a
/// Payment, a key, a request; a named order widened to the Payments charged for it, a
/// Payment to the acquirer's attempts on it), with the rest of their HTTP exchanges,
/// marked as the witness (as the sandbox's page finds a violation's witness). The run
/// stopped at the violation: its property, judged again over the run's facts, gives the
/// typed witness.
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
fn rest(s: &mut String, n: usize, r: &Report) {
    let _ = write!(
        s,
        "<section class=\"script\" id=\"script-{n}\"><h2><code>{}</code> {}</h2>",
        escape(&r.file),
        escape(r.title.as_deref().unwrap_or(""))
    );
    for f in r.failures() {
        let _ = write!(s, "<p class=\"bad\">{}</p>", escape(&f));
    }
    if !r.results.is_empty() {
        s.push_str("<table><tr><th>line</th><th>expectation</th><th>result</th></tr>");
        for e in &r.results {
            let result = match (&e.failure, e.skipped) {
                (Some(f), _) => format!("<span class=\"bad\">FAILED</span>: {}", escape(f)),
                (None, true) => "not reached (the run stopped at a violation)".to_owned(),
                (None, false) => "<span class=\"good\">holds</span>".to_owned(),
            };
            let _ = write!(
                s,
                "<tr><td class=\"n\">{}</td><td><code>{}</code></td><td>{result}</td></tr>",
                e.pos.line,
                escape(&e.text)
            );
        }
        s.push_str("</table>");
    }
    let violated = r.violation.as_ref().map(|(v, _)| v.property.as_str());
    let rows: Vec<PropertyRow> = super::always_properties()
        .into_iter()
        .map(|name| PropertyRow {
            name,
            status: if Some(name) == violated {
                "violated".to_owned()
            } else {
                "holds".to_owned()
            },
            rules: super::rules_of(name),
            detail: if Some(name) == violated {
                r.violation
                    .as_ref()
                    .map(|(v, _)| v.detail.clone())
                    .unwrap_or_default()
            } else {
                "after every step run".to_owned()
            },
        })
        .collect();
    let _ = write!(
        s,
        "<details><summary>{} properties checked after every step</summary>{}</details>\
         <details><summary>the run as text</summary><pre>{}</pre></details></section>",
        rows.len(),
        page::properties_table(&rows),
        escape(&bounded(r.to_text()))
    );
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
