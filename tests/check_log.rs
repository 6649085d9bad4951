//! `check-log` on hand-made captures (tests/fixtures/har/, written by its
//! make_fixtures.py; tests/fixtures/access/): the Chrome, Firefox and sanitized styles
//! read and judged; one planted bug per wire property, of the client or of the platform,
//! found with its minimal witness entries; bad input rejected with exit 2; an unreadable
//! entry makes the run incomplete (exit 3); a generated log judged holds.

mod common;
use common::*;
use serde_json::Value;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// check-log's JSON for one file, and its exit code.
fn judged(args: &[&str]) -> (Value, i32) {
    let o = run(&[&["check-log", "--format", "json"], args].concat());
    no_panic(&o);
    let v: Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}{}", stdout(&o), stderr(&o)));
    (v["files"][0].clone(), code(&o))
}

fn property(file: &Value, name: &str) -> Value {
    file["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .clone()
}

fn violated(file: &Value) -> Vec<String> {
    file["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "violated")
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The statuses of the properties judged on the wire, but for the client's timeouts
/// where the source cannot show them (a log never shows who ended an exchange without an
/// answer).
fn statuses_of_wire(file: &Value) -> Vec<String> {
    file["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["side"].is_string() && !timeouts_unseen(p))
        .map(|p| p["status"].as_str().unwrap().to_owned())
        .collect()
}

fn timeouts_unseen(p: &Value) -> bool {
    p["name"] == "client-waits-the-contract-timeouts"
        && p["status"] == "cannot_judge"
        && (p["missing"].to_string()).contains("never whether the client gave up")
}

#[test]
fn check_log_chrome_and_firefox_captures_are_read_and_every_wire_property_holds() {
    for (name, entries, not_api) in [("har/chrome.har", 4, 1), ("har/firefox.har", 2, 0)] {
        let (f, code) = judged(&[&fixture(name)]);
        assert_eq!(code, 0, "{name}: {f:#}");
        assert_eq!(f["format"], "har");
        assert_eq!(f["entries"], entries, "{name}");
        assert_eq!(f["not_the_api"], not_api, "{name}");
        assert_eq!(f["unreadable"], 0, "{name}");
        assert!(
            statuses_of_wire(&f).iter().all(|s| s == "holds"),
            "{name}: {f:#}"
        );
        // A log shows no client's hang-up, nor a ledger: neither is "holds".
        assert!(timeouts_unseen(&property(
            &f,
            "client-waits-the-contract-timeouts"
        )));
        // A log has no ledger: the money properties are not "holds".
        let ledger = property(&f, "at-most-one-charge-per-scope");
        assert_eq!(ledger["status"], "cannot_judge");
        assert!(
            ledger["missing"]
                .to_string()
                .contains("the acquirer's ledger is not in a log")
        );
    }
}

#[test]
fn check_log_sanitized_capture_judges_its_requests_as_one_assumed_merchant() {
    let (f, code) = judged(&[&fixture("har/sanitized.har")]);
    assert_eq!(code, 0, "{f:#}");
    assert!(statuses_of_wire(&f).iter().all(|s| s == "holds"), "{f:#}");
    assert!(
        f["assumptions"]
            .to_string()
            .contains("no Authorization header"),
        "the owner is an assumption, printed: {f:#}"
    );
    let map = fixture("har/anonymous-keys.json");
    let (f, code) = judged(&[&fixture("har/sanitized.har"), "--api-key-map", &map]);
    assert_eq!(code, 0);
    assert!(statuses_of_wire(&f).iter().all(|s| s == "holds"), "{f:#}");
    assert_eq!(f["assumptions"], serde_json::json!([]), "{f:#}");
}

#[test]
fn check_log_finds_each_planted_bug_with_its_witness_entries() {
    for (file, property_name, rule, says) in [
        (
            "client-new-key-after-unknown",
            "client-creates-an-order-under-one-key",
            "UNKNOWN-03",
            "sent the same order under another key k-2",
        ),
        (
            "client-new-order-after-unknown",
            "client-creates-an-order-under-one-key",
            "UNKNOWN-03",
            "under another order number",
        ),
        (
            "client-key-on-two-endpoints",
            "client-uses-a-key-on-one-endpoint",
            "GEN-05",
            "sends key k-1 on POST /v1/refunds",
        ),
        (
            "client-params-changed",
            "client-never-changes-parameters-under-a-key",
            "UNKNOWN-04",
            "amount 12000",
        ),
        (
            "client-queries-too-soon",
            "client-spaces-queries",
            "SCHED-02",
            "3s after entry 1",
        ),
        (
            "client-queries-one-object-two-ways",
            "client-spaces-queries",
            "SCHED-02",
            "3s after entry 1 at +0s queried it as /v1/payments?merchant_order_no=ORDER-1",
        ),
        (
            "client-queries-one-object-tied-late",
            "client-spaces-queries",
            "SCHED-02",
            "3s after entry 1 at +0s queried it as /v1/payments/pay_demo_001",
        ),
        (
            "client-ignores-retry-after",
            "client-honours-retry-after",
            "RATE-03",
            "Retry-After 2",
        ),
        (
            "platform-replay-201",
            "replay-returns-same-object",
            "REPLAY-02",
            "the platform answered 201",
        ),
        (
            "platform-conflict-missing",
            "idempotency-conflict-iff-parameters-differ",
            "CONFLICT-01",
            "the platform answered 200 pay_demo_001 version 2, the contract requires 409 idempotency_conflict",
        ),
        (
            "platform-conflict-same",
            "idempotency-conflict-iff-parameters-differ",
            "CONFLICT-01",
            "with the same parameters",
        ),
        (
            "platform-two-payments",
            "at-most-one-payment-per-order",
            "UNIQ-01",
            "pay_demo_002",
        ),
        (
            "platform-related-missing",
            "conflicts-name-the-related-resource",
            "ORDER-01",
            "without error.related_resource_id",
        ),
        (
            "platform-version-back",
            "versions-rise-with-every-visible-change",
            "WEBHOOK-02",
            "version 2",
        ),
    ] {
        // The renumbered order is read as one purchase only when assumed.
        let har = fixture(&format!("har/{file}.har"));
        let (f, code) = judged(&[&har, "--same-purchase-by-amount"]);
        assert_eq!(code, 1, "{file}");
        let p = property(&f, property_name);
        assert_eq!(p["status"], "violated", "{file}: {f:#}");
        assert!(p["rules"].to_string().contains(rule), "{file}: {p}");
        let detail = p["detail"].as_str().unwrap();
        assert!(detail.contains(says), "{file}: {detail}");
        let entries = p["witness"]["entries"].as_array().unwrap();
        let expected = if file == "platform-related-missing" {
            vec![2]
        } else {
            vec![1, 2]
        };
        let ids: Vec<u64> = entries
            .iter()
            .map(|e| e["id"].as_str().unwrap()[4..].parse().unwrap())
            .collect();
        assert_eq!(ids, expected, "{file}: the minimal witness");
        // Only the planted bug (and, for a changed key, the client's side of it).
        let others: Vec<String> = violated(&f)
            .into_iter()
            .filter(|n| n != property_name && n != "client-never-changes-parameters-under-a-key")
            .collect();
        assert!(others.is_empty(), "{file}: {others:?}");
    }
}

#[test]
fn check_log_markdown_draws_the_witness_entries() {
    let o = run(&[
        "check-log",
        &fixture("har/platform-conflict-missing.har"),
        "--format",
        "markdown",
    ]);
    assert_eq!(code(&o), 1);
    let md = stdout(&o);
    assert!(md.contains("```mermaid\nsequenceDiagram"), "{md}");
    assert!(
        md.contains("C->>P: entry 2 +5s POST /v1/payments Idempotency-Key k-1"),
        "{md}"
    );
    assert!(md.contains("P-->>C: 200 pay_demo_001"), "{md}");
    // What the traffic says is text in the drawing, never HTML.
    let har = std::fs::read_to_string(fixture("har/platform-conflict-missing.har")).unwrap();
    let xss = temp(
        "xss.har",
        &har.replace("ORDER-1", "<img src=x onerror=alert(1)>"),
    );
    let o = run(&["check-log", xss.to_str().unwrap(), "--format", "markdown"]);
    let md = stdout(&o);
    assert!(
        md.contains("merchant_order_no #60;img src=x onerror=alert(1)#62;"),
        "{md}"
    );
    // Only the entries' fenced text block shows it as written.
    let raw = md
        .lines()
        .filter(|l| l.replace("\\<img", "").contains("<img"));
    assert!(raw.clone().all(|l| l.starts_with("entry ")), "{md}");
    let text = run(&["check-log", &fixture("har/platform-conflict-missing.har")]);
    let out = stdout(&text);
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("VIOLATED idempotency-conflict-iff-parameters-differ [CONFLICT-01"),
        "{out}"
    );
}

#[test]
fn check_log_access_log_with_a_key_map_finds_the_rebuy_and_keeps_no_card_number() {
    let log = fixture("access/dont-do-this.jsonl");
    // Without a map the one unknown key is assumed one merchant: the double charge is
    // found all the same (a CI gate stays red), and the assumption is printed.
    let (f, code) = judged(&[&log]);
    assert_eq!(code, 1, "{f:#}");
    assert_eq!(violated(&f), ["client-creates-an-order-under-one-key"]);
    assert!(
        f["assumptions"][0].as_str().unwrap().starts_with(
            "1 API key no --api-key-map names: judged as one merchant and environment (one scope)"
        ),
        "{f:#}"
    );
    let map = fixture("access/keys.json");
    let (f, code) = judged(&[&log, "--api-key-map", &map]);
    assert_eq!(code, 1);
    assert_eq!(f["format"], "access_log");
    assert_eq!(violated(&f), ["client-creates-an-order-under-one-key"]);
    let all = run(&["check-log", &log, "--api-key-map", &map, "--format", "json"]);
    let text = stdout(&all) + &stderr(&all);
    assert!(
        !text.contains("4242") && !text.contains("sk_live"),
        "no card number, no API key printed"
    );
}

#[test]
fn check_log_rejects_what_is_no_log_with_exit_2() {
    for (name, bytes, says) in [
        ("empty.har", &b""[..], "empty: nothing to judge"),
        ("blank.jsonl", &b"\n  \n"[..], "empty: nothing to judge"),
        ("binary.bin", &b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe"[..], ":1: binary data"),
        ("text.log", &b"GET /v1/payments 200\n"[..], ":1: starts with 'GET /v1/payments 200'"),
        ("other.jsonl", &b"{\"hello\":1}\n"[..], ":1: a JSON object with none of"),
        ("torn-first.jsonl", &b"{\"time\":\"2026-12-01T10:00:00Z\",\"method\":\"GET\",\n{\"time\":\"2026-12-01T10:00:01Z\",\"method\":\"GET\",\"path\":\"/v1/payments/p\"}\n"[..], ":1: JSON Lines, not a HAR"),
        ("trailing.jsonl", &b"{\"time\":\"2026-12-01T10:00:00Z\",\"method\":\"GET\",\"path\":\"/v1/x\"} and more\n"[..], ":1: JSON Lines, not a HAR"),
        ("no-entries.har", &b"{\"log\":{\"version\":\"1.2\"}}"[..], "no log.entries"),
        ("no-api.har", &b"{\"log\":{\"entries\":[{\"startedDateTime\":\"2026-12-01T00:00:00Z\",\"request\":{\"method\":\"GET\",\"url\":\"https://x/\"}}]}}"[..], "nothing judged"),
    ] {
        let file = temp(&format!("cl-{name}"), bytes);
        let o = run(&["check-log", file.to_str().unwrap()]);
        no_panic(&o);
        assert_eq!(code(&o), 2, "{name}: {}", stdout(&o));
        assert!(stderr(&o).contains(says), "{name}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{name}: one line");
    }
    let o = run(&["check-log", &fixture("har/malformed.har")]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("malformed.har:3:0: not a HAR"),
        "{}",
        stderr(&o)
    );
    let o = run(&["check-log", "/nonexistent.har"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("cannot read"));
}

/// A profile of the wrong shape, with an unknown card outcome or a key standing for no
/// model key: exit 2 naming the field, before any log is read.
#[test]
fn check_log_rejects_a_bad_profile_with_exit_2_naming_the_field() {
    let log = fixture("har/client-new-key-after-unknown.har");
    for (name, profile, says) in [
        ("shape", r#"{"name":"x","api_keys":"nope"}"#, "api_keys"),
        (
            "outcome",
            r#"{"name":"x","api_keys":[{"key":"k","model":"ak_1"}],"cards":[{"card":"c","outcome":"teleport"}]}"#,
            "teleport",
        ),
        (
            "key",
            r#"{"name":"x","api_keys":[{"key":"k","model":"ak_9"}],"cards":[{"card":"c","outcome":"approve"}]}"#,
            "ak_9",
        ),
    ] {
        let file = temp(&format!("cl-profile-{name}.json"), profile.as_bytes());
        let o = run(&["check-log", &log, "--profile", file.to_str().unwrap()]);
        no_panic(&o);
        assert_eq!(code(&o), 2, "{name}: {}", stdout(&o));
        assert!(stderr(&o).contains(says), "{name}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{name}: nothing judged is printed");
    }
}

#[test]
fn check_log_an_unreadable_entry_is_listed_and_the_run_is_incomplete() {
    let (f, code) = judged(&[&fixture("har/one-unreadable.har")]);
    assert_eq!(code, 3, "{f:#}");
    assert_eq!(f["unreadable"], 1);
    assert_eq!(f["skipped"][0]["entry"], "entry 1");
    assert!(
        f["skipped"][0]["why"]
            .as_str()
            .unwrap()
            .contains("'yesterday' is not a date")
    );
    assert!(f["verdict"].as_str().unwrap().starts_with("INCOMPLETE"));
    // Alone, the unreadable entry is named with its reason, not called "not the API".
    let har = std::fs::read_to_string(fixture("har/one-unreadable.har")).unwrap();
    let mut alone: serde_json::Value = serde_json::from_str(&har).unwrap();
    alone["log"]["entries"].as_array_mut().unwrap().truncate(1);
    let alone = temp("only-unreadable.har", &alone.to_string());
    let o = run(&["check-log", alone.to_str().unwrap()]);
    assert_eq!(common::code(&o), 2);
    assert!(
        stderr(&o)
            .contains("1 unreadable (first, entry 1: startedDateTime 'yesterday' is not a date"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_log_a_generated_log_is_judged_and_holds() {
    let o = run(&["check-log", "--generate", "2000"]);
    assert_eq!(code(&o), 0);
    let log = stdout(&o);
    assert_eq!(log.lines().count(), 2000);
    let file = temp("cl-generated.jsonl", &log);
    let (f, code) = judged(&[file.to_str().unwrap()]);
    assert_eq!(code, 0, "{f:#}");
    assert_eq!(f["judged"], 2000);
    assert!(statuses_of_wire(&f).iter().all(|s| s == "holds"), "{f:#}");
    // Creates and queries only: what judges refunds holds over nothing, and says so;
    // what judges creates holds over them.
    let refunds = property(&f, "refunds-once-and-within-captured");
    assert_eq!(refunds["vacuous"], true, "{refunds}");
    assert_eq!(
        refunds["detail"],
        "vacuously: no refund (POST /v1/refunds) in the source"
    );
    let orders = property(&f, "at-most-one-payment-per-order");
    assert_eq!(
        (&orders["status"], &orders["vacuous"]),
        (&"holds".into(), &Value::Null)
    );
    // Generating judges no file, and generating nothing is no log.
    for refused in [
        &["check-log", "--generate", "10", file.to_str().unwrap()][..],
        &["check-log", "--generate", "0"],
    ] {
        let o = run(refused);
        assert_eq!(common::code(&o), 2, "{refused:?}: {}", stdout(&o));
    }
}

#[test]
fn check_log_wire_properties_agree_with_the_registry_on_the_simulators_anti_patterns() {
    for (args, registry, wire) in [
        (
            &["--seed", "0", "--policy", "new_order_no_after_timeout"][..],
            "client-never-charges-an-order-twice",
            "client-creates-an-order-under-one-key",
        ),
        // One property reads SCHED-02 at both levels: the stream's facts and its wire.
        (
            &["--seed", "2", "--policy", "poll_too_fast"][..],
            "client-spaces-queries",
            "client-spaces-queries",
        ),
    ] {
        let events = run(&[&["replay"], args, &["--format", "events"]].concat());
        let file = temp(&format!("cl-sim-{}.jsonl", args[3]), &stdout(&events));
        let (f, code) = judged(&[file.to_str().unwrap()]);
        assert_eq!(code, 1, "{args:?}");
        assert_eq!(f["format"], "events");
        assert_eq!(property(&f, registry)["status"], "violated", "{args:?}");
        assert_eq!(property(&f, wire)["status"], "violated", "{args:?}: {f:#}");
    }
    // A passing run: the wire properties hold where the registry holds.
    let events = run(&["replay", "--seed", "11", "--format", "events"]);
    let file = temp("cl-sim-11.jsonl", &stdout(&events));
    let (f, code) = judged(&[file.to_str().unwrap()]);
    assert_eq!(code, 0, "{f:#}");
    assert!(statuses_of_wire(&f).iter().all(|s| s == "holds"));
}

#[test]
fn check_log_several_files_exit_with_the_worst() {
    let ok = fixture("har/firefox.har");
    let bad = fixture("har/platform-replay-201.har");
    let partial = fixture("har/one-unreadable.har");
    let empty = temp("cl-several-empty.har", "");
    let exit = |files: &[&str]| code(&run(&[&["check-log"], files].concat()));
    assert_eq!(exit(&[&ok, &partial]), 3);
    assert_eq!(exit(&[&partial, &bad, &ok]), 1);
    assert_eq!(exit(&[&bad, empty.to_str().unwrap()]), 2);
}

#[test]
fn check_log_a_503_temporarily_unavailable_is_known_not_accepted_and_a_500_unknown() {
    let log = |status: u16, body: &str| {
        let create = |t: &str, key: &str| {
            format!(
                r#""time":"2026-12-01T10:00:{t}Z","method":"POST","path":"/v1/payments","api_key":"ak_1","idempotency_key":"{key}","request_body":"{{\"merchant_order_no\":\"ORDER-1\",\"amount\":100,\"currency\":\"USD\"}}""#
            )
        };
        format!(
            "{{{},\"status\":{status},\"response_body\":{}}}\n{{{},\"status\":409,\"response_body\":\"{{\\\"error\\\":{{\\\"code\\\":\\\"order_no_conflict\\\",\\\"retryable\\\":false,\\\"related_resource_id\\\":\\\"pay_demo_001\\\"}}}}\"}}\n",
            create("00.000", "k-1"),
            serde_json::to_string(body).unwrap(),
            create("05.000", "k-2"),
        )
    };
    let paused = r#"{"error":{"code":"temporarily_unavailable","retryable":true}}"#;
    let file = temp("cl-503.jsonl", &log(503, paused));
    let (f, code) = judged(&[file.to_str().unwrap()]);
    // Not an unknown outcome; but S13 asks to retry later with the same key.
    assert_eq!(code, 1, "{f:#}");
    assert_eq!(violated(&f), ["client-sends-one-key-per-submission"]);
    let internal = r#"{"error":{"code":"internal_error","retryable":true}}"#;
    let failed = temp("cl-500.jsonl", &log(500, internal));
    let (f, code) = judged(&[failed.to_str().unwrap()]);
    assert_eq!(code, 1, "{f:#}");
    assert_eq!(violated(&f), ["client-creates-an-order-under-one-key"]);
}

/// The text output groups what this source cannot judge by the evidence it lacks: one
/// paragraph per missing set, naming its properties, instead of a line per property.
#[test]
fn check_log_text_groups_what_it_cannot_judge_by_the_missing_evidence() {
    let o = run(&["check-log", &fixture("har/sanitized.har")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        !out.lines().any(|l| l.starts_with("cannot judge (")),
        "one line per property: {out}"
    );
    let client = out
        .lines()
        .position(|l| l.starts_with("cannot judge, 1 property: needs the client's own decisions"))
        .unwrap_or_else(|| panic!("no client paragraph: {out}"));
    let names = out.lines().nth(client + 1).unwrap();
    assert!(
        names.contains("client-backs-off-as-the-reference-code"),
        "{names}"
    );
    assert!(
        out.contains("cannot judge, 30 properties: needs the platform's own record"),
        "{out}"
    );
}

/// A log's order is evidence: an access log, a HAR and an event stream whose entries
/// are reversed are refused (exit 2) naming the first entry that starts before the one
/// above it, never re-timed into a pass.
#[test]
fn a_reversed_log_is_refused_naming_the_first_entry_out_of_order() {
    let original = std::fs::read_to_string(fixture("access/dont-do-this.jsonl")).unwrap();
    let o = run(&["check-log", &fixture("access/dont-do-this.jsonl")]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    let mut lines: Vec<&str> = original.lines().collect();
    lines.reverse();
    let rev = temp("rev.jsonl", &(lines.join("\n") + "\n"));
    let o = run(&["check-log", rev.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        // The fixture's blank line 3 is line 2 reversed: line 3 is the first out of order.
        err.contains(&format!(
            "{}: line 3 starts 1000 ms before line 1",
            rev.display()
        )) && err.contains("not re-ordered"),
        "{err}"
    );

    // A HAR with its entries reversed.
    let har: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("har/chrome.har")).unwrap()).unwrap();
    let mut reversed = har.clone();
    let entries = reversed["log"]["entries"].as_array_mut().unwrap();
    assert!(entries.len() > 2);
    entries.reverse();
    let file = temp("rev.har", &reversed.to_string());
    let o = run(&["check-log", file.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("not re-ordered"), "{}", stderr(&o));

    // An event stream reversed: check-log and judge both refuse it.
    let events = stdout(&run(&["replay", "--seed", "3", "--format", "events"]));
    let mut lines: Vec<&str> = events.lines().collect();
    lines.reverse();
    let file = temp("rev-events.jsonl", &(lines.join("\n") + "\n"));
    for cmd in ["check-log", "judge"] {
        let o = run(&[cmd, file.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{cmd}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("before the event above it"),
            "{cmd}: {}",
            stderr(&o)
        );
    }
}

/// A FIFO that no writer opens is not a silent wait for ever: after `--wait S` seconds,
/// exit 2 saying so.
#[cfg(unix)]
#[test]
fn check_log_on_a_fifo_with_no_writer_gives_up_saying_so() {
    let fifo = temp("no-writer.fifo", "");
    std::fs::remove_file(&fifo).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let o = run(&["check-log", "--wait", "1", fifo.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(
        stderr(&o).contains("a FIFO that no writer opened in 1 s"),
        "{}",
        stderr(&o)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // Side inputs are read through the same door: a FIFO gives up, an endless file is
    // refused at the bound, never read into memory whole.
    let log = temp(
        "side-inputs.jsonl",
        &stdout(&run(&["check-log", "--generate", "5"])),
    );
    let log = log.to_str().unwrap();
    let o = run(&[
        "check-log",
        "--wait",
        "1",
        "--profile",
        fifo.to_str().unwrap(),
        log,
    ]);
    assert!(
        stderr(&o).contains("(--wait S waits longer)"),
        "{}",
        stderr(&o)
    );
    for side in [
        &["check-log", "--profile", "/dev/zero", log][..],
        &["check-log", "--api-key-map", "/dev/zero", log],
        &["serve", "--faults", "/dev/zero", "--addr", "127.0.0.1:0"],
    ] {
        let o = run(side);
        assert_eq!(code(&o), 2, "{side:?}");
        assert!(
            stderr(&o).contains("longer than 16 MiB"),
            "{side:?}: {}",
            stderr(&o)
        );
    }
}
