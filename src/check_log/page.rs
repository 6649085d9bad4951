//! `check-log --format markdown|html`: one page, built once: the verdict and what was
//! read first, then per file each violation with its witness entries drawn
//! ([`super::report::diagram`]), what held and what the source cannot judge.

use super::Judged;
use super::report::{diagram, read_line, witness_line};
use crate::outcome::doc::{Block, drawing};
use crate::outcome::html::{self as page, Tone};
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
    let mut blocks = vec![Block::Banner(
        Tone::of_exit(worst),
        format!("check-log: {verdict}"),
        lines,
    )];
    for j in all {
        file(&mut blocks, j);
    }
    (blocks, format!("payhub-verify check-log: {verdict}"))
}

/// One file: what was skipped or assumed, its violations drawn, then the rest.
fn file(blocks: &mut Vec<Block>, j: &Judged) {
    blocks.push(Block::Heading(2, None, text!("`{}`", j.file.display())));
    let notes = super::report::notes(j);
    if !notes.is_empty() {
        blocks.push(Block::List(notes.into_iter().map(Text::from).collect()));
    }
    crate::outcome::verdict_blocks(blocks, 3, &j.verdicts, |v, blocks| match &v.witness {
        Some(w) => {
            let note = page::note(v.name, &v.rules, v.detail.as_deref().unwrap_or_default());
            let lines: Vec<String> = w.entries.iter().map(|e| witness_line(j, e)).collect();
            let summary = format!("witness entries ({})", w.entries.len());
            let drawing = drawing(blocks, || diagram(j, v, &note));
            vec![drawing, Block::folded(summary, lines.join("\n"))]
        }
        None => vec![Block::p(
            "Judged from the facts the source yields: the verdict names no exchange to draw.",
        )],
    });
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
        assert!(page.contains("in 0.50 s") && page.contains("<b>VIOLATED client-creates"));
    }
}
