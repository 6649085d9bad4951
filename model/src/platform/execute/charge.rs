//! Charges: a create or confirm with a card sends one upstream, waits for it at most
//! `sync_wait`, reads its answer, and verifies an unknown or unfinished result until the
//! upstream says how it ended.

use crate::acquirer::{ChargeState, UpstreamCall};
use crate::api::{Failure, FailureCode, PaymentStatus, ResolutionStatus};
use crate::ids::{AttemptId, Card, PaymentId, RequestId};
use crate::platform::Hook;
use crate::platform::Out;
use crate::platform::state::*;
use crate::platform::variant::WindowEnd;
use crate::platform::{Platform, PlatformOutput, Timer};
use crate::rules::Rule;
use crate::time::Millis;

/// What an upstream answer about a charge makes of its attempt and its Payment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reading {
    pub attempt: AttemptStatus,
    /// The answer is final: the platform stops verifying (A-VERIFY-INTERVAL).
    pub known: bool,
    pub status: PaymentStatus,
    pub resolution: ResolutionStatus,
    pub failure: Option<Failure>,
    pub cancel_requested: bool,
    /// The rule of the Payment's new version, if it changed.
    pub rule: Rule,
}

/// The contract's reading of `state` for `attempt` (now `current`) of Payment `p`.
fn contract_reading(
    state: ChargeState,
    attempt: AttemptId,
    current: AttemptStatus,
    p: &Payment,
) -> Reading {
    let unchanged = Reading {
        attempt: current,
        known: false,
        status: p.status,
        resolution: p.resolution,
        failure: p.failure,
        cancel_requested: p.cancel_requested,
        rule: Rule::NeedsQuery,
    };
    match state {
        // Captured: succeeded, even if a cancel is pending (A-CANCEL).
        ChargeState::Approved => Reading {
            attempt: AttemptStatus::Succeeded,
            known: true,
            status: PaymentStatus::Succeeded,
            resolution: ResolutionStatus::Known,
            cancel_requested: false,
            rule: Rule::TerminalStatuses,
            ..unchanged
        },
        ChargeState::Declined(_) | ChargeState::NotFound | ChargeState::Canceled => {
            ended_reading(state, attempt, unchanged)
        }
        // RES-05: the payer must authenticate; not final, keep verifying.
        ChargeState::ActionRequired => Reading {
            attempt: AttemptStatus::RequiresAction,
            status: PaymentStatus::RequiresAction,
            resolution: match p.resolution {
                ResolutionStatus::NeedsQuery => ResolutionStatus::Known,
                other => other,
            },
            rule: Rule::RequiresAction,
            ..unchanged
        },
        // UNKNOWN-02, RES-01: an upstream 5xx is "result unknown": keep verifying.
        ChargeState::Error => Reading {
            resolution: if p.resolution == ResolutionStatus::Known
                && p.status == PaymentStatus::Processing
            {
                ResolutionStatus::NeedsQuery
            } else {
                p.resolution
            },
            ..unchanged
        },
    }
}

/// The contract's reading of an attempt the upstream ended without a capture.
/// A-UPSTREAM-VOID: "never received" is final: the reference is void upstream.
/// A-CANCEL: an attempt that fails while a cancel is pending ends canceled.
/// A-FAILED-AFTER-EXPIRY: a failure after expires_at is `failed` all the same.
fn ended_reading(state: ChargeState, attempt: AttemptId, unchanged: Reading) -> Reading {
    let code = match state {
        ChargeState::Declined(code) => code,
        _ => FailureCode::NotReceivedByUpstream,
    };
    let ended = Reading {
        attempt: match state {
            ChargeState::Canceled => AttemptStatus::Canceled,
            _ => AttemptStatus::Failed,
        },
        known: true,
        resolution: ResolutionStatus::Known,
        rule: Rule::TerminalStatuses,
        ..unchanged
    };
    if unchanged.cancel_requested || state == ChargeState::Canceled {
        Reading {
            status: PaymentStatus::Canceled,
            cancel_requested: false,
            ..ended
        }
    } else {
        Reading {
            status: PaymentStatus::Failed,
            failure: Some(Failure {
                code,
                attempt_id: attempt,
            }),
            ..ended
        }
    }
}

impl Platform {
    /// A create (`created`) or confirm with a card: claim the key, send the charge, wait.
    /// EFFECT-02 (S6, "一次扣款、一次计费"): one execution, one charge, billed at the
    /// Payment's one fee-rate snapshot; a replay reaches none of this.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn execute_charge(
        &mut self,
        now: Millis,
        id: RequestId,
        claim: Claim,
        payment: PaymentId,
        card: Card,
        created: bool,
        out: &mut Out,
    ) {
        // CONC-01: this request now holds the right to execute under `scope`.
        // EFFECT-01, UNKNOWN-01: the record is written before anything reaches the upstream,
        // so whatever the merchant then sees (a timeout, a 5xx, a 202) a retry with the same
        // key finds this execution and never starts a second one.
        if self.variant.claims_key_before_charge() {
            let in_flight = RecordState::InFlight { executor: id };
            self.bind(now, claim.clone(), in_flight);
        }
        let attempt = self.start_attempt(now, payment, card, created, out);
        let waits_on = WaitsOn::Charge { attempt, created };
        self.await_upstream(now, id, claim.scope, waits_on);
    }

    /// Adds an attempt and sends its charge. The card goes to the upstream and nowhere
    /// else (CARD-02). `fresh`: the Payment was created by this same request, so its
    /// first version already shows the attempt; otherwise the change is a new version.
    pub(crate) fn start_attempt(
        &mut self,
        now: Millis,
        payment: PaymentId,
        card: Card,
        fresh: bool,
        out: &mut Out,
    ) -> AttemptId {
        self.next.attempt += 1;
        let attempt = AttemptId(self.next.attempt);
        let p = self.payments.get_mut(&payment).expect("exists");
        p.attempts.push(attempt);
        p.status = PaymentStatus::Processing;
        p.resolution = ResolutionStatus::Known;
        p.failure = None;
        let call = p.charge(payment, attempt, card);
        self.attempts.insert(
            attempt,
            Attempt {
                payment,
                status: AttemptStatus::Processing,
                sent_at: now,
            },
        );
        self.hook(now, Hook::ChargeSent { attempt, card }, out);
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

    /// The upstream answers about `attempt`'s charge.
    pub(super) fn on_charge(
        &mut self,
        now: Millis,
        attempt: AttemptId,
        state: ChargeState,
        out: &mut Out,
    ) {
        let Some(a) = self.attempts.get(&attempt) else {
            return;
        };
        let payment = a.payment;
        if !a.status.is_unfinished() {
            return; // a late or duplicated answer about a settled attempt
        }
        let p = &self.payments[&payment];
        let before = (p.status, p.resolution, p.failure);
        let contract = contract_reading(state, attempt, a.status, p);
        let reading = self
            .variant
            .read_charge(state, attempt, &p.attempts, contract);
        let p = self.payments.get_mut(&payment).expect("exists");
        p.status = reading.status;
        p.resolution = reading.resolution;
        p.failure = reading.failure;
        p.cancel_requested = reading.cancel_requested;
        let changed = (p.status, p.resolution, p.failure) != before;
        self.attempts.get_mut(&attempt).expect("exists").status = reading.attempt;
        if changed {
            self.bump_payment(now, payment, reading.rule, out);
        }
        // A-VERIFY-INTERVAL: unknown or requires_action: query again after `verify_interval`.
        if reading.known {
            self.cancel_timer(&Timer::Verify(attempt));
        } else {
            self.arm_verify(now, attempt);
        }
        self.answer_charge_executors(now, attempt, payment, state, out);
    }

    /// Answers the executors waiting on this attempt (A-STATUS-CODES: 202 when the
    /// upstream gave no definite answer).
    fn answer_charge_executors(
        &mut self,
        now: Millis,
        attempt: AttemptId,
        payment: PaymentId,
        state: ChargeState,
        out: &mut Out,
    ) {
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
            self.hook(now, Hook::Finishing { executor }, out);
            self.finish_executor(executor, status, rule, out);
        }
    }

    /// UPSTREAM-01: no answer within the synchronous wait: 202, result unknown.
    pub(super) fn on_sync_wait(&mut self, now: Millis, executor: RequestId, out: &mut Out) {
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
            p.resolution = self.variant.unknown_resolution();
            self.bump_payment(now, payment, Rule::NeedsQuery, out);
        }
        // A-VERIFY-INTERVAL: the first query `verify_interval` after the 202.
        self.arm_verify(now, attempt);
        self.hook(now, Hook::Finishing { executor }, out);
        // A-STATUS-CODES: no upstream answer within the synchronous wait: 202.
        self.finish_executor(executor, 202, rule, out);
    }

    /// A query of `attempt` `verify_interval` from now, unless one is set.
    fn arm_verify(&mut self, now: Millis, attempt: AttemptId) {
        let at = now.after(self.variant.verify_interval(&self.params));
        self.set_timer_unless_set(at, Timer::Verify(attempt));
    }

    /// RES-01, RES-03: query the upstream about an unfinished attempt; after the automatic
    /// window, `manual_review` and a query every 24 hours, never an automatic failure.
    pub(super) fn on_verify(&mut self, now: Millis, attempt: AttemptId, out: &mut Out) {
        let Some(a) = self.attempts.get(&attempt) else {
            return;
        };
        if !a.status.is_unfinished() {
            return;
        }
        let (payment, sent_at) = (a.payment, a.sent_at);
        // A-MANUAL-REVIEW-END: the daily re-query ends only where the parameter says.
        let ended = self
            .params
            .manual_review_until
            .is_some_and(|d| now > sent_at.after(d));
        if ended && self.payments[&payment].resolution == ResolutionStatus::ManualReview {
            return;
        }
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
        if window_over
            && p.resolution != ResolutionStatus::ManualReview
            && self.variant.window_end() == WindowEnd::Failure
        {
            self.hook(now, Hook::WindowEndsInFailure { attempt, payment }, out);
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
            self.variant.verify_interval(&self.params)
        };
        self.set_timer(now.after(next), Timer::Verify(attempt));
    }
}
