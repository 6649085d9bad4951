//! Refunds: sent upstream once (REFUND-01), answered 201 processing at once
//! (A-REFUND-ASYNC), then verified by queries until the upstream says how they ended.

use super::respond;
use crate::acquirer::{RefundState, UpstreamCall};
use crate::api::{RefundStatus, ResolutionStatus};
use crate::cow::Journaled;
use crate::ids::{PaymentId, RefundId, RequestId, ResourceId};
use crate::platform::Out;
use crate::platform::state::*;
use crate::platform::{Platform, PlatformOutput, Timer};
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;

impl Platform {
    /// Executes a refund of `amount` of `payment` under `merchant_refund_no`.
    pub(super) fn execute_refund(
        &mut self,
        now: Millis,
        id: RequestId,
        claim: Claim,
        payment: PaymentId,
        (merchant_refund_no, amount): (Text, u64),
        out: &mut Out,
    ) {
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
        // UNIQ-04: the refund number is bound for good (RET-03).
        self.refund_nos.insert(
            BusinessKey::of(&claim.scope, merchant_refund_no.clone()),
            refund,
        );
        // A-REFUND-REVIEW: a refund of at least `refund_review_from` waits for review
        // (pending_review, 201) and is sent upstream when the review ends.
        let review = amount >= self.params.refund_review_from;
        let status = if review {
            RefundStatus::PendingReview
        } else {
            RefundStatus::Processing
        };
        self.refunds.insert(
            refund,
            Refund {
                payment,
                attempt,
                merchant: claim.scope.merchant,
                environment: claim.scope.environment,
                merchant_refund_no,
                amount,
                status,
                resolution: ResolutionStatus::Known,
                sent_at: now,
                version: 1,
            },
        );
        if review {
            let at = now.after(self.params.refund_review_time);
            self.set_timer(at, Timer::RefundReview(refund));
        } else {
            self.send_refund(now, refund, out);
        }
        let resource = ResourceId::Refund(refund);
        self.bind(now, claim, RecordState::Done { resource });
        let response = self.resource_response(201, resource);
        respond(out, id, response, Rule::FirstExecution201);
    }

    /// Sends a refund upstream, once (REFUND-01), and schedules its first query.
    fn send_refund(&mut self, now: Millis, refund: RefundId, out: &mut Out) {
        let r = &self.refunds[&refund];
        // The refund is sent once; afterwards the platform only queries (REFUND-01).
        // A-REFUND-ASYNC: 201 processing at once, no synchronous wait; the first
        // query comes `sync_wait` after sending.
        out.push(PlatformOutput::Upstream {
            call: UpstreamCall::Refund {
                refund,
                attempt: r.attempt,
                amount: r.amount,
            },
            rule: Rule::UniqueRefundNo,
        });
        self.set_timer(
            now.after(self.params.sync_wait),
            Timer::VerifyRefund(refund),
        );
    }

    /// A-REFUND-REVIEW: the review ends. Approved, the refund becomes processing (a new
    /// version, `refund.processing`), is sent upstream and verified like any other; its
    /// automatic query window counts from now. Rejected (an amount of at least
    /// `refund_review_rejects_from`), it ends failed (`refund.failed`), is never sent
    /// upstream and frees its amount (A-REFUND-LIMIT).
    pub(super) fn on_refund_review(&mut self, now: Millis, refund: RefundId, out: &mut Out) {
        let rejects_from = self.params.refund_review_rejects_from;
        let Some(r) = refund_in(&mut self.refunds, refund, RefundStatus::PendingReview) else {
            return;
        };
        if r.amount >= rejects_from {
            r.status = RefundStatus::Failed;
            let (payment, amount) = (r.payment, r.amount);
            let p = self.payments.get_mut(&payment).expect("exists");
            p.amount_refunded -= amount;
            self.bump_refund(now, refund, Rule::WebhookPrimary, out);
            self.bump_payment(now, payment, Rule::WebhookPrimary, out);
            // MUTANT rejected_refund_sent_anyway: the rejected refund is sent all the same.
            if !self.variant.rejection_sends_nothing() {
                self.send_refund(now, refund, out);
            }
            return;
        }
        r.status = RefundStatus::Processing;
        r.sent_at = now;
        self.bump_refund(now, refund, Rule::WebhookPrimary, out);
        self.send_refund(now, refund, out);
    }

    /// The upstream answers about a refund.
    pub(super) fn on_refund(
        &mut self,
        now: Millis,
        refund: RefundId,
        state: RefundState,
        out: &mut Out,
    ) {
        let Some(r) = refund_in(&mut self.refunds, refund, RefundStatus::Processing) else {
            return;
        };
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
        } else {
            let at = now.after(self.params.verify_interval);
            self.set_timer_unless_set(at, Timer::VerifyRefund(refund));
        }
    }

    /// REFUND-01: verify a refund still processing with the upstream, never send it again.
    pub(super) fn on_verify_refund(&mut self, now: Millis, refund: RefundId, out: &mut Out) {
        let Some(r) = refund_in(&mut self.refunds, refund, RefundStatus::Processing) else {
            return;
        };
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
        let r = &self.refunds[&refund];
        let call = self
            .variant
            .refund_verification(refund, r.attempt, r.amount);
        out.push(PlatformOutput::Upstream {
            call,
            rule: Rule::RefundTimeoutNoSecondRefund,
        });
        self.set_timer(now.after(next), Timer::VerifyRefund(refund));
    }
}

/// The refund, if it exists and has `status`.
fn refund_in(
    refunds: &mut Journaled<RefundId, Refund>,
    refund: RefundId,
    status: RefundStatus,
) -> Option<&mut Refund> {
    refunds.get_mut(&refund).filter(|r| r.status == status)
}
