//! `GET /__sandbox/`: the session at a glance. A shell whose script fetches
//! `GET /__sandbox/page.json` every second and shows it: the verdict as the Markdown
//! verdict's page drawn in HTML ([`super::verdict::blocks`], every text escaped by
//! [`crate::outcome::doc`]), read with `DOMParser`, never `innerHTML`; the trace lines as
//! text. The icon is inline, so the browser asks the sandbox for nothing that would enter
//! the session.

use super::witness::Session;
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
    let head = crate::outcome::html::head("payhub-verify sandbox");
    let head = head.replacen("<title>", "<link rel=\"icon\" href=\"data:,\"><title>", 1);
    let sessions =
        MERCHANTS.map(|m| format!("<a href=\"/__sandbox/?merchant={m}\">merchant {m}</a>"));
    format!(
        "{head}<p>Sessions: {} · this page: <span id=\"merchant\"></span></p>\
         <div id=\"session\">loading the session…</div>\
         <h2>Exchanges</h2><p><label>Filter by order number or key: <input id=\"filter\" size=\"30\" placeholder=\"ORDER-1 or an Idempotency-Key\"></label></p>\
         <p id=\"summary\"></p><pre id=\"trace\"></pre>\
         <p id=\"links\"><a data-path=\"/__sandbox/verdict?format=markdown\" href=\"/__sandbox/verdict?format=markdown\">verdict</a>, \
         <a data-path=\"/__sandbox/events\" href=\"/__sandbox/events\">events</a>, <a data-path=\"/__sandbox/script\" href=\"/__sandbox/script\">script</a>, \
         <a data-path=\"/__sandbox/har\" href=\"/__sandbox/har\">HAR</a>.</p>\
         <noscript>This page renders the session with JavaScript; the links above give \
         the verdict and the events without it.</noscript>\
         <script>{SCRIPT}</script>{}",
        sessions.join(", "),
        crate::outcome::html::END
    )
    .replace("REFRESH_MS", &REFRESH_MS.to_string())
}

/// Shows `page.json` in the shell; asks again `REFRESH_MS` after each answer (or
/// failure), so at most one request is in flight.
const SCRIPT: &str = r#"
const merchant = new URLSearchParams(location.search).get('merchant') || '1';
const byId = id => document.getElementById(id);
let lines = [];
function showTrace() {
  const q = byId('filter').value.trim();
  const shown = q ? lines.filter(l => l.includes(q)) : lines;
  byId('trace').textContent = shown.join('\n');
  return shown.length;
}
function render(s) {
  byId('merchant').textContent = 'merchant ' + merchant;
  for (const a of document.querySelectorAll('#links a')) {
    a.href = a.dataset.path + (a.dataset.path.includes('?') ? '&' : '?') + 'merchant=' + encodeURIComponent(merchant);
  }
  const doc = new DOMParser().parseFromString(s.html, 'text/html');
  doc.querySelectorAll('script,iframe,object,embed,foreignObject').forEach(n => n.remove());
  byId('session').replaceChildren(...doc.body.childNodes);
  lines = s.lines;
  const shown = showTrace();
  byId('summary').textContent = s.lines_total + ' trace lines' +
    (s.lines.length < s.lines_total ? ', the latest ' + s.lines.length + ' shown' : '') +
    (shown < s.lines.length ? ', ' + shown + ' match the filter' : '') +
    (s.note ? '; ' + s.note : '');
}
byId('filter').addEventListener('input', showTrace);
async function refresh() {
  try {
    const r = await fetch('/__sandbox/page.json' + location.search, { cache: 'no-store' });
    if (r.ok) render(await r.json());
  } catch (e) {
    byId('summary').textContent = 'the sandbox does not answer: ' + e;
  }
  setTimeout(refresh, REFRESH_MS);
}
refresh();
"#;

/// `GET /__sandbox/page.json`: what the page shows. `{"events":N,"html":"…","properties":
/// [{"name","status","detail","rules"}],"lines_total":N,"lines":[…]}`: the verdict's page
/// in HTML (each violation with its witness drawn), every property, violated ones first;
/// the latest [`LINES_MAX`] trace lines.
pub fn to_json_of(session: &Session, mut judged: super::verdict::Judged) -> String {
    judged
        .verdicts
        .sort_by_key(|v| v.status != Status::Violated);
    let properties = judged.verdicts.iter().map(|v| {
        serde_json::json!({ "name": v.name, "status": v.status, "detail": v.detail, "rules": v.rules })
    });
    let properties: Vec<_> = properties.collect();
    let html = crate::outcome::doc::body(&super::verdict::blocks(session, &judged));
    let text = session.record.text();
    let lines: Vec<&str> = text.lines().collect();
    let json = serde_json::json!({
        "events": judged.events,
        "html": html,
        "properties": properties,
        "note": session.record.note(),
        "lines_total": lines.len(),
        "lines": &lines[lines.len().saturating_sub(LINES_MAX)..],
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
