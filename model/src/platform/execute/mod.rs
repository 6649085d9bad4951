//! Execution: the second half of handling a request, upstream replies, and timers.
//!
//! [`Platform::handle_request`] takes what admission decided: an answer goes out, a fork
//! takes the given branch, a new operation executes under a fresh idempotency record.
//! One file per operation family: `charge` (create and confirm with a card, the
//! upstream's answers, the synchronous wait, verification), `cancel`, `refund`, `timers`
//! (firing, retention, expiry) and `webhooks` (versions and events). Where the bug zoo
//! may act, execution calls its one seam, `Platform::hook`.

mod cancel;
mod charge;
mod refund;
mod timers;
mod webhooks;

pub(super) use charge::Reading;

use super::Hook;
use super::admission::{
    Admission, Fork, NewOp, order_no_conflict_response, refund_no_conflict_response,
};
use super::state::*;
use super::{Platform, PlatformOutput, StepError, Timer};
use crate::acquirer::UpstreamReply;
use crate::api::{ApiError, ApiRequest, ApiResponse, ErrorCode, PaymentStatus, ResolutionStatus};
use crate::branch::Branch;
use crate::ids::{AttemptId, PaymentId, RequestId, ResourceId, SessionId};
use crate::platform::Out;
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;

impl Platform {
    /// Handles a request: admission, then the answer, the branch or the execution.
    pub(super) fn handle_request(
        &mut self,
        now: Millis,
        id: RequestId,
        req: &ApiRequest,
        branch: Option<Branch>,
        out: &mut Out,
    ) -> Result<(), StepError> {
        if self.pending.contains_key(&id) {
            return Err(StepError::DuplicateRequestId(id));
        }
        match self.admit(now, req) {
            Admission::Answer(response, rule) => {
                let answered = Hook::Answered {
                    id,
                    request: req,
                    response: &response,
                };
                self.hook(now, answered, out);
                respond(out, id, response, rule);
            }
            Admission::Fork(fork) => {
                let point = fork.point();
                let branch = branch.ok_or(StepError::BranchRequired(point))?;
                if branch.point() != point {
                    return Err(StepError::WrongBranch {
                        point,
                        given: branch,
                    });
                }
                self.take_branch(now, id, fork, branch, out);
            }
            Admission::Execute { claim, op } => self.execute(now, id, claim, op, out),
        }
        Ok(())
    }

    fn take_branch(
        &mut self,
        now: Millis,
        id: RequestId,
        fork: Fork,
        branch: Branch,
        out: &mut Out,
    ) {
        let (response, rule) = match (fork, branch) {
            (Fork::OrderNoReuse { existing, .. }, Branch::S4Conflict) => {
                // A-409-NOBIND: the conflict binds nothing.
                (order_no_conflict_response(existing), Rule::OrderNoNewKey)
            }
            (Fork::OrderNoReuse { claim, existing }, _) => {
                // A-S4-BIND: the new key is bound to the existing Payment, so its replays agree.
                let resource = ResourceId::Payment(existing);
                self.bind(now, claim, RecordState::Done { resource });
                (self.resource_response(200, resource), Rule::OrderNoNewKey)
            }
            (Fork::Concurrent { scope }, Branch::S5Wait) => {
                // CONC-02: wait for the executor, at most `concurrent_wait_timeout` (CONC-03;
                // A-WAIT-TIMEOUT: 10 s).
                self.pending.insert(id, Pending::Waiter { scope });
                let at = now.after(self.params.concurrent_wait_timeout);
                self.set_timer(at, Timer::WaitTimeout(id));
                return;
            }
            (Fork::Concurrent { .. }, _) => (
                ApiResponse::error(ApiError::new(ErrorCode::OperationInProgress)),
                Rule::ConcurrentWaitTimeout,
            ),
            (Fork::ConfirmWhileProcessing { payment }, Branch::S8PaymentInProgress) => {
                // A-S8-NOBIND: the key is left free.
                let error = ApiError::new(ErrorCode::PaymentInProgress)
                    .related(ResourceId::Payment(payment));
                (ApiResponse::error(error), Rule::ConfirmWhileProcessing)
            }
            (Fork::ConfirmWhileProcessing { payment }, _) => {
                // A-S8-NOBIND: the original status, nothing executed, the key left free.
                (
                    self.resource_response(200, ResourceId::Payment(payment)),
                    Rule::ConfirmWhileProcessing,
                )
            }
            (Fork::RefundNoReuse { existing, .. }, Branch::RefundNoConflict) => {
                // A-409-NOBIND: the conflict binds nothing.
                (refund_no_conflict_response(existing), Rule::UniqueRefundNo)
            }
            (Fork::RefundNoReuse { claim, existing }, _) => {
                // A-REFUND-NO-BRANCH: the existing Refund, no second refund; the new key is
                // bound to it, as on the S4 "existing object" branch (A-S4-BIND).
                let resource = ResourceId::Refund(existing);
                self.bind(now, claim, RecordState::Done { resource });
                (self.resource_response(200, resource), Rule::UniqueRefundNo)
            }
            (Fork::SessionOfExpired { .. }, Branch::ExpiredPaymentExpired) => {
                // EXPIRY-01: the validity period limits new payment operations; a 422
                // binds nothing (REJECT-01), as a confirm past expires_at.
                (
                    ApiResponse::error(ApiError::new(ErrorCode::PaymentExpired)),
                    Rule::ExpiryLimitsNewOpsOnly,
                )
            }
            (
                Fork::SessionOfExpired {
                    claim,
                    order,
                    existing,
                },
                _,
            ) => {
                // CKO-01: a new session for the same Payment (A-CKO-ANY-STATUS).
                self.execute_session(now, id, claim, order, Some(existing), out);
                return;
            }
            (Fork::ConfirmPastRetention { claim, op }, Branch::RetentionNewAttempt) => {
                // A-CONFIRM-RETENTION, numbers only: the key is judged afresh.
                self.execute(now, id, claim, op, out);
                return;
            }
            (Fork::ConfirmPastRetention { op, .. }, _) => {
                // A-CONFIRM-RETENTION, any business: not new business; the Payment as it
                // stands, nothing executed, the key left unbound.
                let NewOp::Confirm { payment, card } = op else {
                    unreachable!("only a confirm forks past its retention")
                };
                self.hook(now, Hook::NotNewBusiness { payment, card }, out);
                let resource = ResourceId::Payment(payment);
                (
                    self.resource_response(200, resource),
                    Rule::RetentionSevenDays,
                )
            }
        };
        respond(out, id, response, rule);
    }

    /// Writes an idempotency record and its retention timer (RET-01; past it a confirm key
    /// is judged afresh, A-CONFIRM-RETENTION): 7 days from now,
    /// the record's creation, never extended by a replay (A-RETENTION-START).
    pub(super) fn bind(&mut self, now: Millis, claim: Claim, state: RecordState) {
        let retention = self.variant.retention(&self.params);
        self.set_timer(now.after(retention), Timer::Retention(claim.scope.clone()));
        let record = IdempotencyRecord {
            fingerprint: claim.fingerprint,
            created_at: now,
            state,
        };
        self.records.insert(claim.scope, record);
    }

    /// The acquirer answers.
    pub(super) fn handle_upstream(&mut self, now: Millis, reply: UpstreamReply, out: &mut Out) {
        match reply {
            UpstreamReply::Charge { attempt, state } => self.on_charge(now, attempt, state, out),
            UpstreamReply::Refund { refund, state } => self.on_refund(now, refund, state, out),
        }
    }

    /// Executes a new business operation under a fresh idempotency record.
    fn execute(&mut self, now: Millis, id: RequestId, claim: Claim, op: NewOp, out: &mut Out) {
        match op {
            NewOp::CreatePayment {
                merchant_order_no,
                amount,
                currency,
                card: Some(card),
            } => {
                let order_no = merchant_order_no.clone();
                let payment =
                    self.new_payment(now, &claim.scope, merchant_order_no, amount, currency);
                // UNIQ-01: the order number is bound before the charge goes out, so another
                // key for the same order finds it (ORDER-01).
                if self.variant.commits_order_no_before_charge() {
                    self.commit_order_no(&claim.scope, order_no, payment);
                }
                self.execute_charge(now, id, claim, payment, card, true, out);
            }
            NewOp::CreatePayment {
                merchant_order_no,
                amount,
                currency,
                card: None,
            } => {
                let payment =
                    self.create_payment(now, &claim.scope, merchant_order_no, amount, currency);
                // A-STATUS-RPM: no card, no attempt: requires_payment_method, 201.
                let resource = ResourceId::Payment(payment);
                self.bind(now, claim, RecordState::Done { resource });
                let response = self.resource_response(201, resource);
                respond(out, id, response, Rule::FirstExecution201);
            }
            NewOp::Confirm { payment, card } => {
                // ATTEMPT-02..ATTEMPT-06 were checked at admission; the Payment and its fee
                // snapshot are kept, only a new attempt is added.
                let kept = self.payments[&payment].fee_rate_bps;
                let fee = self.variant.card_retry_fee(kept, self.fee_rate_bps);
                if fee != kept {
                    self.payments
                        .get_mut(&payment)
                        .expect("admitted")
                        .fee_rate_bps = fee;
                }
                self.execute_charge(now, id, claim, payment, card, false, out);
            }
            NewOp::Cancel { payment } => self.execute_cancel(now, id, claim, payment, out),
            NewOp::CheckoutSession {
                merchant_order_no,
                amount,
                currency,
                existing,
            } => {
                let order = (merchant_order_no, amount, currency);
                self.execute_session(now, id, claim, order, existing, out);
            }
            NewOp::Refund {
                payment,
                merchant_refund_no,
                amount,
            } => {
                let refund = (merchant_refund_no, amount);
                self.execute_refund(now, id, claim, payment, refund, out);
            }
        }
    }

    /// CKO-01 / UNIQ-03: an existing order gets a new session for the same Payment.
    /// A-STATUS-CODES: 201 for every new session. A-SESSION-TTL: `expires_at` is
    /// recorded only.
    fn execute_session(
        &mut self,
        now: Millis,
        id: RequestId,
        claim: Claim,
        (merchant_order_no, amount, currency): (Text, u64, Text),
        existing: Option<PaymentId>,
        out: &mut Out,
    ) {
        let (payment, rule) = match existing {
            Some(p) => (p, Rule::CheckoutNewSession),
            None => (
                self.create_payment(now, &claim.scope, merchant_order_no, amount, currency),
                Rule::CheckoutSameProcess,
            ),
        };
        self.next.session += 1;
        let session = SessionId(self.next.session);
        self.sessions.insert(
            session,
            Session {
                payment,
                created_at: now,
                expires_at: now.after(self.params.session_ttl),
            },
        );
        let resource = ResourceId::Session(session);
        self.bind(now, claim, RecordState::Done { resource });
        let response = self.resource_response(201, resource);
        respond(out, id, response, rule);
    }

    /// A new Payment whose order number is bound for good (UNIQ-01).
    pub(super) fn create_payment(
        &mut self,
        now: Millis,
        scope: &Scope,
        merchant_order_no: Text,
        amount: u64,
        currency: Text,
    ) -> PaymentId {
        let order_no = merchant_order_no.clone();
        let id = self.new_payment(now, scope, merchant_order_no, amount, currency);
        self.commit_order_no(scope, order_no, id);
        id
    }

    /// UNIQ-01: the order number is bound for good, independently of any key (RET-02).
    fn commit_order_no(&mut self, scope: &Scope, merchant_order_no: Text, payment: PaymentId) {
        self.order_nos
            .insert(BusinessKey::of(scope, merchant_order_no), payment);
    }

    /// A new Payment, with no attempt yet, and its expiry timer.
    fn new_payment(
        &mut self,
        now: Millis,
        scope: &Scope,
        merchant_order_no: Text,
        amount: u64,
        currency: Text,
    ) -> PaymentId {
        self.next.payment += 1;
        let id = PaymentId(self.next.payment);
        // A-EXPIRES-AT: `payment_ttl` after creation.
        let expires_at = now.after(self.params.payment_ttl);
        self.payments.insert(
            id,
            Payment {
                merchant: scope.merchant,
                environment: scope.environment,
                merchant_order_no,
                amount,
                currency,
                // A-FEE-SNAPSHOT: the rate of the Payment's creation, kept by every attempt.
                fee_rate_bps: self.fee_rate_bps,
                created_at: now,
                expires_at,
                // A-STATUS-RPM: no attempt yet. A-VERSION: version 1, no event.
                status: PaymentStatus::RequiresPaymentMethod,
                resolution: ResolutionStatus::Known,
                attempts: Vec::new(),
                failure: None,
                cancel_requested: false,
                amount_refunded: 0,
                version: 1,
            },
        );
        self.set_timer(expires_at, Timer::PaymentExpiry(id));
        id
    }

    /// The executor waits for the upstream, at most `sync_wait` (UPSTREAM-01).
    pub(super) fn await_upstream(
        &mut self,
        now: Millis,
        id: RequestId,
        scope: Scope,
        waits_on: WaitsOn,
    ) {
        self.pending
            .insert(id, Pending::Executor { scope, waits_on });
        self.set_timer(now.after(self.params.sync_wait), Timer::SyncWait(id));
    }

    /// Answers an executor and every request waiting on its scope, and marks the record done.
    fn finish_executor(&mut self, executor: RequestId, status: u16, rule: Rule, out: &mut Out) {
        let Some(Pending::Executor { scope, waits_on }) = self.pending.remove(&executor) else {
            return;
        };
        self.cancel_timer(&Timer::SyncWait(executor));
        let resource = match waits_on {
            WaitsOn::Charge { attempt, .. } => ResourceId::Payment(self.attempts[&attempt].payment),
            WaitsOn::Cancel { payment } => ResourceId::Payment(payment),
        };
        if let Some(record) = self.records.get_mut(&scope) {
            record.state = RecordState::Done { resource };
        }
        let response = self.resource_response(status, resource);
        respond(out, executor, response, rule);
        // CONC-02: the waiters get the same object, latest state, 200.
        for waiter in self.take_waiters(&scope) {
            let response = self.resource_response(200, resource);
            respond(out, waiter, response, Rule::ConcurrentWaitSameObject);
        }
    }

    /// The requests waiting on `scope`, no longer waiting.
    pub(super) fn take_waiters(&mut self, scope: &Scope) -> Vec<RequestId> {
        let waiters: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| matches!(p, Pending::Waiter { scope: s } if s == scope))
            .map(|(id, _)| *id)
            .collect();
        for waiter in &waiters {
            self.pending.remove(waiter);
            self.cancel_timer(&Timer::WaitTimeout(*waiter));
        }
        waiters
    }

    /// Executors waiting on this attempt's charge or on its Payment's cancel.
    fn executors_for(&self, attempt: AttemptId, payment: PaymentId) -> Vec<(RequestId, WaitsOn)> {
        self.pending
            .iter()
            .filter_map(|(id, p)| match p {
                Pending::Executor { waits_on, .. } => match *waits_on {
                    WaitsOn::Charge { attempt: a, .. } if a == attempt => Some((*id, *waits_on)),
                    WaitsOn::Cancel { payment: p } if p == payment => Some((*id, *waits_on)),
                    _ => None,
                },
                Pending::Waiter { .. } => None,
            })
            .collect()
    }
}

pub(super) fn respond(out: &mut Out, to: RequestId, response: ApiResponse, rule: Rule) {
    out.push(PlatformOutput::Response { to, response, rule });
}
