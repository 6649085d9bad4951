//! Text on a page, typed: runs of plain text, code and bold. A builder writes its own
//! markup in a template (`` `code` ``, `**bold**`) with [`text!`]; the values it fills in
//! (file names, reasons, what a target sent) are text as is, never read as markup, and
//! each renderer escapes them for its format.

use super::html::escape;
use std::fmt;

/// Runs of text, each plain, code or bold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Text(Vec<Span>);

#[derive(Clone, Debug, PartialEq)]
struct Span {
    text: String,
    code: bool,
    bold: bool,
}

/// Around a value filled into a template: what lies between is the value's own.
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// A value filled into a [`text!`] template, marked as never markup.
pub struct Lit<T>(pub T);

impl<T: fmt::Display> fmt::Display for Lit<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match f.precision() {
            Some(p) => format!("{:.*}", p, self.0),
            None => self.0.to_string(),
        };
        write!(f, "{OPEN}{}{CLOSE}", s.replace([OPEN, CLOSE], "\u{FFFD}"))
    }
}

/// `text!("in `{}`", name)`: the template's backticks and `**` are markup, each value
/// (positional arguments only) is text.
macro_rules! text {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::outcome::text::Text::template(&format!(
            $fmt $(, $crate::outcome::text::Lit(&$arg))*
        ))
    };
}
pub(crate) use text;

impl From<String> for Text {
    fn from(text: String) -> Text {
        let mut t = Text::default();
        t.push(text, false, false);
        t
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Text {
        Text::from(text.to_owned())
    }
}

impl<T: Into<Text>> std::ops::Add<T> for Text {
    type Output = Text;
    fn add(mut self, more: T) -> Text {
        more.into()
            .0
            .into_iter()
            .for_each(|s| self.push(s.text, s.code, s.bold));
        self
    }
}

impl Text {
    /// `parts` one after another, `sep` between.
    pub fn join(parts: impl IntoIterator<Item = Text>, sep: &str) -> Text {
        let mut parts = parts.into_iter();
        let first = parts.next().unwrap_or_default();
        parts.fold(first, |t, part| t + sep + part)
    }

    fn push(&mut self, text: String, code: bool, bold: bool) {
        match self.0.last_mut() {
            Some(s) if s.code == code && s.bold == bold => s.text.push_str(&text),
            _ if text.is_empty() => {}
            _ => self.0.push(Span { text, code, bold }),
        }
    }

    /// A template filled by [`text!`] (only): markup outside the values, none inside.
    pub fn template(filled: &str) -> Text {
        let (mut t, mut run) = (Text::default(), String::new());
        let (mut lit, mut code, mut bold) = (false, false, false);
        let mut chars = filled.chars().peekable();
        while let Some(c) = chars.next() {
            let is_code = match c {
                OPEN | CLOSE => {
                    lit = c == OPEN;
                    continue;
                }
                '`' if !lit => true,
                '*' if !lit && !code && chars.next_if_eq(&'*').is_some() => false,
                _ => {
                    run.push(c);
                    continue;
                }
            };
            t.push(std::mem::take(&mut run), code, bold);
            code ^= is_code;
            bold ^= !is_code;
        }
        t.push(run, code, bold);
        t
    }

    /// Runs drawn by `span`, bold opened and closed by `b`.
    fn draw(&self, b: [&str; 2], span: impl Fn(&str, bool) -> String) -> String {
        let (mut out, mut bold) = (String::new(), false);
        for s in &self.0 {
            if s.bold != bold {
                out.push_str(b[usize::from(bold)]);
                bold = s.bold;
            }
            out.push_str(&span(&s.text, s.code));
        }
        if bold {
            out.push_str(b[1]);
        }
        out
    }

    /// As HTML: escaped, code as `<code>`, bold as `<b>`, a line break as `<br>`.
    pub fn html(&self) -> String {
        let t = self.draw(["<b>", "</b>"], |text, code| match code {
            true => format!("<code>{}</code>", escape(text)),
            false => escape(text),
        });
        t.replace("&#10;", "<br>")
    }

    /// As Markdown: running text escaped, each code span fenced by a backtick run longer
    /// than any inside it.
    pub fn markdown(&self) -> String {
        self.draw(["**", "**"], |text, code| match code {
            true => {
                let f = "`".repeat(longest_run(text, '`') + 1);
                let pad = if text.starts_with('`') || text.ends_with('`') {
                    " "
                } else {
                    ""
                };
                format!("{f}{pad}{text}{pad}{f}")
            }
            false => md_escape(text),
        })
    }
}

/// Plain text for a Markdown page: what Markdown would read as markup escaped.
pub fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The longest run of `c` in `text`.
pub fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values are text: a stray backtick, `**` and `<b>` are drawn as written.
    #[test]
    fn a_value_is_never_markup() {
        let t = text!("skipped `{}`: **{}**", "a`b.jsonl", "x ** `y` <b>");
        assert_eq!(
            t.html(),
            "skipped <code>a`b.jsonl</code>: <b>x ** `y` &lt;b&gt;</b>"
        );
        assert_eq!(
            t.markdown(),
            "skipped ``a`b.jsonl``: **x \\*\\* \\`y\\` \\<b\\>**"
        );
        let plain = Text::from("`a **b");
        assert_eq!(plain.html(), "`a **b");
        assert_eq!(plain.markdown(), "\\`a \\*\\*b");
        assert_eq!(text!("`{}`", "`x").markdown(), "`` `x ``");
        assert_eq!(text!("{:.2} s", 0.5).html(), "0.50 s");
    }
}
