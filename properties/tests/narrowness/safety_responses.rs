//! The safety and response rows of the table in `main.rs`: for each property, the case
//! its name covers beyond what its predicate first looked at (another endpoint, a waiter's
//! later answer, a second merchant, a refund instead of a Payment, an attempt the
//! Payment's record does not list, …), planted from events alone and judged violated,
//! next to the contract's neighbouring case, which holds. Where a test found the
//! predicate narrower than its name, its doc says "found" and what was widened.

use super::{
    ENV, M, PAY, attempt, charge, ev, holds, keyed_requests, leaves, payment, refund_stored,
    refund_view, stored, violated,
};
use payhub_model::acquirer::ChargeState;
use payhub_model::event::{Event, Handling, Owner, Route, ScopeKey, StoredAttempt, What};
use payhub_model::harness::req;
use payhub_model::platform::state::AttemptStatus;
use payhub_model::{
    ApiError, ApiRequest, ApiResponse, AttemptId, Card, Contract, Endpoint, Environment, ErrorCode,
    EventId, Failure, FailureCode, Field, MerchantId, Method, Millis, PaymentId, PaymentStatus,
    PaymentView, RefundId, RefundStatus, RequestId, ResolutionStatus, ResourceId, ResponseBody,
    Rule, SessionId, SessionView, UpstreamCall, WebhookEvent, WebhookObject,
};

const MINE: Owner = Some((M, ENV));
const OTHER_MERCHANT: Owner = Some((MerchantId(2), ENV));
const LIVE: Owner = Some((M, Environment::Live));

/// A request's own step: what it was answered there (`None`: it waits or executes on),
/// the upstream calls it sent, whether it stored a new idempotency record.
fn step(
    id: u32,
    request: &ApiRequest,
    owner: Owner,
    answer: Option<ApiResponse>,
    calls: Vec<UpstreamCall>,
    new_record: bool,
) -> Event {
    ev(What::Handled {
        id: RequestId(id),
        request: request.clone(),
        owner,
        business: None,
        handling: Handling {
            answer,
            calls,
            store_changed: new_record,
            new_record,
        },
    })
}

/// An answer leaving the platform for request `id`, to a merchant waiting for it.
fn out(id: u32, request: &ApiRequest, owner: Owner, response: ApiResponse) -> Event {
    out_at(Millis(0), id, request, owner, response)
}

fn out_at(at: Millis, id: u32, request: &ApiRequest, owner: Owner, response: ApiResponse) -> Event {
    Event::new(
        at,
        What::Answered {
            id: RequestId(id),
            response,
            rule: Rule::ReplayReusesObject,
            route: Some(Route {
                merchant: 0,
                owner,
                scope: ScopeKey::of(owner, request),
                awaited: true,
                edge_500: false,
                object_owner: owner,
            }),
        },
    )
}

fn error(code: ErrorCode) -> ApiResponse {
    ApiResponse::error(ApiError::new(code))
}

fn view(id: PaymentId, status: PaymentStatus, version: u32, attempts: u8) -> PaymentView {
    PaymentView {
        id,
        merchant_order_no: "ORDER-1".into(),
        amount: 10000,
        currency: "USD".into(),
        status,
        resolution_status: ResolutionStatus::Known,
        attempt_count: attempts,
        failure: None,
        next_action: status == PaymentStatus::RequiresAction,
        expires_at: Millis::hours(2),
        fee_rate_bps: 0,
        amount_refunded: 0,
        version,
    }
}

fn shows(status: u16, p: PaymentView) -> ApiResponse {
    ApiResponse::ok(status, ResponseBody::Payment(p))
}

/// PAY as the store holds it: `status`, at `version`, with attempts 1..=`attempts`.
fn held(status: PaymentStatus, version: u32, attempts: u32) -> Event {
    let Event { at, what } = payment(status, &(1..=attempts).collect::<Vec<_>>(), None);
    let what = match what {
        What::PaymentStored {
            payment,
            mut stored,
        } => {
            stored.version = version;
            What::PaymentStored { payment, stored }
        }
        other => other,
    };
    Event { at, what }
}

fn attempt_of(attempt: u32, payment: PaymentId, status: AttemptStatus, sent_at: Millis) -> Event {
    ev(What::AttemptStored {
        attempt: AttemptId(attempt),
        payment,
        stored: StoredAttempt { status, sent_at },
    })
}

fn charge_call(attempt: u32, card: char) -> UpstreamCall {
    UpstreamCall::Charge {
        attempt: AttemptId(attempt),
        payment: PAY,
        merchant: M,
        environment: ENV,
        amount: 10000,
        currency: "USD".into(),
        card: Card(card),
    }
}

/// UNIQ-02, ATTEMPT-01: one unfinished attempt per Payment. Found: the predicate counted
/// only the attempts the Payment's record lists; a second unfinished attempt the store
/// holds for the Payment but its record does not list passed (now: every attempt the
/// store holds for it, `Attempts::attempts_of`).
#[test]
fn second_unfinished_attempt_the_record_does_not_list() {
    use AttemptStatus::{Failed, Processing, RequiresAction};
    let name = "no-new-attempt-while-one-is-unfinished";
    // A card retry after a failure: one unfinished.
    holds(
        name,
        &[
            attempt(1, Failed),
            attempt(2, Processing),
            payment(PaymentStatus::Processing, &[1, 2], None),
        ],
    );
    violated(
        name,
        &[
            attempt(1, RequiresAction),
            attempt(2, Processing),
            payment(PaymentStatus::Processing, &[1, 2], None),
        ],
    );
    // Failed on the platform, but the acquirer still holds the charge open.
    violated(
        name,
        &[
            attempt(1, Failed),
            charge(1, ChargeState::ActionRequired),
            attempt(2, Processing),
            payment(PaymentStatus::Processing, &[1, 2], None),
        ],
    );
    // The case the predicate missed: attempt 2 of PAY in the store, not in its record.
    violated(
        name,
        &[
            attempt(1, Processing),
            attempt(2, Processing),
            payment(PaymentStatus::Processing, &[1], None),
        ],
    );
    // An unfinished attempt of another Payment is no second attempt of this one.
    holds(
        name,
        &[
            attempt(1, Processing),
            attempt_of(2, PaymentId(2), Processing, Millis(0)),
            payment(PaymentStatus::Processing, &[1], None),
        ],
    );
}

/// ATTEMPT-02, ATTEMPT-04, ATTEMPT-05, EXPIRY-01. Found twice: the limit and the "every
/// attempt but the last failed" rule counted only the attempts the record lists (a
/// fourth attempt the store holds unlisted passed); and expires_at was judged for card
/// retries only, so the first confirm of a checkout session's Payment (A-STATUS-RPM: its
/// first attempt) after expires_at passed (now: every attempt).
#[test]
fn attempts_beyond_the_record_and_a_first_confirm_after_expiry() {
    use AttemptStatus::{Failed, Processing};
    let name = "attempts-within-limits";
    let expires = Millis::hours(2);
    let before = Millis(expires.0 - 1);
    let three = [
        attempt_of(1, PAY, Failed, Millis(0)),
        attempt_of(2, PAY, Failed, Millis(10)),
        attempt_of(3, PAY, Processing, before),
    ];
    let mut events = three.to_vec();
    events.push(payment(PaymentStatus::Processing, &[1, 2, 3], None));
    holds(name, &events);
    events.push(attempt_of(4, PAY, Processing, before));
    violated(name, &events);
    let mut listed = three.to_vec();
    listed.push(attempt_of(4, PAY, Processing, before));
    listed.push(payment(PaymentStatus::Processing, &[1, 2, 3, 4], None));
    violated(name, &listed);
    // A card retry while the first attempt is unfinished (listed or not).
    violated(
        name,
        &[
            attempt_of(1, PAY, Processing, Millis(0)),
            attempt_of(2, PAY, Processing, Millis(10)),
            payment(PaymentStatus::Processing, &[1], None),
        ],
    );
    // A checkout session's Payment, confirmed for the first time: before expires_at
    // holds, at or after it is a new payment operation EXPIRY-01 rules out.
    holds(
        name,
        &[
            attempt_of(1, PAY, Processing, before),
            payment(PaymentStatus::Processing, &[1], None),
        ],
    );
    violated(
        name,
        &[
            attempt_of(1, PAY, Processing, expires),
            payment(PaymentStatus::Processing, &[1], None),
        ],
    );
}

/// REJECT-01, A-409-NOBIND: a rejection executes nothing and binds no key. Found twice:
/// 404 and 405 were not counted as rejections (a confirm answered 404 that charged
/// passed), and a rejection that stored an idempotency record without changing any other
/// count passed (now: `new_record` too).
#[test]
fn rejections_404_405_and_a_key_bound_by_a_rejection() {
    let name = "rejections-execute-nothing";
    let confirm = req::confirm("k1", PAY, 'A');
    for code in [
        ErrorCode::InvalidRequest,
        ErrorCode::IdempotencyConflict,
        ErrorCode::PaymentNotConfirmable,
        ErrorCode::RateLimited,
        ErrorCode::TemporarilyUnavailable,
        ErrorCode::ResourceMissing,
        ErrorCode::MethodNotAllowed,
    ] {
        holds(
            name,
            &[step(1, &confirm, MINE, Some(error(code)), vec![], false)],
        );
        violated(
            name,
            &[step(
                1,
                &confirm,
                MINE,
                Some(error(code)),
                vec![charge_call(1, 'A')],
                false,
            )],
        );
        let bound = ev(What::Handled {
            id: RequestId(1),
            request: confirm.clone(),
            owner: MINE,
            business: None,
            handling: Handling {
                answer: Some(error(code)),
                calls: vec![],
                new_record: true,
                store_changed: false,
            },
        });
        violated(name, &[bound]);
    }
    // An execution's own 200 changes the store: no rejection.
    holds(
        name,
        &[step(
            1,
            &confirm,
            MINE,
            Some(shows(200, view(PAY, PaymentStatus::Processing, 2, 1))),
            vec![charge_call(1, 'A')],
            true,
        )],
    );
}

/// REPLAY-01, CONC-02: every 2xx under one scope names one object, replays and waiters
/// alike, Payments and checkout sessions alike, within retention; another merchant's
/// scope under the same key, and the same scope after retention, are not replays.
#[test]
fn replay_and_waiter_answered_another_object() {
    let name = "replay-returns-same-object";
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let first = out(
        1,
        &create,
        MINE,
        shows(201, view(PAY, PaymentStatus::Processing, 2, 1)),
    );
    let again = |id, p: PaymentId| {
        out(
            id,
            &create,
            MINE,
            shows(200, view(p, PaymentStatus::Processing, 2, 1)),
        )
    };
    holds(name, &[first.clone(), again(2, PAY)]);
    violated(name, &[first.clone(), again(2, PaymentId(2))]);
    // A waiter, answered after the executor, in another node's request.
    violated(
        name,
        &[first.clone(), again(3, PAY), again(4, PaymentId(2))],
    );
    let session = req::session("k1", "ORDER-1", 10000, "USD");
    let sess = |id, s| {
        out(
            id,
            &session,
            MINE,
            ApiResponse::ok(
                201,
                ResponseBody::Session(SessionView {
                    id: SessionId(s),
                    payment_id: PAY,
                    expires_at: Millis::hours(1),
                }),
            ),
        )
    };
    holds(name, &[sess(1, 1), sess(2, 1)]);
    violated(name, &[sess(1, 1), sess(2, 2)]);
    let elsewhere = out(
        2,
        &create,
        OTHER_MERCHANT,
        shows(201, view(PaymentId(2), PaymentStatus::Processing, 2, 1)),
    );
    holds(name, &[first.clone(), elsewhere]);
    let later = Millis(Contract::RETENTION.0 + 1);
    let after = out_at(
        later,
        2,
        &create,
        MINE,
        shows(201, view(PaymentId(2), PaymentStatus::Processing, 2, 1)),
    );
    holds(name, &[first, after]);
}

/// SCOPE-01, SCOPE-02: no answer carries an object the store holds for another merchant
/// or environment: on every endpoint, keyed or not, Payments, refunds and sessions.
#[test]
fn answers_with_objects_of_another_merchant_or_environment() {
    let name = "scopes-never-interfere";
    let object_of = |request: &ApiRequest, body: ResponseBody, object_owner: Owner| {
        Event::new(
            Millis(0),
            What::Answered {
                id: RequestId(1),
                response: ApiResponse::ok(200, body),
                rule: Rule::ReplayReusesObject,
                route: Some(Route {
                    merchant: 0,
                    owner: MINE,
                    scope: ScopeKey::of(MINE, request),
                    awaited: true,
                    edge_500: false,
                    object_owner,
                }),
            },
        )
    };
    let mut requests = keyed_requests("k1");
    requests.push(req::get(PAY));
    requests.push(req::get_refund(RefundId(1)));
    let bodies = [
        ResponseBody::Payment(view(PAY, PaymentStatus::Processing, 2, 1)),
        ResponseBody::Refund(refund_view(RefundStatus::Processing, 2)),
        ResponseBody::Session(SessionView {
            id: SessionId(1),
            payment_id: PAY,
            expires_at: Millis::hours(1),
        }),
    ];
    for request in &requests {
        for body in &bodies {
            holds(name, &[object_of(request, body.clone(), MINE)]);
            for foreign in [OTHER_MERCHANT, LIVE] {
                violated(name, &[object_of(request, body.clone(), foreign)]);
            }
        }
    }
}

/// CARD-01, CARD-03: a replay's card is never charged. Found: the predicate compared the
/// charged card with the request's own card only, so a replay (a request under a scope
/// that executed) that charged the card it carried passed (now: a replay charges
/// nothing). Another key's execution is no replay.
#[test]
fn replay_charging_its_own_card() {
    let name = "replayed-card-never-charged";
    let first = req::confirm("k1", PAY, 'A');
    let replay = req::confirm("k1", PAY, 'B');
    let executed = step(1, &first, MINE, None, vec![charge_call(1, 'A')], true);
    holds(name, std::slice::from_ref(&executed));
    violated(
        name,
        &[step(1, &first, MINE, None, vec![charge_call(1, 'B')], true)],
    );
    let replayed = step(2, &replay, MINE, None, vec![charge_call(2, 'B')], false);
    violated(name, &[executed.clone(), replayed]);
    let other_key = step(
        2,
        &req::confirm("k2", PAY, 'B'),
        MINE,
        None,
        vec![charge_call(2, 'B')],
        true,
    );
    holds(name, &[executed.clone(), other_key]);
    // The same key under a second merchant is its own scope.
    let elsewhere = step(
        2,
        &replay,
        OTHER_MERCHANT,
        None,
        vec![charge_call(2, 'B')],
        true,
    );
    holds(name, &[executed, elsewhere]);
}

/// CONFLICT-01, CARD-01, SCOPE-01: idempotency_conflict exactly when the safety-relevant
/// parameters differ from the scope's execution. Found: only answers given in the
/// request's own step were judged; a request that waited on the execution and was
/// answered later (a 200 with other parameters, a conflict with the same) passed (now:
/// `Money::waiting`, judged at the waiter's answer).
#[test]
fn waiter_answered_against_its_parameters() {
    let name = "idempotency-conflict-iff-parameters-differ";
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let other = req::create("k1", "ORDER-1", 20000, "USD", 'A');
    let other_card = req::create("k1", "ORDER-1", 10000, "USD", 'B');
    let executing = step(1, &create, MINE, None, vec![charge_call(1, 'A')], true);
    let ok = shows(200, view(PAY, PaymentStatus::Processing, 2, 1));
    let conflict = error(ErrorCode::IdempotencyConflict);
    let at_once = |request: &ApiRequest, answer: &ApiResponse| {
        vec![
            executing.clone(),
            step(2, request, MINE, Some(answer.clone()), vec![], false),
        ]
    };
    holds(name, &at_once(&other, &conflict));
    holds(name, &at_once(&create, &ok));
    holds(name, &at_once(&other_card, &ok));
    violated(name, &at_once(&create, &conflict));
    violated(name, &at_once(&other_card, &conflict));
    violated(name, &at_once(&other, &ok));
    violated(
        name,
        &at_once(&other, &error(ErrorCode::OperationInProgress)),
    );
    // The case the predicate missed: it waits, then is answered.
    let waited = |request: &ApiRequest, answer: &ApiResponse| {
        vec![
            executing.clone(),
            step(2, request, MINE, None, vec![], false),
            out(2, request, MINE, answer.clone()),
        ]
    };
    holds(name, &waited(&create, &ok));
    holds(name, &waited(&other_card, &ok));
    violated(name, &waited(&other, &ok));
    violated(name, &waited(&create, &conflict));
    // A second merchant's request under the same key has no execution to conflict with.
    let elsewhere = |answer: &ApiResponse| {
        vec![
            executing.clone(),
            step(
                2,
                &other,
                OTHER_MERCHANT,
                Some(answer.clone()),
                vec![],
                false,
            ),
        ]
    };
    holds(name, &elsewhere(&error(ErrorCode::InvalidRequest)));
    violated(name, &elsewhere(&conflict));
}

/// REPLAY-01, CONC-02, RET-01: a key that executed is never answered as new business.
/// Found: only own-step answers were judged; a waiter answered later 409
/// order_no_conflict passed (now: every answer under a scope that executed).
#[test]
fn waiter_answered_as_new_business() {
    let name = "same-key-never-new-business";
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let executing = step(1, &create, MINE, None, vec![charge_call(1, 'A')], true);
    let as_new = error(ErrorCode::OrderNoConflict);
    violated(
        name,
        &[
            executing.clone(),
            step(2, &create, MINE, Some(as_new.clone()), vec![], false),
        ],
    );
    violated(
        name,
        &[
            executing.clone(),
            step(2, &create, MINE, None, vec![], false),
            out(2, &create, MINE, as_new.clone()),
        ],
    );
    holds(
        name,
        &[
            executing.clone(),
            step(2, &create, MINE, None, vec![], false),
            out(
                2,
                &create,
                MINE,
                shows(200, view(PAY, PaymentStatus::Processing, 2, 1)),
            ),
        ],
    );
    // A new key for the order is new business: order_no_conflict is its answer.
    let new_key = req::create("k2", "ORDER-1", 10000, "USD", 'A');
    holds(
        name,
        &[
            executing.clone(),
            step(2, &new_key, MINE, Some(as_new.clone()), vec![], false),
            out(2, &new_key, MINE, as_new.clone()),
        ],
    );
    // After retention the key is forgotten (RET-01; the order number is not, RET-02).
    let later = Millis(Contract::RETENTION.0 + 1);
    holds(name, &[executing, out_at(later, 2, &create, MINE, as_new)]);
}

/// SCOPE-01, REPLAY-01: a 2xx is about the Payment the request names. Found: a waiter's
/// later answer was not judged (now: the Payment it names is kept with it); confirm,
/// cancel and refund alike.
#[test]
fn waiter_answered_about_another_payment() {
    let name = "answers-name-the-requested-payment";
    let about = |p| shows(200, view(p, PaymentStatus::Processing, 2, 1));
    for request in [req::confirm("k1", PAY, 'A'), req::cancel("k1", PAY)] {
        holds(
            name,
            &[step(1, &request, MINE, Some(about(PAY)), vec![], false)],
        );
        violated(
            name,
            &[step(
                1,
                &request,
                MINE,
                Some(about(PaymentId(2))),
                vec![],
                false,
            )],
        );
        let waiter = step(2, &request, MINE, None, vec![], false);
        holds(name, &[waiter.clone(), out(2, &request, MINE, about(PAY))]);
        violated(name, &[waiter, out(2, &request, MINE, about(PaymentId(2)))]);
    }
    let refund = req::refund("k1", PAY, "R-1", 5000);
    let mut other = refund_view(RefundStatus::Processing, 2);
    other.payment_id = PaymentId(2);
    let refund_of = |v| ApiResponse::ok(201, ResponseBody::Refund(v));
    holds(
        name,
        &[step(
            1,
            &refund,
            MINE,
            Some(refund_of(refund_view(RefundStatus::Processing, 2))),
            vec![],
            true,
        )],
    );
    violated(
        name,
        &[step(1, &refund, MINE, Some(refund_of(other)), vec![], true)],
    );
}

/// REPLAY-02, CONC-02: a replay and a waiter show the state as it is when the answer
/// leaves, not as it was when the scope executed; refunds too.
#[test]
fn replay_and_waiter_show_the_state_at_answer_time() {
    use PaymentStatus::{Processing, Succeeded};
    let name = "answers-show-the-current-state";
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let first = [
        held(Processing, 2, 1),
        out(1, &create, MINE, shows(201, view(PAY, Processing, 2, 1))),
    ];
    holds(name, &first);
    let mut replayed = first.to_vec();
    replayed.push(held(Succeeded, 3, 1));
    for id in [2, 3] {
        let mut e = replayed.clone();
        e.push(out(
            id,
            &create,
            MINE,
            shows(200, view(PAY, Succeeded, 3, 1)),
        ));
        holds(name, &e);
        let mut e = replayed.clone();
        e.push(out(
            id,
            &create,
            MINE,
            shows(200, view(PAY, Processing, 2, 1)),
        ));
        violated(name, &e);
    }
    // failure.attempt_id is part of the state.
    let mut failed = view(PAY, PaymentStatus::Failed, 3, 1);
    failed.failure = Some(Failure {
        code: FailureCode::CardDeclined,
        attempt_id: AttemptId(1),
    });
    let stored_failed = payment(PaymentStatus::Failed, &[1], Some(1));
    let mut wrong = failed.clone();
    wrong.failure = None;
    let confirm = req::confirm("k1", PAY, 'A');
    let mut ok = failed.clone();
    ok.version = 2;
    holds(
        name,
        &[
            stored_failed.clone(),
            out(1, &confirm, MINE, shows(200, ok)),
        ],
    );
    wrong.version = 2;
    violated(
        name,
        &[stored_failed, out(1, &confirm, MINE, shows(200, wrong))],
    );
    // A Payment the store never held.
    violated(
        name,
        &[out(
            1,
            &create,
            MINE,
            shows(201, view(PAY, Processing, 2, 1)),
        )],
    );
    // A refund shown at a version behind the store's.
    let refund = req::refund("k1", PAY, "R-1", 5000);
    let refund_answer = |v| ApiResponse::ok(200, ResponseBody::Refund(v));
    let r = refund_stored(RefundStatus::Succeeded, 3);
    holds(
        name,
        &[
            r.clone(),
            out(
                2,
                &refund,
                MINE,
                refund_answer(refund_view(RefundStatus::Succeeded, 3)),
            ),
        ],
    );
    violated(
        name,
        &[
            r,
            out(
                2,
                &refund,
                MINE,
                refund_answer(refund_view(RefundStatus::Processing, 2)),
            ),
        ],
    );
}

/// REPLAY-03, A-STATUS-CODES: 201 for a first execution, 200 for a replay. Found twice:
/// a create that created its Payment and was answered in its own step was never judged
/// (only one answered later was), so its 200 passed; and the later answer was judged for
/// creates of Payments only, so a checkout session's or a refund's first execution
/// answered 200 passed.
#[test]
fn first_execution_answered_in_its_own_step_or_later() {
    let name = "first-execution-201-replay-200";
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let created = stored(PAY, M, ENV, "ORDER-1");
    let answer = |status| shows(status, view(PAY, PaymentStatus::Processing, 2, 1));
    let own = |status| {
        vec![
            created.clone(),
            step(
                1,
                &create,
                MINE,
                Some(answer(status)),
                vec![charge_call(1, 'A')],
                true,
            ),
        ]
    };
    holds(name, &own(201));
    holds(name, &own(202));
    violated(name, &own(200));
    // A replay: its step did nothing.
    let replay = |status| {
        let mut e = own(201);
        e.push(step(2, &create, MINE, Some(answer(status)), vec![], false));
        e
    };
    holds(name, &replay(200));
    violated(name, &replay(201));
    // Only creates are answered 201.
    let confirm = req::confirm("k1", PAY, 'A');
    violated(
        name,
        &[step(
            1,
            &confirm,
            MINE,
            Some(answer(201)),
            vec![charge_call(1, 'A')],
            true,
        )],
    );
    // Answered after its own step: a Payment's, a session's and a refund's execution.
    let refund = req::refund("k1", PAY, "R-1", 5000);
    let session = req::session("k1", "ORDER-1", 10000, "USD");
    let refund_body = ResponseBody::Refund(refund_view(RefundStatus::Processing, 2));
    let session_body = ResponseBody::Session(SessionView {
        id: SessionId(1),
        payment_id: PAY,
        expires_at: Millis::hours(1),
    });
    for (request, body) in [
        (
            create.clone(),
            ResponseBody::Payment(view(PAY, PaymentStatus::Processing, 2, 1)),
        ),
        (refund, refund_body),
        (session, session_body),
    ] {
        let later = |status| {
            vec![
                step(1, &request, MINE, None, vec![], true),
                out(1, &request, MINE, ApiResponse::ok(status, body.clone())),
            ]
        };
        holds(name, &later(201));
        violated(name, &later(200));
    }
    // A waiter is answered 200, never 201.
    let waiter = |status| {
        vec![
            step(1, &create, MINE, None, vec![charge_call(1, 'A')], true),
            step(2, &create, MINE, None, vec![], false),
            out(2, &create, MINE, answer(status)),
        ]
    };
    holds(name, &waiter(200));
    violated(name, &waiter(201));
}

/// RATE-04, RATE-05: the platform's only 5xx is 503 temporarily_unavailable, on every
/// endpoint, to a waiter and to nobody.
#[test]
fn five_hundreds_on_every_endpoint_to_anyone() {
    let name = "only-5xx-is-503-temporarily-unavailable";
    let paused = error(ErrorCode::TemporarilyUnavailable);
    let mut requests = keyed_requests("k1");
    requests.extend([
        req::get(PAY),
        req::get_refund(RefundId(1)),
        req::by_order("ORDER-1"),
    ]);
    for request in &requests {
        for routed in [true, false] {
            holds(name, &[leaves(request, paused.clone(), routed)]);
            for wrong in [
                error(ErrorCode::InternalError),
                ApiResponse {
                    status: 502,
                    ..error(ErrorCode::InternalError)
                },
                ApiResponse {
                    status: 503,
                    ..error(ErrorCode::InternalError)
                },
                ApiResponse {
                    status: 400,
                    ..paused.clone()
                },
            ] {
                violated(name, &[leaves(request, wrong, routed)]);
            }
        }
    }
}

/// QUERY-01, QUERY-03, A-NOT-FOUND-POST: what the merchant does not have is 404 and what
/// it has never is. Found (the known case): only GETs of a Payment were judged; a GET of
/// an unknown refund, a confirm or cancel of an unknown (or another merchant's) Payment
/// and a refund naming one could be answered anything.
#[test]
fn unknown_objects_on_every_endpoint_that_names_one() {
    let name = "unknown-objects-and-routes-answered-404-405";
    let missing = error(ErrorCode::ResourceMissing);
    let answered = |request: &ApiRequest, owner: Owner, answer: &ApiResponse| {
        step(1, request, owner, Some(answer.clone()), vec![], false)
    };
    let pay = stored(PAY, M, ENV, "ORDER-1");
    let key_400 = ApiResponse::error(ApiError {
        field: Some(Field::IdempotencyKey),
        ..ApiError::new(ErrorCode::InvalidRequest)
    });
    for request in [
        req::get(PAY),
        req::confirm("k1", PAY, 'A'),
        req::cancel("k1", PAY),
        req::refund("k1", PAY, "R-1", 5000),
    ] {
        holds(name, &[answered(&request, MINE, &missing)]);
        holds(
            name,
            &[answered(&request, MINE, &error(ErrorCode::RateLimited))],
        );
        for wrong in [
            error(ErrorCode::PaymentNotConfirmable),
            error(ErrorCode::PaymentInProgress),
            shows(200, view(PAY, PaymentStatus::Processing, 2, 1)),
        ] {
            violated(name, &[answered(&request, MINE, &wrong)]);
        }
        // The merchant has it: never 404; another merchant's or live's is not its own.
        holds(
            name,
            &[
                pay.clone(),
                answered(&request, MINE, &error(ErrorCode::PaymentNotConfirmable)),
            ],
        );
        violated(name, &[pay.clone(), answered(&request, MINE, &missing)]);
        holds(
            name,
            &[pay.clone(), answered(&request, OTHER_MERCHANT, &missing)],
        );
        violated(
            name,
            &[
                pay.clone(),
                answered(&request, LIVE, &error(ErrorCode::PaymentNotConfirmable)),
            ],
        );
        // What comes first: authentication (403 for a read-only key on a POST; a GET is
        // never 403), the key's 400 for confirm and cancel, a field's for a refund.
        let forbidden = error(ErrorCode::PermissionDenied);
        if request.endpoint.method() == Method::Get {
            violated(name, &[answered(&request, MINE, &forbidden)]);
        } else {
            holds(name, &[answered(&request, MINE, &forbidden)]);
        }
        if request.endpoint.requires_key() {
            holds(name, &[answered(&request, MINE, &key_400)]);
        }
    }
    let refund = req::refund("k1", PAY, "R-1", 5000);
    holds(
        name,
        &[answered(&refund, MINE, &error(ErrorCode::InvalidRequest))],
    );
    // A refund by id.
    let by_id = req::get_refund(RefundId(1));
    holds(name, &[answered(&by_id, MINE, &missing)]);
    violated(
        name,
        &[answered(&by_id, MINE, &error(ErrorCode::InvalidRequest))],
    );
    let r = refund_stored(RefundStatus::Processing, 2);
    violated(name, &[r.clone(), answered(&by_id, MINE, &missing)]);
    holds(name, &[r, answered(&by_id, OTHER_MERCHANT, &missing)]);
    // Routes.
    let route = ApiRequest {
        endpoint: Endpoint::Other {
            method: Method::Get,
            path: "/v1/nothing".into(),
        },
        ..req::get(PAY)
    };
    holds(name, &[answered(&route, MINE, &missing)]);
    holds(
        name,
        &[answered(&route, MINE, &error(ErrorCode::MethodNotAllowed))],
    );
    violated(
        name,
        &[answered(&route, MINE, &error(ErrorCode::InvalidRequest))],
    );
}

/// CANCEL-01: a cancel answered 202 leaves the Payment in progress, in the answer and in
/// the store, answered in its own step or to a waiter later.
#[test]
fn cancel_202_shown_or_stored_closed() {
    use PaymentStatus::{Canceled, Processing, RequiresAction};
    let name = "cancel-202-keeps-the-status";
    let cancel = req::cancel("k1", PAY);
    for (id, status) in [(1, Processing), (2, RequiresAction)] {
        holds(
            name,
            &[
                held(status, 2, 1),
                out(id, &cancel, MINE, shows(202, view(PAY, status, 2, 1))),
            ],
        );
        violated(
            name,
            &[
                held(status, 2, 1),
                out(id, &cancel, MINE, shows(202, view(PAY, Canceled, 2, 1))),
            ],
        );
        violated(
            name,
            &[
                held(Canceled, 3, 1),
                out(id, &cancel, MINE, shows(202, view(PAY, status, 2, 1))),
            ],
        );
    }
    // 200 canceled once the upstream confirmed is the cancel's other answer.
    holds(
        name,
        &[
            held(Canceled, 3, 1),
            out(1, &cancel, MINE, shows(200, view(PAY, Canceled, 3, 1))),
        ],
    );
}

/// RES-06, ATTEMPT-02: failure.attempt_id names the latest attempt, not an earlier one,
/// and is there at all.
#[test]
fn failed_naming_an_earlier_attempt() {
    let name = "failure-names-the-latest-attempt";
    holds(name, &[payment(PaymentStatus::Failed, &[1], Some(1))]);
    holds(name, &[payment(PaymentStatus::Failed, &[1, 2], Some(2))]);
    violated(name, &[payment(PaymentStatus::Failed, &[1, 2], Some(1))]);
    violated(name, &[payment(PaymentStatus::Failed, &[1, 2], None)]);
    violated(name, &[payment(PaymentStatus::Failed, &[1], Some(7))]);
    violated(name, &[payment(PaymentStatus::Failed, &[], None)]);
}

/// ATTEMPT-05, REPLAY-02: attempt_count is the attempts made, in every answer (a GET, a
/// list by order number, a waiter's) and every webhook of the current version.
#[test]
fn attempt_count_in_lists_waiters_and_webhooks() {
    use PaymentStatus::Processing;
    let name = "attempt-count-is-attempts-made";
    let two = held(Processing, 3, 2);
    let confirm = req::confirm("k1", PAY, 'A');
    for count in [1, 3] {
        for request in [req::get(PAY), req::by_order("ORDER-1"), confirm.clone()] {
            let body = |n| match request.endpoint {
                Endpoint::ListPayments { .. } => ResponseBody::Payments {
                    data: vec![view(PAY, Processing, 3, n)],
                },
                _ => ResponseBody::Payment(view(PAY, Processing, 3, n)),
            };
            holds(
                name,
                &[
                    two.clone(),
                    out(2, &request, MINE, ApiResponse::ok(200, body(2))),
                ],
            );
            violated(
                name,
                &[
                    two.clone(),
                    out(2, &request, MINE, ApiResponse::ok(200, body(count))),
                ],
            );
        }
        let webhook = |version, n| {
            ev(What::WebhookEmitted {
                event: WebhookEvent {
                    id: EventId(1),
                    merchant: M,
                    environment: ENV,
                    kind: "payment.processing".into(),
                    object: WebhookObject::Payment(view(PAY, Processing, version, n)),
                    delivery: 0,
                },
                rule: Rule::WebhookPrimary,
                to: Some(0),
            })
        };
        holds(name, &[two.clone(), webhook(3, 2)]);
        violated(name, &[two.clone(), webhook(3, count)]);
        // A webhook of an earlier version showed the count of its time.
        holds(name, &[two.clone(), webhook(2, 1)]);
    }
}

/// WEBHOOK-01, A-VERSION: every visible change raises the version. Found: only Payments
/// were judged; a refund whose status changed under the same version, or whose version
/// went back, and a refund webhook of the current version with another status passed
/// (now: `judge_refund_change`, `judge_refund_webhook`).
#[test]
fn visible_changes_without_a_new_version_of_payments_and_refunds() {
    use PaymentStatus::{Processing, Succeeded};
    use RefundStatus as R;
    let name = "versions-rise-with-every-visible-change";
    holds(name, &[held(Processing, 2, 1), held(Succeeded, 3, 1)]);
    violated(name, &[held(Processing, 2, 1), held(Succeeded, 2, 1)]);
    violated(name, &[held(Processing, 3, 1), held(Processing, 2, 1)]);
    // attempts and failure.attempt_id are visible too.
    violated(name, &[held(Processing, 2, 1), held(Processing, 2, 2)]);
    violated(
        name,
        &[
            payment(PaymentStatus::Failed, &[1], None),
            payment(PaymentStatus::Failed, &[1], Some(1)),
        ],
    );
    // Refunds.
    holds(
        name,
        &[
            refund_stored(R::Processing, 2),
            refund_stored(R::Succeeded, 3),
        ],
    );
    violated(
        name,
        &[
            refund_stored(R::Processing, 2),
            refund_stored(R::Succeeded, 2),
        ],
    );
    violated(
        name,
        &[
            refund_stored(R::Processing, 3),
            refund_stored(R::Processing, 2),
        ],
    );
    let refund_webhook = |status, version| {
        ev(What::WebhookEmitted {
            event: WebhookEvent {
                id: EventId(1),
                merchant: M,
                environment: ENV,
                kind: "refund.succeeded".into(),
                object: WebhookObject::Refund(refund_view(status, version)),
                delivery: 0,
            },
            rule: Rule::WebhookPrimary,
            to: Some(0),
        })
    };
    let r = refund_stored(R::Succeeded, 3);
    holds(name, &[r.clone(), refund_webhook(R::Succeeded, 3)]);
    holds(name, &[r.clone(), refund_webhook(R::Processing, 2)]);
    violated(name, &[r.clone(), refund_webhook(R::Processing, 3)]);
    violated(name, &[r, refund_webhook(R::Succeeded, 4)]);
}

/// CONC-03, SCOPE-01: operation_in_progress only while an execution under the same scope
/// is in flight. Found: only the Idempotency-Key was compared, so a second merchant's (or
/// live's, or another endpoint's) request under a key another scope was executing got
/// operation_in_progress and passed; no other property sees it, a 409 carries no object.
#[test]
fn in_progress_for_another_scope_or_after_the_answer() {
    let name = "operation-in-progress-only-while-in-flight";
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let executing = step(1, &create, MINE, None, vec![charge_call(1, 'A')], true);
    let busy = error(ErrorCode::OperationInProgress);
    let answered_done = out(
        1,
        &create,
        MINE,
        shows(201, view(PAY, PaymentStatus::Processing, 2, 1)),
    );
    holds(
        name,
        &[
            executing.clone(),
            step(2, &create, MINE, Some(busy.clone()), vec![], false),
        ],
    );
    // A waiter given up on while the execution is still in flight (CONC-03).
    holds(
        name,
        &[
            executing.clone(),
            step(2, &create, MINE, None, vec![], false),
            out(2, &create, MINE, busy.clone()),
        ],
    );
    violated(
        name,
        &[step(2, &create, MINE, Some(busy.clone()), vec![], false)],
    );
    violated(
        name,
        &[
            executing.clone(),
            answered_done.clone(),
            step(2, &create, MINE, Some(busy.clone()), vec![], false),
        ],
    );
    violated(
        name,
        &[
            executing.clone(),
            step(2, &create, MINE, None, vec![], false),
            answered_done,
            out(2, &create, MINE, busy.clone()),
        ],
    );
    // The case the predicate missed: the same key, another scope.
    for (request, owner) in [
        (create.clone(), OTHER_MERCHANT),
        (create.clone(), LIVE),
        (req::session("k1", "ORDER-1", 10000, "USD"), MINE),
    ] {
        violated(
            name,
            &[
                executing.clone(),
                step(2, &request, owner, Some(busy.clone()), vec![], false),
            ],
        );
    }
}

/// ORDER-01 (S4), CONC-02 (S5), ATTEMPT-01 (S8), A-REFUND-NO-BRANCH: where the contract
/// (or its reading) allows two answers, one of them. Found: the refund-number point was
/// not judged; a used refund number answered 200 with another Refund, or 201, passed.
#[test]
fn branch_points_of_orders_confirms_and_refund_numbers() {
    let name = "branches-answer-one-of-the-two";
    // PAY, created by its own create (whose step is no S4 point).
    let first = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let pay = |then: Event| {
        vec![
            stored(PAY, M, ENV, "ORDER-1"),
            step(
                1,
                &first,
                MINE,
                Some(shows(201, view(PAY, PaymentStatus::Processing, 2, 1))),
                vec![charge_call(1, 'A')],
                true,
            ),
            then,
        ]
    };
    let answered = |request: &ApiRequest, answer: ApiResponse| {
        step(2, request, MINE, Some(answer), vec![], false)
    };
    // S4: a new key for an order with a Payment.
    let again = req::create("k2", "ORDER-1", 10000, "USD", 'A');
    holds(
        name,
        &pay(answered(
            &again,
            shows(200, view(PAY, PaymentStatus::Processing, 2, 1)),
        )),
    );
    holds(
        name,
        &pay(answered(&again, error(ErrorCode::OrderNoConflict))),
    );
    violated(
        name,
        &pay(answered(
            &again,
            shows(200, view(PaymentId(2), PaymentStatus::Processing, 2, 1)),
        )),
    );
    violated(
        name,
        &pay(answered(
            &again,
            shows(201, view(PAY, PaymentStatus::Processing, 2, 1)),
        )),
    );
    violated(
        name,
        &pay(answered(&again, error(ErrorCode::PaymentInProgress))),
    );
    // The same order number under a second merchant is no S4 point.
    holds(
        name,
        &pay(step(
            2,
            &again,
            OTHER_MERCHANT,
            Some(error(ErrorCode::PaymentInProgress)),
            vec![],
            false,
        )),
    );
    // S8: confirm with a new key while processing.
    let confirm = req::confirm("k2", PAY, 'B');
    holds(
        name,
        &pay(answered(&confirm, error(ErrorCode::PaymentInProgress))),
    );
    holds(
        name,
        &pay(answered(
            &confirm,
            shows(200, view(PAY, PaymentStatus::Processing, 2, 1)),
        )),
    );
    violated(
        name,
        &pay(answered(&confirm, error(ErrorCode::PaymentNotConfirmable))),
    );
    // S5: while the scope executes, no other request under it succeeds in its own step.
    let create = req::create("k1", "ORDER-2", 10000, "USD", 'A');
    violated(
        name,
        &[
            step(1, &create, MINE, None, vec![charge_call(1, 'A')], true),
            answered(
                &create,
                shows(200, view(PaymentId(2), PaymentStatus::Processing, 2, 1)),
            ),
        ],
    );
    // A used refund number under a new key (same Payment and amount).
    let r = refund_stored(RefundStatus::Processing, 2);
    let reuse = req::refund("k2", PAY, "R-1", 5000);
    let refund_answer = |status, id| {
        let mut v = refund_view(RefundStatus::Processing, 2);
        v.id = RefundId(id);
        ApiResponse::ok(status, ResponseBody::Refund(v))
    };
    holds(
        name,
        &[
            r.clone(),
            answered(&reuse, error(ErrorCode::RefundNoConflict)),
        ],
    );
    holds(name, &[r.clone(), answered(&reuse, refund_answer(200, 1))]);
    violated(name, &[r.clone(), answered(&reuse, refund_answer(200, 2))]);
    violated(name, &[r.clone(), answered(&reuse, refund_answer(201, 1))]);
    // Its own first execution, which stored it, is no branch point.
    holds(
        name,
        &[
            r,
            step(2, &reuse, MINE, Some(refund_answer(201, 1)), vec![], true),
        ],
    );
}

/// ORDER-01, UNIQ-01: 409 order_no_conflict names the Payment holding the order number.
/// Found: with no Payment of the number in the store, any related_resource_id passed;
/// the conflict is with an existing Payment, so with none there is nothing to conflict
/// with (now: violated).
#[test]
fn order_no_conflict_only_with_a_payment_holding_the_number() {
    let name = "conflicts-name-the-related-resource";
    let conflict = |related| {
        ApiResponse::error(ApiError {
            related_resource_id: related,
            ..ApiError::new(ErrorCode::OrderNoConflict)
        })
    };
    let again = req::create("k2", "ORDER-1", 10000, "USD", 'A');
    let answered = |owner: Owner, answer| step(2, &again, owner, Some(answer), vec![], false);
    let pay = stored(PAY, M, ENV, "ORDER-1");
    holds(
        name,
        &[
            pay.clone(),
            answered(MINE, conflict(Some(ResourceId::Payment(PAY)))),
        ],
    );
    for related in [None, Some(ResourceId::Payment(PaymentId(2)))] {
        violated(name, &[pay.clone(), answered(MINE, conflict(related))]);
    }
    // The case the predicate missed: no Payment holds the number (for this merchant).
    violated(
        name,
        &[answered(MINE, conflict(Some(ResourceId::Payment(PAY))))],
    );
    violated(
        name,
        &[
            pay,
            answered(OTHER_MERCHANT, conflict(Some(ResourceId::Payment(PAY)))),
        ],
    );
    // A checkout session for the number conflicts the same way (A-CKO-CONFLICT).
    let session = req::session("k2", "ORDER-1", 20000, "USD");
    violated(
        name,
        &[step(
            2,
            &session,
            MINE,
            Some(conflict(Some(ResourceId::Payment(PAY)))),
            vec![],
            false,
        )],
    );
}
