//! Which format a file is, from its first bytes and its first line: a HAR (`{"log":…`,
//! usually over many lines), the project's event stream (each line `{"at":…,"kind":…}`)
//! or the access-log shape (each line `{"time":…,"method":…,"path":…}`). Anything else
//! is rejected naming the file and line 1: an empty file, binary data, text that is not
//! a JSON object, an object of none of these shapes.

use std::io::{BufRead, Read};
use std::path::Path;

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

pub fn detect(path: &Path) -> Result<Format, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut head = Vec::new();
    std::io::BufReader::new(file)
        .take(PEEK)
        .read_until(b'\n', &mut head)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let none = "is not HAR 1.2, a payhub event stream or the access-log shape (docs/check-log.md)";
    let at = format!("{}:1", path.display());
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head);
    if text.iter().all(u8::is_ascii_whitespace) {
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let blank = len <= PEEK
            && std::fs::read(path).is_ok_and(|all| all.iter().all(u8::is_ascii_whitespace));
        if blank {
            return Err(format!("{}: empty: nothing to judge", path.display()));
        }
    }
    if text.contains(&0) || std::str::from_utf8(text).is_err() && text.len() < PEEK as usize {
        return Err(format!("{at}: binary data {none}"));
    }
    let line = String::from_utf8_lossy(text);
    let trimmed = line.trim();
    if !trimmed.is_empty() && !trimmed.starts_with('{') {
        let start: String = trimmed.chars().take(20).collect();
        return Err(format!("{at}: starts with '{start}': {none}"));
    }
    match serde_json::from_str::<serde_json::Value>(trimmed) {
        // A whole object on the first line: one JSON Lines record (or a one-line HAR).
        Ok(v) if v.get("log").is_some() => Ok(Format::Har),
        Ok(v) if v.get("at").is_some() && v.get("kind").is_some() => Ok(Format::Events),
        Ok(v) if super::access_log::looks_like(&v) => Ok(Format::AccessLog),
        Ok(_) => Err(format!(
            "{at}: a JSON object with none of log.entries (HAR), at and kind (events), time, method and path (access log): {none}"
        )),
        // An object spread over lines: a HAR (its reader says where it breaks).
        Err(_) => Ok(Format::Har),
    }
}
