//! The response rows of the table in `main.rs` (`properties/src/responses/mod.rs`), with the
//! builders of `safety_responses/mod.rs`.

use super::*;

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

/// CONC-03, SCOPE-01: operation_in_progress only while an execution under the same key,
/// merchant and environment is in flight. Found: only the Idempotency-Key was compared,
/// so a second merchant's (or live's) request under a key another merchant was executing
/// got operation_in_progress and passed; no other property sees it, a 409 carries no
/// object. (Another endpoint under the same key is not judged here: the crossed object
/// it is answered with is answers-name-the-requested-payment's.)
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
    for (request, owner) in [(create.clone(), OTHER_MERCHANT), (create.clone(), LIVE)] {
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
