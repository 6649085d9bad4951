//! Malformed scripts: each error gets one `file:line:column: what is wrong` (every error
//! of a file in one run, up to 20), exit code 2, and nothing runs (not even the
//! well-formed scripts given with it).

use payhub_properties::{Kind, PROPERTIES};
use payhub_sim::script::{self, ScriptError};
use std::path::PathBuf;
use std::process::Command;

const CREATE: &str = r#"A: POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"A"}"#;

fn always() -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .filter(|p| p.over_facts() && p.kind() == Kind::Always)
        .map(|p| p.name)
        .collect()
}

fn parse_error(text: &[u8]) -> ScriptError {
    match script::parse("bad.pha", text, &always()) {
        Ok(_) => panic!("parsed: {}", String::from_utf8_lossy(text)),
        Err(e) => e,
    }
}

/// Writes `bytes` to a file of its own under the test's temporary folder.
fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("script_errors");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Runs `payhub-verify run FILES…`: (exit code, stdout, stderr).
fn cli(files: &[&PathBuf]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_payhub-verify"))
        .arg("run")
        .args(files)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The CLI prints exactly `path:line:column: …` for the file and exits 2 without output.
fn assert_cli_rejects(name: &str, bytes: &[u8], line: u32, column: u32, words: &str) {
    let path = file(name, bytes);
    let (code, stdout, stderr) = cli(&[&path]);
    assert_eq!(code, 2, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.is_empty(), "nothing runs: {stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one error: {stderr}");
    let prefix = format!("{}:{line}:{column}: ", path.display());
    assert!(lines[0].starts_with(&prefix), "{} !~ {prefix}", lines[0]);
    assert!(lines[0].contains(words), "{} !~ {words}", lines[0]);
}

#[test]
fn unknown_verb_is_reported_at_its_column() {
    let text = format!("# unknown verb\n{CREATE}\n  frobnicate the payment\n");
    let e = parse_error(text.as_bytes());
    assert_eq!((e.line, e.column), (3, 3));
    assert!(e.message.contains("unknown statement 'frobnicate'"), "{e}");
    assert_eq!(
        e.to_string(),
        format!("bad.pha:3:3: {}", e.message),
        "file:line:column: message"
    );
    assert_cli_rejects("unknown-verb.pha", text.as_bytes(), 3, 3, "frobnicate");
}

#[test]
fn unknown_net_operation_and_upstream_decision_are_reported() {
    let e = parse_error(format!("{CREATE}\nnet: lose response\n").as_bytes());
    assert_eq!((e.line, e.column), (2, 6));
    let e = parse_error(format!("{CREATE}\nupstream: maybe\n").as_bytes());
    assert_eq!((e.line, e.column), (2, 11));
    assert!(e.message.contains("unknown decision 'maybe'"), "{e}");
}

#[test]
fn bad_json_is_reported_where_the_json_breaks() {
    // The body starts at column 43; serde stops at the missing value after "amount":.
    let text = "A: POST /v1/payments  Idempotency-Key: K  {\"amount\":}\n";
    let e = parse_error(text.as_bytes());
    assert_eq!(e.line, 1);
    assert_eq!(e.column, 53, "{e}");
    assert!(e.message.starts_with("bad JSON body"), "{e}");
    assert_cli_rejects("bad-json.pha", text.as_bytes(), 1, 53, "bad JSON body");
}

#[test]
fn a_body_field_the_endpoint_does_not_have_is_reported_at_the_field() {
    let text = "A: POST /v1/payments  Idempotency-Key: K  {\"amount\":1,\"colour\":\"red\"}\n";
    let e = parse_error(text.as_bytes());
    assert_eq!((e.line, e.column), (1, 55), "{e}");
    assert!(e.message.contains("unknown field 'colour'"), "{e}");
}

#[test]
fn unknown_server_is_reported_with_the_servers_there_are() {
    let text = format!("{CREATE}\nC: GET /v1/payments/pay_demo_001\n");
    let e = parse_error(text.as_bytes());
    assert_eq!((e.line, e.column), (2, 1));
    assert!(
        e.message.contains("unknown server 'C' (servers: A, B)"),
        "{e}"
    );
    assert_cli_rejects(
        "unknown-server.pha",
        text.as_bytes(),
        2,
        1,
        "unknown server 'C'",
    );
}

#[test]
fn expectation_with_a_bad_field_is_reported_at_the_field() {
    let text = format!("{CREATE}\nupstream: approve\nexpect: 201 status=succeeded colour=red\n");
    let e = parse_error(text.as_bytes());
    assert_eq!((e.line, e.column), (3, 30));
    assert!(e.message.contains("unknown field 'colour'"), "{e}");
    assert_cli_rejects(
        "bad-field.pha",
        text.as_bytes(),
        3,
        30,
        "unknown field 'colour'",
    );
}

#[test]
fn expectations_with_bad_values_or_counters_are_reported() {
    let e = parse_error(format!("{CREATE}\nexpect: 201 status=paid\n").as_bytes());
    assert_eq!((e.line, e.column), (2, 20));
    let e = parse_error(format!("{CREATE}\nexpect: 409 rate_limited\n").as_bytes());
    assert!(e.message.contains("rate_limited is a 429 code"), "{e}");
    let e = parse_error(format!("{CREATE}\nexpect ledger: charges(colour=B) = 0\n").as_bytes());
    assert_eq!((e.line, e.column), (2, 24), "{e}");
    assert!(e.message.contains("no filter 'colour'"), "{e}");
    let e = parse_error(b"expect: 200\n");
    assert!(e.message.contains("needs a request line"), "{e}");
    let e = parse_error(format!("{CREATE}\nexpect violation no-such-property\n").as_bytes());
    assert!(e.message.contains("unknown property"), "{e}");
}

#[test]
fn a_file_that_is_not_text_is_reported_at_its_first_bad_byte() {
    let mut bytes = format!("# binary\n{CREATE}\nexp").into_bytes();
    bytes.extend([0xff, 0xfe, 0x00, 0x01]);
    let e = parse_error(&bytes);
    assert_eq!((e.line, e.column), (3, 4));
    assert!(e.message.starts_with("not a text file"), "{e}");
    assert_cli_rejects("binary.pha", &bytes, 3, 4, "not a text file");
    let e = parse_error(b"# nul\n\x00\n");
    assert_eq!((e.line, e.column), (2, 1));
}

#[test]
fn settings_after_the_first_step_and_unknown_settings_are_reported() {
    let e = parse_error(format!("{CREATE}\nuse retention=1d\n").as_bytes());
    assert_eq!((e.line, e.column), (2, 1));
    let e = parse_error(b"use platform=mutant-7\n");
    assert_eq!((e.line, e.column), (1, 5));
    assert!(e.message.contains("unknown platform"), "{e}");
    let e = parse_error(b"use colour=red\n");
    assert!(e.message.contains("unknown setting 'colour'"), "{e}");
    let e = parse_error(b"server A client=no_such_policy\n");
    assert!(e.message.contains("unknown policy"), "{e}");
    let e = parse_error(b"assume A-NOTHING\n");
    assert!(e.message.contains("unknown assumption"), "{e}");
}

#[test]
fn one_malformed_file_stops_every_file_from_running() {
    let good = file(
        "good.pha",
        format!("{CREATE}\nupstream: approve\nexpect: 201\n").as_bytes(),
    );
    let bad = file("bad-among-good.pha", b"A: PUT /v1/payments\n");
    let (code, stdout, stderr) = cli(&[&good, &bad]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty(), "nothing runs: {stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("bad-among-good.pha:1:4: unknown method 'PUT'"),
        "{stderr}"
    );
    // Alone, the good file runs and passes.
    let (code, stdout, _) = cli(&[&good]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("PASSED"), "{stdout}");
}

/// Four typos, one run: each named at its line and column, then how many there are.
#[test]
fn every_error_of_a_file_is_reported_in_one_run() {
    let text = format!(
        "# four typos\n{CREATE}\nacquier u1 approve\ntikc 5s\nA: POST /v1/payments  Idempotency-Key: K  {{\"amount\":}}\nexpect violation no-such-property\n"
    );
    let all = match script::parse_all("bad.pha", text.as_bytes(), &always()) {
        Ok(_) => panic!("parsed"),
        Err(e) => e,
    };
    assert_eq!(all.total, 4, "{all}");
    let at: Vec<(u32, u32)> = all.errors.iter().map(|e| (e.line, e.column)).collect();
    assert_eq!(at, [(3, 1), (4, 1), (5, 53), (6, 18)], "{all}");
    // `parse` keeps the first.
    assert_eq!(parse_error(text.as_bytes()), all.errors[0]);

    let path = file("four-typos.pha", text.as_bytes());
    let (code, stdout, stderr) = cli(&[&path]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "nothing runs: {stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 5, "{stderr}");
    for (line, (l, c)) in lines.iter().zip(at) {
        let prefix = format!("{}:{l}:{c}: ", path.display());
        assert!(line.starts_with(&prefix), "{line} !~ {prefix}");
    }
    assert!(lines[0].contains("did you mean 'acquire'"), "{stderr}");
    assert!(lines[1].contains("did you mean 'tick'"), "{stderr}");
    assert_eq!(lines[4], format!("4 errors in {}", path.display()));
}

/// Past 20 errors the rest are counted, not printed.
#[test]
fn at_most_twenty_errors_of_a_file_are_printed_and_all_are_counted() {
    let text = format!("{CREATE}\n{}", "tikc 5s\n".repeat(25));
    let path = file("many-typos.pha", text.as_bytes());
    let (code, _, stderr) = cli(&[&path]);
    assert_eq!(code, 2, "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 21, "{stderr}");
    assert!(lines[19].starts_with(&format!("{}:21:1: ", path.display())));
    assert_eq!(
        lines[20],
        format!("25 errors in {} (the first 20 shown)", path.display())
    );
}

/// An error that only follows from an earlier one is not reported again: a server whose
/// line is wrong is not then "unknown" at every use, and a request line with an error
/// does not make its expectation "an expectation before any request".
#[test]
fn errors_that_follow_from_an_earlier_error_are_not_repeated() {
    let text = concat!(
        "server C node=0 key=ak_1 client=nonsense db=0\n",
        "C: POST /v1/payments  Idempotency-Key: K  {}\n",
        "expect C: 201\n",
        "A: POST /v1/payments  Idempotency-Key: K  {\"amount\":}\n",
        "expect: 201\n",
    );
    let all = match script::parse_all("bad.pha", text.as_bytes(), &always()) {
        Ok(_) => panic!("parsed"),
        Err(e) => e,
    };
    let lines: Vec<u32> = all.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, [1, 4], "{all}");
    assert_eq!(all.total, 2);
}

/// A repeat is bounded by what it expands to, before anything is allocated: a 9 KB
/// script asking for 900 MB of one key is refused at the repeat, exit 2.
#[test]
fn a_repeat_that_expands_past_the_bound_of_a_script_is_refused_at_the_repeat() {
    let key = "k".repeat(9_000);
    let text = format!(
        "A: POST /v1/payments  Idempotency-Key: \"{key}\"*100000  {{\"merchant_order_no\":\"ORDER-001\",\"amount\":10000,\"currency\":\"USD\",\"card\":\"A\"}}\n"
    );
    assert!(text.len() < 10_000);
    assert_cli_rejects("huge-repeat.pha", text.as_bytes(), 1, 40, "past 16 MiB");
}

/// The repeats of a script count together: many repeats each under the bound cannot add
/// up past it.
#[test]
fn repeats_count_together_against_the_bound() {
    let line = format!(
        "A: POST /v1/payments  Idempotency-Key: \"{}\"*100000  {{\"merchant_order_no\":\"ORDER-001\",\"amount\":10000,\"currency\":\"USD\",\"card\":\"A\"}}\n",
        "k".repeat(100)
    );
    // 10 MB each: the second passes 16 MiB.
    let e = parse_error(line.repeat(3).as_bytes());
    assert_eq!((e.line, e.column), (2, 40), "{e}");
    assert!(e.message.contains("past 16 MiB"), "{e}");
    // Under the bound, the same repeat is read.
    let e = parse_error(format!("{line}nonsense\n").as_bytes());
    assert_eq!(e.line, 2, "{e}");
}
