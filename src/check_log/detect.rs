//! Which format a file is, from its first bytes and its first line: a HAR (`{"log":…`,
//! usually over many lines), the project's event stream (each line `{"at":…,"kind":…}`)
//! or the access-log shape (each line `{"time":…,"method":…,"path":…}`). Anything else
//! is rejected naming the file and line 1: an empty file, binary data, text that is not
//! a JSON object, an object of none of these shapes.

use std::io::{BufRead, Read};

/// The formats `check-log` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Har,
    Events,
    AccessLog,
}

impl Format {
    pub fn about(self) -> &'static str {
        match self {
            Format::Har => "HAR 1.2",
            Format::Events => "payhub event stream (JSON Lines)",
            Format::AccessLog => "access log (JSON Lines)",
        }
    }
}

/// Bytes read to decide (the first line of a JSON Lines file is shorter; a HAR's first
/// line is `{`).
const PEEK: u64 = 1 << 20;

/// Reads the head of `input` (up to the first non-blank line, at most [`PEEK`] bytes)
/// and decides its format; `input` is left whole (the head is replayed in front of the
/// rest), so a pipe is read once.
pub fn detect(input: &mut crate::input::Input) -> Result<Format, String> {
    let mut head = Vec::new();
    let mut line = Vec::new();
    let mut ended = false;
    loop {
        line.clear();
        let room = PEEK.saturating_sub(head.len() as u64);
        let got = (&mut input.reader)
            .take(room)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("{}: cannot read: {e}", input.name))?;
        head.extend_from_slice(&line);
        if got == 0 {
            ended = room > 0;
            break;
        }
        if !line.iter().all(u8::is_ascii_whitespace) || head.len() as u64 >= PEEK {
            break;
        }
    }
    let result = decide(&input.name, &head, &line, ended);
    let rest = std::mem::replace(&mut input.reader, Box::new(std::io::empty()));
    input.reader = Box::new(std::io::Cursor::new(head).chain(rest));
    result
}

fn decide(name: &str, head: &[u8], first: &[u8], ended: bool) -> Result<Format, String> {
    let none = "is not HAR 1.2, a payhub event stream or the access-log shape (docs/check-log.md)";
    let at = format!("{name}:1");
    if ended && head.iter().all(u8::is_ascii_whitespace) {
        return Err(format!("{name}: empty: nothing to judge"));
    }
    let text = first.strip_prefix(b"\xef\xbb\xbf").unwrap_or(first);
    if text.contains(&0) || std::str::from_utf8(text).is_err() && text.len() < PEEK as usize {
        return Err(format!("{at}: binary data {none}"));
    }
    let line = String::from_utf8_lossy(text);
    let trimmed = line.trim();
    // A first line past the peek with no end: a JSON Lines record (whose reader refuses
    // it past the bound of a line), unless it opens a HAR written on one line.
    if !ended && first.len() as u64 >= PEEK && first.last() != Some(&b'\n') {
        let opening: String = trimmed
            .chars()
            .filter(|c| !c.is_whitespace())
            .take(7)
            .collect();
        return Ok(match opening.as_str() {
            "{\"log\":" => Format::Har,
            o if o.starts_with("{\"at\"") => Format::Events,
            _ => Format::AccessLog,
        });
    }
    if !trimmed.is_empty() && !trimmed.starts_with('{') {
        let start: String = trimmed.chars().take(20).collect();
        return Err(format!("{at}: starts with '{start}': {none}"));
    }
    let bare: String = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
    match serde_json::from_str::<serde_json::Value>(trimmed) {
        // A whole object on the first line: one JSON Lines record (or a one-line HAR).
        Ok(v) if v.get("log").is_some() => Ok(Format::Har),
        Ok(v) if v.get("at").is_some() && v.get("kind").is_some() => Ok(Format::Events),
        Ok(v)
            if ["time", "method", "path"]
                .iter()
                .all(|k| v.get(k).is_some()) =>
        {
            Ok(Format::AccessLog)
        }
        Ok(_) => Err(format!(
            "{at}: a JSON object with none of log.entries (HAR), at and kind (events), time, method and path (access log): {none}"
        )),
        // An object spread over lines, opened as a HAR is (`{` alone, or `{"log":` and
        // what follows): a HAR (its reader says where it breaks).
        Err(_) if bare == "{" || bare.starts_with("{\"log\":") => Ok(Format::Har),
        // A line of its own that does not read: JSON Lines whose first line breaks.
        Err(e) => Err(format!(
            "{at}: JSON Lines, not a HAR: the first line is not a whole JSON object ({e}); each line of an event stream or an access log is one"
        )),
    }
}

#[cfg(test)]
mod tests {
    /// A HAR minified onto one line longer than the peek is a HAR (read by its entries),
    /// not a JSON Lines record past the bound of a line.
    #[test]
    fn a_har_on_one_long_line_is_a_har() {
        let mut first = br#"{"log":{"version":"1.2","entries":[{"x":""#.to_vec();
        first.resize(super::PEEK as usize, b'x');
        let format = super::decide("big.har", &first, &first, false);
        assert_eq!(format, Ok(super::Format::Har));
    }
}
