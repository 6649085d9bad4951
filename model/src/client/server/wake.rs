//! Timers: retries and queries that fall due.

use super::{ClientTimer, Cx, MerchantServer};
use crate::client::db::OrderState;
use crate::client::decision::Decision;
use crate::rules::Rule;

impl MerchantServer {
    pub(super) fn on_wake(&mut self, cx: &mut Cx) {
        while let Some((at, _)) = self.memory.timers.first() {
            if *at > cx.now {
                break;
            }
            let (_, timer) = self.memory.timers.pop_first().expect("checked non-empty");
            self.fire(cx, timer);
        }
    }

    fn fire(&mut self, cx: &mut Cx, timer: ClientTimer) {
        match timer {
            ClientTimer::Retry { op, try_no, rule } => {
                if self.op_current(cx.db, &op) {
                    self.send_keyed(cx, op, try_no, rule);
                } else {
                    // Answered meanwhile (another server, a query) or replaced.
                    cx.decide(
                        op.subject(),
                        Decision::RetryDropped { try_no },
                        Rule::RetrySameKey,
                    );
                }
            }
            ClientTimer::Query { order } => {
                let Some(rec) = cx.db.order(&order) else {
                    return;
                };
                if !self.config.policy.queries_go_on(rec.state()) {
                    return;
                }
                let sent = self.query_payment(cx, &order, Rule::QuerySchedule);
                if (sent || self.querying(&order)) && !self.keep_querying(cx, &order) {
                    // SCHED-01: that was the last query of the 24 hours; webhooks still count.
                    cx.order_decide(&order, Decision::ScheduleEnded, Rule::QuerySchedule);
                }
            }
            ClientTimer::Support { order } => self.support_due(cx, &order),
        }
    }

    /// WORDING-03: "超过 24 小时仍未确认可联系技术支持并提供支付号" (if still not confirmed
    /// after more than 24 hours, you may contact technical support and provide the payment
    /// number): the merchant, not the payer, is told, with the payment id, once the order
    /// has been pending confirmation for 24 hours (A-CLIENT-SUPPORT-START).
    fn support_due(&mut self, cx: &mut Cx, order: &str) {
        let Some(rec) = cx.db.order_mut(order) else {
            return;
        };
        let (Some(due), Some(payment)) = (rec.support_due, rec.payment_id) else {
            return;
        };
        if cx.now < due {
            return;
        }
        rec.support_due = None;
        if rec.state() == OrderState::PendingConfirmation {
            let decision = Decision::ContactSupport { payment };
            cx.order_decide(order, decision, Rule::ManualReviewSupport);
        }
    }

    /// Arms the support timer of an order that has one due (a new process re-arms it
    /// from the database).
    pub(in crate::client) fn arm_support(&mut self, cx: &mut Cx, order: &str) {
        if let Some(due) = cx.db.order(order).and_then(|o| o.support_due) {
            let timer = ClientTimer::Support {
                order: order.into(),
            };
            self.memory.timers.insert((due.max(cx.now), timer));
        }
    }
}
