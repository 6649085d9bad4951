//! The wire facts over hand-written exchanges: a witness shows every answer that
//! reached the client before it was noted, and foreign answers are read for what they
//! hold.

use super::*;
use payhub_model::observation::Dialect;
use payhub_model::observed::Shape;
use payhub_model::{CreatePaymentBody, RefundBody};

const OWNER: (MerchantId, Environment) = (MerchantId(1), Environment::Test);

fn facts() -> WireFacts {
    WireFacts::new([(ApiKeyId(1), OWNER)])
}

fn create(key: &str, order: &str, amount: i64) -> ApiRequest {
    ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: Some(key.into()),
        endpoint: Endpoint::CreatePayment {
            body: Json::Parsed(CreatePaymentBody {
                merchant_order_no: Some(order.into()),
                amount: Some(amount),
                currency: Some("USD".into()),
                card: None,
            }),
        },
    }
}

fn send(w: &mut WireFacts, at: u64, id: u32, request: ApiRequest) {
    w.observe(
        Millis(at),
        &What::Sent {
            id: RequestId(id),
            from: 0,
            request,
        },
    );
}

fn answer(w: &mut WireFacts, at: u64, id: u32, status: u16, body: &str, shape: Shape) {
    let a = ObservedAnswer::read(
        status,
        None,
        body.as_bytes(),
        shape,
        &Dialect::default(),
        &mut w.ids,
    )
    .expect("a JSON body");
    w.answered(Millis(at), RequestId(id), &a);
}

/// A witness noted after its first exchange closed shows that exchange's answer (it
/// was printed "no answer recorded (the log ends first)" when the record kept was the
/// one taken at its send).
#[test]
fn a_witness_shows_the_answer_of_an_exchange_closed_before_it_was_noted() {
    let mut w = facts();
    let pay = Shape::One(IdKind::Payment);
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    answer(
        &mut w,
        5,
        1,
        201,
        r#"{"id":"p1","status":"succeeded"}"#,
        pay,
    );
    let refund = ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: Some("k-1".into()),
        endpoint: Endpoint::CreateRefund {
            body: Json::Parsed(RefundBody::default()),
        },
    };
    send(&mut w, 10, 2, refund);
    let witness = &w.witnesses[&Breach::KeyOnTwoEndpoints];
    let first = &witness.entries[0];
    assert!(!first.open, "{first:?}");
    assert_eq!(first.answer.as_ref().map(|a| a.status), Some(201));
    // The same for a key re-sent with other parameters.
    send(&mut w, 20, 3, create("k-2", "O-2", 100));
    answer(&mut w, 25, 3, 201, r#"{"id":"p2"}"#, pay);
    send(&mut w, 30, 4, create("k-2", "O-2", 200));
    let first = &w.witnesses[&Breach::ParamsChangedUnderKey].entries[0];
    assert_eq!(first.answer.as_ref().map(|a| a.status), Some(201));
}

/// Foreign ids, partial bodies and extra fields: a replay answered with another object
/// is found, and the witness names the objects as the platform wrote them.
#[test]
fn foreign_answers_are_judged_on_what_they_hold() {
    let mut w = facts();
    let pay = Shape::One(IdKind::Payment);
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    let first =
        r#"{"id":"pay_557eff458b794164bc1a","object":"payment","version":4,"livemode":false}"#;
    answer(&mut w, 5, 1, 201, first, pay);
    send(&mut w, 10, 2, create("k-1", "O-1", 100));
    answer(
        &mut w,
        15,
        2,
        200,
        r#"{"id":"pay_000000000000000000aa"}"#,
        pay,
    );
    let witness = &w.soonest_replays[&Breach::ReplayNotSameObject];
    let objects: Vec<_> = witness
        .entries
        .iter()
        .filter_map(|e| e.answer.as_ref()?.object.clone())
        .collect();
    assert_eq!(
        objects,
        ["pay_557eff458b794164bc1a", "pay_000000000000000000aa"]
    );
    // Two Payments for one order number: the second create's body does not repeat the
    // order number; the request named it.
    assert!(w.witnesses.contains_key(&Breach::TwoPaymentsForOrder));
}

/// RATE-01, REJECT-01: a scope refused then answered as executed is kept with its first
/// refusal; not when a request of the scope had an unknown outcome, nor while one is
/// open (either may have executed).
#[test]
fn refusals_then_an_execution_are_kept_only_when_nothing_else_could_explain_it() {
    let pay = Shape::One(IdKind::Payment);
    let limited = r#"{"error":{"code":"rate_limited"}}"#;
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    answer(&mut w, 5, 1, 429, limited, pay);
    send(&mut w, 10, 2, create("k-1", "O-1", 100));
    answer(&mut w, 15, 2, 200, r#"{"id":"p1"}"#, pay);
    let ids: Vec<_> = w.witnesses[&Breach::RefusedThenExecuted]
        .entries
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, [RequestId(1), RequestId(2)]);
    // A 422, then 409 idempotency_conflict for the corrected request.
    send(&mut w, 20, 3, create("k-2", "O-2", 100));
    answer(
        &mut w,
        25,
        3,
        422,
        r#"{"error":{"code":"invalid_request"}}"#,
        pay,
    );
    send(&mut w, 30, 4, create("k-2", "O-2", 200));
    let conflict = r#"{"error":{"code":"idempotency_conflict"}}"#;
    answer(&mut w, 35, 4, 409, conflict, pay);
    assert!(w.witnesses.contains_key(&Breach::RejectedThenBound));
    // An unknown outcome first: it may have executed.
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    w.observe(
        Millis(5),
        &What::TimedOut {
            node: 0,
            id: RequestId(1),
        },
    );
    send(&mut w, 10, 2, create("k-1", "O-1", 100));
    answer(&mut w, 15, 2, 429, limited, pay);
    send(&mut w, 20, 3, create("k-1", "O-1", 100));
    answer(&mut w, 25, 3, 200, r#"{"id":"p1"}"#, pay);
    // A request of the scope still open: it may be the one that executed.
    send(&mut w, 30, 4, create("k-3", "O-3", 100));
    answer(&mut w, 35, 4, 429, limited, pay);
    send(&mut w, 40, 5, create("k-3", "O-3", 100));
    send(&mut w, 41, 6, create("k-3", "O-3", 100));
    answer(&mut w, 45, 6, 200, r#"{"id":"p3"}"#, pay);
    assert!(w.witnesses.is_empty(), "{:?}", w.witnesses.keys());
}
