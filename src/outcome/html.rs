//! What every HTML page of the harness shares (laid out by [`super::doc`]): the head and
//! stylesheets, the verdict's tone, a counterexample's note and figure, a property's row.
//! No script, no external stylesheet, no network at view time: drawings are inline SVG.

use payhub_model::Rule;
use payhub_properties::verdict::{Status, Verdict};
use payhub_sim::diagram::{Diagram, Item, SVG_STYLE};
use std::fmt::Write as _;

pub use payhub_sim::diagram::escape;

/// The page's stylesheet: readable at 1,280 px without horizontal scrolling.
pub const STYLE: &str = "<style>\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI','Noto Sans CJK SC','PingFang SC','Microsoft YaHei',sans-serif;color:#1f2328;margin:0 auto;max-width:1240px;padding:0 16px 48px}\
h1{font-size:22px;margin:0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}h3{font-size:15px;margin:18px 0 6px}\
code,pre{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,'Noto Sans Mono CJK SC',monospace;font-size:12px}\
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:8px;border-radius:4px}\
.banner{padding:14px 16px;border-radius:6px;margin:16px 0}\
.ok{background:#dafbe1;border:1px solid #4ac26b}.fail{background:#ffebe9;border:1px solid #cf222e}.open{background:#fff8c5;border:1px solid #d4a72c}\
table{border-collapse:collapse;width:100%;margin:6px 0}th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:anywhere}\
th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.bad{color:#cf222e;font-weight:bold}.good{color:#1a7f37}.muted{color:#57606a}\
details{margin:4px 0}summary{cursor:pointer}figure{margin:8px 0;overflow-x:auto;max-width:calc(100vw - 80px)}\
.violation{border-left:4px solid #cf222e;padding-left:10px;margin:14px 0}\
</style>";

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

payhub_model::named! {
    fn class;
    /// How the verdict reads: what the exit code says (its page's CSS class).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Tone {
        /// Exit 0: everything judged holds.
        Ok = "ok",
        /// Exit 1: a violation.
        Fail = "fail",
        /// Not judged, incomplete, nothing checked.
        Open = "open",
    }
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
}

/// The closing note of a drawn counterexample: `VIOLATED PROPERTY [RULE, …]: detail`,
/// then each rule's sentence from the catalogue, in English and in the Chinese original
/// (authoritative).
pub fn note(property: &str, rules: &[&str], detail: &str) -> String {
    let mut note = super::violated_line(property, rules, detail);
    for id in rules {
        if let Some(rule) = Rule::from_id(id) {
            let _ = write!(note, " — {id}: {} (zh: {})", rule.text(), rule.zh());
        }
    }
    note
}

/// A counterexample's trace drawn, closed by its verdict's [`note`].
pub fn drawn(trace: &payhub_sim::Trace, property: &str, rules: &[&str], detail: &str) -> Diagram {
    trace.to_diagram(Some(&note(property, rules, detail)), |_| false)
}

/// A drawing as a figure, cut to [`ITEMS_MAX`] items (the witness and the verdict kept).
pub fn figure(d: &Diagram) -> String {
    let total = d.items.len();
    if total <= ITEMS_MAX {
        return format!("<figure>{}</figure>", d.to_svg_unstyled());
    }
    let keep = |i: &Item| i.witness || i.is_verdict();
    let kept = d.items.iter().filter(|i| keep(i)).count();
    let mut room = ITEMS_MAX.saturating_sub(kept);
    let mut cut = d.clone();
    // The others from the start, while there is room.
    cut.items
        .retain(|i| keep(i) || room.checked_sub(1).map(|r| room = r).is_some());
    format!(
        "<figure>{}<figcaption class=\"muted\">{} of {total} items drawn: every witness item and the verdict, the others from the start.</figcaption></figure>",
        cut.to_svg_unstyled(),
        cut.items.len()
    )
}

/// One row of a table of properties.
#[derive(Clone, Debug)]
pub struct PropertyRow {
    pub name: String,
    pub status: Status,
    pub rules: Vec<&'static str>,
    pub detail: String,
}

impl PropertyRow {
    /// A verdict's row.
    pub fn of(v: &Verdict) -> PropertyRow {
        PropertyRow {
            name: v.name.to_owned(),
            status: v.status,
            rules: v.rules.clone(),
            detail: match &v.detail {
                Some(d) => d.clone(),
                None if v.missing.is_empty() => String::new(),
                None => v.status_text(),
            },
        }
    }
}

/// Where a status sorts: violated first, then held, then the rest.
pub fn rank(status: Status) -> u8 {
    match status {
        Status::Violated => 0,
        Status::Holds => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_sim::diagram::{Arrow, Shape};

    fn message(witness: bool) -> Item {
        let (from, to, arrow) = (0, 1, Arrow::Call);
        Item {
            witness,
            ..Item::new(Shape::Message { from, to, arrow }, "POST /v1/payments")
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
}
