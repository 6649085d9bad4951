//! The bug zoo's extra behaviour: what a planted bug ([`Mutant`]) does where the
//! reference platform does nothing, or does instead of the reference's step.
//!
//! Execution calls [`Platform::hook`] at fixed points ([`Hook`]); under the reference
//! variant it returns at once. Decisions the reference makes too (how a record is looked
//! up, the attempt limit, …) are not here but in `variant.rs`.
//!
//! Two mutants need the card after the upstream call that used it (to charge again):
//! only under them does the platform keep it ([`keeps_cards`]), which breaks CARD-02 on
//! top of the rules they are about.

use super::execute::respond;
use super::state::*;
use super::{Platform, PlatformOutput};
use crate::acquirer::UpstreamCall;
use crate::api::{
    ApiRequest, ApiResponse, Endpoint, ErrorCode, Failure, FailureCode, Json, PaymentStatus,
    ResolutionStatus,
};
use crate::ids::{AttemptId, Card, PaymentId, RequestId, ResourceId};
use crate::mutants::Mutant;
use crate::platform::Out;
use crate::rules::Rule;
use crate::time::Millis;

/// A point in execution where a planted bug may act.
pub(super) enum Hook<'a> {
    /// A request was answered without executing anything (before the answer leaves).
    Answered {
        id: RequestId,
        request: &'a ApiRequest,
        response: &'a ApiResponse,
    },
    /// A charge with `card` was sent upstream for `attempt`.
    ChargeSent { attempt: AttemptId, card: Card },
    /// `executor` is about to be answered (its charge answered, or its wait ended).
    Finishing { executor: RequestId },
    /// An idempotency record's retention ended and it was removed.
    RecordExpired {
        scope: &'a Scope,
        record: &'a IdempotencyRecord,
    },
    /// A confirm key past its retention answered as not new business (its card is the
    /// request's, still in hand).
    NotNewBusiness { payment: PaymentId, card: Card },
    /// Cancel of an unfinished Payment, answered at once
    /// ([`super::variant::CancelAnswer::CanceledAtOnce`]).
    CancelAtOnce {
        id: RequestId,
        claim: Claim,
        payment: PaymentId,
    },
    /// The automatic query window of `attempt` ended in a failure
    /// ([`super::variant::WindowEnd::Failure`]).
    WindowEndsInFailure {
        attempt: AttemptId,
        payment: PaymentId,
    },
}

/// Whether the platform keeps the card after its upstream call under `mutant` (it
/// charges again later; CARD-02 is broken as a side effect).
fn keeps_cards(mutant: Mutant) -> bool {
    matches!(
        mutant,
        Mutant::WaiterReexecutes | Mutant::QueryTriggersCharge
    )
}

/// Whether a rejection with HTTP `status` is stored against its key under `mutant`.
fn binds_rejection(mutant: Mutant, status: u16) -> bool {
    match mutant {
        Mutant::RejectionBindsKey => matches!(status, 400 | 403 | 422),
        Mutant::RateLimitBindsKey => status == 429,
        _ => false,
    }
}

impl Platform {
    /// The one seam from execution into the bug zoo: what the planted bug does at `hook`.
    /// Nothing for the reference platform.
    pub(super) fn hook(&mut self, now: Millis, hook: Hook<'_>, out: &mut Out) {
        let Some(mutant) = self.variant.mutant() else {
            return;
        };
        match hook {
            Hook::Answered {
                id,
                request,
                response,
            } => self.after_answer(now, mutant, id, request, response, out),
            Hook::ChargeSent { attempt, card } => {
                if keeps_cards(mutant) {
                    self.kept_cards.insert(attempt, card);
                }
            }
            Hook::Finishing { executor } => self.before_finish(now, mutant, executor, out),
            Hook::RecordExpired { scope, record } => {
                if mutant == Mutant::OrderNoDroppedWithKey {
                    self.drop_order_no(scope, record);
                }
            }
            Hook::NotNewBusiness { payment, card } => {
                // MUTANT retention_replay_charged_anyway (RET-01, A-CONFIRM-RETENTION): the
                // replay is answered as not new business, and its card charged all the same.
                if mutant == Mutant::RetentionReplayChargedAnyway {
                    self.start_attempt(now, payment, card, false, out);
                }
            }
            Hook::CancelAtOnce { id, claim, payment } => {
                self.cancel_at_once(now, id, claim, payment, out)
            }
            Hook::WindowEndsInFailure { attempt, payment } => {
                self.fail_at_window_end(now, attempt, payment, out)
            }
        }
    }

    /// After an answer that executes nothing: the mutants that execute something anyway.
    fn after_answer(
        &mut self,
        now: Millis,
        mutant: Mutant,
        id: RequestId,
        req: &ApiRequest,
        response: &ApiResponse,
        out: &mut Out,
    ) {
        let keyed_scope = self.keyed_scope(req);
        // MUTANT rejection_binds_key (REJECT-01) / rate_limit_binds_key (RATE-01): the
        // rejected request is stored against its key; the key is used up (a lock nobody
        // releases: the corrected retry conflicts or waits).
        if binds_rejection(mutant, response.status) {
            if let Some(scope) = keyed_scope
                .clone()
                .filter(|s| !self.records.contains_key(s))
            {
                let state = RecordState::InFlight { executor: id };
                let fingerprint = Fingerprint::Cancel;
                self.bind(now, Claim { scope, fingerprint }, state);
            }
        }
        // MUTANT pause_creates_payment (RATE-04, RATE-05): the Payment was inserted before
        // the channel pause was checked.
        if mutant == Mutant::PauseCreatesPayment
            && response.error_code() == Some(ErrorCode::TemporarilyUnavailable)
        {
            if let Some(scope) = keyed_scope {
                self.create_paused_payment(now, &scope, req);
            }
        }
        // MUTANT query_triggers_charge (QUERY-04): a query of a processing payment
        // re-submits its latest charge upstream.
        if mutant == Mutant::QueryTriggersCharge && response.status == 200 {
            if let Endpoint::GetPayment { payment_id } = &req.endpoint {
                self.charge_again(*payment_id, out);
            }
        }
    }

    /// The idempotency scope a POST would have, from its API key, route and key.
    fn keyed_scope(&self, req: &ApiRequest) -> Option<Scope> {
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
    }

    /// MUTANT pause_creates_payment: the create answered 503 inserts its Payment.
    fn create_paused_payment(&mut self, now: Millis, scope: &Scope, req: &ApiRequest) {
        let Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } = &req.endpoint
        else {
            return;
        };
        if let (Some(order), Some(amount), Some(currency)) =
            (b.merchant_order_no.clone(), b.amount, b.currency.clone())
        {
            let taken = self
                .order_nos
                .contains_key(&BusinessKey::of(scope, order.clone()));
            if !taken && amount > 0 {
                self.create_payment(now, scope, order, amount as u64, currency);
            }
        }
    }

    /// MUTANT query_triggers_charge: the latest charge of a processing Payment is sent
    /// again with the kept card.
    fn charge_again(&mut self, payment: PaymentId, out: &mut Out) {
        let p = &self.payments[&payment];
        let resend = p.status == PaymentStatus::Processing;
        if let (true, Some(attempt)) = (resend, p.latest_attempt()) {
            if let Some(&card) = self.kept_cards.get(&attempt) {
                out.push(PlatformOutput::Upstream {
                    call: p.charge(payment, attempt, card),
                    rule: Rule::QueryReadsKnownState,
                });
            }
        }
    }

    /// MUTANT order_no_dropped_with_key (RET-02, UNIQ-01): the order number goes with
    /// the key.
    fn drop_order_no(&mut self, scope: &Scope, record: &IdempotencyRecord) {
        if let Fingerprint::CreatePayment {
            merchant_order_no, ..
        } = &record.fingerprint
        {
            self.order_nos
                .remove(&BusinessKey::of(scope, merchant_order_no.clone()));
        }
    }

    /// MUTANT cancel_reports_canceled (CANCEL-01): the Payment is canceled and answered
    /// 200 at once; the cancel still goes upstream, and the charge may still go through.
    fn cancel_at_once(
        &mut self,
        now: Millis,
        id: RequestId,
        claim: Claim,
        payment: PaymentId,
        out: &mut Out,
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
        self.bind(now, claim, RecordState::Done { resource });
        let response = self.resource_response(200, resource);
        respond(out, id, response, Rule::Cancel202KeepsStatus);
    }

    /// MUTANT manual_review_fails_on_timer (RES-03): the window's end is a failure.
    fn fail_at_window_end(
        &mut self,
        now: Millis,
        attempt: AttemptId,
        payment: PaymentId,
        out: &mut Out,
    ) {
        let p = self.payments.get_mut(&payment).expect("exists");
        p.status = PaymentStatus::Failed;
        p.resolution = ResolutionStatus::Known;
        p.failure = Some(Failure {
            code: FailureCode::NotReceivedByUpstream,
            attempt_id: attempt,
        });
        self.attempts.get_mut(&attempt).expect("exists").status = AttemptStatus::Failed;
        self.bump_payment(now, payment, Rule::ManualReview, out);
    }

    /// Right before `executor` is answered (its charge answered, or its synchronous wait
    /// ended).
    fn before_finish(&mut self, now: Millis, mutant: Mutant, executor: RequestId, out: &mut Out) {
        if mutant == Mutant::CancelAcceptedMarksCanceled {
            self.cancel_marked_before_202(now, executor, out);
            return;
        }
        let Some(Pending::Executor {
            scope,
            waits_on: WaitsOn::Charge { attempt, created },
        }) = self.pending.get(&executor).cloned()
        else {
            return;
        };
        let payment = self.attempts[&attempt].payment;
        match mutant {
            // MUTANT key_claimed_after_charge (CONC-01, REPLAY-01): the key is claimed now.
            Mutant::KeyClaimedAfterCharge if !self.records.contains_key(&scope) => {
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
                self.bind(now, Claim { scope, fingerprint }, state);
            }
            // MUTANT order_no_check_not_atomic (UNIQ-01): the order number is committed now.
            Mutant::OrderNoCheckNotAtomic if created => {
                let p = &self.payments[&payment];
                let business =
                    BusinessKey::new(p.merchant, p.environment, p.merchant_order_no.clone());
                self.order_nos.entry(business).or_insert(payment);
            }
            // MUTANT waiter_reexecutes (CONC-02, EFFECT-01): the requests waiting on this
            // scope run the operation again (a new attempt with the kept card) instead of
            // reading the stored result; each becomes the executor of its own attempt.
            Mutant::WaiterReexecutes => self.reexecute_waiters(now, &scope, attempt, out),
            _ => {}
        }
    }

    /// MUTANT cancel_202_marks_canceled (CANCEL-01): a cancel about to be answered 202
    /// (its Payment still in progress: the upstream gave no evidence) marks the Payment
    /// canceled first, while its charge may still go through.
    fn cancel_marked_before_202(&mut self, now: Millis, executor: RequestId, out: &mut Out) {
        let Some(Pending::Executor {
            waits_on: WaitsOn::Cancel { payment },
            ..
        }) = self.pending.get(&executor).cloned()
        else {
            return;
        };
        let p = self.payments.get_mut(&payment).expect("exists");
        if p.status.is_in_progress() {
            p.status = PaymentStatus::Canceled;
            p.resolution = ResolutionStatus::Known;
            self.bump_payment(now, payment, Rule::Cancel202KeepsStatus, out);
        }
    }

    /// MUTANT waiter_reexecutes: each waiter on `scope` starts a new attempt of the
    /// Payment of `attempt` with its kept card.
    fn reexecute_waiters(&mut self, now: Millis, scope: &Scope, attempt: AttemptId, out: &mut Out) {
        let Some(&card) = self.kept_cards.get(&attempt) else {
            return;
        };
        let payment = self.attempts[&attempt].payment;
        for waiter in self.take_waiters(scope) {
            let again = self.start_attempt(now, payment, card, false, out);
            let waits_on = WaitsOn::Charge {
                attempt: again,
                created: false,
            };
            self.await_upstream(now, waiter, scope.clone(), waits_on);
        }
    }
}
