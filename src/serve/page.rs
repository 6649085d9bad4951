//! `GET /__sandbox/`: the session at a glance, for a browser. The page is a shell whose
//! script fetches `GET /__sandbox/page.json` (the verdict and the session's trace in the
//! contract's notation) every second and renders it with `textContent` (nothing the
//! session holds is ever parsed as HTML), so the exchanges appear as requests arrive.
//! Without JavaScript the page links to the verdict and the events. Its icon is inline,
//! so a browser asks the sandbox for nothing that would enter the session.

use super::record::Record;
use payhub_sim::Facts;

/// Trace lines shown, the latest ones.
const LINES_MAX: usize = 500;

/// How often the page asks for the session again.
pub const REFRESH_MS: u32 = 1000;

/// The page: a shell, the same for every session (`?merchant=2` is passed on by the
/// script from the page's own address).
pub fn to_html() -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\">\
         <link rel=\"icon\" href=\"data:,\"><title>payhub-verify sandbox</title><style>body{{font-family:sans-serif;margin:1em}}\
         pre{{font-size:12px;background:#f6f6f6;padding:.5em;overflow-x:auto}}\
         .violated{{color:#a00}}.holds{{color:#070}}</style></head><body>\
         <h1>payhub-verify sandbox</h1>\
         <div id=\"verdict\">loading the session…</div>\
         <h2>Exchanges</h2><p id=\"summary\"></p><pre id=\"trace\"></pre>\
         <p><a href=\"/__sandbox/verdict?format=markdown\">verdict</a>, \
         <a href=\"/__sandbox/events\">events</a>, <a href=\"/__sandbox/script\">script</a>, \
         <a href=\"/__sandbox/har\">HAR</a>.</p>\
         <noscript>This page renders the session with JavaScript; the links above give \
         the verdict and the events without it.</noscript>\
         <script>{SCRIPT}</script></body></html>\n"
    )
    .replace("REFRESH_MS", &REFRESH_MS.to_string())
}

/// Renders `page.json` into the shell; asks again `REFRESH_MS` after each answer (or
/// failure), so at most one request is in flight.
const SCRIPT: &str = r#"
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
function render(s) {
  const v = document.getElementById('verdict');
  v.replaceChildren();
  if (s.violated.length === 0) {
    v.className = 'holds';
    v.append(el('p', null, 'All hold over ' + s.events + ' events: ' + s.judged +
      ' properties judged' + (s.cannot_judge ? '; ' + s.cannot_judge +
      ' cannot be judged from what the sandbox sees (the verdict says why)' : '') + '.'));
  } else {
    v.className = 'violated';
    v.append(el('p', null, 'VIOLATED:'));
    const ul = el('ul');
    for (const p of s.violated) {
      const li = el('li', 'violation');
      li.append(el('b', null, p.name), ': ' + (p.detail || '') + ' [' + p.rules.join(', ') + ']');
      ul.append(li);
    }
    v.append(ul);
  }
  document.getElementById('summary').textContent = s.lines_total + ' trace lines' +
    (s.lines.length < s.lines_total ? ', the latest ' + s.lines.length + ' shown' : '') +
    (s.note ? '; ' + s.note : '');
  document.getElementById('trace').textContent = s.lines.join('\n');
}
async function refresh() {
  try {
    const r = await fetch('/__sandbox/page.json' + location.search, { cache: 'no-store' });
    if (r.ok) render(await r.json());
  } catch (e) {
    document.getElementById('summary').textContent = 'the sandbox does not answer: ' + e;
  }
  setTimeout(refresh, REFRESH_MS);
}
refresh();
"#;

/// `GET /__sandbox/page.json`: what the page renders. `{"events":N,"violated":[{"name",
/// "detail","rules"}],"lines_total":N,"lines":[…]}`, the latest [`LINES_MAX`] lines.
pub fn to_json(facts: &Facts, record: &Record) -> String {
    use crate::judge_cmd::Status;
    let verdicts = super::verdict::verdicts(facts, record);
    let violated: Vec<_> = verdicts
        .iter()
        .filter(|v| v.status == Status::Violated)
        .map(|v| serde_json::json!({ "name": v.name, "detail": v.detail, "rules": v.rules }))
        .collect();
    let judged = verdicts
        .iter()
        .filter(|v| matches!(v.status, Status::Holds | Status::Violated))
        .count();
    let cannot_judge = verdicts
        .iter()
        .filter(|v| v.status == Status::CannotJudge)
        .count();
    let text = record.text();
    let lines: Vec<&str> = text.lines().collect();
    let shown = &lines[lines.len().saturating_sub(LINES_MAX)..];
    let json = serde_json::json!({
        "events": record.events_total(),
        "violated": violated,
        "judged": judged,
        "cannot_judge": cannot_judge,
        "note": record.note(),
        "lines_total": lines.len(),
        "lines": shown,
    });
    json.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_fetches_the_session_and_renders_it_as_text() {
        let page = to_html();
        assert!(page.contains("fetch('/__sandbox/page.json'"), "{page}");
        assert!(page.contains("setTimeout(refresh, 1000)"), "{page}");
        assert!(!page.contains("innerHTML"), "{page}");
    }

    #[test]
    fn an_empty_session_holds_and_shows_no_exchange() {
        let json: serde_json::Value =
            serde_json::from_str(&to_json(&Facts::default(), &Record::default())).unwrap();
        assert_eq!(json["events"], 0);
        assert_eq!(json["violated"], serde_json::json!([]));
        assert_eq!(json["lines_total"], 0);
    }
}
