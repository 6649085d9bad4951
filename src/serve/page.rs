//! `GET /__sandbox/`: the session at a glance. A shell whose script fetches
//! `GET /__sandbox/page.json` every second and renders it. Text is set with `textContent`,
//! never parsed as HTML; drawings are SVG from [`payhub_sim::diagram`], which escapes every
//! text. The icon is inline, so the browser asks the sandbox for nothing that would enter
//! the session.

use super::diagrams::Session;
use payhub_properties::verdict::Status;

/// Trace lines shown, the latest ones.
const LINES_MAX: usize = 500;

/// How often the page asks for the session again.
pub const REFRESH_MS: u32 = 1000;

/// The merchants whose sessions the sandbox keeps apart (`?merchant=N`).
pub const MERCHANTS: [u32; 2] = [1, 2];

/// The page: a shell, the same for every session (`?merchant=2` is passed on by the
/// script from the page's own address).
pub fn to_html() -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <link rel=\"icon\" href=\"data:,\"><title>payhub-verify sandbox</title><style>{STYLE}</style>{}</head><body>\
         <h1>payhub-verify sandbox <span id=\"merchant\"></span></h1>\
         <p id=\"sessions\"></p>\
         <div id=\"verdict\">loading the session…</div>\
         <div id=\"violations\"></div>\
         <h2>Properties</h2><table id=\"properties\"><thead><tr><th>property</th><th>status</th><th>rules</th><th>detail</th></tr></thead><tbody></tbody></table>\
         <h2>Exchanges</h2><p><label>Filter by order number or key: <input id=\"filter\" size=\"30\" placeholder=\"ORDER-1 or an Idempotency-Key\"></label></p>\
         <p id=\"summary\"></p><pre id=\"trace\"></pre>\
         <p id=\"links\"><a data-path=\"/__sandbox/verdict?format=markdown\" href=\"/__sandbox/verdict?format=markdown\">verdict</a>, \
         <a data-path=\"/__sandbox/events\" href=\"/__sandbox/events\">events</a>, <a data-path=\"/__sandbox/script\" href=\"/__sandbox/script\">script</a>, \
         <a data-path=\"/__sandbox/har\" href=\"/__sandbox/har\">HAR</a>.</p>\
         <noscript>This page renders the session with JavaScript; the links above give \
         the verdict and the events without it.</noscript>\
         <script>{SCRIPT}</script></body></html>\n",
        payhub_sim::diagram::SVG_STYLE
    )
    .replace("REFRESH_MS", &REFRESH_MS.to_string())
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1240px;padding:0 16px 32px;color:#1f2328}\
pre{font-size:12px;background:#f6f8fa;padding:.5em;white-space:pre-wrap;word-break:break-word}\
table{border-collapse:collapse;width:100%}th,td{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top;font-size:13px}\
td.violated,.violated{color:#cf222e}td.holds,.holds{color:#1a7f37}td.cannot_judge{color:#57606a}\
.violation{border-left:4px solid #cf222e;padding-left:10px;margin:12px 0}figure{margin:6px 0;overflow-x:auto}";

/// Renders `page.json` into the shell; asks again `REFRESH_MS` after each answer (or
/// failure), so at most one request is in flight.
const SCRIPT: &str = r#"
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
const search = new URLSearchParams(location.search);
const merchant = search.get('merchant') || '1';
let lines = [];
function drawing(svg) {
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const root = doc.documentElement;
  if (root.nodeName !== 'svg' || doc.getElementsByTagName('parsererror').length) return el('p', null, '(the drawing could not be read)');
  root.querySelectorAll('script,foreignObject').forEach(n => n.remove());
  const f = el('figure');
  f.append(document.importNode(root, true));
  return f;
}
function showTrace() {
  const q = document.getElementById('filter').value.trim();
  const shown = q ? lines.filter(l => l.includes(q)) : lines;
  document.getElementById('trace').textContent = shown.join('\n');
  return shown.length;
}
function render(s) {
  document.getElementById('merchant').textContent = '· merchant ' + merchant;
  const sessions = document.getElementById('sessions');
  sessions.replaceChildren('Sessions: ');
  s.merchants.forEach((m, i) => {
    if (i) sessions.append(', ');
    const a = el('a', null, 'merchant ' + m);
    a.href = '/__sandbox/?merchant=' + m;
    sessions.append(a);
  });
  for (const a of document.querySelectorAll('#links a')) {
    const path = a.dataset.path;
    a.href = path + (path.includes('?') ? '&' : '?') + 'merchant=' + encodeURIComponent(merchant);
  }
  const v = document.getElementById('verdict');
  v.replaceChildren();
  const violated = s.properties.filter(p => p.status === 'violated');
  if (violated.length === 0 && s.judged === 0) {
    v.className = '';
    v.append(el('p', null, 'Nothing judged: ' + s.events + ' events, and every property needs evidence the session does not show.'));
  } else if (violated.length === 0) {
    v.className = 'holds';
    v.append(el('p', null, 'Holds over what it judged: ' + s.judged +
      ' properties judged over ' + s.events + ' events, none violated' + (s.cannot_judge ? '; not judged: ' +
      s.cannot_judge + ' properties, which the sandbox cannot see (the table says why)' : '') + '.'));
  } else {
    v.className = 'violated';
    v.append(el('p', null, 'VIOLATED: ' + violated.length + ' of ' + s.properties.length + ' properties, over ' + s.events + ' events:'));
    const ul = el('ul');
    for (const p of violated) {
      const li = el('li');
      li.append(el('b', null, p.name), ': ' + (p.detail || '') + ' [' + p.rules.join(', ') + ']');
      ul.append(li);
    }
    v.append(ul);
  }
  const box = document.getElementById('violations');
  box.replaceChildren();
  for (const p of violated) {
    const d = el('div', 'violation');
    d.dataset.property = p.name;
    d.append(el('h3', null, p.name + ' [' + p.rules.join(', ') + ']'), el('p', null, p.detail || ''));
    const asks = el('ul', 'rules');
    for (const r of p.contract) asks.append(el('li', null, r.id + ': the contract asks: ' + r.asks + ' (原文: ' + r.original + ')'));
    d.append(el('p', null, 'The contract asks instead:'), asks);
    d.append(p.svg ? drawing(p.svg) : el('p', null, 'The violation names no exchange the record holds: the exchanges below are its witness.'));
    box.append(d);
  }
  const body = document.querySelector('#properties tbody');
  body.replaceChildren();
  for (const p of s.properties) {
    const tr = el('tr');
    tr.append(el('td', null, p.name), el('td', p.status, p.status_text), el('td', null, p.rules.join(', ')), el('td', null, p.detail || ''));
    body.append(tr);
  }
  lines = s.lines;
  const shown = showTrace();
  document.getElementById('summary').textContent = s.lines_total + ' trace lines' +
    (s.lines.length < s.lines_total ? ', the latest ' + s.lines.length + ' shown' : '') +
    (shown < s.lines.length ? ', ' + shown + ' match the filter' : '') +
    (s.note ? '; ' + s.note : '');
}
document.getElementById('filter').addEventListener('input', showTrace);
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

/// `GET /__sandbox/page.json`: what the page renders. `{"events":N,"properties":[{"name",
/// "status","status_text","detail","rules","svg"}],"lines_total":N,"lines":[…]}`: every
/// property, violated ones first, each violation with its witness drawn; the latest
/// [`LINES_MAX`] trace lines.
pub fn to_json_of(session: &Session, judged: super::verdict::Judged) -> String {
    let record = session.record;
    let events = judged.events;
    let mut verdicts = judged.verdicts;
    verdicts.sort_by_key(|v| v.status != Status::Violated);
    let properties: Vec<_> = verdicts
        .iter()
        .map(|v| {
            let svg = (v.status == Status::Violated)
                .then(|| session.witness_drawing(v))
                .flatten()
                .map(|(d, _)| d.to_svg_unstyled());
            serde_json::json!({
                "name": v.name,
                "status": v.status,
                "status_text": v.status_text(),
                "detail": v.detail,
                "rules": v.rules,
                "contract": super::verdict::contract_of(if v.status == Status::Violated { &v.rules } else { &[] }),
                "svg": svg,
            })
        })
        .collect();
    let count = |f: fn(&Status) -> bool| verdicts.iter().filter(|v| f(&v.status)).count();
    let judged = count(|s| matches!(s, Status::Holds | Status::Violated));
    let cannot_judge = count(|s| *s == Status::CannotJudge);
    let text = record.text();
    let lines: Vec<&str> = text.lines().collect();
    let shown = &lines[lines.len().saturating_sub(LINES_MAX)..];
    let json = serde_json::json!({
        "events": events,
        "merchants": MERCHANTS,
        "properties": properties,
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
        use crate::serve::sandbox::{Planted, Sandbox, Settings};
        let sandbox = Sandbox::new(Settings {
            seed: 0,
            branches: crate::serve::sandbox::Branches::A,
            plan: crate::serve::faults::Plan::from_json("{\"faults\":[]}").unwrap(),
            webhooks: false,
            planted: Planted::Reference,
            seam: Default::default(),
        });
        let session = Session::of(&sandbox);
        let judged = crate::serve::sandbox::tests::session_judged(&session);
        let json: serde_json::Value = serde_json::from_str(&to_json_of(&session, judged)).unwrap();
        assert_eq!(json["events"], 0);
        assert!(
            json["properties"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p["status"] != "violated")
        );
        assert_eq!(json["lines_total"], 0);
    }
}
