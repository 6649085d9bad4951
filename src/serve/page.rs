//! `GET /__sandbox/`: the session at a glance, for a browser: the verdict and the
//! session's trace in the contract's notation, refreshed every 2 seconds. One HTML page,
//! no script, everything escaped.

use payhub_sim::{Facts, Trace};
use std::fmt::Write as _;

/// Trace lines shown, the latest ones.
const LINES_MAX: usize = 500;

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page.
pub fn to_html(facts: &Facts, trace: &Trace) -> String {
    let verdicts = crate::judge_cmd::verdicts(facts);
    let violated: Vec<_> = verdicts
        .iter()
        .filter(|v| v.status == crate::judge_cmd::Status::Violated)
        .collect();
    let mut s = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"2\">\
         <title>payhub-verify sandbox</title><style>body{font-family:sans-serif;margin:1em}\
         pre{font-size:12px;background:#f6f6f6;padding:.5em;overflow-x:auto}\
         .violated{color:#a00}.holds{color:#070}</style></head><body><h1>payhub-verify sandbox</h1>",
    );
    if violated.is_empty() {
        let _ = write!(
            s,
            "<p id=\"verdict\" class=\"holds\">All hold over {} events.</p>",
            trace.stream.len()
        );
    } else {
        s.push_str("<div id=\"verdict\" class=\"violated\"><p>VIOLATED:</p><ul>");
        for v in &violated {
            let _ = write!(
                s,
                "<li><b>{}</b>: {} [{}]</li>",
                escape(v.name),
                escape(v.detail.as_deref().unwrap_or_default()),
                escape(&v.rules.join(", "))
            );
        }
        s.push_str("</ul></div>");
    }
    let text = trace.to_text();
    let lines: Vec<&str> = text.lines().collect();
    let shown = &lines[lines.len().saturating_sub(LINES_MAX)..];
    let _ = write!(
        s,
        "<h2>Exchanges</h2><p>{} trace lines{}; <a href=\"/__sandbox/verdict?format=markdown\">verdict</a>, \
         <a href=\"/__sandbox/events\">events</a>, <a href=\"/__sandbox/script\">script</a>, \
         <a href=\"/__sandbox/har\">HAR</a>.</p><pre id=\"trace\">",
        lines.len(),
        if shown.len() < lines.len() {
            ", the latest shown"
        } else {
            ""
        }
    );
    for line in shown {
        s.push_str(&escape(line));
        s.push('\n');
    }
    s.push_str("</pre></body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }

    #[test]
    fn an_empty_session_holds_and_shows_no_exchange() {
        let page = to_html(&Facts::default(), &Trace::new());
        assert!(page.contains("All hold over 0 events."), "{page}");
        assert!(page.contains("0 trace lines"), "{page}");
    }
}
