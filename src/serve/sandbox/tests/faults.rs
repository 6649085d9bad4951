//! The fault plan judged by its effects (what was charged on the acquirer's ledger, what
//! the store holds), its rules' windows and matchers, and what the edge answers itself.

use super::*;

/// Payments the store holds for `order`, as a query by order number lists them.
fn stored(sb: &mut Sandbox, order: &str) -> usize {
    let list = get(sb, &format!("/v1/payments?merchant_order_no={order}"));
    json(&list)["data"].as_array().map_or(0, Vec::len)
}

/// Each fault that answers before the platform executes (`serve::faults`: reset_before,
/// 500_before, rate_limited, unavailable) judged by its effect: nothing charged on the
/// acquirer's ledger, nothing in the store, and the same key retried is the first
/// execution (201), charged once.
#[test]
fn unknown_01_faults_before_execution_charge_and_store_nothing() {
    for action in ["reset_before", "500_before", "rate_limited", "unavailable"] {
        let plan = format!(
            r#"{{"faults":[{{"endpoint":"create_payment","action":"{action}"}}],"retry_after_s":1}}"#
        );
        let mut sb = sandbox(Branches::A, &plan);
        let faulted = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
        assert_ne!(faulted.status, 201, "{action}");
        assert_eq!(captures(&sb), 0, "{action}: nothing charged");
        assert_eq!(stored(&mut sb, "ORDER-1"), 0, "{action}: nothing stored");
        sb.advance(Millis::secs(1)).unwrap();
        let retried = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
        assert_eq!(retried.status, 201, "{action}: the first execution");
        assert_eq!(captures(&sb), 1, "{action}: charged once");
        assert!(violated(&sb).is_empty(), "{action}: {:?}", violated(&sb));
    }
}

/// Each fault that answers after the platform executed (reset_after, 500_after) judged
/// by its effect: charged and stored before the client learns anything, and the same key
/// retried is a replay (200, the same Payment), never a second charge.
#[test]
fn unknown_02_faults_after_execution_charge_and_store_once() {
    for action in ["reset_after", "500_after"] {
        let plan = format!(r#"{{"faults":[{{"endpoint":"create_payment","action":"{action}"}}]}}"#);
        let mut sb = sandbox(Branches::A, &plan);
        let faulted = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
        assert!(
            faulted.wire == Wire::Reset || faulted.status == 500,
            "{action}: {faulted:?}"
        );
        assert_eq!(captures(&sb), 1, "{action}: it executed");
        assert_eq!(stored(&mut sb, "ORDER-1"), 1, "{action}: it is stored");
        let retried = create(&mut sb, "k1", "ORDER-1", 10000, 'A');
        assert_eq!(retried.status, 200, "{action}: a replay");
        assert_eq!(json(&retried)["id"], "pay_demo_001", "{action}");
        assert_eq!(captures(&sb), 1, "{action}: never charged again");
    }
}

/// The fault window: `nth` 2 and `times` 2 fault the 2nd and 3rd matching requests only,
/// and a rule with a matcher (`order`) counts only the requests it matches.
#[test]
fn the_fault_window_counts_only_matching_requests() {
    let plan = r#"{"faults":[{"endpoint":"create_payment","order":"ORDER-2","nth":2,"times":2,"action":"reset_before"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let other = create(&mut sb, "k0", "ORDER-1", 10000, 'A');
    assert_eq!(other.status, 201, "another order is not matched");
    let first = create(&mut sb, "k1", "ORDER-2", 10000, 'A');
    assert_eq!(first.status, 201, "the 1st match is before the window");
    for n in [2, 3] {
        let faulted = create(&mut sb, "k1", "ORDER-2", 10000, 'A');
        assert_eq!(faulted.wire, Wire::Reset, "match {n}");
    }
    let after = create(&mut sb, "k1", "ORDER-2", 10000, 'A');
    assert_eq!(after.status, 200, "the 4th match is after the window");
    assert_eq!(captures(&sb), 2);
}

/// Each matcher of a rule counts only the requests it names (`serve::faults`): the API
/// key, the `Idempotency-Key`, and the order number of a create, of a checkout session
/// and of a query by order number.
#[test]
fn fault_rules_match_by_api_key_key_and_order_on_every_endpoint_that_names_one() {
    let with_key = |sb: &mut Sandbox, auth: &str, key: &str, order: &str| {
        let mut http = create_request(key, order, 'A');
        http.authorization = Some(format!("Bearer {auth}").into_bytes());
        let now = sb.now();
        answered(sb.handle(now, &http))
    };
    let mut sb = sandbox(
        Branches::A,
        r#"{"faults":[{"api_key":"ak_3","action":"reset_before"}]}"#,
    );
    assert_eq!(
        with_key(&mut sb, "ak_1", "k1", "ORDER-1").status,
        201,
        "ak_1 is not ak_3"
    );
    assert_eq!(with_key(&mut sb, "ak_3", "k1", "ORDER-1").wire, Wire::Reset);

    let mut sb = sandbox(
        Branches::A,
        r#"{"faults":[{"key":"k2","action":"reset_before"}]}"#,
    );
    assert_eq!(
        create(&mut sb, "k1", "ORDER-1", 100, 'A').status,
        201,
        "k1 is not k2"
    );
    assert_eq!(create(&mut sb, "k2", "ORDER-2", 100, 'A').wire, Wire::Reset);

    let plan =
        r#"{"faults":[{"endpoint":"list_payments","order":"ORDER-2","action":"500_before"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let other = get(&mut sb, "/v1/payments?merchant_order_no=ORDER-1");
    assert_eq!(other.status, 200, "another order's query");
    let named = get(&mut sb, "/v1/payments?merchant_order_no=ORDER-2");
    assert_eq!(named.status, 500, "{}", named.body);

    let plan = r#"{"faults":[{"endpoint":"create_checkout_session","order":"ORDER-2","action":"500_before"}]}"#;
    let mut sb = sandbox(Branches::A, plan);
    let session = |sb: &mut Sandbox, key: &str, order: &str| {
        let body = format!(r#"{{"merchant_order_no":"{order}","amount":100,"currency":"USD"}}"#);
        send(sb, "POST", "/v1/checkout/sessions", Some(key), &body)
    };
    let other = session(&mut sb, "s1", "ORDER-1");
    assert!(
        other.status < 300,
        "another order's checkout session: {}",
        other.body
    );
    let named = session(&mut sb, "s2", "ORDER-2");
    assert_eq!(named.status, 500, "{}", named.body);
}

/// What the edge answers itself: a route outside `/v1/` is 404 (never the model's),
/// a method the contract has no use for is 405 on a contract path and 404 elsewhere,
/// DELETE reaches the model, and a key over the byte bound is 400 `Idempotency-Key`.
#[test]
fn the_edge_answers_routes_methods_and_keys_the_model_cannot_represent() {
    let req = |method: &str, target: &str, key: Option<Vec<u8>>| HttpRequest {
        method: method.into(),
        target: target.into(),
        authorization: Some(b"Bearer ak_1".to_vec()),
        idempotency_key: key,
        body: Vec::new(),
    };
    let status = |r: Result<ApiRequest, HttpReply>| r.err().map(|e| e.status);
    assert_eq!(
        status(http_map::to_api_request(&req("GET", "/__sandbox/x", None))),
        Some(404)
    );
    assert_eq!(
        status(http_map::to_api_request(&req(
            "PATCH",
            "/v1/payments",
            None
        ))),
        Some(405)
    );
    assert_eq!(
        status(http_map::to_api_request(&req("PATCH", "/elsewhere", None))),
        Some(404)
    );
    assert_eq!(
        status(http_map::to_api_request(&req(
            "PATCH",
            "/v1/elsewhere",
            None
        ))),
        Some(404)
    );
    let delete = http_map::to_api_request(&req("DELETE", "/v1/payments/pay_demo_001", None));
    assert!(delete.is_ok(), "DELETE is the model's to answer");
    let long = vec![b'k'; http_map::KEY_BYTES_MAX + 1];
    let refused = http_map::to_api_request(&req("GET", "/v1/payments/pay_demo_001", Some(long)));
    assert_eq!(status(refused), Some(400));
    let longest = vec![b'k'; http_map::KEY_BYTES_MAX];
    assert!(
        http_map::to_api_request(&req("GET", "/v1/payments/pay_demo_001", Some(longest))).is_ok()
    );
}
