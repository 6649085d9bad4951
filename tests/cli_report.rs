//! The report reads in a minute: the verdict, version, commit and date on the first
//! screen, under 40 KB for a passing run (a table row per mutant and per finding, one drawn
//! counterexample); an incomplete run says so the one way every
//! command does, with the bound that cut it and the command with every flag.

mod common;

use common::*;

fn out_dir(name: &str) -> std::path::PathBuf {
    temp("unused", "").parent().unwrap().join(name)
}

#[test]
fn a_passing_verify_writes_a_short_report_whose_first_screen_holds_the_header() {
    let out = out_dir("report-pass");
    let o = run(&[
        "verify",
        "--quick",
        "--seeds",
        "30",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert_eq!(code(&o), 0, "{text}{}", stderr(&o));
    assert!(text.starts_with("payhub-verify: all hold"), "{text}");
    // A quick run searches its presets depth-first with the sound reductions, and says so.
    assert!(
        text.contains("exhaustive presets (depth-first, reduced: requests, por):"),
        "{text}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.len() < 40_000, "report.md is {} bytes", md.len());
    let screen: String = md.lines().take(20).collect::<Vec<_>>().join("\n");
    for needle in [
        "**Verdict: all hold**",
        env!("CARGO_PKG_VERSION"),
        "commit ",
        " UTC",
        "reproduce: `payhub-verify verify --quick --seeds 30 --out ",
    ] {
        assert!(screen.contains(needle), "{needle} not in:\n{screen}");
    }
    assert!(!screen.contains("commit unknown"), "{screen}");
    // The rest is in report.json, and each diagram in a document of its own.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["verdict"], "all hold");
    assert_eq!(json["search"], "depth-first, reduced: requests, por");
    assert!(json["findings"][0]["contract"].is_string());
    // The zoo's example counterexample is drawn inline, for a code host to render.
    assert!(!mermaid_blocks(&md).is_empty(), "no drawn counterexample");
    names_the_contract_in_every_format(&out);
    // The page at 1,280 px, every counterexample of the zoo opened: nothing scrolls
    // sideways and drawn text is at least 11 px.
    if let Some(browser) = common::browser::chromium() {
        let profile = out.join("chromium-profile");
        let m = common::browser::measure(&browser, &profile, &out.join("report.html"), 1280);
        assert!(
            m.scroll_width <= 1280.0,
            "report.html is {} px wide at 1280",
            m.scroll_width
        );
        assert!(m.texts > 100, "{} drawn texts", m.texts);
        assert!(
            m.min_text_px >= 11.0,
            "drawn text as small as {} px",
            m.min_text_px
        );
    }
    let f03 = std::fs::read_dir(out.join("diagrams"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("F03-"))
        .expect("F03's diagram");
    let f03 = std::fs::read_to_string(f03).unwrap();
    assert_eq!(f03.matches("sequenceDiagram").count(), 1);
}

#[test]
fn an_incomplete_verify_is_not_judged_names_its_bound_and_exits_3() {
    let out = out_dir("report-incomplete");
    let args = [
        "verify",
        "--preset",
        "card-retry",
        "--max-states",
        "300",
        "--seeds",
        "3",
        "--no-mutants",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = run(&args);
    let text = stdout(&o);
    assert_eq!(code(&o), 3, "{text}");
    assert!(
        text.starts_with("payhub-verify: not judged (incomplete)"),
        "{text}"
    );
    assert!(!text.contains("NOT OK"), "{text}");
    assert!(!text.contains("PASSED"), "{text}");
    assert!(text.contains("stopped by --max-states 300"), "{text}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let screen: String = md.lines().take(20).collect::<Vec<_>>().join("\n");
    assert!(screen.contains("not judged (incomplete)"), "{screen}");
    assert!(
        screen.contains(&format!("reproduce: `payhub-verify {}`", args.join(" "))),
        "{screen}"
    );
}

/// A drawn counterexample's closing note quotes each broken rule's sentence in English
/// and in the Chinese original, and report.json's coverage rows carry both; report.md
/// draws it as a Mermaid diagram; every format names the contract judged.
#[test]
fn a_drawn_counterexample_quotes_its_rule_in_english_and_in_the_chinese_original() {
    use payhub_model::Rule;
    let out = out_dir("report-rule-languages");
    let _ = std::fs::remove_dir_all(&out);
    let o = run(&[
        "verify",
        "--mutant",
        "cancel_accepted_without_payment",
        "--preset",
        "cancel",
        "--format",
        "html",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    // report.md draws the counterexample in the contract's notation, for a code host.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let blocks = mermaid_blocks(&md);
    assert!(
        blocks
            .iter()
            .any(|b| b.contains("VIOLATED cancel-202-keeps-the-status")
                && b.contains("POST /v1/payments")),
        "no drawn counterexample in:\n{md}"
    );
    names_the_contract_in_every_format(&out);
    // The parts a planted run leaves out say so, and claim nothing.
    assert!(!md.contains("Passed: .") && !md.contains("0 seeds"), "{md}");
    assert!(
        md.contains("Not run: nothing is claimed for the scripts."),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let rule = Rule::Cancel202KeepsStatus;
    let quoted = format!("{}: {} (zh: {})", rule.id(), rule.text(), rule.zh());
    let note = html
        .split("<title>VIOLATED ")
        .nth(1)
        .and_then(|n| n.split("</title>").next())
        .expect("a drawn verdict note");
    assert!(note.contains(&quoted), "{quoted}\nnot in the note:\n{note}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let rows = json["coverage"].as_array().expect("coverage rows");
    assert_eq!(rows.len(), Rule::ALL.len());
    for (row, rule) in rows.iter().zip(Rule::ALL) {
        assert_eq!(row["id"], rule.id());
        assert_eq!(row["text"], rule.text());
        assert_eq!(row["zh"], rule.zh(), "{row}");
    }
}

/// The ```mermaid blocks of a Markdown page, each checked against the
/// `sequenceDiagram` grammar the renderers emit: declared participants, arrows and
/// notes between them, no `;` or `#` (Mermaid's statement and entity syntax).
fn mermaid_blocks(md: &str) -> Vec<String> {
    let blocks: Vec<String> = md
        .split("```mermaid\n")
        .skip(1)
        .map(|b| b.split("```").next().expect("a closed block").to_owned())
        .collect();
    for b in &blocks {
        let mut lines = b.lines();
        assert_eq!(lines.next(), Some("sequenceDiagram"), "{b}");
        let mut ids: Vec<&str> = Vec::new();
        for line in lines {
            let line = line.trim();
            let known = |id: &str, ids: &[&str]| {
                assert!(
                    ids.contains(&id),
                    "undeclared participant {id:?} in {line:?}"
                )
            };
            if let Some(rest) = line.strip_prefix("participant ") {
                let (id, label) = rest.split_once(" as ").expect("participant ID as LABEL");
                assert!(
                    id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{line}"
                );
                assert!(!label.is_empty(), "{line}");
                ids.push(id);
                continue;
            }
            let (head, text) = line
                .split_once(": ")
                .unwrap_or_else(|| panic!("no text: {line:?}"));
            assert!(
                !text.trim().is_empty() && !text.contains([';', '#']),
                "{line:?}"
            );
            if let Some(span) = head.strip_prefix("Note over ") {
                for id in span.split(',') {
                    known(id, &ids);
                }
                continue;
            }
            let arrow = ["-->>", "->>", "-x"]
                .into_iter()
                .find(|a| head.contains(a))
                .unwrap_or_else(|| panic!("neither arrow nor note: {line:?}"));
            let (from, to) = head.split_once(arrow).expect("found");
            known(from, &ids);
            known(to, &ids);
        }
        assert!(!ids.is_empty(), "{b}");
    }
    blocks
}

/// report.md, report.html and report.json of a run in `dir` name the contract judged, by
/// title and version.
fn names_the_contract_in_every_format(dir: &std::path::Path) {
    let version = payhub_model::Contract::VERSION;
    for file in ["report.md", "report.html", "report.json"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(
            text.contains(version),
            "{file} lacks the contract's version"
        );
        assert!(
            text.contains(payhub_model::Contract::TITLE_ZH),
            "{file} lacks the contract's title"
        );
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["header"]["contract"]["version"], version);
}
