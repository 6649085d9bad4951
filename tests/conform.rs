//! `payhub-verify conform` against `payhub-verify serve` on free loopback ports: the
//! reference passes a sweep with proxy faults; planted bugs (`serve --mutant`) are found
//! and shrunk, the planted race among them; a target answering a field the profile does
//! not expect, a target that is down and a profile with an unknown key are each one
//! line and exit 2. Bounded: at most a few hundred cases per test, children killed.

mod common;
mod serve_support;

use common::*;
use serde_json::Value;
use serve_support::*;

const PROFILE: &str = "docs/profiles/sandbox.json";
const REAL_PROFILE: &str = "docs/profiles/sandbox-real-clock.json";

fn conform(target: &str, profile: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["conform", "--target", target, "--profile", profile];
    args.extend_from_slice(extra);
    run(&args)
}

fn json(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// `conform --kill-matrix` over `mutants` with `profile` and `seeds`, in JSON: its rows,
/// after checking it ended without a panic and with exit 0.
fn kill_matrix(profile: &str, mutants: &str, seeds: &str) -> Vec<Value> {
    let o = run(&[
        "conform",
        "--profile",
        profile,
        "--kill-matrix",
        "--mutants",
        mutants,
        "--seeds",
        seeds,
        "--format",
        "json",
    ]);
    no_panic(&o);
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    json(&o).as_array().unwrap().clone()
}

#[test]
fn conform_the_reference_sandbox_passes_50_cases_with_proxy_faults() {
    let s = Serve::start("conform-ref", &["--clock", "manual"]);
    let url = format!("http://{}", s.addr);
    let o = conform(
        &url,
        PROFILE,
        &["--seeds", "0..50", "--proxy-faults", "--format", "json"],
    );
    no_panic(&o);
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    let r = json(&o);
    assert_eq!(r["cases_run"], 50);
    assert!(r["requests"].as_u64().unwrap() > 150, "{r}");
    assert_eq!(r["violations"].as_array().unwrap().len(), 0);
    assert_eq!(r["incomplete"].as_array().unwrap().len(), 0);
}

/// The same conform twice against one sandbox (its namespace reset before each case):
/// the same verdicts, the oracle's and those of the registry's properties judging the
/// target, case counts and readings. Nothing of conform's own (hash order, wall clock, its tasks' timing)
/// decides them; the exchanges' times and the race order of requests sent at once (which
/// a witness's answers show) are the target's.
#[test]
fn conform_twice_against_one_sandbox_gives_the_same_verdicts() {
    let s = Serve::start("conform-twice", &["--clock", "manual"]);
    let url = format!("http://{}", s.addr);
    let once = || {
        let args = [
            "--seeds",
            "0..60",
            "--proxy-faults",
            "--keep-going",
            "--format",
            "json",
        ];
        let o = conform(&url, PROFILE, &args);
        assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
        let r = json(&o);
        let properties: Vec<Value> = (r["registry"]["properties"].as_array().unwrap().iter())
            .filter(|p| p["judges"] == "target")
            .map(|p| serde_json::json!([p["name"], p["status"], p["cases"]]))
            .collect();
        let readings: Vec<Value> = (r["readings"].as_array().unwrap().iter())
            .map(|p| {
                let shown = p["shown"].as_array().unwrap().iter();
                serde_json::json!([
                    p["name"],
                    shown.map(|x| [&x["name"], &x["cases"]]).collect::<Vec<_>>()
                ])
            })
            .collect();
        let keep = [
            "cases_run",
            "requests",
            "violations",
            "incomplete",
            "not_run",
            "rules",
        ];
        let mut kept: Vec<Value> = keep.iter().map(|k| r[*k].clone()).collect();
        kept.extend([Value::from(properties), Value::from(readings)]);
        kept
    };
    let first = once();
    assert_eq!(first, once());
    assert_eq!(first[0], 60);
}

#[test]
fn conform_the_other_branches_s4_s5_s8_pass_as_well() {
    let s = Serve::start("conform-b", &["--clock", "manual", "--branches", "b"]);
    let o = conform(
        &format!("http://{}", s.addr),
        PROFILE,
        &["--seeds", "0..40", "--proxy-faults"],
    );
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
}

/// A planted bug is found, shrunk, and printed three ways.
#[test]
fn conform_finds_and_shrinks_a_planted_bug() {
    let s = Serve::start(
        "conform-mut",
        &["--clock", "manual", "--mutant", "amount_not_in_fingerprint"],
    );
    let o = conform(
        &format!("http://{}", s.addr),
        PROFILE,
        &["--seeds", "0..300", "--format", "json"],
    );
    no_panic(&o);
    assert_eq!(code(&o), 1, "{}\n{}", stdout(&o), stderr(&o));
    let r = json(&o);
    let f = &r["violations"][0];
    let shrunk = f["shrunk_requests"].as_u64().unwrap();
    assert!(
        shrunk <= 3 && shrunk <= f["requests"].as_u64().unwrap(),
        "{f}"
    );
    let last = f["exchanges"].as_array().unwrap().last().unwrap();
    assert!(
        last["request"]
            .as_str()
            .unwrap()
            .starts_with("POST /v1/payments"),
        "{last}"
    );
    assert!(
        f["mermaid"]
            .as_str()
            .unwrap()
            .starts_with("sequenceDiagram")
    );
    let script = f["script"].as_str().unwrap();
    assert!(script.contains("use platform=reference"), "{script}");
    // The script is the model's own run of the shrunk case: `run` replays it, passing.
    let file = temp("conform-shrunk.pha", script);
    let replay = run(&["run", file.to_str().unwrap()]);
    assert_eq!(code(&replay), 0, "{}\n{}", stdout(&replay), stderr(&replay));
    let text = conform(
        &format!("http://{}", s.addr),
        PROFILE,
        &["--seeds", "0..300"],
    );
    assert!(
        stdout(&text).contains("the model allows: 409"),
        "{}",
        stdout(&text)
    );
    // The failure names the rules and says which answers the model does explain.
    let t = stdout(&text);
    assert!(
        t.contains("target-answers-as-the-model-allows (rules "),
        "{t}"
    );
    assert!(
        t.contains("answers the model explains, unmarked; !! marks the round"),
        "{t}"
    );
}

/// `--har DIR`: each case as the proxy carried it, judged again by `check-log --side
/// platform` with the same profile: the reference holds, and a planted bug conform's
/// registry finds over the wire is found again from the files alone.
#[test]
fn conform_har_is_judged_again_by_check_log() {
    let temp_dir = |name: &str| {
        let dir = std::env::temp_dir().join(format!("payhub-verify-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    };
    let judge_again = |dir: &std::path::Path, side: &str| {
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
            .collect();
        files.sort();
        assert!(!files.is_empty());
        let mut args = vec!["check-log", "--profile", PROFILE, "--side", side];
        args.extend(files.iter().map(String::as_str));
        args.extend(["--format", "json"]);
        run(&args)
    };
    let s = Serve::start("conform-har", &["--clock", "manual"]);
    let dir = temp_dir("conform-har-ref");
    let o = conform(
        &format!("http://{}", s.addr),
        PROFILE,
        &[
            "--seeds",
            "0..20",
            "--proxy-faults",
            "--har",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 20);
    let again = judge_again(&dir, "platform");
    assert_eq!(code(&again), 0, "{}\n{}", stdout(&again), stderr(&again));
    assert!(stdout(&again).contains("only the platform's properties are judged"));
    let _ = std::fs::remove_dir_all(&dir);

    let s = Serve::start(
        "conform-har-mut",
        &["--clock", "manual", "--mutant", "amount_not_in_fingerprint"],
    );
    let dir = temp_dir("conform-har-mut");
    let o = conform(
        &format!("http://{}", s.addr),
        PROFILE,
        &[
            "--seeds",
            "0..300",
            "--har",
            dir.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&o), 1, "{}\n{}", stdout(&o), stderr(&o));
    let registry: Vec<String> = json(&o)["registry"]["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "violated" && p["judges"] == "target")
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!registry.is_empty(), "{}", stdout(&o));
    let again = judge_again(&dir, "platform");
    assert_eq!(code(&again), 1, "{}\n{}", stdout(&again), stderr(&again));
    let text = stdout(&again);
    for name in &registry {
        assert!(text.contains(&format!("\"{name}\"")), "{name}: {text}");
    }
    // The merchant's side of the same files: conform's requests break its rules on
    // purpose (a new order number after an unknown outcome, …), named as such.
    let merchant = judge_again(&dir, "merchant");
    assert!(stdout(&merchant).contains("only the merchant's properties are judged"));
    assert!(
        !stdout(&merchant).contains(&registry[0]),
        "{}",
        stdout(&merchant)
    );
    let again = run(&[
        "conform",
        "--target",
        &format!("http://{}", s.addr),
        "--profile",
        PROFILE,
        "--seeds",
        "0..1",
        "--har",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&again), 2, "an earlier run's files are refused");
    assert!(stderr(&again).contains("earlier run"), "{}", stderr(&again));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The planted race: two same-key creates that both execute (the key claimed only when
/// the upstream answers), found by concurrent same-key requests while the sandbox's
/// upstream answers 150 ms late.
#[test]
fn conform_finds_the_planted_race_with_concurrent_same_key_creates() {
    let plan = temp(
        "conform-slow.json",
        r#"{"faults":[{"endpoint":"create_payment","probability":1.0,"action":"slow_upstream","ms":150}]}"#,
    );
    let s = Serve::start(
        "conform-race",
        &[
            "--clock",
            "real",
            "--faults",
            plan.to_str().unwrap(),
            "--mutant",
            "key_claimed_after_charge",
        ],
    );
    let o = conform(
        &format!("http://{}", s.addr),
        REAL_PROFILE,
        &[
            "--seeds",
            "0..40",
            "--format",
            "json",
            "--shrink-budget",
            "40",
        ],
    );
    no_panic(&o);
    assert_eq!(code(&o), 1, "{}\n{}", stdout(&o), stderr(&o));
    let f = &json(&o)["violations"][0];
    let round = f["breaking_round"].as_u64().unwrap();
    let at_once: Vec<&Value> = f["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["round"].as_u64() == Some(round))
        .collect();
    assert!(
        at_once.len() >= 2,
        "the breaking round sends requests at once: {f}"
    );
    let key = |e: &Value| {
        let r = e["request"].as_str().unwrap().to_owned();
        r.split("Idempotency-Key: ")
            .nth(1)
            .map(|k| k.split(' ').next().unwrap().to_owned())
    };
    assert_eq!(key(at_once[0]), key(at_once[1]), "{f}");
}

#[test]
fn conform_kill_matrix_over_http_for_a_subset_of_the_zoo() {
    let rows = kill_matrix(
        PROFILE,
        "card_in_fingerprint,scope_without_route,replay_answers_created,fourth_attempt,retention_expires_early",
        "0..300",
    );
    assert_eq!(rows.len(), 5);
    for r in &rows {
        assert_eq!(r["found"], true, "{r}");
        assert!(r["shrunk_requests"].as_u64().unwrap() >= 1, "{r}");
        assert!(r["seconds_to_detection"].as_f64().unwrap() >= 0.0, "{r}");
    }
    // A row names the rules of the answer the model does not explain: a replay answered
    // 201 breaks REPLAY-02 (the model's 200), not the rules of the create it replays.
    let replay = rows
        .iter()
        .find(|r| r["mutant"] == "replay_answers_created");
    assert_eq!(replay.unwrap()["rules"], serde_json::json!(["REPLAY-02"]));
}

#[test]
fn conform_a_target_that_is_down_is_one_line_and_exit_2() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = conform(
        &format!("http://127.0.0.1:{port}"),
        PROFILE,
        &["--seeds", "0..5"],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the target is down"), "{err}");
}

#[test]
fn conform_a_profile_with_an_unknown_key_is_one_line_and_exit_2() {
    let text = std::fs::read_to_string(PROFILE)
        .unwrap()
        .replace("\"volatile\"", "\"volatiles\"");
    let profile = temp("conform-bad-profile.json", &text);
    let o = conform("http://127.0.0.1:9", profile.to_str().unwrap(), &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown field `volatiles`"), "{err}");
}

/// A stand-in target on loopback that answers every request with one body.
fn fake_target(body: &'static str) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        // Bounded: a handful of connections, then the thread ends.
        for stream in listener.incoming().take(8) {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let reply = format!(
                "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(reply.as_bytes());
        }
    });
    (addr, handle)
}

#[test]
fn conform_a_field_the_profile_does_not_expect_is_one_line_and_exit_2() {
    let (addr, _t) = fake_target(r#"{"id":"pay_1","status":"succeeded","trace_id":"abc"}"#);
    // The sandbox's profile without its controls (the stand-in has none: see below).
    let mut p: Value = serde_json::from_str(&std::fs::read_to_string(PROFILE).unwrap()).unwrap();
    p.as_object_mut().unwrap().remove("controls");
    let profile = temp("conform-no-controls.json", &p.to_string());
    let o = conform(
        &format!("http://{addr}"),
        profile.to_str().unwrap(),
        &["--seeds", "0..1"],
    );
    assert_eq!(code(&o), 2, "{}\n{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("field .trace_id"), "{err}");
}

/// A control the target answers 2xx and then ignores is the profile's problem, named
/// (exit 2), never a violation of the target.
#[test]
fn conform_a_control_that_takes_no_effect_is_named_and_exit_2() {
    let (addr, _t) = fake_target(r#"{"id":"pay_1","status":"succeeded"}"#);
    let o = conform(&format!("http://{addr}"), PROFILE, &["--seeds", "0..1"]);
    assert_eq!(code(&o), 2, "{}\n{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("controls.rate_limit took no effect"), "{err}");
}

const SHARED_PROFILE: &str = "docs/profiles/sandbox-shared.json";

/// The profile's controls make the sandbox's platform answer its own 429 and 503, card G
/// makes a cancel 202, and `serve --shared-merchants` puts two merchants in one world:
/// the five mutants only those show are found over HTTP, each in the setup that shows it.
#[test]
fn conform_kill_matrix_finds_the_mutants_that_need_controls_a_late_cancel_or_shared_merchants() {
    let rows = kill_matrix(
        PROFILE,
        "rate_limit_binds_key,pause_creates_payment,pause_answers_internal_error,cancel_accepted_marks_canceled,scope_without_merchant",
        "0..300",
    );
    assert_eq!(rows.len(), 5);
    for r in rows {
        assert_eq!(r["found"], true, "{r}");
        let want = if r["mutant"] == "scope_without_merchant" {
            "manual clock, merchants in one session"
        } else {
            "manual clock"
        };
        assert_eq!(r["setup"], want, "{r}");
    }
}

/// A profile without controls and without card G: those mutants are listed blind, with
/// what the profile lacks, and never missed (exit 0).
#[test]
fn conform_kill_matrix_says_why_a_profile_without_controls_is_blind() {
    let mut p: Value = serde_json::from_str(&std::fs::read_to_string(PROFILE).unwrap()).unwrap();
    p.as_object_mut().unwrap().remove("controls");
    p["cards"]
        .as_array_mut()
        .unwrap()
        .retain(|c| c["outcome"] != "slow_cancel");
    let profile = temp("conform-no-controls.json", &p.to_string());
    let rows = kill_matrix(
        profile.to_str().unwrap(),
        "rate_limit_binds_key,pause_answers_internal_error,cancel_accepted_marks_canceled",
        "0..15",
    );
    let reasons: Vec<&str> = rows
        .iter()
        .map(|r| {
            assert_eq!(r["found"], false, "{r}");
            r["reason"].as_str().unwrap()
        })
        .collect();
    assert!(reasons[0].contains("no controls.rate_limit"), "{reasons:?}");
    assert!(reasons[1].contains("no controls.pause"), "{reasons:?}");
    assert!(reasons[2].contains("slow_cancel"), "{reasons:?}");
}

#[test]
fn conform_the_reference_with_merchants_in_one_session_passes() {
    let s = Serve::start(
        "conform-shared",
        &["--clock", "manual", "--shared-merchants"],
    );
    let o = conform(
        &format!("http://{}", s.addr),
        SHARED_PROFILE,
        &["--seeds", "0..60", "--proxy-faults"],
    );
    no_panic(&o);
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
}

/// A target in front of a real sandbox that forwards its controls always, and the first
/// `good` requests to `/v1/…`, then answers every other one with bytes that are not HTTP.
fn garbling_target(upstream: std::net::SocketAddr, good: usize) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let api = std::sync::Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        // Bounded: at most this many connections, each on a thread of its own.
        for stream in listener.incoming().take(2_000) {
            let Ok(mut s) = stream else { continue };
            let api = api.clone();
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                // The head, then the body its Content-Length declares (conform's requests
                // are small and close the connection after the answer).
                let mut req = Vec::new();
                let mut buf = [0u8; 4096];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&req).to_ascii_lowercase();
                let head_end = text.find("\r\n\r\n").unwrap() + 4;
                let length: usize = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while req.len() < head_end + length {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let to_api = text.split(' ').nth(1).is_some_and(|p| p.starts_with("/v1"));
                if to_api && api.fetch_add(1, Ordering::SeqCst) >= good {
                    let _ = s.write_all(b"\x00\x01\x02 this is not HTTP \xff\r\n\r\n");
                    return;
                }
                let Ok(mut up) = std::net::TcpStream::connect(upstream) else {
                    return;
                };
                let mut answer = Vec::new();
                if up.write_all(&req).is_ok() && up.read_to_end(&mut answer).is_ok() {
                    let _ = s.write_all(&answer);
                }
            });
        }
    });
    addr
}

/// Defect: past the start-up check, a target answering every API request with garbage
/// was said to conform (each answer read as a connection reset, an unknown outcome the
/// model allows). Its failures are counted, and the run is incomplete naming them.
#[test]
fn conform_a_target_that_answers_garbage_is_incomplete_never_conforms() {
    let s = Serve::start("conform-garbage", &["--clock", "manual"]);
    let target = garbling_target(s.addr, 12);
    let o = conform(
        &format!("http://{target}"),
        PROFILE,
        &["--seeds", "0..9", "--format", "json"],
    );
    no_panic(&o);
    assert_eq!(code(&o), 3, "{}\n{}", stdout(&o), stderr(&o));
    let r = json(&o);
    let failed = r["target_failed"].as_u64().unwrap();
    let exchanged = r["exchanged"].as_u64().unwrap();
    assert!(failed * 20 > exchanged, "{r}");
    assert!(
        r["target_first_failure"]
            .as_str()
            .unwrap()
            .contains("not an HTTP answer"),
        "{r}"
    );
    assert!(!r["incomplete"].as_array().unwrap().is_empty(), "{r}");
    // The same in text: never "conforms".
    let target = garbling_target(s.addr, 12);
    let o = conform(&format!("http://{target}"), PROFILE, &["--seeds", "0..9"]);
    assert_eq!(code(&o), 3);
    let out = stdout(&o);
    assert!(!out.contains("conforms"), "{out}");
    assert!(out.contains("incomplete: the target failed"), "{out}");
}
