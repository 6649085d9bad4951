//! Answers to keyed POSTs: create, confirm, cancel, refund.

use super::Unknown;
use crate::api::{ApiResponse, ErrorCode, PaymentStatus, ResolutionStatus};
use crate::client::db::OrderOutcome;
use crate::client::decision::{Decision, PayerMessage, Subject, Via};
use crate::client::server::{Cx, MerchantServer};
use crate::ids::ResourceId;
use crate::rules::Rule;

impl MerchantServer {
    pub(super) fn on_submission_answer(
        &mut self,
        cx: &mut Cx,
        order: &str,
        seq: u32,
        response: &ApiResponse,
    ) {
        let current = cx.order(order).submission.seq == seq;
        if let (true, Some(view)) = (response.is_success(), response.payment()) {
            let accepted = response.status == 202;
            if current && accepted {
                self.became_unknown(cx, order);
            } else if current {
                cx.order(order).submission.outcome = OrderOutcome::Answered;
            }
            self.apply_payment(cx, order, view, Via::Response);
            if !current {
                return;
            }
            if accepted {
                if self.deviate_on_unknown(cx, order, seq, Unknown::Accepted202) {
                    return;
                }
                // UNKNOWN-03: a 202 may have charged: no new key, no new order number;
                // query and wait for the webhook.
                cx.order_decide(
                    order,
                    Decision::ResultUnknown,
                    Rule::NeverSwitchKeyOnUnknown,
                );
                let message = PayerMessage::Confirming;
                cx.order_decide(
                    order,
                    Decision::ShowPayer { message },
                    Rule::ConfirmingMessage,
                );
            }
            if view.status.is_in_progress() {
                self.keep_querying(cx, order);
            }
            return;
        }
        match response.error_code() {
            Some(ErrorCode::IdempotencyConflict) => {
                if current {
                    cx.order(order).submission.outcome = OrderOutcome::Conflict;
                    // UNKNOWN-04: an integration defect: report it, never retry around it.
                    let code = ErrorCode::IdempotencyConflict;
                    cx.order_decide(order, Decision::Defect { code }, Rule::ConflictIsDefect);
                    self.stop_queries(cx, order);
                }
            }
            Some(ErrorCode::OrderNoConflict) => {
                let related = response.api_error().and_then(|e| e.related_resource_id);
                // UNKNOWN-05: the order already has its Payment: query it; never change
                // the order number because of it.
                if let (true, Some(ResourceId::Payment(id))) = (current, related) {
                    let rec = cx.order(order);
                    if rec.payment_id.is_none() {
                        rec.payment_id = Some(id);
                    }
                    self.became_unknown(cx, order);
                    let adopted = ResourceId::Payment(id);
                    let decision = Decision::Adopted { object: adopted };
                    cx.order_decide(order, decision, Rule::OrderConflictQueryExisting);
                    self.query_payment(cx, order, Rule::OrderConflictQueryExisting);
                    self.keep_querying(cx, order);
                } else if current {
                    self.reject(cx, order, ErrorCode::OrderNoConflict);
                }
            }
            Some(ErrorCode::PaymentInProgress) => {
                // S8: "wait for the result, or query" (等待结果或查询): the Payment has an
                // unfinished attempt and this confirm executed nothing. Never re-send it
                // (A-CLIENT-S8-WAIT): query the Payment on the SCHED-01 schedule and wait
                // for its webhook; once it is failed the payer may change card again.
                if current {
                    self.became_unknown(cx, order);
                    cx.order_decide(order, Decision::ResultUnknown, Rule::ConfirmWhileProcessing);
                    self.query_payment(cx, order, Rule::ConfirmWhileProcessing);
                    self.keep_querying(cx, order);
                }
            }
            code => {
                if current {
                    self.reject(cx, order, code.unwrap_or(ErrorCode::InvalidRequest));
                }
            }
        }
    }

    /// REJECT-01: a 4xx executed nothing; the merchant has to fix the request.
    fn reject(&mut self, cx: &mut Cx, order: &str, code: ErrorCode) {
        cx.order(order).submission.outcome = OrderOutcome::Rejected(code);
        cx.order_decide(
            order,
            Decision::Rejected { code },
            Rule::RejectionsDoNotOccupyKey,
        );
    }

    pub(super) fn on_cancel_answer(&mut self, cx: &mut Cx, order: &str, response: &ApiResponse) {
        let set = |cx: &mut Cx, outcome| {
            if let Some(c) = cx.order(order).cancel.as_mut() {
                c.outcome = outcome;
            }
        };
        if let (true, Some(view)) = (response.is_success(), response.payment()) {
            // CANCEL-02 whatever the code: a cancel answered with a Payment still processing
            // or requires_action is not canceled. A 200 of that kind is the replay of a
            // cancel whose first answer, a 202, was lost (REPLAY-02 returns the latest
            // state with 200: A-REPLAY-AFTER-202); taken as final, the order would never be
            // queried again.
            if response.status != 202 && !view.status.is_in_progress() {
                set(cx, OrderOutcome::Answered);
                self.apply_payment(cx, order, view, Via::Response);
                return;
            }
            set(cx, OrderOutcome::Unknown);
            self.apply_payment(cx, order, view, Via::Response);
            // CANCEL-02: 202 is not "canceled": wait for payment.canceled, or query.
            cx.order_decide(
                order,
                Decision::CancelNotConfirmed,
                Rule::Cancel202NotCanceled,
            );
            if let Some(pattern) = self.config.policy.cancel_202_closes() {
                cx.order_depart(order, pattern);
                if let Some(applied) = cx.order(order).applied.as_mut() {
                    applied.status = PaymentStatus::Canceled;
                    applied.resolution = ResolutionStatus::Known;
                }
                self.stop_queries(cx, order);
                return;
            }
            // The cancel's own unknown result: its queries count from this 202 (SCHED-01,
            // A-CLIENT-SCHED-ANCHOR).
            cx.order(order).confirming_since = Some(cx.now);
            self.keep_querying(cx, order);
            return;
        }
        let code = response.error_code().unwrap_or(ErrorCode::InvalidRequest);
        if code == ErrorCode::IdempotencyConflict {
            set(cx, OrderOutcome::Conflict);
            cx.order_decide(order, Decision::Defect { code }, Rule::ConflictIsDefect);
        } else {
            set(cx, OrderOutcome::Rejected(code));
            cx.order_decide(
                order,
                Decision::Rejected { code },
                Rule::RejectionsDoNotOccupyKey,
            );
        }
    }

    pub(super) fn on_refund_answer(&mut self, cx: &mut Cx, refund: &str, response: &ApiResponse) {
        let subject = Subject::Refund(refund.into());
        let Some(rec) = cx.db.refund_mut(refund) else {
            return;
        };
        if let (true, Some(view)) = (response.is_success(), response.refund()) {
            rec.outcome = OrderOutcome::Answered;
            self.apply_refund(cx, refund, view, Via::Response);
            return;
        }
        let code = response.error_code().unwrap_or(ErrorCode::InvalidRequest);
        let related = response.api_error().and_then(|e| e.related_resource_id);
        match (code, related) {
            (ErrorCode::RefundNoConflict, Some(ResourceId::Refund(id))) => {
                // UNIQ-04: the refund number already has its refund: it is this one.
                rec.outcome = OrderOutcome::Answered;
                rec.refund_id.get_or_insert(id);
                let decision = Decision::Adopted {
                    object: ResourceId::Refund(id),
                };
                cx.decide(subject, decision, Rule::UniqueRefundNo);
            }
            (ErrorCode::IdempotencyConflict, _) => {
                rec.outcome = OrderOutcome::Conflict;
                cx.decide(subject, Decision::Defect { code }, Rule::ConflictIsDefect);
            }
            _ => {
                rec.outcome = OrderOutcome::Rejected(code);
                cx.decide(
                    subject,
                    Decision::Rejected { code },
                    Rule::RejectionsDoNotOccupyKey,
                );
            }
        }
    }
}
