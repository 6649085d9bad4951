//! `check-log` on short access logs (tests/fixtures/access/replays/) of replays and of
//! what looks like one: a replay of any endpoint under its key is answered with its
//! first execution's object (confirm and cancel compare nothing but their path), never
//! judged again as a request; a new key for a used order number may be answered with the
//! existing Payment after a refusal (S4); a refund answered 201 `processing` is known to
//! exist; an amount written `10000.0` is the integer 10000; a lookup never answers no
//! record of a Payment the platform answered earlier; a conflict over a field the
//! contract does not name is allowed; a log cannot show the client's timeouts; a lookup
//! the platform served at another spelling of its path is a query of its object, and a
//! query after a refused confirm of a Payment shown final goes past the schedule's end; a
//! second order of one price while the first is unknown is a renumbering only if assumed.

mod common;
use common::*;
use serde_json::Value;

/// The replays fixture `name`'s path.
fn fixture_path(name: &str) -> String {
    format!(
        "{}/tests/fixtures/access/replays/{name}.jsonl",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `property` in check-log's JSON for the replays fixture `name`, with `extra`
/// arguments, and the exit code.
fn property_of(name: &str, property: &str, extra: &[&str]) -> (Value, i32) {
    let file = fixture_path(name);
    let o = run(&[&["check-log", "--format", "json", &file], extra].concat());
    no_panic(&o);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let p = v["files"][0]["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == property)
        .unwrap_or_else(|| panic!("{name}: no {property}"))
        .clone();
    (p, code(&o))
}

/// The status of `property` in check-log's JSON for the replays fixture `name`, with
/// `extra` arguments, and the detail.
fn verdict(name: &str, property: &str, extra: &[&str]) -> (String, String) {
    let (p, _) = property_of(name, property, extra);
    let detail = p["detail"].as_str().unwrap_or_default().to_owned();
    (p["status"].as_str().unwrap().to_owned(), detail)
}

#[test]
fn a_replay_of_confirm_or_cancel_is_judged_like_a_create() {
    for (name, property, says) in [
        (
            "confirm-replay-409-conflict",
            "idempotency-conflict-iff-parameters-differ",
            "409 idempotency_conflict",
        ),
        (
            "cancel-replay-other-payment",
            "replay-returns-same-object",
            "the contract requires 200 with the object of the first execution",
        ),
    ] {
        let (status, detail) = verdict(name, property, &[]);
        assert_eq!(status, "violated", "{name}: {detail}");
        assert!(detail.contains(says), "{name}: {detail}");
    }
}

#[test]
fn a_replay_answered_422_is_judged_again_as_new_business() {
    for name in ["create-replay-answered-422", "refund-replay-answered-422"] {
        let (status, detail) = verdict(name, "replay-returns-same-object", &[]);
        assert_eq!(status, "violated", "{name}: {detail}");
        assert!(detail.contains("422"), "{name}: {detail}");
    }
}

#[test]
fn a_new_key_answered_with_the_existing_payment_after_a_429_executed_nothing() {
    let (status, detail) = verdict(
        "s4-existing-after-429",
        "rejections-execute-nothing",
        &["--complete-log"],
    );
    assert_eq!(status, "holds", "{detail}");
}

#[test]
fn a_refund_answered_201_processing_is_known_so_a_second_of_the_same_amount_is_new() {
    let (status, detail) = verdict(
        "two-equal-refunds-a-day-apart",
        "client-keeps-the-refund-number-while-unresolved",
        &[],
    );
    assert_eq!(status, "holds", "{detail}");
}

#[test]
fn an_amount_written_with_a_zero_fraction_is_that_integer() {
    let property = "idempotency-conflict-iff-parameters-differ";
    let (status, detail) = verdict("amount-written-as-float-then-changed", property, &[]);
    assert_eq!(status, "violated", "{detail}");
    assert!(detail.contains("12000"), "{detail}");
    let (status, detail) = verdict("amount-written-as-float-replayed", property, &[]);
    assert_eq!(status, "holds", "{detail}");
    let (status, detail) = verdict(
        "amount-written-as-float-replayed",
        "client-never-changes-parameters-under-a-key",
        &[],
    );
    assert_eq!(status, "holds", "{detail}");
}

#[test]
fn a_query_retried_once_its_429_retry_after_passed_is_not_too_soon() {
    let (status, detail) = verdict(
        "query-retried-after-its-retry-after",
        "client-spaces-queries",
        &[],
    );
    assert_eq!(status, "holds", "{detail}");
    let (status, detail) = verdict(
        "query-retried-before-its-retry-after",
        "client-spaces-queries",
        &[],
    );
    assert_eq!(status, "violated", "{detail}");
}

#[test]
fn no_record_of_a_payment_the_platform_answered_is_a_false_lookup() {
    let property = "queries-answer-known-state";
    for name in [
        "lookup-by-order-no-answers-no-record-after-201",
        "get-by-id-answers-404-after-201",
    ] {
        let (status, detail) = verdict(name, property, &[]);
        assert_eq!(status, "violated", "{name}: {detail}");
        assert!(detail.contains("no record"), "{name}: {detail}");
    }
    // Sent while the create was in flight, it may miss it (A-NOT-FOUND-IN-FLIGHT).
    let (status, detail) = verdict("control-lookup-while-create-in-flight", property, &[]);
    assert_eq!(status, "holds", "{detail}");
}

/// A confirm's 2xx may execute nothing (S8's original status), and a 409
/// payment_in_progress binds no key (A-S8-NOBIND): the key's later confirm is judged
/// afresh, never as new business or a replay.
#[test]
fn a_confirm_key_that_bound_nothing_is_judged_afresh() {
    for (name, property) in [
        (
            "confirm-409-payment-in-progress-then-200-same-key",
            "same-key-never-new-business",
        ),
        (
            "confirm-s8-original-status-then-422-same-key",
            "replay-returns-same-object",
        ),
    ] {
        let (status, detail) = verdict(name, property, &[]);
        assert_eq!(status, "holds", "{name}: {detail}");
    }
}

/// S4 after a refusal, with the other key's create in flight or its answer lost: that
/// create may be the execution; a lookup (no key) is no other key's create.
#[test]
fn only_another_keys_create_explains_a_refused_keys_200() {
    let property = "rejections-execute-nothing";
    for name in [
        "s4-existing-after-429-k0-answer-lost",
        "s4-existing-while-k0-in-flight-after-429",
    ] {
        let (status, detail) = verdict(name, property, &["--complete-log"]);
        assert_eq!(status, "holds", "{name}: {detail}");
    }
    let (status, detail) = verdict(
        "429-then-lookup-shows-payment-then-200",
        property,
        &["--complete-log"],
    );
    assert_eq!(status, "violated", "{detail}");
}

/// "A field absent or null is not known": a replay's answer without an id names no
/// other object.
#[test]
fn a_replay_answer_without_an_id_is_no_other_object() {
    let (status, detail) = verdict(
        "create-replay-200-body-without-id",
        "replay-returns-same-object",
        &[],
    );
    assert_eq!(status, "holds", "{detail}");
}

/// SAFE-01 names the compared fields with an "etc." (A-SAFE-FIELDS): a replay whose
/// `description` differs may be answered 409 `idempotency_conflict` (its platform may
/// compare it); the same body answered 409 may not.
#[test]
fn a_conflict_over_a_field_the_contract_does_not_name_is_allowed() {
    let property = "idempotency-conflict-iff-parameters-differ";
    for allowed in [
        "create-replay-409-other-description",
        // `description` given twice ("b", then "a"): a platform may read either.
        "create-replay-409-description-given-twice",
    ] {
        let (status, detail) = verdict(allowed, property, &[]);
        assert_eq!(status, "holds", "{allowed}: {detail}");
    }
    let (status, detail) = verdict("create-replay-409-same-description", property, &[]);
    assert_eq!(status, "violated", "{detail}");
    assert!(detail.contains("409 idempotency_conflict"), "{detail}");
}

/// A log records an exchange without an answer, never who ended it: the client's
/// timeouts are not judged over one.
#[test]
fn a_log_cannot_judge_the_clients_timeouts() {
    let (status, detail) = verdict(
        "create-replay-409-other-description",
        "client-waits-the-contract-timeouts",
        &[],
    );
    assert_eq!(status, "cannot_judge", "{detail}");
}

/// A body the log did not record is not known: a replay is never judged against it, for
/// the platform or the client.
#[test]
fn a_body_not_recorded_is_no_change_of_parameters() {
    for name in [
        "create-first-body-not-recorded-replayed",
        "refund-first-body-not-recorded-replayed",
    ] {
        for property in [
            "idempotency-conflict-iff-parameters-differ",
            "client-never-changes-parameters-under-a-key",
        ] {
            let (status, detail) = verdict(name, property, &[]);
            assert_eq!(status, "holds", "{name} {property}: {detail}");
        }
    }
}

/// A request with its execution's very body, answered 409 idempotency_conflict while
/// that execution was in flight, is a conflict without a change (CONC-02: it waits, then
/// returns the same object, or 409 operation_in_progress).
#[test]
fn a_conflict_answered_while_the_same_body_executes_is_a_breach() {
    let property = "idempotency-conflict-iff-parameters-differ";
    let (status, detail) = verdict("create-in-flight-same-body-409-conflict", property, &[]);
    assert_eq!(status, "violated", "{detail}");
    assert!(detail.contains("409 idempotency_conflict"), "{detail}");
}

/// A `GET` of one Payment written with a query string or a trailing slash, answered 200,
/// is that Payment's query: one after a query showed it final goes past the schedule's
/// end (SCHED-01). Answered 404, the platform read no such path: it is no query of it.
#[test]
fn a_served_lookup_written_otherwise_is_a_query_of_its_object() {
    let property = "client-stops-querying-at-a-final-status";
    for (name, status) in [
        ("lookup-with-a-query-string", "violated"),
        ("lookup-with-a-trailing-slash", "violated"),
        ("lookup-with-a-trailing-slash-404", "holds"),
    ] {
        assert_eq!(verdict(name, property, &[]).0, status, "{name}");
    }
}

/// SCHED-01: a confirm of a Payment shown final, refused 422, changed nothing; a query
/// after it goes on past the schedule's end.
#[test]
fn a_query_after_a_refused_confirm_is_past_the_end() {
    let (status, detail) = verdict(
        "query-after-a-refused-confirm",
        "client-stops-querying-at-a-final-status",
        &[],
    );
    assert_eq!(status, "violated", "{detail}");
    assert!(detail.contains("line 4"), "{detail}");
}

/// A `HEAD` of an object (a monitor's probe) names no operation of the contract: it is
/// not the API, as a CORS preflight is not, and leaves the run complete.
#[test]
fn a_head_probe_is_not_the_api() {
    let o = run(&["check-log", &fixture_path("head-probe-after-a-query")]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("2 judged, 1 not the API, 0 unreadable"),
        "{}",
        stdout(&o)
    );
}

/// UNKNOWN-03, S11 (A-SAME-PURCHASE-BY-AMOUNT): a second order of one price (a second
/// refund of one amount) while the first's outcome is unknown may be a new purchase or
/// the first renumbered; the wire cannot tell, so it is `cannot judge`, naming the
/// merchant's database and both lines, and a violation only when the log is read so.
#[test]
fn a_second_order_of_one_price_is_a_renumbering_only_when_assumed() {
    for (name, property) in [
        (
            "two-orders-one-price-first-lost",
            "client-creates-an-order-under-one-key",
        ),
        (
            "two-refunds-one-amount-first-lost",
            "client-keeps-the-refund-number-while-unresolved",
        ),
    ] {
        let (p, exit) = property_of(name, property, &[]);
        assert_eq!(exit, 0, "{name}: {p:#}");
        assert_eq!(p["status"], "cannot_judge", "{name}: {p:#}");
        let why = p["missing"][0]["why"].as_str().unwrap();
        assert_eq!(p["missing"][0]["evidence"], "merchant_db", "{name}: {p:#}");
        assert!(why.contains("which orders are one purchase"), "{why}");
        assert!(why.contains("line 1") || why.contains("line 2"), "{why}");
        let (status, detail) = verdict(name, property, &["--same-purchase-by-amount"]);
        assert_eq!(status, "violated", "{name}: {detail}");
        assert!(detail.contains("under another"), "{detail}");
        let o = run(&[
            "check-log",
            &fixture_path(name),
            "--same-purchase-by-amount",
        ]);
        assert_eq!(code(&o), 1, "{name}");
        assert!(
            stdout(&o).contains("A-SAME-PURCHASE-BY-AMOUNT"),
            "{}",
            stdout(&o)
        );
    }
}
