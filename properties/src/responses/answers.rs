//! The judge of answers the responses family folds with (`crate::facts::responses`):
//! every answer, store change and webhook, judged against what the contract prescribes
//! for it and against the store as the event found it. The facts record the first
//! witness of each misanswer; the properties of [`super`] word the verdicts.

use super::foreign::{judge_foreign_list, judge_foreign_webhook};
use super::judge::{
    judge_any_answer, judge_key, judge_not_found, judge_query, judge_refund_change,
    judge_refund_webhook, judge_related, judge_store_change, judge_webhook, owned,
    payment_of_order, refund_of_number,
};
use crate::facts::responses::{Misanswer, Responses, Shown, Slot, Store, executed};
use payhub_model::event::{Handling, Owner, ScopeKey, What};
use payhub_model::{
    ApiRequest, ApiResponse, Endpoint, ErrorCode, Method, PaymentStatus, RequestId, ResponseBody,
    WebhookObject,
};

/// Every misanswer `what` shows, reported to `found`.
pub(crate) fn judge(
    flight: &Responses,
    what: &What,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    match what {
        What::Handled {
            id,
            request,
            owner,
            handling,
            ..
        } => {
            if let Some(answer) = &handling.answer {
                judge_own_step(flight, *id, request, *owner, handling, answer, store, found);
            }
        }
        What::Answered {
            id,
            response,
            route,
            ..
        } => {
            judge_any_answer(*id, response, store, found);
            let Some(route) = route else { return };
            judge_foreign_list(*id, response, route.owner, store, found);
            if let Some(scope) = &route.scope {
                judge_post_answer(flight, *id, scope, response, store, found);
            }
        }
        What::PaymentStored { payment, stored } => {
            judge_store_change(*payment, stored, store, found)
        }
        What::RefundStored { refund, stored } => judge_refund_change(*refund, stored, store, found),
        What::WebhookEmitted { event, .. } => {
            judge_foreign_webhook(event, store, found);
            match &event.object {
                WebhookObject::Refund(r) => judge_refund_webhook(r, store, found),
                WebhookObject::Payment(p) => judge_webhook(p, store, found),
            }
        }
        _ => {}
    }
}

/// An answer given in the request's own step.
#[allow(clippy::too_many_arguments)]
fn judge_own_step(
    flight: &Responses,
    id: RequestId,
    request: &ApiRequest,
    owner: Owner,
    handling: &Handling,
    answer: &ApiResponse,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    let miss = || Misanswer::of(Some(id), answer);
    // REPLAY-02: a step that created, bound and sent nothing is a replay, a reread or
    // a branch that keeps the original: 200, never 201.
    let nothing_done = !handling.store_changed && !executed(handling);
    if answer.is_success() && nothing_done && answer.status != 200 {
        found(Slot::SuccessCode, miss());
    }
    if answer.status == 201 && !creates(&request.endpoint) {
        found(Slot::SuccessCode, miss());
    }
    // REPLAY-03: a create whose step created its Payment is its first execution:
    // 201, or 202 while the upstream has not answered.
    let first = matches!(request.endpoint, Endpoint::CreatePayment { .. })
        && flight.created_now.is_some()
        && !nothing_done;
    if first && answer.is_success() && !matches!(answer.status, 201 | 202) {
        found(Slot::SuccessCode, miss());
    }
    judge_key(request, answer, &mut |m| found(Slot::Key, m), miss);
    if let Some(m) = judge_not_found(request, owner, answer, store, miss) {
        found(Slot::NotFound, m);
    }
    if let Some(m) = judge_related(request, owner, answer, store, miss) {
        found(Slot::Related, m);
    }
    if answer.error_code() == Some(ErrorCode::OperationInProgress) {
        let in_flight = ScopeKey::of(owner, request).is_some_and(|scope| in_flight(flight, &scope));
        if !in_flight {
            found(Slot::InProgress, miss());
        }
    }
    if let Some(m) = judge_query(request, owner, answer, store, miss) {
        found(Slot::Query, m);
    }
    if let Some(m) = judge_branch(flight, request, owner, handling, answer, store, miss) {
        found(Slot::Branch, m);
    }
}

/// The contract's "A or B" points, answered in the request's own step:
/// - S4 (ORDER-01): a create for an order number the store holds succeeds only as 200
///   with that Payment; it conflicts only as order_no_conflict (or, under its key,
///   idempotency_conflict or operation_in_progress);
/// - S5 (CONC-02, CONC-03): while an execution under the scope is in flight, a request
///   under it never succeeds in its own step (it waits, or gets operation_in_progress);
/// - S8 (ATTEMPT-01): a confirm of a Payment in progress that executes nothing gets
///   409 payment_in_progress or 200 with the Payment, or an answer that comes before
///   the point (400, 401, 403, 429, 503, operation_in_progress).
fn judge_branch(
    flight: &Responses,
    request: &ApiRequest,
    owner: Owner,
    handling: &Handling,
    answer: &ApiResponse,
    store: &Store<'_>,
    miss: impl Fn() -> Misanswer,
) -> Option<Misanswer> {
    let code = answer.error_code();
    let scope = ScopeKey::of(owner, request);
    if answer.is_success() && scope.is_some_and(|s| flight.executing.contains_key(&s)) {
        return Some(miss());
    }
    match &request.endpoint {
        Endpoint::CreatePayment { .. } => {
            let (existing, _) = payment_of_order(request, owner, store)?;
            // Its own first execution created it: no S4 point.
            if flight.created_now == Some(*existing) {
                return None;
            }
            let right = match &answer.body {
                ResponseBody::Payment(p) => answer.status == 200 && p.id == *existing,
                _ if answer.status == 409 => matches!(
                    code,
                    Some(
                        ErrorCode::OrderNoConflict
                            | ErrorCode::IdempotencyConflict
                            | ErrorCode::OperationInProgress
                    )
                ),
                _ => !answer.is_success(),
            };
            (!right).then(|| miss().about(*existing, None, None))
        }
        // CKO-01 / EXPIRY-01 (A-CKO-ANY-STATUS): a checkout session for the order of
        // an expired Payment gets a session of that Payment, or 422 payment_expired;
        // never a session of another Payment.
        Endpoint::CreateCheckoutSession { .. } => {
            let (existing, p) = payment_of_order(request, owner, store)?;
            if p.status != PaymentStatus::Expired {
                return None;
            }
            let right = match &answer.body {
                // 201, or 200 for a replay of its key (REPLAY-03 judges which).
                ResponseBody::Session(v) => v.payment_id == *existing,
                _ if answer.status == 422 => code == Some(ErrorCode::PaymentExpired),
                _ => !answer.is_success(),
            };
            (!right).then(|| miss().about(*existing, None, None))
        }
        // A-REFUND-NO-BRANCH, A-REFUND-NO-PARAMS: a used refund number (the step
        // created nothing) gets 409 refund_no_conflict, or 200 with the Refund that
        // holds it, never another Refund nor a new one.
        Endpoint::CreateRefund { .. } => {
            let existing = refund_of_number(request, owner, store)?;
            if handling.store_changed || executed(handling) {
                return None;
            }
            let right = match &answer.body {
                ResponseBody::Refund(r) => answer.status == 200 && r.id == existing,
                _ => !answer.is_success(),
            };
            (!right).then(miss)
        }
        Endpoint::ConfirmPayment { payment_id, .. } => {
            let p = owned(store, owner, *payment_id)?;
            if !p.status.is_in_progress() || handling.store_changed || executed(handling) {
                return None;
            }
            let right = match &answer.body {
                ResponseBody::Payment(v) => answer.status == 200 && v.id == *payment_id,
                _ => {
                    matches!(
                        code,
                        Some(ErrorCode::PaymentInProgress | ErrorCode::OperationInProgress)
                    ) || matches!(answer.status, 400 | 401 | 403 | 429 | 503)
                }
            };
            let stored = Some(Shown::of_store(p));
            (!right).then(|| miss().about(*payment_id, None, stored))
        }
        _ => None,
    }
}

/// An answer to a keyed POST (its own step's or a later one).
fn judge_post_answer(
    flight: &Responses,
    id: RequestId,
    scope: &ScopeKey,
    response: &ApiResponse,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    let miss = || Misanswer::of(Some(id), response);
    if let ResponseBody::Refund(r) = &response.body {
        let stored = store.refunds.refunds.get(&r.id);
        let current = stored.is_some_and(|s| s.status == r.status && s.version == r.version);
        if !current {
            found(
                Slot::Stale,
                miss().showing_refund(Some((r.id, r.status, r.version)), stored),
            );
        }
    }
    let cancel = scope.path.ends_with("/cancel");
    // S12: "202 {"status":"requires_action",…}": a cancel's 202 shows the Payment.
    if cancel && response.status == 202 && !matches!(response.body, ResponseBody::Payment(_)) {
        found(Slot::Cancel202, miss());
    }
    if let ResponseBody::Payment(p) = &response.body {
        let shown = Shown::of_view(p);
        let stored = store.attempts.payments.get(&p.id).map(Shown::of_store);
        if stored.is_none_or(|s| !shown.same_state(s)) {
            found(Slot::Stale, miss().about(p.id, Some(shown), stored));
        }
        // CANCEL-01: 202 to a cancel: the status is unchanged, still in progress.
        if cancel && response.status == 202 {
            let kept =
                p.status.is_in_progress() && stored.is_some_and(|s| s.status.is_in_progress());
            if !kept {
                found(Slot::Cancel202, miss().about(p.id, Some(shown), stored));
            }
        }
    }
    // CONC-02: a waiter gets the executor's object, 200; CONC-03: or
    // operation_in_progress while the execution is still in flight.
    if flight.waiting.contains(&id) {
        if response.is_success() && response.status != 200 {
            found(Slot::SuccessCode, miss());
        }
        if response.error_code() == Some(ErrorCode::OperationInProgress)
            && !in_flight(flight, scope)
        {
            found(Slot::InProgress, miss());
        }
    }
    // REPLAY-03: a create's own execution is answered 201, or 202 while the upstream
    // has not answered.
    let executor = flight.executing.get(scope) == Some(&id);
    // A-STATUS-CODES: a checkout session's and a refund's first execution too.
    let create = scope.method == Method::Post
        && ["/v1/payments", "/v1/checkout/sessions", "/v1/refunds"].contains(&scope.path.as_str());
    if executor && create && response.is_success() && !matches!(response.status, 201 | 202) {
        found(Slot::SuccessCode, miss());
    }
}

/// Endpoints whose first execution creates an object (REPLAY-03: 201).
fn creates(endpoint: &Endpoint) -> bool {
    matches!(
        endpoint,
        Endpoint::CreatePayment { .. }
            | Endpoint::CreateCheckoutSession { .. }
            | Endpoint::CreateRefund { .. }
    )
}

/// CONC-03, SCOPE-01: an execution under `scope`'s Idempotency-Key is in flight for
/// the same merchant and environment. A second merchant's (or the live environment's)
/// execution under the same key is another scope: an operation_in_progress for it is
/// the interference SCOPE-01 rules out, and no other property sees it (a 409 carries
/// no object). The method and path are not compared: a crossed endpoint or Payment
/// is left to answers-name-the-requested-payment, which sees the crossed object when
/// the request is answered with it (the zoo's scope_without_payment_in_path).
fn in_flight(flight: &Responses, scope: &ScopeKey) -> bool {
    flight.executing.keys().any(|s| {
        s.key == scope.key && s.merchant == scope.merchant && s.environment == scope.environment
    })
}
