//! A page as data: the verdict's banner, headings, paragraphs, lists, tables, drawings
//! and violations, built once by a command and drawn by one Markdown and one HTML
//! renderer. Text is typed ([`Text`]): a builder's markup is never read in the values
//! it fills in. A violation carries what the contract asks instead: each
//! rule's sentence in English and in the Chinese original (authoritative), and its
//! drawing (a Mermaid block a code host draws, inline SVG in HTML).

use super::html::{self, PropertyRow, Tone, escape};
use super::text::{Text, longest_run, md_escape};
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
    /// The head's cells separated by `|`, then the rows.
    Table(&'static str, Vec<Vec<Text>>),
    /// A table of properties: violated first, then held, then the rest.
    Properties(Vec<PropertyRow>),
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
    /// the detail, its drawing, then `after`.
    Violation {
        property: String,
        context: Text,
        rules: Vec<&'static str>,
        detail: String,
        drawing: Drawing,
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

    /// Preformatted `text`, collapsed under `summary`.
    pub fn folded(summary: impl Into<Text>, text: impl Into<String>) -> Block {
        Block::Details(summary.into(), vec![Block::Code(text.into())])
    }
}

/// A violation's drawing: a page draws its first [`html::FIGURES_MAX`] violations; past
/// them a drawing is never built, and the page says so.
#[derive(Clone, Debug)]
pub enum Drawing {
    /// Nothing to draw.
    None,
    Drawn(Diagram),
    Withheld,
}

impl Drawing {
    /// The drawing of the violation that follows `page`: built by `build` while the page
    /// holds fewer than [`html::FIGURES_MAX`] drawings, withheld after.
    pub fn after(page: &[Block], build: impl FnOnce() -> Diagram) -> Drawing {
        let drawings = page.iter().filter(
            |b| matches!(b, Block::Violation { drawing, .. } if !matches!(drawing, Drawing::None)),
        );
        match drawings.count() < html::FIGURES_MAX {
            true => Drawing::Drawn(build()),
            false => Drawing::Withheld,
        }
    }
}

/// What a page says for a violation past [`html::FIGURES_MAX`] instead of its drawing.
fn not_drawn() -> String {
    let max = html::FIGURES_MAX;
    format!(
        "Not drawn: the page draws {max} violations at most (the text and JSON formats list each)."
    )
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

/// Properties as rows, ordered violated first, then held, then the rest.
fn property_rows(rows: &[PropertyRow]) -> Vec<&PropertyRow> {
    let mut order: Vec<&PropertyRow> = rows.iter().collect();
    order.sort_by_key(|r| html::rank(r.status));
    order
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
            let contract = contract_line();
            let lines: Vec<String> = lines
                .iter()
                .chain([&contract])
                .map(Text::markdown)
                .collect();
            let _ = writeln!(s, "# {}\n\n{}\n", md_escape(title), lines.join("  \n"));
        }
        Block::Heading(level, _, text) => {
            let hashes = "#".repeat(usize::from(*level));
            let _ = writeln!(s, "{hashes} {}\n", text.markdown());
        }
        Block::Para(text) if *text == Text::default() => {}
        Block::Para(text) => {
            let _ = writeln!(s, "{}\n", text.markdown());
        }
        Block::List(items) => {
            for i in items {
                let _ = writeln!(s, "- {}", i.markdown().replace('\n', "  \n  "));
            }
            s.push('\n');
        }
        Block::Table(head, rows) => {
            let n = head.split('|').count();
            let _ = writeln!(s, "| {} |\n|{}", head.replace('|', " | "), "---|".repeat(n));
            for r in rows {
                let cells: Vec<String> = r.iter().map(cell).collect();
                let _ = writeln!(s, "| {} |", cells.join(" | "));
            }
            s.push('\n');
        }
        Block::Properties(rows) => {
            let rows = property_rows(rows).into_iter().map(|r| {
                let name = super::text::text!("`{}`", r.name);
                let (status, detail) = (r.status.as_str(), r.detail.as_str());
                vec![
                    name,
                    status.into(),
                    r.rules.join(", ").into(),
                    detail.into(),
                ]
            });
            let head = "property|status|rules|detail";
            md_block(s, &Block::Table(head, rows.collect()));
        }
        Block::Code(text) => {
            let f = fence(text);
            let _ = writeln!(s, "{f}text\n{}\n{f}\n", text.trim_end());
        }
        Block::Figure(diagram) => md_block(s, &Block::Mermaid(diagram.to_mermaid())),
        Block::Mermaid(m) => {
            let f = fence(m);
            let _ = writeln!(s, "{f}mermaid\n{m}{f}\n");
        }
        Block::Details(summary, body) => {
            let _ = writeln!(s, "<details><summary>{}</summary>\n", summary.html());
            body.iter().for_each(|b| md_block(s, b));
            s.push_str("</details>\n\n");
        }
        Block::Md(body) => body.iter().for_each(|b| md_block(s, b)),
        Block::Html(_) => {}
        Block::Violation {
            property,
            context,
            rules,
            detail,
            drawing,
            after,
        } => {
            let heading = super::text::text!("### Violation of `{}` ", property).markdown();
            let rules_line = match rules.is_empty() {
                true => "none named.".to_owned(),
                false => format!("{}. The contract asks instead:", rules.join(", ")),
            };
            let _ = writeln!(
                s,
                "{}\n\n{}\n\nRules: {rules_line}\n",
                (heading + &context.markdown()).trim_end(),
                md_escape(detail),
            );
            for r in rules.iter().filter_map(|id| Rule::from_id(id)) {
                let _ = writeln!(s, "- **{}** {} (原文: {})", r.id(), r.text(), r.zh());
            }
            s.push('\n');
            match drawing {
                Drawing::Drawn(d) => md_block(s, &Block::Mermaid(d.to_mermaid())),
                Drawing::Withheld => md_block(s, &Block::Para(not_drawn().into())),
                Drawing::None => {}
            }
            after.iter().for_each(|b| md_block(s, b));
        }
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

/// `<code>RULE</code>, …`.
fn codes(names: &[&str]) -> String {
    let quoted: Vec<String> = names
        .iter()
        .map(|n| format!("<code>{}</code>", escape(n)))
        .collect();
    quoted.join(", ")
}

fn html_block(s: &mut String, b: &Block) {
    match b {
        Block::Banner(tone, title, lines) => {
            let lines: Vec<String> = lines
                .iter()
                .chain([&contract_line()])
                .map(Text::html)
                .collect();
            let _ = write!(
                s,
                "<section class=\"banner {}\" id=\"verdict\"><h1>{}</h1><p>{}</p></section>",
                tone.class(),
                escape(title),
                lines.join("<br>")
            );
        }
        Block::Heading(level, id, text) => {
            let id = id.map(|i| format!(" id=\"{i}\"")).unwrap_or_default();
            let _ = write!(s, "<h{level}{id}>{}</h{level}>", text.html());
        }
        Block::Para(text) if *text == Text::default() => {}
        Block::Para(text) => {
            let _ = write!(s, "<p>{}</p>", text.html());
        }
        Block::List(items) => {
            s.push_str("<ul>");
            for i in items {
                let _ = write!(s, "<li>{}</li>", i.html());
            }
            s.push_str("</ul>");
        }
        Block::Table(head, rows) => {
            s.push_str("<table><tr>");
            for h in head.split('|') {
                let _ = write!(s, "<th>{}</th>", escape(h));
            }
            s.push_str("</tr>");
            for r in rows {
                s.push_str("<tr>");
                for c in r {
                    let _ = write!(s, "<td>{}</td>", c.html());
                }
                s.push_str("</tr>");
            }
            s.push_str("</table>");
        }
        Block::Properties(rows) => {
            s.push_str("<table class=\"properties\"><tr><th>property</th><th>status</th><th>rules</th><th>detail</th></tr>");
            for r in property_rows(rows) {
                let class = ["bad", "good", "muted"][usize::from(html::rank(r.status))];
                let _ = write!(
                    s,
                    "<tr data-status=\"{0}\"><td><code>{1}</code></td><td class=\"{class}\">{0}</td><td>{2}</td><td>{3}</td></tr>",
                    r.status.as_str(),
                    escape(&r.name),
                    codes(&r.rules),
                    escape(&r.detail)
                );
            }
            s.push_str("</table>");
        }
        Block::Code(text) => {
            let _ = write!(s, "<pre>{}</pre>", escape(text.trim_end()));
        }
        Block::Figure(diagram) => s.push_str(&html::figure(diagram)),
        Block::Mermaid(m) => {
            let source = vec![Block::Code(m.clone())];
            html_block(s, &Block::Details("Mermaid source".into(), source));
        }
        Block::Details(summary, body) => {
            let _ = write!(s, "<details><summary>{}</summary>", summary.html());
            body.iter().for_each(|b| html_block(s, b));
            s.push_str("</details>");
        }
        Block::Html(body) => body.iter().for_each(|b| html_block(s, b)),
        Block::Md(_) => {}
        Block::Violation {
            property,
            context,
            rules,
            detail,
            drawing,
            after,
        } => {
            let _ = write!(
                s,
                "<div class=\"violation\" data-property=\"{0}\"><h3>{0} <span class=\"muted\">{1}</span></h3><p>Rules: {2}.</p>",
                escape(property),
                context.html(),
                if rules.is_empty() {
                    "none named".into()
                } else {
                    codes(rules)
                },
            );
            if !rules.is_empty() {
                s.push_str("<p>What the contract asks instead:</p><ul class=\"rules\">");
            }
            for id in rules {
                let (text, zh) = Rule::from_id(id).map_or(("", ""), |r| (r.text(), r.zh()));
                let _ = write!(
                    s,
                    "<li data-rule=\"{0}\"><code>{0}</code> {1}<br><span lang=\"zh\">{2}</span></li>",
                    escape(id),
                    escape(text),
                    escape(zh)
                );
            }
            if !rules.is_empty() {
                s.push_str("</ul>");
            }
            let _ = write!(s, "<p>{}</p>", escape(detail));
            match drawing {
                Drawing::Drawn(d) => s.push_str(&html::figure(d)),
                Drawing::Withheld => {
                    let _ = write!(s, "<p class=\"muted\">{}</p>", not_drawn());
                }
                Drawing::None => {}
            }
            after.iter().for_each(|b| html_block(s, b));
            s.push_str("</div>");
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
            Block::Table("a|b", vec![vec![text!("`{}`", "1|2"), "x`**<b>".into()]]),
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
        let v = |drawing: Drawing| Block::Violation {
            property: "p".into(),
            context: Text::default(),
            rules: vec!["KEY-01"],
            detail: "seen".into(),
            drawing,
            after: vec![Block::Code("after".into())],
        };
        let rule = Rule::from_id("KEY-01").unwrap();
        let md = markdown(&[v(Drawing::Drawn(d.clone()))]);
        assert!(md.contains(rule.text()) && md.contains(rule.zh()), "{md}");
        assert!(md.contains("```mermaid\nsequenceDiagram\n"), "{md}");
        assert!(!markdown(&[v(Drawing::None)]).contains("```mermaid"));
        let unnamed = Block::Violation {
            property: "p".into(),
            context: Text::default(),
            rules: Vec::new(),
            detail: "seen".into(),
            drawing: Drawing::None,
            after: Vec::new(),
        };
        assert!(markdown(std::slice::from_ref(&unnamed)).contains("\n\nRules: none named.\n"));
        assert!(html("t", &[unnamed]).contains("<p>Rules: none named.</p>"));
        let (mut page, mut built) = (vec![v(Drawing::None)], 0);
        for _ in 0..=html::FIGURES_MAX {
            let drawing = Drawing::after(&page, || {
                built += 1;
                d.clone()
            });
            page.push(v(drawing));
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
            &[Block::Properties(vec![
                row("a", Status::Holds),
                row("b", Status::Violated),
            ])],
        );
        let (b, a) = (t.find("<code>b</code>"), t.find("<code>a</code>"));
        assert!(b.unwrap() < a.unwrap(), "{t}");
    }
}
