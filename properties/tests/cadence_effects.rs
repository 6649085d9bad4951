//! No property narrower than its name: for each cadence and merchant-effect property, an
//! event stream that plants exactly the case its name covers (and the contract's own
//! case next to it, which must hold), judged from the events alone.

use payhub_model::api::req;
use payhub_model::client::{Decision, Handle, ObjectState, PayerMessage, Subject};
use payhub_model::event::{Event, StoredAttempt, StoredOrder, StoredPayment, SubmissionRef, What};
use payhub_model::platform::state::AttemptStatus;
use payhub_model::*;
use payhub_properties::{Facts, Property, property};

const NODE: u8 = 0;
const PAY: PaymentId = PaymentId(1);
const ATT: AttemptId = AttemptId(1);

fn at(ms: u64, what: What) -> Event {
    Event::new(Millis(ms), what)
}

fn judge(name: &str, events: &[Event]) -> Option<String> {
    let p: &Property = property(name).unwrap_or_else(|| panic!("{name} is registered"));
    p.judge(&Facts::from_events(events))
}

fn answer(status: u16, retry_after_s: Option<u32>) -> ApiResponse {
    let mut r = ApiResponse::error(ApiError::new(ErrorCode::InternalError));
    r.status = status;
    r.retry_after_s = retry_after_s;
    r
}

fn delivered(ms: u64, status: u16, retry_after_s: Option<u32>) -> Event {
    at(
        ms,
        What::Delivered {
            id: RequestId(1),
            to: NODE,
            response: answer(status, retry_after_s),
        },
    )
}

fn decided(ms: u64, decision: Decision) -> Event {
    at(
        ms,
        What::ClientDecided {
            node: NODE,
            subject: Subject::Order("ORDER-1".into()),
            decision,
            rule: Rule::RetryBackoff,
        },
    )
}

fn sends(ms: u64, request: ApiRequest, timeout: Millis, submission: bool) -> Event {
    at(
        ms,
        What::ClientSends {
            node: NODE,
            handle: Handle { boot: 0, n: 1 },
            request,
            owner: Some((MerchantId(1), Environment::Test)),
            timeout,
            rule: Rule::RetrySameKey,
            submission: submission.then(|| SubmissionRef {
                db: 0,
                order: "ORDER-1".into(),
                seq: 1,
            }),
            held: false,
        },
    )
}

fn create() -> ApiRequest {
    req::create("K", "ORDER-1", 10000, "USD", 'A')
}

fn order(ms: u64, was: Option<StoredOrder>, status: Option<PaymentStatus>) -> Event {
    at(
        ms,
        What::OrderStored {
            db: 0,
            order_no: "ORDER-1".into(),
            was,
            stored: StoredOrder {
                payment_id: Some(PAY),
                version: 2,
                status,
            },
        },
    )
}

fn stored_order(status: Option<PaymentStatus>) -> Option<StoredOrder> {
    Some(StoredOrder {
        payment_id: Some(PAY),
        version: 1,
        status,
    })
}

fn payment(ms: u64, status: PaymentStatus, resolution: ResolutionStatus) -> Event {
    at(
        ms,
        What::PaymentStored {
            payment: PAY,
            stored: StoredPayment {
                merchant: MerchantId(1),
                environment: Environment::Test,
                merchant_order_no: "ORDER-1".into(),
                status,
                resolution,
                expires_at: Millis::days(1),
                attempts: vec![ATT],
                failure_attempt: None,
                version: 1,
                fee_rate_bps: 290,
            },
        },
    )
}

fn attempt(ms: u64) -> Event {
    at(
        ms,
        What::AttemptStored {
            attempt: ATT,
            payment: PAY,
            stored: StoredAttempt {
                status: AttemptStatus::Processing,
                sent_at: Millis(ms),
            },
        },
    )
}

fn verify(ms: u64) -> Event {
    at(
        ms,
        What::UpstreamCalled {
            call: UpstreamCall::QueryCharge { attempt: ATT },
            rule: Rule::NeedsQuery,
            during: None,
        },
    )
}

const S: u64 = 1_000;
const H: u64 = 3_600_000;

/// RETRY-02: try 3 comes 2 s (plus under 250 ms) after try 2 failed, on a timeout as on a
/// 5xx; a 429 with Retry-After is timed by it instead.
#[test]
fn retry_02_client_backs_off_as_the_reference_code() {
    let name = "client-backs-off-as-the-reference-code";
    let retry = |due| {
        decided(
            10 * S,
            Decision::RetryScheduled {
                try_no: 3,
                at: Millis(due),
            },
        )
    };
    let on_500 = |due| vec![delivered(10 * S, 500, None), retry(due)];
    assert_eq!(judge(name, &on_500(12 * S + 249)), None);
    assert!(judge(name, &on_500(11 * S)).is_some(), "not doubled");
    assert!(
        judge(name, &on_500(12 * S + 250)).is_some(),
        "jitter of 250 ms"
    );
    let on_timeout = vec![
        at(
            10 * S,
            What::TimedOut {
                node: NODE,
                id: RequestId(1),
            },
        ),
        retry(11 * S),
    ];
    assert!(judge(name, &on_timeout).is_some(), "after a timeout too");
    let on_429 = vec![delivered(10 * S, 429, Some(2)), retry(12 * S)];
    assert_eq!(judge(name, &on_429), None, "Retry-After times it");
}

/// TIMEOUT-01: 20 s for create and confirm, 10 s for queries; cancel names no minimum.
#[test]
fn timeout_01_client_waits_the_contract_timeouts() {
    let name = "client-waits-the-contract-timeouts";
    let one = |r: ApiRequest, t: u64| judge(name, &[sends(0, r, Millis(t), false)]);
    assert_eq!(one(create(), 20 * S), None);
    assert!(one(create(), 19 * S).is_some());
    assert!(one(req::confirm("C", PAY, 'B'), 5 * S).is_some());
    assert_eq!(one(req::get(PAY), 10 * S), None);
    assert!(one(req::get(PAY), 9 * S).is_some());
    assert!(one(req::by_order("ORDER-1"), 5 * S).is_some());
    assert_eq!(one(req::cancel("X", PAY), 5 * S), None);
}

/// SCHED-01: the schedule ends only after its last query within 24 hours (21 h).
#[test]
fn sched_01_client_queries_until_24_hours() {
    let name = "client-queries-until-24-hours";
    let run = |end: u64| {
        judge(
            name,
            &[
                order(0, None, None),
                sends(0, create(), Millis::secs(20), true),
                decided(end, Decision::ScheduleEnded),
            ],
        )
    };
    assert!(run(H + 15 * S).is_some(), "ended after the 1-hour query");
    assert!(run(20 * H).is_some());
    assert_eq!(run(21 * H), None);
}

/// SCHED-01: no query of a Payment the client holds as succeeded, canceled or expired.
#[test]
fn sched_01_client_stops_querying_at_a_final_status() {
    let name = "client-stops-querying-at-a-final-status";
    for status in [
        PaymentStatus::Succeeded,
        PaymentStatus::Canceled,
        PaymentStatus::Expired,
    ] {
        let events = [
            order(0, None, Some(status)),
            sends(20 * S, req::get(PAY), Millis::secs(10), false),
        ];
        assert!(judge(name, &events).is_some(), "{status:?}");
    }
    let processing = [
        order(0, None, Some(PaymentStatus::Processing)),
        sends(20 * S, req::get(PAY), Millis::secs(10), false),
    ];
    assert_eq!(judge(name, &processing), None);
}

/// RES-01: the first verification and each automatic one within 24 hours.
#[test]
fn res_01_platform_verifies_unknown_results_within_its_window() {
    let name = "platform-verifies-unknown-results-within-its-window";
    let base = || {
        vec![
            attempt(0),
            payment(0, PaymentStatus::Processing, ResolutionStatus::NeedsQuery),
        ]
    };
    let mut first_late = base();
    first_late.push(verify(24 * H));
    assert!(
        judge(name, &first_late).is_some(),
        "first query a day later"
    );
    let mut gap_late = base();
    gap_late.extend([verify(60 * S), verify(60 * S + 24 * H)]);
    assert!(
        judge(name, &gap_late).is_some(),
        "an automatic gap of a day"
    );
    let mut on_time = base();
    on_time.extend([verify(60 * S), verify(120 * S)]);
    assert_eq!(judge(name, &on_time), None);
}

/// RES-03: under manual_review, a re-query at most 24 hours after the one before.
#[test]
fn res_03_platform_requeries_manual_review_every_24_hours() {
    let name = "platform-requeries-manual-review-every-24-hours";
    let run = |second: u64| {
        judge(
            name,
            &[
                attempt(0),
                payment(0, PaymentStatus::Processing, ResolutionStatus::NeedsQuery),
                verify(60 * S),
                payment(H, PaymentStatus::Processing, ResolutionStatus::ManualReview),
                verify(H),
                verify(second),
            ],
        )
    };
    assert_eq!(run(25 * H), None);
    assert!(run(49 * H).is_some(), "every 48 hours");
}

/// RES-03: manual_review only after the automatic window queried the upstream.
#[test]
fn res_03_platform_goes_to_manual_review_after_its_automatic_queries() {
    let name = "platform-goes-to-manual-review-after-its-automatic-queries";
    let at_once = [
        attempt(0),
        payment(
            15 * S,
            PaymentStatus::Processing,
            ResolutionStatus::ManualReview,
        ),
    ];
    assert!(judge(name, &at_once).is_some());
    let after = [
        attempt(0),
        payment(
            15 * S,
            PaymentStatus::Processing,
            ResolutionStatus::NeedsQuery,
        ),
        verify(60 * S),
        payment(H, PaymentStatus::Processing, ResolutionStatus::ManualReview),
    ];
    assert_eq!(judge(name, &after), None);
}

/// RES-07: at most once per order, and only a succeeded Payment.
#[test]
fn res_07_client_fulfils_an_order_once_when_succeeded() {
    let name = "client-fulfils-an-order-once-when-succeeded";
    let fulfil = |ms| decided(ms, Decision::Fulfil { payment: PAY });
    let succeeded = payment(0, PaymentStatus::Succeeded, ResolutionStatus::Known);
    assert_eq!(judge(name, &[succeeded.clone(), fulfil(S)]), None);
    let twice = [succeeded, fulfil(S), fulfil(2 * S)];
    assert!(judge(name, &twice).is_some(), "twice");
    let early = [
        payment(0, PaymentStatus::Processing, ResolutionStatus::Known),
        fulfil(S),
    ];
    assert!(judge(name, &early).is_some(), "before it succeeded");
}

/// CANCEL-02, RES-06: closed (canceled or expired) once, on a closed Payment.
#[test]
fn cancel_02_client_closes_an_order_once_on_a_closed_payment() {
    let name = "client-closes-an-order-once-on-a-closed-payment";
    for status in [PaymentStatus::Canceled, PaymentStatus::Expired] {
        let open = [
            payment(0, PaymentStatus::RequiresAction, ResolutionStatus::Known),
            order(S, None, Some(status)),
        ];
        assert!(
            judge(name, &open).is_some(),
            "{status:?} on an open payment"
        );
        let closed = [
            payment(0, status, ResolutionStatus::Known),
            order(S, None, Some(status)),
        ];
        assert_eq!(judge(name, &closed), None, "{status:?}");
    }
    let canceled = Some(PaymentStatus::Canceled);
    let twice = [
        payment(0, PaymentStatus::Canceled, ResolutionStatus::Known),
        order(S, None, canceled),
        order(
            2 * S,
            stored_order(canceled),
            Some(PaymentStatus::Processing),
        ),
        order(
            3 * S,
            stored_order(Some(PaymentStatus::Processing)),
            canceled,
        ),
    ];
    assert!(judge(name, &twice).is_some(), "closed twice");
}

/// RES-07, CANCEL-02: fulfilled then closed, or closed then fulfilled (the close
/// property's third clause: an order is fulfilled or closed, never both).
#[test]
fn res_07_client_closes_no_order_it_fulfilled() {
    let name = "client-closes-an-order-once-on-a-closed-payment";
    const SECOND: PaymentId = PaymentId(2);
    // ORDER-1 fulfilled by its first Payment, then closed on a second one that the
    // platform did cancel: only the fulfilled-and-closed clause sees it.
    let second = match payment(0, PaymentStatus::Canceled, ResolutionStatus::Known).what {
        What::PaymentStored { stored, .. } => at(
            0,
            What::PaymentStored {
                payment: SECOND,
                stored,
            },
        ),
        _ => unreachable!(),
    };
    let closed_on_second = at(
        2 * S,
        What::OrderStored {
            db: 0,
            order_no: "ORDER-1".into(),
            was: stored_order(Some(PaymentStatus::Succeeded)),
            stored: StoredOrder {
                payment_id: Some(SECOND),
                version: 2,
                status: Some(PaymentStatus::Canceled),
            },
        },
    );
    let succeeded = payment(0, PaymentStatus::Succeeded, ResolutionStatus::Known);
    let fulfil = decided(S, Decision::Fulfil { payment: PAY });
    let both = [
        succeeded.clone(),
        second.clone(),
        fulfil.clone(),
        closed_on_second.clone(),
    ];
    let why = judge(name, &both).expect("fulfilled and closed");
    assert!(why.contains("both fulfilled and closed"), "{why}");
    let closed_first = [
        succeeded.clone(),
        second,
        closed_on_second,
        decided(3 * S, Decision::Fulfil { payment: PAY }),
    ];
    let why = judge(name, &closed_first).expect("closed, then fulfilled");
    assert!(why.contains("both fulfilled and closed"), "{why}");
    assert_eq!(judge(name, &[succeeded, fulfil]), None);
}

/// WORDING-01, WORDING-02, RES-04: the status table's messages.
#[test]
fn wording_01_client_shows_the_status_table_message() {
    let name = "client-shows-the-status-table-message";
    let show = |ms, message| decided(ms, Decision::ShowPayer { message });
    use PayerMessage::*;
    assert_eq!(
        judge(
            name,
            &[delivered(0, 503, None), show(0, TemporarilyUnavailable)]
        ),
        None
    );
    assert!(judge(name, &[delivered(0, 503, None), show(0, Confirming)]).is_some());
    // The last try's 503: unavailable first, then confirming (the result is unknown).
    let last_try = [
        delivered(0, 503, None),
        show(0, TemporarilyUnavailable),
        show(0, Confirming),
    ];
    assert_eq!(judge(name, &last_try), None);
    assert!(
        judge(
            name,
            &[delivered(0, 200, None), show(0, TemporarilyUnavailable)]
        )
        .is_some()
    );
    assert!(judge(name, &[delivered(0, 201, None), show(0, Confirming)]).is_some());
    // The store holds the order's Payment processing (a lookup showed it so): the status
    // table asks for "confirming" too.
    let processing = payment(0, PaymentStatus::Processing, ResolutionStatus::Known);
    let shown = [processing, delivered(0, 200, None), show(0, Confirming)];
    assert_eq!(judge(name, &shown), None);
    assert_eq!(
        judge(name, &[delivered(0, 202, None), show(0, Confirming)]),
        None
    );
    let pending = decided(S, Decision::PendingConfirmation);
    assert!(judge(name, &[delivered(0, 200, None), pending.clone()]).is_some());
    let applied = decided(
        S,
        Decision::Applied {
            object: ObjectState::Payment {
                status: PaymentStatus::Processing,
                resolution: ResolutionStatus::ManualReview,
            },
            version: 3,
            via: payhub_model::client::Via::Query,
        },
    );
    assert_eq!(
        judge(name, &[delivered(0, 200, None), applied, pending]),
        None
    );
}
