//! A cursor over one script line: words, quoted strings and `name=value` pairs, each
//! with its 1-based column (in characters).

use std::cell::Cell;
use std::rc::Rc;

/// A parse failure inside a line: the column and what is wrong.
pub(crate) type LineError = (u32, String);

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
        Cursor {
            chars: line.chars().collect(),
            at: 0,
            expanded,
        }
    }

    /// The column of the next character (after skipping whitespace).
    pub(crate) fn col(&mut self) -> u32 {
        self.skip_ws();
        self.at as u32 + 1
    }

    pub(crate) fn skip_ws(&mut self) {
        while self.at < self.chars.len() && self.chars[self.at].is_whitespace() {
            self.at += 1;
        }
    }

    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.at >= self.chars.len()
    }

    pub(crate) fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.at).copied()
    }

    /// The next run of non-whitespace characters.
    pub(crate) fn word(&mut self) -> Option<(String, u32)> {
        self.skip_ws();
        let start = self.at;
        while self.at < self.chars.len() && !self.chars[self.at].is_whitespace() {
            self.at += 1;
        }
        (self.at > start).then(|| {
            (
                self.chars[start..self.at].iter().collect(),
                start as u32 + 1,
            )
        })
    }

    /// The next word, or an error naming what was expected.
    pub(crate) fn expect_word(&mut self, what: &str) -> Result<(String, u32), LineError> {
        let col = self.col();
        self.word()
            .ok_or_else(|| (col, format!("expected {what} here")))
    }

    /// The word `word` next, or an error that `wrong` writes from the word found.
    pub(crate) fn keyword(
        &mut self,
        word: &str,
        wrong: fn(&str) -> String,
    ) -> Result<(), LineError> {
        let (w, c) = self.expect_word(word)?;
        if w == word {
            Ok(())
        } else {
            Err((c, wrong(&w)))
        }
    }

    /// The next word without consuming it.
    pub(crate) fn peek_word(&mut self) -> Option<String> {
        let save = self.at;
        let w = self.word().map(|(w, _)| w);
        self.at = save;
        w
    }

    /// Everything left on the line, trimmed, with its column.
    pub(crate) fn rest(&mut self) -> (String, u32) {
        self.skip_ws();
        let col = self.at as u32 + 1;
        let s: String = self.chars[self.at..].iter().collect();
        self.at = self.chars.len();
        (s.trim_end().to_owned(), col)
    }

    /// Fails unless the line is used up.
    pub(crate) fn end(&mut self) -> Result<(), LineError> {
        if self.at_end() {
            Ok(())
        } else {
            let col = self.col();
            let (w, _) = self.word().unwrap_or_default();
            Err((col, format!("unexpected '{w}' at the end of the statement")))
        }
    }

    /// A value: a JSON string literal (`"a b"`, `""`), optionally repeated (`"x"*256`), or
    /// a bare word.
    pub(crate) fn value(&mut self) -> Result<Option<(String, u32)>, LineError> {
        self.skip_ws();
        let col = self.at as u32 + 1;
        match self.chars.get(self.at) {
            None => Ok(None),
            Some('"') => {
                let s = self.quoted()?;
                if self.chars.get(self.at) == Some(&'*') {
                    self.at += 1;
                    let start = self.at;
                    while self.at < self.chars.len() && self.chars[self.at].is_ascii_digit() {
                        self.at += 1;
                    }
                    let digits: String = self.chars[start..self.at].iter().collect();
                    let n: usize = digits.parse().map_err(|_| {
                        (
                            start as u32 + 1,
                            "expected a repeat count after '*' (\"x\"*256)".to_owned(),
                        )
                    })?;
                    if n > 100_000 {
                        return Err((start as u32 + 1, format!("repeat count {n} is too large")));
                    }
                    let total = s
                        .len()
                        .checked_mul(n)
                        .and_then(|b| b.checked_add(self.expanded.get()))
                        .filter(|t| *t <= EXPANDED_MAX);
                    let Some(total) = total else {
                        return Err((
                            col,
                            format!(
                                "the repeat \"…\"*{n} of a {}-byte string expands past {} MiB, the bound of a script's input (its repeats together): refused",
                                s.len(),
                                EXPANDED_MAX >> 20
                            ),
                        ));
                    };
                    self.expanded.set(total);
                    return Ok(Some((s.repeat(n), col)));
                }
                Ok(Some((s, col)))
            }
            Some(_) => Ok(self.word()),
        }
    }

    /// A JSON string literal starting at the cursor.
    fn quoted(&mut self) -> Result<String, LineError> {
        let start = self.at;
        let mut i = self.at + 1;
        let mut escaped = false;
        while i < self.chars.len() {
            let c = self.chars[i];
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                let literal: String = self.chars[start..=i].iter().collect();
                let s: String = serde_json::from_str(&literal)
                    .map_err(|e| (start as u32 + 1, format!("bad string literal: {e}")))?;
                self.at = i + 1;
                return Ok(s);
            }
            i += 1;
        }
        Err((start as u32 + 1, "unterminated string literal".to_owned()))
    }

    /// `name=value`: a name of letters, digits, `_`, `-` and `.`, then a value.
    pub(crate) fn pair(&mut self) -> Result<Option<(String, String, u32)>, LineError> {
        self.skip_ws();
        let col = self.at as u32 + 1;
        let start = self.at;
        while self.at < self.chars.len() {
            let c = self.chars[self.at];
            if c.is_alphanumeric() || c == '_' || c == '-' || c == '.' {
                self.at += 1;
            } else {
                break;
            }
        }
        if self.at == start {
            return Ok(None);
        }
        let name: String = self.chars[start..self.at].iter().collect();
        if self.chars.get(self.at) != Some(&'=') {
            self.at = start;
            return Err((col, format!("expected name=value, found '{name}'")));
        }
        self.at += 1;
        match self.chars.get(self.at) {
            None => Err((self.at as u32 + 1, format!("'{name}=' needs a value"))),
            Some(c) if c.is_whitespace() => {
                Err((self.at as u32 + 1, format!("'{name}=' needs a value")))
            }
            Some(_) => {
                let (value, _) = self.value()?.unwrap_or_default();
                Ok(Some((name, value, col)))
            }
        }
    }

    /// Every remaining `name=value` pair.
    pub(crate) fn pairs(&mut self) -> Result<Vec<(String, String, u32)>, LineError> {
        let mut out = Vec::new();
        while !self.at_end() {
            match self.pair()? {
                Some(p) => out.push(p),
                None => {
                    let col = self.col();
                    let (w, _) = self.word().unwrap_or_default();
                    return Err((col, format!("expected name=value, found '{w}'")));
                }
            }
        }
        Ok(out)
    }
}
