//! Answers in detail: every answer the platform gives, judged against what the contract
//! prescribes for it and against the platform's store at answer time (REPLAY-02,
//! REPLAY-03, CONC-02, CONC-03, KEY-01..07, QUERY-01, QUERY-04, RATE-01, RATE-05,
//! ORDER-01, ATTEMPT-01, CANCEL-01, WEBHOOK-01).
//!
//! The store is the attempts family's mirror of the platform's Payments, read as it is
//! when the answer is seen (store observations of a step come before its answers). This
//! family keeps only what is a function of the platform's current state (the executions
//! and waits in flight) and the first witness of each misanswer, so it adds no states to
//! a run of a platform that answers as the contract says.

mod foreign;
mod judge;

use super::attempts::Attempts;
use super::refunds::Refunds;
use foreign::{judge_foreign_list, judge_foreign_webhook};
use judge::{
    judge_any_answer, judge_key, judge_not_found, judge_query, judge_refund_change,
    judge_refund_webhook, judge_related, judge_store_change, judge_webhook, owned,
    payment_of_order, refund_of_number,
};
use payhub_model::event::{Handling, Owner, ScopeKey, StoredPayment, What};
use payhub_model::{
    ApiRequest, ApiResponse, AttemptId, CowMap, CowSet, Endpoint, ErrorCode, Method, PaymentId,
    PaymentStatus, PaymentView, RefundId, RefundStatus, RequestId, ResolutionStatus, ResponseBody,
    WebhookObject,
};
use serde::Serialize;

/// The responses family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Responses {
    /// Executions in flight: the scope and the request that executes under it, from its
    /// own step (an upstream call or a new record, no answer yet) until it is answered.
    pub executing: CowMap<ScopeKey, RequestId>,
    /// Requests waiting on a same-key execution (no answer, nothing executed in their step).
    pub waiting: CowSet<RequestId>,
    /// The Payment the request step being observed created (its store observation comes
    /// before its `Handled`, which clears it): `None` between steps.
    pub created_now: Option<PaymentId>,
    /// REPLAY-02, CONC-02: the first answer to a POST that showed a Payment otherwise than
    /// the store held it (status, resolution_status, version, failure.attempt_id).
    pub stale_answer: Option<Box<Misanswer>>,
    /// REPLAY-02, REPLAY-03: the first 2xx with the wrong status code (201 for a step
    /// that created nothing, a waiter answered other than 200, a create's own execution
    /// answered other than 201 or 202, a 201 to an endpoint that creates nothing).
    pub wrong_success_code: Option<Box<Misanswer>>,
    /// RATE-01: the first 429 without a Retry-After.
    pub retry_after_missing: Option<Box<Misanswer>>,
    /// RATE-04, RATE-05: the first 5xx other than 503 temporarily_unavailable, or 503
    /// with another code.
    pub wrong_5xx: Option<Box<Misanswer>>,
    /// KEY-01..KEY-07: the first keyed POST whose key the answer misjudged: an invalid key
    /// (missing, empty, over 255 characters) not answered 400 `error.field =
    /// Idempotency-Key`, or a valid key or a query answered so.
    pub key_misjudged: Option<Box<Misanswer>>,
    /// QUERY-01, QUERY-05: the first GET of a Payment the merchant does not have, or a
    /// route that does not exist, not answered 404 (405 for a known path).
    pub not_found_misjudged: Option<Box<Misanswer>>,
    /// ORDER-01, ATTEMPT-01, UNIQ-04: the first 409 order_no_conflict, payment_in_progress
    /// or refund_no_conflict whose related_resource_id is missing or names another object.
    pub related_misnamed: Option<Box<Misanswer>>,
    /// CANCEL-01: the first cancel answered 202 whose Payment is not still in progress, in
    /// the answer or in the store.
    pub cancel_202_changed: Option<Box<Misanswer>>,
    /// The first answer or webhook whose attempt_count is not the number of attempts the
    /// store holds for its Payment (a webhook: of the store's current version).
    pub miscounted_attempts: Option<Box<Misanswer>>,
    /// WEBHOOK-01, A-VERSION: the first change of a Payment the store holds with no higher
    /// version (or a lower one), or a webhook showing the current version with another
    /// state or a version the store never held.
    pub unversioned_change: Option<Box<Misanswer>>,
    /// CONC-03: the first 409 operation_in_progress while nothing executes under its
    /// Idempotency-Key.
    pub in_progress_without_execution: Option<Box<Misanswer>>,
    /// QUERY-03, QUERY-04, QUERY-05: the first query (of a Payment or a refund) answered
    /// with a state the store does not hold.
    pub query_unknown_state: Option<Box<Misanswer>>,
    /// ORDER-01, CONC-02, CONC-03, ATTEMPT-01: the first answer at one of the contract's
    /// "A or B" points (S4, S5, S8) that is neither A nor B.
    pub branch_misanswered: Option<Box<Misanswer>>,
    /// RES-02..RES-06: the first answer or webhook showing a Payment whose status and
    /// resolution_status are no row of the contract's status table, or with next_action
    /// other than exactly when requires_action (RES-05).
    pub off_the_status_table: Option<Box<Misanswer>>,
    /// SCOPE-01, SCOPE-02: the first list answer or webhook showing a Payment or refund
    /// the store holds for another merchant or environment than the one it is shown to.
    pub foreign_shown: Option<Box<Misanswer>>,
}

/// The platform's store as the facts mirror it when an event is judged: the attempts
/// family's Payments and the refunds family's refunds.
#[derive(Clone, Copy)]
pub(super) struct Store<'a> {
    pub attempts: &'a Attempts,
    pub refunds: &'a Refunds,
}

/// What a Payment looked like, as far as the response properties compare it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Shown {
    pub status: PaymentStatus,
    pub resolution: ResolutionStatus,
    pub version: u32,
    pub attempts: u8,
    pub failure_attempt: Option<AttemptId>,
}

impl Shown {
    fn of_view(p: &PaymentView) -> Shown {
        Shown {
            status: p.status,
            resolution: p.resolution_status,
            version: p.version,
            attempts: p.attempt_count,
            failure_attempt: p.failure.map(|f| f.attempt_id),
        }
    }

    fn of_store(p: &StoredPayment) -> Shown {
        Shown {
            status: p.status,
            resolution: p.resolution,
            version: p.version,
            attempts: p.attempts.len() as u8,
            failure_attempt: p.failure_attempt,
        }
    }

    /// The state a merchant sees, without the version.
    fn visible(self) -> (PaymentStatus, ResolutionStatus, u8, Option<AttemptId>) {
        (
            self.status,
            self.resolution,
            self.attempts,
            self.failure_attempt,
        )
    }

    /// Equal but for attempt_count (judged on its own).
    fn same_state(self, other: Shown) -> bool {
        Shown {
            attempts: 0,
            ..self
        } == Shown {
            attempts: 0,
            ..other
        }
    }
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} version {} attempt_count {}",
            self.status.as_str(),
            self.resolution.as_str(),
            self.version,
            self.attempts
        )?;
        if let Some(a) = self.failure_attempt {
            write!(f, " failure.attempt_id {a}")?;
        }
        Ok(())
    }
}

/// One misanswer: the request answered (if any), the answer's status and code, the
/// Payment concerned, how it was shown and how the store held it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Misanswer {
    pub request: Option<RequestId>,
    pub status: u16,
    pub code: Option<ErrorCode>,
    pub payment: Option<PaymentId>,
    pub shown: Option<Shown>,
    pub stored: Option<Shown>,
    /// A refund shown (status, version), and as the store held it.
    pub refund: Option<(RefundId, RefundStatus, u32)>,
    pub stored_refund: Option<(RefundStatus, u32)>,
}

impl Misanswer {
    fn of(request: Option<RequestId>, response: &ApiResponse) -> Misanswer {
        Misanswer {
            request,
            status: response.status,
            code: response.error_code(),
            payment: None,
            shown: None,
            stored: None,
            refund: None,
            stored_refund: None,
        }
    }

    fn about(self, payment: PaymentId, shown: Option<Shown>, stored: Option<Shown>) -> Misanswer {
        Misanswer {
            payment: Some(payment),
            shown,
            stored,
            ..self
        }
    }
}

/// Which witness a finding fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Stale,
    SuccessCode,
    RetryAfter,
    FiveXx,
    Key,
    NotFound,
    Related,
    Cancel202,
    Attempts,
    Version,
    InProgress,
    Query,
    Branch,
    Table,
    Foreign,
}

/// The witness of `slot` in a family, borrowed as `place` says (`&self`, `&mut self`).
macro_rules! witness {
    ($slot:expr, $($place:tt)+) => {
        match $slot {
            Slot::Stale => $($place)+.stale_answer,
            Slot::SuccessCode => $($place)+.wrong_success_code,
            Slot::RetryAfter => $($place)+.retry_after_missing,
            Slot::FiveXx => $($place)+.wrong_5xx,
            Slot::Key => $($place)+.key_misjudged,
            Slot::NotFound => $($place)+.not_found_misjudged,
            Slot::Related => $($place)+.related_misnamed,
            Slot::Cancel202 => $($place)+.cancel_202_changed,
            Slot::Attempts => $($place)+.miscounted_attempts,
            Slot::Version => $($place)+.unversioned_change,
            Slot::InProgress => $($place)+.in_progress_without_execution,
            Slot::Query => $($place)+.query_unknown_state,
            Slot::Branch => $($place)+.branch_misanswered,
            Slot::Table => $($place)+.off_the_status_table,
            Slot::Foreign => $($place)+.foreign_shown,
        }
    };
}

impl Responses {
    fn is_open(&self, slot: Slot) -> bool {
        witness!(slot, &self).is_none()
    }

    /// Whether `what` changes this family (asked before the shared facts are copied):
    /// it moves an execution or a wait, or it fills an open witness.
    pub(super) fn changes(&self, what: &What, store: &Store<'_>) -> bool {
        if self.moves_flight(what, store) {
            return true;
        }
        let mut found = false;
        self.judge(what, store, &mut |slot, _| found |= self.is_open(slot));
        found
    }

    pub(super) fn observe(&mut self, what: &What, store: &Store<'_>) {
        let mut findings = Vec::new();
        self.judge(what, store, &mut |slot, m| findings.push((slot, m)));
        for (slot, m) in findings {
            let witness = witness!(slot, &mut self);
            if witness.is_none() {
                *witness = Some(Box::new(m));
            }
        }
        self.move_flight(what, store);
    }

    /// Whether `what` starts or ends an execution or a wait, or creates a Payment.
    fn moves_flight(&self, what: &What, store: &Store<'_>) -> bool {
        match what {
            What::Handled {
                request,
                owner,
                handling,
                ..
            } => {
                self.created_now.is_some()
                    || (handling.answer.is_none() && ScopeKey::of(*owner, request).is_some())
            }
            What::Answered { id, .. } => {
                self.waiting.contains(id) || self.executing.values().any(|e| e == id)
            }
            What::PaymentStored { payment, .. } => !store.attempts.payments.contains_key(payment),
            _ => false,
        }
    }

    fn move_flight(&mut self, what: &What, store: &Store<'_>) {
        match what {
            What::Handled { .. } if self.created_now.is_some() => {
                self.created_now = None;
                self.move_flight_handled(what);
            }
            What::PaymentStored { payment, .. } => {
                if !store.attempts.payments.contains_key(payment) {
                    self.created_now = Some(*payment);
                }
            }
            _ => self.move_flight_handled(what),
        }
    }

    fn move_flight_handled(&mut self, what: &What) {
        match what {
            What::Handled {
                id,
                request,
                owner,
                handling,
                ..
            } if handling.answer.is_none() => {
                let Some(scope) = ScopeKey::of(*owner, request) else {
                    return;
                };
                if executed(handling) {
                    self.executing.insert(scope, *id);
                } else {
                    self.waiting.insert(*id);
                }
            }
            What::Answered { id, .. } => {
                if self.waiting.contains(id) {
                    self.waiting.remove(id);
                }
                if self.executing.values().any(|e| e == id) {
                    self.executing.retain(|_, e| e != id);
                }
            }
            _ => {}
        }
    }

    /// Every misanswer `what` shows, reported to `found`.
    fn judge(&self, what: &What, store: &Store<'_>, found: &mut dyn FnMut(Slot, Misanswer)) {
        match what {
            What::Handled {
                id,
                request,
                owner,
                handling,
                ..
            } => {
                if let Some(answer) = &handling.answer {
                    self.judge_own_step(*id, request, *owner, handling, answer, store, found);
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
                    self.judge_post_answer(*id, scope, response, store, found);
                }
            }
            What::PaymentStored { payment, stored } => {
                judge_store_change(*payment, stored, store, found)
            }
            What::RefundStored { refund, stored } => {
                judge_refund_change(*refund, stored, store, found)
            }
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
        &self,
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
            && self.created_now.is_some()
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
            let in_flight =
                ScopeKey::of(owner, request).is_some_and(|scope| self.in_flight(&scope));
            if !in_flight {
                found(Slot::InProgress, miss());
            }
        }
        if let Some(m) = judge_query(request, owner, answer, store, miss) {
            found(Slot::Query, m);
        }
        if let Some(m) = self.judge_branch(request, owner, handling, answer, store, miss) {
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
        &self,
        request: &ApiRequest,
        owner: Owner,
        handling: &Handling,
        answer: &ApiResponse,
        store: &Store<'_>,
        miss: impl Fn() -> Misanswer,
    ) -> Option<Misanswer> {
        let code = answer.error_code();
        let scope = ScopeKey::of(owner, request);
        if answer.is_success() && scope.is_some_and(|s| self.executing.contains_key(&s)) {
            return Some(miss());
        }
        match &request.endpoint {
            Endpoint::CreatePayment { .. } => {
                let (existing, _) = payment_of_order(request, owner, store)?;
                // Its own first execution created it: no S4 point.
                if self.created_now == Some(*existing) {
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
        &self,
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
                let mut m = miss();
                m.refund = Some((r.id, r.status, r.version));
                m.stored_refund = stored.map(|s| (s.status, s.version));
                found(Slot::Stale, m);
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
        if self.waiting.contains(&id) {
            if response.is_success() && response.status != 200 {
                found(Slot::SuccessCode, miss());
            }
            if response.error_code() == Some(ErrorCode::OperationInProgress)
                && !self.in_flight(scope)
            {
                found(Slot::InProgress, miss());
            }
        }
        // REPLAY-03: a create's own execution is answered 201, or 202 while the upstream
        // has not answered.
        let executor = self.executing.get(scope) == Some(&id);
        // A-STATUS-CODES: a checkout session's and a refund's first execution too.
        let create = scope.method == Method::Post
            && ["/v1/payments", "/v1/checkout/sessions", "/v1/refunds"]
                .contains(&scope.path.as_str());
        if executor && create && response.is_success() && !matches!(response.status, 201 | 202) {
            found(Slot::SuccessCode, miss());
        }
    }
}

impl Responses {
    /// CONC-03, SCOPE-01: an execution under `scope`'s Idempotency-Key is in flight for
    /// the same merchant and environment. A second merchant's (or the live environment's)
    /// execution under the same key is another scope: an operation_in_progress for it is
    /// the interference SCOPE-01 rules out, and no other property sees it (a 409 carries
    /// no object). The method and path are not compared: a crossed endpoint or Payment
    /// is left to answers-name-the-requested-payment, which sees the crossed object when
    /// the request is answered with it (the zoo's scope_without_payment_in_path).
    fn in_flight(&self, scope: &ScopeKey) -> bool {
        self.executing.keys().any(|s| {
            s.key == scope.key && s.merchant == scope.merchant && s.environment == scope.environment
        })
    }
}

/// The step executed something under its scope: an upstream call or a new record.
fn executed(handling: &Handling) -> bool {
    handling.new_record || !handling.calls.is_empty()
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
