//! The query schedule of an order (SCHED-01, SCHED-02, RETRY-04) and refund queries.

use super::{ClientTimer, Cx, MerchantServer, Op};
use crate::api::Endpoint;
use crate::client::decision::Decision;
use crate::client::schedule;
use crate::rules::Rule;
use crate::time::Millis;

impl MerchantServer {
    /// Whether a query of the order's Payment is in flight (no concurrent polling, SCHED-02).
    pub(super) fn querying(&self, order: &str) -> bool {
        self.memory
            .in_flight
            .values()
            .any(|f| matches!(&f.op, Op::QueryPayment { order: o } if o == order))
    }

    /// Queries the order's Payment now — by id, or by order number when no id was saved
    /// (RETRY-04) — or, to keep 10 s between two queries of it by any server (SCHED-02),
    /// as soon as allowed. Returns whether a query was sent.
    pub(in crate::client) fn query_payment(
        &mut self,
        cx: &mut Cx,
        order: &str,
        rule: Rule,
    ) -> bool {
        if self.querying(order) {
            return false;
        }
        let spacing = self.config.params.query_spacing_min;
        let polls_fast = self.config.policy.polls_too_fast().is_some();
        let now = cx.now;
        let rec = cx.order(order);
        // SCHED-02 from every query sent, a refused one included (A-QUERY-RETRY-AFTER).
        if let Some(last) = rec.last_query_at
            && !polls_fast
            && now < last.after(spacing)
        {
            let until = last.after(spacing);
            self.set_query_timer(order, until);
            cx.order_decide(order, Decision::QueryDeferred { until }, Rule::QuerySpacing);
            return false;
        }
        rec.last_query_at = Some(now);
        let (endpoint, rule) = match rec.payment_id {
            Some(payment_id) => (Endpoint::GetPayment { payment_id }, rule),
            None => (
                Endpoint::ListPayments {
                    merchant_order_no: rec.submission.merchant_order_no.clone(),
                },
                Rule::QueryByOrderNoAfterCrash,
            ),
        };
        let request = self.query_request(endpoint);
        let op = Op::QueryPayment {
            order: order.into(),
        };
        self.send(cx, op, 1, request, rule);
        true
    }

    /// Queries a refund: by id, or by refund number when no id is known.
    pub(in crate::client) fn send_refund_query(&mut self, cx: &mut Cx, refund: &str, rule: Rule) {
        let now = cx.now;
        let Some(rec) = cx.db.refund_mut(refund) else {
            return;
        };
        rec.last_query_at = Some(now);
        let endpoint = match rec.refund_id {
            Some(refund_id) => Endpoint::GetRefund { refund_id },
            None => Endpoint::ListRefundsByNo {
                merchant_refund_no: rec.refund_no.clone(),
            },
        };
        let request = self.query_request(endpoint);
        let op = Op::QueryRefund {
            refund: refund.into(),
        };
        self.send(cx, op, 1, request, rule);
    }

    /// Sets the order's query timer, keeping an earlier one.
    fn set_query_timer(&mut self, order: &str, at: Millis) -> bool {
        let timers = &mut self.memory.timers;
        let is_order = |t: &ClientTimer| matches!(t, ClientTimer::Query { order: o } if o == order);
        let existing = timers.iter().find(|(_, t)| is_order(t)).cloned();
        if let Some(entry) = existing {
            if entry.0 <= at {
                return false;
            }
            timers.remove(&entry);
        }
        let order = order.into();
        timers.insert((at, ClientTimer::Query { order }));
        true
    }

    /// SCHED-01: the status is final or a webhook settled it: no more queries.
    pub(in crate::client) fn stop_queries(&mut self, cx: &mut Cx, order: &str) {
        let before = self.memory.timers.len();
        self.memory
            .timers
            .retain(|(_, t)| !matches!(t, ClientTimer::Query { order: o } if o == order));
        if self.memory.timers.len() != before {
            cx.order_decide(order, Decision::QueryStopped, Rule::QuerySchedule);
        }
    }

    /// SCHED-01: the result is unknown: query at 10 s, 30 s, 2 min, 5 min, 15 min, 1 h,
    /// then every 4 h until 24 h, counted from when it became unknown. Returns whether a
    /// query is scheduled (false once the order is settled or the 24 hours are over).
    pub(in crate::client) fn keep_querying(&mut self, cx: &mut Cx, order: &str) -> bool {
        let Some(rec) = cx.db.order_mut(order) else {
            return false;
        };
        // SCHED-01: queries stop "on entering succeeded / failed / canceled / expired", and
        // the window below ends at 24 h. A-WEBHOOK-BLACKOUT: a later change of the Payment
        // (a failed one expiring, a paid one refunded, a requires_action one succeeding
        // after the window) reaches this client only by webhook; if every delivery finds
        // every server of its database down, nothing here catches up.
        if !self.config.policy.queries_go_on(rec.state()) {
            return false;
        }
        let now = cx.now;
        // A-CLIENT-SCHED-ANCHOR: the schedule counts from when this client first learned
        // that the result is not final, not from "first acceptance", which it cannot see.
        let anchor = *rec.confirming_since.get_or_insert(now);
        let next = if self.config.policy.polls_too_fast().is_some() {
            Some(now.after(self.config.params.poll_too_fast_every))
        } else {
            schedule::next_query_at(&self.config.params, anchor, now).filter(|at| {
                // QueriesStopAt1h: nothing after the 1-hour query.
                self.config.policy.queries_stop_at_1h().is_none()
                    || *at <= anchor.after(Millis::hours(1))
            })
        };
        let Some(at) = next else {
            return false;
        };
        if self.set_query_timer(order, at) {
            cx.order_decide(order, Decision::QueryScheduled { at }, Rule::QuerySchedule);
        }
        true
    }
}
