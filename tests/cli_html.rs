//! `--format html` of `check-log`, `run` and `conform`: each prints one self-contained
//! page (no script, nothing loaded from the network), one drawing per violation, inline
//! SVG that parses as XML, the witness items marked, the property and its rule ids named;
//! a clean input draws nothing. The page checks themselves are shown to catch a page
//! without its figure, with a script, with a resource from the network, and plain text.

mod common;
mod serve_support;

use common::*;
use serve_support::*;

/// What is wrong with `page` as the self-contained page of `violations` violations, each
/// of a property in `properties` naming the rules in `rules`; empty if nothing is.
fn problems(page: &str, violations: usize, properties: &[&str], rules: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let lower = page.to_ascii_lowercase();
    if !lower.starts_with("<!doctype html>") {
        out.push("does not start with <!doctype html>".to_owned());
    }
    if lower.matches("<!doctype html>").count() != 1 || lower.matches("</html>").count() != 1 {
        out.push("not one page".to_owned());
    }
    if lower.contains("<script") {
        out.push("has a <script>".to_owned());
    }
    if lower.contains("<link") || lower.contains("@import") || lower.contains("url(") {
        out.push("loads a stylesheet or a resource".to_owned());
    }
    for attr in ["src=", "href="] {
        for (i, _) in lower.match_indices(attr) {
            let value = lower[i + attr.len()..].trim_start_matches(['"', '\'']);
            if value.starts_with("http:") || value.starts_with("https:") || value.starts_with("//")
            {
                out.push(format!(
                    "{attr} loads from the network: {}",
                    &value[..value.len().min(60)]
                ));
            }
        }
    }
    let svgs: Vec<&str> = page
        .match_indices("<svg")
        .map(|(i, _)| {
            let end = page[i..].find("</svg>").map_or(page.len(), |e| i + e + 6);
            &page[i..end]
        })
        .collect();
    let blocks = page.matches("<div class=\"violation\"").count();
    if svgs.len() != violations || blocks != violations {
        out.push(format!(
            "{} drawings and {blocks} violation blocks for {violations} violations",
            svgs.len()
        ));
    }
    for svg in &svgs {
        match roxmltree::Document::parse(svg) {
            Err(e) => out.push(format!("a drawing is not XML: {e}")),
            Ok(doc) => {
                if !doc
                    .descendants()
                    .any(|n| n.attribute("data-witness") == Some("true"))
                {
                    out.push("a drawing marks no witness item".to_owned());
                }
                let text: String = doc
                    .descendants()
                    .filter(|n| n.is_text())
                    .filter_map(|n| n.text())
                    .collect();
                if !text.contains("VIOLATED") {
                    out.push("a drawing has no verdict note".to_owned());
                }
            }
        }
    }
    for p in properties {
        if !page.contains(&format!("data-property=\"{p}\"")) {
            out.push(format!("property {p} not named in a violation block"));
        }
    }
    for r in rules {
        if !page.contains(&format!("data-rule=\"{r}\"")) {
            out.push(format!("rule {r} not named with its sentence"));
        }
    }
    out
}

fn assert_page(o: &std::process::Output, violations: usize, properties: &[&str], rules: &[&str]) {
    no_panic(o);
    let page = stdout(o);
    let found = problems(&page, violations, properties, rules);
    assert!(
        found.is_empty(),
        "{found:?}\n{}",
        &page[..page.len().min(3000)]
    );
}

#[test]
fn check_log_html_draws_the_planted_violation_and_nothing_for_a_clean_log() {
    let o = run(&[
        "check-log",
        "tests/fixtures/access/dont-do-this.jsonl",
        "--format",
        "html",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_page(
        &o,
        1,
        &["client-creates-an-order-under-one-key"],
        &["UNKNOWN-03", "GEN-02"],
    );
    let page = stdout(&o);
    // The first screen: the verdict, what was read; the rest: what cannot be judged.
    let verdict = page.find("id=\"verdict\"").unwrap();
    assert!(verdict < page.find("<svg").unwrap());
    assert!(page.contains("3 entries: 3 judged"), "{page}");
    assert!(page.contains("Cannot judge from this source"), "{page}");
    assert!(page.contains("the acquirer&apos;s ledger"), "{page}");

    let two = run(&[
        "check-log",
        "tests/fixtures/har/platform-conflict-missing.har",
        "--format",
        "html",
    ]);
    assert_eq!(code(&two), 1, "{}", stderr(&two));
    assert_page(&two, 2, &[], &[]);

    let clean = run(&[
        "check-log",
        "tests/fixtures/har/chrome.har",
        "--format",
        "html",
    ]);
    assert_eq!(code(&clean), 0, "{}", stderr(&clean));
    assert_page(&clean, 0, &[], &[]);
    assert!(stdout(&clean).contains("banner ok"));
}

/// The double charge of docs/scripts.md: a new order number while the first create's
/// result is unknown, both captured.
const DOUBLE_CHARGE: &str = r#"use platform=reference delivery=manual
webhooks none
A: for order ORDER-1 POST /v1/payments  Idempotency-Key: K1  {"merchant_order_no":"ORDER-1","amount":10000,"currency":"USD","card":"A"}
deliver m1
acquire u1 approve
deliver u2
drop m2
A: for order ORDER-1 POST /v1/payments  Idempotency-Key: K2  {"merchant_order_no":"ORDER-1-retry","amount":10000,"currency":"USD","card":"A"}
deliver m3
acquire u3 approve
"#;

#[test]
fn run_html_draws_the_violation_with_its_witness_and_nothing_for_a_clean_script() {
    let bad = temp("html-double-charge.pha", DOUBLE_CHARGE);
    let o = run(&["run", bad.to_str().unwrap(), "--format", "html"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_page(
        &o,
        1,
        &["client-never-charges-an-order-twice"],
        &["EFFECT-01", "UNKNOWN-03"],
    );
    // Both charges of the order are the witness.
    let page = stdout(&o);
    let charges = page
        .match_indices("data-to=\"acquirer\" data-witness=\"true\"")
        .count();
    assert_eq!(charges, 2, "{page}");

    let expected = temp(
        "html-double-charge-expected.pha",
        &format!("{DOUBLE_CHARGE}expect violation client-never-charges-an-order-twice\n"),
    );
    let o = run(&[
        "run",
        expected.to_str().unwrap(),
        bad.to_str().unwrap(),
        "--format",
        "html",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_page(
        &o,
        2,
        &["client-never-charges-an-order-twice"],
        &["EFFECT-01"],
    );
    assert!(stdout(&o).contains("as the script expects"));
    assert!(stdout(&o).contains("1 of 2 scripts passed"));

    let clean = run(&["scenario", "S01", "--format", "html"]);
    assert_eq!(code(&clean), 0, "{}", stderr(&clean));
    assert_page(&clean, 0, &[], &[]);
}

#[test]
fn conform_html_draws_the_planted_bug_and_nothing_for_the_reference() {
    let s = Serve::start(
        "html-conform-mut",
        &["--clock", "manual", "--mutant", "amount_not_in_fingerprint"],
    );
    let o = run(&[
        "conform",
        "--target",
        &format!("http://{}", s.addr),
        "--profile",
        "docs/profiles/sandbox.json",
        "--seeds",
        "0..300",
        "--format",
        "html",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    // The model answers the same key with another amount 409: CONFLICT-01. The registry
    // finds it too when the two requests of the case reached the target one after the
    // other's answer (a matter of timing): its block is drawn as well.
    let page = stdout(&o);
    let registry = page
        .split_once("id=\"registry\"")
        .map_or(0, |(_, r)| r.matches("<div class=\"violation\"").count());
    assert_page(
        &o,
        1 + registry,
        &["target-answers-as-the-model-allows"],
        &["CONFLICT-01"],
    );
    assert!(stdout(&o).contains("the model allows"));
    drop(s);

    let s = Serve::start("html-conform-ref", &["--clock", "manual"]);
    let clean = run(&[
        "conform",
        "--target",
        &format!("http://{}", s.addr),
        "--profile",
        "docs/profiles/sandbox.json",
        "--seeds",
        "0..20",
        "--format",
        "html",
    ]);
    assert_eq!(code(&clean), 0, "{}", stderr(&clean));
    assert_page(&clean, 0, &[], &[]);
    // The first screen names what was checked: the target, the profile, the seeds.
    let checked = format!(
        "against <code>http://{}</code> [payhub-verify serve",
        s.addr
    );
    assert!(stdout(&clean).contains(&checked), "{}", stdout(&clean));
    assert!(stdout(&clean).contains("seeds 0..20"), "{}", stdout(&clean));
}

/// The checks above catch what they are for: a page without its drawing, a page with a
/// script or a resource from the network, a drawing without its witness, plain text.
#[test]
fn the_page_checks_catch_a_missing_figure_a_script_a_network_load_and_text() {
    let o = run(&[
        "check-log",
        "tests/fixtures/access/dont-do-this.jsonl",
        "--format",
        "html",
    ]);
    let page = stdout(&o);
    let property = ["client-creates-an-order-under-one-key"];
    let rules = ["UNKNOWN-03"];
    assert!(problems(&page, 1, &property, &rules).is_empty());
    let start = page.find("<svg").unwrap();
    let end = page.find("</svg>").unwrap() + 6;
    let without_figure = format!("{}{}", &page[..start], &page[end..]);
    let without_witness = page.replace("data-witness=\"true\"", "");
    let cases = [
        (without_figure, "drawings"),
        (without_witness, "no witness"),
        (
            page.replace("</body>", "<script>x()</script></body>"),
            "<script>",
        ),
        (
            page.replace("</body>", "<img src=\"https://example.com/x.png\"></body>"),
            "network",
        ),
        (
            page.replace("data-rule=\"UNKNOWN-03\"", ""),
            "rule UNKNOWN-03",
        ),
        (
            stdout(&run(&[
                "check-log",
                "tests/fixtures/access/dont-do-this.jsonl",
            ])),
            "doctype",
        ),
    ];
    for (bad, want) in cases {
        let found = problems(&bad, 1, &property, &rules);
        assert!(found.iter().any(|p| p.contains(want)), "{want}: {found:?}");
    }
    // A clean input's page with a drawing is caught too.
    let found = problems(&page, 0, &[], &[]);
    assert!(
        found.iter().any(|p| p.contains("for 0 violations")),
        "{found:?}"
    );
}
