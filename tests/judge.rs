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
        .filter(|p| !(p.wire_only() && p.patterns().is_some_and(|w| w.assumes_complete_log)))
        .count();
    // Then liveness, judged from the stream's resolution facts.
    assert_eq!(props.len(), listed + 1);
    let liveness = props.last().unwrap();
    assert_eq!(liveness["name"], payhub_properties::liveness::NAME);
    assert_eq!(liveness["status"], "holds", "{liveness}");
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

/// The start of seed 3's stream, while its orders are still being submitted (nothing
/// answered yet), then only the clock moving to `to_ms`: its status is the liveness
/// property's verdict over it, with `judge`'s exit code.
fn liveness_of_a_stream_left_unknown_until(name: &str, to_ms: u64) -> (serde_json::Value, i32) {
    liveness_of_a_stream_without(name, to_ms, &[])
}

/// [`liveness_of_a_stream_left_unknown_until`], without the events of the kinds `without`.
fn liveness_of_a_stream_without(
    name: &str,
    to_ms: u64,
    without: &[&str],
) -> (serde_json::Value, i32) {
    verdict_of_a_stream_without(payhub_properties::liveness::NAME, name, to_ms, without)
}

/// Property `property`'s verdict over [`liveness_of_a_stream_without`]'s stream.
fn verdict_of_a_stream_without(
    property: &str,
    name: &str,
    to_ms: u64,
    without: &[&str],
) -> (serde_json::Value, i32) {
    let events = stdout(&run(&["replay", "--seed", "3", "--format", "events"]));
    let head: Vec<&str> = events
        .lines()
        .take_while(|l| l.starts_with("{\"at\":0,"))
        .filter(|l| {
            !without
                .iter()
                .any(|k| l.contains(&format!("\"kind\":\"{k}\"")))
        })
        .collect();
    assert!(
        head.iter()
            .any(|l| l.contains("\"order_shown\"") && l.contains("submitting")),
        "{head:?}"
    );
    let stream = format!(
        "{}\n{{\"at\":{to_ms},\"kind\":\"clock\",\"to\":{to_ms}}}\n",
        head.join("\n")
    );
    let file = temp(name, &stream);
    let o = run(&["judge", file.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let liveness = v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == property)
        .expect("the property's verdict")
        .clone();
    (liveness, code(&o))
}

/// Liveness from a recorded stream: a submission still unknown more than the window (24 h
/// and an hour) after it became unknown is a violation (exit 1); the same stream ending
/// two hours in is not judged yet, never a pass.
#[test]
fn judge_finds_a_submission_unknown_past_the_window_and_does_not_pass_one_cut_short() {
    let hour = 3_600_000;
    let (late, code_late) = liveness_of_a_stream_left_unknown_until("unknown-26h.jsonl", 26 * hour);
    assert_eq!(late["status"], "violated", "{late}");
    assert_eq!(code_late, 1);
    let detail = late["detail"].as_str().unwrap();
    assert!(
        detail.contains("ORDER-1 is still submitting from 0s to the stream's end at 1d2h"),
        "{detail}"
    );
    // Its witness names the order, typed, for the diagrams to draw.
    assert_eq!(
        late["named"]["orders"],
        serde_json::json!(["ORDER-1"]),
        "{late}"
    );
    let (early, code_early) = liveness_of_a_stream_left_unknown_until("unknown-2h.jsonl", 2 * hour);
    assert_eq!(early["status"], "cannot_judge", "{early}");
    assert!(
        early["detail"].as_str().unwrap().contains("not judged yet"),
        "{early}"
    );
    assert_ne!(code_early, 1);
}

/// SCHED-01 and RES-01 over a recorded stream: a query schedule or an unfinished charge
/// whose window runs past the stream's end is not judged yet, never "holds"; a charge left
/// unfinished with no query upstream for 24 hours before the end is a violation.
#[test]
fn windows_open_at_the_stream_end_are_not_judged_yet_and_overdue_ones_violate() {
    let hour = 3_600_000;
    for property in [
        "client-queries-until-24-hours",
        "platform-verifies-unknown-results-within-its-window",
    ] {
        let (v, code) = verdict_of_a_stream_without(property, "open-2h.jsonl", 2 * hour, &[]);
        assert_eq!(v["status"], "cannot_judge", "{v}");
        let detail = v["detail"].as_str().unwrap();
        assert!(detail.starts_with("not judged yet: "), "{detail}");
        assert_ne!(code, 1);
    }
    let verifies = "platform-verifies-unknown-results-within-its-window";
    let (v, code) = verdict_of_a_stream_without(verifies, "overdue-26h.jsonl", 26 * hour, &[]);
    assert_eq!(v["status"], "violated", "{v}");
    assert!(
        v["detail"].as_str().unwrap().contains(
            "att_001 was unfinished from 0s to the stream's end at 1d2h with no query upstream"
        ),
        "{v}"
    );
    assert_eq!(code, 1);
}

/// Seed 1's stream up to the merchant's database holding ORDER-1 pending confirmation
/// (its Payment in manual_review at 1h, att_003 queried then), then `more`; each named
/// property's verdict, as JSON.
fn manual_review_stream(name: &str, more: &[String]) -> Vec<(String, serde_json::Value)> {
    let events = stdout(&run(&["replay", "--seed", "1", "--format", "events"]));
    let mut lines: Vec<String> = Vec::new();
    for l in events.lines() {
        lines.push(l.to_owned());
        if l.contains("\"order_shown\"") && l.contains("\"pending_confirmation\"") {
            break;
        }
    }
    let last = lines.last().unwrap();
    assert!(last.contains("\"at\":3640000,"), "{last}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("\"resolution\":\"manual_review\"")),
        "the premise: a Payment in manual_review"
    );
    lines.extend(more.iter().cloned());
    let file = temp(name, &(lines.join("\n") + "\n"));
    let o = run(&["judge", file.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let all = v["properties"].as_array().unwrap().iter();
    all.map(|p| (p["name"].as_str().unwrap().to_owned(), p.clone()))
        .collect()
}

fn named<'a>(all: &'a [(String, serde_json::Value)], name: &str) -> &'a serde_json::Value {
    &all.iter().find(|(n, _)| n == name).expect("listed").1
}

/// SCHED-01: a Payment in manual_review is still processing, so its client's schedule
/// runs on; RES-03: under manual_review the platform queries at least once a day; RES-01:
/// a new attempt after the Payment left manual_review is in the automatic window again.
#[test]
fn manual_review_keeps_the_schedule_open_and_its_queries_due() {
    let at_1h = manual_review_stream("mr-1h.jsonl", &[]);
    let schedule = named(&at_1h, "client-queries-until-24-hours");
    assert_eq!(schedule["status"], "cannot_judge", "{schedule}");
    assert!(
        schedule["detail"]
            .as_str()
            .unwrap()
            .contains("not final in its database"),
        "{schedule}"
    );
    let clock = |ms: u64| format!("{{\"at\":{ms},\"kind\":\"clock\",\"to\":{ms}}}");
    let day = 86_400_000;
    let late = manual_review_stream("mr-late.jsonl", &[clock(3_640_000 + day + 1)]);
    let requery = named(&late, "platform-requeries-manual-review-every-24-hours");
    assert_eq!(requery["status"], "violated", "{requery}");
    assert!(
        requery["detail"]
            .as_str()
            .unwrap()
            .contains("att_003 stayed in manual_review"),
        "{requery}"
    );
    let on_time = manual_review_stream("mr-on-time.jsonl", &[clock(3_640_000 + day - 1)]);
    let requery = named(&on_time, "platform-requeries-manual-review-every-24-hours");
    assert_eq!(requery["status"], "holds", "{requery}");
    // The card failed, and a new card's attempt started: the Payment is known again.
    let stored = |at: u64, status: &str, attempts: &str, failure: &str, version: u32| {
        format!(
            "{{\"at\":{at},\"kind\":\"payment_stored\",\"payment\":\"pay_demo_003\",\"stored\":{{\"merchant\":\"merchant_1\",\"environment\":\"live\",\"merchant_order_no\":\"ORDER-1\",\"status\":\"{status}\",\"resolution\":\"known\",\"expires_at\":86425000,\"attempts\":[{attempts}],\"failure_attempt\":{failure},\"version\":{version},\"fee_rate_bps\":290}}}}"
        )
    };
    let attempt = |at: u64, id: &str, status: &str, sent: u64| {
        format!(
            "{{\"at\":{at},\"kind\":\"attempt_stored\",\"attempt\":\"{id}\",\"payment\":\"pay_demo_003\",\"stored\":{{\"status\":\"{status}\",\"sent_at\":{sent}}}}}"
        )
    };
    let retried = manual_review_stream(
        "mr-retried.jsonl",
        &[
            attempt(4_000_000, "att_003", "failed", 0),
            stored(4_000_000, "failed", "\"att_003\"", "\"att_003\"", 4),
            stored(
                4_100_000,
                "processing",
                "\"att_003\",\"att_005\"",
                "null",
                5,
            ),
            attempt(4_100_000, "att_005", "processing", 4_100_000),
            clock(4_100_000 + day + 1),
        ],
    );
    let verifies = named(
        &retried,
        "platform-verifies-unknown-results-within-its-window",
    );
    assert_eq!(verifies["status"], "violated", "{verifies}");
    assert!(
        verifies["detail"]
            .as_str()
            .unwrap()
            .contains("att_005 was unfinished"),
        "{verifies}"
    );
}

/// A stream without the platform's own record (what tells a violation from a documented
/// gap: the Payment's latest version, its webhooks) is not judged for liveness, even with
/// a submission unknown past the window.
#[test]
fn judge_does_not_judge_liveness_without_the_platforms_record() {
    let (v, code) = liveness_of_a_stream_without(
        "unknown-26h-no-platform.jsonl",
        26 * 3_600_000,
        &["handled", "answered", "payment_stored", "webhook_emitted"],
    );
    assert_eq!(v["status"], "cannot_judge", "{v}");
    assert!(
        v["missing"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["evidence"] == "platform")),
        "{v}"
    );
    assert_ne!(code, 1);
}

/// `text` with its last line cut in half and no end of line after it, as a tape is left
/// when the disk fills mid-write; and the number of the cut line.
fn torn(text: &str) -> (String, usize) {
    let body = text.trim_end_matches('\n');
    let last_start = body.rfind('\n').map_or(0, |i| i + 1);
    let last = &body[last_start..];
    let cut = format!("{}{}", &body[..last_start], &last[..last.len() / 2]);
    (cut, body.lines().count())
}

#[test]
fn a_torn_last_line_is_judged_up_to_the_tear_and_incomplete_as_check_log_says() {
    let events = stdout(&run(&["replay", "--seed", "3", "--format", "events"]));
    let (cut, n) = torn(&events);
    let file = temp("torn-pass.jsonl", &cut);
    let path = file.to_str().unwrap();
    let o = run(&["judge", path]);
    let out = stdout(&o);
    let err = stderr(&o);
    assert_eq!(code(&o), 3, "{out}\n{err}");
    let line = format!("{path}:{n}: cut off");
    assert!(
        out.contains(&format!("INCOMPLETE: judged up to the line before {line}")),
        "{out}"
    );
    assert!(err.contains("incomplete") && err.contains(&line), "{err}");
    assert!(!out.contains("VIOLATED"), "{out}");
    // The JSON says where it is cut too.
    let o = run(&["judge", path, "--format", "json"]);
    assert_eq!(code(&o), 3);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["incomplete"].as_str().unwrap().contains(&line), "{v}");
    // check-log on the same file: incomplete too, naming the same line.
    let o = run(&["check-log", path]);
    assert_eq!(code(&o), 3, "{}", stdout(&o));
    assert!(
        stdout(&o).contains(&format!("skipped line {n}: cut off")),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_violation_before_the_tear_is_still_a_violation() {
    let args = [
        "replay",
        "--seed",
        "0",
        "--policy",
        "new_order_no_after_timeout",
    ];
    let events = stdout(&run(&[&args[..], &["--format", "events"]].concat()));
    let (cut, _) = torn(&events);
    let file = temp("torn-violated.jsonl", &cut);
    let o = run(&["judge", file.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("INCOMPLETE"), "{}", stdout(&o));
    let o = run(&["check-log", file.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
}

#[test]
fn an_unreadable_line_that_is_not_the_last_is_still_bad_input() {
    let events = stdout(&run(&["replay", "--seed", "3", "--format", "events"]));
    let mut lines: Vec<&str> = events.lines().collect();
    lines[2] = "{\"at\":";
    let file = temp("torn-middle.jsonl", &(lines.join("\n") + "\n"));
    let o = run(&["judge", file.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains(":3: not an event"), "{}", stderr(&o));
}
