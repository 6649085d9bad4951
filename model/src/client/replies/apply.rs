//! Webhooks, and applying a Payment or Refund state only if its version is newer
//! (WEBHOOK-02), whatever channel brought it.

use crate::api::{PaymentStatus, PaymentView, RefundView, ResolutionStatus};
use crate::client::db::{AppliedRefund, OrderOutcome, SubmissionKind};
use crate::client::decision::{Decision, ObjectState, Subject, Via};
use crate::client::keys::{self, KeyPurpose, Keys};
use crate::client::policy::AntiPattern;
use crate::client::server::{Cx, MerchantServer, Op};
use crate::platform::{WebhookEvent, WebhookObject};
use crate::rules::Rule;
use crate::text::Text;

impl MerchantServer {
    pub(in crate::client) fn on_webhook(&mut self, cx: &mut Cx, event: &WebhookEvent) {
        match &event.object {
            WebhookObject::Payment(view) => match cx.db.order_of_payment(view) {
                Some(order) => {
                    let order = order.to_owned();
                    self.apply_payment(cx, &order, view, Via::Webhook);
                }
                None => cx.decide(
                    Subject::Server,
                    Decision::UnknownObject,
                    Rule::LatestVersionWins,
                ),
            },
            WebhookObject::Refund(view) => {
                if cx.db.refund(&view.merchant_refund_no).is_some() {
                    self.apply_refund(cx, &view.merchant_refund_no, view, Via::Webhook);
                } else {
                    cx.decide(
                        Subject::Server,
                        Decision::UnknownObject,
                        Rule::LatestVersionWins,
                    );
                }
            }
        }
        cx.out.push(crate::client::io::ClientOutput::AckWebhook {
            event: event.id,
            rule: Rule::WebhookPrimary,
        });
    }

    // ---- applying objects ---------------------------------------------------------

    /// WEBHOOK-02: applies a Payment's state only if its version is newer than the one
    /// applied, whatever channel brought it. Returns whether it was applied.
    pub(in crate::client) fn apply_payment(
        &mut self,
        cx: &mut Cx,
        order: &str,
        view: &PaymentView,
        via: Via,
    ) -> bool {
        let rec = cx.order(order);
        let ours = match rec.payment_id {
            Some(id) => id == view.id,
            None => rec.submission.merchant_order_no == view.merchant_order_no,
        };
        if !ours {
            let payment = view.id;
            cx.order_decide(
                order,
                Decision::OtherPayment { payment },
                Rule::LatestVersionWins,
            );
            return false;
        }
        rec.payment_id = Some(view.id);
        // A create still sending, or one whose 503s were taken for "not accepted" (S13)
        // while an earlier request under its key was executed after all.
        let paused = matches!(
            rec.submission.outcome,
            OrderOutcome::Rejected(
                crate::api::ErrorCode::TemporarilyUnavailable | crate::api::ErrorCode::RateLimited
            )
        );
        let adopted = rec.submission.kind == SubmissionKind::Create
            && (rec.submission.outcome == OrderOutcome::Sending || paused);
        if adopted {
            // The order's Payment exists, so its create was accepted: no retry is needed.
            rec.submission.outcome = OrderOutcome::Answered;
        }
        let applied = self.apply_payment_version(cx, order, view, via);
        if adopted
            && cx
                .order(order)
                .status()
                .is_some_and(PaymentStatus::is_in_progress)
        {
            // SCHED-01: the retries stop, but the result is not final yet (a webhook or a
            // query showed it processing after a timeout or a 5xx): query on schedule
            // until a final status or its webhook. Without this the order is forgotten
            // when the final webhook is lost.
            self.keep_querying(cx, order);
        }
        applied
    }

    /// The version comparison and what follows of [`Self::apply_payment`].
    fn apply_payment_version(
        &mut self,
        cx: &mut Cx,
        order: &str,
        view: &PaymentView,
        via: Via,
    ) -> bool {
        let applied = cx.order(order).applied.as_ref();
        let was_manual = applied.is_some_and(|a| a.resolution == ResolutionStatus::ManualReview);
        let applied = applied.map(|a| a.version);
        if !self.newer(
            cx,
            &Subject::Order(order.into()),
            applied,
            view.version,
            via,
        ) {
            return false;
        }
        let rec = cx.order(order);
        rec.applied = Some(view.into());
        let object = ObjectState::Payment {
            status: view.status,
            resolution: view.resolution_status,
        };
        let decision = Decision::Applied {
            object,
            version: view.version,
            via,
        };
        cx.order_decide(order, decision, Rule::LatestVersionWins);
        self.after_payment_change(cx, order, view, was_manual);
        true
    }

    /// WEBHOOK-02: whether `version` is newer than the one `applied`, if any; `Stale`
    /// when not (`WebhookIgnoresVersion` applies an older webhook all the same).
    fn newer(
        &self,
        cx: &mut Cx,
        subject: &Subject,
        applied: Option<u32>,
        version: u32,
        via: Via,
    ) -> bool {
        let Some(applied) = applied.filter(|a| version <= *a) else {
            return true;
        };
        let ignores = self.config.policy.applies_older_webhook();
        if let (Some(pattern), true) = (ignores.filter(|_| via == Via::Webhook), version < applied)
        {
            cx.depart(subject.clone(), pattern);
            return true;
        }
        let decision = Decision::Stale {
            version,
            applied,
            via,
        };
        cx.decide(subject.clone(), decision, Rule::LatestVersionWins);
        false
    }

    /// What a newly applied Payment state means for the order.
    fn after_payment_change(
        &mut self,
        cx: &mut Cx,
        order: &str,
        view: &PaymentView,
        was_manual: bool,
    ) {
        let rec = cx.order(order);
        if view.status == PaymentStatus::Succeeded && rec.fulfilled.is_none() {
            // RES-07: fulfil idempotently by Payment id: once, whichever server or
            // channel learns it first.
            rec.fulfilled = Some(view.id);
            let payment = view.id;
            cx.order_decide(order, Decision::Fulfil { payment }, Rule::FulfilByPaymentId);
        } else if let Some(pattern) = self.config.policy.fulfils_otherwise(
            view.status == PaymentStatus::Succeeded,
            rec.fulfilled.is_some(),
        ) {
            cx.order_depart(order, pattern);
            cx.order(order).fulfilled = Some(view.id);
            let payment = view.id;
            cx.order_decide(order, Decision::Fulfil { payment }, pattern.breaks());
        }
        let closes = self.config.policy.closes_on_failed();
        if let (true, Some(pattern)) = (view.status == PaymentStatus::Failed, closes) {
            cx.order_depart(order, pattern);
            if let Some(applied) = cx.order(order).applied.as_mut() {
                applied.status = PaymentStatus::Canceled;
            }
        }
        if view.status.is_terminal() {
            // SCHED-01: stop at a final status, whether a query or a webhook brought it.
            let failed_goes_on = view.status == PaymentStatus::Failed
                && self.config.policy.queries_after_failed().is_some();
            if self.config.policy.queries_after_final().is_none() && !failed_goes_on {
                self.stop_queries(cx, order);
            }
            return;
        }
        let manual = view.resolution_status == ResolutionStatus::ManualReview;
        if manual && view.status.is_in_progress() && !was_manual {
            // RES-04: pending confirmation; never charged again.
            cx.order_decide(
                order,
                Decision::PendingConfirmation,
                Rule::ManualReviewClient,
            );
            // WORDING-03: "超过 24 小时仍未确认" (still unconfirmed after more than 24 hours)
            // counts from here (A-CLIENT-SUPPORT-START): due one second past the 24 hours.
            let support_after = crate::Contract::MANUAL_REVIEW_SUPPORT_AFTER;
            let due = cx
                .now
                .after(support_after)
                .after(crate::time::Millis::secs(1));
            let rec = cx.order(order);
            if rec.support_due.is_none() {
                rec.support_due = Some(due);
                self.arm_support(cx, order);
            }
            if let Some(pattern) = self.config.policy.recharges_on_manual_review() {
                self.recharge_on_manual_review(cx, order, pattern);
            }
        }
    }

    /// `RechargeOnManualReview`: gives up on the order's Payment and charges again under
    /// a new order number.
    fn recharge_on_manual_review(&mut self, cx: &mut Cx, order: &str, pattern: AntiPattern) {
        cx.order_depart(order, pattern);
        self.stop_queries(cx, order);
        let rec = cx.order(order);
        let seq = rec.submission.seq + 1;
        let number = Text::format(format_args!("{}-R{seq}", rec.order_no));
        let key = match self.config.policy.keys {
            Keys::Deterministic => keys::derived(KeyPurpose::CreatePayment, &number, 1),
            Keys::RandomPersisted => cx.dice.uuid(),
        };
        self.restart_submission(cx, order, seq, SubmissionKind::Create, number, key);
        let op = Op::submit(order, seq);
        self.send_keyed(cx, op, 1, pattern.breaks());
    }

    /// WEBHOOK-02 for refunds.
    pub(in crate::client) fn apply_refund(
        &mut self,
        cx: &mut Cx,
        refund: &str,
        view: &RefundView,
        via: Via,
    ) -> bool {
        let subject = Subject::Refund(refund.into());
        let Some(rec) = cx.db.refund_mut(refund) else {
            return false;
        };
        if rec.refund_id.is_some_and(|id| id != view.id) {
            cx.decide(subject, Decision::UnknownObject, Rule::LatestVersionWins);
            return false;
        }
        rec.refund_id = Some(view.id);
        let applied = rec.applied.as_ref().map(|a| a.version);
        if !self.newer(cx, &subject, applied, view.version, via) {
            return false;
        }
        let rec = cx.db.refund_mut(refund).expect("checked");
        rec.applied = Some(AppliedRefund::from(view));
        let decision = Decision::Applied {
            object: ObjectState::Refund {
                status: view.status,
            },
            version: view.version,
            via,
        };
        cx.decide(subject, decision, Rule::LatestVersionWins);
        true
    }
}
