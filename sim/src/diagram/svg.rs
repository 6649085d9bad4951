//! A [`Diagram`] laid out and drawn as inline SVG.
//!
//! The layout is a grid: one column per participant, one row per item, a gutter on the
//! left for the time of each row. Every label sits in its own row, so no two labels can
//! overlap whatever the diagram holds; a message's label longer than the drawing is wide
//! wraps (to [`MESSAGE_LINES_MAX`] lines), a note's and anything past that is elided
//! with `…`, and its whole text is the item's `<title>` (shown on hover). Text is set in a
//! monospace face, so its width is known without a font: 0.6 em a character (two cells
//! for a wide CJK character). The drawing needs no script, no external stylesheet and no
//! network; a page shows it at its own size (12 px text) in a box that scrolls sideways
//! when the drawing is wider than the page.
//!
//! Items carry `data-*` attributes (`data-kind`, `data-exchange`, `data-witness`) so a
//! page can filter them and a test can read what was drawn.

use super::{Arrow, Diagram, Item, NoteKind, Shape};
use std::fmt::Write as _;

/// Font size, px.
const FONT: f64 = 12.0;
/// The advance of one monospace cell at [`FONT`].
const CELL: f64 = FONT * 0.6;
/// A line of text.
const LINE: f64 = 15.0;
/// The time gutter's width.
const GUTTER: f64 = 70.0;
const MARGIN: f64 = 12.0;
/// The narrowest a column may be, and the narrowest the drawing's inner part.
const COLUMN_MIN: f64 = 190.0;
const INNER_MIN: f64 = 880.0;
/// The header's height and where rows start.
const HEADER: f64 = 28.0;
const TOP: f64 = 8.0;
/// The longest label drawn, in cells, however wide the drawing.
const LABEL_CELLS_MAX: usize = 132;
/// The most lines a message's label is wrapped to: a request's body and an answer's
/// ending (`(response lost)`) stay whole.
const MESSAGE_LINES_MAX: usize = 4;
/// The most lines a verdict note is wrapped to.
const VERDICT_LINES_MAX: usize = 8;

/// An axis-aligned box, px.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// A placed text: its lines and the box they fill; `elided`: some of the text was cut
/// (the whole of it is the item's title).
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub rect: Rect,
    pub lines: Vec<String>,
    pub elided: bool,
}

impl Label {
    /// `lines` set from (`x`, `y`), the box as wide as the longest.
    fn at(x: f64, y: f64, lines: Vec<String>, elided: bool) -> Label {
        let w = lines.iter().map(|l| cells(l)).max().unwrap_or(0) as f64 * CELL;
        let h = LINE * lines.len() as f64;
        Label {
            rect: Rect { x, y, w, h },
            lines,
            elided,
        }
    }
}

/// One item's place: the row's top and height, where its arrow or rule runs, the box of
/// a note (not a clock move's rule), its label, and the time shown in the gutter (only
/// where it moved since the row before).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub y: f64,
    pub h: f64,
    pub line_y: f64,
    pub frame: Option<Rect>,
    pub label: Label,
    pub time: Option<Label>,
}

/// The geometry of a drawing: its size, each participant's lifeline (x) and header
/// label, and one row per item, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    pub lifelines: Vec<f64>,
    pub headers: Vec<Label>,
    pub rows: Vec<Row>,
}

/// Cells a character takes in a monospace face: two for a wide (CJK) character.
fn cells_of(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(1)
}

fn cells(s: &str) -> usize {
    s.chars().map(cells_of).sum()
}

/// `s` cut to `max` cells, ending in `…` if it was cut.
fn elide(s: &str, max: usize) -> (String, bool) {
    if cells(s) <= max {
        return (s.to_owned(), false);
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = cells_of(c);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    (out, true)
}

/// `s` wrapped to lines of at most `max` cells (at spaces where it can, anywhere in a
/// word longer than a line), at most `lines_max` lines (the last elided).
fn wrap(s: &str, max: usize, lines_max: usize) -> (Vec<String>, bool) {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in s.split(' ') {
        let w = cells(word);
        let gap = usize::from(!line.is_empty());
        if used + gap + w <= max {
            if gap == 1 {
                line.push(' ');
            }
            line.push_str(word);
            used += gap + w;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        for c in word.chars() {
            let cw = cells_of(c);
            if used + cw > max {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            line.push(c);
            used += cw;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    if lines.len() <= lines_max {
        return (lines, false);
    }
    lines.truncate(lines_max);
    let last = lines.pop().unwrap_or_default();
    let (cut, _) = elide(&format!("{last} …"), max);
    lines.push(if cut.ends_with('…') {
        cut
    } else {
        format!("{cut}…")
    });
    (lines, true)
}

/// A label of `text` centred on `cx`, kept inside `[left, right]`, wrapped to at most
/// `lines_max` lines (the last elided only past them).
fn placed(text: &str, cx: f64, y: f64, (left, right): (f64, f64), lines_max: usize) -> Label {
    let max = (((right - left) / CELL).floor() as usize).min(LABEL_CELLS_MAX);
    let (lines, elided) = if lines_max <= 1 {
        let (line, elided) = elide(text, max);
        (vec![line], elided)
    } else {
        wrap(text, max, lines_max)
    };
    let mut label = Label::at(0.0, y, lines, elided);
    label.rect.x = (cx - label.rect.w / 2.0).clamp(left, (right - label.rect.w).max(left));
    label
}

fn seconds(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("+{}s", ms / 1000)
    } else {
        format!("+{:.3}s", ms as f64 / 1000.0)
    }
}

pub(super) fn layout(d: &Diagram) -> Layout {
    let n = d.participants.len().max(1);
    let inner = (n as f64 * COLUMN_MIN).max(INNER_MIN);
    let column = inner / n as f64;
    let left = GUTTER + MARGIN;
    let right = left + inner;
    let lifelines: Vec<f64> = (0..n).map(|i| left + column * (i as f64 + 0.5)).collect();
    let half = column / 2.0 - 6.0;
    let headers = d.participants.iter().zip(&lifelines);
    let headers = headers
        .map(|(p, &x)| {
            placed(
                &p.label,
                x,
                TOP + (HEADER - LINE) / 2.0,
                (x - half, x + half),
                1,
            )
        })
        .collect();
    let mut y = TOP + HEADER + 12.0;
    let mut rows = Vec::with_capacity(d.items.len());
    let mut shown_time: Option<u64> = None;
    let at = |i: usize| lifelines[i.min(n - 1)];
    for item in &d.items {
        let full = item.full_text();
        let (label, h, line_y, frame) = match item.shape {
            Shape::Message { from, to, .. } => {
                let mid = (at(from) + at(to)) / 2.0;
                let label = placed(&full, mid, y, (left, right), MESSAGE_LINES_MAX);
                let h = label.rect.h;
                (label, h + 13.0, y + h + 5.0, None)
            }
            Shape::Note {
                kind: NoteKind::Clock,
                ..
            } => {
                // Time moves for everyone: the rule spans every lifeline.
                let mid = (at(0) + at(n - 1)) / 2.0;
                let label = placed(&full, mid, y + 2.0, (left, right), 1);
                (label, LINE + 8.0, y + 2.0 + LINE / 2.0, None)
            }
            Shape::Note { over, kind } => {
                let (a, b) = (
                    at(over.0) - column / 2.0 + 8.0,
                    at(over.1) + column / 2.0 - 8.0,
                );
                let (label, x, w) = if kind == NoteKind::Verdict {
                    let max = (((right - left - 16.0) / CELL).floor() as usize).max(8);
                    let (lines, elided) = wrap(&full, max, VERDICT_LINES_MAX);
                    (Label::at(left + 8.0, y + 4.0, lines, elided), left, inner)
                } else {
                    let label = placed(&full, (a + b) / 2.0, y + 4.0, (left + 4.0, right - 4.0), 1);
                    let x0 = a.min(label.rect.x - 4.0).max(left);
                    let x1 = b.max(label.rect.x + label.rect.w + 4.0).min(right);
                    (label, x0, x1 - x0)
                };
                let h = label.rect.h + 8.0;
                let frame = Rect { x, y, w, h };
                (label, h + 6.0, y + h / 2.0, Some(frame))
            }
        };
        let mut time = None;
        if let Some(at) = item.at
            && shown_time != Some(at)
        {
            shown_time = Some(at);
            let mut t = Label::at(0.0, label.rect.y, vec![seconds(at)], false);
            t.rect.x = (GUTTER - 4.0 - t.rect.w).max(2.0);
            time = Some(t);
        }
        rows.push(Row {
            y,
            h,
            line_y,
            frame,
            label,
            time,
        });
        y += h;
    }
    Layout {
        width: right + MARGIN,
        height: y + 10.0,
        lifelines,
        headers,
        rows,
    }
}

/// Text as HTML (and XML) character data or an attribute value: markup escaped, control
/// characters a page cannot carry replaced.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The drawings' stylesheet: inside each standalone SVG, once on a page of many.
pub const STYLE: &str = "<style>\
.seq text{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,'Noto Sans Mono CJK SC',monospace;font-size:12px;fill:#1f2328}\
.seq .halo{paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round}\
.seq .head rect{fill:#f6f8fa;stroke:#57606a}\
.seq .lifeline{stroke:#8c959f;stroke-dasharray:4 4}\
.seq .msg line{stroke:#1f2328;stroke-width:1.2}\
.seq .msg polygon{fill:#1f2328}\
.seq .reply line{stroke-dasharray:5 3}\
.seq .lost line,.seq .lost path{stroke:#cf222e}\
.seq .note rect{fill:#fff8c5;stroke:#d4a72c}\
.seq .crash rect{fill:#ffebe9;stroke:#cf222e}\
.seq .clock line{stroke:#0969da;stroke-dasharray:2 3}\
.seq .clock text{fill:#0969da}\
.seq .verdict rect{fill:#ffebe9;stroke:#cf222e;stroke-width:2}\
.seq .witness line,.seq .witness path{stroke:#cf222e;stroke-width:2.2}\
.seq .witness polygon{fill:#cf222e}\
.seq .witness text{font-weight:bold}\
.seq.has-witness .item:not(.witness):not(.verdict){opacity:.45}\
.seq .time{fill:#57606a}\
</style>";

pub(super) fn render(d: &Diagram, l: &Layout, styled: bool) -> String {
    let mut s = String::new();
    let class = ["seq", "seq has-witness"][usize::from(d.has_witness())];
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"{class}\" viewBox=\"0 0 {w:.0} {h:.0}\" \
         width=\"{w:.0}\" height=\"{h:.0}\" role=\"img\" \
         aria-label=\"sequence diagram, {n} participants, {m} items\">{style}",
        style = if styled { STYLE } else { "" },
        w = l.width,
        h = l.height,
        n = d.participants.len(),
        m = d.items.len()
    );
    for ((p, &x), h) in d.participants.iter().zip(&l.lifelines).zip(&l.headers) {
        let (name, hx, hw) = (escape(&p.label), h.rect.x - 8.0, h.rect.w + 16.0);
        let _ = write!(
            s,
            "<g class=\"head\" data-participant=\"{name}\"><title>{name}</title>\
             <rect x=\"{hx:.1}\" y=\"{TOP:.1}\" width=\"{hw:.1}\" height=\"{HEADER:.1}\" rx=\"3\"/>"
        );
        text(&mut s, h, "");
        let (y1, y2) = (TOP + HEADER, l.height - 4.0);
        let _ = write!(
            s,
            "</g><line class=\"lifeline\" data-participant=\"{name}\" x1=\"{x:.1}\" y1=\"{y1:.1}\" x2=\"{x:.1}\" y2=\"{y2:.1}\"/>"
        );
    }
    for (item, row) in d.items.iter().zip(&l.rows) {
        draw_item(&mut s, d, l, item, row);
    }
    s.push_str("</svg>");
    s
}

fn text(s: &mut String, label: &Label, class: &str) {
    for (i, line) in label.lines.iter().enumerate() {
        let _ = write!(
            s,
            "<text class=\"halo{}{class}\" x=\"{:.1}\" y=\"{:.1}\" xml:space=\"preserve\">{}</text>",
            if class.is_empty() { "" } else { " " },
            label.rect.x,
            label.rect.y + LINE * (i as f64 + 1.0) - 3.5,
            escape(line)
        );
    }
}

fn draw_item(s: &mut String, d: &Diagram, l: &Layout, item: &Item, row: &Row) {
    let n = l.lifelines.len();
    let x = |i: usize| l.lifelines[i.min(n - 1)];
    let (group, kind) = match item.shape {
        Shape::Message { arrow, .. } => (
            "msg ",
            match arrow {
                Arrow::Call => "call",
                Arrow::Reply => "reply",
                Arrow::Lost => "lost",
            },
        ),
        Shape::Note { kind, .. } => match kind {
            NoteKind::Plain => ("", "note"),
            NoteKind::Crash => ("note ", "crash"),
            NoteKind::Clock => ("", "clock"),
            NoteKind::Verdict => ("", "verdict"),
        },
    };
    let witness = item.witness && !item.is_verdict();
    let _ = write!(
        s,
        "<g class=\"item {group}{kind}{}\" data-kind=\"{kind}\"",
        if witness { " witness" } else { "" }
    );
    if let Some(e) = &item.exchange {
        let _ = write!(s, " data-exchange=\"{}\"", escape(e));
    }
    if let Shape::Message { from, to, .. } = item.shape {
        let name = |i: usize| escape(&d.participants[i.min(n - 1)].label);
        let _ = write!(s, " data-from=\"{}\" data-to=\"{}\"", name(from), name(to));
    }
    if witness {
        s.push_str(" data-witness=\"true\"");
    }
    let _ = write!(s, "><title>{}</title>", escape(&item.full_text()));
    let y = row.line_y;
    match item.shape {
        Shape::Message { from, to, arrow } => {
            let (a, b) = (x(from), x(to));
            let dir = if b >= a { 1.0 } else { -1.0 };
            if arrow == Arrow::Lost {
                // The line stops short and ends in a cross.
                let end = a + (b - a) * 0.8;
                let (x0, x1, y0, y1) = (end - 5.0, end + 5.0, y - 5.0, y + 5.0);
                let _ = write!(
                    s,
                    "<line x1=\"{a:.1}\" y1=\"{y:.1}\" x2=\"{end:.1}\" y2=\"{y:.1}\"/>\
                     <path d=\"M{x0:.1} {y0:.1}L{x1:.1} {y1:.1}M{x0:.1} {y1:.1}L{x1:.1} {y0:.1}\" fill=\"none\"/>"
                );
            } else {
                let tip = b - dir * 1.0;
                let (shaft, back, y0, y1) = (tip - dir * 8.0, tip - dir * 9.0, y - 4.0, y + 4.0);
                let _ = write!(
                    s,
                    "<line x1=\"{a:.1}\" y1=\"{y:.1}\" x2=\"{shaft:.1}\" y2=\"{y:.1}\"/>\
                     <polygon points=\"{tip:.1},{y:.1} {back:.1},{y0:.1} {back:.1},{y1:.1}\"/>"
                );
            }
        }
        Shape::Note {
            kind: NoteKind::Clock,
            ..
        } => {
            let (x0, x1) = (x(0) - 20.0, x(n - 1) + 20.0);
            let _ = write!(
                s,
                "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\"/>"
            );
        }
        Shape::Note { .. } => {
            if let Some(Rect { x, y, w, h }) = &row.frame {
                let _ = write!(
                    s,
                    "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"2\"/>"
                );
            }
        }
    }
    text(s, &row.label, "");
    if let Some(t) = &row.time {
        text(s, t, "time");
    }
    s.push_str("</g>");
}

#[cfg(test)]
#[path = "tests_svg.rs"]
mod tests;
