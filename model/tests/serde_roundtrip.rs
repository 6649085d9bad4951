//! The model's vocabulary reads back from its own JSON: every value below serializes,
//! deserializes to an equal value, and serializes again to the same bytes (as a string
//! and through `serde_json::Value`). Anything that does not fit the form is an error
//! that names what is wrong, never a panic and never a silently different value.

use payhub_model::acquirer::{ChargeRecord, ChargeState, RefundState};
use payhub_model::client::{
    AntiPattern, ClientOutput, Command, Decision, Draw, Handle, KeyPurpose, Keys, ObjectState,
    OrderState, Outcome, PayerMessage, Policy, Refusal, Subject, SubmissionKind, Via,
};
use payhub_model::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeSet;
use std::fmt::Debug;

/// Serializes `value`, reads it back, and checks both the value and the bytes.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: &T) -> String {
    let json = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(&back, value, "{json}");
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    let tree = serde_json::to_value(value).unwrap();
    let again: T = serde_json::from_value(tree).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(&again, value, "{json} through a Value");
    json
}

/// The error reading `json` as a `T`, as text.
fn error<T: DeserializeOwned + Debug>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(v) => panic!("{json} was read as {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn payment(status: PaymentStatus, failure: Option<Failure>) -> PaymentView {
    PaymentView {
        id: PaymentId(1),
        merchant_order_no: "ORDER-1".into(),
        amount: 10_000,
        currency: "USD".into(),
        status,
        resolution_status: ResolutionStatus::Known,
        attempt_count: 1,
        failure,
        next_action: status == PaymentStatus::RequiresAction,
        expires_at: Millis::days(1),
        fee_rate_bps: 290,
        amount_refunded: 0,
        version: 3,
    }
}

fn refund(status: RefundStatus) -> RefundView {
    RefundView {
        id: RefundId(2),
        payment_id: PaymentId(1),
        merchant_refund_no: "R-1".into(),
        amount: 4_000,
        status,
        resolution_status: ResolutionStatus::NeedsQuery,
        version: 1,
    }
}

const PAYMENT_STATUSES: [PaymentStatus; 7] = [
    PaymentStatus::RequiresPaymentMethod,
    PaymentStatus::Processing,
    PaymentStatus::RequiresAction,
    PaymentStatus::Succeeded,
    PaymentStatus::Failed,
    PaymentStatus::Canceled,
    PaymentStatus::Expired,
];

const REFUND_STATUSES: [RefundStatus; 3] = [
    RefundStatus::Processing,
    RefundStatus::Succeeded,
    RefundStatus::Failed,
];

/// The variant names serde lists when `json` names an unknown one: every variant of
/// the enum, to check that a test covers them all.
fn variant_names<T: DeserializeOwned + Debug>(json: &str) -> BTreeSet<String> {
    let e = error::<T>(json);
    let list = e
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("{e}"))
        .1;
    list.split(", ")
        .map(|name| {
            name.split('`')
                .nth(1)
                .unwrap_or_else(|| panic!("{e}"))
                .to_owned()
        })
        .collect()
}

#[test]
fn every_error_code_and_endpoint_is_covered() {
    let codes: BTreeSet<String> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(codes.len(), ErrorCode::ALL.len());
    assert_eq!(codes, variant_names::<ErrorCode>(r#""nope""#));
    let tags: BTreeSet<String> = endpoints()
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["endpoint"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(tags, variant_names::<Endpoint>(r#"{"endpoint":"nope"}"#));
}

/// Every endpoint, with well-formed, empty, invalid and malformed bodies.
fn endpoints() -> Vec<Endpoint> {
    let create = CreatePaymentBody {
        merchant_order_no: Some("ORDER-1".into()),
        amount: Some(10_000),
        currency: Some("USD".into()),
        card: Some(Card('A')),
    };
    let endpoints = vec![
        Endpoint::CreatePayment {
            body: Json::Parsed(create.clone()),
        },
        Endpoint::CreatePayment {
            body: Json::Parsed(CreatePaymentBody::default()),
        },
        Endpoint::CreatePayment {
            body: Json::Parsed(CreatePaymentBody {
                amount: Some(-5),
                currency: Some("usd!".into()),
                merchant_order_no: Some(String::new().into()),
                card: None,
            }),
        },
        Endpoint::CreatePayment {
            body: Json::Malformed("{\"amount\":".into()),
        },
        Endpoint::CreatePayment {
            body: Json::Malformed("{\"amount\":10000,\"merchant_order_no\":\"ORDER-1\"}".into()),
        },
        Endpoint::ConfirmPayment {
            payment_id: PaymentId(1),
            body: Json::Parsed(ConfirmBody {
                card: Some(Card('B')),
            }),
        },
        Endpoint::ConfirmPayment {
            payment_id: PaymentId(1_234),
            body: Json::Malformed("not json at all".into()),
        },
        Endpoint::CancelPayment {
            payment_id: PaymentId(1),
        },
        Endpoint::CreateCheckoutSession {
            body: Json::Parsed(SessionBody {
                merchant_order_no: Some("ORDER-2".into()),
                amount: Some(5_000),
                currency: Some("EUR".into()),
            }),
        },
        Endpoint::CreateRefund {
            body: Json::Parsed(RefundBody {
                payment_id: Some(PaymentId(1)),
                merchant_refund_no: Some("R-1".into()),
                amount: Some(0),
            }),
        },
        Endpoint::CreateRefund {
            body: Json::Malformed(String::new().into()),
        },
        Endpoint::GetPayment {
            payment_id: PaymentId(7),
        },
        Endpoint::ListPayments {
            merchant_order_no: "ORDER-1".into(),
        },
        Endpoint::GetRefund {
            refund_id: RefundId(3),
        },
        Endpoint::ListRefundsByNo {
            merchant_refund_no: "R-1".into(),
        },
        Endpoint::ListRefundsProcessing,
        Endpoint::Other {
            method: Method::Delete,
            path: "/v1/payments/pay_demo_001".into(),
        },
        Endpoint::Other {
            method: Method::Get,
            path: "/v1/nowhere?x=1".into(),
        },
    ];
    endpoints
}

#[test]
fn requests_round_trip_for_every_endpoint_and_body() {
    for endpoint in endpoints() {
        round_trip(&endpoint);
        for idempotency_key in [None, Some(Text::from("payment.create:ORDER-1:1"))] {
            let request = ApiRequest {
                api_key: ApiKeyId(2),
                idempotency_key,
                endpoint: endpoint.clone(),
            };
            round_trip(&request);
        }
    }
    // The forms traces already use, unchanged.
    let request = ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: Some("K".into()),
        endpoint: Endpoint::CreatePayment {
            body: Json::Malformed("{".into()),
        },
    };
    assert_eq!(
        round_trip(&request),
        r#"{"api_key":"ak_1","idempotency_key":"K","endpoint":"create_payment","body":"{"}"#
    );
    let list = Endpoint::ListRefundsProcessing;
    assert_eq!(
        round_trip(&list),
        r#"{"endpoint":"list_refunds_processing"}"#
    );
    for method in [Method::Get, Method::Post, Method::Delete] {
        assert_eq!(round_trip(&method), format!("\"{method}\""));
    }
}

#[test]
fn responses_round_trip_for_every_body_and_error_code() {
    let failure = Failure {
        code: FailureCode::CardDeclined,
        attempt_id: AttemptId(1),
    };
    let mut bodies = vec![
        ResponseBody::Payment(payment(PaymentStatus::Failed, Some(failure))),
        ResponseBody::Refund(refund(RefundStatus::Processing)),
        ResponseBody::Session(SessionView {
            id: SessionId(1),
            payment_id: PaymentId(1),
            expires_at: Millis::mins(30),
        }),
        ResponseBody::Payments { data: vec![] },
        ResponseBody::Payments {
            data: vec![
                payment(PaymentStatus::Processing, None),
                payment(PaymentStatus::Succeeded, None),
            ],
        },
        ResponseBody::Refunds { data: vec![] },
        ResponseBody::Refunds {
            data: vec![refund(RefundStatus::Succeeded)],
        },
    ];
    for status in PAYMENT_STATUSES {
        bodies.push(ResponseBody::Payment(payment(status, None)));
    }
    for status in REFUND_STATUSES {
        bodies.push(ResponseBody::Refund(refund(status)));
    }
    for &code in ErrorCode::ALL {
        assert_eq!(round_trip(&code), format!("\"{}\"", code.as_str()));
        bodies.push(ResponseBody::Error {
            error: ApiError::new(code),
        });
    }
    let fields = [
        Field::IdempotencyKey,
        Field::Body,
        Field::MerchantOrderNo,
        Field::Amount,
        Field::Currency,
        Field::PaymentId,
        Field::MerchantRefundNo,
        Field::Card,
    ];
    for field in fields {
        bodies.push(ResponseBody::Error {
            error: ApiError::new(ErrorCode::InvalidRequest).with_field(field),
        });
    }
    for related in [
        ResourceId::Payment(PaymentId(1)),
        ResourceId::Refund(RefundId(1)),
        ResourceId::Session(SessionId(1)),
    ] {
        round_trip(&related);
        bodies.push(ResponseBody::Error {
            error: ApiError::new(ErrorCode::OrderNoConflict).related(related),
        });
    }
    for body in bodies {
        match &body {
            ResponseBody::Payment(_)
            | ResponseBody::Refund(_)
            | ResponseBody::Session(_)
            | ResponseBody::Payments { .. }
            | ResponseBody::Refunds { .. }
            | ResponseBody::Error { .. } => {}
        }
        round_trip(&body);
        let status = body_status(&body);
        round_trip(&ApiResponse::ok(status, body.clone()));
        let mut limited = ApiResponse::ok(status, body);
        limited.retry_after_s = Some(2);
        round_trip(&limited);
    }
}

fn body_status(body: &ResponseBody) -> u16 {
    match body {
        ResponseBody::Error { error } => error.code.http_status(),
        _ => 200,
    }
}

/// The empty lists are told apart: a refund list says so; a payment list keeps its form.
#[test]
fn empty_lists_keep_their_kind() {
    let payments = ResponseBody::Payments { data: vec![] };
    let refunds = ResponseBody::Refunds { data: vec![] };
    assert_eq!(round_trip(&payments), r#"{"data":[]}"#);
    assert_eq!(round_trip(&refunds), r#"{"list":"refunds","data":[]}"#);
    let e = error::<ResponseBody>(r#"{"list":"payments","data":[]}"#);
    assert!(e.contains("did not match any variant"), "{e}");
}

#[test]
fn money_and_upstream_round_trip() {
    let charge_states = [
        ChargeState::Approved,
        ChargeState::Declined(FailureCode::CardDeclined),
        ChargeState::Declined(FailureCode::AuthenticationFailed),
        ChargeState::Declined(FailureCode::NotReceivedByUpstream),
        ChargeState::ActionRequired,
        ChargeState::Canceled,
        ChargeState::NotFound,
        ChargeState::Error,
    ];
    for state in charge_states {
        round_trip(&UpstreamReply::Charge {
            attempt: AttemptId(4),
            state,
        });
        round_trip(&ChargeRecord {
            state,
            payment: PaymentId(1),
            merchant: MerchantId(0),
            environment: Environment::Live,
            amount: 1,
            card: Card('Z'),
        });
    }
    for state in [
        RefundState::Succeeded,
        RefundState::Failed,
        RefundState::NotFound,
        RefundState::Error,
    ] {
        round_trip(&UpstreamReply::Refund {
            refund: RefundId(1),
            state,
        });
    }
    let calls = [
        UpstreamCall::Charge {
            attempt: AttemptId(1),
            payment: PaymentId(1),
            merchant: MerchantId(1),
            environment: Environment::Test,
            amount: 10_000,
            currency: "USD".into(),
            card: Card('A'),
        },
        UpstreamCall::QueryCharge {
            attempt: AttemptId(1),
        },
        UpstreamCall::CancelCharge {
            attempt: AttemptId(1),
        },
        UpstreamCall::Refund {
            refund: RefundId(1),
            attempt: AttemptId(1),
            amount: 4_000,
        },
        UpstreamCall::QueryRefund {
            refund: RefundId(1),
        },
    ];
    for call in &calls {
        round_trip(call);
    }
    let entries = vec![
        LedgerEntry::Capture {
            attempt: AttemptId(1),
            payment: PaymentId(1),
            merchant: MerchantId(1),
            environment: Environment::Test,
            amount: 10_000,
            card: Card('A'),
            at: Millis::secs(15),
        },
        LedgerEntry::Refund {
            refund: RefundId(1),
            attempt: AttemptId(1),
            amount: 4_000,
            at: Millis::hours(2),
        },
    ];
    for entry in &entries {
        round_trip(entry);
    }
    round_trip(&Ledger { entries });
    // Every decision, by the names serde knows.
    let names = variant_names::<AcquirerDecision>(r#""nope""#);
    assert_eq!(names.len(), 5);
    for name in names {
        let decision: AcquirerDecision = serde_json::from_str(&format!("\"{name}\"")).unwrap();
        assert_eq!(round_trip(&decision), format!("\"{name}\""));
    }
}

/// The vocabulary every trace cites: rules, branches, ids, time, cards, webhook kinds.
#[test]
fn rules_branches_ids_and_time_round_trip() {
    for rule in Rule::ALL {
        round_trip(rule);
        round_trip(&rule.section());
        round_trip(&rule.enforcer());
    }
    for point in [
        BranchPoint::OrderNoReuse,
        BranchPoint::ConcurrentSameKey,
        BranchPoint::ConfirmWhileProcessing,
    ] {
        round_trip(&point);
        for branch in point.alternatives() {
            round_trip(&branch);
            assert_eq!(branch.point(), point);
        }
    }
    for n in [0, 1, 7, 999, 1_000, 123_456, u32::MAX] {
        round_trip(&PaymentId(n));
        round_trip(&AttemptId(n));
        round_trip(&RefundId(n));
        round_trip(&SessionId(n));
        round_trip(&RequestId(n));
        round_trip(&EventId(n));
        round_trip(&MerchantId(n));
        round_trip(&ApiKeyId(n));
    }
    assert_eq!(round_trip(&PaymentId(1)), "\"pay_demo_001\"");
    for ms in [0, 250, 15_000, u64::MAX] {
        assert_eq!(round_trip(&Millis(ms)), ms.to_string());
    }
    for env in [Environment::Test, Environment::Live] {
        round_trip(&env);
    }
    for label in ['A', 'B', 'z', 'é'] {
        round_trip(&Card(label));
    }
    for status in PAYMENT_STATUSES {
        round_trip(&Text::format(format_args!("payment.{}", status.as_str())));
        round_trip(&status);
    }
    for status in REFUND_STATUSES {
        round_trip(&Text::format(format_args!("refund.{}", status.as_str())));
        round_trip(&status);
    }
    for resolution in [
        ResolutionStatus::Known,
        ResolutionStatus::NeedsQuery,
        ResolutionStatus::ManualReview,
    ] {
        round_trip(&resolution);
    }
    round_trip(&Text::from(
        "a text longer than thirty bytes, kept on the heap",
    ));
}

fn order_states() -> Vec<OrderState> {
    vec![
        OrderState::Submitting,
        OrderState::Confirming,
        OrderState::PendingConfirmation,
        OrderState::AwaitingPayer,
        OrderState::Paid,
        OrderState::Failed,
        OrderState::Closed,
        OrderState::Rejected(ErrorCode::UnsupportedCurrency),
        OrderState::Defect,
    ]
}

fn decisions() -> Vec<Decision> {
    let mut decisions = vec![
        Decision::KeyPersisted {
            key: "payment.create:ORDER-1:1".into(),
            seq: 1,
        },
        Decision::RetryScheduled {
            try_no: 2,
            at: Millis::ms(1_100),
        },
        Decision::RetryDropped { try_no: 3 },
        Decision::ResultUnknown,
        Decision::QueryScheduled {
            at: Millis::secs(10),
        },
        Decision::QueryDeferred {
            until: Millis::secs(20),
        },
        Decision::QueryStopped,
        Decision::ScheduleEnded,
        Decision::Applied {
            object: ObjectState::Payment {
                status: PaymentStatus::Succeeded,
                resolution: ResolutionStatus::Known,
            },
            version: 2,
            via: Via::Response,
        },
        Decision::Applied {
            object: ObjectState::Refund {
                status: RefundStatus::Failed,
            },
            version: 1,
            via: Via::Webhook,
        },
        Decision::Stale {
            version: 1,
            applied: 2,
            via: Via::Query,
        },
        Decision::OtherPayment {
            payment: PaymentId(9),
        },
        Decision::Adopted {
            object: ResourceId::Refund(RefundId(1)),
        },
        Decision::Fulfil {
            payment: PaymentId(1),
        },
        Decision::PendingConfirmation,
        Decision::CancelNotConfirmed,
        Decision::Rejected {
            code: ErrorCode::InvalidRequest,
        },
        Decision::Defect {
            code: ErrorCode::IdempotencyConflict,
        },
        Decision::LateReply {
            handle: Handle { boot: 1, n: 4 },
        },
        Decision::UnknownObject,
        Decision::Restarted { boot: 2 },
    ];
    for &pattern in AntiPattern::ALL {
        decisions.push(Decision::Deviate { pattern });
    }
    for message in [
        PayerMessage::TemporarilyUnavailable,
        PayerMessage::Confirming,
        PayerMessage::ContactSupport,
    ] {
        decisions.push(Decision::ShowPayer { message });
    }
    let mut reasons = vec![
        Refusal::UnknownOrder,
        Refusal::InvalidOrder,
        Refusal::ParametersBound,
        Refusal::AlreadyInProgress,
        Refusal::NoPaymentId,
        Refusal::NotFailed { status: None },
        Refusal::NotFailed {
            status: Some(PaymentStatus::Processing),
        },
        Refusal::AttemptsExhausted,
        Refusal::Expired,
        Refusal::RefundExists,
    ];
    for state in order_states() {
        reasons.push(Refusal::OrderExists { state });
        reasons.push(Refusal::NotCancelable { state });
        reasons.push(Refusal::NotPaid { state });
    }
    decisions.extend(
        reasons
            .into_iter()
            .map(|reason| Decision::Refused { reason }),
    );
    decisions
}

#[test]
fn client_commands_decisions_and_outputs_round_trip() {
    let commands = [
        Command::PayOrder {
            order: "ORDER-1".into(),
            amount: 10_000,
            currency: "USD".into(),
            card: Card('A'),
        },
        Command::RetryWithCard {
            order: "ORDER-1".into(),
            card: Card('B'),
        },
        Command::CancelOrder {
            order: "ORDER-1".into(),
        },
        Command::AmendOrder {
            order: "ORDER-1".into(),
            amount: 1,
        },
        Command::RefundOrder {
            order: "ORDER-1".into(),
            refund: "R-1".into(),
            amount: 4_000,
        },
        Command::Reconcile,
    ];
    for command in &commands {
        round_trip(command);
    }
    round_trip(&Draw::new(Millis::ms(249), u64::MAX));
    let subjects = [
        Subject::Order("ORDER-1".into()),
        Subject::Refund("R-1".into()),
        Subject::Server,
    ];
    let mut outputs = vec![
        ClientOutput::Send {
            handle: Handle { boot: 0, n: 1 },
            request: ApiRequest {
                api_key: ApiKeyId(1),
                idempotency_key: Some("payment.create:ORDER-1:1".into()),
                endpoint: endpoints().remove(0),
            },
            timeout: Millis::secs(20),
            rule: Rule::ClientTimeouts,
        },
        ClientOutput::AckWebhook {
            event: EventId(3),
            rule: Rule::LatestVersionWins,
        },
    ];
    for decision in decisions() {
        for subject in &subjects {
            outputs.push(ClientOutput::Decision {
                subject: subject.clone(),
                decision: decision.clone(),
                rule: Rule::PersistBeforeSend,
            });
        }
    }
    for output in &outputs {
        round_trip(output);
    }
    for state in order_states() {
        round_trip(&state);
    }
    for outcome in [
        Outcome::Sending,
        Outcome::Answered,
        Outcome::Unknown,
        Outcome::Rejected(ErrorCode::RateLimited),
        Outcome::Conflict,
    ] {
        round_trip(&outcome);
    }
    for kind in [SubmissionKind::Create, SubmissionKind::Confirm] {
        round_trip(&kind);
    }
    for purpose in [
        KeyPurpose::CreatePayment,
        KeyPurpose::ConfirmPayment,
        KeyPurpose::CancelPayment,
        KeyPurpose::CreateRefund,
    ] {
        round_trip(&purpose);
    }
    let mut policy = Policy::reference_random();
    assert_eq!(policy.keys, Keys::RandomPersisted);
    round_trip(&policy);
    for &pattern in AntiPattern::ALL {
        policy = policy.with(pattern);
        round_trip(&pattern);
    }
    round_trip(&policy);
}

/// An unknown field, an unknown variant or a value of the wrong form is an error that
/// says so.
#[test]
fn unknown_fields_and_variants_are_clear_errors() {
    let cases: Vec<(String, &str)> = vec![
        (
            error::<ApiRequest>(
                r#"{"api_key":"ak_1","endpoint":"create_payment","body":{},"extra":1}"#,
            ),
            "unknown field `extra`",
        ),
        (
            error::<ApiRequest>(r#"{"api_key":"ak_1","endpoint":"teleport"}"#),
            "unknown variant `teleport`",
        ),
        (
            error::<ApiRequest>(r#"{"endpoint":"list_refunds_processing"}"#),
            "missing field `api_key`",
        ),
        (
            error::<CreatePaymentBody>(r#"{"amount":1,"cvc":"123"}"#),
            "unknown field `cvc`",
        ),
        (
            error::<PaymentView>(&{
                let mut v = serde_json::to_value(payment(PaymentStatus::Succeeded, None)).unwrap();
                v["card"] = "A".into();
                v.to_string()
            }),
            "unknown field `card`",
        ),
        (error::<ErrorCode>(r#""nope""#), "unknown variant `nope`"),
        (
            error::<Rule>(r#""NoSuchRule""#),
            "unknown variant `NoSuchRule`",
        ),
        (
            error::<Branch>(r#""S9Anything""#),
            "unknown variant `S9Anything`",
        ),
        (
            error::<PaymentId>(r#""ref_demo_001""#),
            "expected an id like pay_demo_001",
        ),
        (
            error::<PaymentId>(r#""pay_demo_1""#),
            "expected an id like pay_demo_001",
        ),
        (
            error::<RequestId>(r#""req_99999999999""#),
            "expected an id like req_1",
        ),
        (error::<Card>(r#""AB""#), "a card label of one character"),
        (error::<Card>(r#""""#), "a card label of one character"),
        (error::<Text>("17"), "expected a string"),
        (
            error::<Decision>(r#"{"decision":"restarted","boot":1,"why":"?"}"#),
            "unknown field `why`",
        ),
        (
            error::<ClientOutput>(r#"{"output":"shout","rule":"PersistBeforeSend"}"#),
            "unknown variant `shout`",
        ),
        (
            error::<Command>(r#"{"command":"pay_order","order":"O"}"#),
            "missing field `amount`",
        ),
        (
            error::<ResponseBody>(r#"{"id":"pay_demo_001"}"#),
            "did not match any variant of untagged enum ResponseBody",
        ),
        (
            error::<ApiResponse>(r#"{"status":200,"body":{"data":[]},"etag":"x"}"#),
            "unknown field `etag`",
        ),
        (
            error::<UpstreamReply>(r#"{"reply":"charge","attempt":"att_001","state":"lost"}"#),
            "unknown variant `lost`",
        ),
    ];
    for (got, want) in cases {
        assert!(got.contains(want), "{got:?} does not say {want:?}");
    }
}
