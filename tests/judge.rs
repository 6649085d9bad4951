//! `judge`: a recorded event stream (`replay --format events`) judged with no world
//! behind it gives the verdict `replay` gave for the same run, with the same exit code.

mod common;
use common::{code, run, stderr, stdout, temp};

/// The closing verdict line `replay` prints for a run, and its exit code.
fn replayed(args: &[&str]) -> (String, i32) {
    let o = run(&[&["replay"], args].concat());
    let out = stdout(&o);
    let last = out.lines().last().expect("a verdict line").to_owned();
    (last, code(&o))
}

/// Judges the events of the same run.
fn judged(name: &str, args: &[&str]) -> (String, i32) {
    let events = run(&[&["replay"], args, &["--format", "events"]].concat());
    let jsonl = stdout(&events);
    assert!(jsonl.lines().count() > 10, "{jsonl}");
    let file = temp(name, &jsonl);
    let o = run(&["judge", file.to_str().unwrap()]);
    let out = stdout(&o);
    (
        out.lines().last().expect("a verdict line").to_owned(),
        code(&o),
    )
}

#[test]
fn judge_gives_replays_verdict_for_passing_and_violating_runs() {
    let runs: &[&[&str]] = &[
        &["--seed", "3"],
        &["--seed", "11"],
        &["--seed", "0", "--policy", "new_order_no_after_timeout"],
        &["--seed", "1", "--policy", "key_regenerated_on_retry"],
        &["--seed", "2", "--policy", "poll_too_fast"],
    ];
    let mut violated = 0;
    for (i, args) in runs.iter().enumerate() {
        let (replay_line, replay_code) = replayed(args);
        let (judge_line, judge_code) = judged(&format!("run-{i}.jsonl"), args);
        assert_eq!(judge_code, replay_code, "{args:?}");
        if replay_code == 1 {
            violated += 1;
            assert!(replay_line.starts_with("VIOLATED "), "{replay_line}");
            assert_eq!(judge_line, replay_line, "{args:?}");
        } else {
            assert!(
                judge_line.starts_with("no property violated"),
                "{judge_line}"
            );
        }
    }
    assert!(
        violated >= 1,
        "no violating run: the comparison judged nothing wrong"
    );
}

#[test]
fn judge_json_lists_every_property_with_its_rules() {
    let events = run(&["replay", "--seed", "3", "--format", "events"]);
    let file = temp("seed-3.jsonl", &stdout(&events));
    let o = run(&["judge", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let props = v["properties"].as_array().unwrap();
    // The wire properties that assume a complete log are listed by check-log with
    // --complete-log only.
    let listed = payhub_properties::PROPERTIES
        .iter()
        .filter(|p| !p.patterns().is_some_and(|w| w.assumes_complete_log))
        .count();
    assert_eq!(props.len(), listed);
    assert!(
        props
            .iter()
            .all(|p| p["rules"].as_array().is_some_and(|r| !r.is_empty()))
    );
    assert!(props.iter().any(|p| p["status"] == "reached"));
    assert!(v["events"].as_u64().unwrap() > 10);
}

#[test]
fn judge_rejects_what_is_not_an_event_stream() {
    for (name, bytes, says) in [
        ("empty.jsonl", &b""[..], "no events"),
        ("blank.jsonl", &b"\n\n  \n"[..], "no events"),
        (
            "garbage.jsonl",
            &b"not json\n"[..],
            "garbage.jsonl:1: not an event",
        ),
        ("binary.jsonl", &b"\xff\xfe\x00\x01"[..], ":1: not UTF-8"),
        (
            "wrong.jsonl",
            &b"{\"at\":0,\"kind\":\"teleported\"}\n"[..],
            ":1: not an event",
        ),
    ] {
        let file = temp(name, bytes);
        let o = run(&["judge", file.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{name}");
        let err = stderr(&o);
        assert!(err.contains(says), "{name}: {err}");
    }
    let o = run(&["judge", "/nonexistent/run.jsonl"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("cannot read"));
}
