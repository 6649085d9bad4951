//! The wire facts over hand-written exchanges: a witness shows every answer that
//! reached the client before it was noted, and foreign answers are read for what they
//! hold.

use super::*;
use payhub_model::observation::Dialect;
use payhub_model::observed::Shape;
use payhub_model::{CreatePaymentBody, RefundBody};

pub(super) const OWNER: (MerchantId, Environment) = (MerchantId(1), Environment::Test);

pub(super) fn facts() -> WireFacts {
    WireFacts::new([(ApiKeyId(1), OWNER)])
}

pub(super) fn create(key: &str, order: &str, amount: i64) -> ApiRequest {
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

pub(super) fn send(w: &mut WireFacts, at: u64, id: u32, request: ApiRequest) {
    w.observe(
        Millis(at),
        &What::Sent {
            id: RequestId(id),
            from: 0,
            request,
        },
    );
}

pub(super) fn answer(w: &mut WireFacts, at: u64, id: u32, status: u16, body: &str, shape: Shape) {
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
    // An unknown outcome first (the client waited its 20 s): it may have executed.
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    w.observe(
        Millis(20_000),
        &What::TimedOut {
            node: 0,
            id: RequestId(1),
        },
    );
    send(&mut w, 20_010, 2, create("k-1", "O-1", 100));
    answer(&mut w, 20_015, 2, 429, limited, pay);
    send(&mut w, 20_020, 3, create("k-1", "O-1", 100));
    answer(&mut w, 20_025, 3, 200, r#"{"id":"p1"}"#, pay);
    // A request of the scope still open: it may be the one that executed.
    send(&mut w, 20_030, 4, create("k-3", "O-3", 100));
    answer(&mut w, 20_035, 4, 429, limited, pay);
    send(&mut w, 20_040, 5, create("k-3", "O-3", 100));
    send(&mut w, 20_041, 6, create("k-3", "O-3", 100));
    answer(&mut w, 20_045, 6, 200, r#"{"id":"p3"}"#, pay);
    assert!(w.witnesses.is_empty(), "{:?}", w.witnesses.keys());
}

pub(super) fn with_card(mut r: ApiRequest, card: char) -> ApiRequest {
    if let Endpoint::CreatePayment {
        body: Json::Parsed(b),
    } = &mut r.endpoint
    {
        b.card = Some(payhub_model::Card(card));
    }
    r
}

pub(super) fn confirm(w: &mut WireFacts, key: &str, payment: &str, card: char) -> ApiRequest {
    ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: Some(key.into()),
        endpoint: Endpoint::ConfirmPayment {
            payment_id: PaymentId(w.ids.intern(IdKind::Payment, payment)),
            body: Json::Parsed(payhub_model::ConfirmBody {
                card: Some(payhub_model::Card(card)),
            }),
        },
    }
}

pub(super) fn refund(
    w: &mut WireFacts,
    key: &str,
    payment: &str,
    number: &str,
    amount: i64,
) -> ApiRequest {
    ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: Some(key.into()),
        endpoint: Endpoint::CreateRefund {
            body: Json::Parsed(RefundBody {
                payment_id: Some(PaymentId(w.ids.intern(IdKind::Payment, payment))),
                merchant_refund_no: Some(number.into()),
                amount: Some(amount),
            }),
        },
    }
}

/// REFUND-03: a refund accepted beyond its Payment's amount, counting the refunds already
/// shown succeeded; within it, nothing.
#[test]
fn a_refund_beyond_the_payments_amount_is_noted_with_the_payments_sighting() {
    let pay = Shape::One(IdKind::Payment);
    let re = Shape::One(IdKind::Refund);
    for (first, second, breach) in [(60, 40, false), (60, 41, true), (150, 0, true)] {
        let mut w = facts();
        send(&mut w, 0, 1, create("k-1", "O-1", 100));
        answer(&mut w, 1, 1, 201, r#"{"id":"p1","amount":100}"#, pay);
        let r = refund(&mut w, "k-2", "p1", "R-1", first);
        send(&mut w, 2, 2, r);
        let body =
            format!(r#"{{"id":"r1","payment_id":"p1","amount":{first},"status":"succeeded"}}"#);
        answer(&mut w, 3, 2, 201, &body, re);
        if second > 0 {
            let r = refund(&mut w, "k-3", "p1", "R-2", second);
            send(&mut w, 4, 3, r);
            let body = format!(
                r#"{{"id":"r2","payment_id":"p1","amount":{second},"status":"processing"}}"#
            );
            answer(&mut w, 5, 3, 201, &body, re);
        }
        let w = w.witnesses.get(&Breach::RefundBeyondAmount);
        assert_eq!(w.is_some(), breach, "{first} then {second}");
        if let Some(w) = w {
            assert_eq!(
                w.entries[0].id,
                RequestId(1),
                "the Payment's sighting first"
            );
        }
    }
}

/// ATTEMPT-01/02: an attempt started on a card, then a newer attempt shown: kept per
/// card, with the exchange that started the first; ATTEMPT-05: the most attempts shown.
#[test]
fn a_newer_attempt_after_a_cards_attempt_is_kept_per_card() {
    let pay = Shape::One(IdKind::Payment);
    let mut w = facts();
    send(&mut w, 0, 1, with_card(create("k-1", "O-1", 100), 'G'));
    answer(
        &mut w,
        1,
        1,
        202,
        r#"{"id":"p1","status":"processing","attempt_count":1}"#,
        pay,
    );
    let c = confirm(&mut w, "k-2", "p1", 'A');
    send(&mut w, 2, 2, c);
    answer(
        &mut w,
        3,
        2,
        200,
        r#"{"id":"p1","status":"succeeded","attempt_count":2}"#,
        pay,
    );
    let renewed = &w.renewed_attempts[&payhub_model::Card('G')];
    let ids: Vec<RequestId> = renewed.entries.iter().map(|e| e.id).collect();
    assert_eq!(ids, [RequestId(1), RequestId(2)]);
    assert!(!w.renewed_attempts.contains_key(&payhub_model::Card('A')));
    assert_eq!(w.most_attempts.as_deref().map(|(n, _)| *n), Some(2));
    // The confirm was in the log: no attempt without one.
    assert!(!w.witnesses.contains_key(&Breach::AttemptWithoutConfirm));
}

/// CARD-03: a replay of a create shown with more attempts than its first answer, no
/// confirm sent between, is noted; with a confirm between, it is not.
#[test]
fn more_attempts_with_no_confirm_between_is_noted() {
    let pay = Shape::One(IdKind::Payment);
    for confirmed in [false, true] {
        let mut w = facts();
        send(&mut w, 0, 1, with_card(create("k-1", "O-1", 100), 'B'));
        answer(
            &mut w,
            1,
            1,
            201,
            r#"{"id":"p1","status":"failed","attempt_count":1}"#,
            pay,
        );
        if confirmed {
            let c = confirm(&mut w, "k-2", "p1", 'B');
            send(&mut w, 2, 3, c);
            answer(
                &mut w,
                3,
                3,
                200,
                r#"{"id":"p1","status":"failed","attempt_count":2}"#,
                pay,
            );
        }
        send(&mut w, 4, 2, with_card(create("k-1", "O-1", 100), 'A'));
        let shown = if confirmed { 3 } else { 2 };
        let body = format!(r#"{{"id":"p1","status":"succeeded","attempt_count":{shown}}}"#);
        answer(&mut w, 5, 2, 200, &body, pay);
        let noted = w.witnesses.get(&Breach::AttemptWithoutConfirm);
        if confirmed {
            // The confirm's own answer shows its attempt: the replay's rise past it is
            // judged from that answer.
            let n = noted.map(|w| w.entries[0].id);
            assert_eq!(n, Some(RequestId(3)), "judged from the confirm's sighting");
        } else {
            let ids: Vec<RequestId> = noted.unwrap().entries.iter().map(|e| e.id).collect();
            assert_eq!(ids, [RequestId(1), RequestId(2)]);
        }
    }
}

/// KEY-07: the shortest printable key refused 400 about the `Idempotency-Key` is kept,
/// counted in UTF-16 code units, a key outside printable ASCII apart; a key with a
/// control character is not.
#[test]
fn the_shortest_printable_key_refused_is_kept() {
    let pay = Shape::One(IdKind::Payment);
    let refused = r#"{"error":{"code":"bad_key","field":"Idempotency-Key"}}"#;
    let mut w = facts();
    let long = "é".repeat(200);
    send(&mut w, 0, 1, create(&long, "O-1", 100));
    answer(&mut w, 1, 1, 400, refused, pay);
    send(&mut w, 2, 2, create("a\tb", "O-2", 100));
    answer(&mut w, 3, 2, 400, refused, pay);
    send(&mut w, 4, 3, create("k-3", "O-3", 100));
    answer(
        &mut w,
        5,
        3,
        400,
        r#"{"error":{"code":"bad_amount","field":"amount"}}"#,
        pay,
    );
    // Not printable ASCII: kept apart (A-KEY-LENGTH), a breach only beside an
    // accepted one.
    assert!(w.shortest_refused_key.is_none());
    let (units, seen) = w.shortest_refused_other_key.as_deref().expect("kept");
    assert_eq!((*units, seen.id), (200, RequestId(1)));
    assert!(!w.other_key_accepted);
    send(&mut w, 6, 4, create("é-4", "O-4", 100));
    answer(
        &mut w,
        7,
        4,
        201,
        r#"{"id":"pay_4","status":"succeeded"}"#,
        pay,
    );
    assert!(w.other_key_accepted);
    send(&mut w, 8, 5, create("k-5", "O-5", 100));
    answer(&mut w, 9, 5, 400, refused, pay);
    let (units, seen) = w.shortest_refused_key.as_deref().expect("kept");
    assert_eq!((*units, seen.id), (3, RequestId(5)));
}

/// UNKNOWN-03: a create answered 202 names its Payment, not its result: the same purchase
/// under a new order number, or the order under a new key, is a breach until an answer
/// other than a 202 shows the Payment.
#[test]
fn a_202_leaves_the_result_unknown() {
    let pay = Shape::One(IdKind::Payment);
    let processing = r#"{"id":"pay_1","merchant_order_no":"O-1","status":"processing"}"#;
    for (renumbered, breach) in [
        (true, Breach::NewOrderNoAfterUnknown),
        (false, Breach::NewKeyAfterUnknown),
    ] {
        let mut w = facts();
        send(&mut w, 0, 1, create("k-1", "O-1", 100));
        answer(&mut w, 15_000, 1, 202, processing, pay);
        let order = if renumbered { "O-1-retry" } else { "O-1" };
        send(&mut w, 20_000, 2, create("k-2", order, 100));
        let ids: Vec<RequestId> = w.witnesses[&breach].entries.iter().map(|e| e.id).collect();
        assert_eq!(ids, [RequestId(1), RequestId(2)], "{breach:?}");
    }
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    answer(&mut w, 15_000, 1, 202, processing, pay);
    send(&mut w, 16_000, 2, create("k-1", "O-1", 100));
    let succeeded = r#"{"id":"pay_1","merchant_order_no":"O-1","status":"succeeded"}"#;
    answer(&mut w, 17_000, 2, 200, succeeded, pay);
    send(&mut w, 20_000, 3, create("k-3", "O-2", 100));
    assert!(!w.witnesses.contains_key(&Breach::NewOrderNoAfterUnknown));
}

/// RET-01: a key sent again past the retention with other parameters, or on another
/// endpoint, is judged as a new key, however few exchanges came between.
#[test]
fn a_key_is_forgotten_after_the_retention() {
    let pay = Shape::One(IdKind::Payment);
    let ok = r#"{"id":"pay_1","status":"succeeded"}"#;
    let later = crate::wire::RECORDS_KEPT.0 + 1;
    let mut w = facts().keeping(crate::wire::RECORDS_KEPT);
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    answer(&mut w, 1, 1, 201, ok, pay);
    send(&mut w, later, 2, create("k-1", "O-2", 500));
    assert!(!w.witnesses.contains_key(&Breach::ParamsChangedUnderKey));
    let mut w = facts().keeping(crate::wire::RECORDS_KEPT);
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    send(&mut w, 1, 2, create("k-1", "O-2", 500));
    assert!(w.witnesses.contains_key(&Breach::ParamsChangedUnderKey));
}

/// CKO-01: a checkout session naming another Payment than its order's is a second
/// Payment for the order; one naming the order's Payment is not.
#[test]
fn a_checkout_session_names_its_orders_payment() {
    let pay = Shape::One(IdKind::Payment);
    let cs = Shape::One(IdKind::Session);
    for (shown, breach) in [("pay_1", false), ("pay_2", true)] {
        let mut w = facts();
        send(&mut w, 0, 1, create("k-1", "O-1", 100));
        answer(
            &mut w,
            1,
            1,
            201,
            r#"{"id":"pay_1","merchant_order_no":"O-1"}"#,
            pay,
        );
        let session = ApiRequest {
            api_key: ApiKeyId(1),
            idempotency_key: Some("k-2".into()),
            endpoint: Endpoint::CreateCheckoutSession {
                body: Json::Parsed(payhub_model::SessionBody {
                    merchant_order_no: Some("O-1".into()),
                    amount: Some(100),
                    currency: Some("USD".into()),
                }),
            },
        };
        send(&mut w, 2, 2, session);
        let body = format!(r#"{{"id":"cs_1","payment_id":"{shown}"}}"#);
        answer(&mut w, 3, 2, 201, &body, cs);
        assert_eq!(
            w.witnesses.contains_key(&Breach::TwoPaymentsForOrder),
            breach,
            "{shown}"
        );
    }
}

/// KEY-01..KEY-06: a create with no key, an empty one or an ASCII one of 256 characters
/// answered 2xx is a breach; one of 255 characters, or refused 400, is not.
#[test]
fn a_create_without_a_valid_key_answered_2xx_is_a_breach() {
    let pay = Shape::One(IdKind::Payment);
    let ok = r#"{"id":"pay_1","status":"succeeded"}"#;
    let refused = r#"{"error":{"code":"bad_key","field":"Idempotency-Key"}}"#;
    let mut w = facts();
    send(&mut w, 0, 1, create(&"k".repeat(255), "O-1", 100));
    answer(&mut w, 1, 1, 201, ok, pay);
    let mut missing = create("", "O-2", 100);
    missing.idempotency_key = None;
    send(&mut w, 2, 2, missing);
    answer(&mut w, 3, 2, 400, refused, pay);
    assert!(!w.witnesses.contains_key(&Breach::InvalidKeyAccepted));
    for (id, key) in [
        (3, None),
        (4, Some(String::new())),
        (5, Some("k".repeat(256))),
    ] {
        let mut w = facts();
        let mut r = create("", "O-3", 100);
        r.idempotency_key = key.map(Into::into);
        send(&mut w, 0, id, r);
        answer(&mut w, 1, id, 201, ok, pay);
        let noted = w.witnesses.get(&Breach::InvalidKeyAccepted);
        assert_eq!(noted.map(|w| w.entries[0].id), Some(RequestId(id)));
    }
}

/// CONFLICT-01, CONC-02: a request of a key sent while its execution was in flight is
/// judged too: answered 2xx with other parameters (whichever was taken first), or with
/// another object for the same parameters, it is kept as a replay of the execution; its
/// 409 operation_in_progress is not (A-CONFLICT-IN-FLIGHT reads it two ways).
#[test]
fn a_request_sent_while_its_keys_execution_is_in_flight_is_judged() {
    let pay = Shape::One(IdKind::Payment);
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    send(&mut w, 1, 2, create("k-1", "O-1", 200));
    answer(&mut w, 5, 2, 201, r#"{"id":"p2"}"#, pay);
    answer(&mut w, 6, 1, 201, r#"{"id":"p1"}"#, pay);
    let witness = &w.soonest_replays[&Breach::ConflictMissing];
    let ids: Vec<_> = witness.entries.iter().map(|e| e.id).collect();
    assert_eq!(
        ids,
        [RequestId(2), RequestId(1)],
        "the execution, then the other"
    );

    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    send(&mut w, 1, 2, create("k-1", "O-1", 100));
    answer(&mut w, 5, 1, 201, r#"{"id":"p1"}"#, pay);
    answer(&mut w, 6, 2, 200, r#"{"id":"p9"}"#, pay);
    assert!(w.soonest_replays.contains_key(&Breach::ReplayNotSameObject));

    // The same object, or an in-flight 409, is no breach.
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    send(&mut w, 1, 2, create("k-1", "O-1", 100));
    send(&mut w, 2, 3, create("k-1", "O-1", 300));
    answer(&mut w, 5, 1, 201, r#"{"id":"p1"}"#, pay);
    answer(&mut w, 6, 2, 200, r#"{"id":"p1"}"#, pay);
    let in_progress = r#"{"error":{"code":"operation_in_progress","message":"busy"}}"#;
    answer(&mut w, 7, 3, 409, in_progress, pay);
    assert!(w.soonest_replays.is_empty(), "{:?}", w.soonest_replays);
}

/// WEBHOOK-02 read in the millisecond an answer came: a request sent after it in an event
/// stream (the fold's order) is after it; in a log ordered by its stamps alone, which came
/// first is unknown, so a lower version then is not noted.
#[test]
fn a_request_in_the_millisecond_of_an_answer_is_after_it_only_where_the_order_is_kept() {
    let pay = Shape::One(IdKind::Payment);
    let went_back = |w: WireFacts| {
        let mut w = w;
        send(&mut w, 0, 1, create("k-1", "O-1", 100));
        answer(&mut w, 5, 1, 200, r#"{"id":"p1","version":3}"#, pay);
        send(&mut w, 5, 2, create("k-2", "O-2", 100));
        answer(&mut w, 9, 2, 200, r#"{"id":"p1","version":2}"#, pay);
        w.witnesses.contains_key(&Breach::VersionWentBack)
    };
    assert!(went_back(facts()));
    assert!(!went_back(facts().ties_unordered()));
}

#[test]
fn a_record_packs_an_exchange_and_reads_it_back_whole() {
    use payhub_model::observation::VersionMark;
    let answer = Answer {
        status: 409,
        code: Some(ErrorCode::OrderNoConflict),
        unnamed_code: Some("über_limit".into()),
        object: Some("pay_557eff458b794164bc1a".into()),
        version: Some(VersionMark::Number(-(1i128 << 100))),
        retry_after_s: Some(u32::MAX),
        related: true,
        related_id: Some("pay_b".into()),
        attempt_count: Some(0),
        amount: Some(i64::MIN),
    };
    let seen = Seen {
        id: RequestId(7),
        sent: Millis(5),
        closed: Millis(u64::MAX),
        method: Method::Post,
        path: "/v1/refunds?x=1&é=2".into(),
        key: Some("k".repeat(300).as_str().into()),
        params: WireParams::Refund {
            payment_id: Some("p-1".into()),
            merchant_refund_no: None,
            amount: Some(-3),
        },
        answer: Some(answer.clone()),
        open: false,
    };
    let r = record::Record::of(&seen, (1, u64::MAX));
    assert_eq!(r.seen(), seen);
    assert_eq!(
        (r.seqs(), r.key(), r.path().as_str()),
        ((1, u64::MAX), seen.key.as_deref(), "/v1/refunds?x=1&é=2")
    );
    assert_eq!(
        (r.params(), r.answer()),
        (seen.params.clone(), Some(answer.clone()))
    );
    // Every other shape: no key, no answer, an order, a version as text.
    let order = WireParams::Order {
        merchant_order_no: Some("O-1".into()),
        amount: None,
        currency: Some("USD".into()),
    };
    let version = Some(VersionMark::Text("2026-12-01T00:00:00Z".into()));
    for (key, params, answer) in [
        (None, WireParams::None, None),
        (
            Some("".into()),
            order,
            Some(Answer {
                version,
                ..Answer::default()
            }),
        ),
    ] {
        let seen = Seen {
            key,
            params,
            answer,
            ..seen.clone()
        };
        let r = record::Record::of(&seen, (0, 0));
        assert_eq!(r.seen(), seen);
        // Closed, it is what packing it closed gives, byte for byte.
        let open = record::Record::of(
            &Seen {
                answer: None,
                ..seen.clone()
            },
            (3, 3),
        );
        let closed = open.closed(seen.closed, 9, seen.answer.as_ref());
        assert_eq!(
            closed.seen(),
            Seen {
                open: false,
                ..seen.clone()
            }
        );
        assert_eq!(
            format!("{closed:?}"),
            format!("{:?}", record::Record::of(&seen, (3, 9)))
        );
        assert!(r.path_is(&seen.path) && !r.path_is("/v1/refunds") && r.same_path(&open));
        assert!(r.same_params(&open));
        assert_eq!(r.has_params(), seen.params != WireParams::None);
    }
}

/// ORDER-01: a 409 order_no_conflict names the order's Payment; one naming another
/// Payment is a breach, one naming the order's (as written) is not.
#[test]
fn an_order_conflict_names_the_orders_payment() {
    let conflict = |named: &str| {
        let mut w = facts();
        let pay = Shape::One(IdKind::Payment);
        send(&mut w, 0, 1, create("k-1", "O-1", 100));
        let body = r#"{"id":"pay_a","merchant_order_no":"O-1","status":"succeeded"}"#;
        answer(&mut w, 5, 1, 201, body, pay);
        send(&mut w, 10, 2, create("k-2", "O-1", 100));
        let e = format!(
            r#"{{"error":{{"code":"order_no_conflict","related_resource_id":"{named}"}}}}"#
        );
        answer(&mut w, 15, 2, 409, &e, pay);
        w.witnesses.remove(&Breach::RelatedResourceOther)
    };
    assert!(conflict("pay_a").is_none());
    let w = conflict("pay_b").expect("another order's Payment named");
    let ids: Vec<_> = w.entries.iter().map(|e| e.id.0).collect();
    assert_eq!(ids, [1, 2]);
    let named = w.entries[1]
        .answer
        .as_ref()
        .and_then(|a| a.related_id.clone());
    assert_eq!(named.as_deref(), Some("pay_b"));
}
