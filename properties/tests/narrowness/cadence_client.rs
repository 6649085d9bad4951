//! Narrowness of the cadence, client, effects and reach properties: for each,
//! the case its name covers that its predicate might not look at (other endpoints, a
//! second server or database, the schedule's late steps, 503 next to 429, queries by
//! order number next to queries by id, webhooks next to answers), planted from events
//! alone, next to the contract's neighbouring case.
//!
//! For a reach property "narrower than its name" means a case of its kind that does not
//! count as reached, or the reverse: a case of another kind that counts.

use super::{M, PAY, capture, ev, holds, keyed_requests, payment, violated};
use payhub_model::acquirer::UpstreamCall;
use payhub_model::api::req;
use payhub_model::client::{Decision, Handle, ObjectState, PayerMessage, Subject};
use payhub_model::event::{
    BusinessOrder, Event, Handling, Route, ScopeKey, StoredOrder, StoredPayment, StoredRefund,
    SubmissionRef, What,
};
use payhub_model::platform::state::AttemptStatus;
use payhub_model::{
    ApiError, ApiRequest, ApiResponse, AttemptId, Card, Endpoint, Environment, ErrorCode,
    MerchantId, Millis, PaymentId, PaymentStatus, RefundId, RefundStatus, RequestId,
    ResolutionStatus, ResponseBody, Rule,
};
use payhub_properties::Facts;
use payhub_properties::property;

const ENV: Environment = Environment::Test;

fn at(t: Millis, what: What) -> Event {
    Event::new(t, what)
}

fn reached(name: &str, events: &[Event]) -> bool {
    let p = property(name).unwrap_or_else(|| panic!("{name} is registered"));
    p.holds_in(&Facts::from_events(events))
}

// ---- Builders of client events. ----

fn delivered(t: Millis, node: u8, response: ApiResponse) -> Event {
    at(
        t,
        What::Delivered {
            id: RequestId(1),
            to: node,
            response,
        },
    )
}

fn timed_out(t: Millis, node: u8) -> Event {
    at(
        t,
        What::TimedOut {
            node,
            id: RequestId(1),
        },
    )
}

fn decided(t: Millis, node: u8, subject: Subject, decision: Decision) -> Event {
    at(
        t,
        What::ClientDecided {
            node,
            subject,
            decision,
            rule: Rule::RetryBackoff,
        },
    )
}

fn order(no: &str) -> Subject {
    Subject::Order(no.into())
}

fn retry(t: Millis, node: u8, try_no: u32, delay: Millis) -> Event {
    let decision = Decision::RetryScheduled {
        try_no,
        at: t.after(delay),
    };
    decided(t, node, order("ORDER-1"), decision)
}

/// Merchant-`node` sends `request` with `timeout`, for submission (db, ORDER-1, seq).
fn sends_as(
    t: Millis,
    node: u8,
    owner: (MerchantId, Environment),
    request: ApiRequest,
    timeout: Millis,
    submission: Option<(u8, u32)>,
) -> Event {
    at(
        t,
        What::ClientSends {
            node,
            handle: Handle { boot: 0, n: 1 },
            request,
            owner: Some(owner),
            timeout,
            rule: Rule::RetrySameKey,
            submission: submission.map(|(db, seq)| SubmissionRef {
                db,
                order: "ORDER-1".into(),
                seq,
            }),
            held: false,
        },
    )
}

fn sends(t: Millis, node: u8, request: ApiRequest) -> Event {
    sends_as(
        t,
        node,
        (M, ENV),
        request,
        Millis::secs(20),
        Some((node, 1)),
    )
}

fn error(code: ErrorCode) -> ApiResponse {
    ApiResponse::error(ApiError::new(code))
}

fn with_retry_after(mut response: ApiResponse, seconds: u32) -> ApiResponse {
    response.retry_after_s = Some(seconds);
    response
}

fn ok(status: u16) -> ApiResponse {
    ApiResponse::ok(status, ResponseBody::Payments { data: vec![] })
}

fn order_at(t: Millis, db: u8, no: &str, was: Option<StoredOrder>, status: PaymentStatus) -> Event {
    at(
        t,
        What::OrderStored {
            db,
            order_no: no.into(),
            was,
            stored: StoredOrder {
                payment_id: Some(PAY),
                version: 2,
                status: Some(status),
            },
        },
    )
}

// ---- Builders of platform events. ----

fn sent_attempt(id: u32, sent_at: Millis) -> Event {
    at(
        sent_at,
        What::AttemptStored {
            attempt: AttemptId(id),
            payment: PAY,
            stored: payhub_model::event::StoredAttempt {
                status: AttemptStatus::Processing,
                sent_at,
            },
        },
    )
}

fn platform_queries(t: Millis, attempt: u32, during: Option<RequestId>) -> Event {
    at(
        t,
        What::UpstreamCalled {
            call: UpstreamCall::QueryCharge {
                attempt: AttemptId(attempt),
            },
            rule: Rule::NeedsQuery,
            during,
        },
    )
}

fn platform_cancels(t: Millis, attempt: u32) -> Event {
    at(
        t,
        What::UpstreamCalled {
            call: UpstreamCall::CancelCharge {
                attempt: AttemptId(attempt),
            },
            rule: Rule::Cancel202KeepsStatus,
            during: None,
        },
    )
}

fn payment_in(
    t: Millis,
    status: PaymentStatus,
    resolution: ResolutionStatus,
    attempts: &[u32],
) -> Event {
    at(
        t,
        What::PaymentStored {
            payment: PAY,
            stored: StoredPayment {
                merchant: M,
                environment: ENV,
                merchant_order_no: "ORDER-1".into(),
                status,
                resolution,
                expires_at: Millis::hours(2),
                attempts: attempts.iter().map(|a| AttemptId(*a)).collect(),
                failure_attempt: None,
                version: 2,
                fee_rate_bps: 290,
            },
        },
    )
}

fn manual_review(t: Millis, attempts: &[u32]) -> Event {
    payment_in(
        t,
        PaymentStatus::Processing,
        ResolutionStatus::ManualReview,
        attempts,
    )
}

// ---- Cadence. ----

/// RETRY-02 and the name ("as the reference code"): the reference code reads Retry-After
/// on a 429 only: after a 503 (Retry-After or not), a 5xx, a 429 without Retry-After, a
/// 409 in flight or a timeout it backs off 1 s doubling, capped at 30 s, plus a jitter
/// below 250 ms, on every try of the schedule, not only the first.
#[test]
fn backoff_after_every_retried_answer_to_its_cap_and_jitter() {
    let name = "client-backs-off-as-the-reference-code";
    let t = Millis::secs(100);
    let failures = [
        delivered(t, 0, error(ErrorCode::TemporarilyUnavailable)),
        delivered(
            t,
            0,
            with_retry_after(error(ErrorCode::TemporarilyUnavailable), 5),
        ),
        delivered(t, 0, error(ErrorCode::InternalError)),
        delivered(t, 0, error(ErrorCode::RateLimited)),
        delivered(t, 0, error(ErrorCode::OperationInProgress)),
        timed_out(t, 0),
    ];
    for failure in failures {
        // Try 2 after try 1: 1 s; try 4 after try 3: 4 s; try 7 after try 6: capped at 30 s.
        for (try_no, least) in [
            (2, 1_000),
            (4, 4_000),
            (6, 16_000),
            (7, 30_000),
            (9, 30_000),
        ] {
            let least = Millis::ms(least);
            for delay in [least, least.after(Millis::ms(249))] {
                holds(name, &[failure.clone(), retry(t, 0, try_no, delay)]);
            }
            for delay in [
                Millis::ms(least.0 - 1),
                least.after(Millis::ms(250)),
                Millis::ms(least.0 * 2),
            ] {
                violated(name, &[failure.clone(), retry(t, 0, try_no, delay)]);
            }
        }
        // The 503's Retry-After, honoured as a 429's would be, is off the reference code.
        violated(name, &[failure.clone(), retry(t, 0, 2, Millis::secs(5))]);
    }
    // Uncapped doubling past 30 s, the late steps of the backoff.
    violated(name, &[timed_out(t, 0), retry(t, 0, 7, Millis::secs(32))]);
    // A 429 with Retry-After is timed by it (RATE-03, judged elsewhere).
    let limited = with_retry_after(error(ErrorCode::RateLimited), 5);
    holds(
        name,
        &[delivered(t, 0, limited), retry(t, 0, 2, Millis::secs(5))],
    );
    // Each server is judged by its own input: a second server's retry after a timeout,
    // while the first server handles a 429 with Retry-After.
    let limited = with_retry_after(error(ErrorCode::RateLimited), 5);
    violated(
        name,
        &[
            timed_out(t, 1),
            delivered(t, 0, limited),
            retry(t, 1, 2, Millis::secs(5)),
        ],
    );
}

/// TIMEOUT-01 and the name: at least 20 s for create and confirm, at least 10 s for
/// every query (by id, by order number, of refunds), on every server.
#[test]
fn timeouts_of_confirms_and_of_every_query() {
    let name = "client-waits-the-contract-timeouts";
    let t = Millis::ZERO;
    for (request, minimum) in [
        (req::create("k1", "ORDER-1", 10000, "USD", 'A'), 20),
        (req::confirm("k1", PAY, 'A'), 20),
        (req::get(PAY), 10),
        (req::by_order("ORDER-1"), 10),
        (req::get_refund(RefundId(1)), 10),
        (req::by_refund_no("R-1"), 10),
        (req::query(Endpoint::ListRefundsProcessing), 10),
    ] {
        for node in [0, 1] {
            let enough = Millis::secs(minimum);
            let short = Millis::ms(enough.0 - 1);
            holds(
                name,
                &[sends_as(t, node, (M, ENV), request.clone(), enough, None)],
            );
            violated(
                name,
                &[sends_as(t, node, (M, ENV), request.clone(), short, None)],
            );
        }
    }
    // A request that never leaves (the process died first) waited for nothing.
    let mut held = sends_as(t, 0, (M, ENV), req::get(PAY), Millis::secs(1), None);
    if let What::ClientSends { held: h, .. } = &mut held.what {
        *h = true;
    }
    holds(name, &[held]);
}

/// SCHED-01's late steps: after 1 h every 4 h to 24 h, so the last query is at 21 h after
/// the order became unknown (A-CLIENT-SCHED-4H); ending earlier is violated, on every
/// server, counted from its own database's order.
#[test]
fn schedule_ends_only_after_its_late_steps() {
    let name = "client-queries-until-24-hours";
    let created = |t, db| order_at(t, db, "ORDER-1", None, PaymentStatus::Processing);
    let ends = |t, node| decided(t, node, order("ORDER-1"), Decision::ScheduleEnded);
    let base = |node: u8| {
        vec![
            created(Millis::ZERO, 0),
            sends(
                Millis::ZERO,
                node,
                req::create("k1", "ORDER-1", 10000, "USD", 'A'),
            ),
        ]
    };
    let mut on_time = base(0);
    on_time.push(ends(Millis::hours(21), 0));
    holds(name, &on_time);
    for end in [Millis::hours(17), Millis::ms(Millis::hours(21).0 - 1)] {
        let mut cut = base(0);
        cut.push(ends(end, 0));
        violated(name, &cut);
    }
    // A second server writing a second database, whose order was created 5 h later: its
    // schedule runs to 26 h.
    let second = |end| {
        vec![
            created(Millis::ZERO, 0),
            sends(
                Millis::ZERO,
                0,
                req::create("k1", "ORDER-1", 10000, "USD", 'A'),
            ),
            created(Millis::hours(5), 1),
            sends(
                Millis::hours(5),
                1,
                req::create("k2", "ORDER-1", 10000, "USD", 'A'),
            ),
            ends(end, 1),
        ]
    };
    violated(name, &second(Millis::hours(21)));
    holds(name, &second(Millis::hours(26)));
    // A server no submission named the database of: judged against the earliest order of
    // that number (violated before 21 h, which is early for either database; after it,
    // which database it writes is not known).
    let unnamed = |end| {
        vec![
            created(Millis::ZERO, 0),
            created(Millis::hours(5), 1),
            ends(end, 2),
        ]
    };
    violated(name, &unnamed(Millis::hours(20)));
    holds(name, &unnamed(Millis::hours(22)));
}

/// SCHED-01 and the name: no query of a Payment its database holds as final, whether by
/// id or by merchant order number (the predicate judged queries by id only).
#[test]
fn no_query_after_a_final_status_by_id_or_by_order_number() {
    let name = "client-stops-querying-at-a-final-status";
    let t = Millis::secs(60);
    for status in [
        PaymentStatus::Succeeded,
        PaymentStatus::Canceled,
        PaymentStatus::Expired,
    ] {
        for query in [req::get(PAY), req::by_order("ORDER-1")] {
            let held = order_at(Millis::ZERO, 0, "ORDER-1", None, status);
            violated(name, &[held.clone(), sends(t, 0, query.clone())]);
            // A server writing another database does not hold it as final.
            holds(name, &[held, sends(t, 1, query)]);
        }
    }
    // A server whose database the events never named (it crashed before its first send):
    // a Payment id is one Payment anywhere, an order number is not (another database's,
    // a restarted server's own order of that number, is another order).
    let held = order_at(Millis::ZERO, 0, "ORDER-1", None, PaymentStatus::Succeeded);
    let unnamed = |query| sends_as(t, 2, (M, ENV), query, Millis::secs(10), None);
    violated(name, &[held.clone(), unnamed(req::get(PAY))]);
    holds(name, &[held, unnamed(req::by_order("ORDER-1"))]);
    // Processing: queries are due; another order's query is not this one's.
    let processing = order_at(Millis::ZERO, 0, "ORDER-1", None, PaymentStatus::Processing);
    holds(name, &[processing.clone(), sends(t, 0, req::get(PAY))]);
    holds(name, &[processing, sends(t, 0, req::by_order("ORDER-1"))]);
    let succeeded = order_at(Millis::ZERO, 0, "ORDER-1", None, PaymentStatus::Succeeded);
    holds(name, &[succeeded, sends(t, 0, req::by_order("ORDER-2"))]);
}

/// RES-01, RES-03: the platform verifies an unknown charge less than 24 h after the charge
/// and after each automatic query before, by a query or a re-sent cancel; a query made
/// while handling a request is not its own verification.
#[test]
fn verification_late_after_the_charge_or_after_a_query() {
    let name = "platform-verifies-unknown-results-within-its-window";
    let day = Millis::hours(24);
    let just_under = Millis::ms(day.0 - 1);
    let sent = sent_attempt(1, Millis::ZERO);
    holds(name, &[sent.clone(), platform_queries(just_under, 1, None)]);
    holds(name, &[sent.clone(), platform_cancels(just_under, 1)]);
    violated(name, &[sent.clone(), platform_queries(day, 1, None)]);
    violated(name, &[sent.clone(), platform_cancels(day, 1)]);
    // A late step: the second query 24 h after the first.
    let first = platform_queries(Millis::secs(10), 1, None);
    violated(
        name,
        &[
            sent.clone(),
            first.clone(),
            platform_queries(Millis::secs(10).after(day), 1, None),
        ],
    );
    holds(
        name,
        &[
            sent.clone(),
            first,
            platform_queries(Millis::secs(10).after(just_under), 1, None),
        ],
    );
    // During a request (a confirm's own call): not the platform's timer.
    holds(name, &[sent, platform_queries(day, 1, Some(RequestId(9)))]);
}

/// RES-03: under manual_review, a re-query at most 24 h after the query before, on every
/// later step too.
#[test]
fn manual_review_requeries_on_every_day() {
    let name = "platform-requeries-manual-review-every-24-hours";
    let day = Millis::hours(24);
    let q0 = Millis::hours(1);
    let base = vec![
        sent_attempt(1, Millis::ZERO),
        platform_queries(q0, 1, None),
        manual_review(Millis::hours(2), &[1]),
    ];
    let with = |extra: &[Event]| {
        let mut e = base.clone();
        e.extend_from_slice(extra);
        e
    };
    holds(name, &with(&[platform_queries(q0.after(day), 1, None)]));
    violated(
        name,
        &with(&[platform_queries(
            q0.after(day).after(Millis::ms(1)),
            1,
            None,
        )]),
    );
    // The third day late, the second on time.
    let d1 = q0.after(day);
    holds(
        name,
        &with(&[
            platform_queries(d1, 1, None),
            platform_queries(d1.after(day), 1, None),
        ]),
    );
    violated(
        name,
        &with(&[
            platform_queries(d1, 1, None),
            platform_queries(d1.after(day).after(Millis::secs(1)), 1, None),
        ]),
    );
    // A re-sent cancel is a re-query too.
    violated(
        name,
        &with(&[platform_cancels(q0.after(day).after(Millis::secs(1)), 1)]),
    );
}

/// RES-03: manual_review after the platform queried the *latest* attempt on its own; a
/// query of an earlier attempt, or one made while handling a request, is not its window.
#[test]
fn manual_review_after_the_latest_attempt_s_own_queries() {
    let name = "platform-goes-to-manual-review-after-its-automatic-queries";
    let t = Millis::hours(2);
    holds(
        name,
        &[
            sent_attempt(1, Millis::ZERO),
            platform_queries(Millis::secs(10), 1, None),
            manual_review(t, &[1]),
        ],
    );
    holds(
        name,
        &[
            platform_cancels(Millis::secs(10), 1),
            manual_review(t, &[1]),
        ],
    );
    violated(name, &[manual_review(t, &[1])]);
    violated(name, &[manual_review(t, &[])]);
    violated(
        name,
        &[
            platform_queries(Millis::secs(10), 1, None),
            manual_review(t, &[1, 2]),
        ],
    );
    violated(
        name,
        &[
            platform_queries(Millis::secs(10), 1, Some(RequestId(3))),
            manual_review(t, &[1]),
        ],
    );
}

// ---- Effects. ----

fn shows(t: Millis, node: u8, message: PayerMessage) -> Event {
    decided(t, node, order("ORDER-1"), Decision::ShowPayer { message })
}

fn applied(t: Millis, node: u8, no: &str, resolution: ResolutionStatus) -> Event {
    decided(
        t,
        node,
        order(no),
        Decision::Applied {
            object: ObjectState::Payment {
                status: PaymentStatus::Processing,
                resolution,
            },
            version: 3,
            via: payhub_model::client::Via::Webhook,
        },
    )
}

/// WORDING-01, WORDING-02, RES-04, every row: "temporarily unavailable" on a 503 only and
/// first; "confirming" only while unknown (202, timeout, 5xx), never on a definite 2xx;
/// pending confirmation only for the order whose manual_review Payment was applied, by
/// the server that applied it.
#[test]
fn payer_messages_of_every_row_and_server() {
    use PayerMessage::{Confirming, TemporarilyUnavailable};
    let name = "client-shows-the-status-table-message";
    let t = Millis::secs(1);
    let paused = error(ErrorCode::TemporarilyUnavailable);
    holds(
        name,
        &[
            delivered(t, 0, paused.clone()),
            shows(t, 0, TemporarilyUnavailable),
        ],
    );
    holds(
        name,
        &[
            delivered(t, 0, paused.clone()),
            shows(t, 0, TemporarilyUnavailable),
            shows(t, 0, Confirming),
        ],
    );
    violated(
        name,
        &[delivered(t, 0, paused.clone()), shows(t, 0, Confirming)],
    );
    for other in [
        error(ErrorCode::InternalError),
        error(ErrorCode::RateLimited),
        ok(200),
    ] {
        violated(
            name,
            &[delivered(t, 0, other), shows(t, 0, TemporarilyUnavailable)],
        );
    }
    violated(
        name,
        &[timed_out(t, 0), shows(t, 0, TemporarilyUnavailable)],
    );
    // Another server's 503 is not this server's.
    violated(
        name,
        &[delivered(t, 1, paused), shows(t, 0, TemporarilyUnavailable)],
    );
    for definite in [ok(200), ok(201)] {
        violated(name, &[delivered(t, 0, definite), shows(t, 0, Confirming)]);
    }
    for unknown in [
        delivered(t, 0, ok(202)),
        timed_out(t, 0),
        delivered(t, 0, error(ErrorCode::InternalError)),
    ] {
        holds(name, &[unknown, shows(t, 0, Confirming)]);
    }
    let pending = |node| decided(t, node, order("ORDER-1"), Decision::PendingConfirmation);
    let review = ResolutionStatus::ManualReview;
    holds(name, &[applied(t, 0, "ORDER-1", review), pending(0)]);
    violated(name, &[pending(0)]);
    violated(
        name,
        &[
            applied(t, 0, "ORDER-1", ResolutionStatus::NeedsQuery),
            pending(0),
        ],
    );
    violated(name, &[applied(t, 0, "ORDER-2", review), pending(0)]);
    violated(name, &[applied(t, 1, "ORDER-1", review), pending(0)]);
}

// ---- Client. ----

fn charged_for(db: u8, no: &str, payment: PaymentId, attempt: u32) -> Event {
    ev(What::Handled {
        id: RequestId(attempt),
        request: req::create("k1", no, 10000, "USD", 'A'),
        owner: Some((M, ENV)),
        business: Some(BusinessOrder {
            db,
            order: no.into(),
        }),
        handling: Handling {
            answer: Some(ok(201)),
            calls: vec![UpstreamCall::Charge {
                attempt: AttemptId(attempt),
                payment,
                merchant: M,
                environment: ENV,
                amount: 10000,
                currency: "USD".into(),
                card: Card('A'),
            }],
            new_record: true,
            store_changed: true,
        },
    })
}

/// Refund `refund` of the request `request_no` sent to the acquirer under `number`,
/// and stored with that number.
fn refund_sent_for(request_no: &str, number: &str, refund: u32) -> [Event; 2] {
    [
        ev(What::Handled {
            id: RequestId(10 + refund),
            request: req::refund("r1", PAY, number, 3000),
            owner: Some((M, ENV)),
            business: Some(BusinessOrder {
                db: 0,
                order: request_no.into(),
            }),
            handling: Handling {
                answer: Some(ok(201)),
                calls: vec![UpstreamCall::Refund {
                    refund: RefundId(refund),
                    attempt: AttemptId(1),
                    amount: 3000,
                }],
                new_record: true,
                store_changed: true,
            },
        }),
        ev(What::RefundStored {
            refund: RefundId(refund),
            stored: StoredRefund {
                merchant: M,
                environment: ENV,
                merchant_refund_no: number.into(),
                status: RefundStatus::Processing,
                version: 1,
            },
        }),
    ]
}

/// REFUND-04: a refund request sent to the acquirer again under another refund number is
/// violated when that second refund is sent, whether or not it is paid back; one number
/// sent twice (the platform's double refund, not a renumbering) and another request of
/// another number are not.
#[test]
fn refund_request_sent_again_under_another_number() {
    let name = "client-keeps-the-refund-number-while-unresolved";
    let [first, first_stored] = refund_sent_for("R-1", "R-1", 1);
    holds(name, &[first.clone(), first_stored.clone()]);
    let [again, again_stored] = refund_sent_for("R-1", "R-1-again", 2);
    violated(
        name,
        &[first.clone(), first_stored.clone(), again, again_stored],
    );
    let [same, same_stored] = refund_sent_for("R-1", "R-1", 2);
    holds(
        name,
        &[first.clone(), first_stored.clone(), same, same_stored],
    );
    let [other, other_stored] = refund_sent_for("R-2", "R-2", 2);
    holds(name, &[first, first_stored, other, other_stored]);
}

/// EFFECT-01, UNKNOWN-03: a business order is captured once across every Payment its
/// submissions created (a re-numbered or re-keyed second Payment), not only per Payment;
/// another database's order of the same number is another order.
#[test]
fn one_business_order_captured_through_two_payments() {
    let name = "client-never-charges-an-order-twice";
    let two = PaymentId(2);
    holds(
        name,
        &[charged_for(0, "ORDER-1", PAY, 1), capture(PAY, 1, 10000)],
    );
    violated(
        name,
        &[
            charged_for(0, "ORDER-1", PAY, 1),
            charged_for(0, "ORDER-1", two, 2),
            capture(PAY, 1, 10000),
            capture(two, 2, 10000),
        ],
    );
    for other in [
        charged_for(1, "ORDER-1", two, 2),
        charged_for(0, "ORDER-2", two, 2),
    ] {
        holds(
            name,
            &[
                charged_for(0, "ORDER-1", PAY, 1),
                other,
                capture(PAY, 1, 10000),
                capture(two, 2, 10000),
            ],
        );
    }
}

fn keyed(request: ApiRequest, key: Option<&str>) -> ApiRequest {
    ApiRequest {
        idempotency_key: key.map(Into::into),
        ..request
    }
}

/// GEN-04, GEN-05: every request of one submission carries its key, on every endpoint,
/// and a keyless or empty-key request of the submission carries none of it.
#[test]
fn one_submission_under_a_second_or_no_key() {
    let name = "client-sends-one-key-per-submission";
    let t = Millis::ZERO;
    let sub =
        |node, request, seq| sends_as(t, node, (M, ENV), request, Millis::secs(20), Some((0, seq)));
    for request in keyed_requests("k1") {
        holds(
            name,
            &[sub(0, request.clone(), 1), sub(0, request.clone(), 1)],
        );
        // A new submission (a card retry) has a new key.
        holds(
            name,
            &[
                sub(0, request.clone(), 1),
                sub(0, keyed(request.clone(), Some("k2")), 2),
            ],
        );
        for second in [Some("k2"), Some("")] {
            violated(
                name,
                &[
                    sub(0, request.clone(), 1),
                    sub(0, keyed(request.clone(), second), 1),
                ],
            );
            // A second server sharing the database sends the same submission.
            violated(
                name,
                &[
                    sub(0, request.clone(), 1),
                    sub(1, keyed(request.clone(), second), 1),
                ],
            );
        }
        violated(
            name,
            &[
                sub(0, request.clone(), 1),
                sub(0, keyed(request.clone(), None), 1),
            ],
        );
    }
}

fn order_version(payment: u32, version: u32) -> StoredOrder {
    StoredOrder {
        payment_id: Some(PaymentId(payment)),
        version,
        status: Some(PaymentStatus::Processing),
    }
}

fn order_moves(db: u8, was: StoredOrder, now: StoredOrder) -> Event {
    ev(What::OrderStored {
        db,
        order_no: "ORDER-1".into(),
        was: Some(was),
        stored: now,
    })
}

/// WEBHOOK-02: the applied version of one Payment never goes down, in any database;
/// an order re-pointed to another Payment starts over.
#[test]
fn applied_version_goes_back_in_any_database() {
    let name = "client-never-applies-an-older-version";
    for db in [0, 1] {
        holds(
            name,
            &[order_moves(db, order_version(1, 2), order_version(1, 3))],
        );
        holds(
            name,
            &[order_moves(db, order_version(1, 3), order_version(1, 3))],
        );
        violated(
            name,
            &[order_moves(db, order_version(1, 3), order_version(1, 2))],
        );
        holds(
            name,
            &[order_moves(db, order_version(1, 3), order_version(2, 1))],
        );
    }
}

/// SCHED-02: 10 s between two queries of one object, whichever server of the merchant
/// sends them, by id or by number, Payments and refunds; another merchant's or
/// environment's object of the same path is another object.
#[test]
fn queries_spaced_across_servers_and_objects() {
    let name = "client-spaces-queries";
    let t = Millis::secs(100);
    let soon = t.after(Millis::ms(9_999));
    let later = t.after(Millis::secs(10));
    for query in [
        req::get(PAY),
        req::by_order("ORDER-1"),
        req::get_refund(RefundId(1)),
        req::by_refund_no("R-1"),
    ] {
        for node in [0, 1] {
            violated(
                name,
                &[sends(t, 0, query.clone()), sends(soon, node, query.clone())],
            );
            holds(
                name,
                &[
                    sends(t, 0, query.clone()),
                    sends(later, node, query.clone()),
                ],
            );
        }
        for owner in [(MerchantId(2), ENV), (M, Environment::Live)] {
            holds(
                name,
                &[
                    sends(t, 0, query.clone()),
                    sends_as(soon, 1, owner, query.clone(), Millis::secs(10), None),
                ],
            );
        }
    }
    holds(
        name,
        &[
            sends(t, 0, req::get(PAY)),
            sends(soon, 0, req::get(PaymentId(2))),
        ],
    );
}

/// SCHED-02's "the same object" across the ways to name it: a Payment by id and by its
/// order number, a Refund by id and by its refund number, once an answer tied the two
/// (before the first query, between them or after both, to any server of the merchant).
/// Untied, a number is an object of its own; another merchant's answer ties nothing here.
#[test]
fn queries_of_one_object_by_id_and_by_number() {
    let name = "client-spaces-queries";
    let t = Millis::secs(100);
    let soon = t.after(Millis::ms(9_999));
    let later = t.after(Millis::secs(10));
    let shown = ApiResponse::ok(
        200,
        ResponseBody::Payment(super::safety_responses::view(
            PAY,
            PaymentStatus::Processing,
            1,
            1,
        )),
    );
    let refund_shown = ApiResponse::ok(
        200,
        ResponseBody::Refund(super::refund_view(RefundStatus::Processing, 1)),
    );
    let listed = ApiResponse::ok(
        200,
        ResponseBody::Payments {
            data: vec![super::safety_responses::view(
                PAY,
                PaymentStatus::Processing,
                1,
                1,
            )],
        },
    );
    let objects = [
        (req::get(PAY), req::by_order("ORDER-1"), shown.clone()),
        (req::get(PAY), req::by_order("ORDER-1"), listed),
        (
            req::get_refund(RefundId(1)),
            req::by_refund_no("R-1"),
            refund_shown,
        ),
    ];
    for (by_id, by_number, answer) in objects {
        let tie = |at: Millis| answered_to(at, 1, &by_id, answer.clone());
        for (first, then) in [
            (by_id.clone(), by_number.clone()),
            (by_number.clone(), by_id.clone()),
        ] {
            let early = t.after(Millis::ms(1));
            for events in [
                vec![
                    tie(Millis::secs(1)),
                    sends(t, 0, first.clone()),
                    sends(soon, 1, then.clone()),
                ],
                vec![
                    sends(t, 0, first.clone()),
                    tie(early),
                    sends(soon, 1, then.clone()),
                ],
                // Tied only after both were sent (the first never answered).
                vec![
                    sends(t, 0, first.clone()),
                    sends(soon, 1, then.clone()),
                    tie(later),
                ],
            ] {
                violated(name, &events);
                let message = super::verdict(name, &events).unwrap_or_default();
                assert!(message.contains("the same object"), "{message}");
            }
            holds(
                name,
                &[
                    tie(Millis::secs(1)),
                    sends(t, 0, first.clone()),
                    sends(later, 1, then.clone()),
                ],
            );
            holds(
                name,
                &[
                    sends(t, 0, first.clone()),
                    sends(later, 1, then.clone()),
                    tie(later),
                ],
            );
            holds(
                name,
                &[sends(t, 0, first.clone()), sends(soon, 1, then.clone())],
            );
            let mut elsewhere = tie(Millis::secs(1));
            if let What::Answered { route: Some(r), .. } = &mut elsewhere.what {
                r.owner = Some((MerchantId(2), ENV));
            }
            holds(
                name,
                &[
                    elsewhere,
                    sends(t, 0, first.clone()),
                    sends(soon, 1, then.clone()),
                ],
            );
        }
    }
}

fn limited_by(t: Millis, node: u8, request: &ApiRequest, seconds: Option<u32>) -> Event {
    let owner = Some((M, ENV));
    let mut response = error(ErrorCode::RateLimited);
    response.retry_after_s = seconds;
    at(
        t,
        What::Answered {
            id: RequestId(1),
            response,
            rule: Rule::RateLimited,
            route: Some(Route {
                merchant: node,
                owner,
                scope: ScopeKey::of(owner, request),
                awaited: true,
                edge_500: false,
                object_owner: None,
            }),
        },
    )
}

/// RATE-03 on every keyed endpoint: after a 429 nothing under its scope before
/// Retry-After has passed; another key is another scope.
#[test]
fn retry_after_on_every_keyed_endpoint() {
    let name = "client-honours-retry-after";
    let t = Millis::secs(100);
    for request in keyed_requests("k1") {
        let limited = limited_by(t, 0, &request, Some(2));
        let mut rate_limited = error(ErrorCode::RateLimited);
        rate_limited.retry_after_s = Some(2);
        let read = delivered(t, 0, rate_limited);
        violated(
            name,
            &[
                limited.clone(),
                read.clone(),
                sends(t.after(Millis::ms(1_999)), 0, request.clone()),
            ],
        );
        holds(
            name,
            &[
                limited.clone(),
                read.clone(),
                sends(t.after(Millis::secs(2)), 0, request.clone()),
            ],
        );
        holds(
            name,
            &[
                limited.clone(),
                read,
                sends(
                    t.after(Millis::secs(1)),
                    0,
                    keyed(request.clone(), Some("k2")),
                ),
            ],
        );
        // Seed 948570: the 429 is still in the network when the client times out; it
        // never read Retry-After, and its retry on the backoff breaks nothing.
        holds(
            name,
            &[
                limited,
                timed_out(t.after(Millis::ms(48)), 0),
                sends(t.after(Millis::ms(1_160)), 0, request.clone()),
            ],
        );
    }
}

/// GEN-05: one key, one endpoint, among all five keyed endpoints; the same key of another
/// merchant or environment is another key.
#[test]
fn key_on_any_two_of_the_keyed_endpoints() {
    let name = "client-uses-a-key-on-one-endpoint";
    let requests = keyed_requests("k1");
    for (i, first) in requests.iter().enumerate() {
        holds(
            name,
            &[
                sends(Millis::ZERO, 0, first.clone()),
                sends(Millis::ZERO, 0, first.clone()),
            ],
        );
        for (j, then) in requests.iter().enumerate() {
            if i == j {
                continue;
            }
            violated(
                name,
                &[
                    sends(Millis::ZERO, 0, first.clone()),
                    sends(Millis::ZERO, 1, then.clone()),
                ],
            );
            for owner in [(MerchantId(2), ENV), (M, Environment::Live)] {
                holds(
                    name,
                    &[
                        sends(Millis::ZERO, 0, first.clone()),
                        sends_as(Millis::ZERO, 1, owner, then.clone(), Millis::secs(20), None),
                    ],
                );
            }
        }
    }
}

/// UNKNOWN-04 on every endpoint with safety-relevant parameters (create, checkout
/// session, refund), for every such parameter; card information takes no part
/// (S7: a confirm with card B under K is the same request).
#[test]
fn parameters_changed_under_a_key_of_every_endpoint() {
    let name = "client-never-changes-parameters-under-a-key";
    let t = Millis::ZERO;
    let pairs = [
        (
            req::create("k1", "ORDER-1", 10000, "USD", 'A'),
            vec![
                req::create("k1", "ORDER-1", 10001, "USD", 'A'),
                req::create("k1", "ORDER-1", 10000, "EUR", 'A'),
                req::create("k1", "ORDER-2", 10000, "USD", 'A'),
            ],
        ),
        (
            req::session("k1", "ORDER-1", 10000, "USD"),
            vec![
                req::session("k1", "ORDER-1", 9999, "USD"),
                req::session("k1", "ORDER-9", 10000, "USD"),
            ],
        ),
        (
            req::refund("k1", PAY, "R-1", 5000),
            vec![
                req::refund("k1", PAY, "R-1", 5001),
                req::refund("k1", PAY, "R-2", 5000),
                req::refund("k1", PaymentId(2), "R-1", 5000),
            ],
        ),
    ];
    for (first, changed) in pairs {
        holds(
            name,
            &[sends(t, 0, first.clone()), sends(t, 1, first.clone())],
        );
        for then in changed {
            violated(
                name,
                &[sends(t, 0, first.clone()), sends(t, 1, then.clone())],
            );
            holds(
                name,
                &[
                    sends(t, 0, first.clone()),
                    sends_as(t, 1, (MerchantId(2), ENV), then, Millis::secs(20), None),
                ],
            );
        }
    }
    // S7: card B under K.
    holds(
        name,
        &[
            sends(t, 0, req::create("k1", "ORDER-1", 10000, "USD", 'A')),
            sends(t, 0, req::create("k1", "ORDER-1", 10000, "USD", 'B')),
        ],
    );
    holds(
        name,
        &[
            sends(t, 0, req::confirm("k1", PAY, 'A')),
            sends(t, 0, req::confirm("k1", PAY, 'B')),
        ],
    );
}

fn answered_to(t: Millis, node: u8, request: &ApiRequest, response: ApiResponse) -> Event {
    let owner = Some((M, ENV));
    at(
        t,
        What::Answered {
            id: RequestId(1),
            response,
            rule: Rule::RejectionsDoNotOccupyKey,
            route: Some(Route {
                merchant: node,
                owner,
                scope: ScopeKey::of(owner, request),
                awaited: true,
                edge_500: false,
                object_owner: None,
            }),
        },
    )
}

/// UNKNOWN-03, REJECT-01: one key per order's creates, from any server; only a create
/// rejected with 400, 401, 403 or 422 frees its key; a 409, 429 or 5xx does not; another
/// merchant's order of the same number is another order.
#[test]
fn order_rekeyed_after_answers_that_free_no_key() {
    let name = "client-creates-an-order-under-one-key";
    let t = Millis::ZERO;
    let first = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let second = req::create("k2", "ORDER-1", 10000, "USD", 'A');
    violated(
        name,
        &[sends(t, 0, first.clone()), sends(t, 1, second.clone())],
    );
    holds(
        name,
        &[
            sends(t, 0, first.clone()),
            sends_as(
                t,
                1,
                (MerchantId(2), ENV),
                second.clone(),
                Millis::secs(20),
                None,
            ),
        ],
    );
    for freeing in [
        ErrorCode::InvalidRequest,
        ErrorCode::AuthenticationFailed,
        ErrorCode::PermissionDenied,
        ErrorCode::UnsupportedCurrency,
    ] {
        holds(
            name,
            &[
                sends(t, 0, first.clone()),
                answered_to(t, 0, &first, error(freeing)),
                sends(t, 0, second.clone()),
            ],
        );
    }
    for binding in [
        ErrorCode::IdempotencyConflict,
        ErrorCode::RateLimited,
        ErrorCode::TemporarilyUnavailable,
        ErrorCode::InternalError,
    ] {
        violated(
            name,
            &[
                sends(t, 0, first.clone()),
                answered_to(t, 0, &first, error(binding)),
                sends(t, 0, second.clone()),
            ],
        );
    }
}

/// ATTEMPT-07: no awaited request answered 409 payment_in_progress, on a confirm from any
/// server; an answer nobody waits for, or replaced by the edge's 500, reached no client.
#[test]
fn payment_in_progress_to_any_waiting_server() {
    let name = "client-card-retry-only-after-failed";
    let confirm = req::confirm("k2", PAY, 'B');
    for node in [0, 1] {
        violated(
            name,
            &[answered_to(
                Millis::ZERO,
                node,
                &confirm,
                error(ErrorCode::PaymentInProgress),
            )],
        );
    }
    let mut unawaited = answered_to(
        Millis::ZERO,
        0,
        &confirm,
        error(ErrorCode::PaymentInProgress),
    );
    if let What::Answered { route: Some(r), .. } = &mut unawaited.what {
        r.awaited = false;
    }
    holds(name, &[unawaited]);
    let mut replaced = answered_to(
        Millis::ZERO,
        0,
        &confirm,
        error(ErrorCode::PaymentInProgress),
    );
    if let What::Answered { route: Some(r), .. } = &mut replaced.what {
        r.edge_500 = true;
    }
    holds(name, &[replaced]);
    holds(name, &[answered_to(Millis::ZERO, 0, &confirm, ok(200))]);
}

// ---- Reach. ----

fn answered_by(request: &ApiRequest, response: ApiResponse, rule: Rule) -> Event {
    let owner = Some((M, ENV));
    ev(What::Answered {
        id: RequestId(1),
        response,
        rule,
        route: Some(Route {
            merchant: 0,
            owner,
            scope: ScopeKey::of(owner, request),
            awaited: true,
            edge_500: false,
            object_owner: None,
        }),
    })
}

fn every_request() -> Vec<ApiRequest> {
    let mut requests = keyed_requests("k1");
    requests.extend([
        req::get(PAY),
        req::by_order("ORDER-1"),
        req::get_refund(RefundId(1)),
    ]);
    requests
}

/// Each 409 reach property is reached by its code on every endpoint that can answer it
/// (a refund's or a confirm's idempotency_conflict as much as a create's), and not by
/// another 409.
#[test]
fn conflicts_reached_on_every_endpoint() {
    for (name, code, rule) in [
        (
            "reach:409-idempotency-conflict",
            ErrorCode::IdempotencyConflict,
            Rule::IdempotencyConflict,
        ),
        (
            "reach:409-order-no-conflict",
            ErrorCode::OrderNoConflict,
            Rule::OrderNoNewKey,
        ),
        (
            "reach:409-operation-in-progress",
            ErrorCode::OperationInProgress,
            Rule::ConcurrentWaitTimeout,
        ),
        (
            "reach:409-payment-in-progress",
            ErrorCode::PaymentInProgress,
            Rule::ConfirmWhileProcessing,
        ),
        (
            "reach:409-refund-no-conflict",
            ErrorCode::RefundNoConflict,
            Rule::UniqueRefundNo,
        ),
    ] {
        for request in keyed_requests("k1") {
            assert!(
                reached(name, &[answered_by(&request, error(code), rule)]),
                "{name}"
            );
            let other = if code == ErrorCode::IdempotencyConflict {
                ErrorCode::OperationInProgress
            } else {
                ErrorCode::IdempotencyConflict
            };
            assert!(
                !reached(name, &[answered_by(&request, error(other), rule)]),
                "{name}"
            );
        }
    }
}

/// 429 and 503 are reached on every endpoint, queries included.
#[test]
fn rate_limit_and_pause_reached_on_every_endpoint() {
    for request in every_request() {
        let limited = with_retry_after(error(ErrorCode::RateLimited), 2);
        let rl = "reach:429-rate-limited";
        assert!(reached(
            rl,
            &[answered_by(&request, limited, Rule::RateLimited)]
        ));
        let paused = "reach:503-temporarily-unavailable";
        let e503 = error(ErrorCode::TemporarilyUnavailable);
        assert!(reached(
            paused,
            &[answered_by(&request, e503, Rule::ChannelPaused)]
        ));
        let e500 = error(ErrorCode::InternalError);
        assert!(!reached(
            paused,
            &[answered_by(&request, e500, Rule::UnknownResult)]
        ));
        assert!(!reached(
            rl,
            &[answered_by(&request, ok(200), Rule::ReplayLatestStatus200)]
        ));
    }
}

/// A replay answered 200 on every keyed endpoint is reached; a first execution's 201 or a
/// query's 200 is not a replay.
#[test]
fn replay_reached_on_every_keyed_endpoint() {
    let name = "reach:replay-answered-200";
    for request in keyed_requests("k1") {
        assert!(reached(
            name,
            &[answered_by(&request, ok(200), Rule::ReplayLatestStatus200)]
        ));
        assert!(!reached(
            name,
            &[answered_by(&request, ok(201), Rule::FirstExecution201)]
        ));
    }
    assert!(!reached(
        name,
        &[answered_by(&req::get(PAY), ok(200), Rule::QueryById)]
    ));
}

/// SYNC-WAIT, UNKNOWN: a create's or confirm's 202 reaches `reach:202-result-unknown`; a
/// cancel's 202 (CANCEL-01) is not a result unknown of a charge. `reach:cancel-202` is
/// the cancel's 202, of any Payment (a checkout session's as much as a create's); not a
/// cancel's 200 next to a create's 202.
#[test]
fn two_kinds_of_202_reached_apart() {
    let unknown = "reach:202-result-unknown";
    let cancel = "reach:cancel-202";
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let confirm = req::confirm("k1", PAY, 'A');
    let cancel_req = req::cancel("k2", PAY);
    for request in [&create, &confirm] {
        for rule in [Rule::SyncWait, Rule::UnknownResult] {
            let e = [answered_by(request, ok(202), rule)];
            assert!(reached(unknown, &e));
            assert!(!reached(cancel, &e));
        }
    }
    let cancel_202 = answered_by(&cancel_req, ok(202), Rule::Cancel202KeepsStatus);
    assert!(reached(cancel, std::slice::from_ref(&cancel_202)));
    assert!(
        !reached(unknown, &[cancel_202]),
        "a cancel's 202 is no charge's result unknown"
    );
    // A cancel's 200 (already canceled, same rule) next to a create's 202.
    let mixed = [
        answered_by(&cancel_req, ok(200), Rule::Cancel202KeepsStatus),
        answered_by(&create, ok(202), Rule::SyncWait),
    ];
    assert!(
        !reached(cancel, &mixed),
        "a cancel's 200 and a create's 202 are no cancel 202"
    );
}

/// needs_query is reached by the rule that put a Payment there (an answer's, a call's or a
/// webhook's) or by the store holding one processing with needs_query.
#[test]
fn needs_query_reached_from_the_store_or_a_rule() {
    let name = "reach:needs-query";
    let t = Millis::ZERO;
    assert!(reached(name, &[platform_queries(t, 1, None)]));
    assert!(reached(
        name,
        &[payment_in(
            t,
            PaymentStatus::Processing,
            ResolutionStatus::NeedsQuery,
            &[1]
        )]
    ));
    assert!(!reached(
        name,
        &[payment_in(
            t,
            PaymentStatus::Processing,
            ResolutionStatus::Known,
            &[1]
        )]
    ));
}

/// manual_review is reached when a Payment was in it, also if it was resolved since (the
/// judge of a recorded stream sees the end only).
#[test]
fn manual_review_reached_though_resolved_since() {
    let name = "reach:manual-review";
    let t = Millis::hours(2);
    assert!(reached(name, &[manual_review(t, &[1])]));
    assert!(reached(
        name,
        &[
            manual_review(t, &[1]),
            payment_in(t, PaymentStatus::Succeeded, ResolutionStatus::Known, &[1]),
        ]
    ));
    assert!(!reached(
        name,
        &[payment_in(
            t,
            PaymentStatus::Processing,
            ResolutionStatus::NeedsQuery,
            &[1]
        )]
    ));
}

/// A card retry that succeeded: two attempts and succeeded; one attempt, or a second
/// attempt that failed too, is not.
#[test]
fn second_card_reached_by_a_second_attempt_only() {
    let name = "reach:second-card-succeeded";
    assert!(reached(
        name,
        &[payment(PaymentStatus::Succeeded, &[1, 2], None)]
    ));
    assert!(!reached(
        name,
        &[payment(PaymentStatus::Succeeded, &[1], None)]
    ));
    assert!(!reached(
        name,
        &[payment(PaymentStatus::Failed, &[1, 2], Some(2))]
    ));
}

fn succeeded_under(t: Millis, request: &ApiRequest, body: ResponseBody) -> Event {
    let owner = Some((M, ENV));
    at(
        t,
        What::Answered {
            id: RequestId(1),
            response: ApiResponse::ok(200, body),
            rule: Rule::ReplayLatestStatus200,
            route: Some(Route {
                merchant: 0,
                owner,
                scope: ScopeKey::of(owner, request),
                awaited: true,
                edge_500: false,
                object_owner: None,
            }),
        },
    )
}

fn payment_body() -> ResponseBody {
    let Event { what, .. } = super::shown(PaymentStatus::Succeeded, ResolutionStatus::Known, false);
    match what {
        What::WebhookEmitted { event, .. } => match event.object {
            payhub_model::WebhookObject::Payment(p) => ResponseBody::Payment(p),
            payhub_model::WebhookObject::Refund(_) => unreachable!(),
        },
        _ => unreachable!(),
    }
}

/// RETENTION: a key answered again after its 7 days, for a Payment's key and a refund's;
/// an answer within the 7 days is a replay, not after retention.
#[test]
fn replay_after_retention_of_a_payment_or_a_refund_key() {
    let name = "reach:replay-after-retention";
    let week = Millis::days(7);
    let refund = || {
        ResponseBody::Refund(payhub_model::RefundView {
            id: RefundId(1),
            payment_id: PAY,
            merchant_refund_no: "R-1".into(),
            amount: 5000,
            status: RefundStatus::Succeeded,
            resolution_status: ResolutionStatus::Known,
            version: 2,
        })
    };
    for (request, body) in [
        (
            req::create("k1", "ORDER-1", 10000, "USD", 'A'),
            payment_body(),
        ),
        (req::refund("k1", PAY, "R-1", 5000), refund()),
    ] {
        let first = succeeded_under(Millis::ZERO, &request, body.clone());
        let again = |t| succeeded_under(t, &request, body.clone());
        assert!(reached(name, &[first.clone(), again(week)]));
        assert!(!reached(name, &[first, again(Millis::ms(week.0 - 1))]));
    }
}

/// A checkout session with a new key for the same order reaches its property.
#[test]
fn new_checkout_session_reached_by_its_rule() {
    let name = "reach:new-checkout-session-same-payment";
    let session = req::session("k2", "ORDER-1", 10000, "USD");
    assert!(reached(
        name,
        &[answered_by(&session, ok(201), Rule::CheckoutNewSession)]
    ));
    assert!(!reached(
        name,
        &[answered_by(&session, ok(201), Rule::FirstExecution201)]
    ));
}

fn refund_in(status: RefundStatus) -> Event {
    ev(What::RefundStored {
        refund: RefundId(1),
        stored: StoredRefund {
            merchant: M,
            environment: ENV,
            merchant_refund_no: "R-1".into(),
            status,
            version: 2,
        },
    })
}

/// A refund reaches succeeded in the store, whether the platform learnt it from the
/// upstream's reply, a webhook or its own query; pending_review or processing is not.
#[test]
fn refund_succeeded_reached_in_the_store() {
    let name = "reach:refund-succeeded";
    assert!(reached(
        name,
        &[
            refund_in(RefundStatus::Processing),
            refund_in(RefundStatus::Succeeded)
        ]
    ));
    for status in [RefundStatus::PendingReview, RefundStatus::Processing] {
        assert!(!reached(name, &[refund_in(status)]));
    }
}

/// RETRY-03, SCHED-01: 83 requests per opening for one submission; a timeout opens more.
#[test]
fn traffic_within_the_schedules_per_opening() {
    let name = "client-traffic-within-the-schedules";
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let submitted = |t: Millis| {
        at(
            t,
            What::ClientSends {
                node: 0,
                handle: payhub_model::client::Handle { boot: 0, n: 1 },
                request: create.clone(),
                owner: Some((M, ENV)),
                timeout: Millis::secs(20),
                rule: Rule::RetrySameKey,
                submission: Some(payhub_model::event::SubmissionRef {
                    db: 0,
                    order: "ORDER-1".into(),
                    seq: 1,
                }),
                held: false,
            },
        )
    };
    let allowed = payhub_properties::traffic::allowed_per_opening() as u64;
    assert_eq!(allowed, 83);
    let within: Vec<Event> = (0..allowed).map(|i| submitted(Millis::secs(i))).collect();
    holds(name, &within);
    let mut over = within.clone();
    over.push(submitted(Millis::secs(allowed)));
    violated(name, &over);
    let mut opened = within;
    opened.push(timed_out(Millis::secs(allowed), 0));
    opened.push(submitted(Millis::secs(allowed + 1)));
    holds(name, &opened);
}
