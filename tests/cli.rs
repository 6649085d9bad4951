//! The command line behaves: exit codes 0/1/2/3, one clear line for bad input, never a
//! panic or a backtrace.

mod common;

use common::*;
use std::path::PathBuf;

#[test]
fn bad_flag_is_usage_error_2() {
    let o = run(&["check", "--no-such-flag"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--no-such-flag"));
    no_panic(&o);
}

#[test]
fn unknown_preset_is_one_line_and_2() {
    let o = run(&["check", "--preset", "nope"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("unknown preset 'nope'"), "{err}");
    no_panic(&o);
}

#[test]
fn unknown_scenario_and_policy_and_rule_are_2() {
    for args in [
        &["scenario", "S99"][..],
        &["simulate", "--seeds", "0..3", "--policy", "nope"],
        &["rules", "--id", "NOPE-1"],
        &["simulate", "--seeds", "5..1"],
        &["simulate", "--seeds", "0..3", "--shard", "4/4"],
        &["replay"],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).trim().is_empty());
        no_panic(&o);
    }
}

/// `rules --id` quotes the rule's sentence in English and in the Chinese original (the
/// authoritative text), under the section's heading in both; the JSON catalogue carries
/// both sentences for every rule; the whole list stays one line a rule.
#[test]
fn rules_by_id_quote_the_english_and_the_chinese_original() {
    let o = run(&["rules", "--id", "UNIQ-01"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let line = |label: &str| {
        out.lines()
            .find_map(|l| l.trim_start().strip_prefix(label))
            .unwrap_or_else(|| panic!("no `{label}` line in:\n{out}"))
            .to_owned()
    };
    assert!(line("en: ").contains("merchant_order_no"), "{out}");
    let zh = line("zh: ");
    assert!(
        zh.contains("创建支付") && zh.contains("merchant_order_no"),
        "{out}"
    );
    assert!(
        out.contains("## Which requests need an idempotency key · 哪些请求需要幂等键"),
        "{out}"
    );

    let o = run(&["rules", "--format", "json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let rules = json.as_array().expect("an array of rules");
    assert!(rules.len() >= 55, "{} rules", rules.len());
    for r in rules {
        let (text, zh) = (r["text"].as_str(), r["zh"].as_str());
        assert!(zh.is_some_and(|z| !z.is_empty() && Some(z) != text), "{r}");
    }

    let out = stdout(&run(&["rules"]));
    let is_id = |w: &str| {
        w.split_once('-').is_some_and(|(p, n)| {
            !p.is_empty()
                && p.chars().all(|c| c.is_ascii_uppercase())
                && n.len() == 2
                && n.chars().all(|c| c.is_ascii_digit())
        })
    };
    let listed = out
        .lines()
        .filter(|l| l.split_whitespace().next().is_some_and(is_id))
        .count();
    assert!(!out.contains(" zh: ") && !out.contains(" en: "), "{out}");
    assert_eq!(listed, rules.len(), "one line a rule:\n{out}");
}

/// A tape's JSON with `choices` (labels) on the simulation settings given.
fn tape(settings: &str, choices: &str) -> String {
    format!(
        r#"{{"format": "payhub-verify tape v2", "simulation": {{{settings}}}, "choices": [{choices}]}}"#
    )
}

const SETTINGS: &str = r#""policy": "reference", "clients": 2, "steps": 10, "no_swarm": false"#;

#[test]
fn malformed_or_unreadable_tapes_are_2() {
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            temp("binary.tape", &[0xff, 0xfe, 0x00, 0x01]),
            "not a text file",
        ),
        (temp("header.tape", b"hello\n"), "not a payhub-verify tape"),
        (
            temp(
                "v1.tape",
                b"# payhub-verify tape v1\nworld-flags: --bogus 3\n",
            ),
            "a tape of an older payhub-verify (v1",
        ),
        (
            temp(
                "field.tape",
                &tape(&format!("{SETTINGS}, \"bogus\": 3"), ""),
            ),
            "unknown field `bogus`",
        ),
        (
            temp(
                "policy.tape",
                &tape(
                    r#""policy": "nope", "clients": 2, "steps": 10, "no_swarm": false"#,
                    "",
                ),
            ),
            "unknown policy 'nope'",
        ),
        (
            temp("empty.tape", &tape(SETTINGS, "")),
            "the tape holds no choice: replaying it checks nothing",
        ),
        (
            temp("label.tape", &tape(SETTINGS, r#""command 0", "fly m1""#)),
            "step 2: 'fly m1' is not a choice label",
        ),
        (
            temp("choice.tape", &tape(SETTINGS, r#""deliver m99""#)),
            "step 1: 'deliver m99' is not enabled",
        ),
        (PathBuf::from("/nonexistent/x.tape"), "cannot read"),
        (PathBuf::from("/dev/zero"), "longer than 64 MiB"),
    ];
    for (path, expected) in cases {
        let o = run(&["replay", "--tape", path.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{}: {}", path.display(), stderr(&o));
        assert!(
            stderr(&o).contains(expected),
            "{}: {}",
            path.display(),
            stderr(&o)
        );
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
        no_panic(&o);
    }
}

/// A tape names its world: a world flag beside --tape is refused, never ignored.
#[test]
fn a_world_flag_beside_a_tape_is_refused() {
    let path = temp("flags.tape", tape(SETTINGS, r#""command 0""#).as_bytes());
    for flag in [
        ["--policy", "new_key_after_timeout"],
        ["--clients", "3"],
        ["--steps", "5"],
    ] {
        let o = run(&["replay", "--tape", path.to_str().unwrap(), flag[0], flag[1]]);
        assert_eq!(code(&o), 2, "{flag:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag[0]), "{flag:?}: {}", stderr(&o));
        no_panic(&o);
    }
}

/// `--out` naming a file is refused before the run, so no verdict is lost to it.
#[test]
fn an_out_folder_that_is_a_file_is_refused_before_the_run() {
    let file = temp("out-is-a-file", b"x");
    let out = file.to_str().unwrap();
    for args in [
        &["simulate", "--seeds", "0..2", "--out", out][..],
        &["verify", "--preset", "scope", "--out", out][..],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("not a folder"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty(), "{args:?} ran: {}", stdout(&o));
        no_panic(&o);
    }
}

/// conform's profile is read bounded, and a bound of 0 model states is refused.
#[test]
fn conform_refuses_an_endless_profile_and_no_states() {
    let o = run(&["conform", "--profile", "/dev/zero"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("longer than 16 MiB"), "{}", stderr(&o));
    let o = run(&["conform", "--max-states", "0"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--max-states"), "{}", stderr(&o));
    no_panic(&o);
}

#[test]
fn an_incomplete_check_exits_3() {
    let o = run(&[
        "check",
        "--preset",
        "card-retry",
        "--max-states",
        "50",
        "--search",
        "bfs",
        "--reduce",
        "none",
    ]);
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stdout));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("INCOMPLETE"));
    // An unreduced cut run points at the reductions; a reduced one (the default) does not.
    let hint = "a deeper scope completes sooner with --search dfs --reduce requests,por";
    assert!(text.contains(hint), "{text}");
    no_panic(&o);
    let o = run(&["check", "--preset", "card-retry", "--max-states", "50"]);
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stdout));
    assert!(!String::from_utf8_lossy(&o.stdout).contains(hint));
    no_panic(&o);
}

#[test]
fn check_searches_depth_first_reduced_by_default_and_says_so() {
    let header = |args: &[&str]| {
        let o = run(args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        stdout(&o).lines().next().unwrap_or_default().to_owned()
    };
    let base = ["check", "--preset", "scope"];
    assert!(
        header(&base).starts_with("search: depth-first, reduced: requests, por"),
        "{}",
        header(&base)
    );
    let every = [&base[..], &["--search", "bfs", "--reduce", "none"]].concat();
    assert!(header(&every).starts_with("search: breadth-first, every state"));
    // The same verdicts either way: only the counts differ.
    let verdicts = |args: &[&str]| -> Vec<String> {
        stdout(&run(args))
            .lines()
            .filter(|l| l.contains(" holds ") || l.contains("VIOLATED") || l.contains("reached"))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(verdicts(&base), verdicts(&every));
    assert!(!verdicts(&base).is_empty());
    // `none` is alone or not at all.
    let o = run(&[&base[..], &["--reduce", "none,por"]].concat());
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--reduce none"), "{}", stderr(&o));
}

#[test]
fn a_complete_check_exits_0_and_a_violating_sweep_exits_1() {
    let o = run(&["check", "--preset", "replay-conflict", "--format", "json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let preset = &json[0];
    for field in [
        "name",
        "complete",
        "unique_states",
        "total_states",
        "seconds",
    ] {
        assert!(preset.get(field).is_some(), "{field}");
    }
    for p in preset["properties"].as_array().unwrap() {
        for field in ["name", "kind", "rules", "status"] {
            assert!(p.get(field).is_some(), "{field}");
        }
    }
    let out = std::env::temp_dir().join(format!("payhub-verify-cli-out-{}", std::process::id()));
    let o = run(&[
        "simulate",
        "--seeds",
        "0..300",
        "--policy",
        "new_key_after_timeout+new_order_no_after_timeout",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("reproduce: payhub-verify replay --tape"),
        "{text}"
    );
    no_panic(&o);
    // Every tape the sweep wrote replays to the violation it printed.
    let violation = text
        .lines()
        .find_map(|l| l.strip_prefix("violation: "))
        .expect("the violation line");
    let mut replayed = 0;
    for entry in std::fs::read_dir(out.join("tapes")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "tape") {
            continue;
        }
        let o = run(&["replay", "--tape", path.to_str().unwrap()]);
        assert_eq!(code(&o), 1, "{}: {}", path.display(), stderr(&o));
        assert!(stdout(&o).contains("VIOLATED "), "{}", stdout(&o));
        if text.contains(&format!(
            "reproduce: payhub-verify replay --tape {}",
            path.display()
        )) {
            assert!(
                stdout(&o).contains(&format!("VIOLATED {violation}")),
                "{}",
                stdout(&o)
            );
        }
        replayed += 1;
    }
    assert!(replayed >= 1);
}

#[test]
fn thread_count_does_not_change_state_counts() {
    for preset in ["concurrent-same-key", "create-crash"] {
        let counts: Vec<(u64, u64)> = ["1", "2"]
            .iter()
            .map(|t| {
                let o = run(&[
                    "check",
                    "--preset",
                    preset,
                    "--threads",
                    t,
                    "--format",
                    "json",
                ]);
                assert_eq!(code(&o), 0, "{}", stderr(&o));
                let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                (
                    json[0]["unique_states"].as_u64().unwrap(),
                    json[0]["total_states"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(counts[0], counts[1], "{preset}");
    }
}

#[test]
fn malformed_arguments_never_panic() {
    let junk: &[&[&str]] = &[
        &["--seeds"],
        &["simulate", "--seeds", ""],
        &["simulate", "--seeds", "a..b"],
        &["simulate", "--clients", "0", "--seeds", "0..1"],
        &["simulate", "--clients", "300"],
        &["check", "--threads", "-1"],
        &["check", "--depth", "x"],
        &["replay", "--seed", "1", "--tape", "x"],
        &["run", "/nonexistent.pha"],
        &["scenario", ""],
        &["rules", "--format", "xml"],
        &["verify", "--seeds", "-3"],
    ];
    for args in junk {
        let o = run(args);
        let c = code(&o);
        assert!(c == 2 || c == 1, "{args:?}: exit {c}: {}", stderr(&o));
        no_panic(&o);
    }
}

#[test]
fn explorer_serves_status_on_loopback() {
    let (mut child, addr) = explorer("replay-conflict");
    let body = http_get(&addr, "/.status");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        body.starts_with("HTTP/1.") && body.contains(" 200 "),
        "{body}"
    );
    assert!(body.contains("\"done\""), "{body}");
    let o = run(&["explore", "--addr", "10.0.0.1:3000"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("not a loopback address"));
}

#[test]
fn a_sweep_counterexample_as_a_script_runs_and_needs_its_expect_violation() {
    let out = std::env::temp_dir().join(format!("payhub-verify-cli-script-{}", std::process::id()));
    let o = run(&[
        "simulate",
        "--seeds",
        "0..300",
        "--policy",
        "new_key_after_timeout+new_order_no_after_timeout",
        "--format",
        "script",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let script = String::from_utf8(o.stdout).unwrap();
    assert!(
        script.contains("expect violation client-never-charges-an-order-twice"),
        "{script}"
    );
    let with = temp("with.pha", script.as_bytes());
    let o = run(&["run", with.to_str().unwrap()]);
    assert_eq!(
        code(&o),
        0,
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    let without: String = script
        .lines()
        .filter(|l| !l.starts_with("expect violation"))
        .map(|l| format!("{l}\n"))
        .collect();
    let without = temp("without.pha", without.as_bytes());
    let o = run(&["run", without.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    no_panic(&o);
}

/// `bench --vs-stateright` runs every search on the same model, in the scope it was
/// given: the unreduced searches (stateright's and the engine's, 1 and 2 threads) cover
/// the same states, the partial order covers the same fewer states in both checkers, and
/// the ratios are measured, not left empty.
#[test]
fn bench_compares_the_engine_with_stateright_on_one_model() {
    let o = run(&[
        "bench",
        "--vs-stateright",
        "--preset",
        "create-crash",
        "--faults",
        "crashes=0",
        "--runs",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["preset"], "create-crash");
    assert_eq!(json["faults"], "crashes=0");
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    let covered = |reduce: &str| -> Vec<(u64, u64)> {
        rows.iter()
            .filter(|r| r["reduce"] == reduce)
            .map(|r| {
                (
                    r["unique_states"].as_u64().unwrap(),
                    r["total_states"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let plain = covered("");
    assert_eq!(plain.len(), 6);
    // The scope was taken: without crashes the preset is far below its 64,870 states.
    assert!(plain[0].0 > 0 && plain[0].0 < 64_870, "{plain:?}");
    assert!(plain.iter().all(|c| *c == plain[0]), "{plain:?}");
    let por = covered("por");
    assert_eq!(por.len(), 2);
    assert!(
        por[0] == por[1] && por[0].0 < plain[0].0,
        "{por:?} {plain:?}"
    );
    assert!(covered("requests,por").iter().all(|c| c.0 <= por[0].0));
    for key in [
        "speedup_bfs_1_to_2",
        "speedup_dfs_1_to_2",
        "speedup_dfs_reduced_1_to_2",
    ] {
        assert!(json[key].as_f64().is_some_and(|x| x > 0.0), "{key}");
    }
    assert!(rows.iter().all(|r| {
        r["verdicts_vs_stateright_dfs"]
            .as_f64()
            .is_some_and(|x| x > 0.0)
    }));
}

/// `bench` measures each preset in a child process (its own peak memory) and reports the
/// median of its runs; an unknown preset is a usage error.
#[test]
fn bench_measures_a_preset_in_its_own_process() {
    let o = run(&[
        "bench",
        "--no-simulation",
        "--preset",
        "replay-conflict",
        "--runs",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["simulation"].as_array().map(Vec::len), Some(0));
    let c = &json["checker"][0];
    assert_eq!(c["preset"], "replay-conflict");
    assert_eq!(c["unique_states"], 248);
    assert_eq!(c["runs"], 2);
    assert!(c["unique_states_per_second"].as_f64().unwrap() > 0.0);
    let o = run(&["bench", "--no-simulation", "--preset", "no-such-preset"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    no_panic(&o);
}
