//! Helpers shared by the request-level tests: reading responses, counting what reached
//! the upstream, and taking a snapshot of everything a request could have changed.
#![allow(dead_code)] // each test binary uses its own subset

use payhub_model::api::req;
use payhub_model::harness::Bench;
use payhub_model::*;

/// The `error` object of a response; panics on a 2xx.
pub fn error_of(r: &ApiResponse) -> &ApiError {
    match &r.body {
        ResponseBody::Error { error } => error,
        _ => panic!("expected an error, got {r}"),
    }
}

/// Asserts status and `error.code`; returns the error for further checks.
pub fn assert_error(r: &ApiResponse, status: u16, code: ErrorCode) -> ApiError {
    assert_eq!(r.status, status, "{r}");
    let error = error_of(r).clone();
    assert_eq!(error.code, code, "{r}");
    assert_eq!(error.retryable, code.retryable(), "{r}");
    error
}

/// Asserts a 400 `invalid_request` naming `field`.
pub fn assert_400(r: &ApiResponse, field: Field) {
    let error = assert_error(r, 400, ErrorCode::InvalidRequest);
    assert_eq!(error.field, Some(field), "{r}");
}

/// The Payment a response carries; panics if there is none.
pub fn payment_of(r: &ApiResponse) -> PaymentView {
    r.payment()
        .unwrap_or_else(|| panic!("no payment in {r}"))
        .clone()
}

/// The Refund a response carries; panics if there is none.
pub fn refund_of(r: &ApiResponse) -> RefundView {
    r.refund()
        .unwrap_or_else(|| panic!("no refund in {r}"))
        .clone()
}

/// The checkout session a response carries; panics if there is none.
pub fn session_of(r: &ApiResponse) -> SessionView {
    match &r.body {
        ResponseBody::Session(s) => s.clone(),
        _ => panic!("no session in {r}"),
    }
}

/// Every charge call the platform ever sent upstream: (attempt, card).
pub fn charges_sent(b: &Bench) -> Vec<(AttemptId, Card)> {
    b.upstream_sent
        .iter()
        .filter_map(|c| match c {
            UpstreamCall::Charge { attempt, card, .. } => Some((*attempt, *card)),
            _ => None,
        })
        .collect()
}

/// Every refund call the platform ever sent upstream.
pub fn refund_calls_sent(b: &Bench) -> Vec<RefundId> {
    b.upstream_sent
        .iter()
        .filter_map(|c| match c {
            UpstreamCall::Refund { refund, .. } => Some(*refund),
            _ => None,
        })
        .collect()
}

/// Status queries for a charge sent upstream.
pub fn charge_queries_sent(b: &Bench) -> usize {
    b.upstream_sent
        .iter()
        .filter(|c| matches!(c, UpstreamCall::QueryCharge { .. }))
        .count()
}

/// Everything a request can change, as text: records, business objects, what went
/// upstream, money, events. Equal before and after means "nothing executed, no record".
#[derive(Debug, PartialEq, Eq)]
pub struct Effects {
    records: String,
    payments: String,
    attempts: String,
    refunds: String,
    sessions: String,
    upstream_calls: usize,
    ledger_entries: usize,
    webhooks: usize,
}

/// A model value as JSON.
pub fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("model state serializes")
}

pub fn effects(b: &Bench) -> Effects {
    Effects {
        records: format!("{:?}", b.platform.records()),
        payments: format!("{:?}", b.platform.payments()),
        attempts: format!("{:?}", b.platform.attempts()),
        refunds: format!("{:?}", b.platform.refunds()),
        sessions: format!("{:?}", b.platform.sessions()),
        upstream_calls: b.upstream_sent.len(),
        ledger_entries: b.acquirer.ledger.entries.len(),
        webhooks: b.webhooks.len(),
    }
}

/// `POST /v1/payments` with key `k`, order `order`, USD 10000, card A, approved upstream:
/// a succeeded Payment.
pub fn paid(b: &mut Bench, k: &str, order: &str) -> PaymentId {
    let id = b.send(req::create(k, order, 10000, "USD", 'A'));
    b.upstream(AcquirerDecision::Approve);
    let r = b.answered(id);
    assert_eq!(r.status, 201, "{r}");
    let p = payment_of(r);
    assert_eq!(p.status, PaymentStatus::Succeeded);
    p.id
}

/// A Payment whose first attempt (card A) was declined: `failed`.
pub fn declined(b: &mut Bench, k: &str, order: &str) -> PaymentId {
    let id = b.send(req::create(k, order, 10000, "USD", 'A'));
    b.upstream(AcquirerDecision::Decline);
    let r = b.answered(id);
    assert_eq!(r.status, 201, "{r}");
    let p = payment_of(r);
    assert_eq!(p.status, PaymentStatus::Failed);
    p.id
}

/// A Payment waiting for the payer to authenticate (card A): `requires_action`.
pub fn requiring_action(b: &mut Bench, k: &str, order: &str) -> (PaymentId, AttemptId) {
    let id = b.send(req::create(k, order, 10000, "USD", 'A'));
    b.upstream(AcquirerDecision::RequireAction);
    let r = b.answered(id);
    assert_eq!(r.status, 201, "{r}");
    let p = payment_of(r);
    assert_eq!(p.status, PaymentStatus::RequiresAction);
    assert_eq!(p.resolution_status, ResolutionStatus::Known);
    let attempt = b.platform.payments()[&p.id]
        .latest_attempt()
        .expect("an attempt");
    (p.id, attempt)
}

/// Sends `request` and returns its (immediate) answer.
pub fn call(b: &mut Bench, request: ApiRequest) -> ApiResponse {
    let id = b.send(request);
    b.answered(id).clone()
}

/// Drains the upstream queue, deciding every call with `decision`.
pub fn decide_all(b: &mut Bench, decision: AcquirerDecision) {
    while !b.upstream_queue.is_empty() {
        b.upstream(decision);
    }
}

/// Loses every queued upstream call.
pub fn drop_all(b: &mut Bench) {
    while !b.upstream_queue.is_empty() {
        b.drop_upstream();
    }
}
