//! `check-log --format markdown|html`: one page, built once: the verdict and what was
//! read first, then per file each violation with its witness entries drawn
//! ([`super::report::diagram`]), what held and what the source cannot judge.

use super::Judged;
use super::report::{cannot_judge_groups, diagram, read_line, unscoped_line, witness_line};
use crate::outcome::doc::{Block, Drawing};
use crate::outcome::html::{self as page, PropertyRow, Tone};
use crate::outcome::text::{Text, text};
use payhub_properties::verdict::Status;

/// The page for every file judged; `seconds`: reading and judging them all. Its title
/// is the second value.
pub fn page(all: &[Judged], seconds: f64) -> (Vec<Block>, String) {
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
    let mut lines = vec![Text::from(format!(
        "payhub-verify check-log · {} {} read and judged in {seconds:.2} s",
        all.len(),
        if all.len() == 1 { "file" } else { "files" }
    ))];
    lines.extend(
        all.iter()
            .map(|j| text!("{}\n**{}**", read_line(j), j.closing().line())),
    );
    let mut blocks = vec![
        Block::Banner(Tone::of_exit(worst), format!("check-log: {verdict}"), lines),
        Block::Heading(2, Some("checked"), "What was checked".into()),
        Block::Table(
            "file|format|entries|judged|not the API|unreadable|properties judged|cannot judge|result",
            all.iter().map(checked).collect(),
        ),
    ];
    for j in all {
        file(&mut blocks, j);
    }
    (blocks, format!("payhub-verify check-log: {verdict}"))
}

/// One row of what was checked.
fn checked(j: &Judged) -> Vec<Text> {
    let cannot = j
        .verdicts
        .iter()
        .filter(|v| v.status == Status::CannotJudge)
        .count();
    let result = match j.exit() {
        0 => text!("holds"),
        1 => text!("**VIOLATED**"),
        3 => text!("incomplete"),
        _ => text!("nothing judged"),
    };
    let n = [j.entries, j.judged, j.ignored, j.skipped].map(|n| n.to_string().into());
    let mut row = vec![text!("`{}`", j.file.display()), j.format.about().into()];
    row.extend(n);
    row.extend([
        (j.verdicts.len() - cannot).to_string().into(),
        cannot.to_string().into(),
        result,
    ]);
    row
}

/// One file: what was skipped or assumed, its violations drawn, then the rest.
fn file(blocks: &mut Vec<Block>, j: &Judged) {
    blocks.push(Block::Heading(2, None, text!("`{}`", j.file.display())));
    let mut notes: Vec<Text> = j
        .skips
        .iter()
        .map(|(label, why)| format!("skipped {label}: {why}").into())
        .collect();
    if j.skipped as usize > j.skips.len() {
        let more = j.skipped as usize - j.skips.len();
        notes.push(format!("… and {more} more skipped").into());
    }
    notes.extend(j.assumptions.iter().map(|a| format!("assumed: {a}").into()));
    if j.unscoped > 0 {
        notes.push(unscoped_line(j).into());
    }
    if !notes.is_empty() {
        blocks.push(Block::List(notes));
    }
    let violated: Vec<_> = j
        .verdicts
        .iter()
        .filter(|v| v.status == Status::Violated)
        .collect();
    if !violated.is_empty() {
        let n = violated.len();
        blocks.push(Block::Heading(3, None, format!("Violations ({n})").into()));
    }
    for v in violated {
        let detail = v.detail.clone().unwrap_or_default();
        let after = match &v.witness {
            Some(w) => {
                let lines: Vec<String> = w.entries.iter().map(|e| witness_line(j, e)).collect();
                Block::Details(
                    format!("witness entries ({})", w.entries.len()).into(),
                    vec![Block::Code(lines.join("\n"))],
                )
            }
            None => Block::Para(
                "Judged from the facts the source yields: the verdict names no exchange to draw."
                    .into(),
            ),
        };
        blocks.push(Block::Violation {
            property: v.name.to_owned(),
            context: Text::default(),
            rules: v.rules.clone(),
            drawing: match &v.witness {
                Some(_) => Drawing::after(blocks, || {
                    diagram(j, v, &page::note(v.name, &v.rules, &detail))
                }),
                None => Drawing::None,
            },
            detail,
            after: vec![after],
        });
    }
    let rows: Vec<PropertyRow> = j
        .verdicts
        .iter()
        .filter(|v| v.status != Status::CannotJudge)
        .map(PropertyRow::of)
        .collect();
    blocks.push(Block::Heading(
        3,
        None,
        format!("Properties judged ({})", rows.len()).into(),
    ));
    blocks.push(Block::Properties(rows));
    let groups = cannot_judge_groups(j);
    if !groups.is_empty() {
        let count: usize = groups.iter().map(|(_, names)| names.len()).sum();
        blocks.push(Block::Heading(
            3,
            None,
            format!("Cannot judge from this source ({count})").into(),
        ));
        let rows = groups.into_iter().map(|(needs, names)| {
            let names = names.iter().map(|n| text!("`{}`", n));
            vec![needs.into(), Text::join(names, ", ")]
        });
        blocks.push(Block::Table("evidence missing|properties", rows.collect()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Markdown's Mermaid and the page's SVG are one diagram: the same items, the
    /// request and answer of each witness entry marked.
    #[test]
    fn the_mermaid_and_the_drawing_are_one_diagram() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/access/dont-do-this.jsonl");
        let j = super::super::judge_file_with(&file, None, false, Default::default()).unwrap();
        let v = j
            .verdicts
            .iter()
            .find(|v| v.status == Status::Violated)
            .unwrap();
        let d = diagram(&j, v, &format!("{} [{}]", v.name, v.rules.join(", ")));
        assert_eq!(
            d.to_mermaid(),
            "sequenceDiagram\n    participant C as client\n    participant P as platform\n    \
             C->>P: line 1 +0s POST /v1/payments Idempotency-Key k-1 (merchant_order_no ORDER-1, amount 10000, currency USD)\n    \
             P-xC: no answer (unknown outcome)\n    Note over C,P: 1s later\n    \
             C->>P: line 2 +21s POST /v1/payments Idempotency-Key k-2 (merchant_order_no ORDER-1, amount 10000, currency USD)\n    \
             P-->>C: 409 order_no_conflict\n    \
             Note over C,P: client-creates-an-order-under-one-key [UNKNOWN-03, GEN-02, RETRY-03]\n"
        );
        assert_eq!(d.items.len(), 6);
        let svg = d.to_svg_unstyled();
        assert_eq!(svg.matches("data-witness=\"true\"").count(), 4, "{svg}");
        let (blocks, title) = page(std::slice::from_ref(&j), 0.5);
        let page = crate::outcome::doc::html(&title, &blocks);
        assert!(page.contains("VIOLATED client-creates-an-order-under-one-key"));
        assert!(page.contains("in 0.50 s") && page.contains("<td><b>VIOLATED</b></td>"));
    }
}
