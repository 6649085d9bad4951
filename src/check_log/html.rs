//! `check-log --format html`: one self-contained page. The first screen holds the
//! verdict, what was read of each file and how long judging took; then each violation
//! with its witness entries drawn (inline SVG, [`super::report::diagram`]: the same
//! drawing the Markdown's Mermaid is), the property, its rules and their sentences; then
//! the properties that hold and those the source cannot judge, with the evidence missing.

use super::Judged;
use super::report::{
    cannot_judge_groups, closing, diagram, read_line, unscoped_line, witness_line,
};
use crate::outcome::html::{self as page, PropertyRow, Tone, escape};
use payhub_properties::verdict::Status;
use std::fmt::Write as _;

/// The page for every file judged; `seconds`: reading and judging them all.
pub fn page(all: &[Judged], seconds: f64) -> String {
    let worst = all.iter().fold(0u8, |w, j| super::rank(w, j.exit()));
    let worst = if all.is_empty() { 2 } else { worst };
    let violated: Vec<&str> = all
        .iter()
        .flat_map(|j| j.verdicts.iter())
        .filter(|v| v.status == Status::Violated)
        .map(|v| v.name)
        .collect();
    let verdict = match (worst, violated.as_slice()) {
        (1, [one]) => format!("VIOLATED {one}"),
        (1, [first, rest @ ..]) => format!("VIOLATED {first} and {} more", rest.len()),
        (0, _) => "every property judged holds".to_owned(),
        (3, _) => "incomplete: entries unreadable, nothing violated in the rest".to_owned(),
        _ => "nothing judged".to_owned(),
    };
    let mut s = page::head(&format!("payhub-verify check-log: {verdict}"));
    let mut lines = vec![format!(
        "payhub-verify check-log · {} {} read and judged in {seconds:.2} s",
        all.len(),
        if all.len() == 1 { "file" } else { "files" }
    )];
    lines.extend(all.iter().map(|j| {
        format!(
            "{}<br><b>{}</b>",
            escape(&read_line(j)),
            escape(&closing(j))
        )
    }));
    s.push_str(&page::banner(
        Tone::of_exit(worst),
        &format!("check-log: {verdict}"),
        &lines,
    ));
    checked(&mut s, all);
    let mut drawn = 0usize;
    for (n, j) in all.iter().enumerate() {
        file(&mut s, n, j, &mut drawn);
    }
    s.push_str(page::END);
    s
}

/// What was checked: one row per file.
fn checked(s: &mut String, all: &[Judged]) {
    s.push_str(
        "<h2 id=\"checked\">What was checked</h2><table><tr><th>file</th><th>format</th><th>entries</th><th>judged</th><th>not the API</th><th>unreadable</th><th>properties judged</th><th>cannot judge</th><th>result</th></tr>",
    );
    for j in all {
        let cannot = j
            .verdicts
            .iter()
            .filter(|v| v.status == Status::CannotJudge)
            .count();
        let result = match j.exit() {
            0 => "<span class=\"good\">holds</span>",
            1 => "<span class=\"bad\">VIOLATED</span>",
            3 => "incomplete",
            _ => "nothing judged",
        };
        let _ = write!(
            s,
            "<tr><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{cannot}</td><td>{result}</td></tr>",
            escape(&j.file.display().to_string()),
            escape(j.format.about()),
            j.entries,
            j.judged,
            j.ignored,
            j.skipped,
            j.verdicts.len() - cannot
        );
    }
    s.push_str("</table>");
}

/// One file: what was skipped or assumed, its violations drawn, then the rest.
fn file(s: &mut String, n: usize, j: &Judged, drawn: &mut usize) {
    let _ = write!(
        s,
        "<section class=\"file\" id=\"file-{n}\"><h2>{}</h2>",
        escape(&j.file.display().to_string())
    );
    let mut notes: Vec<String> = j
        .skips
        .iter()
        .map(|(label, why)| format!("skipped {label}: {why}"))
        .collect();
    if j.skipped as usize > j.skips.len() {
        notes.push(format!(
            "… and {} more skipped",
            j.skipped as usize - j.skips.len()
        ));
    }
    notes.extend(j.assumptions.iter().map(|a| format!("assumed: {a}")));
    if j.unscoped > 0 {
        notes.push(unscoped_line(j));
    }
    if !notes.is_empty() {
        s.push_str("<ul>");
        for line in &notes {
            let _ = write!(s, "<li>{}</li>", escape(line));
        }
        s.push_str("</ul>");
    }
    let violated: Vec<_> = j
        .verdicts
        .iter()
        .filter(|v| v.status == Status::Violated)
        .collect();
    if !violated.is_empty() {
        let _ = write!(s, "<h3>Violations ({})</h3>", violated.len());
    }
    for v in violated {
        let detail = v.detail.as_deref().unwrap_or_default();
        let after = match &v.witness {
            Some(w) => {
                let lines: Vec<String> = w.entries.iter().map(|e| witness_line(j, e)).collect();
                format!(
                    "<details><summary>witness entries ({})</summary><pre>{}</pre></details>",
                    w.entries.len(),
                    escape(&lines.join("\n"))
                )
            }
            None => "<p class=\"muted\">Judged from the facts the source yields: the verdict names no exchange to draw.</p>".to_owned(),
        };
        let draw = || diagram(j, v, &page::note(v.name, &v.rules, detail));
        let v = page::Violation {
            property: v.name,
            context: String::new(),
            rules: &v.rules,
            detail,
            drawing: v.witness.as_ref().map(|_| &draw as &dyn Fn() -> _),
            after,
        };
        s.push_str(&v.html(*drawn));
        *drawn += usize::from(v.drawing.is_some());
    }
    let rows: Vec<PropertyRow> = j
        .verdicts
        .iter()
        .filter(|v| v.status != Status::CannotJudge)
        .map(|v| PropertyRow {
            name: v.name,
            status: v.status.to_string(),
            rules: v.rules.clone(),
            detail: v.detail.clone().unwrap_or_default(),
        })
        .collect();
    let _ = write!(
        s,
        "<h3>Properties judged ({})</h3>{}",
        rows.len(),
        page::properties_table(&rows)
    );
    let groups = cannot_judge_groups(j);
    if !groups.is_empty() {
        let count: usize = groups.iter().map(|(_, names)| names.len()).sum();
        let _ = write!(
            s,
            "<h3>Cannot judge from this source ({count})</h3><table><tr><th>evidence missing</th><th>properties</th></tr>"
        );
        for (needs, names) in groups {
            let _ = write!(
                s,
                "<tr data-status=\"cannot_judge\"><td>{}</td><td>{}</td></tr>",
                escape(&needs),
                page::rules_cell(&names)
            );
        }
        s.push_str("</table>");
    }
    s.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check_log::report::mermaid;

    /// The Markdown's Mermaid and the page's SVG are one diagram: the same items, the
    /// request and answer of each witness entry marked.
    #[test]
    fn the_mermaid_and_the_drawing_are_one_diagram() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/access/dont-do-this.jsonl");
        let j = super::super::judge_file_read(&file, None, None, false).unwrap();
        let v = j
            .verdicts
            .iter()
            .find(|v| v.status == Status::Violated)
            .unwrap();
        assert_eq!(
            mermaid(&j, v),
            "sequenceDiagram\n    participant C as client\n    participant P as platform\n    \
             C->>P: line 1 +0s POST /v1/payments Idempotency-Key k-1 (merchant_order_no ORDER-1, amount 10000, currency USD)\n    \
             P-xC: no answer (unknown outcome)\n    Note over C,P: 1s later\n    \
             C->>P: line 2 +21s POST /v1/payments Idempotency-Key k-2 (merchant_order_no ORDER-1, amount 10000, currency USD)\n    \
             P-->>C: 409 order_no_conflict\n    \
             Note over C,P: client-creates-an-order-under-one-key [UNKNOWN-03, GEN-02, RETRY-03]\n"
        );
        let d = diagram(&j, v, "VIOLATED x");
        assert_eq!(d.items.len(), 6);
        let svg = d.to_svg_unstyled();
        assert_eq!(svg.matches("data-witness=\"true\"").count(), 4, "{svg}");
        let page = page(std::slice::from_ref(&j), 0.5);
        assert!(page.contains("VIOLATED client-creates-an-order-under-one-key"));
        assert!(page.contains("in 0.50 s"));
    }
}
