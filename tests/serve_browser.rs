//! The page at `/__sandbox/` in a real browser: Debian's chromium, headless, loads it
//! during a session, and the exchanges and the verdict are found in the DOM its script
//! rendered (the raw HTML is a shell without them). A screenshot is saved under
//! `target/test-artifacts/`.
//!
//! Needs chromium (`.ci/install-chromium` installs it; `CHROMIUM=/path` picks another).
//! Without it the test says so loudly and passes, unless `PAYHUB_REQUIRE_CHROMIUM=1`
//! (set by `.ci/run`), where its absence is a failure.

mod common;
mod serve_support;

use serve_support::*;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A chromium run that takes longer than this is killed and the test fails.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// The browser, or `None` (after saying why) when a developer's machine has none.
fn chromium() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("CHROMIUM") {
        Some(p) => vec![PathBuf::from(p)],
        None => ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .flat_map(|name| {
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                    .map(move |dir| dir.join(name))
                    .collect::<Vec<_>>()
            })
            .collect(),
    };
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        let message = "no chromium on PATH (nor $CHROMIUM): run .ci/install-chromium";
        assert!(
            std::env::var("PAYHUB_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "{message} (PAYHUB_REQUIRE_CHROMIUM=1 makes its absence a failure)"
        );
        // Written to the process's stderr itself, which the test harness does not
        // capture: a skip is seen in a plain `cargo test`.
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED serve_browser: {message} ***\n"
        );
    }
    found
}

/// Runs headless chromium on `url` with `args`, within [`BROWSER_TIMEOUT`]: its stdout.
fn browse(browser: &Path, profile: &Path, url: &str, args: &[&str]) -> String {
    let out = common::temp(&format!("browser-{}.out", args.len()), "");
    let err = common::temp(&format!("browser-{}.err", args.len()), "");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--hide-scrollbars",
            // The page's script runs (and refreshes) within this much virtual time
            // before the DOM is dumped or the screenshot taken.
            "--virtual-time-budget=4000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: cannot start: {e}", browser.display()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium took over {BROWSER_TIMEOUT:?} on {url}: {}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success(),
        "chromium failed ({status}) on {url}: {}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    std::fs::read_to_string(&out).unwrap()
}

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
    let verdict = element(&dom, "verdict");
    assert!(verdict.contains("All hold over"), "{verdict}");
    // What the sandbox cannot see is said, not passed (the client's own process).
    assert!(
        verdict.contains("properties judged;")
            && verdict.contains("cannot be judged from what the sandbox sees"),
        "{verdict}"
    );
    let trace = element(&dom, "trace");
    assert!(trace.contains("ORDER-1"), "{trace}");
    assert!(!trace.contains("ORDER-1-retry"), "{trace}");

    // The "do not do this" retry: a new key and a new order number. The page, loaded
    // again, shows the new exchange and the double charge with its rules.
    assert_eq!(s.created("k2", "ORDER-1-retry", 10000).status, 201);
    let dom = browse(&browser, &profile, &url, &["--dump-dom"]);
    let verdict = element(&dom, "verdict");
    assert!(verdict.contains("class=\"violated\""), "{verdict}");
    assert!(
        verdict.contains("client-never-charges-an-order-twice"),
        "{verdict}"
    );
    assert!(
        verdict.contains("UNKNOWN-03") && verdict.contains("EFFECT-01"),
        "{verdict}"
    );
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
