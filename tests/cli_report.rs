//! The report reads in a minute: the verdict, version, commit and date on the first
//! screen, under 30 KB for a passing run; an incomplete run says so the one way every
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
    assert!(md.len() < 30_000, "report.md is {} bytes", md.len());
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
/// and in the Chinese original, and report.json's coverage rows carry both.
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
