//! A cursor over one script line: words, quoted strings and `name=value` pairs, each
//! with its 1-based column (in characters).

use std::cell::Cell;
use std::rc::Rc;

/// A value read from a line, or the column where it could not be and what is wrong.
pub(crate) type Parsed<T> = Result<T, (u32, String)>;

/// `return Err((column, format!(…)))`: a parse failure at that column.
macro_rules! fail {
    ($col:expr, $($message:tt)+) => {
        return Err(($col, format!($($message)+)))
    };
}
pub(crate) use fail;

/// The most text a script's repeats (`"x"*256`) may expand to, all of them together:
/// 16 MiB, the bound of a script's input. The size is checked before anything is
/// allocated, so a short script cannot ask for more memory than a long one may hold.
pub const EXPANDED_MAX: usize = 16 << 20;

pub(crate) struct Cursor {
    chars: Vec<char>,
    at: usize,
    /// Bytes the repeats read so far have expanded to (shared by a script's lines).
    expanded: Rc<Cell<usize>>,
}

impl Cursor {
    pub(crate) fn new(line: &str) -> Cursor {
        Cursor::sharing(line, Rc::default())
    }

    /// A cursor whose repeats count against `expanded`, the total of a whole script.
    pub(crate) fn sharing(line: &str, expanded: Rc<Cell<usize>>) -> Cursor {
        let chars = line.chars().collect();
        Cursor {
            chars,
            at: 0,
            expanded,
        }
    }

    /// The column of the next character (after skipping whitespace).
    pub(crate) fn col(&mut self) -> u32 {
        self.skip_ws();
        self.at as u32 + 1
    }

    fn skip_ws(&mut self) {
        self.skip(char::is_whitespace);
    }

    /// Moves past the characters that `keep` holds for; the text moved past.
    fn skip(&mut self, keep: impl Fn(char) -> bool) -> String {
        let start = self.at;
        while self.chars.get(self.at).is_some_and(|c| keep(*c)) {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    pub(crate) fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    pub(crate) fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.at).copied()
    }

    /// The next run of non-whitespace characters.
    pub(crate) fn word(&mut self) -> Option<(String, u32)> {
        let col = self.col();
        let w = self.skip(|c| !c.is_whitespace());
        (!w.is_empty()).then_some((w, col))
    }

    /// The next word, or an error naming what was expected.
    pub(crate) fn expect_word(&mut self, what: &str) -> Parsed<(String, u32)> {
        let col = self.col();
        self.word()
            .ok_or_else(|| (col, format!("expected {what} here")))
    }

    /// The next word (or [`Cursor::expect_word`]'s error) read by `read`, or the error
    /// `wrong` writes from it.
    pub(crate) fn read<T>(
        &mut self,
        what: &str,
        read: impl FnOnce(&str) -> Option<T>,
        wrong: impl FnOnce(&str) -> String,
    ) -> Parsed<T> {
        let (w, c) = self.expect_word(what)?;
        read(&w).ok_or_else(|| (c, wrong(&w)))
    }

    /// The next word as a number, or the error `'WORD' is not WHAT`.
    pub(crate) fn number<T: std::str::FromStr>(&mut self, what: &str) -> Parsed<T> {
        self.read(what, |w| w.parse().ok(), |w| format!("'{w}' is not {what}"))
    }

    /// The word `word` next, or an error that `wrong` writes from the word found.
    pub(crate) fn keyword(&mut self, word: &str, wrong: fn(&str) -> String) -> Parsed<()> {
        self.read(word, |w| (w == word).then_some(()), wrong)
    }

    /// The next word without consuming it.
    pub(crate) fn peek_word(&mut self) -> Option<String> {
        let save = self.at;
        let w = self.word().map(|(w, _)| w);
        self.at = save;
        w
    }

    /// Whether the next word is `word`, consumed if it is.
    pub(crate) fn eat(&mut self, word: &str) -> bool {
        let next = self.peek_word().is_some_and(|w| w == word);
        if next {
            self.word();
        }
        next
    }

    /// Everything left on the line, trimmed, with its column.
    pub(crate) fn rest(&mut self) -> (String, u32) {
        let col = self.col();
        let s = self.skip(|_| true);
        (s.trim_end().to_owned(), col)
    }

    /// Fails unless the line is used up.
    pub(crate) fn end(&mut self) -> Parsed<()> {
        match self.word() {
            None => Ok(()),
            Some((w, col)) => fail!(col, "unexpected '{w}' at the end of the statement"),
        }
    }

    /// A value: a JSON string literal (`"a b"`, `""`), optionally repeated (`"x"*256`), or
    /// a bare word.
    pub(crate) fn value(&mut self) -> Parsed<Option<(String, u32)>> {
        let col = self.col();
        if self.peek() != Some('"') {
            return Ok(self.word());
        }
        let s = self.quoted()?;
        if self.chars.get(self.at) != Some(&'*') {
            return Ok(Some((s, col)));
        }
        self.at += 1;
        let start = self.at as u32 + 1;
        let Ok(n) = self.skip(|c| c.is_ascii_digit()).parse::<usize>() else {
            fail!(start, "expected a repeat count after '*' (\"x\"*256)");
        };
        if n > 100_000 {
            fail!(start, "repeat count {n} is too large");
        }
        let expanded = self.expanded.get();
        let total = s.len().checked_mul(n).and_then(|b| b.checked_add(expanded));
        let Some(total) = total.filter(|t| *t <= EXPANDED_MAX) else {
            fail!(
                col,
                "the repeat \"…\"*{n} of a {}-byte string expands past {} MiB, the bound of a script's input (its repeats together): refused",
                s.len(),
                EXPANDED_MAX >> 20
            );
        };
        self.expanded.set(total);
        Ok(Some((s.repeat(n), col)))
    }

    /// A JSON string literal starting at the cursor.
    fn quoted(&mut self) -> Parsed<String> {
        let start = self.at;
        let mut escaped = false;
        for i in start + 1..self.chars.len() {
            match self.chars[i] {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    let literal: String = self.chars[start..=i].iter().collect();
                    let s = serde_json::from_str(&literal)
                        .map_err(|e| (start as u32 + 1, format!("bad string literal: {e}")))?;
                    self.at = i + 1;
                    return Ok(s);
                }
                _ => {}
            }
        }
        fail!(start as u32 + 1, "unterminated string literal")
    }

    /// `name=value`: a name of letters, digits, `_`, `-` and `.`, then a value.
    pub(crate) fn pair(&mut self) -> Parsed<Option<(String, String, u32)>> {
        let col = self.col();
        let name = self.skip(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if name.is_empty() {
            return Ok(None);
        }
        if self.chars.get(self.at) != Some(&'=') {
            self.at = col as usize - 1;
            fail!(col, "expected name=value, found '{name}'");
        }
        self.at += 1;
        if self.chars.get(self.at).is_none_or(|c| c.is_whitespace()) {
            fail!(self.at as u32 + 1, "'{name}=' needs a value");
        }
        let (value, _) = self.value()?.unwrap_or_default();
        Ok(Some((name, value, col)))
    }

    /// Every remaining `name=value` pair.
    pub(crate) fn pairs(&mut self) -> Parsed<Vec<(String, String, u32)>> {
        let mut out = Vec::new();
        while !self.at_end() {
            match self.pair()? {
                Some(p) => out.push(p),
                None => {
                    let (w, col) = self.word().unwrap_or_default();
                    fail!(col, "expected name=value, found '{w}'");
                }
            }
        }
        Ok(out)
    }
}
