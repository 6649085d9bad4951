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

use super::{Arrow, Diagram, Item, NoteKind};
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

impl Rect {
    /// Whether `o` lies wholly inside this box.
    pub fn contains(&self, o: &Rect) -> bool {
        o.x >= self.x
            && o.y >= self.y
            && o.x + o.w <= self.x + self.w
            && o.y + o.h <= self.y + self.h
    }
}

/// A placed text: its lines and the box they fill.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub rect: Rect,
    pub lines: Vec<String>,
    /// Some of the text was cut (the whole of it is the item's title).
    pub elided: bool,
}

/// One item's place.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The row's top and height.
    pub y: f64,
    pub h: f64,
    /// Where its arrow or rule runs (messages and clock moves).
    pub line_y: f64,
    /// The box of a note (not a clock move's rule).
    pub frame: Option<Rect>,
    pub label: Label,
    /// The time shown in the gutter (only where it moved since the row before).
    pub time: Option<Label>,
}

/// The geometry of a drawing.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    /// Each participant's lifeline, x.
    pub lifelines: Vec<f64>,
    /// Each participant's header label.
    pub headers: Vec<Label>,
    /// One per item, in order.
    pub rows: Vec<Row>,
}

impl Layout {
    /// Every text box drawn: headers, row labels, times.
    pub fn labels(&self) -> impl Iterator<Item = &Label> {
        self.headers
            .iter()
            .chain(self.rows.iter().map(|r| &r.label))
            .chain(self.rows.iter().filter_map(|r| r.time.as_ref()))
    }
}

/// Cells a character takes in a monospace face.
fn cells_of(c: char) -> usize {
    let u = c as u32;
    let wide = matches!(u,
        0x1100..=0x115F | 0x2E80..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x3FFFD);
    if wide { 2 } else { 1 }
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

/// A one-line label of `text` centred on `cx`, kept inside `[left, right]`.
fn placed(text: &str, cx: f64, y: f64, left: f64, right: f64) -> Label {
    placed_lines(text, cx, y, left, right, 1)
}

/// A label of `text` centred on `cx`, kept inside `[left, right]`, wrapped to at most
/// `lines_max` lines (the last elided only past them).
fn placed_lines(text: &str, cx: f64, y: f64, left: f64, right: f64, lines_max: usize) -> Label {
    let max = (((right - left) / CELL).floor() as usize).min(LABEL_CELLS_MAX);
    let (lines, elided) = if lines_max <= 1 {
        let (line, elided) = elide(text, max);
        (vec![line], elided)
    } else {
        wrap(text, max, lines_max)
    };
    let w = lines.iter().map(|l| cells(l)).max().unwrap_or(0) as f64 * CELL;
    let x = (cx - w / 2.0).clamp(left, (right - w).max(left));
    Label {
        rect: Rect {
            x,
            y,
            w,
            h: LINE * lines.len() as f64,
        },
        lines,
        elided,
    }
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
    let width = right + MARGIN;
    let lifelines: Vec<f64> = (0..n).map(|i| left + column * (i as f64 + 0.5)).collect();
    let headers = d
        .participants
        .iter()
        .zip(&lifelines)
        .map(|(p, &x)| {
            let half = column / 2.0 - 6.0;
            let mut l = placed(&p.label, x, TOP + (HEADER - LINE) / 2.0, x - half, x + half);
            l.rect.y = TOP + (HEADER - LINE) / 2.0;
            l
        })
        .collect();
    let mut y = TOP + HEADER + 12.0;
    let mut rows = Vec::with_capacity(d.items.len());
    let mut shown_time: Option<u64> = None;
    for item in &d.items {
        let full = item.full_text();
        let row = match item {
            Item::Message { from, to, .. } => {
                let (a, b) = (lifelines[(*from).min(n - 1)], lifelines[(*to).min(n - 1)]);
                let label = placed_lines(&full, (a + b) / 2.0, y, left, right, MESSAGE_LINES_MAX);
                Row {
                    y,
                    h: label.rect.h + 13.0,
                    line_y: y + label.rect.h + 5.0,
                    frame: None,
                    label,
                    time: None,
                }
            }
            Item::Note {
                kind: NoteKind::Clock,
                ..
            } => {
                // Time moves for everyone: the rule spans every lifeline.
                let (a, b) = (lifelines[0], lifelines[n - 1]);
                let label = placed(&full, (a + b) / 2.0, y + 2.0, left, right);
                Row {
                    y,
                    h: LINE + 8.0,
                    line_y: y + 2.0 + LINE / 2.0,
                    frame: None,
                    label,
                    time: None,
                }
            }
            Item::Note { over, kind, .. } => {
                let (a, b) = (
                    lifelines[over.0.min(n - 1)] - column / 2.0 + 8.0,
                    lifelines[over.1.min(n - 1)] + column / 2.0 - 8.0,
                );
                let label = if *kind == NoteKind::Verdict {
                    let max = (((right - left - 16.0) / CELL).floor() as usize).max(8);
                    let (lines, elided) = wrap(&full, max, VERDICT_LINES_MAX);
                    let w = lines.iter().map(|l| cells(l)).max().unwrap_or(0) as f64 * CELL;
                    Label {
                        rect: Rect {
                            x: left + 8.0,
                            y: y + 4.0,
                            w,
                            h: LINE * lines.len() as f64,
                        },
                        lines,
                        elided,
                    }
                } else {
                    placed(&full, (a + b) / 2.0, y + 4.0, left + 4.0, right - 4.0)
                };
                let frame = if *kind == NoteKind::Verdict {
                    Rect {
                        x: left,
                        y,
                        w: inner,
                        h: label.rect.h + 8.0,
                    }
                } else {
                    let x0 = a.min(label.rect.x - 4.0);
                    let x1 = b.max(label.rect.x + label.rect.w + 4.0);
                    Rect {
                        x: x0.max(left),
                        y,
                        w: x1.min(right) - x0.max(left),
                        h: label.rect.h + 8.0,
                    }
                };
                Row {
                    y,
                    h: frame.h + 6.0,
                    line_y: y + frame.h / 2.0,
                    frame: Some(frame),
                    label,
                    time: None,
                }
            }
        };
        let mut row = row;
        if let Some(at) = item.at()
            && shown_time != Some(at)
        {
            shown_time = Some(at);
            let text = seconds(at);
            let w = cells(&text) as f64 * CELL;
            row.time = Some(Label {
                rect: Rect {
                    x: (GUTTER - 4.0 - w).max(2.0),
                    y: row.label.rect.y,
                    w,
                    h: LINE,
                },
                lines: vec![text],
                elided: false,
            });
        }
        y += row.h;
        rows.push(row);
    }
    Layout {
        width,
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
    let class = if d.has_witness() {
        "seq has-witness"
    } else {
        "seq"
    };
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
        let _ = write!(
            s,
            "<g class=\"head\" data-participant=\"{}\"><title>{}</title>\
             <rect x=\"{:.1}\" y=\"{TOP:.1}\" width=\"{:.1}\" height=\"{HEADER:.1}\" rx=\"3\"/>",
            escape(&p.label),
            escape(&p.label),
            h.rect.x - 8.0,
            h.rect.w + 16.0,
        );
        text(&mut s, h, "");
        let _ = write!(
            s,
            "</g><line class=\"lifeline\" data-participant=\"{}\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>",
            escape(&p.label),
            TOP + HEADER,
            l.height - 4.0
        );
    }
    for (item, row) in d.items.iter().zip(&l.rows) {
        draw_item(&mut s, d, l, item, row);
    }
    s.push_str("</svg>");
    s
}

fn text(s: &mut String, label: &crate::diagram::svg::Label, class: &str) {
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
    let (kind, class) = match item {
        Item::Message { arrow, .. } => match arrow {
            Arrow::Call => ("call", "msg call"),
            Arrow::Reply => ("reply", "msg reply"),
            Arrow::Lost => ("lost", "msg lost"),
        },
        Item::Note { kind, .. } => match kind {
            NoteKind::Plain => ("note", "note"),
            NoteKind::Crash => ("crash", "note crash"),
            NoteKind::Clock => ("clock", "clock"),
            NoteKind::Verdict => ("verdict", "verdict"),
        },
    };
    let witness = item.is_witness() && !matches!(kind, "verdict");
    let _ = write!(
        s,
        "<g class=\"item {class}{}\" data-kind=\"{kind}\"",
        if witness { " witness" } else { "" }
    );
    if let Some(e) = item.exchange() {
        let _ = write!(s, " data-exchange=\"{}\"", escape(e));
    }
    if let Item::Message { from, to, .. } = item {
        let _ = write!(
            s,
            " data-from=\"{}\" data-to=\"{}\"",
            escape(&d.participants[(*from).min(n - 1)].label),
            escape(&d.participants[(*to).min(n - 1)].label)
        );
    }
    if witness {
        s.push_str(" data-witness=\"true\"");
    }
    let _ = write!(s, "><title>{}</title>", escape(&item.full_text()));
    match item {
        Item::Message {
            from, to, arrow, ..
        } => {
            let (a, b) = (x(*from), x(*to));
            let y = row.line_y;
            let dir = if b >= a { 1.0 } else { -1.0 };
            if *arrow == Arrow::Lost {
                let end = a + (b - a) * 0.8;
                let _ = write!(
                    s,
                    "<line x1=\"{a:.1}\" y1=\"{y:.1}\" x2=\"{end:.1}\" y2=\"{y:.1}\"/>\
                     <path d=\"M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}\" fill=\"none\"/>",
                    end - 5.0,
                    y - 5.0,
                    end + 5.0,
                    y + 5.0,
                    end - 5.0,
                    y + 5.0,
                    end + 5.0,
                    y - 5.0
                );
            } else {
                let tip = b - dir * 1.0;
                let _ = write!(
                    s,
                    "<line x1=\"{a:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
                     <polygon points=\"{tip:.1},{y:.1} {:.1},{:.1} {:.1},{:.1}\"/>",
                    tip - dir * 8.0,
                    tip - dir * 9.0,
                    y - 4.0,
                    tip - dir * 9.0,
                    y + 4.0
                );
            }
        }
        Item::Note {
            kind: NoteKind::Clock,
            ..
        } => {
            let y = row.line_y;
            let _ = write!(
                s,
                "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
                x(0) - 20.0,
                x(n - 1) + 20.0
            );
        }
        Item::Note { .. } => {
            if let Some(f) = &row.frame {
                let _ = write!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"2\"/>",
                    f.x, f.y, f.w, f.h
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
#[path = "svg_tests.rs"]
mod tests;
