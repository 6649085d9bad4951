//! Answers to queries: of a Payment, of a refund, and the daily reconciliation.

use super::Reply;
use crate::api::{PaymentStatus, ResponseBody};
use crate::client::db::{OrderOutcome, SubmissionKind};
use crate::client::decision::{Decision, Subject, Via};
use crate::client::server::{Cx, MerchantServer, Op};
use crate::rules::Rule;

impl MerchantServer {
    pub(super) fn on_payment_query(&mut self, cx: &mut Cx, order: &str, reply: Reply) {
        if cx.db.order(order).is_none() {
            return;
        }
        let mut answered = false;
        if let Reply::Response(response) = reply
            && response.status == 200
        {
            answered = true;
            match &response.body {
                ResponseBody::Payment(view) => {
                    self.apply_payment(cx, order, view, Via::Query);
                }
                ResponseBody::Payments { data } => match data.first() {
                    Some(view) => {
                        let rec = cx.order(order);
                        let unanswered = matches!(
                            rec.submission.outcome,
                            OrderOutcome::Sending | OrderOutcome::Unknown
                        );
                        if rec.submission.kind == SubmissionKind::Create && unanswered {
                            rec.submission.outcome = OrderOutcome::Answered;
                        }
                        self.apply_payment(cx, order, view, Via::Query);
                    }
                    None => self.create_again_with_original_key(cx, order),
                },
                _ => answered = false,
            }
        }
        // Anything else (network error, timeout, 429, 5xx): the schedule is the retry.
        let rec = cx.order(order);
        let in_progress = rec.status().is_some_and(PaymentStatus::is_in_progress);
        if rec.confirming_since.is_some() || in_progress {
            self.keep_querying(cx, order);
        }
        if !answered {
            self.lookup_failed(cx, order);
        }
    }

    /// RETRY-04 then RETRY-01: a lookup by order number of a create that never got an
    /// answer (after a crash, no Payment id saved) got no answer either. The create's
    /// result is still unknown, so it is not forgotten: it is sent again under its
    /// original key (GEN-06: "retrieve the original key … and retry"), in the retry loop
    /// that ends, after 5 tries, in "result unknown" and the query schedule (RETRY-03).
    fn lookup_failed(&mut self, cx: &mut Cx, order: &str) {
        let rec = cx.order(order);
        let unanswered_create = rec.submission.outcome == OrderOutcome::Sending
            && rec.submission.kind == SubmissionKind::Create
            && rec.payment_id.is_none();
        let op = Op::submit(order, rec.submission.seq);
        if unanswered_create && !self.busy(&op) {
            self.send_keyed(cx, op, 1, Rule::RetrySameKey);
        }
    }

    /// QUERY-06: no Payment for the order number (A-NOT-FOUND-IN-FLIGHT: none so far, an
    /// original request may still be in flight): the platform never created one; retry
    /// the creation with the original key, in case the original request is still in flight.
    fn create_again_with_original_key(&mut self, cx: &mut Cx, order: &str) {
        let rec = cx.order(order);
        let unanswered = matches!(
            rec.submission.outcome,
            OrderOutcome::Sending | OrderOutcome::Unknown
        );
        if rec.submission.kind != SubmissionKind::Create || rec.payment_id.is_some() || !unanswered
        {
            return;
        }
        let op = Op::submit(order, rec.submission.seq);
        rec.submission.outcome = OrderOutcome::Sending;
        if !self.busy(&op) {
            self.send_keyed(cx, op, 1, Rule::NotFoundRetryOriginalKey);
        }
    }

    pub(super) fn on_refund_query(&mut self, cx: &mut Cx, refund: &str, reply: Reply) {
        let Reply::Response(response) = reply else {
            return;
        };
        if response.status != 200 || cx.db.refund(refund).is_none() {
            return;
        }
        match &response.body {
            ResponseBody::Refund(view) => {
                self.apply_refund(cx, refund, view, Via::Query);
            }
            ResponseBody::Refunds { data } => match data.first() {
                Some(view) => {
                    if let Some(rec) = cx.db.refund_mut(refund)
                        && matches!(rec.outcome, OrderOutcome::Sending | OrderOutcome::Unknown)
                    {
                        rec.outcome = OrderOutcome::Answered;
                    }
                    self.apply_refund(cx, refund, view, Via::Query);
                }
                None => {
                    // S11: "retry with K, or query by merchant_refund_no": never created,
                    // so retry with the original key (A-CLIENT-REFUND-LOOKUP).
                    let op = Op::refund(refund);
                    let rec = cx.db.refund_mut(refund).expect("checked");
                    if rec.refund_id.is_none() && rec.outcome == OrderOutcome::Unknown {
                        rec.outcome = OrderOutcome::Sending;
                        if !self.busy(&op) {
                            self.send_keyed(cx, op, 1, Rule::NotFoundRetryOriginalKey);
                        }
                    }
                }
            },
            _ => {}
        }
    }

    /// SCHED-03: the daily list of processing refunds; a refund we still think is
    /// processing and that is no longer listed has ended: one query learns how.
    pub(super) fn on_reconcile(&mut self, cx: &mut Cx, reply: Reply) {
        let Reply::Response(response) = reply else {
            return;
        };
        let ResponseBody::Refunds { data } = &response.body else {
            return;
        };
        for view in data {
            if cx.db.refund(&view.merchant_refund_no).is_some() {
                self.apply_refund(cx, &view.merchant_refund_no, view, Via::Query);
            } else {
                cx.decide(
                    Subject::Server,
                    Decision::UnknownObject,
                    Rule::RefundNoPolling,
                );
            }
        }
        // A-REFUND-RECONCILE: the list holds processing refunds only, so every refund
        // known here that is not final and not listed (pending_review included) is queried
        // by id, unless a query of it was sent in the last 10 s (SCHED-02: its lookup by
        // refund number in this reconciliation, answered first, just read it).
        let spacing = self.config.params.query_spacing_min;
        for refund in cx.db.refund_nos() {
            let rec = cx.db.refund(&refund).expect("listed");
            let listed = data.iter().any(|v| v.merchant_refund_no == refund);
            let op = Op::QueryRefund {
                refund: refund.clone(),
            };
            let spaced = rec.last_query_at.is_none_or(|t| cx.now >= t.after(spacing));
            if rec.refund_id.is_some() && !rec.is_final() && !listed && spaced && !self.busy(&op) {
                self.send_refund_query(cx, &refund, Rule::RefundNoPolling);
            }
        }
    }
}
