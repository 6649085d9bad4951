//! `payhub-verify serve` over real sockets: the binary on a free loopback port, driven by
//! a minimal HTTP/1.1 client on `std::net::TcpStream`, every test bounded in requests
//! and time, the child killed at the end.

mod common;
mod serve_support;

use common::*;
use serve_support::*;
use std::io::{ErrorKind, Write};
use std::time::Duration;

#[test]
fn serve_replay_02_the_same_key_is_one_payment_and_a_changed_amount_409() {
    let mut s = Serve::start("replay", &[]);
    let first = s.created("k1", "ORDER-1", 10000);
    let again = s.created("k1", "ORDER-1", 10000);
    assert_eq!((first.status, again.status), (201, 200));
    assert_eq!(first.json(), again.json());
    assert_eq!(first.json()["id"], "pay_demo_001");
    let changed = s.created("k1", "ORDER-1", 10001);
    assert_eq!(changed.status, 409);
    assert_eq!(
        changed.json(),
        serde_json::json!({"error":{"code":"idempotency_conflict","retryable":false}})
    );
    let list = s.answer(
        "GET",
        "/v1/payments?merchant_order_no=ORDER-1",
        &[("Authorization", "Bearer ak_1")],
        "",
    );
    assert_eq!(list.json()["data"].as_array().map(Vec::len), Some(1));
    // The platform answered right; the client changed the amount under its key, which
    // the wire witnesses (UNKNOWN-04).
    let verdict = s.verdict();
    let violated: Vec<&serde_json::Value> = verdict["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "violated")
        .collect();
    assert_eq!(violated.len(), 1, "{verdict:#}");
    assert_eq!(
        violated[0]["name"],
        "client-never-changes-parameters-under-a-key"
    );
    s.healthy();
}

#[test]
fn serve_unknown_02_execute_then_reset_then_the_same_key_is_one_charge() {
    let plan = temp(
        "reset-after.json",
        r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#,
    );
    let mut s = Serve::start("reset", &["--faults", plan.to_str().unwrap()]);
    match s.create("ak_1", "k1", "ORDER-1", 10000) {
        Outcome::Reset(kind) => assert_eq!(kind, ErrorKind::ConnectionReset),
        Outcome::Answer(r) => panic!("answered: {r:?}"),
    }
    let retried = s.created("k1", "ORDER-1", 10000);
    assert_eq!(retried.status, 200, "{}", retried.body);
    assert_eq!(retried.json()["id"], "pay_demo_001");
    let har = s.control("GET", "/__sandbox/har", "").json();
    assert_eq!(har["log"]["version"], "1.2");
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{har:#}");
    assert_eq!(entries[0]["response"]["status"], 0, "the reset: no answer");
    assert_eq!(entries[1]["response"]["status"], 200);
    assert_eq!(entries[1]["request"]["headers"][1]["value"], "k1");
    s.holds_everywhere("reset");
    s.healthy();
}

#[test]
fn serve_unknown_03_a_new_key_and_order_number_after_a_reset_is_named_the_double_charge() {
    let mut s = Serve::start("dont", &[]);
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#;
    assert_eq!(s.control("POST", "/__sandbox/faults", plan).status, 200);
    assert!(matches!(
        s.create("ak_1", "k1", "ORDER-1", 10000),
        Outcome::Reset(_)
    ));
    let renumbered = s.created("k2", "ORDER-1-retry", 10000);
    assert_eq!(renumbered.status, 201);
    let violated = s.the_violation("dont");
    assert_eq!(violated["name"], "client-never-charges-an-order-twice");
    assert_eq!(
        violated["detail"],
        "order ORDER-1 was captured 2 times: pay_demo_001 and then pay_demo_002"
    );
    let rules = violated["rules"].to_string();
    assert!(
        rules.contains("UNKNOWN-03") && rules.contains("EFFECT-01"),
        "{rules}"
    );
    // What the page renders (tests/serve_browser.rs renders it in a browser).
    let page = s.control("GET", "/__sandbox/page.json", "").json();
    assert_eq!(
        page["properties"][0]["name"], "client-never-charges-an-order-twice",
        "{page}"
    );
    assert_eq!(page["properties"][0]["status"], "violated", "{page}");
    let html = page["html"].as_str().unwrap_or_default();
    assert!(
        html.contains(
            "<div class=\"violation\" data-property=\"client-never-charges-an-order-twice\""
        ) && html.contains("<figure><svg"),
        "the witness is drawn: {page}"
    );
    assert!(
        page["lines"].to_string().contains("ORDER-1-retry"),
        "the exchanges are on the page: {page}"
    );
    let md = s.control("GET", "/__sandbox/verdict?format=markdown", "");
    assert!(
        md.body
            .contains("first `client-never-charges-an-order-twice`")
    );
    assert!(md.body.contains("```mermaid"), "{}", md.body);
    // The same verdict as JUnit: a failure per property the JSON says is violated.
    let json = s.control("GET", "/__sandbox/verdict", "").json();
    let mut violated: Vec<&str> = json["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "violated")
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(violated.contains(&"client-never-charges-an-order-twice"));
    let xml = s.control("GET", "/__sandbox/verdict?format=junit", "");
    let doc = roxmltree::Document::parse(&xml.body).expect("well-formed JUnit");
    let mut failed: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .filter_map(|c| c.attribute("name"))
        .collect();
    failed.sort_unstable();
    violated.sort_unstable();
    assert_eq!(failed, violated, "{}", xml.body);
    s.healthy();
}

#[test]
fn serve_merchants_are_namespaces_that_run_side_by_side() {
    let plan = temp(
        "namespaces.json",
        r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"reset_after"}]}"#,
    );
    let mut s = Serve::start("namespaces", &["--faults", plan.to_str().unwrap()]);
    // Merchant 1 renumbers after the reset; merchant 2 retries with the same key.
    assert!(matches!(
        s.create("ak_1", "k1", "ORDER-1", 100),
        Outcome::Reset(_)
    ));
    assert!(matches!(
        s.create("ak_3", "k1", "ORDER-1", 100),
        Outcome::Reset(_)
    ));
    let Outcome::Answer(m1) = s.create("ak_1", "k2", "ORDER-1-retry", 100) else {
        panic!("merchant 1's second create");
    };
    let Outcome::Answer(m2) = s.create("ak_3", "k1", "ORDER-1", 100) else {
        panic!("merchant 2's retry");
    };
    assert_eq!((m1.status, m2.status), (201, 200));
    // Each merchant's own session, its ids apart from the other's.
    assert_eq!(m1.json()["id"], "pay_demo_002");
    assert_eq!(
        m2.json()["id"],
        "pay_demo_500001",
        "merchant 2's own session"
    );
    // Its page calls the sender by the merchant and key, as `?merchant=2` does.
    let page = s
        .control("GET", "/__sandbox/page.json?merchant=2", "")
        .json();
    let lines = page["lines"].to_string();
    assert!(lines.contains("merchant 2 (ak_3) → platform"), "{lines}");
    assert!(!lines.contains("merchant-3"), "{lines}");
    let verdict = |m: u32| {
        s.control("GET", &format!("/__sandbox/verdict?merchant={m}"), "")
            .json()
    };
    assert_eq!(verdict(1)["holds"], false);
    assert_eq!(verdict(2)["holds"], true);
    assert_eq!(
        s.control("POST", "/__sandbox/reset?merchant=1", "").status,
        200
    );
    // A fresh session judged nothing: it does not hold.
    assert_eq!(verdict(1)["holds"], false);
    assert_eq!(verdict(1)["events"], 0);
    assert_ne!(verdict(2)["events"], 0, "merchant 2's session is untouched");
    // A reset keeps merchant 2's numbering apart.
    assert_eq!(
        s.control("POST", "/__sandbox/reset?merchant=2", "").status,
        200
    );
    // The fault plan starts over with the session: the first create is executed and
    // its connection reset again; the retry under its key replays it.
    assert!(matches!(
        s.create("ak_3", "k9", "ORDER-9", 100),
        Outcome::Reset(_)
    ));
    let Outcome::Answer(again) = s.create("ak_3", "k9", "ORDER-9", 100) else {
        panic!("merchant 2 after its reset");
    };
    assert_eq!(again.json()["id"], "pay_demo_500001", "{}", again.body);
    s.healthy();
}

/// `expires_at` is a date (RFC 3339 UTC) on the session's clock: under the manual clock
/// the session starts at 1970-01-01T00:00:00Z, and an order created a day later expires
/// a day later; the HAR export writes the same date.
#[test]
fn serve_expires_at_is_a_date_on_the_sessions_clock() {
    let mut s = Serve::start("dates", &["--clock", "manual"]);
    let first = s.created("k1", "ORDER-1", 10000);
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.json()["expires_at"], "1970-01-02T00:00:00.000Z");
    let moved = s.control("POST", "/__sandbox/clock/advance", r#"{"by":"1d"}"#);
    assert_eq!(moved.status, 200, "{}", moved.body);
    let second = s.created("k2", "ORDER-2", 10000);
    assert_eq!(second.json()["expires_at"], "1970-01-03T00:00:00.000Z");
    let har = s.control("GET", "/__sandbox/har", "");
    assert_eq!(har.status, 200, "{}", har.body);
    assert!(
        har.body
            .contains(r#"\"expires_at\":\"1970-01-03T00:00:00.000Z\""#),
        "{}",
        har.body
    );
    assert!(
        !har.body.contains(r#"\"expires_at\":86400000"#),
        "{}",
        har.body
    );
    s.healthy();
}

/// A 500 after executing is drawn once: the platform's note `answers req_1: 500 …` and
/// the one arrow that carries it back, as any answer is (UNKNOWN-01).
#[test]
fn serve_unknown_01_a_500_after_executing_is_drawn_once() {
    let plan = temp(
        "500-after.json",
        r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"500_after"}]}"#,
    );
    let mut s = Serve::start("500-after", &["--faults", plan.to_str().unwrap()]);
    let answer = s.created("k1", "ORDER-1", 10000);
    assert_eq!(answer.status, 500, "{}", answer.body);
    let page = s.control("GET", "/__sandbox/page.json", "").json();
    let lines: Vec<String> = page["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect();
    let carrying: Vec<&String> = lines.iter().filter(|l| l.contains("→ 500")).collect();
    assert_eq!(carrying.len(), 1, "{lines:#?}");
    assert!(
        carrying[0].contains("platform → merchant 1 (ak_1)"),
        "{lines:#?}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(
                |l| l.contains("answers req_1: 500 internal_error after executing  [UNKNOWN-01]")
            )
            .count(),
        1,
        "{lines:#?}"
    );
    s.healthy();
}

#[test]
fn serve_ret_01_the_manual_clock_advances_eight_days() {
    let mut s = Serve::start("clock", &["--clock", "manual"]);
    assert_eq!(s.created("k1", "ORDER-1", 10000).status, 201);
    let moved = s.control("POST", "/__sandbox/clock/advance", r#"{"by":"8d"}"#);
    assert_eq!(moved.status, 200, "{}", moved.body);
    assert_eq!(moved.json()["now_ms"], 8 * 86_400_000u64);
    let bad = s.control("POST", "/__sandbox/clock/advance", r#"{"by":"soon"}"#);
    assert_eq!(bad.status, 400);
    // The key's record is gone; the order number still has its Payment (S4: 409).
    let after = s.created("k1", "ORDER-1", 10000);
    assert_eq!(after.status, 409, "{}", after.body);
    assert_eq!(after.json()["error"]["code"], "order_no_conflict");
    assert_eq!(s.verdict()["holds"], true);
    let reset = s.control("POST", "/__sandbox/reset", "");
    assert_eq!(reset.status, 200);
    // The new session's clock and dates start at 0 again, not where the last one stopped.
    let again = s.created("k1", "ORDER-1", 10000);
    assert_eq!(again.status, 201);
    assert!(
        again
            .body
            .contains("\"expires_at\":\"1970-01-02T00:00:00.000Z\""),
        "{}",
        again.body
    );
    let har = s.control("GET", "/__sandbox/har", "").json();
    let started = &har["log"]["entries"][0]["startedDateTime"];
    assert_eq!(started, "1970-01-01T00:00:00.000Z");
    s.healthy();
}

#[test]
fn serve_faults_429_with_retry_after_503_and_500_after() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"rate_limited"},
                            {"endpoint":"create_payment","nth":2,"action":"unavailable"},
                            {"endpoint":"create_payment","nth":3,"action":"500_after"}],
                  "retry_after_s":1}"#;
    let plan = temp("429-503-500.json", plan);
    let mut s = Serve::start("codes", &["--faults", plan.to_str().unwrap()]);
    let limited = s.created("k1", "ORDER-1", 10000);
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("1"));
    std::thread::sleep(Duration::from_millis(1100));
    let paused = s.created("k1", "ORDER-1", 10000);
    assert_eq!(paused.status, 503);
    assert_eq!(paused.json()["error"]["code"], "temporarily_unavailable");
    let failed = s.created("k1", "ORDER-1", 10000);
    assert_eq!(failed.status, 500);
    let replayed = s.created("k1", "ORDER-1", 10000);
    assert_eq!(replayed.status, 200);
    assert_eq!(s.verdict()["holds"], true);
    s.healthy();
}

#[test]
fn serve_conc_02_concurrent_same_key_creates_on_two_connections_execute_once() {
    for (branches, second_status) in [("a", 200), ("b", 409)] {
        let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"slow_upstream","ms":1500}]}"#;
        let plan = temp(&format!("slow-{branches}.json"), plan);
        let name = format!("conc-{branches}");
        let mut s = Serve::start(
            &name,
            &["--faults", plan.to_str().unwrap(), "--branches", branches],
        );
        let (first, second) = std::thread::scope(|scope| {
            let first = scope.spawn(|| s.created("k1", "ORDER-1", 10000));
            std::thread::sleep(Duration::from_millis(300));
            let second = s.created("k1", "ORDER-1", 10000);
            (first.join().unwrap(), second)
        });
        assert_eq!(first.status, 201, "{branches}: {}", first.body);
        assert_eq!(second.status, second_status, "{branches}: {}", second.body);
        if second_status == 200 {
            assert_eq!(first.json(), second.json());
        } else {
            assert_eq!(second.json()["error"]["code"], "operation_in_progress");
        }
        s.holds_everywhere(&name);
        s.healthy();
    }
}

/// TIMEOUT-01: a client that gives up on a held answer after 0.4 s closes its socket
/// cleanly (a FIN, no reset): the sandbox sees the hang-up while the request waits, and
/// the verdict (and `judge` of the events) names it; its retry under the same key is
/// the one Payment.
#[test]
fn serve_timeout_01_a_client_that_closes_cleanly_on_a_held_answer_is_named() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","nth":1,"action":"hold","ms":3000}]}"#;
    let plan = temp("hold.json", plan);
    let mut s = Serve::start("hold", &["--faults", plan.to_str().unwrap()]);
    let body = r#"{"merchant_order_no":"ORDER-1","amount":10000,"currency":"USD","card":"A"}"#;
    let request = format!(
        "POST /v1/payments HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer ak_1\r\nIdempotency-Key: k1\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let gave_up = s.raw_within(request.as_bytes(), Duration::from_millis(400));
    assert!(matches!(gave_up, Outcome::Reset(_)), "{gave_up:?}");
    // The sandbox looks at a waiting request's connection every 20 ms.
    std::thread::sleep(Duration::from_millis(200));
    let retried = s.created("k1", "ORDER-1", 10000);
    assert_eq!(retried.status, 200, "{}", retried.body);
    assert_eq!(retried.json()["id"], "pay_demo_001");
    let verdict = s.verdict();
    let violated: Vec<&serde_json::Value> = verdict["properties"]
        .as_array()
        .expect("a list of properties")
        .iter()
        .filter(|p| p["status"] == "violated")
        .collect();
    assert_eq!(violated.len(), 1, "{verdict:#}");
    assert_eq!(violated[0]["name"], "client-waits-the-contract-timeouts");
    let detail = violated[0]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("hung up"), "{detail}");
    let (judged, _) = s.judged_and_run("hold");
    assert_eq!(
        statuses(&judged["properties"]),
        statuses(&verdict["properties"])
    );
    s.healthy();
}

/// A merchant's webhook endpoint: answers `status` to every POST, hands each body over.
fn webhook_receiver(status: u16) -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Read};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let mut reader = BufReader::new(conn);
            let mut length = 0;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            // Handed over before the answer, so the test sees it before the sandbox
            // knows how the POST went.
            let _ = tx.send(String::from_utf8_lossy(&body).into_owned());
            let answer =
                format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = reader.get_mut().write_all(answer.as_bytes());
        }
    });
    (url, rx)
}

#[test]
fn serve_webhook_01_webhooks_are_posted_and_an_acknowledged_one_is_not_sent_again() {
    let (url, received) = webhook_receiver(200);
    let mut s = Serve::start("hooks", &["--webhooks", &url, "--clock", "manual"]);
    assert_eq!(s.created("k1", "ORDER-1", 10000).status, 201);
    let body = received.recv_timeout(IO_TIMEOUT).expect("a webhook");
    let event: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(event["type"], "payment.succeeded", "{event}");
    assert_eq!(event["object"]["id"], "pay_demo_001", "{event}");
    assert!(
        event["id"].is_string() && event["version"].is_u64(),
        "{event}"
    );
    let moved = s.control("POST", "/__sandbox/clock/advance", r#"{"by":"1h"}"#);
    assert_eq!(moved.status, 200);
    assert!(received.try_recv().is_err(), "acknowledged: not sent again");
    s.holds_everywhere("hooks");
    s.healthy();
}

#[test]
fn serve_a_webhook_answered_500_is_delivered_again_when_the_clock_advances() {
    let (url, received) = webhook_receiver(500);
    let mut s = Serve::start("hooks-500", &["--webhooks", &url, "--clock", "manual"]);
    assert_eq!(s.created("k1", "ORDER-1", 10000).status, 201);
    let first = received.recv_timeout(IO_TIMEOUT).expect("a webhook");
    let moved = s.control("POST", "/__sandbox/clock/advance", r#"{"by":"2min"}"#);
    assert_eq!(moved.status, 200);
    // The advance returned after the re-delivery was POSTed.
    let again = received.try_recv().expect("delivered again");
    let id = |b: &str| serde_json::from_str::<serde_json::Value>(b).unwrap()["id"].clone();
    assert_eq!(id(&first), id(&again));
    s.healthy();
}

#[test]
fn serve_refuses_a_non_loopback_address_without_the_flag() {
    let o = run(&["serve", "--addr", "0.0.0.0:0"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--allow-non-loopback"));
}

#[test]
fn serve_help_shows_the_cards_keys_controls_and_examples() {
    let o = run(&["serve", "--help"]);
    assert_eq!(code(&o), 0);
    let help = stdout(&o);
    for want in [
        "Test cards",
        "ak_4 merchant 1 test read-only",
        "/__sandbox/clock/advance",
        "confirm_payment",
        "list_refunds_processing",
        "Examples:",
        "payhub-verify serve --addr 127.0.0.1:0 --clock manual",
    ] {
        assert!(help.contains(want), "{want}: {help}");
    }
}

/// `--tape FILE`: the session's events in the file as they happen (the lines of
/// `/__sandbox/events`); a long session's record in memory rotates, the verdict still
/// judges every event and says what the record no longer holds, the events export is
/// refused (pointing at the file), and the file, judged, gives the session's verdict.
#[test]
fn serve_tape_file_records_every_event_and_a_long_session_stays_bounded() {
    let tape = temp("session.jsonl", "");
    let mut s = Serve::start("tape", &["--tape", tape.to_str().unwrap()]);
    assert_eq!(s.created("k1", "ORDER-1", 10000).status, 201);
    let events = s.control("GET", "/__sandbox/events", "").body;
    assert!(events.lines().count() > 3, "{events}");
    assert_eq!(
        std::fs::read_to_string(&tape).unwrap(),
        events,
        "as it happens"
    );

    // 16,000 queries of orders that do not exist: past two trace segments.
    std::thread::scope(|scope| {
        for t in 0..4 {
            let s = &s;
            scope.spawn(move || {
                for i in 0..4_000 {
                    let path = format!("/v1/payments?merchant_order_no=NONE-{t}-{i}");
                    let reply = s.answer("GET", &path, &[("Authorization", "Bearer ak_1")], "");
                    assert!(reply.status < 500, "{}", reply.body);
                }
            });
        }
    });
    let verdict = s.verdict();
    assert_eq!(verdict["holds"], true, "{verdict:#}");
    let record = &verdict["record"];
    let judged = record["events_judged"].as_u64().unwrap();
    assert!(record["events_dropped"].as_u64().unwrap() > 0, "{record}");
    assert!(
        record["note"].as_str().unwrap().contains("no longer held"),
        "{record}"
    );
    let refused = s.control("GET", "/__sandbox/events", "");
    assert_eq!(refused.status, 410, "{}", refused.body);
    assert!(refused.body.contains("--tape FILE"), "{}", refused.body);
    // The HAR is whole or refused too: never the exchanges still held, passed as the session.
    let har = s.control("GET", "/__sandbox/har", "");
    assert_eq!(har.status, 410, "{}", har.body);
    assert!(har.body.contains("--tape FILE"), "{}", har.body);
    let page = s.control("GET", "/__sandbox/page.json", "").json();
    assert!(page["note"].as_str().unwrap().contains("no longer held"));

    let file = std::fs::read_to_string(&tape).unwrap();
    assert_eq!(
        file.lines().count() as u64,
        judged,
        "every event is in the file"
    );
    let judge = run(&["judge", tape.to_str().unwrap(), "--format", "json"]);
    let judge: serde_json::Value = serde_json::from_str(&stdout(&judge)).unwrap();
    assert_eq!(
        statuses(&judge["properties"]),
        statuses(&verdict["properties"])
    );

    // A reset starts the file again: it holds one session.
    assert_eq!(s.control("POST", "/__sandbox/reset", "").status, 200);
    assert_eq!(s.created("k1", "ORDER-1", 10000).status, 201);
    let events = s.control("GET", "/__sandbox/events", "").body;
    assert_eq!(std::fs::read_to_string(&tape).unwrap(), events);
    s.healthy();
}

/// `--objects-max N`: the objects the API creates in a session are bounded; past the
/// bound a create is the contract's 429 `rate_limited` with `Retry-After` (not executed),
/// what is held is still read, and a reset starts counting again.
#[test]
fn serve_objects_created_through_the_api_are_bounded_with_the_contracts_429() {
    let mut s = Serve::start("objects-max", &["--objects-max", "3"]);
    for i in 1..=3 {
        let r = s.created(&format!("k{i}"), &format!("ORDER-{i}"), 10000);
        assert_eq!(r.status, 201, "{}", r.body);
    }
    for i in 4..=6 {
        let r = s.created(&format!("k{i}"), &format!("ORDER-{i}"), 10000);
        assert_eq!(r.status, 429, "{}", r.body);
        assert_eq!(r.json()["error"]["code"], "rate_limited", "{}", r.body);
        assert!(r.header("retry-after").is_some(), "{}", r.body);
    }
    let held = s.answer(
        "GET",
        "/v1/payments?merchant_order_no=ORDER-3",
        &[("Authorization", "Bearer ak_1")],
        "",
    );
    assert_eq!(held.status, 200, "{}", held.body);
    let verdict = s.verdict();
    assert_eq!(verdict["holds"], true, "{verdict:#}");
    assert_eq!(s.control("POST", "/__sandbox/reset", "").status, 200);
    assert_eq!(s.created("k7", "ORDER-7", 10000).status, 201);
    s.healthy();
}

/// The merchant journal over HTTP: a post is kept whole (200 with its line count), a
/// malformed line refuses all of it with a 400 naming the line and the field, and an
/// order the sandbox never saw is a clear error; the kept lines are judged.
#[test]
fn serve_the_merchant_journal_is_kept_whole_or_refused_naming_the_line_and_field() {
    let mut s = Serve::start("journal", &[]);
    assert_eq!(s.created("k1", "ORDER-1", 10000).status, 201);
    let bad = "{\"order\":\"ORDER-1\",\"fulfilled\":\"pay_demo_001\"}\n{\"order\":\"ORDER-1\",\"state\":\"shipped\"}\n";
    let refused = s.control("POST", "/__sandbox/journal", bad);
    assert_eq!(refused.status, 400, "{}", refused.body);
    let error = &refused.json()["error"];
    assert_eq!(
        (error["line"].as_u64(), error["field"].as_str()),
        (Some(2), Some("state"))
    );
    let unseen = s.control(
        "POST",
        "/__sandbox/journal",
        "{\"order\":\"ORDER-9\",\"cart\":\"C\"}",
    );
    assert_eq!(unseen.status, 400);
    assert!(
        unseen.body.contains("ORDER-9 was never sent"),
        "{}",
        unseen.body
    );
    let twice = "{\"order\":\"ORDER-1\",\"fulfilled\":\"pay_demo_001\"}\n".repeat(2);
    let kept = s.control("POST", "/__sandbox/journal", &twice);
    assert_eq!((kept.status, kept.json()["lines"].as_u64()), (200, Some(2)));
    let verdict = s.verdict();
    let fulfils = verdict["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "client-fulfils-an-order-once-when-succeeded")
        .unwrap();
    assert_eq!(fulfils["status"], "violated", "{verdict:#}");
    s.healthy();
}

/// `judge` of the events export reaches the sandbox's verdict over the merchant journal:
/// the export ends with the journal's lines as the merchant database's events. Two
/// purchases of one amount at once (the first waits for the acquirer), each its own
/// cart, are not one purchase charged twice; an order fulfilled twice is named.
#[test]
fn serve_judge_of_the_events_export_sees_the_merchant_journal() {
    const TWICE: &str = "client-never-charges-an-order-twice";
    const FULFILS: &str = "client-fulfils-an-order-once-when-succeeded";
    let mut s = Serve::start("journal-judged", &["--clock", "manual"]);
    let slow = r#"{"merchant_order_no":"ORDER-1","amount":100,"currency":"USD","card":"D"}"#;
    let headers = [("Authorization", "Bearer ak_1"), ("Idempotency-Key", "k1")];
    let first = s.answer("POST", "/v1/payments", &headers, slow);
    assert_eq!(first.status, 202, "{}", first.body);
    let second = s.created("k2", "ORDER-2", 100);
    assert_eq!(second.status, 201, "{}", second.body);
    let version = second.json()["version"].as_u64().expect("a version");
    let moved = s.control("POST", "/__sandbox/clock/advance", r#"{"by":"1h"}"#);
    assert_eq!(moved.status, 200);
    let status_of = |v: &serde_json::Value, name: &str| {
        v["properties"]
            .as_array()
            .expect("a list of properties")
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["status"].clone())
            .unwrap_or_default()
    };
    let (judged, _) = s.judged_and_run("journal-judged-before");
    assert_eq!(status_of(&judged, TWICE), "violated", "the wire's reading");
    let paid = format!(
        r#"{{"order":"ORDER-2","state":"paid","payment":"pay_demo_002","version":{version}}}"#
    );
    let journal = [
        r#"{"order":"ORDER-1","cart":"CART-1"}"#,
        r#"{"order":"ORDER-2","cart":"CART-2"}"#,
        &paid,
        r#"{"order":"ORDER-2","fulfilled":"pay_demo_002"}"#,
        r#"{"order":"ORDER-2","fulfilled":"pay_demo_002"}"#,
    ]
    .join("\n");
    let kept = s.control("POST", "/__sandbox/journal", &journal);
    assert_eq!(kept.status, 200, "{}", kept.body);
    let verdict = s.verdict();
    assert_eq!(status_of(&verdict, TWICE), "holds", "{verdict:#}");
    assert_eq!(status_of(&verdict, FULFILS), "violated", "{verdict:#}");
    let (judged, _) = s.judged_and_run("journal-judged");
    assert_eq!(
        statuses(&judged["properties"]),
        statuses(&verdict["properties"])
    );
    s.healthy();
}
