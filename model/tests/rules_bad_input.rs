//! Bad input and REJECT-01: "requests rejected with 400, 401, 403 or 422 do not use up
//! the idempotency key". Each rejection leaves no record and executes nothing, and the
//! corrected request with the SAME key then executes. (The contract advises resubmitting
//! with a new key; since the key is not used up, both work: see the last test.)
//! 404 and 405 are not in the contract's list; the model treats them alike.

mod common;

use common::*;
use payhub_model::api::req;
use payhub_model::api_keys;
use payhub_model::api_keys::{M1_TEST, M1_TEST_READ_ONLY};
use payhub_model::harness::Bench;
use payhub_model::*;

use AcquirerDecision::{Approve, Decline};

/// Sends `bad` under key K, expects `status`/`code`, checks that nothing changed, then
/// sends `good` under the same key K and returns its id.
fn rejected_then_corrected(
    b: &mut Bench,
    bad: ApiRequest,
    status: u16,
    code: ErrorCode,
    good: ApiRequest,
) -> (ApiError, RequestId) {
    let before = effects(b);
    let id = b.send(bad);
    let error = assert_error(b.answered(id), status, code);
    assert_eq!(effects(b), before, "a rejection leaves nothing behind");
    let corrected = b.send(good);
    (error, corrected)
}

fn create_body(body: CreatePaymentBody) -> ApiRequest {
    ApiRequest {
        api_key: M1_TEST,
        idempotency_key: Some("K".into()),
        endpoint: Endpoint::CreatePayment {
            body: Json::Parsed(body),
        },
    }
}

/// A change to a well-formed body, and the field it spoils.
type Spoil = (fn(&mut CreatePaymentBody), Field);

fn full_body() -> CreatePaymentBody {
    CreatePaymentBody {
        merchant_order_no: Some("ORDER-001".into()),
        amount: Some(10000),
        currency: Some("USD".into()),
        card: Some(Card('A')),
    }
}

#[test]
fn reject_01_malformed_json_body_is_400_body_then_same_key_executes() {
    let mut b = Bench::default();
    let bad = ApiRequest {
        api_key: M1_TEST,
        idempotency_key: Some("K".into()),
        endpoint: Endpoint::CreatePayment {
            body: Json::Malformed("{\"amount\":10000,".into()),
        },
    };
    let good = req::create("K", "ORDER-001", 10000, "USD", 'A');
    let (error, id) = rejected_then_corrected(&mut b, bad, 400, ErrorCode::InvalidRequest, good);
    assert_eq!(error.field, Some(Field::Body));
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 201);
    assert_eq!(b.rule_of(id), Some(Rule::FirstExecution201));
}

#[test]
fn reject_01_missing_fields_are_400_with_the_field_then_same_key_executes() {
    let cases: [Spoil; 3] = [
        (|b| b.merchant_order_no = None, Field::MerchantOrderNo),
        (|b| b.amount = None, Field::Amount),
        (|b| b.currency = None, Field::Currency),
    ];
    for (strip, field) in cases {
        let mut b = Bench::default();
        let mut body = full_body();
        strip(&mut body);
        let (error, id) = rejected_then_corrected(
            &mut b,
            create_body(body),
            400,
            ErrorCode::InvalidRequest,
            create_body(full_body()),
        );
        assert_eq!(error.field, Some(field));
        b.upstream(Approve);
        assert_eq!(b.answered(id).status, 201);
    }
}

#[test]
fn safe_01_malformed_safety_parameters_are_400_with_the_field() {
    let cases: [Spoil; 5] = [
        (
            |b| b.merchant_order_no = Some(Text::new()),
            Field::MerchantOrderNo,
        ),
        (|b| b.amount = Some(0), Field::Amount),
        (|b| b.amount = Some(-10000), Field::Amount),
        (|b| b.currency = Some("usd".into()), Field::Currency),
        (|b| b.currency = Some("DOLLAR".into()), Field::Currency),
    ];
    for (spoil, field) in cases {
        let mut b = Bench::default();
        let mut body = full_body();
        spoil(&mut body);
        let before = effects(&b);
        let id = b.send(create_body(body));
        assert_400(b.answered(id), field);
        assert_eq!(effects(&b), before);
    }
}

#[test]
fn reject_01_refund_and_confirm_missing_fields_are_400_then_same_key_executes() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    let no_payment = ApiRequest {
        api_key: M1_TEST,
        idempotency_key: Some("K".into()),
        endpoint: Endpoint::CreateRefund {
            body: Json::Parsed(RefundBody {
                payment_id: None,
                merchant_refund_no: Some("R-001".into()),
                amount: Some(5000),
            }),
        },
    };
    let (error, id) = rejected_then_corrected(
        &mut b,
        no_payment,
        400,
        ErrorCode::InvalidRequest,
        req::refund("K", pay, "R-001", 5000),
    );
    assert_eq!(error.field, Some(Field::PaymentId));
    assert_eq!(b.answered(id).status, 201);
    b.upstream(Approve); // the refund

    let failed = declined(&mut b, "K-PAY-2", "ORDER-002");
    let no_card = ApiRequest {
        api_key: M1_TEST,
        idempotency_key: Some("K".into()),
        endpoint: Endpoint::ConfirmPayment {
            payment_id: failed,
            body: Json::Parsed(ConfirmBody { card: None }),
        },
    };
    let (error, id) = rejected_then_corrected(
        &mut b,
        no_card,
        400,
        ErrorCode::InvalidRequest,
        req::confirm("K", failed, 'B'),
    );
    assert_eq!(error.field, Some(Field::Card));
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 200);
}

#[test]
fn reject_01_unknown_payment_id_is_404_on_every_endpoint_then_same_key_executes() {
    let mut b = Bench::default();
    let pay = declined(&mut b, "K-PAY", "ORDER-001");
    let ghost = PaymentId(99);
    let get = call(&mut b, req::get(ghost));
    assert_error(&get, 404, ErrorCode::ResourceMissing);
    let get_refund = call(&mut b, req::get_refund(RefundId(99)));
    assert_error(&get_refund, 404, ErrorCode::ResourceMissing);
    let (_, id) = rejected_then_corrected(
        &mut b,
        req::cancel("K", ghost),
        404,
        ErrorCode::ResourceMissing,
        req::confirm("K", pay, 'B'),
    );
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 200);
    let (error, id) = rejected_then_corrected(
        &mut b,
        req::refund("K-R", ghost, "R-001", 100),
        404,
        ErrorCode::ResourceMissing,
        req::refund("K-R", pay, "R-001", 100),
    );
    assert_eq!(error.field, Some(Field::PaymentId));
    assert_eq!(b.answered(id).status, 201);
    let (_, id) = rejected_then_corrected(
        &mut b,
        req::confirm("K-C", ghost, 'B'),
        404,
        ErrorCode::ResourceMissing,
        req::cancel("K-C", pay),
    );
    // `pay` succeeded meanwhile: cancel is refused, but no longer for the path.
    assert_error(b.answered(id), 422, ErrorCode::PaymentNotCancelable);
}

#[test]
fn reject_01_another_merchants_payment_is_404_not_a_leak() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K", "ORDER-001");
    for key in [api_keys::M2_TEST, api_keys::M1_LIVE] {
        let get = call(&mut b, req::with_api_key(req::get(pay), key));
        assert_error(&get, 404, ErrorCode::ResourceMissing);
        let before = effects(&b);
        let refund = call(
            &mut b,
            req::with_api_key(req::refund("K", pay, "R-001", 100), key),
        );
        assert_error(&refund, 404, ErrorCode::ResourceMissing);
        assert_eq!(effects(&b), before);
    }
}

#[test]
fn reject_01_wrong_method_is_405_unknown_path_is_404_then_same_key_executes() {
    let mut b = Bench::default();
    let other = |method, path: &str| ApiRequest {
        api_key: M1_TEST,
        idempotency_key: Some("K".into()),
        endpoint: Endpoint::Other {
            method,
            path: path.into(),
        },
    };
    let good = || req::create("K", "ORDER-001", 10000, "USD", 'A');
    let (_, first) = rejected_then_corrected(
        &mut b,
        other(Method::Delete, "/v1/payments"),
        405,
        ErrorCode::MethodNotAllowed,
        good(),
    );
    b.upstream(Approve);
    assert_eq!(b.answered(first).status, 201);
    for (method, path, status, code) in [
        (
            Method::Get,
            "/v1/checkout/sessions",
            405,
            ErrorCode::MethodNotAllowed,
        ),
        (
            Method::Delete,
            "/v1/payments/pay_demo_001",
            405,
            ErrorCode::MethodNotAllowed,
        ),
        (Method::Post, "/v1/charges", 404, ErrorCode::ResourceMissing),
        (Method::Get, "/v2/payments", 404, ErrorCode::ResourceMissing),
    ] {
        let before = effects(&b);
        let r = call(&mut b, other(method, path));
        assert_error(&r, status, code);
        assert_eq!(effects(&b), before);
    }
    let replay = call(&mut b, good());
    assert_eq!(replay.status, 200);
}

#[test]
fn reject_01_unknown_api_key_is_401_then_same_key_executes() {
    let mut b = Bench::default();
    let bad = req::with_api_key(
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
        ApiKeyId(42),
    );
    let (error, id) = rejected_then_corrected(
        &mut b,
        bad,
        401,
        ErrorCode::AuthenticationFailed,
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
    );
    assert_eq!(error.field, None);
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 201);
    // Queries need a valid API key too.
    let q = call(
        &mut b,
        req::with_api_key(req::get(PaymentId(1)), ApiKeyId(42)),
    );
    assert_error(&q, 401, ErrorCode::AuthenticationFailed);
}

#[test]
fn reject_01_read_only_key_is_403_on_post_but_may_query() {
    let mut b = Bench::default();
    let bad = req::with_api_key(
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
        M1_TEST_READ_ONLY,
    );
    let (_, id) = rejected_then_corrected(
        &mut b,
        bad,
        403,
        ErrorCode::PermissionDenied,
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
    );
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 201);
    let q = call(
        &mut b,
        req::with_api_key(req::get(PaymentId(1)), M1_TEST_READ_ONLY),
    );
    assert_eq!(q.status, 200);
    let before = effects(&b);
    let refund = call(
        &mut b,
        req::with_api_key(
            req::refund("K2", PaymentId(1), "R-1", 100),
            M1_TEST_READ_ONLY,
        ),
    );
    assert_error(&refund, 403, ErrorCode::PermissionDenied);
    assert_eq!(effects(&b), before);
}

#[test]
fn reject_01_unsupported_currency_is_422_then_same_key_executes() {
    let mut b = Bench::default();
    let (error, id) = rejected_then_corrected(
        &mut b,
        req::create("K", "ORDER-001", 10000, "GBP", 'A'),
        422,
        ErrorCode::UnsupportedCurrency,
        req::create("K", "ORDER-001", 10000, "USD", 'A'),
    );
    assert_eq!(error.field, Some(Field::Currency));
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 201);
    assert_eq!(payment_of(b.answered(id)).currency, "USD");
}

#[test]
fn reject_01_business_422s_do_not_use_up_the_key() {
    let mut b = Bench::default();
    let pay = paid(&mut b, "K-PAY", "ORDER-001");
    // Refund more than captured → 422; the same key with the right amount refunds.
    let (error, id) = rejected_then_corrected(
        &mut b,
        req::refund("K-R", pay, "R-001", 10001),
        422,
        ErrorCode::RefundAmountExceeded,
        req::refund("K-R", pay, "R-001", 10000),
    );
    assert_eq!(error.field, Some(Field::Amount));
    assert_eq!(b.answered(id).status, 201);
    b.upstream(Approve); // the refund
    // Refund of a Payment that has not succeeded → 422; the same key on a paid one works.
    let failed = declined(&mut b, "K-PAY-2", "ORDER-002");
    let pay3 = paid(&mut b, "K-PAY-3", "ORDER-003");
    let (_, id) = rejected_then_corrected(
        &mut b,
        req::refund("K-R2", failed, "R-002", 100),
        422,
        ErrorCode::PaymentNotRefundable,
        req::refund("K-R2", pay3, "R-002", 100),
    );
    assert_eq!(b.answered(id).status, 201);
    b.upstream(Approve); // the refund
    // Confirm of a succeeded Payment → 422; the same key on the failed one executes.
    let (_, id) = rejected_then_corrected(
        &mut b,
        req::confirm("K-C", pay, 'B'),
        422,
        ErrorCode::PaymentNotConfirmable,
        req::confirm("K-C", failed, 'B'),
    );
    b.upstream(Decline);
    assert_eq!(b.answered(id).status, 200);
    // Cancel of a succeeded Payment → 422; the same key cancels the failed one.
    let (_, id) = rejected_then_corrected(
        &mut b,
        req::cancel("K-X", pay),
        422,
        ErrorCode::PaymentNotCancelable,
        req::cancel("K-X", failed),
    );
    assert_eq!(b.answered(id).status, 200);
    assert_eq!(payment_of(b.answered(id)).status, PaymentStatus::Canceled);
}

#[test]
fn reject_01_corrected_request_with_a_new_key_executes_too() {
    // The contract's advice (修正后用新键提交): after correcting, submit with a new key.
    let mut b = Bench::default();
    let bad = call(&mut b, req::create("K-OLD", "ORDER-001", 10000, "GBP", 'A'));
    assert_error(&bad, 422, ErrorCode::UnsupportedCurrency);
    let id = b.send(req::create("K-NEW", "ORDER-001", 10000, "USD", 'A'));
    b.upstream(Approve);
    assert_eq!(b.answered(id).status, 201);
    // And the old key was never bound: it is free for anything.
    assert_eq!(b.platform.records().len(), 1);
    assert!(b.platform.records().keys().all(|s| s.key == "K-NEW"));
}
