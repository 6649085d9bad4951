//! Timers: retries and queries that fall due.

use super::{ClientTimer, Cx, MerchantServer};
use crate::client::decision::{Decision, PayerMessage};
use crate::client::policy::AntiPattern;
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
                let goes_on = self.config.policy.has(AntiPattern::QueriesAfterFinal);
                if rec.state().is_settled() && !goes_on {
                    return;
                }
                let sent = self.query_payment(cx, &order, Rule::QuerySchedule);
                if (sent || self.querying(&order)) && !self.keep_querying(cx, &order) {
                    // SCHED-01: that was the last query of the 24 hours; webhooks still count.
                    cx.order_decide(&order, Decision::ScheduleEnded, Rule::QuerySchedule);
                    let pending = cx.db.order(&order).map(|o| o.state());
                    if pending == Some(crate::client::db::OrderState::PendingConfirmation) {
                        let message = PayerMessage::ContactSupport;
                        let decision = Decision::ShowPayer { message };
                        cx.order_decide(&order, decision, Rule::ManualReviewSupport);
                    }
                }
            }
        }
    }
}
