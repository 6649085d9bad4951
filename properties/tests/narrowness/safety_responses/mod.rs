//! The safety and response rows of the table in `main.rs`: for each property, the case
//! its name covers beyond what its predicate first looked at (another endpoint, a waiter's
//! later answer, a second merchant, a refund instead of a Payment, an attempt the
//! Payment's record does not list, …), planted from events alone and judged violated,
//! next to the contract's neighbouring case, which holds. Where a test found the
//! predicate narrower than its name, its doc says "found" and what was widened.
//!
//! This file: the builders and the safety rows (`properties/src/safety.rs`);
//! `safety_responses/responses.rs`: the response rows (`properties/src/responses/mod.rs`).

mod branches;
mod responses;

use super::{
    ENV, M, PAY, attempt, charge, ev, holds, keyed_requests, leaves, payment, refund_stored,
    refund_view, stored, violated,
};
use payhub_model::acquirer::ChargeState;
use payhub_model::api::req;
use payhub_model::event::{Event, Handling, Owner, Route, ScopeKey, StoredAttempt, What};
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

pub(super) fn view(
    id: PaymentId,
    status: PaymentStatus,
    version: u32,
    attempts: u8,
) -> PaymentView {
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
/// or environment: on every endpoint, keyed or not, Payments, refunds and sessions, single
/// or listed, and no webhook shows one.
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
    // Found: what the world's owner of "the answer's object" leaves out. A list answer
    // (by order number, by refund number, ?status=processing) and a webhook showing a
    // Payment or refund the store holds for another merchant or environment passed (now:
    // `properties/src/responses/foreign.rs`).
    let theirs = stored(PAY, MerchantId(2), ENV, "ORDER-1");
    let ours = stored(PAY, M, ENV, "ORDER-1");
    let listed = |request: &ApiRequest, body: ResponseBody| {
        out(1, request, MINE, ApiResponse::ok(200, body))
    };
    let payments = ResponseBody::Payments {
        data: vec![view(PAY, PaymentStatus::Processing, 2, 1)],
    };
    let by_order = req::by_order("ORDER-1");
    holds(name, &[ours.clone(), listed(&by_order, payments.clone())]);
    violated(name, &[theirs.clone(), listed(&by_order, payments)]);
    let mut their_refund = refund_stored(RefundStatus::Processing, 2);
    if let What::RefundStored { stored, .. } = &mut their_refund.what {
        stored.environment = Environment::Live;
    }
    let refunds = ResponseBody::Refunds {
        data: vec![refund_view(RefundStatus::Processing, 2)],
    };
    for request in [
        req::by_refund_no("R-1"),
        req::query(Endpoint::ListRefundsProcessing),
    ] {
        holds(
            name,
            &[
                refund_stored(RefundStatus::Processing, 2),
                listed(&request, refunds.clone()),
            ],
        );
        violated(
            name,
            &[their_refund.clone(), listed(&request, refunds.clone())],
        );
    }
    let webhook = |object| {
        ev(What::WebhookEmitted {
            event: WebhookEvent {
                id: EventId(1),
                merchant: M,
                environment: ENV,
                kind: "payment.processing".into(),
                object,
                delivery: 0,
            },
            rule: Rule::WebhookPrimary,
            to: Some(0),
        })
    };
    let payment_hook = webhook(WebhookObject::Payment(view(
        PAY,
        PaymentStatus::Processing,
        2,
        1,
    )));
    holds(name, &[ours, payment_hook.clone()]);
    violated(name, &[theirs, payment_hook]);
    let refund_hook = webhook(WebhookObject::Refund(refund_view(
        RefundStatus::Processing,
        2,
    )));
    holds(
        name,
        &[
            refund_stored(RefundStatus::Processing, 2),
            refund_hook.clone(),
        ],
    );
    violated(name, &[their_refund, refund_hook]);
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
