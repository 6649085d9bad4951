//! The wire facts' patterns over the client's requests: a confirm, a refund or a create
//! sent again under another key or number while unresolved, a card retry, the
//! contract's timeouts and the query schedule.

use super::tests::{OWNER, answer, confirm, create, facts, refund, send};
use super::*;
use payhub_model::observed::Shape;

/// UNKNOWN-03, S8: a confirm lost (500), then a confirm of the Payment under a new key is
/// noted; the same key is not; after the Payment is shown succeeded, nothing is
/// unresolved. A Payment shown processing by its create: a confirm under any key is new
/// business for it (S8).
#[test]
fn a_new_confirm_key_while_the_payment_is_unresolved_is_noted() {
    let pay = Shape::One(IdKind::Payment);
    for (second_key, shown_first, breach) in [
        ("f-2", None, true),
        ("f-1", None, false),
        ("f-2", Some("succeeded"), false),
        ("f-2", Some("requires_action"), true),
    ] {
        let mut w = facts();
        confirmed(&mut w, 'A', 500, r#"{"error":{"code":"internal_error"}}"#);
        if let Some(status) = shown_first {
            let get = ApiRequest {
                api_key: ApiKeyId(1),
                idempotency_key: None,
                endpoint: Endpoint::GetPayment {
                    payment_id: PaymentId(w.ids.intern(IdKind::Payment, "p1")),
                },
            };
            send(&mut w, 4, 3, get);
            let body = format!(r#"{{"id":"p1","status":"{status}"}}"#);
            answer(&mut w, 5, 3, 200, &body, pay);
        }
        let c = confirm(&mut w, second_key, "p1", 'A');
        send(&mut w, 20_000, 4, c);
        let noted = w.witnesses.get(&Breach::NewConfirmKeyWhileUnresolved);
        assert_eq!(
            noted.is_some(),
            breach,
            "{second_key} after {shown_first:?}"
        );
        if let Some(n) = noted {
            assert_eq!(n.entries[1].id, RequestId(4));
        }
    }
}

/// A Payment p1 created, then its refund R-1 (key r-1, 30) answered 502: unknown.
fn a_lost_refund() -> WireFacts {
    let mut w = facts();
    send(&mut w, 0, 1, create("c-1", "O-1", 100));
    let paid = r#"{"id":"p1","status":"succeeded"}"#;
    answer(&mut w, 1, 1, 201, paid, Shape::One(IdKind::Payment));
    let r = refund(&mut w, "r-1", "p1", "R-1", 30);
    send(&mut w, 2, 2, r);
    let lost = r#"{"error":{"code":"internal_error"}}"#;
    answer(&mut w, 3, 2, 502, lost, Shape::One(IdKind::Refund));
    w
}

/// S11: a refund lost, then the same Payment and amount under a new refund number is
/// noted; another amount, or after the refund was shown succeeded, is not.
#[test]
fn a_new_refund_number_while_the_refund_is_unresolved_is_noted() {
    let re = Shape::One(IdKind::Refund);
    for (amount, shown, breach) in [(30, false, true), (31, false, false), (30, true, false)] {
        let mut w = a_lost_refund();
        if shown {
            let r = refund(&mut w, "r-1", "p1", "R-1", 30);
            send(&mut w, 4, 3, r);
            let body = r#"{"id":"r1","payment_id":"p1","merchant_refund_no":"R-1","amount":30,"status":"succeeded"}"#;
            answer(&mut w, 5, 3, 200, body, re);
        }
        let r = refund(&mut w, "r-2", "p1", "R-2", amount);
        send(&mut w, 6, 4, r);
        let noted = w.witnesses.get(&Breach::NewRefundNoWhileUnresolved);
        assert_eq!(noted.is_some(), breach, "{amount}, shown {shown}");
    }
}

/// S11 ("retry with K"): a refund lost, then its refund number under another key is
/// noted; under the same key it is not.
#[test]
fn a_refund_number_under_a_new_key_while_unresolved_is_noted() {
    for (key, breach) in [("r-2", true), ("r-1", false)] {
        let mut w = a_lost_refund();
        let r = refund(&mut w, key, "p1", "R-1", 30);
        send(&mut w, 4, 3, r);
        let noted = w.witnesses.get(&Breach::NewRefundKeyWhileUnresolved);
        assert_eq!(noted.is_some(), breach, "{key}");
    }
}

/// ATTEMPT-02: after the Payment was shown failed, a confirm under the failed confirm's
/// key is noted; under a new key it is not.
#[test]
fn a_card_retry_under_the_failed_confirms_key_is_noted() {
    for (key, breach) in [("f-1", true), ("f-2", false)] {
        let mut w = facts();
        confirmed(&mut w, 'B', 200, r#"{"id":"p1","status":"failed"}"#);
        let c = confirm(&mut w, key, "p1", 'A');
        send(&mut w, 4, 3, c);
        let noted = w.witnesses.get(&Breach::CardRetryUnderFailedKey);
        assert_eq!(noted.is_some(), breach, "{key}");
    }
}

/// ATTEMPT-03, RATE-03, S2: a card retry's key refused (429), lost or answered 5xx bound
/// nothing: a query that still shows the earlier attempt's failure does not make sending
/// that key again a card retry under a failed key; once its confirm was answered 2xx
/// and the Payment is shown failed, it does.
#[test]
fn a_key_that_bound_nothing_is_retried_as_sent() {
    let pay = Shape::One(IdKind::Payment);
    let failed = r#"{"id":"p1","status":"failed"}"#;
    for (second, breach) in [
        (Some((429, r#"{"error":{"code":"rate_limited"}}"#)), false),
        (Some((500, r#"{"error":{"code":"internal_error"}}"#)), false),
        (None, false),
        (Some((202, r#"{"id":"p1","status":"processing"}"#)), true),
    ] {
        let mut w = facts();
        confirmed(&mut w, 'B', 200, failed);
        let c = confirm(&mut w, "f-2", "p1", 'A');
        send(&mut w, 4, 3, c);
        if let Some((status, body)) = second {
            answer(&mut w, 5, 3, status, body, pay);
        }
        let q = query(&mut w, "p1");
        send(&mut w, 30_000, 4, q);
        answer(&mut w, 30_001, 4, 200, failed, pay);
        let c = confirm(&mut w, "f-2", "p1", 'A');
        send(&mut w, 40_000, 5, c);
        let noted = w.witnesses.contains_key(&Breach::CardRetryUnderFailedKey);
        assert_eq!(noted, breach, "{second:?}");
    }
}

/// RATE-03, S13: a create answered 429 or 503, then the same order under a new key is
/// noted; the same key is not, nor a new key after the order was executed.
#[test]
fn a_new_key_after_a_refusal_is_noted() {
    let pay = Shape::One(IdKind::Payment);
    for (status, key, executed_between, breach) in [
        (503, "k-2", false, true),
        (429, "k-2", false, true),
        (503, "k-1", false, false),
        (503, "k-2", true, false),
    ] {
        let mut w = facts();
        send(&mut w, 0, 1, create("k-1", "O-1", 100));
        let body = r#"{"error":{"code":"temporarily_unavailable"}}"#;
        answer(&mut w, 1, 1, status, body, pay);
        if executed_between {
            send(&mut w, 2, 2, create("k-1", "O-1", 100));
            answer(
                &mut w,
                3,
                2,
                201,
                r#"{"id":"p1","status":"succeeded"}"#,
                pay,
            );
        }
        send(&mut w, 4, 3, create(key, "O-1", 100));
        let noted = w.witnesses.get(&Breach::NewKeyAfterRefusal);
        assert_eq!(noted.is_some(), breach, "{status} then {key}");
    }
}

fn query(w: &mut WireFacts, payment: &str) -> ApiRequest {
    ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: None,
        endpoint: Endpoint::GetPayment {
            payment_id: PaymentId(w.ids.intern(IdKind::Payment, payment)),
        },
    }
}

/// A Payment `p1` created (201), then confirmed under `f-1` with `card` (request 2, sent
/// at 2 ms), answered `status` with `body` at 3 ms.
fn confirmed(w: &mut WireFacts, card: char, status: u16, body: &str) {
    let pay = Shape::One(IdKind::Payment);
    send(w, 0, 1, create("c-1", "O-1", 100));
    let created = r#"{"id":"p1","status":"requires_payment_method"}"#;
    answer(w, 1, 1, 201, created, pay);
    let c = confirm(w, "f-1", "p1", card);
    send(w, 2, 2, c);
    answer(w, 3, 2, status, body, pay);
}

/// TIMEOUT-01: a client that hangs up on a create before 20 s, or on a query before
/// 10 s, is noted; one that waited as long is not.
#[test]
fn a_client_hanging_up_before_the_contract_timeout_is_noted() {
    for (is_query, after_ms, breach) in [
        (false, 5_000, true),
        (false, 20_000, false),
        (true, 9_999, true),
        (true, 10_000, false),
    ] {
        let mut w = facts();
        let request = if is_query {
            query(&mut w, "p1")
        } else {
            create("k-1", "O-1", 100)
        };
        send(&mut w, 1_000, 1, request);
        let timed_out = What::TimedOut {
            node: 0,
            id: RequestId(1),
        };
        w.observe(Millis(1_000 + after_ms), &timed_out);
        let noted = w.witnesses.get(&Breach::GaveUpTooSoon);
        assert_eq!(noted.is_some(), breach, "{is_query} {after_ms}");
        assert_eq!(w.open(), 0, "the hang-up closes the exchange");
    }
}

/// SCHED-01: in a schedule (the create answered 202, "when to start: after receiving a
/// 202, a timeout or a 5xx"), a query after a query showed the Payment final is noted; a
/// first query showing it final is not, nor queries of a Payment still processing.
/// Outside a schedule (the create answered 201), the contract names no end: queries of a
/// final Payment (an order page read again) are not judged.
#[test]
fn a_query_after_a_query_showed_the_payment_final_is_noted() {
    let pay = Shape::One(IdKind::Payment);
    for (created, status, queries, breach) in [
        (202, "succeeded", 2, true),
        (202, "failed", 2, true),
        (202, "succeeded", 1, false),
        (202, "processing", 2, false),
        (201, "succeeded", 2, false),
        (201, "failed", 3, false),
    ] {
        let mut w = facts();
        send(&mut w, 0, 1, create("k-1", "O-1", 100));
        let body = format!(r#"{{"id":"p1","status":"{status}"}}"#);
        let first = if created == 202 {
            r#"{"id":"p1","status":"processing"}"#
        } else {
            &body
        };
        answer(&mut w, 1, 1, created, first, pay);
        for n in 0..queries {
            let at = 20_000 * (n + 1);
            let q = query(&mut w, "p1");
            send(&mut w, at, 2 + n as u32, q);
            answer(&mut w, at + 1, 2 + n as u32, 200, &body, pay);
        }
        let noted = w.witnesses.get(&Breach::QueryAfterFinal);
        assert_eq!(noted.is_some(), breach, "{created} {status} {queries}");
    }
    // A create lost (no answer) starts its order's schedule: the lookup by order number
    // that shows the Payment final ends it, and a query after it is noted.
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    let lost = What::Lost {
        message: payhub_model::event::Message::Response {
            id: RequestId(1),
            to: 0,
        },
    };
    w.observe(Millis(20_000), &lost);
    let lookup = ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: None,
        endpoint: Endpoint::ListPayments {
            merchant_order_no: Text::from("O-1"),
        },
    };
    send(&mut w, 30_000, 2, lookup);
    let done = r#"{"data":[{"id":"p1","status":"succeeded","merchant_order_no":"O-1"}]}"#;
    answer(&mut w, 30_001, 2, 200, done, Shape::List(IdKind::Payment));
    let q = query(&mut w, "p1");
    send(&mut w, 40_000, 3, q);
    assert!(w.witnesses.contains_key(&Breach::QueryAfterFinal));
    // A create of the order in between (answered 409 order_no_conflict: query the
    // existing object, UNKNOWN-05) opens the Payment's queries again.
    let mut w = facts();
    let done = r#"{"id":"p1","status":"succeeded"}"#;
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    answer(
        &mut w,
        1,
        1,
        202,
        r#"{"id":"p1","status":"processing"}"#,
        pay,
    );
    let q = query(&mut w, "p1");
    send(&mut w, 20_000, 2, q);
    answer(&mut w, 20_001, 2, 200, done, pay);
    send(&mut w, 30_000, 3, create("k-2", "O-1", 100));
    let conflict = r#"{"error":{"code":"order_no_conflict","related_resource_id":"p1"}}"#;
    answer(&mut w, 30_001, 3, 409, conflict, pay);
    let q = query(&mut w, "p1");
    send(&mut w, 40_000, 4, q);
    assert!(!w.witnesses.contains_key(&Breach::QueryAfterFinal));
}

/// SCHED-01: new business for a Payment shown final opens its queries again until its
/// answer. A confirm refused 422 changed nothing: a query after it goes on past the
/// end. One refused 409 `order_no_conflict` ("query the existing Payment") or 429 ("switch
/// to querying"), one answered 202, or one still in flight leaves the query unjudged.
#[test]
fn a_refused_confirm_leaves_the_payment_final() {
    let pay = Shape::One(IdKind::Payment);
    let exhausted = r#"{"error":{"code":"attempts_exhausted"}}"#;
    let conflict = r#"{"error":{"code":"order_no_conflict","related_resource_id":"p1"}}"#;
    let limited = r#"{"error":{"code":"rate_limited"}}"#;
    let accepted = r#"{"id":"p1","status":"processing"}"#;
    for (confirmed, breach) in [
        (Some((422, exhausted)), true),
        (Some((409, conflict)), false),
        (
            Some((409, r#"{"error":{"code":"payment_in_progress"}}"#)),
            false,
        ),
        (Some((429, limited)), false),
        (Some((202, accepted)), false),
        (None, false),
    ] {
        let mut w = facts();
        send(&mut w, 0, 1, create("k-1", "O-1", 100));
        answer(&mut w, 1, 1, 202, accepted, pay);
        let q = query(&mut w, "p1");
        send(&mut w, 20_000, 2, q);
        answer(
            &mut w,
            20_001,
            2,
            200,
            r#"{"id":"p1","status":"failed"}"#,
            pay,
        );
        let c = confirm(&mut w, "f-1", "p1", 'A');
        send(&mut w, 30_000, 3, c);
        if let Some((status, body)) = confirmed {
            answer(&mut w, 30_001, 3, status, body, pay);
        }
        let q = query(&mut w, "p1");
        send(&mut w, 50_000, 4, q);
        let noted = w.witnesses.contains_key(&Breach::QueryAfterFinal);
        assert_eq!(noted, breach, "{confirmed:?}");
    }
    // Overlapping business: a cancel refused 422 after a confirm of the Payment was
    // answered 202 leaves the 202's schedule running.
    let cancel = |w: &mut WireFacts| ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: Some("x-1".into()),
        endpoint: Endpoint::CancelPayment {
            payment_id: PaymentId(w.ids.intern(IdKind::Payment, "p1")),
        },
    };
    let failed = r#"{"id":"p1","status":"failed"}"#;
    let not_cancelable = r#"{"error":{"code":"payment_not_cancelable"}}"#;
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    answer(&mut w, 1, 1, 202, accepted, pay);
    let q = query(&mut w, "p1");
    send(&mut w, 20_000, 2, q);
    answer(&mut w, 20_001, 2, 200, failed, pay);
    let c = cancel(&mut w);
    send(&mut w, 30_000, 3, c);
    let c = confirm(&mut w, "f-1", "p1", 'A');
    send(&mut w, 30_001, 4, c);
    answer(&mut w, 30_002, 4, 202, accepted, pay);
    answer(&mut w, 31_000, 3, 422, not_cancelable, pay);
    let q = query(&mut w, "p1");
    send(&mut w, 50_000, 5, q);
    assert!(!w.witnesses.contains_key(&Breach::QueryAfterFinal));
    // A 202 that arrives after a query showed the Payment final starts a new schedule.
    let mut w = facts();
    send(&mut w, 0, 1, create("k-1", "O-1", 100));
    answer(&mut w, 1, 1, 202, accepted, pay);
    let c = confirm(&mut w, "f-1", "p1", 'A');
    send(&mut w, 10_000, 2, c);
    let q = query(&mut w, "p1");
    send(&mut w, 20_000, 3, q);
    answer(&mut w, 20_001, 3, 200, failed, pay);
    answer(&mut w, 25_000, 2, 202, accepted, pay);
    let q = query(&mut w, "p1");
    send(&mut w, 50_000, 4, q);
    assert!(!w.witnesses.contains_key(&Breach::QueryAfterFinal));
}

/// SCHED-02: a query of a Payment 10 s old is forgotten at a pruning, unless a query by
/// a number no answer tied yet was sent less than 10 s from it (before or after): an
/// answer tying the number to the Payment later shows the two as queries of one object.
/// A number's query 15 s away keeps nothing.
#[test]
fn an_old_query_is_forgotten_unless_a_tie_may_pair_it() {
    let pay = Shape::One(IdKind::Payment);
    for (by_number_at, kept) in [
        (None, false),
        (Some(25_000), true),
        (Some(12_000), true),
        (Some(5_000), false),
    ] {
        let mut w = facts();
        let q = query(&mut w, "p1");
        let p1 = query_key(OWNER, &QueryObject::named_by(&q.endpoint).expect("a query"));
        let list = ApiRequest {
            api_key: ApiKeyId(1),
            idempotency_key: None,
            endpoint: Endpoint::ListPayments {
                merchant_order_no: "O-1".into(),
            },
        };
        let empty = (r#"{"data":[]}"#, Shape::List(IdKind::Payment));
        let mut sends = vec![(20_000, 1, q, (r#"{"id":"p1"}"#, pay))];
        sends.extend(by_number_at.map(|at| (at, 2, list, empty)));
        sends.sort_by_key(|s| s.0);
        for (at, id, request, (body, shape)) in sends {
            send(&mut w, at, id, request);
            answer(&mut w, at + 1, id, 200, body, shape);
        }
        for i in 0..PRUNE_EVERY as u32 {
            let (at, other) = (40_000 + 20_000 * u64::from(i), format!("q{i}"));
            let q = query(&mut w, &other);
            send(&mut w, at, 10 + i, q);
            let body = format!(r#"{{"id":"{other}"}}"#);
            answer(&mut w, at + 1, 10 + i, 200, &body, pay);
        }
        assert_eq!(w.last_query.contains_key(&p1), kept, "{by_number_at:?}");
        send(&mut w, 90_000_000, 3, create("c-1", "O-1", 100));
        let tied = r#"{"id":"p1","merchant_order_no":"O-1","status":"succeeded"}"#;
        answer(&mut w, 90_000_001, 3, 201, tied, pay);
        let pair = w.closest_queries.as_deref().map(|[a, b]| {
            let mut ids = [a.id, b.id];
            ids.sort();
            ids
        });
        let paired = kept.then_some([RequestId(1), RequestId(2)]);
        assert_eq!(pair, paired, "{by_number_at:?}");
    }
}
