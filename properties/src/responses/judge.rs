//! The judgements of answers that need no execution in flight ([`super::answers`] holds
//! those that do): keys, not found, related resources, queries, every answer, store
//! changes and webhooks, each against the store as the event found it.

use crate::facts::money::named_payment;
use crate::facts::responses::{Misanswer, Shown, Slot, Store};
use payhub_model::event::{Owner, StoredPayment, StoredRefund};
use payhub_model::{
    ApiRequest, ApiResponse, Contract, Endpoint, ErrorCode, Field, Json, Method, PaymentId,
    PaymentView, RefundId, RefundStatus, RefundView, RequestId, ResourceId, ResponseBody, Text,
};

/// KEY-07: 1 to 255 characters (A-KEY-LENGTH: Unicode scalar values).
fn valid_key(key: Option<&Text>) -> bool {
    key.is_some_and(|k| {
        let n = k.chars().count();
        (Contract::KEY_LEN_MIN..=Contract::KEY_LEN_MAX).contains(&n)
    })
}

/// The 400 of a missing or invalid key.
fn key_rejection(answer: &ApiResponse) -> bool {
    match &answer.body {
        ResponseBody::Error { error } => {
            answer.status == 400
                && error.code == ErrorCode::InvalidRequest
                && error.field == Some(Field::IdempotencyKey)
        }
        _ => false,
    }
}

/// Answered before the request is read any further: authentication (401, 403) and the
/// merchant's rate limit (429), A-RATE-SCOPE.
fn answered_at_the_door(answer: &ApiResponse) -> bool {
    matches!(answer.status, 401 | 403 | 429)
}

/// KEY-01..KEY-07: every keyed endpoint answers an invalid key 400 with
/// `error.field = Idempotency-Key`, and never so a valid key; a query needs none (KEY-06).
pub(super) fn judge_key(
    request: &ApiRequest,
    answer: &ApiResponse,
    found: &mut dyn FnMut(Misanswer),
    miss: impl Fn() -> Misanswer,
) {
    let rejected = key_rejection(answer);
    if request.endpoint.requires_key() {
        let valid = valid_key(request.idempotency_key.as_ref());
        if (!valid && !rejected && !answered_at_the_door(answer)) || (valid && rejected) {
            found(miss());
        }
    } else if rejected {
        found(miss());
    }
}

/// The Payment the store holds under `id` for `owner`, if any.
pub(super) fn owned<'a>(
    store: &Store<'a>,
    owner: Owner,
    id: PaymentId,
) -> Option<&'a StoredPayment> {
    let (merchant, environment) = owner?;
    store
        .attempts
        .payments
        .get(&id)
        .filter(|p| p.merchant == merchant && p.environment == environment)
}

/// QUERY-01, QUERY-03, QUERY-05, A-NOT-FOUND-POST: what the merchant does not have is
/// 404 resource_missing, what it has never is: a GET of a Payment or a refund by id; a
/// confirm or cancel of a Payment (after the door and the key's 400); a refund naming a
/// Payment (after its own fields' 400). A route that does not exist is 404, or 405 for a
/// known path with another method (A-ERROR-CODES).
pub(super) fn judge_not_found(
    request: &ApiRequest,
    owner: Owner,
    answer: &ApiResponse,
    store: &Store<'_>,
    miss: impl Fn() -> Misanswer,
) -> Option<Misanswer> {
    let not_found = answer.error_code() == Some(ErrorCode::ResourceMissing);
    // A GET is never 403: a read-only API key may read (A-ERROR-CODES).
    let door = match request.endpoint.method() {
        Method::Get => matches!(answer.status, 401 | 429),
        _ => answered_at_the_door(answer),
    };
    // Whether the merchant has the object, and what else may come before the 404.
    let (known, before) = match &request.endpoint {
        Endpoint::GetPayment { payment_id } => (owned(store, owner, *payment_id).is_some(), false),
        Endpoint::GetRefund { refund_id } => (owned_refund(store, owner, *refund_id), false),
        Endpoint::ConfirmPayment { payment_id, .. } | Endpoint::CancelPayment { payment_id } => (
            owned(store, owner, *payment_id).is_some(),
            key_rejection(answer),
        ),
        Endpoint::CreateRefund {
            body: Json::Parsed(b),
        } => match b.payment_id {
            Some(payment_id) => (
                owned(store, owner, payment_id).is_some(),
                answer.status == 400,
            ),
            None => return None,
        },
        Endpoint::Other { .. } => {
            let missing = matches!(
                answer.error_code(),
                Some(ErrorCode::ResourceMissing | ErrorCode::MethodNotAllowed)
            );
            return (!missing && !answered_at_the_door(answer)).then(miss);
        }
        _ => return None,
    };
    let wrong = if known {
        not_found
    } else {
        !not_found && !door && !before
    };
    wrong.then(|| match named_payment(&request.endpoint) {
        Some(id) => miss().about(id, None, owned(store, owner, id).map(Shown::of_store)),
        None => miss(),
    })
}

/// The merchant has the refund `id` (its merchant and environment).
fn owned_refund(store: &Store<'_>, owner: Owner, id: RefundId) -> bool {
    owner.is_some_and(|(merchant, environment)| {
        store
            .refunds
            .refunds
            .get(&id)
            .is_some_and(|r| r.merchant == merchant && r.environment == environment)
    })
}

/// ORDER-01, ATTEMPT-01, UNIQ-04: the conflicts that point at an existing object name it
/// in related_resource_id.
pub(super) fn judge_related(
    request: &ApiRequest,
    owner: Owner,
    answer: &ApiResponse,
    store: &Store<'_>,
    miss: impl Fn() -> Misanswer,
) -> Option<Misanswer> {
    let ResponseBody::Error { error } = &answer.body else {
        return None;
    };
    let related = error.related_resource_id;
    let right = match error.code {
        ErrorCode::OrderNoConflict => {
            // ORDER-01, judged for a request naming an order number from a known owner:
            // the conflict is with the Payment holding the number; with none in the store
            // there is nothing to conflict with.
            order_no(&request.endpoint).zip(owner)?;
            payment_of_order(request, owner, store)
                .is_some_and(|(id, _)| related == Some(ResourceId::Payment(*id)))
        }
        ErrorCode::PaymentInProgress => match &request.endpoint {
            Endpoint::ConfirmPayment { payment_id, .. } => {
                related == Some(ResourceId::Payment(*payment_id))
            }
            _ => related.is_some(),
        },
        // The refund holding the number when the store shows it, else some refund.
        ErrorCode::RefundNoConflict => match refund_of_number(request, owner, store) {
            Some(id) => related == Some(ResourceId::Refund(id)),
            None => matches!(related, Some(ResourceId::Refund(_))),
        },
        _ => return None,
    };
    (!right).then(miss)
}

/// The Payment the store holds under the order number a create or checkout session
/// carries, in the request's own scope.
pub(super) fn payment_of_order<'s>(
    request: &ApiRequest,
    owner: Owner,
    store: &'s Store<'_>,
) -> Option<(&'s PaymentId, &'s StoredPayment)> {
    let order = order_no(&request.endpoint)?;
    let (merchant, environment) = owner?;
    store
        .attempts
        .payment_by_order(merchant, environment, order)
}

/// The refund the store holds under the refund number a refund request carries.
pub(super) fn refund_of_number(
    request: &ApiRequest,
    owner: Owner,
    store: &Store<'_>,
) -> Option<RefundId> {
    let Endpoint::CreateRefund {
        body: Json::Parsed(b),
    } = &request.endpoint
    else {
        return None;
    };
    let (number, (merchant, environment)) = (b.merchant_refund_no.as_ref()?, owner?);
    let mut held = store.refunds.refunds.iter().filter(|(_, r)| {
        r.merchant == merchant && r.environment == environment && r.merchant_refund_no == *number
    });
    held.next().map(|(id, _)| *id)
}

/// The order number a create or checkout session carries.
pub(super) fn order_no(endpoint: &Endpoint) -> Option<&Text> {
    match endpoint {
        Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } => b.merchant_order_no.as_ref(),
        Endpoint::CreateCheckoutSession {
            body: Json::Parsed(b),
        } => b.merchant_order_no.as_ref(),
        _ => None,
    }
}

/// QUERY-04, QUERY-05: a query answers the state the store holds, all of it and no
/// other: a GET the Payment as stored; a list by order number the order's Payment, or
/// nothing if the store holds none (exact and case-sensitive).
pub(super) fn judge_query(
    request: &ApiRequest,
    owner: Owner,
    answer: &ApiResponse,
    store: &Store<'_>,
    miss: impl Fn() -> Misanswer,
) -> Option<Misanswer> {
    if !answer.is_success() {
        return None;
    }
    let agrees = |p: &PaymentView| {
        owned(store, owner, p.id).is_some_and(|s| Shown::of_store(s).same_state(Shown::of_view(p)))
    };
    let misshown = |p: &PaymentView| {
        let stored = owned(store, owner, p.id).map(Shown::of_store);
        miss().about(p.id, Some(Shown::of_view(p)), stored)
    };
    match (&request.endpoint, &answer.body) {
        (Endpoint::GetPayment { payment_id }, ResponseBody::Payment(p)) => {
            if p.id != *payment_id {
                return Some(misshown(p));
            }
            (!agrees(p)).then(|| misshown(p))
        }
        (Endpoint::ListPayments { merchant_order_no }, ResponseBody::Payments { data }) => {
            let (merchant, environment) = owner?;
            let existing =
                store
                    .attempts
                    .payment_by_order(merchant, environment, merchant_order_no);
            match (existing, data.as_slice()) {
                (None, []) => None,
                (Some((id, _)), [p]) if p.id == *id => (!agrees(p)).then(|| misshown(p)),
                (_, [p, ..]) => Some(misshown(p)),
                (Some((id, s)), []) => Some(miss().about(*id, None, Some(Shown::of_store(s)))),
            }
        }
        _ => judge_refund_query(request, owner, answer, store, miss),
    }
}

/// QUERY-03, QUERY-04: a refund query answers the refunds the store holds as it holds
/// them (status, version): a GET the refund it names; a list by merchant_refund_no that
/// refund, or nothing if the store holds none; `?status=processing` every processing
/// refund of the merchant and no other (A-REFUND-RECONCILE).
fn judge_refund_query(
    request: &ApiRequest,
    owner: Owner,
    answer: &ApiResponse,
    store: &Store<'_>,
    miss: impl Fn() -> Misanswer,
) -> Option<Misanswer> {
    let (merchant, environment) = owner?;
    let mine = |s: &StoredRefund| s.merchant == merchant && s.environment == environment;
    let misshown = |r: Option<&RefundView>, id: RefundId| {
        let shown = r.map(|r| (r.id, r.status, r.version));
        miss().showing_refund(shown, store.refunds.refunds.get(&id))
    };
    let agrees = |r: &RefundView| {
        store
            .refunds
            .refunds
            .get(&r.id)
            .is_some_and(|s| mine(s) && s.status == r.status && s.version == r.version)
    };
    let check_all = |data: &[RefundView], expected: &[RefundId]| {
        if let Some(r) = data.iter().find(|r| !agrees(r)) {
            return Some(misshown(Some(r), r.id));
        }
        let shown: Vec<RefundId> = data.iter().map(|r| r.id).collect();
        expected
            .iter()
            .find(|id| !shown.contains(id))
            .map(|id| misshown(None, *id))
            .or_else(|| {
                data.iter()
                    .find(|r| !expected.contains(&r.id))
                    .map(|r| misshown(Some(r), r.id))
            })
    };
    let data = match &answer.body {
        ResponseBody::Refunds { data } => data,
        ResponseBody::Refund(r) => match request.endpoint {
            Endpoint::GetRefund { refund_id } => {
                return (r.id != refund_id || !agrees(r)).then(|| misshown(Some(r), r.id));
            }
            _ => return None,
        },
        _ => return None,
    };
    let expected = |listed: &dyn Fn(&StoredRefund) -> bool| -> Vec<RefundId> {
        let held = store.refunds.refunds.iter();
        held.filter(|(_, s)| mine(s) && listed(s))
            .map(|(id, _)| *id)
            .collect()
    };
    match &request.endpoint {
        Endpoint::ListRefundsByNo { merchant_refund_no } => check_all(
            data,
            &expected(&|s| s.merchant_refund_no == *merchant_refund_no),
        ),
        Endpoint::ListRefundsProcessing => {
            check_all(data, &expected(&|s| s.status == RefundStatus::Processing))
        }
        _ => None,
    }
}

/// Every answer, whoever waits for it: 503 only as
/// temporarily_unavailable and no other 5xx (RATE-05), attempt_count as stored.
pub(super) fn judge_any_answer(
    id: RequestId,
    response: &ApiResponse,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    let miss = || Misanswer::of(Some(id), response);
    let paused = response.error_code() == Some(ErrorCode::TemporarilyUnavailable);
    // RATE-04: "响应不说明内部原因" (the response does not state the internal reason): a
    // 503 says temporarily_unavailable and retryable, nothing of what is paused.
    if let ResponseBody::Error { error } = &response.body
        && paused
        && (error.field.is_some() || error.related_resource_id.is_some())
    {
        found(Slot::PauseReason, miss());
    }
    let only_503 = if paused {
        response.status == 503
    } else {
        response.status < 500
    };
    if !only_503 {
        found(Slot::FiveXx, miss());
    }
    let views: &[PaymentView] = match &response.body {
        ResponseBody::Payment(p) => std::slice::from_ref(p),
        ResponseBody::Payments { data } => data,
        _ => &[],
    };
    for p in views {
        let stored = store.attempts.payments.get(&p.id).map(Shown::of_store);
        let misshown = || miss().about(p.id, Some(Shown::of_view(p)), stored);
        if !on_the_status_table(p) {
            found(Slot::Table, misshown());
        }
        if stored.is_some_and(|s| s.attempts != p.attempt_count) {
            found(Slot::Attempts, misshown());
        }
    }
}

/// RES-02..RES-06, the contract's status table: a Payment shows one of its rows
/// (processing with needs_query, known or manual_review; requires_action with known or
/// manual_review; succeeded, failed, canceled, expired with known; and, before any
/// attempt, requires_payment_method with known, A-STATUS-RPM), and next_action exactly
/// when it is requires_action (RES-05: "guide the payer to complete authentication
/// (`next_action`)").
pub(super) fn on_the_status_table(p: &PaymentView) -> bool {
    use payhub_model::PaymentStatus::*;
    use payhub_model::ResolutionStatus::*;
    let row = match p.status {
        Processing => true,
        RequiresAction => matches!(p.resolution_status, Known | ManualReview),
        RequiresPaymentMethod | Succeeded | Failed | Canceled | Expired => {
            p.resolution_status == Known
        }
    };
    row && p.next_action == (p.status == RequiresAction)
}

/// WEBHOOK-01, A-VERSION: a change the store makes to a Payment raises its version; the
/// version never goes back.
pub(super) fn judge_store_change(
    payment: PaymentId,
    stored: &StoredPayment,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    let now = Shown::of_store(stored);
    let before = store.attempts.payments.get(&payment).map(Shown::of_store);
    let unversioned = match before {
        Some(b) => {
            now.version < b.version || (now.version == b.version && now.visible() != b.visible())
        }
        None => now.version == 0,
    };
    if unversioned {
        found(
            Slot::Version,
            Misanswer::default().about(payment, Some(now), before),
        );
    }
}

/// A webhook of the store's current version shows the stored state and attempt_count;
/// none shows a version the store has not reached.
pub(super) fn judge_webhook(
    p: &PaymentView,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    let (shown, stored) = (
        Shown::of_view(p),
        store.attempts.payments.get(&p.id).map(Shown::of_store),
    );
    let m = Misanswer::default().about(p.id, Some(shown), stored);
    if !on_the_status_table(p) {
        found(Slot::Table, m.clone());
    }
    let Some(stored) = stored else {
        return;
    };
    if shown.version > stored.version
        || (shown.version == stored.version && !shown.same_state(stored))
    {
        found(Slot::Version, m.clone());
    }
    if shown.version == stored.version && shown.attempts != stored.attempts {
        found(Slot::Attempts, m);
    }
}

/// WEBHOOK-01, A-VERSION: a change the store makes to a refund raises its version (its
/// status is what a merchant sees of it); the version never goes back.
pub(super) fn judge_refund_change(
    refund: RefundId,
    stored: &StoredRefund,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    let before = store.refunds.refunds.get(&refund);
    let unversioned = match before {
        Some(b) => {
            stored.version < b.version || (stored.version == b.version && stored.status != b.status)
        }
        None => stored.version == 0,
    };
    if unversioned {
        let shown = Some((refund, stored.status, stored.version));
        found(
            Slot::Version,
            Misanswer::default().showing_refund(shown, before),
        );
    }
}

/// A refund webhook of the store's current version shows the stored status; none shows a
/// version the store has not reached.
pub(super) fn judge_refund_webhook(
    r: &RefundView,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    let Some(stored) = store.refunds.refunds.get(&r.id) else {
        return;
    };
    if r.version > stored.version || (r.version == stored.version && r.status != stored.status) {
        let shown = Some((r.id, r.status, r.version));
        found(
            Slot::Version,
            Misanswer::default().showing_refund(shown, Some(stored)),
        );
    }
}
