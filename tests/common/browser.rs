//! Headless chromium for the tests that look at a page as a reader does: Debian's
//! chromium (`.ci/install-chromium` installs it; `CHROMIUM=/path` picks another). Without
//! it a test says so loudly and passes, unless `PAYHUB_REQUIRE_CHROMIUM=1` (set by
//! `.ci/run`), where its absence is a failure.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A chromium run that takes longer than this is killed and the test fails.
pub const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// The browser, or `None` (after saying why) when a developer's machine has none.
pub fn chromium() -> Option<PathBuf> {
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
            "\n*** SKIPPED {}: {message} ***\n",
            env!("CARGO_CRATE_NAME")
        );
    }
    found
}

/// Runs headless chromium on `url` with `args`, within [`BROWSER_TIMEOUT`]: its stdout.
pub fn browse(browser: &Path, profile: &Path, url: &str, args: &[&str]) -> String {
    let out = super::temp(&format!("browser-{}.out", args.len()), "");
    let err = super::temp(&format!("browser-{}.err", args.len()), "");
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

/// Every `<tag …>` opening in `s`, as its attribute text.
pub fn openings<'a>(s: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    s.match_indices(&open)
        .map(|(at, _)| {
            let rest = &s[at + open.len()..];
            &rest[..rest.find('>').unwrap_or(rest.len())]
        })
        .collect()
}

/// The value of attribute `name` in an opening tag's text.
pub fn attr<'a>(opening: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("{name}=\"");
    let at = opening.find(&key)? + key.len();
    let rest = &opening[at..];
    Some(&rest[..rest.find('"')?])
}

/// A page laid out as a reader at `width` px sees it, with every `<details>` opened: the
/// document's scroll width (over `width` means the page scrolls sideways), and the
/// smallest and the number of the drawings' text sizes as shown (the font size times the
/// drawing's scale). The page is copied beside itself with a measuring script added; the
/// page itself carries none.
pub struct Measured {
    pub scroll_width: f64,
    pub min_text_px: f64,
    pub texts: usize,
}

pub fn measure(browser: &Path, profile: &Path, page: &Path, width: u32) -> Measured {
    const SCRIPT: &str = "<script>(function(){\
document.querySelectorAll('details').forEach(function(d){d.open=true;});\
var min=1e9,n=0;\
document.querySelectorAll('svg').forEach(function(svg){\
var vb=svg.viewBox&&svg.viewBox.baseVal;var r=svg.getBoundingClientRect();\
var scale=vb&&vb.width?r.width/vb.width:1;\
svg.querySelectorAll('text').forEach(function(t){\
var px=parseFloat(getComputedStyle(t).fontSize)*scale;n++;if(px<min)min=px;});});\
document.body.setAttribute('data-measured',document.documentElement.scrollWidth+' '+min+' '+n);\
})();</script>";
    let html = std::fs::read_to_string(page).unwrap();
    let copy = page.with_extension("measure.html");
    std::fs::write(&copy, html.replace("</body>", &format!("{SCRIPT}</body>"))).unwrap();
    let dom = browse(
        browser,
        profile,
        &format!("file://{}", copy.display()),
        &["--dump-dom", &format!("--window-size={width},1400")],
    );
    let body = openings(&dom, "body");
    let got = body
        .iter()
        .find_map(|b| attr(b, "data-measured"))
        .unwrap_or_else(|| panic!("the measuring script did not run on {}", copy.display()));
    let v: Vec<f64> = got.split(' ').map(|x| x.parse().unwrap()).collect();
    Measured {
        scroll_width: v[0],
        min_text_px: v[1],
        texts: v[2] as usize,
    }
}
