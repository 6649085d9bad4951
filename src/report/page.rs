//! The pieces every HTML page of the harness is made of (`verify`, `check-log`,
//! `conform`, `run` with `--format html`): the head with the stylesheets, the verdict's
//! banner, a violation's block with its drawn counterexample, the table of properties.
//! One page, no script, no external stylesheet, no network at view time: drawings are
//! inline SVG ([`payhub_sim::diagram`]).

use payhub_model::Rule;
use payhub_sim::diagram::{Diagram, Item, NoteKind, SVG_STYLE};
use std::fmt::Write as _;

pub use super::html::STYLE;
pub use payhub_sim::diagram::escape;

/// Items a drawing holds at most; past it the witness items and the verdict are kept,
/// the others until the bound, and the caption says how many were drawn.
pub const ITEMS_MAX: usize = 400;
/// Violations drawn on one page at most; the rest are listed without a drawing.
pub const FIGURES_MAX: usize = 50;

/// `<!doctype html>` through `<body>`: the title, both stylesheets.
pub fn head(title: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title>{STYLE}{SVG_STYLE}</head><body>",
        escape(title)
    )
}

/// The end of the page.
pub const END: &str = "</body></html>\n";

/// How the verdict reads: what the exit code says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Exit 0: everything judged holds.
    Ok,
    /// Exit 1: a violation.
    Fail,
    /// Not judged, incomplete, nothing checked.
    Open,
}

impl Tone {
    /// The tone of an exit code (0 ok, 1 a violation, anything else open).
    pub fn of_exit(code: u8) -> Tone {
        match code {
            0 => Tone::Ok,
            1 => Tone::Fail,
            _ => Tone::Open,
        }
    }

    fn class(self) -> &'static str {
        match self {
            Tone::Ok => "ok",
            Tone::Fail => "fail",
            Tone::Open => "open",
        }
    }
}

/// The first screen's banner: the verdict as the heading, then `lines` (HTML, already
/// escaped), one a line.
pub fn banner(tone: Tone, verdict: &str, lines: &[String]) -> String {
    format!(
        "<section class=\"banner {}\" id=\"verdict\"><h1>{}</h1><p>{}</p></section>",
        tone.class(),
        escape(verdict),
        lines
            .iter()
            .cloned()
            .chain([contract_line()])
            .collect::<Vec<_>>()
            .join("<br>")
    )
}

/// The contract the page's verdict is given against, as one line of HTML: its title in
/// English and in the Chinese original, its version and date.
pub fn contract_line() -> String {
    format!(
        "contract: {} (the Chinese original is authoritative)",
        escape(&payhub_model::Contract::named())
    )
}

/// `<code>RULE</code>, …`.
pub fn rules_cell(rules: &[&str]) -> String {
    rules
        .iter()
        .map(|r| format!("<code>{}</code>", escape(r)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the contract asks instead: each rule with its sentence from the catalogue, in
/// English and in the Chinese original (authoritative), as a list.
pub fn rule_sentences(rules: &[&str]) -> String {
    if rules.is_empty() {
        return String::new();
    }
    let mut s = String::from("<p>What the contract asks instead:</p><ul class=\"rules\">");
    for id in rules {
        let (text, zh) = Rule::from_id(id).map_or(("", ""), |r| (r.text(), r.zh()));
        let _ = write!(
            s,
            "<li data-rule=\"{}\"><code>{}</code> {}<br><span lang=\"zh\">{}</span></li>",
            escape(id),
            escape(id),
            escape(text),
            escape(zh)
        );
    }
    s.push_str("</ul>");
    s
}

/// The closing note of a drawn counterexample: `VIOLATED PROPERTY [RULE, …]: detail`,
/// then each rule's sentence (as `verify`'s page writes it).
pub fn note(property: &str, rules: &[&str], detail: &str) -> String {
    super::html::verdict_note(property, rules, detail)
}

/// A drawing as a figure, cut to [`ITEMS_MAX`] items (the witness and the verdict kept).
pub fn figure(d: &Diagram) -> String {
    let total = d.items.len();
    if total <= ITEMS_MAX {
        return format!("<figure>{}</figure>", d.to_svg_unstyled());
    }
    let keep = |i: &Item| {
        i.is_witness()
            || matches!(
                i,
                Item::Note {
                    kind: NoteKind::Verdict,
                    ..
                }
            )
    };
    let kept = d.items.iter().filter(|i| keep(i)).count();
    let mut room = ITEMS_MAX.saturating_sub(kept);
    let mut cut = d.clone();
    cut.items.retain(|i| {
        if keep(i) {
            true
        } else if room > 0 {
            room -= 1;
            true
        } else {
            false
        }
    });
    format!(
        "<figure>{}<figcaption class=\"muted\">{} of {total} items drawn: every witness item and the verdict, the others from the start.</figcaption></figure>",
        cut.to_svg_unstyled(),
        cut.items.len()
    )
}

/// The opening of a violation's block: the property as the heading (`context` after it,
/// HTML), its rules with their sentences. Close it with `</div>`.
pub fn violation_open(property: &str, context: &str, rules: &[&str]) -> String {
    let context = if context.is_empty() {
        String::new()
    } else {
        format!(" <span class=\"muted\">{context}</span>")
    };
    format!(
        "<div class=\"violation\" data-property=\"{}\"><h3>{}{context}</h3><p>Rules: {}.</p>{}",
        escape(property),
        escape(property),
        if rules.is_empty() {
            "none named".to_owned()
        } else {
            rules_cell(rules)
        },
        rule_sentences(rules)
    )
}

/// One row of a table of properties.
pub struct PropertyRow<'a> {
    pub name: &'a str,
    /// `holds`, `violated`, `cannot judge (needs …)`.
    pub status: String,
    pub rules: Vec<&'a str>,
    pub detail: String,
}

/// A table of properties (violated first, then held, then the rest, each in the given
/// order), each status coloured.
pub fn properties_table(rows: &[PropertyRow]) -> String {
    let mut s = String::from(
        "<table class=\"properties\"><tr><th>property</th><th>status</th><th>rules</th><th>detail</th></tr>",
    );
    let rank = |r: &PropertyRow| match r.status.as_str() {
        "violated" => 0,
        "holds" => 1,
        _ => 2,
    };
    let mut order: Vec<&PropertyRow> = rows.iter().collect();
    order.sort_by_key(|r| rank(r));
    for r in order {
        let class = match rank(r) {
            0 => "bad",
            1 => "good",
            _ => "muted",
        };
        let _ = write!(
            s,
            "<tr data-status=\"{}\"><td><code>{}</code></td><td class=\"{class}\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.status),
            escape(r.name),
            escape(&r.status),
            rules_cell(&r.rules),
            escape(&r.detail)
        );
    }
    s.push_str("</table>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_sim::diagram::Arrow;

    fn message(witness: bool) -> Item {
        Item::Message {
            from: 0,
            to: 1,
            arrow: Arrow::Call,
            text: "POST /v1/payments".into(),
            rule: None,
            at: None,
            exchange: None,
            witness,
        }
    }

    #[test]
    fn a_long_drawing_keeps_its_witness_and_verdict() {
        let mut d = Diagram::default();
        d.participant("C", "client");
        d.participant("P", "platform");
        d.items = (0..ITEMS_MAX + 100).map(|_| message(false)).collect();
        d.items.push(message(true));
        d.push_verdict("VIOLATED p [R]: x");
        let f = figure(&d);
        assert!(f.contains("data-witness"), "the witness was cut");
        assert!(f.contains("VIOLATED p"), "the verdict was cut");
        assert!(f.contains(&format!("{ITEMS_MAX} of {} items drawn", ITEMS_MAX + 102)));
        assert!(!figure(&Diagram::default()).contains("items drawn"));
    }

    #[test]
    fn the_head_carries_both_stylesheets_and_no_script() {
        let h = head("a <b>");
        assert!(h.starts_with("<!doctype html>"));
        assert!(h.contains("<title>a &lt;b&gt;</title>"));
        assert!(h.contains(".seq text") && h.contains(".banner"));
        assert!(!h.contains("<script"));
    }

    #[test]
    fn properties_are_listed_violated_first() {
        let row = |name, status: &str| PropertyRow {
            name,
            status: status.to_owned(),
            rules: vec!["IDEM-01"],
            detail: String::new(),
        };
        let t = properties_table(&[row("a", "holds"), row("b", "violated")]);
        assert!(t.find("<code>b</code>") < t.find("<code>a</code>"), "{t}");
    }
}
