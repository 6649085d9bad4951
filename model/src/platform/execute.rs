//! Execution: the second half of handling a request, upstream replies, and timers.

use super::admission::NewOp;
use super::state::*;
use super::{Platform, PlatformOutput, Timer, UnackedWebhook, WebhookEvent, WebhookObject};
use crate::acquirer::{ChargeState, RefundState, UpstreamCall, UpstreamReply};
use crate::api::{
    ApiError, ApiRequest, ApiResponse, Endpoint, ErrorCode, Failure, FailureCode, Json,
    PaymentStatus, RefundStatus, ResolutionStatus,
};
use crate::ids::{AttemptId, Card, EventId, PaymentId, RefundId, RequestId, ResourceId, SessionId};
use crate::mutants::Mutant;
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;

impl Platform {
    /// Executes a new business operation under a fresh idempotency record.
    pub(super) fn execute(
        &mut self,
        now: Millis,
        id: RequestId,
        scope: Scope,
        fingerprint: Fingerprint,
        op: NewOp,
        out: &mut Vec<PlatformOutput>,
    ) {
        // CONC-01: this request now holds the right to execute under `scope`.
        // EFFECT-01, UNKNOWN-01: the record is written before anything reaches the upstream,
        // so whatever the merchant then sees (a timeout, a 5xx, a 202) a retry with the same
        // key finds this execution and never starts a second one.
        let in_flight = RecordState::InFlight { executor: id };
        match op {
            NewOp::CreatePayment {
                merchant_order_no,
                amount,
                currency,
                card,
            } => {
                let payment = self.create_payment(now, &scope, merchant_order_no, amount, currency);
                match card {
                    Some(card) => {
                        // MUTANT order_no_check_not_atomic (UNIQ-01, ORDER-01): the order number
                        // is committed only when the charge returns (`mutant_before_finish`).
                        if self.params.mutant == Some(Mutant::OrderNoCheckNotAtomic) {
                            self.order_nos.retain(|_, p| *p != payment);
                        }
                        // MUTANT key_claimed_after_charge (CONC-01, REPLAY-01): the key is
                        // claimed when the upstream answers (`mutant_before_finish`).
                        if self.params.mutant != Some(Mutant::KeyClaimedAfterCharge) {
                            self.bind(now, scope.clone(), fingerprint, in_flight);
                        }
                        let attempt = self.start_attempt(now, payment, card, true, out);
                        let waits_on = WaitsOn::Charge {
                            attempt,
                            created: true,
                        };
                        self.await_upstream(now, id, scope, waits_on);
                    }
                    None => {
                        // A-STATUS-RPM: no card, no attempt: requires_payment_method, 201.
                        let resource = ResourceId::Payment(payment);
                        self.bind(now, scope, fingerprint, RecordState::Done { resource });
                        let response = self.resource_response(201, resource);
                        respond(out, id, response, Rule::FirstExecution201);
                    }
                }
            }
            NewOp::Confirm { payment, card } => {
                // ATTEMPT-02..ATTEMPT-06 were checked at admission; the Payment and its fee
                // snapshot are kept, only a new attempt is added.
                // MUTANT key_claimed_after_charge (CONC-01, REPLAY-01): claimed on the answer.
                if self.params.mutant != Some(Mutant::KeyClaimedAfterCharge) {
                    self.bind(now, scope.clone(), fingerprint, in_flight);
                }
                let attempt = self.start_attempt(now, payment, card, false, out);
                let waits_on = WaitsOn::Charge {
                    attempt,
                    created: false,
                };
                self.await_upstream(now, id, scope, waits_on);
            }
            NewOp::Cancel { payment } => {
                // MUTANT cancel_reports_canceled (CANCEL-01): canceled at once, without the
                // upstream's word, while the charge may still go through.
                if self.params.mutant == Some(Mutant::CancelReportsCanceled)
                    && self.payments[&payment].status.is_in_progress()
                {
                    self.mutant_cancel_at_once(now, id, scope, fingerprint, payment, out);
                    return;
                }
                let p = self.payments.get_mut(&payment).expect("admitted");
                if p.status.is_in_progress() {
                    // CANCEL-01: only the upstream can say the charge is safely canceled
                    // (A-CANCEL: 200 canceled or succeeded on its answer, else 202).
                    p.cancel_requested = true;
                    let attempt = p.latest_attempt().expect("in progress has an attempt");
                    self.bind(now, scope.clone(), fingerprint, in_flight);
                    out.push(PlatformOutput::Upstream {
                        call: UpstreamCall::CancelCharge { attempt },
                        rule: Rule::Cancel202KeepsStatus,
                    });
                    self.await_upstream(now, id, scope, WaitsOn::Cancel { payment });
                } else {
                    // No unfinished attempt: nothing can be captured, cancel at once, 200
                    // (A-CANCEL, A-STATUS-CODES).
                    p.status = PaymentStatus::Canceled;
                    p.resolution = ResolutionStatus::Known;
                    self.bump_payment(now, payment, Rule::TerminalStatuses, out);
                    let resource = ResourceId::Payment(payment);
                    self.bind(now, scope, fingerprint, RecordState::Done { resource });
                    let response = self.resource_response(200, resource);
                    respond(out, id, response, Rule::TerminalStatuses);
                }
            }
            NewOp::CheckoutSession {
                merchant_order_no,
                amount,
                currency,
                existing,
            } => {
                // CKO-01 / UNIQ-03: an existing order gets a new session for the same Payment.
                // A-STATUS-CODES: 201 for every new session. A-SESSION-TTL: `expires_at` is
                // recorded only.
                let (payment, rule) = match existing {
                    Some(p) => (p, Rule::CheckoutNewSession),
                    None => (
                        self.create_payment(now, &scope, merchant_order_no, amount, currency),
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
                self.bind(now, scope, fingerprint, RecordState::Done { resource });
                let response = self.resource_response(201, resource);
                respond(out, id, response, rule);
            }
            NewOp::Refund {
                payment,
                merchant_refund_no,
                amount,
            } => {
                let p = self.payments.get_mut(&payment).expect("admitted");
                p.amount_refunded += amount;
                let attempt = p
                    .latest_attempt()
                    .expect("a succeeded payment has an attempt");
                // The Payment's `amount_refunded` changed: a new version (WEBHOOK-01), no
                // Payment event (A-VERSION). It counts processing refunds (A-REFUND-LIMIT).
                self.bump_payment(now, payment, Rule::WebhookPrimary, out);
                self.next.refund += 1;
                let refund = RefundId(self.next.refund);
                self.refund_nos.insert(
                    BusinessKey {
                        merchant: scope.merchant,
                        environment: scope.environment,
                        number: merchant_refund_no.clone(),
                    },
                    refund,
                );
                self.refunds.insert(
                    refund,
                    Refund {
                        payment,
                        attempt,
                        merchant: scope.merchant,
                        environment: scope.environment,
                        merchant_refund_no,
                        amount,
                        status: RefundStatus::Processing,
                        resolution: ResolutionStatus::Known,
                        sent_at: now,
                        version: 1,
                    },
                );
                // The refund is sent once; afterwards the platform only queries (REFUND-01).
                // A-REFUND-ASYNC: 201 processing at once, no synchronous wait; the first
                // query comes `sync_wait` after sending.
                out.push(PlatformOutput::Upstream {
                    call: UpstreamCall::Refund {
                        refund,
                        attempt,
                        amount,
                    },
                    rule: Rule::UniqueRefundNo,
                });
                self.set_timer(
                    now.after(self.params.sync_wait),
                    Timer::VerifyRefund(refund),
                );
                let resource = ResourceId::Refund(refund);
                self.bind(now, scope, fingerprint, RecordState::Done { resource });
                let response = self.resource_response(201, resource);
                respond(out, id, response, Rule::FirstExecution201);
            }
        }
    }

    fn create_payment(
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
        // UNIQ-01: the order number is bound for good, independently of any key (RET-02).
        self.order_nos.insert(
            BusinessKey {
                merchant: scope.merchant,
                environment: scope.environment,
                number: merchant_order_no.clone(),
            },
            id,
        );
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

    /// Adds an attempt and sends its charge. The card goes to the upstream and nowhere
    /// else (CARD-02). `fresh`: the Payment was created by this same request, so its
    /// first version already shows the attempt; otherwise the change is a new version.
    fn start_attempt(
        &mut self,
        now: Millis,
        payment: PaymentId,
        card: Card,
        fresh: bool,
        out: &mut Vec<PlatformOutput>,
    ) -> AttemptId {
        self.next.attempt += 1;
        let attempt = AttemptId(self.next.attempt);
        let p = self.payments.get_mut(&payment).expect("exists");
        p.attempts.push(attempt);
        p.status = PaymentStatus::Processing;
        p.resolution = ResolutionStatus::Known;
        p.failure = None;
        let call = UpstreamCall::Charge {
            attempt,
            payment,
            merchant: p.merchant,
            environment: p.environment,
            amount: p.amount,
            currency: p.currency.clone(),
            card,
        };
        self.attempts.insert(
            attempt,
            Attempt {
                payment,
                status: crate::platform::state::AttemptStatus::Processing,
                sent_at: now,
            },
        );
        // MUTANT waiter_reexecutes / query_triggers_charge: the card is kept to charge again
        // (breaks CARD-02 on top of their own rules).
        if self.params.mutant.is_some_and(Mutant::keeps_cards) {
            self.mutant_cards.insert(attempt, card);
        }
        // WEBHOOK-01, A-VERSION: a Payment that merchants could already see (a card retry after
        // `failed`, or the first confirm of a `requires_payment_method` Payment) changes
        // status: a new version. Bumping only on retries left the first confirm at the
        // same version with another status.
        if !fresh {
            self.bump_payment(now, payment, Rule::CardRetryNewKey, out);
        }
        out.push(PlatformOutput::Upstream {
            call,
            rule: Rule::ProcessingKnown,
        });
        attempt
    }

    /// The executor waits for the upstream, at most `sync_wait` (UPSTREAM-01).
    fn await_upstream(&mut self, now: Millis, id: RequestId, scope: Scope, waits_on: WaitsOn) {
        self.pending
            .insert(id, Pending::Executor { scope, waits_on });
        self.set_timer(now.after(self.params.sync_wait), Timer::SyncWait(id));
    }

    /// Answers an executor and every request waiting on its scope, and marks the record done.
    fn finish_executor(
        &mut self,
        executor: RequestId,
        status: u16,
        rule: Rule,
        out: &mut Vec<PlatformOutput>,
    ) {
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
        let waiters: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| matches!(p, Pending::Waiter { scope: s } if *s == scope))
            .map(|(id, _)| *id)
            .collect();
        for waiter in waiters {
            self.pending.remove(&waiter);
            self.cancel_timer(&Timer::WaitTimeout(waiter));
            let response = self.resource_response(200, resource);
            respond(out, waiter, response, Rule::ConcurrentWaitSameObject);
        }
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

    // ---- upstream replies ---------------------------------------------------------

    pub(super) fn handle_upstream(
        &mut self,
        now: Millis,
        reply: UpstreamReply,
        out: &mut Vec<PlatformOutput>,
    ) {
        match reply {
            UpstreamReply::Charge { attempt, state } => self.on_charge(now, attempt, state, out),
            UpstreamReply::Refund { refund, state } => self.on_refund(now, refund, state, out),
        }
    }

    fn on_charge(
        &mut self,
        now: Millis,
        attempt: AttemptId,
        state: ChargeState,
        out: &mut Vec<PlatformOutput>,
    ) {
        let Some(a) = self.attempts.get(&attempt) else {
            return;
        };
        let payment = a.payment;
        if !a.status.is_unfinished() {
            return; // a late or duplicated answer about a settled attempt
        }
        let p = &self.payments[&payment];
        let cancel_requested = p.cancel_requested;
        let (attempt_status, known) = match state {
            ChargeState::Approved => (AttemptStatus::Succeeded, true),
            // A-UPSTREAM-VOID: "never received" is final: the reference is void upstream.
            ChargeState::Declined(_) | ChargeState::NotFound => (AttemptStatus::Failed, true),
            ChargeState::Canceled => (AttemptStatus::Canceled, true),
            ChargeState::ActionRequired => (AttemptStatus::RequiresAction, false),
            // MUTANT upstream_error_is_final (UNKNOWN-02, RES-01): a 5xx is a failure.
            ChargeState::Error if self.params.mutant == Some(Mutant::UpstreamErrorIsFinal) => {
                (AttemptStatus::Failed, true)
            }
            ChargeState::Error => (a.status, false),
        };
        let before = (p.status, p.resolution, p.failure);
        let p = self.payments.get_mut(&payment).expect("exists");
        let rule = match state {
            ChargeState::Approved => {
                // Captured: succeeded, even if a cancel is pending (A-CANCEL).
                p.status = PaymentStatus::Succeeded;
                p.resolution = ResolutionStatus::Known;
                p.cancel_requested = false;
                Rule::TerminalStatuses
            }
            ChargeState::Declined(_) | ChargeState::NotFound | ChargeState::Canceled => {
                let code = match state {
                    ChargeState::Declined(code) => code,
                    _ => FailureCode::NotReceivedByUpstream,
                };
                p.resolution = ResolutionStatus::Known;
                // A-CANCEL: an attempt that fails while a cancel is pending ends canceled.
                // A-FAILED-AFTER-EXPIRY: a failure after expires_at is `failed` all the same.
                if cancel_requested || state == ChargeState::Canceled {
                    p.status = PaymentStatus::Canceled;
                    p.cancel_requested = false;
                } else {
                    p.status = PaymentStatus::Failed;
                    p.failure = Some(Failure {
                        code,
                        attempt_id: attempt,
                    });
                }
                Rule::TerminalStatuses
            }
            // MUTANT action_required_as_succeeded (RES-05, RES-06).
            ChargeState::ActionRequired
                if self.params.mutant == Some(Mutant::ActionRequiredAsSucceeded) =>
            {
                p.status = PaymentStatus::Succeeded;
                p.resolution = ResolutionStatus::Known;
                Rule::RequiresAction
            }
            ChargeState::ActionRequired => {
                p.status = PaymentStatus::RequiresAction;
                if p.resolution == ResolutionStatus::NeedsQuery {
                    p.resolution = ResolutionStatus::Known;
                }
                Rule::RequiresAction
            }
            // MUTANT upstream_error_is_final (UNKNOWN-02, RES-01): stored as a final failure.
            ChargeState::Error if self.params.mutant == Some(Mutant::UpstreamErrorIsFinal) => {
                p.status = PaymentStatus::Failed;
                p.resolution = ResolutionStatus::Known;
                p.failure = Some(Failure {
                    code: FailureCode::NotReceivedByUpstream,
                    attempt_id: attempt,
                });
                Rule::UnknownResult
            }
            ChargeState::Error => {
                if p.resolution == ResolutionStatus::Known && p.status == PaymentStatus::Processing
                {
                    p.resolution = ResolutionStatus::NeedsQuery;
                }
                Rule::NeedsQuery
            }
        };
        let changed = (p.status, p.resolution, p.failure) != before;
        self.attempts.get_mut(&attempt).expect("exists").status = attempt_status;
        if changed {
            self.bump_payment(now, payment, rule, out);
        }
        // A-VERIFY-INTERVAL: unknown or requires_action: query again after `verify_interval`.
        if known {
            self.cancel_timer(&Timer::Verify(attempt));
        } else if !self.has_timer(&Timer::Verify(attempt)) {
            self.set_timer(
                now.after(self.params.verify_interval),
                Timer::Verify(attempt),
            );
        }
        // Answer the executors waiting on this attempt (A-STATUS-CODES: 202 when the
        // upstream gave no definite answer).
        for (executor, waits_on) in self.executors_for(attempt, payment) {
            let (status, rule) = match (waits_on, state) {
                // CANCEL-01: the upstream gave no evidence of a safe cancellation.
                (WaitsOn::Cancel { .. }, ChargeState::Error) => (202, Rule::Cancel202KeepsStatus),
                (_, ChargeState::Error) => (202, Rule::UnknownResult),
                (WaitsOn::Cancel { .. }, ChargeState::ActionRequired) => {
                    (202, Rule::Cancel202KeepsStatus)
                }
                (WaitsOn::Cancel { .. }, _) => (200, Rule::TerminalStatuses),
                (WaitsOn::Charge { created: true, .. }, _) => (201, Rule::FirstExecution201),
                (WaitsOn::Charge { created: false, .. }, _) => (200, Rule::CardRetryNewKey),
            };
            if self.params.mutant.is_some() {
                self.mutant_before_finish(now, executor, out);
            }
            self.finish_executor(executor, status, rule, out);
        }
    }

    fn on_refund(
        &mut self,
        now: Millis,
        refund: RefundId,
        state: RefundState,
        out: &mut Vec<PlatformOutput>,
    ) {
        let Some(r) = self.refunds.get_mut(&refund) else {
            return;
        };
        if r.status != RefundStatus::Processing {
            return;
        }
        let before = (r.status, r.resolution);
        match state {
            RefundState::Succeeded => {
                r.status = RefundStatus::Succeeded;
                r.resolution = ResolutionStatus::Known;
            }
            RefundState::Failed => {
                r.status = RefundStatus::Failed;
                r.resolution = ResolutionStatus::Known;
                let (payment, amount) = (r.payment, r.amount);
                // A-REFUND-LIMIT: a failed refund frees its amount.
                let p = self.payments.get_mut(&payment).expect("exists");
                p.amount_refunded -= amount;
                self.bump_payment(now, payment, Rule::WebhookPrimary, out);
            }
            // Not found or failed to answer: unknown, keep verifying; never send the refund
            // again (REFUND-01, A-REFUND-ASYNC).
            RefundState::NotFound | RefundState::Error => {
                if r.resolution == ResolutionStatus::Known {
                    r.resolution = ResolutionStatus::NeedsQuery;
                }
            }
        }
        let r = &self.refunds[&refund];
        if (r.status, r.resolution) != before {
            self.bump_refund(now, refund, Rule::RefundTimeoutNoSecondRefund, out);
        }
        // A-VERIFY-INTERVAL: a refund still processing is queried every `verify_interval`.
        if self.refunds[&refund].status != RefundStatus::Processing {
            self.cancel_timer(&Timer::VerifyRefund(refund));
        } else if !self.has_timer(&Timer::VerifyRefund(refund)) {
            self.set_timer(
                now.after(self.params.verify_interval),
                Timer::VerifyRefund(refund),
            );
        }
    }

    // ---- timers -------------------------------------------------------------------

    pub(super) fn fire(&mut self, now: Millis, timer: Timer, out: &mut Vec<PlatformOutput>) {
        match timer {
            Timer::SyncWait(executor) => self.on_sync_wait(now, executor, out),
            // CONC-03 after `concurrent_wait_timeout` (A-WAIT-TIMEOUT).
            Timer::WaitTimeout(waiter) => {
                if let Some(Pending::Waiter { .. }) = self.pending.remove(&waiter) {
                    let response =
                        ApiResponse::error(ApiError::new(ErrorCode::OperationInProgress));
                    respond(out, waiter, response, Rule::ConcurrentWaitTimeout);
                }
            }
            Timer::Verify(attempt) => self.on_verify(now, attempt, out),
            Timer::VerifyRefund(refund) => self.on_verify_refund(now, refund, out),
            Timer::Retention(scope) => {
                // RET-01: the record goes; the order and refund numbers stay (RET-02, RET-03).
                // MUTANT retention_expires_early (RET-01): a day instead of 7.
                let retention = match self.params.mutant {
                    Some(Mutant::RetentionExpiresEarly) => Mutant::EARLY_RETENTION,
                    _ => self.params.retention,
                };
                let expired = self
                    .records
                    .get(&scope)
                    .is_some_and(|r| r.created_at.after(retention) <= now);
                if expired {
                    let record = self.records.remove(&scope);
                    // MUTANT order_no_dropped_with_key (RET-02, UNIQ-01): the order number
                    // goes with the key.
                    if let (Some(Mutant::OrderNoDroppedWithKey), Some(record)) =
                        (self.params.mutant, record)
                    {
                        if let Fingerprint::CreatePayment {
                            merchant_order_no, ..
                        } = record.fingerprint
                        {
                            self.order_nos.remove(&BusinessKey {
                                merchant: scope.merchant,
                                environment: scope.environment,
                                number: merchant_order_no,
                            });
                        }
                    }
                }
            }
            Timer::PaymentExpiry(payment) => {
                // EXPIRY-01: only a Payment with nothing in progress expires. The timer
                // fires once: one processing now and failing later stays failed
                // (A-FAILED-AFTER-EXPIRY).
                let p = self.payments.get_mut(&payment).expect("exists");
                if matches!(
                    p.status,
                    PaymentStatus::RequiresPaymentMethod | PaymentStatus::Failed
                ) {
                    p.status = PaymentStatus::Expired;
                    p.resolution = ResolutionStatus::Known;
                    self.bump_payment(now, payment, Rule::ExpiryLimitsNewOpsOnly, out);
                }
            }
            Timer::WebhookRedeliver(event) => self.redeliver(now, event, out),
        }
    }

    /// UPSTREAM-01: no answer within the synchronous wait: 202, result unknown.
    fn on_sync_wait(&mut self, now: Millis, executor: RequestId, out: &mut Vec<PlatformOutput>) {
        let Some(Pending::Executor { waits_on, .. }) = self.pending.get(&executor) else {
            return;
        };
        let (attempt, rule) = match *waits_on {
            WaitsOn::Charge { attempt, .. } => (attempt, Rule::SyncWait),
            WaitsOn::Cancel { payment } => (
                self.payments[&payment]
                    .latest_attempt()
                    .expect("in progress"),
                Rule::Cancel202KeepsStatus,
            ),
        };
        let payment = self.attempts[&attempt].payment;
        let p = self.payments.get_mut(&payment).expect("exists");
        if p.status == PaymentStatus::Processing && p.resolution == ResolutionStatus::Known {
            // RES-01: the platform now verifies with the upstream.
            p.resolution = ResolutionStatus::NeedsQuery;
            self.bump_payment(now, payment, Rule::NeedsQuery, out);
        }
        // A-VERIFY-INTERVAL: the first query `verify_interval` after the 202.
        if !self.has_timer(&Timer::Verify(attempt)) {
            self.set_timer(
                now.after(self.params.verify_interval),
                Timer::Verify(attempt),
            );
        }
        if self.params.mutant.is_some() {
            self.mutant_before_finish(now, executor, out);
        }
        // A-STATUS-CODES: no upstream answer within the synchronous wait: 202.
        self.finish_executor(executor, 202, rule, out);
    }

    /// RES-01, RES-03: query the upstream about an unfinished attempt; after the automatic
    /// window, `manual_review` and a query every 24 hours, never an automatic failure.
    fn on_verify(&mut self, now: Millis, attempt: AttemptId, out: &mut Vec<PlatformOutput>) {
        let Some(a) = self.attempts.get(&attempt) else {
            return;
        };
        if !a.status.is_unfinished() {
            return;
        }
        let (payment, sent_at) = (a.payment, a.sent_at);
        let p = self.payments.get_mut(&payment).expect("exists");
        // A-CANCEL, A-VERIFY-INTERVAL: while a cancel is pending, re-send the cancel.
        let call = if p.cancel_requested {
            UpstreamCall::CancelCharge { attempt }
        } else {
            UpstreamCall::QueryCharge { attempt }
        };
        // A-AUTO-WINDOW: counted from when the charge was sent; then manual_review and a
        // query every `manual_review_requery` (RES-03).
        let window_over = now >= sent_at.after(self.params.auto_query_window);
        // MUTANT manual_review_fails_on_timer (RES-03): the window's end is a failure.
        if window_over
            && p.resolution != ResolutionStatus::ManualReview
            && self.params.mutant == Some(Mutant::ManualReviewFailsOnTimer)
        {
            p.status = PaymentStatus::Failed;
            p.resolution = ResolutionStatus::Known;
            p.failure = Some(Failure {
                code: FailureCode::NotReceivedByUpstream,
                attempt_id: attempt,
            });
            self.attempts.get_mut(&attempt).expect("exists").status = AttemptStatus::Failed;
            self.bump_payment(now, payment, Rule::ManualReview, out);
            return;
        }
        let rule = if p.resolution == ResolutionStatus::ManualReview {
            Rule::ManualReview
        } else if window_over {
            p.resolution = ResolutionStatus::ManualReview;
            self.bump_payment(now, payment, Rule::ManualReview, out);
            Rule::ManualReview
        } else {
            Rule::NeedsQuery
        };
        out.push(PlatformOutput::Upstream { call, rule });
        let next = if rule == Rule::ManualReview {
            self.params.manual_review_requery
        } else {
            self.params.verify_interval
        };
        self.set_timer(now.after(next), Timer::Verify(attempt));
    }

    fn on_verify_refund(&mut self, now: Millis, refund: RefundId, out: &mut Vec<PlatformOutput>) {
        let Some(r) = self.refunds.get_mut(&refund) else {
            return;
        };
        if r.status != RefundStatus::Processing {
            return;
        }
        // A-AUTO-WINDOW for refunds, from when the refund was sent; A-REFUND-ASYNC: a
        // refund with no answer yet is needs_query, never sent again.
        let window_over = now >= r.sent_at.after(self.params.auto_query_window);
        let target = if window_over || r.resolution == ResolutionStatus::ManualReview {
            ResolutionStatus::ManualReview
        } else {
            ResolutionStatus::NeedsQuery
        };
        let next = if target == ResolutionStatus::ManualReview {
            self.params.manual_review_requery
        } else {
            self.params.verify_interval
        };
        if r.resolution != target {
            r.resolution = target;
            self.bump_refund(now, refund, Rule::RefundTimeoutNoSecondRefund, out);
        }
        // MUTANT refund_resent_when_unknown (REFUND-01): the refund is sent again.
        let call = match self.params.mutant {
            Some(Mutant::RefundResentWhenUnknown) => {
                let r = &self.refunds[&refund];
                UpstreamCall::Refund {
                    refund,
                    attempt: r.attempt,
                    amount: r.amount,
                }
            }
            _ => UpstreamCall::QueryRefund { refund },
        };
        out.push(PlatformOutput::Upstream {
            call,
            rule: Rule::RefundTimeoutNoSecondRefund,
        });
        self.set_timer(now.after(next), Timer::VerifyRefund(refund));
    }

    // ---- versions and webhooks ----------------------------------------------------

    /// A Payment changed: new version, and a webhook (WEBHOOK-01, A-VERSION).
    fn bump_payment(
        &mut self,
        now: Millis,
        payment: PaymentId,
        rule: Rule,
        out: &mut Vec<PlatformOutput>,
    ) {
        let p = self.payments.get_mut(&payment).expect("exists");
        p.version += 1;
        let (merchant, environment) = (p.merchant, p.environment);
        let view = p.view(payment);
        let kind = Text::format(format_args!("payment.{}", view.status.as_str()));
        self.emit(
            now,
            merchant,
            environment,
            kind,
            WebhookObject::Payment(view),
            rule,
            out,
        );
    }

    fn bump_refund(
        &mut self,
        now: Millis,
        refund: RefundId,
        rule: Rule,
        out: &mut Vec<PlatformOutput>,
    ) {
        let r = self.refunds.get_mut(&refund).expect("exists");
        r.version += 1;
        let (merchant, environment) = (r.merchant, r.environment);
        let view = r.view(refund);
        let kind = Text::format(format_args!("refund.{}", view.status.as_str()));
        self.emit(
            now,
            merchant,
            environment,
            kind,
            WebhookObject::Refund(view),
            rule,
            out,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        now: Millis,
        merchant: crate::ids::MerchantId,
        environment: crate::ids::Environment,
        kind: Text,
        object: WebhookObject,
        rule: Rule,
        out: &mut Vec<PlatformOutput>,
    ) {
        self.next.event += 1;
        let event = WebhookEvent {
            id: EventId(self.next.event),
            merchant,
            environment,
            kind,
            object,
            delivery: 0,
        };
        // A-WEBHOOK-REDELIVERY: kept until acknowledged, re-delivered with doubling delays.
        if self.params.webhook_redeliveries_max > 0 {
            self.unacked.insert(
                event.id,
                UnackedWebhook {
                    event: event.clone(),
                },
            );
            self.set_timer(
                now.after(self.params.webhook_redelivery_delay),
                Timer::WebhookRedeliver(event.id),
            );
        }
        out.push(PlatformOutput::Webhook { event, rule });
    }

    /// A-WEBHOOK-REDELIVERY: re-send an unacknowledged event with doubling delays.
    fn redeliver(&mut self, now: Millis, event: EventId, out: &mut Vec<PlatformOutput>) {
        let Some(unacked) = self.unacked.get_mut(&event) else {
            return;
        };
        unacked.event.delivery += 1;
        let copy = unacked.event.clone();
        let delivery = copy.delivery;
        if delivery >= self.params.webhook_redeliveries_max {
            self.unacked.remove(&event);
        } else {
            let delay = Millis(self.params.webhook_redelivery_delay.0 << delivery);
            self.set_timer(now.after(delay), Timer::WebhookRedeliver(event));
        }
        out.push(PlatformOutput::Webhook {
            event: copy,
            rule: Rule::WebhookPrimary,
        });
    }
}

/// The bug zoo (`crate::mutants`): what a mutant does at a point where the reference
/// platform does nothing. Each method is called only with `self.params.mutant` set.
impl Platform {
    /// After an answer that executes nothing: the mutants that execute something anyway.
    pub(super) fn mutant_after_answer(
        &mut self,
        now: Millis,
        mutant: Mutant,
        id: RequestId,
        req: &ApiRequest,
        response: &ApiResponse,
        out: &mut Vec<PlatformOutput>,
    ) {
        let keyed_scope: Option<Scope> = (|| {
            let key = self.api_keys.get(&req.api_key)?;
            let route = match &req.endpoint {
                Endpoint::CreatePayment { .. } => Route::CreatePayment,
                Endpoint::ConfirmPayment { payment_id, .. } => Route::Confirm(*payment_id),
                Endpoint::CancelPayment { payment_id } => Route::Cancel(*payment_id),
                Endpoint::CreateCheckoutSession { .. } => Route::CheckoutSession,
                Endpoint::CreateRefund { .. } => Route::Refund,
                _ => return None,
            };
            let idem = req.idempotency_key.clone().filter(|k| !k.is_empty())?;
            Some(Scope {
                merchant: key.merchant,
                environment: key.environment,
                route,
                key: idem,
            })
        })();
        // MUTANT rejection_binds_key (REJECT-01) / rate_limit_binds_key (RATE-01): the
        // rejected request is stored against its key; the key is used up (a lock nobody
        // releases: the corrected retry conflicts or waits).
        if mutant.binds_rejection(response.status) {
            if let Some(scope) = keyed_scope
                .clone()
                .filter(|s| !self.records.contains_key(s))
            {
                let state = RecordState::InFlight { executor: id };
                self.bind(now, scope, Fingerprint::Cancel, state);
            }
        }
        // MUTANT pause_creates_payment (RATE-04, RATE-05): the Payment was inserted before
        // the channel pause was checked.
        if mutant == Mutant::PauseCreatesPayment
            && response.error_code() == Some(ErrorCode::TemporarilyUnavailable)
        {
            if let (
                Some(scope),
                Endpoint::CreatePayment {
                    body: Json::Parsed(b),
                },
            ) = (keyed_scope, &req.endpoint)
            {
                if let (Some(order), Some(amount), Some(currency)) =
                    (b.merchant_order_no.clone(), b.amount, b.currency.clone())
                {
                    let taken = self.order_nos.contains_key(&BusinessKey {
                        merchant: scope.merchant,
                        environment: scope.environment,
                        number: order.clone(),
                    });
                    if !taken && amount > 0 {
                        self.create_payment(now, &scope, order, amount as u64, currency);
                    }
                }
            }
        }
        // MUTANT query_triggers_charge (QUERY-04): a query of a processing payment
        // re-submits its latest charge upstream.
        if mutant == Mutant::QueryTriggersCharge && response.status == 200 {
            if let Endpoint::GetPayment { payment_id } = &req.endpoint {
                let p = &self.payments[payment_id];
                let resend = p.status == PaymentStatus::Processing;
                if let (true, Some(attempt)) = (resend, p.latest_attempt()) {
                    if let Some(&card) = self.mutant_cards.get(&attempt) {
                        let call = UpstreamCall::Charge {
                            attempt,
                            payment: *payment_id,
                            merchant: p.merchant,
                            environment: p.environment,
                            amount: p.amount,
                            currency: p.currency.clone(),
                            card,
                        };
                        out.push(PlatformOutput::Upstream {
                            call,
                            rule: Rule::QueryReadsKnownState,
                        });
                    }
                }
            }
        }
    }

    /// MUTANT cancel_reports_canceled (CANCEL-01): the Payment is canceled and answered
    /// 200 at once; the cancel still goes upstream, and the charge may still go through.
    fn mutant_cancel_at_once(
        &mut self,
        now: Millis,
        id: RequestId,
        scope: Scope,
        fingerprint: Fingerprint,
        payment: PaymentId,
        out: &mut Vec<PlatformOutput>,
    ) {
        let p = self.payments.get_mut(&payment).expect("admitted");
        p.cancel_requested = true;
        p.status = PaymentStatus::Canceled;
        p.resolution = ResolutionStatus::Known;
        let attempt = p.latest_attempt().expect("in progress has an attempt");
        out.push(PlatformOutput::Upstream {
            call: UpstreamCall::CancelCharge { attempt },
            rule: Rule::Cancel202KeepsStatus,
        });
        self.bump_payment(now, payment, Rule::Cancel202KeepsStatus, out);
        let resource = ResourceId::Payment(payment);
        self.bind(now, scope, fingerprint, RecordState::Done { resource });
        let response = self.resource_response(200, resource);
        respond(out, id, response, Rule::Cancel202KeepsStatus);
    }

    /// Right before `executor` is answered (its charge answered, or its synchronous wait
    /// ended).
    fn mutant_before_finish(
        &mut self,
        now: Millis,
        executor: RequestId,
        out: &mut Vec<PlatformOutput>,
    ) {
        let Some(Pending::Executor {
            scope,
            waits_on: WaitsOn::Charge { attempt, created },
        }) = self.pending.get(&executor).cloned()
        else {
            return;
        };
        let payment = self.attempts[&attempt].payment;
        match self.params.mutant {
            // MUTANT key_claimed_after_charge (CONC-01, REPLAY-01): the key is claimed now.
            Some(Mutant::KeyClaimedAfterCharge) if !self.records.contains_key(&scope) => {
                let p = &self.payments[&payment];
                let fingerprint = if created {
                    Fingerprint::CreatePayment {
                        merchant_order_no: p.merchant_order_no.clone(),
                        amount: p.amount,
                        currency: p.currency.clone(),
                    }
                } else {
                    Fingerprint::Confirm
                };
                let state = RecordState::InFlight { executor };
                self.bind(now, scope, fingerprint, state);
            }
            // MUTANT order_no_check_not_atomic (UNIQ-01): the order number is committed now.
            Some(Mutant::OrderNoCheckNotAtomic) if created => {
                let p = &self.payments[&payment];
                let business = BusinessKey {
                    merchant: p.merchant,
                    environment: p.environment,
                    number: p.merchant_order_no.clone(),
                };
                self.order_nos.entry(business).or_insert(payment);
            }
            // MUTANT waiter_reexecutes (CONC-02, EFFECT-01): the requests waiting on this
            // scope run the operation again (a new attempt with the kept card) instead of
            // reading the stored result; each becomes the executor of its own attempt.
            Some(Mutant::WaiterReexecutes) => {
                let Some(&card) = self.mutant_cards.get(&attempt) else {
                    return;
                };
                let waiters: Vec<RequestId> = self
                    .pending
                    .iter()
                    .filter(|(_, p)| matches!(p, Pending::Waiter { scope: s } if *s == scope))
                    .map(|(id, _)| *id)
                    .collect();
                for waiter in waiters {
                    self.pending.remove(&waiter);
                    self.cancel_timer(&Timer::WaitTimeout(waiter));
                    let again = self.start_attempt(now, payment, card, false, out);
                    let waits_on = WaitsOn::Charge {
                        attempt: again,
                        created: false,
                    };
                    self.await_upstream(now, waiter, scope.clone(), waits_on);
                }
            }
            _ => {}
        }
    }
}

fn respond(out: &mut Vec<PlatformOutput>, to: RequestId, response: ApiResponse, rule: Rule) {
    out.push(PlatformOutput::Response { to, response, rule });
}
