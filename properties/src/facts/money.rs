//! Idempotency and money: what each scope executed and was answered, the charges it
//! caused, and the acquirer's ledger (EFFECT-01, REPLAY-01, CONFLICT-01, SCOPE-01,
//! RET-01, REJECT-01, CARD-01). Which answers misjudge a conflict, treat a replay as
//! new business or say nothing executed is the properties' reading
//! ([`crate::scope_answers`]); this family records the first request each finds.

use super::note_first;
use crate::scope_answers;
use payhub_model::cow::{Derived, INDEX_PAST};
use payhub_model::event::{BusinessOrder, Handling, Owner, Route, ScopeKey, What};
use payhub_model::{
    ApiRequest, ApiResponse, AttemptId, CowMap, CowSet, Endpoint, Json, LedgerEntry, Millis,
    PaymentId, RefundId, RequestId, ResourceId, ResponseBody, Text, UpstreamCall,
};
use serde::Serialize;

/// The money family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Money {
    /// Upstream charge calls caused by requests, per idempotency scope, within the
    /// scope's retention window (RET-01).
    pub charges_per_scope: CowMap<ScopeKey, u8>,
    /// When the current retention window of each scope's charges began.
    pub first_charge_at: CowMap<ScopeKey, Millis>,
    /// Charge calls the platform sent on its own (on a timer or a reply), or for a
    /// request without a scope or other than a create or confirm (QUERY-04).
    pub unsolicited_charges: u8,
    /// The first request answered 400/401/403/409/422/429/503 whose step nevertheless
    /// changed the store or called the upstream.
    pub rejected_but_executed: Option<RequestId>,
    /// The object each scope's 2xx answers referred to, and when it was first seen.
    pub objects_per_scope: CowMap<ScopeKey, (ResourceId, Millis)>,
    /// The first 2xx answer, within retention, that referred to another object than an
    /// earlier 2xx answer under the same scope.
    pub replay_mismatch: Option<RequestId>,
    /// The first 2xx answer whose object the store holds for another merchant or
    /// environment than the request's API key names.
    pub foreign_object: Option<RequestId>,
    /// The first request whose step charged another card than the request's own, or
    /// charged at all under a scope that had executed within retention (a replay's card,
    /// CARD-03).
    pub charged_other_card: Option<RequestId>,
    /// A scope was answered again after its first answer's retention had passed.
    pub replay_after_retention: bool,
    /// The first confirm under a scope whose execution's retention had passed that was
    /// answered 2xx in its own step (not new business: a new attempt is answered when its
    /// charge returns or the synchronous wait ends) and whose step charged
    /// (A-CONFIRM-RETENTION).
    pub not_new_business_charged: Option<RequestId>,
    /// The business order each Payment was charged for, as seen when a client's
    /// submission made the platform charge.
    pub payment_business: CowMap<PaymentId, BusinessOrder>,
    /// The refund request each refund was paid back for (its business names the request's
    /// first refund number), as seen when a client's refund create made the platform
    /// refund.
    pub refund_business: CowMap<RefundId, BusinessOrder>,
    /// Each scope's current execution: when a request under it first executed (an
    /// upstream call or a new idempotency record in its own step), and the safety-relevant
    /// parameters that request carried, as the merchant sent them. Replaced once the
    /// retention has passed (RET-01).
    pub executions: CowMap<ScopeKey, (Millis, SafeParams)>,
    /// The first request whose answer's conflict verdict differs from what its scope's
    /// execution within retention implies: 409 idempotency_conflict with the same
    /// parameters or with no execution, or a 2xx or 409 operation_in_progress with other
    /// parameters (the original in flight does not hide a conflict).
    pub conflict_misjudged: Option<RequestId>,
    /// The first request under a scope that executed within retention answered 409
    /// order_no_conflict, payment_in_progress or refund_no_conflict.
    pub replay_as_new_business: Option<RequestId>,
    /// The first 2xx answer about another Payment than the one the request names in its
    /// path or body (in its own step or, for a waiter, later).
    pub answered_other_payment: Option<RequestId>,
    /// Requests under a scope waiting on its execution (no answer and nothing executed in
    /// their own step), with what their later answer is judged against. Removed when they
    /// are answered: a function of the requests in flight.
    pub waiting: CowMap<RequestId, Waiter>,
    /// The acquirer's ledger, in the order money moved (a mirror of the ground truth).
    pub ledger: CowMap<u32, LedgerEntry>,
    /// `ledger`'s totals, once it holds more than [`INDEX_PAST`] entries: an index, not
    /// state (a walk over the ledger per Payment or refund made each verdict quadratic).
    #[serde(skip)]
    totals: Derived<Option<LedgerTotals>>,
}

/// The ledger summed: captured and refunded per attempt, and the Payments captured.
#[derive(Clone, Debug, Default)]
struct LedgerTotals {
    per_attempt: CowMap<AttemptId, (u64, u64)>,
    captured: CowSet<PaymentId>,
}

impl LedgerTotals {
    fn add(&mut self, entry: &LedgerEntry) {
        match entry {
            LedgerEntry::Capture {
                attempt,
                payment,
                amount,
                ..
            } => {
                self.per_attempt.entry(*attempt).or_default().0 += amount;
                self.captured.insert(*payment);
            }
            LedgerEntry::Refund {
                attempt, amount, ..
            } => self.per_attempt.entry(*attempt).or_default().1 += amount,
        }
    }
}

impl Money {
    /// Whether `what` may change this family.
    pub(super) fn changes(&self, what: &What) -> bool {
        match what {
            What::Ledger { .. } => true,
            What::Handled {
                request,
                owner,
                handling,
                ..
            } => self.handling_changes(request, *owner, handling.answer.as_ref(), handling),
            What::Answered {
                id,
                response,
                route: Some(route),
                ..
            } => {
                self.waiting.contains_key(id)
                    || (self.replay_as_new_business.is_none()
                        && scope_answers::as_new_business(response)
                        && route
                            .scope
                            .as_ref()
                            .is_some_and(|s| self.executions.contains_key(s)))
                    || (response.is_success()
                        && resource_of(response).is_some()
                        && (route.scope.is_some()
                            || (self.foreign_object.is_none() && foreign(route))))
            }
            What::Answered { id, .. } => self.waiting.contains_key(id),
            What::UpstreamCalled {
                call: UpstreamCall::Charge { .. },
                during,
                ..
            } => during.is_none(),
            _ => false,
        }
    }

    /// Folds `what`, seen at `at`; a scope's history is kept for the properties' reading
    /// of RET-01 ([`scope_answers::SCOPE_HISTORY`]).
    pub(super) fn observe(&mut self, at: Millis, what: &What) {
        let now = Window { now: at };
        match what {
            What::Handled {
                id,
                request,
                owner,
                business,
                handling,
            } => {
                self.on_handled(now, *id, request, *owner, handling);
                if let Some(business) = business {
                    self.on_business_charges(business, &handling.calls);
                }
            }
            What::Answered {
                id,
                response,
                route: Some(route),
                ..
            } => {
                self.on_waiter_answer(*id, response);
                self.on_answer(now, *id, route, response)
            }
            What::Answered { id, response, .. } => self.on_waiter_answer(*id, response),
            What::UpstreamCalled {
                call: UpstreamCall::Charge { .. },
                during: None,
                ..
            } => self.unsolicited_charges = self.unsolicited_charges.saturating_add(1),
            What::Ledger { entry } => {
                self.ledger.insert(self.ledger.len() as u32, entry.clone());
                match &mut *self.totals {
                    Some(totals) => totals.add(entry),
                    None if self.ledger.len() > INDEX_PAST => {
                        let mut totals = LedgerTotals::default();
                        self.ledger.values().for_each(|e| totals.add(e));
                        *self.totals = Some(totals);
                    }
                    None => {}
                }
            }
            _ => {}
        }
    }

    /// The ledger's entries, in order.
    pub fn ledger(&self) -> impl Iterator<Item = &LedgerEntry> {
        self.ledger.values()
    }

    /// Total captured, and total refunded, against one attempt.
    pub fn net_of(&self, attempt: AttemptId) -> (u64, u64) {
        if let Some(totals) = &*self.totals {
            return totals
                .per_attempt
                .get(&attempt)
                .copied()
                .unwrap_or_default();
        }
        payhub_model::acquirer::net_of(self.ledger(), attempt)
    }

    /// Whether the ledger captured `payment`.
    pub fn captured(&self, payment: PaymentId) -> bool {
        if let Some(totals) = &*self.totals {
            return totals.captured.contains(&payment);
        }
        self.ledger()
            .any(|e| matches!(e, LedgerEntry::Capture { payment: p, .. } if *p == payment))
    }

    /// Whether a handled request may change this family: it called the upstream or
    /// stored a new record (charges, executions, business orders), was rejected after
    /// changing the store, was answered about another Payment than it names, or was
    /// answered under a scope (answers are judged per scope). Most handled requests are
    /// unkeyed queries, which change nothing here.
    /// The request's own `answer` is passed apart: the world asks before it copies the
    /// answer into `handling` for a [`What::Handled`] (only this family reads one).
    pub(crate) fn handling_changes(
        &self,
        request: &ApiRequest,
        owner: Owner,
        answer: Option<&ApiResponse>,
        handling: &Handling,
    ) -> bool {
        !handling.calls.is_empty()
            || handling.new_record
            || (handling.store_changed
                && answer.is_some_and(scope_answers::executes_nothing)
                && self.rejected_but_executed.is_none())
            || (self.answered_other_payment.is_none() && about_other_payment(request, answer))
            || (answer.is_some() && owner.is_some() && request.idempotency_key.is_some())
            || (answer.is_none() && ScopeKey::of(owner, request).is_some())
    }

    fn on_handled(
        &mut self,
        now: Window,
        id: RequestId,
        request: &ApiRequest,
        owner: Owner,
        handling: &Handling,
    ) {
        let scope = ScopeKey::of(owner, request);
        let charges = handling
            .calls
            .iter()
            .filter(|c| matches!(c, UpstreamCall::Charge { .. }))
            .count() as u8;
        if charges > 0 {
            if let Some(scope) = &scope {
                self.count_charges(now, scope, charges);
            }
            // QUERY-04: only a create or a confirm charges; a keyed cancel, refund or
            // checkout session that charged is counted under its scope and here.
            if scope.is_none() || !charges_by_contract(&request.endpoint) {
                self.unsolicited_charges = self.unsolicited_charges.saturating_add(charges);
            }
        }
        let card = request.endpoint.card();
        let other_card = handling
            .calls
            .iter()
            .any(|c| matches!(c, UpstreamCall::Charge { card: c, .. } if Some(*c) != card));
        // CARD-03: a request under a scope that executed is a replay; whatever card it
        // carries is never charged.
        let replay_charged = charges > 0
            && scope
                .as_ref()
                .is_some_and(|s| self.execution_of(now, s).is_some());
        note_first(
            &mut self.charged_other_card,
            other_card || replay_charged,
            || id,
        );
        // RET-01, A-CONFIRM-RETENTION: a confirm past its key's retention answered at
        // once, as not new business, charges nothing.
        let past_retention = scope.as_ref().is_some_and(|s| {
            self.executions.contains_key(s) && self.execution_of(now, s).is_none()
        });
        let answered_at_once = handling
            .answer
            .as_ref()
            .is_some_and(ApiResponse::is_success);
        let confirm = matches!(request.endpoint, Endpoint::ConfirmPayment { .. });
        let breach = past_retention && answered_at_once && charges > 0 && confirm;
        note_first(&mut self.not_new_business_charged, breach, || id);
        let rejected = handling
            .answer
            .as_ref()
            .is_some_and(scope_answers::executes_nothing);
        self.on_scope_answer(now, id, request, scope, handling);
        let executed = handling.store_changed || handling.new_record || !handling.calls.is_empty();
        note_first(&mut self.rejected_but_executed, rejected && executed, || id);
    }

    /// RET-01: a key is protected for the retention period; a charge under it after
    /// that starts a new window (a contract finding, not a bug).
    fn count_charges(&mut self, now: Window, scope: &ScopeKey, charges: u8) {
        let window_over = self
            .first_charge_at
            .get(scope)
            .is_some_and(|at| !now.keeps(*at));
        if window_over || !self.first_charge_at.contains_key(scope) {
            self.first_charge_at.insert(scope.clone(), now.now);
            self.charges_per_scope.insert(scope.clone(), 0);
        }
        let n = self.charges_per_scope.entry(scope.clone()).or_insert(0);
        *n = n.saturating_add(charges);
    }

    /// The charges and refunds a client's submission for `business` caused.
    fn on_business_charges(&mut self, business: &BusinessOrder, calls: &[UpstreamCall]) {
        for call in calls {
            match call {
                UpstreamCall::Charge { payment, .. } => {
                    self.payment_business
                        .entry(*payment)
                        .or_insert_with(|| business.clone());
                }
                UpstreamCall::Refund { refund, .. } => {
                    self.refund_business
                        .entry(*refund)
                        .or_insert_with(|| business.clone());
                }
                _ => {}
            }
        }
    }

    /// A request's own answer against its scope's execution (CONFLICT-01, REPLAY-01,
    /// SCOPE-01), then the execution it makes, if any.
    fn on_scope_answer(
        &mut self,
        now: Window,
        id: RequestId,
        request: &ApiRequest,
        scope: Option<ScopeKey>,
        handling: &Handling,
    ) {
        let answer = handling.answer.as_ref();
        let other = about_other_payment(request, answer);
        note_first(&mut self.answered_other_payment, other, || id);
        let Some(scope) = scope else {
            return;
        };
        let params = safety_parameters(&request.endpoint);
        let execution = self.execution_of(now, &scope);
        let executed = handling.new_record || !handling.calls.is_empty();
        if answer.is_none() && !executed {
            let waiter = Waiter {
                params_differ: execution.as_ref().is_some_and(|p| *p != params),
                named: named_payment(&request.endpoint),
            };
            self.waiting.insert(id, waiter);
        }
        if let Some(answer) = answer {
            let params_differ = execution.as_ref().is_some_and(|p| *p != params);
            let misjudged = scope_answers::conflict_misjudged(answer, params_differ);
            note_first(&mut self.conflict_misjudged, misjudged, || id);
            let new_business = scope_answers::as_new_business(answer) && execution.is_some();
            note_first(&mut self.replay_as_new_business, new_business, || id);
        }
        if executed && execution.is_none() {
            self.executions.insert(scope, (now.now, params));
        }
    }

    /// The parameters of `scope`'s execution within retention, if any.
    fn execution_of(&self, now: Window, scope: &ScopeKey) -> Option<SafeParams> {
        self.executions
            .get(scope)
            .filter(|(at, _)| now.keeps(*at))
            .map(|(_, p)| p.clone())
    }

    /// A waiter's answer, given after its own step: read as its own-step answer would
    /// be (CONFLICT-01 against the parameters of the execution it waited on; SCOPE-01:
    /// about the Payment it names).
    fn on_waiter_answer(&mut self, id: RequestId, response: &ApiResponse) {
        let Some(waiter) = self.waiting.get(&id).copied() else {
            return;
        };
        self.waiting.remove(&id);
        let misjudged = scope_answers::conflict_misjudged(response, waiter.params_differ);
        note_first(&mut self.conflict_misjudged, misjudged, || id);
        let other = about_payment(response).is_some_and(|p| waiter.named.is_some_and(|n| n != p));
        note_first(&mut self.answered_other_payment, other, || id);
    }

    /// An answer leaves the platform for the merchant that sent request `id`.
    fn on_answer(&mut self, now: Window, id: RequestId, route: &Route, response: &ApiResponse) {
        // REPLAY-01, RET-01: within retention a scope that executed is never new business,
        // whoever is answered (a waiter, later, included).
        let executed = route
            .scope
            .as_ref()
            .is_some_and(|s| self.execution_of(now, s).is_some());
        let new_business = scope_answers::as_new_business(response) && executed;
        note_first(&mut self.replay_as_new_business, new_business, || id);
        if !response.is_success() {
            return;
        }
        let resource = resource_of(response);
        note_first(
            &mut self.foreign_object,
            resource.is_some() && foreign(route),
            || id,
        );
        if let (Some(scope), Some(resource)) = (&route.scope, resource) {
            match self.objects_per_scope.get(scope) {
                Some((seen, since)) if now.keeps(*since) => {
                    note_first(&mut self.replay_mismatch, *seen != resource, || id)
                }
                Some(_) => {
                    self.replay_after_retention = true;
                    self.objects_per_scope
                        .insert(scope.clone(), (resource, now.now));
                }
                None => {
                    self.objects_per_scope
                        .insert(scope.clone(), (resource, now.now));
                }
            }
        }
    }
}

/// The moment an event is folded at.
#[derive(Clone, Copy)]
struct Window {
    now: Millis,
}

impl Window {
    /// Whether history that began `since` is still kept now.
    fn keeps(self, since: Millis) -> bool {
        self.now < since.after(scope_answers::SCOPE_HISTORY)
    }
}

/// What a waiter's later answer is judged against: whether its safety-relevant parameters
/// differ from its scope's execution (CONFLICT-01), and the Payment it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Waiter {
    pub params_differ: bool,
    pub named: Option<PaymentId>,
}

/// The safety-relevant parameters of a request as the merchant sent them (SAFE-01): order
/// number, amount and currency; refund number, amount and payment; nothing for confirm and
/// cancel (the payment is in the path). Card data is never part of it (CARD-01).
///
/// Kept as values, not text: the checker records them for every executed request, and
/// formatting them was a tenth of its instructions. Displayed only in findings.
/// `P` is how a refund's Payment is named: the model's [`PaymentId`] here, the id as a
/// log wrote it in the wire facts (`WireParams`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum SafeParams<P = PaymentId> {
    /// Confirm, cancel, GET: nothing beyond the path.
    #[default]
    None,
    /// Create Payment or checkout session.
    Order {
        merchant_order_no: Option<Text>,
        amount: Option<i64>,
        currency: Option<Text>,
    },
    Refund {
        payment_id: Option<P>,
        merchant_refund_no: Option<Text>,
        amount: Option<i64>,
    },
}

impl<P: std::fmt::Debug> std::fmt::Display for SafeParams<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SafeParams::None => Ok(()),
            SafeParams::Order {
                merchant_order_no,
                amount,
                currency,
            } => write!(f, "{merchant_order_no:?} {amount:?} {currency:?}"),
            SafeParams::Refund {
                payment_id,
                merchant_refund_no,
                amount,
            } => write!(f, "{payment_id:?} {merchant_refund_no:?} {amount:?}"),
        }
    }
}

pub fn safety_parameters(endpoint: &Endpoint) -> SafeParams {
    match endpoint {
        Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } => SafeParams::Order {
            merchant_order_no: b.merchant_order_no.clone(),
            amount: b.amount,
            currency: b.currency.clone(),
        },
        Endpoint::CreateCheckoutSession {
            body: Json::Parsed(b),
        } => SafeParams::Order {
            merchant_order_no: b.merchant_order_no.clone(),
            amount: b.amount,
            currency: b.currency.clone(),
        },
        Endpoint::CreateRefund {
            body: Json::Parsed(b),
        } => SafeParams::Refund {
            payment_id: b.payment_id,
            merchant_refund_no: b.merchant_refund_no.clone(),
            amount: b.amount,
        },
        _ => SafeParams::None,
    }
}

/// The endpoints that may charge: create and confirm (QUERY-04).
fn charges_by_contract(endpoint: &Endpoint) -> bool {
    matches!(
        endpoint,
        Endpoint::CreatePayment { .. } | Endpoint::ConfirmPayment { .. }
    )
}

/// The Payment a 2xx answer is about.
fn about_payment(answer: &ApiResponse) -> Option<PaymentId> {
    match &answer.body {
        ResponseBody::Payment(p) if answer.is_success() => Some(p.id),
        ResponseBody::Refund(r) if answer.is_success() => Some(r.payment_id),
        _ => None,
    }
}

/// The request's own 2xx answer is about another Payment than the one it names.
fn about_other_payment(request: &ApiRequest, answer: Option<&ApiResponse>) -> bool {
    let (Some(named), Some(answer)) = (named_payment(&request.endpoint), answer) else {
        return false;
    };
    about_payment(answer).is_some_and(|p| p != named)
}

/// The object an answer returns.
fn resource_of(response: &ApiResponse) -> Option<ResourceId> {
    match &response.body {
        ResponseBody::Payment(p) => Some(ResourceId::Payment(p.id)),
        ResponseBody::Refund(r) => Some(ResourceId::Refund(r.id)),
        ResponseBody::Session(s) => Some(ResourceId::Session(s.id)),
        _ => None,
    }
}

/// The store holds the answered object for another merchant or environment than the
/// request's API key names.
fn foreign(route: &Route) -> bool {
    route.owner.is_some() && route.object_owner != route.owner
}

/// The Payment a request names in its path (confirm, cancel, GET) or body (refund).
pub(crate) fn named_payment(endpoint: &Endpoint) -> Option<PaymentId> {
    match endpoint {
        Endpoint::ConfirmPayment { payment_id, .. }
        | Endpoint::CancelPayment { payment_id }
        | Endpoint::GetPayment { payment_id } => Some(*payment_id),
        Endpoint::CreateRefund {
            body: Json::Parsed(b),
        } => b.payment_id,
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::{Card, Environment, MerchantId, RefundId};

    /// `n` captures of 100, Payment `i` by attempt `i`, every even one refunded 30 twice.
    fn ledger(n: u32) -> Money {
        let mut m = Money::default();
        for i in 1..=n {
            let capture = LedgerEntry::Capture {
                attempt: AttemptId(i),
                payment: PaymentId(i),
                merchant: MerchantId(1),
                environment: Environment::Test,
                amount: 100,
                card: Card('A'),
                at: Millis(0),
            };
            m.observe(Millis(0), &What::Ledger { entry: capture });
            for _ in 0..2 * u32::from(i % 2 == 0) {
                let refund = LedgerEntry::Refund {
                    refund: RefundId(i),
                    attempt: AttemptId(i),
                    amount: 30,
                    at: Millis(0),
                };
                m.observe(Millis(0), &What::Ledger { entry: refund });
            }
        }
        m
    }

    #[test]
    fn the_ledger_totals_answer_as_the_walk_does() {
        // 10 captures are walked; 100 are past INDEX_PAST, so read through the totals.
        for n in [10, 100] {
            let m = ledger(n);
            assert_eq!(m.totals.is_some(), m.ledger.len() > INDEX_PAST);
            assert_eq!(m.net_of(AttemptId(1)), (100, 0), "{n}");
            assert_eq!(m.net_of(AttemptId(2)), (100, 60), "{n}");
            assert_eq!(m.net_of(AttemptId(n + 1)), (0, 0), "{n}");
            assert!(m.captured(PaymentId(n)), "{n}");
            assert!(!m.captured(PaymentId(n + 1)), "{n}");
        }
    }
}
