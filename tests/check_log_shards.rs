//! `check-log` by partitions: on a generated log of seven merchants with two planted
//! violations (a Payment shown with another amount, in two merchants), the JSON verdict
//! is the same, byte for byte, on one thread and on several; four shards
//! (`--shard I/4`) joined by `payhub-verify merge` give it too; and the CI-matrix recipe
//! of docs/ci.md runs with local processes standing in for its machines.

#![cfg(unix)]

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A generated access log of seven merchants (`--generate-merchants 7`), in which the
/// query answers of orders 30 and 64 show the Payment with another amount (ATTEMPT-06).
fn planted_log(dir: &Path) -> PathBuf {
    let o = run(&[
        "check-log",
        "--generate",
        "3000",
        "--generate-merchants",
        "7",
    ]);
    assert_eq!(code(&o), 0);
    let mut planted = 0;
    let lines: Vec<String> = stdout(&o)
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            let query = v["method"] == "GET";
            let order = v["response_body"].as_str().unwrap_or_default().to_owned();
            if query && (order.contains("\"ORDER-30\"") || order.contains("\"ORDER-64\"")) {
                let amount = |n: u64| format!("\"amount\":{n}");
                let was = 1000 + if order.contains("ORDER-30\"") { 30 } else { 64 };
                v["response_body"] = Value::from(order.replace(&amount(was), &amount(was + 1)));
                planted += 1;
            }
            v.to_string()
        })
        .collect();
    assert_eq!(planted, 2);
    let path = dir.join("access.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("payhub-shards-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `check-log --format json` of `log` with `extra` flags: its output and exit code.
fn judged(log: &Path, extra: &[&str]) -> (String, i32) {
    let o = run(&[
        &["check-log", "--format", "json"],
        extra,
        &[log.to_str().unwrap()],
    ]
    .concat());
    no_panic(&o);
    (stdout(&o), code(&o))
}

#[test]
fn check_log_gives_the_same_verdict_on_any_number_of_threads_and_in_four_shards_merged() {
    let dir = scratch("threads");
    let log = planted_log(&dir);
    let (one, exit) = judged(&log, &["--threads", "1"]);
    assert_eq!(exit, 1, "{one}");
    let v: Value = serde_json::from_str(&one).unwrap();
    let file = &v["files"][0];
    let amount = file["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "payments-keep-their-fee-snapshot")
        .unwrap();
    assert_eq!(amount["status"], "violated", "{amount}");
    assert!(
        file["assumptions"][0]
            .as_str()
            .unwrap()
            .starts_with("7 API keys"),
        "{}",
        file["assumptions"]
    );
    for threads in ["2", "3", "8"] {
        let (many, exit) = judged(&log, &["--threads", threads]);
        assert_eq!(exit, 1);
        assert!(many == one, "--threads {threads} differs from one thread's");
    }

    let mut shards = Vec::new();
    let mut partitions = 0;
    for i in 0..4 {
        let (out, exit) = judged(&log, &["--shard", &format!("{i}/4")]);
        assert!(exit == 0 || exit == 1, "shard {i}: exit {exit}");
        let v: Value = serde_json::from_str(&out).unwrap();
        partitions += v["files"][0]["shard"]["partitions"].as_u64().unwrap();
        let path = dir.join(format!("shard-{i}.json"));
        std::fs::write(&path, out).unwrap();
        shards.push(path.display().to_string());
    }
    assert_eq!(partitions, 7, "every merchant in one shard");
    let merged = run(&[
        &["merge"],
        &shards.iter().map(String::as_str).collect::<Vec<_>>()[..],
    ]
    .concat());
    assert_eq!(code(&merged), 1, "{}", stderr(&merged));
    assert!(
        stdout(&merged).trim_end() == one.trim_end(),
        "merged differs"
    );

    // A shard missing, or given twice, is refused.
    let three = run(&["merge", &shards[0], &shards[1], &shards[2]]);
    assert_eq!(code(&three), 2);
    assert!(
        stderr(&three).contains("shard 3/4 is missing"),
        "{}",
        stderr(&three)
    );
    let twice = run(&["merge", &shards[0], &shards[1], &shards[2], &shards[2]]);
    assert_eq!(code(&twice), 2);
    assert!(stderr(&twice).contains("given twice"), "{}", stderr(&twice));
    // A shard of another log under the same name (one byte more) is refused.
    let mut other = std::fs::read(&log).unwrap();
    other.push(b'\n');
    std::fs::write(&log, other).unwrap();
    let (out, _) = judged(&log, &["--shard", "3/4"]);
    let foreign = dir.join("shard-3-other.json");
    std::fs::write(&foreign, out).unwrap();
    let mixed = run(&[
        "merge",
        &shards[0],
        &shards[1],
        &shards[2],
        foreign.to_str().unwrap(),
    ]);
    assert_eq!(code(&mixed), 2, "{}", stdout(&mixed));
    assert!(stderr(&mixed).contains("another log"), "{}", stderr(&mixed));

    // An event stream is the platform's as much as the merchants': not split.
    let events = dir.join("events.jsonl");
    let o = run(&["replay", "--seed", "1", "--format", "events"]);
    std::fs::write(&events, stdout(&o)).unwrap();
    let sharded = run(&["check-log", "--shard", "0/2", events.to_str().unwrap()]);
    assert_eq!(code(&sharded), 2);
    assert!(
        stderr(&sharded).contains("judged whole"),
        "{}",
        stderr(&sharded)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `run:` steps of each job of the recipe after `marker` in docs/ci.md, in order (the
/// `cargo install` lines left out: the built binary is on PATH).
fn recipe_steps(marker: &str) -> Vec<(String, Vec<String>)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let yaml = &doc[doc.find(marker).expect("the recipe's marker")..];
    let yaml = &yaml[yaml.find("```yaml").unwrap() + 7..];
    let yaml = &yaml[..yaml.find("```").unwrap()];
    let lines: Vec<&str> = yaml.lines().collect();
    let mut jobs: Vec<(String, Vec<String>)> = Vec::new();
    let mut i = lines.iter().position(|l| *l == "jobs:").expect("jobs:");
    while i < lines.len() {
        let l = lines[i];
        let indent = l.len() - l.trim_start().len();
        if indent == 2 && l.trim_end().ends_with(':') {
            jobs.push((l.trim().trim_end_matches(':').to_owned(), Vec::new()));
        }
        i += 1;
        if l.trim() == "run: |" {
            let mut body = String::new();
            while i < lines.len() {
                let m = lines[i];
                if !m.trim().is_empty() && m.len() - m.trim_start().len() <= indent {
                    break;
                }
                let line = m.get(indent + 2..).unwrap_or("");
                if !line.trim_start().starts_with("cargo install") {
                    body = body + line + "\n";
                }
                i += 1;
            }
            jobs.last_mut().unwrap().1.push(body);
        }
    }
    jobs
}

/// Runs `script` with bash -e in `dir`, the built binary first on PATH: its exit code.
fn step(dir: &Path, script: &str) -> i32 {
    let bin = Path::new(env!("CARGO_BIN_EXE_payhub-verify"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("set -eo pipefail\n{script}"))
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    o.status.code().unwrap()
}

#[test]
fn the_sharded_ci_recipe_runs_with_local_processes_for_machines() {
    let jobs = recipe_steps("<!-- shards-workflow -->");
    let names: Vec<&str> = jobs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["shard", "merge"]);
    let dir = scratch("recipe");
    let log = planted_log(&dir);
    // Each machine of the matrix: a process of its own over the same log.
    for shard in 0..4 {
        for body in &jobs[0].1 {
            let body = body.replace("${{ matrix.shard }}", &shard.to_string());
            assert_eq!(step(&dir, &body), 0, "shard {shard}: {body}");
        }
    }
    // The merge job: exit 1, the planted violation, and the whole log's verdict.
    let merge = jobs[1].1.join("\n");
    assert_eq!(step(&dir, &merge), 1, "{merge}");
    let merged = std::fs::read_to_string(dir.join("verdict.json")).unwrap();
    // The whole log on one machine, named as the recipe names it.
    assert!(log.ends_with("access.jsonl"));
    let one = "payhub-verify check-log access.jsonl --format json > whole.json";
    assert_eq!(step(&dir, one), 1);
    let whole = std::fs::read_to_string(dir.join("whole.json")).unwrap();
    assert!(
        merged.trim_end() == whole.trim_end(),
        "the merge differs from the whole log's verdict"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The reader parses on `--threads` workers: entries that do not read, a line cut off at
/// the end, a HAR's entries, all come out as one thread gives them, byte for byte.
#[test]
fn parsing_on_several_threads_gives_what_one_thread_gives_with_bad_entries() {
    let dir = scratch("parse");
    let lines = stdout(&run(&[
        "check-log",
        "--generate",
        "1200",
        "--generate-merchants",
        "3",
    ]));
    let mut access: Vec<String> = lines.lines().map(str::to_owned).collect();
    for n in [5, 300, 301, 777] {
        access[n] = format!("{{\"time\": \"yesterday\", {}", &access[n][1..]);
    }
    access.insert(900, "not json".to_owned());
    let mut text = access.join("\n") + "\n";
    text.push_str("{\"time\":\"2026-12-09T00:00:00.000Z\",\"meth");
    let jsonl = dir.join("bad.jsonl");
    std::fs::write(&jsonl, text).unwrap();

    let har = stdout(&run(&[
        "check-log",
        "--generate",
        "1200",
        "--generate-merchants",
        "3",
        "--generate-format",
        "har",
    ]));
    let mut bad = 0;
    let har = har
        .split("\"startedDateTime\":")
        .enumerate()
        .map(|(i, part)| {
            if i % 250 == 7 {
                bad += 1;
                format!("\"startedDateTime\":\"not a date\",\"was\":{part}")
            } else if i == 0 {
                part.to_owned()
            } else {
                format!("\"startedDateTime\":{part}")
            }
        })
        .collect::<String>();
    assert!(bad >= 4);
    let har_path = dir.join("bad.har");
    std::fs::write(&har_path, &har).unwrap();

    // A HAR whose JSON breaks past the first batches: the same refusal on any threads.
    let broken = dir.join("broken.har");
    std::fs::write(&broken, &har[..har.len() * 2 / 3]).unwrap();
    let refusal = |threads: &str| {
        let o = run(&["check-log", "--threads", threads, broken.to_str().unwrap()]);
        no_panic(&o);
        (code(&o), stderr(&o))
    };
    let (exit, why) = refusal("1");
    assert_eq!(exit, 2, "{why}");
    assert!(why.contains("not a HAR"), "{why}");
    assert_eq!(refusal("3"), (exit, why));

    for log in [&jsonl, &har_path] {
        let (one, exit) = judged(log, &["--threads", "1"]);
        assert_eq!(exit, 3, "{one}");
        let v: Value = serde_json::from_str(&one).unwrap();
        let skipped = v["files"][0]["unreadable"].as_u64().unwrap();
        assert!(skipped >= 4, "{one}");
        for threads in ["2", "3"] {
            let (many, exit) = judged(log, &["--threads", threads]);
            assert_eq!(exit, 3);
            assert!(
                many == one,
                "{}: --threads {threads} differs",
                log.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
