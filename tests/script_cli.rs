//! `payhub-verify run` and `payhub-verify scenario` from the outside: what they print
//! and how they exit (0 all hold, 1 something failed, 2 bad input).

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary in the repository: (exit code, stdout, stderr).
fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_payhub-verify"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn scenario_s3_prints_201_for_the_first_request_and_409_idempotency_conflict_for_the_second() {
    let (code, out, err) = cli(&["scenario", "S3"]);
    assert_eq!(code, 0, "{out}{err}");
    let arrivals: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("platform → merchant-0") && l.contains("POST /v1/payments"))
        .collect();
    assert_eq!(arrivals.len(), 2, "{out}");
    assert!(arrivals[0].contains(r#""amount":10000"#), "{}", arrivals[0]);
    assert!(arrivals[0].contains("→ 201 {"), "{}", arrivals[0]);
    assert!(arrivals[1].contains(r#""amount":12000"#), "{}", arrivals[1]);
    assert!(
        arrivals[1].contains(r#"→ 409 {"error":{"code":"idempotency_conflict""#),
        "{}",
        arrivals[1]
    );
    assert!(
        out.contains("title: S3 · Same key, different amount · AC-016"),
        "{out}"
    );
    assert!(out.lines().last().unwrap().starts_with("PASSED"), "{out}");
    // The same in JSON: the exchanges in order.
    let (code, json, _) = cli(&["scenario", "s3", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let outcomes: Vec<&str> = v[0]["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["201", "409 idempotency_conflict"]);
    assert_eq!(v[0]["passed"], true);
}

#[test]
fn scenario_list_names_every_scenario_with_its_ac_number() {
    let (code, out, _) = cli(&["scenario", "--list"]);
    assert_eq!(code, 0);
    let expect = [
        ("S01", "AC-014"),
        ("S02", "AC-069"),
        ("S03", "AC-016"),
        ("S04", "AC-017"),
        ("S04b", "AC-017"),
        ("S05", "AC-015"),
        ("S05b", "AC-015"),
        ("S06", "AC-014"),
        ("S07", "AC-018"),
        ("S08", "AC-027"),
        ("S08b", "AC-027"),
        ("S09", "AC-026"),
        ("S10", "no AC"),
        ("S11", "AC-033"),
        ("S12", "AC-029"),
        ("S13", "no AC"),
    ];
    for (name, ac) in expect {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} is not listed:\n{out}"));
        assert!(line.contains(ac), "{line}");
    }
    let f1 = out.lines().find(|l| l.starts_with("F01 ")).expect("F01");
    assert!(f1.contains("assumes A-EXPIRES-AT"), "{f1}");
    let f2 = out.lines().find(|l| l.starts_with("F02 ")).expect("F02");
    assert!(f2.contains("assumes A-CKO-CONFLICT"), "{f2}");
}

#[test]
fn run_of_every_scenario_passes() {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .flatten()
        .map(|e| format!("scenarios/{}", e.file_name().to_str().unwrap()))
        .filter(|f| f.ends_with(".pha"))
        .collect();
    files.sort();
    let mut args = vec!["run"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = cli(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("{0} of {0} scripts passed", files.len())),
        "{out}"
    );
}

#[test]
fn scenario_formats_json_and_mermaid() {
    let (code, json, _) = cli(&["scenario", "S7", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(
        v[0]["title"],
        "S7 · New card information sent on retry · AC-018"
    );
    assert!(v[0]["events"].as_array().is_some_and(|e| !e.is_empty()));
    let (code, mermaid, _) = cli(&["scenario", "S7", "--format", "mermaid"]);
    assert_eq!(code, 0);
    assert!(mermaid.starts_with("%% script: scenarios/S07"), "{mermaid}");
    assert!(mermaid.contains("sequenceDiagram"));
    assert!(mermaid.contains("-x"), "the lost response is drawn as lost");
}

#[test]
fn an_unknown_scenario_is_bad_input() {
    let (code, _, err) = cli(&["scenario", "S99"]);
    assert_eq!(code, 2);
    assert!(err.contains("no scenario 'S99'"), "{err}");
    assert!(err.contains("S13"), "lists what there is: {err}");
}

#[test]
fn a_failed_expectation_exits_1_naming_its_line_and_column() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("script_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wrong.pha");
    std::fs::write(
        &path,
        "A: POST /v1/payments  Idempotency-Key: K  {\"merchant_order_no\":\"O\",\"amount\":1,\"currency\":\"USD\",\"card\":\"A\"}\nupstream: decline\n  expect: 201 status=succeeded\n",
    )
    .unwrap();
    let (code, out, err) = cli(&["run", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains(&format!("{}:3:3: ", path.display())), "{err}");
    assert!(
        err.contains("status is failed, expected succeeded"),
        "{err}"
    );
    assert!(out.contains("=> FAILED: status is failed"), "{out}");
}
