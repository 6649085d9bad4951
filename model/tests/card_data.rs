//! CARD-02: card information is not stored. The whole platform state, serialized and
//! debug-printed, holds no `card` field and no card label at any point: while a charge
//! is in flight, after it, after a replay with another card, after a card retry.

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::harness::Bench;
use payhub_model::*;

use AcquirerDecision::{Approve, Decline};

/// The labels used below; none of them may appear in the platform's state.
const LABELS: [char; 4] = ['A', 'B', 'C', 'D'];

fn assert_no_card_data(b: &Bench, when: &str) {
    let state = serde_json::to_string(&b.platform).expect("the platform serializes");
    assert!(
        !state.contains("\"card\""),
        "{when}: a card field in {state}"
    );
    for label in LABELS {
        let as_json = format!("\"{label}\"");
        assert!(
            !state.contains(&as_json),
            "{when}: card label {label} in {state}"
        );
    }
    let debug = format!("{:?}", b.platform);
    assert!(!debug.contains("Card("), "{when}: a Card in {debug}");
    assert!(!debug.contains("card:"), "{when}: a card field in {debug}");
}

#[test]
fn card_02_platform_state_never_holds_card_data() {
    let mut b = Bench::default();
    assert_no_card_data(&b, "at start");
    // In flight: the executor waits, a waiter with card C waits too.
    let first = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    let waiter = b.send_with(
        req::create("K", "ORDER-001", 10000, "USD", 'C'),
        Branch::S5Wait,
    );
    assert_no_card_data(&b, "while the charge is in flight");
    b.upstream(Decline);
    assert_eq!(b.answered(first).status, 201);
    assert_eq!(b.answered(waiter).status, 200);
    assert_no_card_data(&b, "after the charge");
    // A replay with card B.
    let replay = call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'B'));
    assert_eq!(replay.status, 200);
    assert_no_card_data(&b, "after a replay with card B");
    // A card retry with card B, and its replay with card D.
    let retry = b.send(req::confirm("K2", PaymentId(1), 'B'));
    assert_no_card_data(&b, "while the retry is in flight");
    b.upstream(Approve);
    assert_eq!(b.answered(retry).status, 200);
    call(&mut b, req::confirm("K2", PaymentId(1), 'D'));
    b.advance(Millis::days(8));
    assert_no_card_data(&b, "after the card retry, its replay and a week");
    // The check has teeth: the acquirer, the ground truth, does hold the cards it charged.
    let acquirer = serde_json::to_string(&b.acquirer).expect("the acquirer serializes");
    assert!(acquirer.contains("\"card\":\"A\""));
    assert!(acquirer.contains("\"card\":\"B\""));
    assert_eq!(b.acquirer.ledger.captures_on(Card('B')), 1);
    assert_eq!(b.acquirer.ledger.captures_on(Card('C')), 0);
    assert_eq!(b.acquirer.ledger.captures_on(Card('D')), 0);
}

#[test]
fn card_02_responses_and_webhooks_carry_no_card_data_either() {
    let mut b = Bench::default();
    let id = b.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    call(&mut b, req::create("K", "ORDER-001", 10000, "USD", 'B'));
    b.advance(Millis::hours(1));
    assert_eq!(b.answered(id).status, 201);
    let shown = serde_json::to_string(&(&b.responses, &b.webhooks)).expect("serializes");
    assert!(!shown.contains("\"card\""), "{shown}");
    assert!(
        !shown.contains("\"A\"") && !shown.contains("\"B\""),
        "{shown}"
    );
}
