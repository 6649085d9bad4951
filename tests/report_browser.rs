//! The HTML report in a real browser: `verify --format html` with a planted bug prints
//! the page it writes as `report.html`; Debian's headless chromium loads it from disk (no network) and the
//! rendered DOM holds, per violation, one drawn sequence diagram whose arrows run
//! between its own lifelines and whose closing note names the property and its rules.
//! At 1,280 px the page does not scroll sideways and drawn text is at least 11 px. A
//! screenshot is saved as `target/test-artifacts/report-page.png`.

mod common;

use common::browser::{attr, browse, chromium, measure, openings};
use std::path::Path;

/// The planted bug: a cancel answered 202 with an error object instead of its Payment
/// (CANCEL-01), caught in the `cancel` preset.
const MUTANT: &str = "cancel_accepted_without_payment";

#[test]
fn report_browser_each_violation_is_drawn_with_its_witness() {
    let Some(browser) = chromium() else {
        return;
    };
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let out = tmp.join("report-html");
    let _ = std::fs::remove_dir_all(&out);
    let o = common::run(&[
        "verify",
        "--mutant",
        MUTANT,
        "--preset",
        "cancel",
        "--out",
        out.to_str().unwrap(),
        "--format",
        "html",
    ]);
    assert_eq!(common::code(&o), 1, "{}", common::stderr(&o));
    // The page on stdout is the page written beside the other report files.
    let page = out.join("report.html");
    let raw = std::fs::read_to_string(&page).unwrap();
    assert!(common::stdout(&o) == raw, "stdout is not report.html");
    // One file, nothing fetched or run at view time, bounded in size.
    for banned in ["<script", "<link", "src=\"http", "@import", "url("] {
        assert!(!raw.contains(banned), "the page holds {banned}");
    }
    assert!(raw.len() < 2_000_000, "{} bytes", raw.len());

    let profile = tmp.join("chromium-profile-report");
    let url = format!("file://{}", page.display());
    let dom = browse(&browser, &profile, &url, &["--dump-dom"]);
    assert!(dom.contains("payhub-verify: FAILED"), "{dom}");
    let violations: Vec<&str> = dom.split("<div class=\"violation\"").skip(1).collect();
    assert_eq!(violations.len(), 1, "{} violations drawn", violations.len());
    for v in &violations {
        let v = &v[..v.find("</figure>").expect("a drawing per violation")];
        let property = attr(v, "data-property").expect("names its property");
        assert_eq!(property, "cancel-202-keeps-the-status");
        assert_eq!(v.matches("<svg").count(), 1, "one drawing");
        let lifelines: Vec<&str> = openings(v, "line")
            .into_iter()
            .filter(|o| attr(o, "class") == Some("lifeline"))
            .filter_map(|o| attr(o, "data-participant"))
            .collect();
        assert!(lifelines.contains(&"merchant-0") && lifelines.contains(&"platform"));
        let arrows: Vec<&str> = openings(v, "g")
            .into_iter()
            .filter(|o| attr(o, "data-from").is_some())
            .collect();
        assert!(!arrows.is_empty());
        for a in &arrows {
            for end in ["data-from", "data-to"] {
                let p = attr(a, end).unwrap();
                assert!(lifelines.contains(&p), "{end} {p} has no lifeline");
            }
        }
        // The witness exchanges: the create the cancel acts on, and the cancel whose
        // 202 broke the rule.
        let exchanges: std::collections::BTreeSet<&str> = arrows
            .iter()
            .filter_map(|a| attr(a, "data-exchange"))
            .collect();
        assert!(exchanges.len() >= 2, "{exchanges:?}");
        assert!(
            v.contains("POST /v1/payments/pay_demo_001/cancel"),
            "no cancel drawn"
        );
        assert!(v.contains("202 {"), "no 202 drawn");
        let verdict = openings(v, "g")
            .into_iter()
            .filter(|o| attr(o, "data-kind") == Some("verdict"))
            .count();
        assert_eq!(verdict, 1);
        assert!(v.contains("VIOLATED cancel-202-keeps-the-status [CANCEL-01]"));
    }

    // At 1,280 px nothing scrolls sideways, and every drawing's text is shown at 11 px
    // or more (drawings wider than the page scroll in their own box).
    let m = measure(&browser, &profile, &page, 1280);
    assert!(
        m.scroll_width <= 1280.0,
        "the page is {} px wide at 1280",
        m.scroll_width
    );
    assert!(m.texts > 0);
    assert!(
        m.min_text_px >= 11.0,
        "drawn text as small as {} px",
        m.min_text_px
    );

    let artifacts = tmp.parent().unwrap().join("test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("report-page.png");
    let _ = std::fs::remove_file(&shot);
    browse(
        &browser,
        &profile,
        &url,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,1400",
        ],
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}", shot.display()));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    eprintln!("screenshot: {}", shot.display());
}
