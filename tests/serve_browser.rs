//! The page at `/__sandbox/` in a real browser: Debian's chromium, headless, loads it
//! during a session, and the exchanges and the verdict are found in the DOM its script
//! put there (the raw HTML is a shell without them). A screenshot is saved under
//! `target/test-artifacts/`.
//!
//! Each violation is drawn as an inline `<svg>` whose arrows are exactly its witness
//! exchanges. Needs chromium (`tests/common/browser.rs`).

mod common;
mod serve_support;

use common::browser::{attr, browse, chromium, openings};
use serve_support::*;
use std::collections::BTreeSet;
use std::path::Path;

/// The text of the element with this id in a dumped DOM (tags left in: enough to search).
fn element<'a>(dom: &'a str, id: &str) -> &'a str {
    let open = format!("id=\"{id}\"");
    let at = dom
        .find(&open)
        .unwrap_or_else(|| panic!("no #{id} in the DOM: {dom}"));
    let rest = &dom[at..];
    let end = rest
        .find("</pre>")
        .into_iter()
        .chain(rest.find("<h2>"))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn serve_browser_the_page_renders_the_exchanges_and_the_verdict_as_the_session_goes() {
    let Some(browser) = chromium() else {
        return;
    };
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let profile = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chromium-profile");
    let mut s = Serve::start("browser", &[]);
    let url = format!("http://{}/__sandbox/", s.addr);
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#;
    assert_eq!(s.control("POST", "/__sandbox/faults", plan).status, 200);

    // The session so far: one create, executed and its connection reset.
    assert!(matches!(
        s.create("ak_1", "k1", "ORDER-1", 10000),
        Outcome::Reset(_)
    ));
    let dom = browse(&browser, &profile, &url, &["--dump-dom"]);
    let verdict = element(&dom, "session");
    assert!(verdict.contains("Holds over what it judged"), "{verdict}");
    // What the sandbox cannot see is said, not passed (the client's own process).
    assert!(
        verdict.contains("none violated.") && verdict.contains("the sandbox cannot see"),
        "{verdict}"
    );
    let trace = element(&dom, "trace");
    assert!(trace.contains("ORDER-1"), "{trace}");
    assert!(!trace.contains("ORDER-1-retry"), "{trace}");

    // The "do not do this" retry: a new key and a new order number. The page, loaded
    // again, shows the new exchange and the double charge with its rules.
    assert_eq!(s.created("k2", "ORDER-1-retry", 10000).status, 201);
    let dom = browse(&browser, &profile, &url, &["--dump-dom"]);
    let verdict = element(&dom, "session");
    assert!(verdict.contains("<b>VIOLATED</b>"), "{verdict}");
    assert!(
        verdict.contains("client-never-charges-an-order-twice"),
        "{verdict}"
    );
    assert!(
        dom.contains("data-rule=\"UNKNOWN-03\"") && dom.contains("data-rule=\"EFFECT-01\""),
        "{dom}"
    );
    // Each violation drawn: one `<svg>`, its arrows between its own lifelines, every
    // one a witness, and for a wire property exactly the exchanges its verdict names.
    let verdict: serde_json::Value =
        serde_json::from_str(&s.control("GET", "/__sandbox/verdict", "").body).unwrap();
    let violated: Vec<&serde_json::Value> = verdict["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "violated")
        .collect();
    let drawn: Vec<&str> = dom.split("<div class=\"violation\"").skip(1).collect();
    assert_eq!(drawn.len(), violated.len(), "a drawing per violation");
    for (d, p) in drawn.iter().zip(&violated) {
        let d = &d[..d.find("</figure>").expect("a drawing")];
        assert_eq!(attr(d, "data-property"), p["name"].as_str());
        assert_eq!(d.matches("<svg").count(), 1);
        let lifelines: Vec<&str> = openings(d, "line")
            .into_iter()
            .filter(|o| attr(o, "class") == Some("lifeline"))
            .filter_map(|o| attr(o, "data-participant"))
            .collect();
        let arrows: Vec<&str> = openings(d, "g")
            .into_iter()
            .filter(|o| attr(o, "data-from").is_some())
            .collect();
        assert!(!arrows.is_empty(), "{d}");
        for a in &arrows {
            assert_eq!(attr(a, "data-witness"), Some("true"), "{a}");
            for end in ["data-from", "data-to"] {
                assert!(lifelines.contains(&attr(a, end).unwrap()), "{a}");
            }
        }
        let exchanges: BTreeSet<&str> = arrows
            .iter()
            .filter_map(|a| attr(a, "data-exchange"))
            .collect();
        if let Some(entries) = p["witness"]["entries"].as_array() {
            let named: BTreeSet<&str> = entries.iter().filter_map(|e| e["id"].as_str()).collect();
            assert_eq!(exchanges, named, "{}", p["name"]);
        } else {
            assert!(exchanges.len() >= 2, "{exchanges:?}");
        }
    }
    assert!(dom.contains("ORDER-1-retry"));
    let trace = element(&dom, "trace");
    assert!(trace.contains("ORDER-1-retry"), "{trace}");
    // The browser's own requests (an icon) are not exchanges of the session.
    assert!(!trace.contains("favicon"), "{trace}");
    // It was the script that put them there: the HTML served has none of it.
    let raw = s.control("GET", "/__sandbox/", "").body;
    assert!(!raw.contains("ORDER-1-retry") && !raw.contains("never-charges"));

    let shot = artifacts.join("sandbox-page.png");
    let _ = std::fs::remove_file(&shot);
    browse(
        &browser,
        &profile,
        &url,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,900",
        ],
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}", shot.display()));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.len() > 10_000, "a {} byte screenshot", png.len());
    eprintln!("screenshot: {}", shot.display());
    s.healthy();
}
