//! A page as data: the verdict's banner, headings, paragraphs, lists, tables, drawings
//! and violations, built once by a command and drawn by one Markdown and one HTML
//! renderer. Text is typed ([`Text`]): a builder's markup is never read in the values
//! it fills in. A violation carries what the contract asks instead: each
//! rule's sentence in English and in the Chinese original (authoritative), and its
//! drawing (a Mermaid block a code host draws, inline SVG in HTML).

use super::html::{self, PropertyRow, Tone, escape};
use super::text::{Text, longest_run, md_escape, text};
use payhub_model::Rule;
use payhub_sim::Diagram;
use std::fmt::Write as _;

/// One block of a page.
#[derive(Clone, Debug)]
pub enum Block {
    /// The first screen: the verdict as the heading (coloured by its tone in HTML), then
    /// `lines`, one a line, and the contract judged.
    Banner(Tone, String, Vec<Text>),
    /// `level` 1 to 3; the HTML anchor, if any.
    Heading(u8, Option<&'static str>, Text),
    Para(Text),
    List(Vec<Text>),
    /// The head's cells separated by `|`, then the rows. Markdown shows the first
    /// `usize` columns of the rows marked `true` (none: no table); HTML the whole table.
    Table(&'static str, usize, Vec<(bool, Vec<Text>)>),
    /// Each rule's sentence, in English and in the Chinese original (authoritative).
    Rules(Vec<&'static str>),
    /// Preformatted text, as is.
    Code(String),
    /// A drawing: inline Mermaid in Markdown, SVG in HTML.
    Figure(Diagram),
    /// A drawing known only as a Mermaid document: inline in Markdown, its source
    /// (collapsed) in HTML.
    Mermaid(String),
    /// A collapsed block: `<details>` in both formats.
    Details(Text, Vec<Block>),
    /// Blocks of one format only: the Markdown page stays short (a code host shows it
    /// whole), the HTML page holds every text and drawing.
    Md(Vec<Block>),
    Html(Vec<Block>),
    /// A violation: the property, where (`context`), its rules with their sentences,
    /// the detail, then `after`: its drawing ([`drawing`]) first, if it has one.
    Violation {
        property: String,
        context: Text,
        rules: Vec<&'static str>,
        detail: String,
        after: Vec<Block>,
    },
}

impl Block {
    /// A paragraph.
    pub fn p(text: impl Into<Text>) -> Block {
        Block::Para(text.into())
    }

    /// A heading of `level`, with its HTML anchor if any.
    pub fn h(level: u8, id: Option<&'static str>, text: impl Into<Text>) -> Block {
        Block::Heading(level, id, text.into())
    }

    /// A table, whole in both formats.
    pub fn table(head: &'static str, rows: Vec<Vec<Text>>) -> Block {
        Block::Table(
            head,
            usize::MAX,
            rows.into_iter().map(|r| (true, r)).collect(),
        )
    }

    /// Preformatted `text`, collapsed under `summary`.
    pub fn folded(summary: impl Into<Text>, text: impl Into<String>) -> Block {
        Block::Details(summary.into(), vec![Block::Code(text.into())])
    }
}

/// The drawing of the violation that follows `page`: a page draws its first
/// [`html::FIGURES_MAX`] violations (`build` draws one); past them a drawing is never
/// built, and the page says so.
pub fn drawing(page: &[Block], build: impl FnOnce() -> Diagram) -> Block {
    let drawn = page.iter().filter(|b| {
        matches!(b, Block::Violation { after, .. } if matches!(after.first(), Some(Block::Figure(_))))
    });
    match drawn.count() < html::FIGURES_MAX {
        true => Block::Figure(build()),
        false => Block::p(format!(
            "Not drawn: the page draws {} violations at most (the text and JSON formats list each).",
            html::FIGURES_MAX
        )),
    }
}

/// The contract the page's verdict is given against: its title in English and in the
/// Chinese original, its version and date.
fn contract_line() -> Text {
    format!(
        "contract: {} (the Chinese original is authoritative)",
        payhub_model::Contract::named()
    )
    .into()
}

/// A banner's lines, one a line, then the contract judged.
fn banner_lines(lines: &[Text]) -> Text {
    Text::join(lines.iter().cloned().chain([contract_line()]), "\n")
}

/// A table of properties: violated first, then held, then the rest.
pub fn properties(rows: &[PropertyRow]) -> Block {
    let mut order: Vec<&PropertyRow> = rows.iter().collect();
    order.sort_by_key(|r| html::rank(r.status));
    let rows = order.into_iter().map(|r| {
        let (name, status) = (text!("`{}`", r.name), r.status.as_str().into());
        vec![name, status, codes(&r.rules), r.detail.as_str().into()]
    });
    Block::table("property|status|rules|detail", rows.collect())
}

/// `` `A`, `B` ``: names as code.
fn codes(names: &[&str]) -> Text {
    Text::join(names.iter().map(|n| text!("`{}`", n)), ", ")
}

/// A violation as the blocks both formats draw: its heading, the detail, its rules with
/// their sentences, then its drawing (or why it is not drawn) and what follows it.
fn violation(b: &Block) -> Vec<Block> {
    let Block::Violation {
        property,
        context,
        rules,
        detail,
        after,
    } = b
    else {
        return Vec::new();
    };
    let mut heading = text!("Violation of `{}`", property);
    if *context != Text::default() {
        heading = heading + " " + context.clone();
    }
    let named = match rules.is_empty() {
        true => text!("Rules: none named."),
        false => text!("Rules: ") + codes(rules) + ". The contract asks instead:",
    };
    let mut blocks = vec![Block::h(3, None, heading), Block::p(detail.as_str())];
    blocks.push(Block::p(named));
    blocks.extend((!rules.is_empty()).then(|| Block::Rules(rules.clone())));
    blocks.extend(after.iter().cloned());
    blocks
}

/// The page as Markdown.
pub fn markdown(blocks: &[Block]) -> String {
    let mut s = String::new();
    blocks.iter().for_each(|b| md_block(&mut s, b));
    s
}

/// A table cell: its `|` escaped, on one line.
fn cell(t: &Text) -> String {
    t.markdown().replace('|', "\\|").replace('\n', "<br>")
}

fn md_block(s: &mut String, b: &Block) {
    match b {
        Block::Banner(_, title, lines) => {
            let lines = banner_lines(lines).markdown().replace('\n', "  \n");
            _ = writeln!(s, "# {}\n\n{lines}\n", md_escape(title))
        }
        Block::Heading(level, _, text) => {
            _ = writeln!(
                s,
                "{} {}\n",
                "#".repeat(usize::from(*level)),
                text.markdown()
            )
        }
        Block::Para(text) if *text == Text::default() => {}
        Block::Para(text) => _ = writeln!(s, "{}\n", text.markdown()),
        Block::List(items) => {
            for i in items {
                _ = writeln!(s, "- {}", i.markdown().replace('\n', "  \n  "));
            }
            s.push('\n');
        }
        Block::Rules(ids) => {
            for r in ids.iter().filter_map(|id| Rule::from_id(id)) {
                _ = writeln!(s, "- **{}** {} (原文: {})", r.id(), r.text(), r.zh());
            }
            s.push('\n');
        }
        Block::Table(head, n, rows) if rows.iter().any(|r| r.0) => {
            let head: Vec<&str> = head.split('|').take(*n).collect();
            let n = head.len();
            _ = writeln!(s, "| {} |\n|{}", head.join(" | "), "---|".repeat(n));
            for (_, r) in rows.iter().filter(|r| r.0) {
                let cells: Vec<String> = r.iter().take(n).map(cell).collect();
                _ = writeln!(s, "| {} |", cells.join(" | "));
            }
            s.push('\n');
        }
        Block::Table(..) => {}
        Block::Code(text) => {
            let f = fence(text);
            _ = writeln!(s, "{f}text\n{}\n{f}\n", text.trim_end())
        }
        Block::Figure(diagram) => md_block(s, &Block::Mermaid(diagram.to_mermaid())),
        Block::Mermaid(m) => {
            let f = fence(m);
            _ = writeln!(s, "{f}mermaid\n{m}{f}\n")
        }
        Block::Details(summary, body) => {
            _ = writeln!(s, "<details><summary>{}</summary>\n", summary.html());
            body.iter().for_each(|b| md_block(s, b));
            _ = writeln!(s, "</details>\n")
        }
        Block::Md(body) => body.iter().for_each(|b| md_block(s, b)),
        Block::Html(_) => {}
        Block::Violation { .. } => violation(b).iter().for_each(|b| md_block(s, b)),
    }
}

/// The page as HTML: the head with `title`, the blocks, the end.
pub fn html(title: &str, blocks: &[Block]) -> String {
    html::head(title) + &body(blocks) + html::END
}

/// The blocks as HTML, without the head (a page that shows them inside its own).
pub fn body(blocks: &[Block]) -> String {
    let mut s = String::new();
    blocks.iter().for_each(|b| html_block(&mut s, b));
    s
}

/// A page and its title, drawn as HTML or else as Markdown (the title is the HTML's).
pub fn draw((blocks, title): (Vec<Block>, String), as_html: bool) -> String {
    match as_html {
        true => html(&title, &blocks),
        false => markdown(&blocks),
    }
}

/// A Markdown fence for `text`: longer than any backtick run inside it, three at least.
fn fence(text: &str) -> String {
    "`".repeat(longest_run(text, '`').max(2) + 1)
}

fn html_block(s: &mut String, b: &Block) {
    match b {
        Block::Banner(tone, title, lines) => {
            let (class, title, lines) = (tone.class(), escape(title), banner_lines(lines).html());
            _ = write!(
                s,
                "<section class=\"banner {class}\" id=\"verdict\"><h1>{title}</h1><p>{lines}</p></section>"
            )
        }
        Block::Heading(level, id, text) => {
            let id = id.map(|i| format!(" id=\"{i}\"")).unwrap_or_default();
            _ = write!(s, "<h{level}{id}>{}</h{level}>", text.html())
        }
        Block::Para(text) if *text == Text::default() => {}
        Block::Para(text) => _ = write!(s, "<p>{}</p>", text.html()),
        Block::List(items) => {
            let items: String = items
                .iter()
                .map(|i| format!("<li>{}</li>", i.html()))
                .collect();
            _ = write!(s, "<ul>{items}</ul>")
        }
        Block::Rules(ids) => {
            s.push_str("<ul class=\"rules\">");
            for id in ids {
                let (text, zh) = Rule::from_id(id).map_or(("", ""), |r| (r.text(), r.zh()));
                let (id, text, zh) = (escape(id), escape(text), escape(zh));
                _ = write!(
                    s,
                    "<li data-rule=\"{id}\"><code>{id}</code> {text}<br><span lang=\"zh\">{zh}</span></li>"
                );
            }
            s.push_str("</ul>")
        }
        Block::Table(head, _, rows) => {
            let head: String = head
                .split('|')
                .map(|h| format!("<th>{}</th>", escape(h)))
                .collect();
            _ = write!(s, "<table><tr>{head}</tr>");
            for (_, r) in rows {
                let cells: String = r.iter().map(|c| format!("<td>{}</td>", c.html())).collect();
                _ = write!(s, "<tr>{cells}</tr>");
            }
            s.push_str("</table>")
        }
        Block::Code(text) => _ = write!(s, "<pre>{}</pre>", escape(text.trim_end())),
        Block::Figure(diagram) => _ = write!(s, "{}", html::figure(diagram)),
        Block::Mermaid(m) => {
            let source = vec![Block::Code(m.clone())];
            html_block(s, &Block::Details("Mermaid source".into(), source))
        }
        Block::Details(summary, body) => {
            _ = write!(s, "<details><summary>{}</summary>", summary.html());
            body.iter().for_each(|b| html_block(s, b));
            s.push_str("</details>")
        }
        Block::Html(body) => body.iter().for_each(|b| html_block(s, b)),
        Block::Md(_) => {}
        Block::Violation { property, .. } => {
            _ = write!(
                s,
                "<div class=\"violation\" data-property=\"{}\">",
                escape(property)
            );
            violation(b).iter().for_each(|b| html_block(s, b));
            s.push_str("</div>")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::text::text;
    use payhub_properties::verdict::Status;

    #[test]
    fn text_reads_the_same_in_both_formats() {
        let page = vec![
            Block::Heading(2, Some("t"), "T".into()),
            Block::table("a|b", vec![vec![text!("`{}`", "1|2"), "x`**<b>".into()]]),
        ];
        assert_eq!(
            markdown(&page),
            "## T\n\n| a | b |\n|---|---|\n| `1\\|2` | x\\`\\*\\*\\<b\\> |\n\n"
        );
        let h = html("t", &page);
        assert!(h.contains("<h2 id=\"t\">T</h2><table><tr><th>a</th><th>b</th></tr><tr><td><code>1|2</code></td><td>x`**&lt;b&gt;</td></tr></table>"), "{h}");
    }

    /// Each rule in both languages, the drawing fenced in Markdown and drawn in HTML up to
    /// the bound, then listed.
    #[test]
    fn a_violation_quotes_each_rule_in_both_languages_and_draws_its_witness() {
        let mut d = Diagram::default();
        d.participant("C", "client");
        d.push_verdict("VIOLATED p [KEY-01]: x");
        let v = |drawing: Option<Block>| Block::Violation {
            property: "p".into(),
            context: Text::default(),
            rules: vec!["KEY-01"],
            detail: "seen".into(),
            after: drawing
                .into_iter()
                .chain([Block::Code("after".into())])
                .collect(),
        };
        let rule = Rule::from_id("KEY-01").unwrap();
        let md = markdown(&[v(Some(Block::Figure(d.clone())))]);
        assert!(md.contains(rule.text()) && md.contains(rule.zh()), "{md}");
        assert!(md.contains("```mermaid\nsequenceDiagram\n"), "{md}");
        assert!(!markdown(&[v(None)]).contains("```mermaid"));
        let unnamed = Block::Violation {
            property: "p".into(),
            context: Text::default(),
            rules: Vec::new(),
            detail: "seen".into(),
            after: Vec::new(),
        };
        assert!(markdown(std::slice::from_ref(&unnamed)).contains("\n\nRules: none named.\n"));
        assert!(html("t", &[unnamed]).contains("<p>Rules: none named.</p>"));
        let (mut page, mut built) = (vec![v(None)], 0);
        for _ in 0..=html::FIGURES_MAX {
            let drawing = drawing(&page, || {
                built += 1;
                d.clone()
            });
            page.push(v(Some(drawing)));
        }
        assert_eq!(
            built,
            html::FIGURES_MAX,
            "past the bound a drawing is never built"
        );
        let note = format!("Not drawn: the page draws {} violations", html::FIGURES_MAX);
        let (md, page) = (markdown(&page), html("t", &page));
        assert_eq!(page.matches("<svg").count(), html::FIGURES_MAX);
        assert_eq!(md.matches("```mermaid").count(), html::FIGURES_MAX);
        assert_eq!(
            (page.matches(&note).count(), md.matches(&note).count()),
            (1, 1)
        );
        assert!(page.contains("data-rule=\"KEY-01\"") && page.contains("<pre>after</pre></div>"));
    }

    /// A fence outlasts any backtick run in what it holds.
    #[test]
    fn a_fence_is_longer_than_the_text_inside() {
        let md = markdown(&[
            Block::Code("a\n```\nb".into()),
            Block::Mermaid("x ```` y\n".into()),
        ]);
        assert_eq!(
            md,
            "````text\na\n```\nb\n````\n\n`````mermaid\nx ```` y\n`````\n\n"
        );
        assert_eq!(markdown(&[Block::Code("a".into())]), "```text\na\n```\n\n");
    }

    #[test]
    fn properties_are_listed_violated_first() {
        let row = |name: &str, status| PropertyRow {
            name: name.to_owned(),
            status,
            rules: vec!["IDEM-01"],
            detail: String::new(),
        };
        let t = html(
            "t",
            &[properties(&[
                row("a", Status::Holds),
                row("b", Status::Violated),
            ])],
        );
        let (b, a) = (t.find("<code>b</code>"), t.find("<code>a</code>"));
        assert!(b.unwrap() < a.unwrap(), "{t}");
    }
}
