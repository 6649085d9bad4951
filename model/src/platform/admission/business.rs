//! A request with a fresh idempotency scope: the channel pause, then the business checks
//! (order and refund numbers, attempt rules, what can be canceled or refunded).

use super::{
    Admission, Fork, NewOp, order_no_conflict, refund_no_conflict_response, reject, reject_with,
};
use crate::api::{ApiError, ApiResponse, ErrorCode, Field, PaymentStatus};
use crate::ids::{PaymentId, ResourceId};
use crate::platform::Platform;
use crate::platform::state::{BusinessKey, Claim};
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;

impl Platform {
    /// A request with a fresh scope: channel pause, then the business checks; a new
    /// execution if they all pass.
    pub(super) fn admit_new(
        &self,
        now: Millis,
        claim: Claim,
        op: NewOp,
    ) -> Result<Admission, Admission> {
        let new_transaction = matches!(
            op,
            NewOp::CreatePayment { .. } | NewOp::Confirm { .. } | NewOp::CheckoutSession { .. }
        );
        // A-PAUSE-SCOPE: create, confirm and checkout session with a key that has no record
        // yet, before the business checks (S4 and S8 requests get 503 too); cancel, refunds,
        // queries and keys with a record were answered or go on.
        if new_transaction && self.channel_paused {
            // RATE-04: not accepted, no Payment, no reason given. RATE-05: the platform's
            // only 5xx, answered before any record or execution exists, so it alone means
            // "not accepted"; any other 5xx a merchant sees comes after acceptance may have
            // happened (UNKNOWN-01).
            return Err(reject(
                ErrorCode::TemporarilyUnavailable,
                Rule::ChannelPaused,
            ));
        }
        match &op {
            NewOp::CreatePayment {
                merchant_order_no,
                amount,
                currency,
                ..
            } => self.check_order_no(&claim, merchant_order_no, *amount, currency)?,
            NewOp::Confirm { payment, .. } => self.check_confirm(now, *payment)?,
            NewOp::Cancel { payment } => self.check_cancel(*payment)?,
            NewOp::CheckoutSession {
                merchant_order_no,
                amount,
                currency,
                ..
            } => self.check_session_order(&claim, merchant_order_no, *amount, currency)?,
            NewOp::Refund {
                payment,
                merchant_refund_no,
                amount,
            } => self.check_refund(&claim, *payment, merchant_refund_no, *amount)?,
        }
        // RET-01, A-CONFIRM-RETENTION: a confirm under a key whose record's retention has
        // passed, that would start a new attempt: new business or not, both explored.
        if matches!(op, NewOp::Confirm { .. }) && self.retired_confirms.contains(&claim.scope) {
            return Ok(Admission::Fork(Fork::ConfirmPastRetention { claim, op }));
        }
        Ok(Admission::Execute { claim, op })
    }

    /// UNIQ-01, ORDER-01: a new key for a used order number.
    fn check_order_no(
        &self,
        claim: &Claim,
        merchant_order_no: &Text,
        amount: u64,
        currency: &Text,
    ) -> Result<(), Admission> {
        let key = BusinessKey::of(&claim.scope, merchant_order_no.clone());
        let Some(&existing) = self.order_nos.get(&key) else {
            return Ok(());
        };
        let p = &self.payments[&existing];
        if p.amount == amount && p.currency == *currency {
            // ORDER-01 / S4: "the existing object identifier or a conflict"
            // (A-S4-BRANCH: both are explored).
            let claim = claim.clone();
            return Err(Admission::Fork(Fork::OrderNoReuse { claim, existing }));
        }
        // UNIQ-01: a different amount or currency under a used order number is
        // always a conflict, never a branch (A-S4-PARAMS).
        Err(order_no_conflict(existing))
    }

    /// The attempt rules of a card retry (ATTEMPT-01..ATTEMPT-05).
    fn check_confirm(&self, now: Millis, payment: PaymentId) -> Result<(), Admission> {
        let p = &self.payments[&payment];
        let one_unfinished = self.variant.one_unfinished_attempt();
        if p.status == PaymentStatus::Processing && one_unfinished {
            // ATTEMPT-01 / S8 (UNIQ-02: never a second unfinished attempt);
            // A-S8-BRANCH: 409 payment_in_progress or the original status. The card-retry
            // section allows only the 409 (A-S8-CARD-RETRY): both readings are explored.
            return Err(Admission::Fork(Fork::ConfirmWhileProcessing { payment }));
        }
        if p.status == PaymentStatus::RequiresAction && one_unfinished {
            // ATTEMPT-01, card-retry section: "rejected (409 payment_in_progress)". S8
            // speaks of processing only, so requires_action gets the 409 alone
            // (A-S8-CARD-RETRY); the key is left free (A-S8-NOBIND).
            let error =
                ApiError::new(ErrorCode::PaymentInProgress).related(ResourceId::Payment(payment));
            return Err(Admission::Answer(
                ApiResponse::error(error),
                Rule::ConfirmWhileProcessing,
            ));
        }
        // ATTEMPT-04: only before expires_at.
        let before_expiry = self.variant.retries_before_expiry();
        match p.status {
            // ATTEMPT-02: after a definitive failure. A-STATUS-RPM: the first confirm of a
            // Payment without an attempt.
            PaymentStatus::Failed | PaymentStatus::RequiresPaymentMethod => {}
            PaymentStatus::Processing | PaymentStatus::RequiresAction if !one_unfinished => {}
            PaymentStatus::Expired if !before_expiry => {}
            PaymentStatus::Expired => {
                return Err(reject(
                    ErrorCode::PaymentExpired,
                    Rule::CardRetryBeforeExpiry,
                ));
            }
            _ => {
                return Err(reject(
                    ErrorCode::PaymentNotConfirmable,
                    Rule::CardRetryAfterFailure,
                ));
            }
        }
        // A-FAILED-AFTER-EXPIRY: a Payment that failed after expires_at stays
        // failed, never expired; a confirm of it is still past expires_at.
        if now >= p.expires_at && before_expiry {
            return Err(reject(
                ErrorCode::PaymentExpired,
                Rule::CardRetryBeforeExpiry,
            ));
        }
        // ATTEMPT-05: at most `attempts_max` attempts (the contract's default 3).
        if p.attempts.len() >= self.variant.attempts_max(&self.params) {
            return Err(reject(ErrorCode::AttemptsExhausted, Rule::AttemptsMax));
        }
        Ok(())
    }

    /// A-CANCEL: succeeded or expired get 422; canceled is returned (200) without
    /// binding the key; the rest execute.
    fn check_cancel(&self, payment: PaymentId) -> Result<(), Admission> {
        match self.payments[&payment].status {
            PaymentStatus::Succeeded | PaymentStatus::Expired => Err(reject(
                ErrorCode::PaymentNotCancelable,
                Rule::RejectionsDoNotOccupyKey,
            )),
            PaymentStatus::Canceled => Err(Admission::Answer(
                self.resource_response(200, ResourceId::Payment(payment)),
                Rule::Cancel202KeepsStatus,
            )),
            _ => Ok(()),
        }
    }

    /// Sessions of an existing order were resolved in `validate` (CKO-01): a new key with
    /// the same order number, amount and currency is a new session for the same Payment,
    /// never a conflict (A-CKO-ANY-STATUS); for an expired Payment it is that or 422
    /// payment_expired (EXPIRY-01), both explored. Only another amount or currency under
    /// a used order number conflicts (A-CKO-CONFLICT).
    fn check_session_order(
        &self,
        claim: &Claim,
        merchant_order_no: &Text,
        amount: u64,
        currency: &Text,
    ) -> Result<(), Admission> {
        let key = BusinessKey::of(&claim.scope, merchant_order_no.clone());
        if let Some(&existing) = self.order_nos.get(&key) {
            let p = &self.payments[&existing];
            if p.amount != amount || p.currency != *currency {
                return Err(order_no_conflict(existing));
            }
            if p.status == PaymentStatus::Expired {
                return Err(Admission::Fork(Fork::SessionOfExpired {
                    claim: claim.clone(),
                    order: (merchant_order_no.clone(), amount, currency.clone()),
                    existing,
                }));
            }
        }
        Ok(())
    }

    /// UNIQ-04, REFUND-03: a refund number once, a refund of a succeeded Payment, never
    /// beyond what was captured.
    fn check_refund(
        &self,
        claim: &Claim,
        payment: PaymentId,
        merchant_refund_no: &Text,
        amount: u64,
    ) -> Result<(), Admission> {
        let key = BusinessKey::of(&claim.scope, merchant_refund_no.clone());
        if let Some(&existing) = self
            .refund_nos
            .get(&key)
            .filter(|_| self.variant.refund_no_unique())
        {
            // UNIQ-04, RET-03: the refund number outlives the key. The same Payment and
            // amount: "the existing object or a conflict", both explored
            // (A-REFUND-NO-BRANCH); another Payment or amount always conflicts
            // (A-REFUND-NO-PARAMS). The code refund_no_conflict is A-ERROR-CODES.
            let r = &self.refunds[&existing];
            if r.payment == payment && r.amount == amount {
                let claim = claim.clone();
                return Err(Admission::Fork(Fork::RefundNoReuse { claim, existing }));
            }
            return Err(Admission::Answer(
                refund_no_conflict_response(existing),
                Rule::UniqueRefundNo,
            ));
        }
        let p = &self.payments[&payment];
        if p.status != PaymentStatus::Succeeded {
            return Err(reject(
                ErrorCode::PaymentNotRefundable,
                Rule::RejectionsDoNotOccupyKey,
            ));
        }
        // A-REFUND-LIMIT: processing and succeeded refunds together (`amount_refunded`)
        // never exceed the Payment's amount.
        if p.amount_refunded + amount > p.amount && self.variant.refunds_within_captured() {
            return Err(reject_with(
                ErrorCode::RefundAmountExceeded,
                Some(Field::Amount),
                Rule::RefundNotBeyondCaptured,
            ));
        }
        Ok(())
    }
}
