//! No response property narrower than its name: for each property of
//! `properties/src/responses/mod.rs`, event streams that plant the cases its name covers (on
//! every endpoint, key form, answer kind it names) are judged violated, and the contract's
//! own answers to the same requests hold. The streams are written by hand, event by
//! event, with no world and no platform behind them: the properties judge what was seen.

use payhub_model::api::req;
use payhub_model::event::{Event, Handling, Route, ScopeKey, StoredPayment, What};
use payhub_model::{
    ApiError, ApiRequest, ApiResponse, AttemptId, Endpoint, Environment, ErrorCode, EventId,
    Failure, FailureCode, Field, MerchantId, Method, Millis, PaymentId, PaymentStatus, PaymentView,
    RefundId, RequestId, ResolutionStatus, ResourceId, ResponseBody, Rule, WebhookEvent,
    WebhookObject,
};
use payhub_properties::Facts;
use payhub_properties::property;

use PaymentStatus::{Canceled, Failed, Processing, RequiresAction, Succeeded};
use ResolutionStatus::{Known, NeedsQuery};

const PAY: PaymentId = PaymentId(1);
const M1: (MerchantId, Environment) = (MerchantId(1), Environment::Test);

// ---- building streams ---------------------------------------------------------------

/// A Payment as the store holds it: ORDER-1 of merchant 1 (test).
fn stored(
    status: PaymentStatus,
    version: u32,
    attempts: &[u32],
    failure: Option<u32>,
) -> StoredPayment {
    StoredPayment {
        merchant: M1.0,
        environment: M1.1,
        merchant_order_no: "ORDER-1".into(),
        status,
        resolution: if status == Processing {
            NeedsQuery
        } else {
            Known
        },
        expires_at: Millis::hours(2),
        attempts: attempts.iter().map(|a| AttemptId(*a)).collect(),
        failure_attempt: failure.map(AttemptId),
        version,
        fee_rate_bps: 290,
    }
}

/// The view of `s` (what a correct platform answers).
fn view_of(s: &StoredPayment) -> PaymentView {
    PaymentView {
        id: PAY,
        merchant_order_no: s.merchant_order_no.clone(),
        amount: 10000,
        currency: "USD".into(),
        status: s.status,
        resolution_status: s.resolution,
        attempt_count: s.attempts.len() as u8,
        failure: s.failure_attempt.map(|a| Failure {
            code: FailureCode::CardDeclined,
            attempt_id: a,
        }),
        next_action: s.status == RequiresAction,
        expires_at: s.expires_at,
        fee_rate_bps: 0,
        amount_refunded: 0,
        version: s.version,
    }
}

fn payment(status: u16, view: PaymentView) -> ApiResponse {
    ApiResponse::ok(status, ResponseBody::Payment(view))
}

fn error(code: ErrorCode) -> ApiResponse {
    ApiResponse::error(ApiError::new(code))
}

fn with_field(code: ErrorCode, field: Field) -> ApiResponse {
    let mut e = ApiError::new(code);
    e.field = Some(field);
    ApiResponse::error(e)
}

fn related(code: ErrorCode, to: Option<ResourceId>) -> ApiResponse {
    let e = ApiError::new(code);
    ApiResponse::error(match to {
        Some(r) => e.related(r),
        None => e,
    })
}

fn ev(what: What) -> Event {
    Event::new(Millis(0), what)
}

fn store(s: StoredPayment) -> Event {
    ev(What::PaymentStored {
        payment: PAY,
        stored: s,
    })
}

/// Request `id` handled: nothing done, answered `answer` in its own step.
fn read(id: u32, request: &ApiRequest, answer: ApiResponse) -> Vec<Event> {
    handled(id, request, Some(answer), false)
}

/// Request `id` handled; `executed`: it wrote a record (an execution starts).
fn handled(
    id: u32,
    request: &ApiRequest,
    answer: Option<ApiResponse>,
    executed: bool,
) -> Vec<Event> {
    let mut events = vec![ev(What::Handled {
        id: RequestId(id),
        request: request.clone(),
        owner: Some(M1),
        business: None,
        handling: Handling {
            answer: answer.clone(),
            calls: Vec::new(),
            new_record: executed,
            store_changed: executed,
        },
    })];
    if let Some(answer) = answer {
        events.push(answered(id, request, answer));
    }
    events
}

/// The answer to request `id` leaves the platform for merchant 0.
fn answered(id: u32, request: &ApiRequest, response: ApiResponse) -> Event {
    ev(What::Answered {
        id: RequestId(id),
        response,
        rule: Rule::ReplayLatestStatus200,
        route: Some(Route {
            merchant: 0,
            owner: Some(M1),
            scope: ScopeKey::of(Some(M1), request),
            awaited: true,
            edge_500: false,
            object_owner: Some(M1),
        }),
    })
}

fn webhook(view: PaymentView) -> Event {
    ev(What::WebhookEmitted {
        event: WebhookEvent {
            id: EventId(1),
            merchant: M1.0,
            environment: M1.1,
            kind: "payment.x".into(),
            object: WebhookObject::Payment(view),
            delivery: 0,
        },
        rule: Rule::WebhookPrimary,
        to: Some(0),
    })
}

/// The verdict of property `name` over a stream.
fn verdict(name: &str, events: &[Event]) -> Option<String> {
    let p = property(name).unwrap_or_else(|| panic!("{name} is registered"));
    p.judge(&Facts::from_events(events))
}

#[track_caller]
fn violated(name: &str, events: Vec<Event>) {
    assert!(
        verdict(name, &events).is_some(),
        "{name} should be violated"
    );
}

#[track_caller]
fn holds(name: &str, events: Vec<Event>) {
    assert_eq!(verdict(name, &events), None, "{name} should hold");
}

fn create() -> ApiRequest {
    req::create("K", "ORDER-1", 10000, "USD", 'A')
}

/// Every endpoint that needs an Idempotency-Key (KEY-01..KEY-05), under key `k`.
fn keyed_endpoints(k: Option<&str>) -> Vec<ApiRequest> {
    [
        create(),
        req::confirm("K", PAY, 'B'),
        req::cancel("K", PAY),
        req::session("K", "ORDER-1", 10000, "USD"),
        req::refund("K", PAY, "R-1", 5000),
    ]
    .into_iter()
    .map(|r| req::with_key(r, k))
    .collect()
}

fn cat(parts: Vec<Vec<Event>>) -> Vec<Event> {
    parts.into_iter().flatten().collect()
}

// ---- one test per property ----------------------------------------------------------

/// REPLAY-02, CONC-02: a replay, a waiter's answer and a first execution all show the
/// current status, resolution_status, version and failure.attempt_id.
#[test]
fn replay_02_answers_show_the_current_state() {
    let name = "answers-show-the-current-state";
    let now = stored(Succeeded, 3, &[1], None);
    let r = create();
    holds(
        name,
        cat(vec![
            vec![store(now.clone())],
            read(2, &r, payment(200, view_of(&now))),
        ]),
    );
    // A stale version, a stale status at the same version, a stale failure, a Payment the
    // store never held.
    let stale_version = PaymentView {
        version: 2,
        ..view_of(&now)
    };
    let stale_status = PaymentView {
        status: Processing,
        ..view_of(&now)
    };
    let stale_failure = PaymentView {
        failure: Some(Failure {
            code: FailureCode::CardDeclined,
            attempt_id: AttemptId(1),
        }),
        ..view_of(&now)
    };
    for shown in [stale_version, stale_status, stale_failure] {
        violated(
            name,
            cat(vec![
                vec![store(now.clone())],
                read(2, &r, payment(200, shown)),
            ]),
        );
    }
    violated(name, read(2, &r, payment(200, view_of(&now))));
    // A waiter answered later (not in its own step), and a confirm's own execution.
    let waiter = cat(vec![
        vec![store(now.clone())],
        handled(3, &r, None, false),
        vec![answered(
            3,
            &r,
            payment(
                200,
                PaymentView {
                    version: 1,
                    ..view_of(&now)
                },
            ),
        )],
    ]);
    violated(name, waiter);
    let confirm = req::confirm("C", PAY, 'B');
    let executor = cat(vec![
        vec![store(now.clone())],
        handled(4, &confirm, None, true),
        vec![answered(
            4,
            &confirm,
            payment(
                200,
                PaymentView {
                    status: Failed,
                    ..view_of(&now)
                },
            ),
        )],
    ]);
    violated(name, executor);
}

/// REPLAY-02, REFUND-02: a refund replay shows the refund's current status and version.
#[test]
fn refund_02_answers_show_the_current_refund() {
    use payhub_model::event::StoredRefund;
    use payhub_model::{RefundStatus, RefundView};
    let name = "answers-show-the-current-state";
    let stored = StoredRefund {
        merchant: M1.0,
        environment: M1.1,
        merchant_refund_no: "R-1".into(),
        status: RefundStatus::Succeeded,
        version: 2,
    };
    let refund = ev(What::RefundStored {
        refund: RefundId(1),
        stored: stored.clone(),
    });
    let view = |status, version| RefundView {
        id: RefundId(1),
        payment_id: PAY,
        merchant_refund_no: "R-1".into(),
        amount: 5000,
        status,
        resolution_status: Known,
        version,
    };
    let r = req::refund("R", PAY, "R-1", 5000);
    let answer = |v| ApiResponse::ok(200, ResponseBody::Refund(v));
    let replay = |v| cat(vec![vec![refund.clone()], read(2, &r, answer(v))]);
    holds(name, replay(view(RefundStatus::Succeeded, 2)));
    violated(name, replay(view(RefundStatus::Processing, 2)));
    violated(name, replay(view(RefundStatus::Succeeded, 1)));
    violated(name, read(2, &r, answer(view(RefundStatus::Succeeded, 2))));
}

/// REPLAY-03, REPLAY-02, CONC-02: 201 only for a create's first execution; a replay, a
/// reread and a waiter get 200; a create's own execution 201 or 202.
#[test]
fn replay_03_first_execution_201_replay_200() {
    let name = "first-execution-201-replay-200";
    let now = stored(Succeeded, 2, &[1], None);
    let r = create();
    let view = view_of(&now);
    holds(
        name,
        cat(vec![
            vec![store(now.clone())],
            read(2, &r, payment(200, view.clone())),
        ]),
    );
    // A replay (its step did nothing) answered 201 or 202.
    for status in [201, 202] {
        violated(
            name,
            cat(vec![
                vec![store(now.clone())],
                read(2, &r, payment(status, view.clone())),
            ]),
        );
    }
    // A waiter answered 201.
    let waiter = |status| {
        cat(vec![
            vec![store(now.clone())],
            handled(3, &r, None, false),
            vec![answered(3, &r, payment(status, view.clone()))],
        ])
    };
    holds(name, waiter(200));
    violated(name, waiter(201));
    // A create's own execution answered 200; 201 and 202 hold.
    let executor = |status| {
        cat(vec![
            vec![store(now.clone())],
            handled(4, &r, None, true),
            vec![answered(4, &r, payment(status, view.clone()))],
        ])
    };
    holds(name, executor(201));
    holds(name, executor(202));
    violated(name, executor(200));
    // 201 to an endpoint that creates nothing (a GET, a cancel), in a step that changed the store.
    for request in [req::get(PAY), req::cancel("X", PAY)] {
        let answer = Some(payment(201, view.clone()));
        violated(
            name,
            cat(vec![
                vec![store(now.clone())],
                handled(5, &request, answer, true),
            ]),
        );
    }
}

/// RATE-04, RATE-05: no 5xx but 503, and 503 only as temporarily_unavailable.
#[test]
fn rate_05_only_5xx_is_503_temporarily_unavailable() {
    let name = "only-5xx-is-503-temporarily-unavailable";
    let r = create();
    holds(name, read(1, &r, error(ErrorCode::TemporarilyUnavailable)));
    violated(name, read(1, &r, error(ErrorCode::InternalError)));
    let mut other_503 = error(ErrorCode::InternalError);
    other_503.status = 503;
    violated(name, read(1, &r, other_503));
    let mut paused_500 = error(ErrorCode::TemporarilyUnavailable);
    paused_500.status = 500;
    violated(name, read(1, &r, paused_500));
}

/// KEY-01..KEY-07: every invalid key form on every keyed endpoint is 400 with
/// error.field = Idempotency-Key; every valid form (1, 255 characters, multi-byte) never
/// is; a query never is.
#[test]
fn key_07_invalid_key_answered_400_idempotency_key() {
    let name = "invalid-key-answered-400-idempotency-key";
    let key_400 = || with_field(ErrorCode::InvalidRequest, Field::IdempotencyKey);
    let invalid: [Option<String>; 4] = [
        None,
        Some(String::new()),
        Some("k".repeat(256)),
        Some("é".repeat(256)),
    ];
    for k in &invalid {
        for r in keyed_endpoints(k.as_deref()) {
            holds(name, read(1, &r, key_400()));
            // Authentication and the rate limit may answer first.
            holds(name, read(1, &r, error(ErrorCode::AuthenticationFailed)));
            violated(name, read(1, &r, error(ErrorCode::InvalidRequest)));
            violated(
                name,
                read(1, &r, with_field(ErrorCode::InvalidRequest, Field::Body)),
            );
            violated(name, read(1, &r, error(ErrorCode::PaymentNotConfirmable)));
        }
    }
    let valid = ["k".to_owned(), "k".repeat(255), "é".repeat(255)];
    for k in &valid {
        for r in keyed_endpoints(Some(k)) {
            violated(name, read(1, &r, key_400()));
            holds(name, read(1, &r, error(ErrorCode::PaymentNotConfirmable)));
        }
    }
    violated(name, read(1, &req::get(PAY), key_400()));
}

/// QUERY-01, QUERY-05: unknown, foreign and known Payments, unknown routes.
#[test]
fn query_01_unknown_objects_and_routes_answered_404_405() {
    let name = "unknown-objects-and-routes-answered-404-405";
    let get = req::get(PAY);
    let missing = error(ErrorCode::ResourceMissing);
    holds(name, read(1, &get, missing.clone()));
    violated(name, read(1, &get, error(ErrorCode::PermissionDenied)));
    // Known to the store: never 404.
    let known = stored(Succeeded, 2, &[1], None);
    violated(
        name,
        cat(vec![
            vec![store(known.clone())],
            read(1, &get, missing.clone()),
        ]),
    );
    // Another merchant's Payment: 404, as if unknown.
    let foreign = StoredPayment {
        merchant: MerchantId(2),
        ..known
    };
    holds(
        name,
        cat(vec![
            vec![store(foreign.clone())],
            read(1, &get, missing.clone()),
        ]),
    );
    violated(
        name,
        cat(vec![
            vec![store(foreign)],
            read(1, &get, error(ErrorCode::PermissionDenied)),
        ]),
    );
    for (method, path) in [
        (Method::Delete, "/v1/payments/pay_demo_001"),
        (Method::Get, "/v1/nothing"),
    ] {
        let other = req::query(Endpoint::Other {
            method,
            path: path.into(),
        });
        holds(name, read(1, &other, missing.clone()));
        holds(name, read(1, &other, error(ErrorCode::MethodNotAllowed)));
        violated(name, read(1, &other, error(ErrorCode::InvalidRequest)));
    }
}

/// ORDER-01, ATTEMPT-01, UNIQ-04: each conflict that points at an object names it.
#[test]
fn order_01_conflicts_name_the_related_resource() {
    let name = "conflicts-name-the-related-resource";
    let s = stored(Succeeded, 2, &[1], None);
    let pay = Some(ResourceId::Payment(PAY));
    let other = Some(ResourceId::Payment(PaymentId(7)));
    let order = req::create("K2", "ORDER-1", 10000, "USD", 'A');
    let session = req::session("S2", "ORDER-1", 12000, "USD");
    for r in [&order, &session] {
        let with = |to| {
            cat(vec![
                vec![store(s.clone())],
                read(1, r, related(ErrorCode::OrderNoConflict, to)),
            ])
        };
        holds(name, with(pay));
        violated(name, with(None));
        violated(name, with(other));
    }
    let confirm = req::confirm("C2", PAY, 'B');
    holds(
        name,
        read(1, &confirm, related(ErrorCode::PaymentInProgress, pay)),
    );
    violated(
        name,
        read(1, &confirm, related(ErrorCode::PaymentInProgress, None)),
    );
    violated(
        name,
        read(1, &confirm, related(ErrorCode::PaymentInProgress, other)),
    );
    let refund = req::refund("R2", PAY, "R-1", 5000);
    holds(
        name,
        read(
            1,
            &refund,
            related(
                ErrorCode::RefundNoConflict,
                Some(ResourceId::Refund(RefundId(1))),
            ),
        ),
    );
    violated(
        name,
        read(1, &refund, related(ErrorCode::RefundNoConflict, None)),
    );
}

/// CANCEL-01: 202 to a cancel with the status unchanged, in the answer and the store.
#[test]
fn cancel_01_cancel_202_keeps_the_status() {
    let name = "cancel-202-keeps-the-status";
    let cancel = req::cancel("X", PAY);
    let answer = |store_status: PaymentStatus, shown: PaymentStatus| {
        let s = stored(store_status, 3, &[1], None);
        cat(vec![
            vec![store(s.clone())],
            handled(1, &cancel, None, true),
            vec![answered(
                1,
                &cancel,
                payment(
                    202,
                    PaymentView {
                        status: shown,
                        ..view_of(&s)
                    },
                ),
            )],
        ])
    };
    holds(name, answer(RequiresAction, RequiresAction));
    holds(name, answer(Processing, Processing));
    violated(name, answer(Canceled, Canceled));
    violated(name, answer(RequiresAction, Canceled));
    violated(name, answer(Canceled, RequiresAction));
}

/// RES-06: failure.attempt_id is the latest attempt, after one and after several.
#[test]
fn res_06_failure_names_the_latest_attempt() {
    let name = "failure-names-the-latest-attempt";
    holds(name, vec![store(stored(Failed, 2, &[1], Some(1)))]);
    holds(name, vec![store(stored(Failed, 4, &[1, 2], Some(2)))]);
    violated(name, vec![store(stored(Failed, 4, &[1, 2], Some(1)))]);
    violated(name, vec![store(stored(Failed, 2, &[1], None))]);
    violated(name, vec![store(stored(Failed, 5, &[1, 2, 3], Some(2)))]);
}

/// ATTEMPT-05, REPLAY-02: attempt_count in answers (POST and GET) and current webhooks.
#[test]
fn attempt_05_attempt_count_is_attempts_made() {
    let name = "attempt-count-is-attempts-made";
    let s = stored(Processing, 4, &[1, 2], None);
    let shown = |n| PaymentView {
        attempt_count: n,
        ..view_of(&s)
    };
    for r in [create(), req::get(PAY), req::confirm("C", PAY, 'B')] {
        holds(
            name,
            cat(vec![
                vec![store(s.clone())],
                read(1, &r, payment(200, shown(2))),
            ]),
        );
        violated(
            name,
            cat(vec![
                vec![store(s.clone())],
                read(1, &r, payment(200, shown(1))),
            ]),
        );
        violated(
            name,
            cat(vec![
                vec![store(s.clone())],
                read(1, &r, payment(200, shown(3))),
            ]),
        );
    }
    holds(name, vec![store(s.clone()), webhook(shown(2))]);
    violated(name, vec![store(s.clone()), webhook(shown(1))]);
    // An older webhook shows the attempts of its own version.
    holds(
        name,
        vec![
            store(s.clone()),
            webhook(PaymentView {
                version: 2,
                ..shown(1)
            }),
        ],
    );
}

/// WEBHOOK-01, A-VERSION: every visible change raises the version; one version, one state.
#[test]
fn webhook_01_versions_rise_with_every_visible_change() {
    let name = "versions-rise-with-every-visible-change";
    let v2 = stored(Processing, 2, &[1], None);
    holds(
        name,
        vec![store(v2.clone()), store(stored(Succeeded, 3, &[1], None))],
    );
    // Status, resolution, attempts, failure changed at the same version.
    let same_version = [
        StoredPayment {
            status: Succeeded,
            resolution: Known,
            ..v2.clone()
        },
        StoredPayment {
            resolution: Known,
            ..v2.clone()
        },
        StoredPayment {
            attempts: vec![AttemptId(1), AttemptId(2)],
            ..v2.clone()
        },
        StoredPayment {
            failure_attempt: Some(AttemptId(1)),
            ..v2.clone()
        },
    ];
    for s in same_version {
        violated(name, vec![store(v2.clone()), store(s)]);
    }
    violated(
        name,
        vec![store(v2.clone()), store(stored(Succeeded, 1, &[1], None))],
    );
    violated(
        name,
        vec![store(StoredPayment {
            version: 0,
            ..v2.clone()
        })],
    );
    // Webhooks: the current version with another state, or a version never stored.
    holds(name, vec![store(v2.clone()), webhook(view_of(&v2))]);
    holds(
        name,
        vec![
            store(v2.clone()),
            webhook(PaymentView {
                version: 1,
                status: Failed,
                ..view_of(&v2)
            }),
        ],
    );
    violated(
        name,
        vec![
            store(v2.clone()),
            webhook(PaymentView {
                status: Succeeded,
                ..view_of(&v2)
            }),
        ],
    );
    violated(
        name,
        vec![
            store(v2.clone()),
            webhook(PaymentView {
                version: 3,
                ..view_of(&v2)
            }),
        ],
    );
}

/// CONC-03: operation_in_progress only while an execution under the key is in flight:
/// answered at once or to a waiter whose wait ended.
#[test]
fn conc_03_operation_in_progress_only_while_in_flight() {
    let name = "operation-in-progress-only-while-in-flight";
    let r = create();
    let busy = error(ErrorCode::OperationInProgress);
    violated(name, read(2, &r, busy.clone()));
    holds(
        name,
        cat(vec![handled(1, &r, None, true), read(2, &r, busy.clone())]),
    );
    // After the executor was answered, nothing is in flight.
    let s = stored(Succeeded, 2, &[1], None);
    violated(
        name,
        cat(vec![
            vec![store(s.clone())],
            handled(1, &r, None, true),
            vec![answered(1, &r, payment(201, view_of(&s)))],
            read(2, &r, busy.clone()),
        ]),
    );
    // A waiter whose wait ended while the executor still runs, and one after it ended.
    holds(
        name,
        cat(vec![
            handled(1, &r, None, true),
            handled(2, &r, None, false),
            vec![answered(2, &r, busy.clone())],
        ]),
    );
    violated(
        name,
        cat(vec![
            vec![store(s.clone())],
            handled(1, &r, None, true),
            handled(2, &r, None, false),
            vec![answered(1, &r, payment(201, view_of(&s)))],
            vec![answered(2, &r, busy)],
        ]),
    );
}

/// QUERY-04, QUERY-02, QUERY-05: a GET and a list by order number answer the stored
/// state, all of it and nothing else, case-sensitively.
#[test]
fn query_04_queries_answer_known_state() {
    let name = "queries-answer-known-state";
    let s = stored(Processing, 3, &[1], None);
    let get = req::get(PAY);
    holds(
        name,
        cat(vec![
            vec![store(s.clone())],
            read(1, &get, payment(200, view_of(&s))),
        ]),
    );
    for shown in [
        PaymentView {
            resolution_status: Known,
            ..view_of(&s)
        },
        PaymentView {
            status: Succeeded,
            ..view_of(&s)
        },
        PaymentView {
            version: 2,
            ..view_of(&s)
        },
        PaymentView {
            id: PaymentId(2),
            ..view_of(&s)
        },
    ] {
        violated(
            name,
            cat(vec![
                vec![store(s.clone())],
                read(1, &get, payment(200, shown)),
            ]),
        );
    }
    // A Payment the store never held.
    violated(name, read(1, &get, payment(200, view_of(&s))));
    let list = |order: &str, data: Vec<PaymentView>| {
        cat(vec![
            vec![store(s.clone())],
            read(
                1,
                &req::by_order(order),
                ApiResponse::ok(200, ResponseBody::Payments { data }),
            ),
        ])
    };
    holds(name, list("ORDER-1", vec![view_of(&s)]));
    holds(name, list("order-1", vec![]));
    violated(name, list("ORDER-1", vec![]));
    violated(name, list("order-1", vec![view_of(&s)]));
    violated(
        name,
        list(
            "ORDER-1",
            vec![PaymentView {
                version: 1,
                ..view_of(&s)
            }],
        ),
    );
}

/// ORDER-01 (S4), CONC-02/CONC-03 (S5), ATTEMPT-01 (S8): each point's two answers hold,
/// any third is violated.
#[test]
fn order_01_conc_03_attempt_01_branches_answer_one_of_the_two() {
    let name = "branches-answer-one-of-the-two";
    let paid = stored(Succeeded, 2, &[1], None);
    let reuse = req::create("K2", "ORDER-1", 10000, "USD", 'A');
    let s4 = |answer| {
        // The step that created the Payment ends with its own request handled.
        cat(vec![
            vec![store(paid.clone())],
            read(1, &req::get(PAY), payment(200, view_of(&paid))),
            handled(7, &reuse, Some(answer), true),
        ])
    };
    holds(name, s4(payment(200, view_of(&paid))));
    holds(
        name,
        s4(related(
            ErrorCode::OrderNoConflict,
            Some(ResourceId::Payment(PAY)),
        )),
    );
    violated(name, s4(payment(201, view_of(&paid))));
    violated(
        name,
        s4(payment(
            200,
            PaymentView {
                id: PaymentId(2),
                ..view_of(&paid)
            },
        )),
    );
    violated(name, s4(error(ErrorCode::PaymentInProgress)));
    // S5: a same-scope request succeeding in its own step while the execution runs.
    let r = create();
    let s5 = |answer| cat(vec![handled(1, &r, None, true), read(2, &r, answer)]);
    holds(name, s5(error(ErrorCode::OperationInProgress)));
    violated(name, s5(payment(200, view_of(&paid))));
    // S8: a confirm of a Payment in progress.
    let busy = stored(RequiresAction, 2, &[1], None);
    let confirm = req::confirm("K2", PAY, 'B');
    let s8 = |answer| cat(vec![vec![store(busy.clone())], read(3, &confirm, answer)]);
    holds(
        name,
        s8(related(
            ErrorCode::PaymentInProgress,
            Some(ResourceId::Payment(PAY)),
        )),
    );
    holds(name, s8(payment(200, view_of(&busy))));
    holds(name, s8(error(ErrorCode::TemporarilyUnavailable)));
    violated(name, s8(error(ErrorCode::PaymentNotConfirmable)));
    violated(name, s8(error(ErrorCode::AttemptsExhausted)));
    violated(name, s8(payment(202, view_of(&busy))));
}

/// CONFLICT-01: the original in flight does not hide a conflict: a same-key request with
/// another amount is idempotency_conflict, never operation_in_progress (the extension of
/// idempotency-conflict-iff-parameters-differ).
#[test]
fn conflict_01_in_flight_does_not_hide_a_conflict() {
    let name = "idempotency-conflict-iff-parameters-differ";
    let original = create();
    let other_amount = req::create("K", "ORDER-1", 12000, "USD", 'A');
    let busy = error(ErrorCode::OperationInProgress);
    let conflict = error(ErrorCode::IdempotencyConflict);
    let after_original =
        |r: &ApiRequest, answer| cat(vec![handled(1, &original, None, true), read(2, r, answer)]);
    holds(name, after_original(&original, busy.clone()));
    holds(name, after_original(&other_amount, conflict));
    violated(name, after_original(&other_amount, busy));
}
