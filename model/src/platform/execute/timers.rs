//! What the platform's timers do when they fire (the timer set itself is in `mod.rs`).

use super::respond;
use crate::api::{ApiError, ApiResponse, ErrorCode, PaymentStatus, ResolutionStatus};
use crate::ids::PaymentId;
use crate::platform::Hook;
use crate::platform::Out;
use crate::platform::state::*;
use crate::platform::{Platform, Timer};
use crate::rules::Rule;
use crate::time::Millis;

impl Platform {
    /// Fires one due timer.
    pub(crate) fn fire(&mut self, now: Millis, timer: Timer, out: &mut Out) {
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
            Timer::Retention(scope) => self.on_retention(now, scope, out),
            Timer::PaymentExpiry(payment) => self.on_payment_expiry(now, payment, out),
            Timer::WebhookRedeliver(event) => self.redeliver(now, event, out),
            Timer::RefundReview(refund) => self.on_refund_review(now, refund, out),
        }
    }

    /// RET-01: the record goes; the order and refund numbers stay (RET-02, RET-03).
    fn on_retention(&mut self, now: Millis, scope: Scope, out: &mut Out) {
        let retention = self.variant.retention(&self.params);
        let expired = self
            .records
            .get(&scope)
            .is_some_and(|r| r.created_at.after(retention) <= now);
        if expired {
            if let Some(record) = self.records.remove(&scope) {
                // A-CONFIRM-RETENTION: the key is remembered as past its retention.
                if matches!(scope.route, Route::Confirm(_)) {
                    self.retired_confirms.insert(scope.clone());
                }
                let expired = Hook::RecordExpired {
                    scope: &scope,
                    record: &record,
                };
                self.hook(now, expired, out);
            }
        }
    }

    /// EXPIRY-01: only a Payment with nothing in progress expires (A-EXPIRY-STATUSES:
    /// requires_payment_method and failed; processing and requires_action go on). The timer fires once:
    /// one processing now and failing later stays failed (A-FAILED-AFTER-EXPIRY).
    fn on_payment_expiry(&mut self, now: Millis, payment: PaymentId, out: &mut Out) {
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
}
