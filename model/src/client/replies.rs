//! What a server makes of answers: responses, network errors, timeouts, webhooks.
//!
//! Order of decisions for a keyed POST (create, confirm, cancel, refund):
//! timeout anti-patterns (the contract's "don't do this" code) → retryable (network
//! error, timeout, 429, 5xx, 409 `operation_in_progress`/`payment_in_progress`: RETRY-01)
//! → the answer itself (2xx, 202, 409 `idempotency_conflict`, 409 order/refund number
//! conflict, other 4xx). Every object applied goes through [`MerchantServer::apply_payment`]
//! or [`MerchantServer::apply_refund`], which compare versions (WEBHOOK-02).

use super::db::{AppliedRefund, Outcome, SubmissionKind};
use super::decision::{Decision, ObjectState, PayerMessage, Subject, Via};
use super::keys::{self, KeyPurpose, Keys};
use super::policy::AntiPattern;
use super::schedule;
use super::server::{ClientTimer, Cx, Flight, MerchantServer, Op};
use crate::api::{
    ApiResponse, ErrorCode, PaymentStatus, PaymentView, RefundView, ResolutionStatus, ResponseBody,
};
use crate::ids::ResourceId;
use crate::platform::{WebhookEvent, WebhookObject};
use crate::rules::Rule;
use crate::text::Text;

/// What came back for a request.
#[derive(Clone, Copy, Debug)]
pub(super) enum Reply<'a> {
    Response(&'a ApiResponse),
    NetworkError,
    Timeout,
}

impl Reply<'_> {
    /// RETRY-01: network errors, 429 and 5xx (503 included) are retried with the same key;
    /// so are the in-flight conflicts, "retry later with the same key" (S5, S8), in the
    /// same loop with the same backoff and tries (A-CLIENT-INFLIGHT-409).
    fn is_retryable(self) -> bool {
        match self {
            Reply::NetworkError | Reply::Timeout => true,
            Reply::Response(r) => {
                r.status == 429
                    || r.status >= 500
                    || matches!(
                        r.error_code(),
                        Some(ErrorCode::OperationInProgress | ErrorCode::PaymentInProgress)
                    )
            }
        }
    }
}

/// What made the result unknown, for the anti-patterns that act on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unknown {
    Timeout,
    Accepted202,
}

impl MerchantServer {
    pub(super) fn on_reply(&mut self, cx: &mut Cx, handle: super::io::Handle, reply: Reply) {
        let Some(flight) = self.memory.in_flight.remove(&handle) else {
            let subject = Subject::Server;
            cx.decide(
                subject,
                Decision::LateReply { handle },
                Rule::ClientTimeouts,
            );
            return;
        };
        match flight.op.clone() {
            Op::Submit { .. } | Op::Cancel { .. } | Op::Refund { .. } => {
                self.on_keyed_reply(cx, flight, reply)
            }
            Op::QueryPayment { order } => self.on_payment_query(cx, &order, reply),
            Op::QueryRefund { refund } => self.on_refund_query(cx, &refund, reply),
            Op::ReconcileRefunds => self.on_reconcile(cx, reply),
        }
    }

    fn on_keyed_reply(&mut self, cx: &mut Cx, flight: Flight, reply: Reply) {
        if let (Reply::Timeout, Op::Submit { order, seq }) = (reply, &flight.op)
            && self.op_current(cx.db, &flight.op)
            && self.deviate_on_unknown(cx, order, *seq, Unknown::Timeout)
        {
            return;
        }
        if reply.is_retryable() {
            return self.retry_or_give_up(cx, flight, reply);
        }
        let Reply::Response(response) = reply else {
            unreachable!("network errors and timeouts are retryable");
        };
        match &flight.op {
            Op::Submit { order, seq } => self.on_submission_answer(cx, order, *seq, response),
            Op::Cancel { order } => self.on_cancel_answer(cx, order, response),
            Op::Refund { refund } => self.on_refund_answer(cx, refund, response),
            _ => unreachable!("queries are not keyed"),
        }
    }

    /// RETRY-01..03: the same key after `min(30 s, 1 s × 2^(n-1))` plus jitter, or after
    /// Retry-After on 429 (RATE-03); after the last try the result is unknown.
    fn retry_or_give_up(&mut self, cx: &mut Cx, flight: Flight, reply: Reply) {
        let Flight { op, try_no } = flight;
        if !self.op_current(cx.db, &op) {
            let decision = Decision::RetryDropped { try_no: try_no + 1 };
            return cx.decide(op.subject(), decision, Rule::RetrySameKey);
        }
        let response = match reply {
            Reply::Response(r) => Some(r),
            _ => None,
        };
        if matches!(op, Op::Submit { .. })
            && response.and_then(ApiResponse::error_code) == Some(ErrorCode::TemporarilyUnavailable)
        {
            let message = PayerMessage::TemporarilyUnavailable;
            cx.decide(
                op.subject(),
                Decision::ShowPayer { message },
                Rule::PausedMessage,
            );
        }
        if try_no >= self.config.params.tries_max {
            return self.give_up(cx, &op);
        }
        let retry_after = response
            .filter(|r| r.status == 429)
            .and_then(|r| r.retry_after_s);
        let params = &self.config.params;
        let (delay, rule) = match retry_after {
            Some(_) if self.config.policy.has(AntiPattern::IgnoreRetryAfter) => {
                let pattern = AntiPattern::IgnoreRetryAfter;
                cx.decide(
                    op.subject(),
                    Decision::Deviate { pattern },
                    pattern.breaks(),
                );
                let delay = schedule::retry_delay(params, try_no, cx.jitter, None);
                (delay, pattern.breaks())
            }
            Some(seconds) => (
                schedule::retry_delay(params, try_no, cx.jitter, Some(seconds)),
                Rule::RetryAfterHonoured,
            ),
            None => (
                schedule::retry_delay(params, try_no, cx.jitter, None),
                Rule::RetryBackoff,
            ),
        };
        let mut send_rule = if rule == Rule::RetryBackoff {
            Rule::RetrySameKey
        } else {
            rule
        };
        if self.config.policy.has(AntiPattern::KeyRegeneratedOnRetry)
            && self.config.policy.keys == Keys::RandomPersisted
        {
            let pattern = AntiPattern::KeyRegeneratedOnRetry;
            cx.decide(
                op.subject(),
                Decision::Deviate { pattern },
                pattern.breaks(),
            );
            let key = cx.dice.uuid();
            self.replace_key(cx, &op, key);
            send_rule = pattern.breaks();
        }
        let at = cx.now.after(delay);
        let next = try_no + 1;
        self.memory.timers.insert((
            at,
            ClientTimer::Retry {
                op: op.clone(),
                try_no: next,
                rule: send_rule,
            },
        ));
        cx.decide(
            op.subject(),
            Decision::RetryScheduled { try_no: next, at },
            rule,
        );
    }

    /// Overwrites a keyed op's stored key (anti-patterns only).
    fn replace_key(&mut self, cx: &mut Cx, op: &Op, key: Text) {
        match op {
            Op::Submit { order, .. } => {
                if cx.order(order).submission.key.is_some() {
                    cx.order(order).submission.key = Some(key);
                } else {
                    self.memory.unpersisted.insert(op.clone(), key);
                }
            }
            Op::Cancel { order } => {
                if let Some(c) = cx.order(order).cancel.as_mut() {
                    c.key = Some(key);
                }
            }
            Op::Refund { refund } => {
                if let Some(r) = cx.db.refund_mut(refund) {
                    r.key = Some(key);
                }
            }
            _ => {}
        }
    }

    /// RETRY-03: still no result after the last try: "confirming"; queries and webhooks
    /// decide, and any later try uses the same key.
    fn give_up(&mut self, cx: &mut Cx, op: &Op) {
        match op {
            Op::Submit { order, .. } => {
                self.became_unknown(cx, order);
                cx.order_decide(order, Decision::ResultUnknown, Rule::RetryMaxAttempts);
                let message = PayerMessage::Confirming;
                cx.order_decide(
                    order,
                    Decision::ShowPayer { message },
                    Rule::ConfirmingMessage,
                );
                self.keep_querying(cx, order);
            }
            Op::Cancel { order } => {
                if let Some(c) = cx.order(order).cancel.as_mut() {
                    c.outcome = Outcome::Unknown;
                }
                cx.order_decide(order, Decision::ResultUnknown, Rule::RetryMaxAttempts);
                self.keep_querying(cx, order);
            }
            Op::Refund { refund } => {
                if let Some(r) = cx.db.refund_mut(refund) {
                    r.outcome = Outcome::Unknown;
                }
                // SCHED-03: refunds are not polled: webhooks and the daily reconciliation.
                let subject = Subject::Refund(refund.clone());
                cx.decide(subject, Decision::ResultUnknown, Rule::RefundNoPolling);
            }
            _ => {}
        }
    }

    /// A submission still sending has no result: "confirming" from now. A-CLIENT-SCHED-ANCHOR:
    /// the query window counts from here, not from an older window of the same order (a
    /// lookup before a crash, or an unknown result whose create was then found never made
    /// and sent again), which could be over already and leave the submission unqueried.
    fn became_unknown(&mut self, cx: &mut Cx, order: &str) {
        let now = cx.now;
        let rec = cx.order(order);
        if rec.submission.outcome == Outcome::Sending {
            rec.confirming_since = Some(now);
        }
        rec.submission.outcome = Outcome::Unknown;
    }

    /// The anti-patterns that take an unknown result for a failure or switch key or order
    /// number on it. Returns whether one acted (the reference policy never does).
    fn deviate_on_unknown(&mut self, cx: &mut Cx, order: &str, seq: u32, why: Unknown) -> bool {
        let policy = self.config.policy.clone();
        let rec = cx.order(order);
        let kind = rec.submission.kind;
        let has_payment = rec.payment_id.is_some();
        if why == Unknown::Timeout
            && kind == SubmissionKind::Create
            && policy.has(AntiPattern::NewOrderNoAfterTimeout)
        {
            // `createPayment({ ...order, orderNo: `${order.orderNo}-retry` })`
            let pattern = AntiPattern::NewOrderNoAfterTimeout;
            cx.order_decide(order, Decision::Deviate { pattern }, pattern.breaks());
            let number = Text::format(format_args!(
                "{}-retry",
                cx.order(order).submission.merchant_order_no
            ));
            let key = self.new_key(cx, KeyPurpose::CreatePayment, &number, 1);
            self.restart_submission(cx, order, seq + 1, SubmissionKind::Create, number, key);
            let op = Op::Submit {
                order: order.into(),
                seq: seq + 1,
            };
            self.send_keyed(cx, op, 1, pattern.breaks());
            return true;
        }
        if why == Unknown::Timeout && policy.has(AntiPattern::NewKeyAfterTimeout) {
            // `createPayment(order, { idempotencyKey: crypto.randomUUID() })`
            let pattern = AntiPattern::NewKeyAfterTimeout;
            cx.order_decide(order, Decision::Deviate { pattern }, pattern.breaks());
            let key = cx.dice.uuid();
            let op = Op::Submit {
                order: order.into(),
                seq,
            };
            self.replace_key(cx, &op, key);
            self.send_keyed(cx, op, 1, pattern.breaks());
            return true;
        }
        if policy.has(AntiPattern::UnknownAsFailure) {
            // "Failed": the payment is submitted again as a new business submission.
            let pattern = AntiPattern::UnknownAsFailure;
            cx.order_decide(order, Decision::Deviate { pattern }, pattern.breaks());
            let (kind, purpose) = if has_payment {
                (SubmissionKind::Confirm, KeyPurpose::ConfirmPayment)
            } else {
                (SubmissionKind::Create, KeyPurpose::CreatePayment)
            };
            let key = self.new_key(cx, purpose, order, seq + 1);
            let number = cx.order(order).submission.merchant_order_no.clone();
            self.restart_submission(cx, order, seq + 1, kind, number, key);
            if kind == SubmissionKind::Create {
                cx.order(order).payment_id = None;
                cx.order(order).applied = None;
            }
            let op = Op::Submit {
                order: order.into(),
                seq: seq + 1,
            };
            self.send_keyed(cx, op, 1, pattern.breaks());
            return true;
        }
        false
    }

    /// Replaces an order's submission (anti-patterns only): a new key, kept in the
    /// database (or in memory under `KeyNotPersisted`).
    fn restart_submission(
        &mut self,
        cx: &mut Cx,
        order: &str,
        seq: u32,
        kind: SubmissionKind,
        merchant_order_no: Text,
        key: Text,
    ) {
        let op = Op::Submit {
            order: order.into(),
            seq,
        };
        let stored = self.keep_key(cx, &op, key, seq, self.key_rule());
        let rec = cx.order(order);
        let new_number = merchant_order_no != rec.submission.merchant_order_no;
        rec.submission.seq = seq;
        rec.submission.kind = kind;
        rec.submission.merchant_order_no = merchant_order_no;
        rec.submission.key = stored;
        rec.submission.outcome = Outcome::Sending;
        rec.confirming_since = None;
        if new_number {
            // A new order number is a new Payment as far as this server knows.
            rec.payment_id = None;
            rec.applied = None;
        }
    }

    // ---- answers to keyed POSTs ---------------------------------------------------

    fn on_submission_answer(&mut self, cx: &mut Cx, order: &str, seq: u32, response: &ApiResponse) {
        let current = cx.order(order).submission.seq == seq;
        if let (true, Some(view)) = (response.is_success(), response.payment()) {
            let accepted = response.status == 202;
            if current && accepted {
                self.became_unknown(cx, order);
            } else if current {
                cx.order(order).submission.outcome = Outcome::Answered;
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
                    cx.order(order).submission.outcome = Outcome::Conflict;
                    // UNKNOWN-04: an integration defect: report it, never retry around it.
                    let code = ErrorCode::IdempotencyConflict;
                    cx.order_decide(order, Decision::Defect { code }, Rule::ConflictIsDefect);
                    self.stop_queries(cx, order);
                }
            }
            Some(ErrorCode::OrderNoConflict) => {
                let related = match &response.body {
                    ResponseBody::Error { error } => error.related_resource_id,
                    _ => None,
                };
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
            code => {
                if current {
                    self.reject(cx, order, code.unwrap_or(ErrorCode::InvalidRequest));
                }
            }
        }
    }

    /// REJECT-01: a 4xx executed nothing; the merchant has to fix the request.
    fn reject(&mut self, cx: &mut Cx, order: &str, code: ErrorCode) {
        cx.order(order).submission.outcome = Outcome::Rejected(code);
        cx.order_decide(
            order,
            Decision::Rejected { code },
            Rule::RejectionsDoNotOccupyKey,
        );
    }

    fn on_cancel_answer(&mut self, cx: &mut Cx, order: &str, response: &ApiResponse) {
        let set = |cx: &mut Cx, outcome| {
            if let Some(c) = cx.order(order).cancel.as_mut() {
                c.outcome = outcome;
            }
        };
        if let (true, Some(view)) = (response.is_success(), response.payment()) {
            if response.status != 202 {
                set(cx, Outcome::Answered);
                self.apply_payment(cx, order, view, Via::Response);
                return;
            }
            set(cx, Outcome::Unknown);
            self.apply_payment(cx, order, view, Via::Response);
            // CANCEL-02: 202 is not "canceled": wait for payment.canceled, or query.
            cx.order_decide(
                order,
                Decision::CancelNotConfirmed,
                Rule::Cancel202NotCanceled,
            );
            if self.config.policy.has(AntiPattern::Cancel202AsCanceled) {
                let pattern = AntiPattern::Cancel202AsCanceled;
                cx.order_decide(order, Decision::Deviate { pattern }, pattern.breaks());
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
            set(cx, Outcome::Conflict);
            cx.order_decide(order, Decision::Defect { code }, Rule::ConflictIsDefect);
        } else {
            set(cx, Outcome::Rejected(code));
            cx.order_decide(
                order,
                Decision::Rejected { code },
                Rule::RejectionsDoNotOccupyKey,
            );
        }
    }

    fn on_refund_answer(&mut self, cx: &mut Cx, refund: &str, response: &ApiResponse) {
        let subject = Subject::Refund(refund.into());
        let Some(rec) = cx.db.refund_mut(refund) else {
            return;
        };
        if let (true, Some(view)) = (response.is_success(), response.refund()) {
            rec.outcome = Outcome::Answered;
            self.apply_refund(cx, refund, view, Via::Response);
            return;
        }
        let code = response.error_code().unwrap_or(ErrorCode::InvalidRequest);
        let related = match &response.body {
            ResponseBody::Error { error } => error.related_resource_id,
            _ => None,
        };
        match (code, related) {
            (ErrorCode::RefundNoConflict, Some(ResourceId::Refund(id))) => {
                // UNIQ-04: the refund number already has its refund: it is this one.
                rec.outcome = Outcome::Answered;
                rec.refund_id.get_or_insert(id);
                let decision = Decision::Adopted {
                    object: ResourceId::Refund(id),
                };
                cx.decide(subject, decision, Rule::UniqueRefundNo);
            }
            (ErrorCode::IdempotencyConflict, _) => {
                rec.outcome = Outcome::Conflict;
                cx.decide(subject, Decision::Defect { code }, Rule::ConflictIsDefect);
            }
            _ => {
                rec.outcome = Outcome::Rejected(code);
                cx.decide(
                    subject,
                    Decision::Rejected { code },
                    Rule::RejectionsDoNotOccupyKey,
                );
            }
        }
    }

    // ---- answers to queries -------------------------------------------------------

    fn on_payment_query(&mut self, cx: &mut Cx, order: &str, reply: Reply) {
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
                        let unanswered =
                            matches!(rec.submission.outcome, Outcome::Sending | Outcome::Unknown);
                        if rec.submission.kind == SubmissionKind::Create && unanswered {
                            rec.submission.outcome = Outcome::Answered;
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
        let unanswered_create = rec.submission.outcome == Outcome::Sending
            && rec.submission.kind == SubmissionKind::Create
            && rec.payment_id.is_none();
        let op = Op::Submit {
            order: order.into(),
            seq: rec.submission.seq,
        };
        if unanswered_create && !self.busy(&op) {
            self.send_keyed(cx, op, 1, Rule::RetrySameKey);
        }
    }

    /// QUERY-06: no Payment for the order number: the platform never created one; retry
    /// the creation with the original key, in case the original request is still in flight.
    fn create_again_with_original_key(&mut self, cx: &mut Cx, order: &str) {
        let rec = cx.order(order);
        let unanswered = matches!(rec.submission.outcome, Outcome::Sending | Outcome::Unknown);
        if rec.submission.kind != SubmissionKind::Create || rec.payment_id.is_some() || !unanswered
        {
            return;
        }
        let op = Op::Submit {
            order: order.into(),
            seq: rec.submission.seq,
        };
        rec.submission.outcome = Outcome::Sending;
        if !self.busy(&op) {
            self.send_keyed(cx, op, 1, Rule::NotFoundRetryOriginalKey);
        }
    }

    fn on_refund_query(&mut self, cx: &mut Cx, refund: &str, reply: Reply) {
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
                        && matches!(rec.outcome, Outcome::Sending | Outcome::Unknown)
                    {
                        rec.outcome = Outcome::Answered;
                    }
                    self.apply_refund(cx, refund, view, Via::Query);
                }
                None => {
                    // S11: "retry with K, or query by merchant_refund_no": never created,
                    // so retry with the original key (A-CLIENT-REFUND-LOOKUP).
                    let op = Op::Refund {
                        refund: refund.into(),
                    };
                    let rec = cx.db.refund_mut(refund).expect("checked");
                    if rec.refund_id.is_none() && rec.outcome == Outcome::Unknown {
                        rec.outcome = Outcome::Sending;
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
    fn on_reconcile(&mut self, cx: &mut Cx, reply: Reply) {
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
        for refund in cx.db.refund_nos() {
            let rec = cx.db.refund(&refund).expect("listed");
            let listed = data.iter().any(|v| v.merchant_refund_no == refund);
            let op = Op::QueryRefund {
                refund: refund.clone(),
            };
            if rec.refund_id.is_some() && !rec.is_final() && !listed && !self.busy(&op) {
                self.send_refund_query(cx, &refund, Rule::RefundNoPolling);
            }
        }
    }

    // ---- webhooks -----------------------------------------------------------------

    pub(super) fn on_webhook(&mut self, cx: &mut Cx, event: &WebhookEvent) {
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
        cx.out.push(super::io::ClientOutput::AckWebhook {
            event: event.id,
            rule: Rule::WebhookPrimary,
        });
    }

    // ---- applying objects ---------------------------------------------------------

    /// WEBHOOK-02: applies a Payment's state only if its version is newer than the one
    /// applied, whatever channel brought it. Returns whether it was applied.
    pub(super) fn apply_payment(
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
        let adopted = rec.submission.kind == SubmissionKind::Create
            && rec.submission.outcome == Outcome::Sending;
        if adopted {
            // The order's Payment exists, so its create was accepted: no retry is needed.
            rec.submission.outcome = Outcome::Answered;
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
        let ignores_version =
            via == Via::Webhook && self.config.policy.has(AntiPattern::WebhookIgnoresVersion);
        let rec = cx.order(order);
        let applied = rec.version();
        let was_manual = rec
            .applied
            .as_ref()
            .is_some_and(|a| a.resolution == ResolutionStatus::ManualReview);
        if rec.applied.is_some() && view.version <= applied {
            if ignores_version && view.version < applied {
                let pattern = AntiPattern::WebhookIgnoresVersion;
                cx.order_decide(order, Decision::Deviate { pattern }, pattern.breaks());
            } else {
                let decision = Decision::Stale {
                    version: view.version,
                    applied,
                    via,
                };
                cx.order_decide(order, decision, Rule::LatestVersionWins);
                return false;
            }
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
        }
        if view.status.is_terminal() {
            // SCHED-01: stop at a final status, whether a query or a webhook brought it.
            self.stop_queries(cx, order);
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
            if self.config.policy.has(AntiPattern::RechargeOnManualReview) {
                self.recharge_on_manual_review(cx, order);
            }
        }
    }

    /// `RechargeOnManualReview`: gives up on the order's Payment and charges again under
    /// a new order number.
    fn recharge_on_manual_review(&mut self, cx: &mut Cx, order: &str) {
        let pattern = AntiPattern::RechargeOnManualReview;
        cx.order_decide(order, Decision::Deviate { pattern }, pattern.breaks());
        self.stop_queries(cx, order);
        let rec = cx.order(order);
        let seq = rec.submission.seq + 1;
        let number = Text::format(format_args!("{}-R{seq}", rec.order_no));
        let key = match self.config.policy.keys {
            Keys::Deterministic => keys::derived(KeyPurpose::CreatePayment, &number, 1),
            Keys::RandomPersisted => cx.dice.uuid(),
        };
        self.restart_submission(cx, order, seq, SubmissionKind::Create, number, key);
        let op = Op::Submit {
            order: order.into(),
            seq,
        };
        self.send_keyed(cx, op, 1, pattern.breaks());
    }

    /// WEBHOOK-02 for refunds.
    pub(super) fn apply_refund(
        &mut self,
        cx: &mut Cx,
        refund: &str,
        view: &RefundView,
        via: Via,
    ) -> bool {
        let ignores_version =
            via == Via::Webhook && self.config.policy.has(AntiPattern::WebhookIgnoresVersion);
        let subject = Subject::Refund(refund.into());
        let Some(rec) = cx.db.refund_mut(refund) else {
            return false;
        };
        if rec.refund_id.is_some_and(|id| id != view.id) {
            cx.decide(subject, Decision::UnknownObject, Rule::LatestVersionWins);
            return false;
        }
        rec.refund_id = Some(view.id);
        let applied = rec.applied.as_ref().map_or(0, |a| a.version);
        if rec.applied.is_some() && view.version <= applied {
            if ignores_version && view.version < applied {
                let pattern = AntiPattern::WebhookIgnoresVersion;
                cx.decide(
                    subject.clone(),
                    Decision::Deviate { pattern },
                    pattern.breaks(),
                );
            } else {
                let decision = Decision::Stale {
                    version: view.version,
                    applied,
                    via,
                };
                cx.decide(subject, decision, Rule::LatestVersionWins);
                return false;
            }
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
