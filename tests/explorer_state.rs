//! The Explorer, without a browser: its state pane is the world in the contract's terms
//! (Payments with status, resolution_status and version; idempotency records; messages in
//! flight in the contract's notation; the ledger; each client's orders), and its steps
//! read as the trace lines they cause, never a Rust `Debug` dump.

mod common;

use common::*;
/// The JSON body of an HTTP answer.
fn json(answer: &str) -> serde_json::Value {
    let body = answer.split("\r\n\r\n").nth(1).expect("a body");
    serde_json::from_str(body).expect("JSON")
}

fn no_debug_dump(text: &str) {
    for raw in ["Some(", "None", "CowMap", "Shared", "{\n", "MsgId("] {
        assert!(!text.contains(raw), "{raw} in:\n{text}");
    }
}

#[test]
fn the_explorers_states_and_steps_read_in_the_contracts_terms() {
    let (mut child, addr) = explorer("create-lossy");
    let init = json(&http_get(&addr, "/.states/"));
    let first = json(&http_get(&addr, "/.states/0"));
    // Follow the first step again: the world after the client's first command.
    let second = json(&http_get(&addr, "/.states/0/0"));
    child.kill().unwrap();
    child.wait().unwrap();

    let state = init[0]["state"].as_str().expect("a state text");
    for part in [
        "time 0.000s",
        "Payments:",
        "Idempotency records:",
        "Messages in flight:",
        "Ledger:",
        "orders:",
    ] {
        assert!(state.contains(part), "{part} not in:\n{state}");
    }
    no_debug_dump(state);

    let step = &first[0];
    let outcome = step["outcome"].as_str().expect("a step text");
    assert!(
        outcome.contains('→') || outcome.contains("merchant-"),
        "{outcome}"
    );
    no_debug_dump(outcome);
    let after = step["state"].as_str().unwrap();
    no_debug_dump(after);

    // Somewhere two steps in, a request is in flight in the contract's notation.
    let texts: Vec<&str> = second
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["state"].as_str())
        .chain([after])
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("→ platform    POST /v1/payments  Idempotency-Key: ")),
        "{texts:#?}"
    );
    for t in texts {
        no_debug_dump(t);
    }
}
