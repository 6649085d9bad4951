//! A restart: a new process resumes from the database (GEN-06, RETRY-04, SCHED-01).

use super::{Cx, Memory, MerchantServer, Op};
use crate::api::PaymentStatus;
use crate::client::db::{OrderOutcome, SubmissionKind};
use crate::client::decision::{Decision, Subject};
use crate::rules::Rule;

impl MerchantServer {
    /// A new process resumes every unfinished business submission from the database.
    /// A-CLIENT-RESTART-SWEEP: every one in the shared database, whichever server started
    /// it: submissions, cancels and refunds still sending, and every query schedule.
    pub(super) fn on_restart(&mut self, cx: &mut Cx) {
        self.up = true;
        self.boot += 1;
        self.memory = Memory::default();
        let boot = self.boot;
        cx.decide(
            Subject::Server,
            Decision::Restarted { boot },
            Rule::PersistBeforeSend,
        );
        for order in cx.db.order_nos() {
            let rec = cx.db.order(&order).expect("listed");
            let sub = &rec.submission;
            let op = Op::submit(&order, sub.seq);
            let in_progress = rec.status().is_some_and(PaymentStatus::is_in_progress);
            let resume_queries = rec.confirming_since.is_some() || in_progress;
            let unknown_create = sub.outcome == OrderOutcome::Unknown
                && sub.kind == SubmissionKind::Create
                && rec.payment_id.is_none();
            let cancel_sending = rec
                .cancel
                .as_ref()
                .is_some_and(|c| c.outcome == OrderOutcome::Sending);
            if sub.outcome == OrderOutcome::Sending {
                let unsaved_id = sub.kind == SubmissionKind::Create && rec.payment_id.is_none();
                if sub.key.is_some() && unsaved_id {
                    // RETRY-04: no Payment id was saved: look it up by order number first.
                    self.query_payment(cx, &order, Rule::QueryByOrderNoAfterCrash);
                } else {
                    // GEN-06: read the original key back and retry (KeyNotPersisted: the
                    // key died with the process; it sends again at once).
                    self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
                }
            }
            if cancel_sending {
                let op = Op::cancel(&order);
                self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
            }
            // RETRY-04 (the contract's `findPaymentByOrderNo`: "when, after a crash, no
            // Payment ID was saved, query by merchant order number"): a create whose result
            // is unknown and whose query window ended while the servers were down is looked
            // up once; an empty answer means it was never created (QUERY-06).
            if resume_queries && !self.keep_querying(cx, &order) && unknown_create {
                self.query_payment(cx, &order, Rule::QueryByOrderNoAfterCrash);
            }
            self.arm_support(cx, &order);
        }
        for refund in cx.db.refund_nos() {
            let sending = cx
                .db
                .refund(&refund)
                .is_some_and(|r| r.outcome == OrderOutcome::Sending);
            if sending {
                let op = Op::Refund { refund };
                self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
            }
        }
    }
}
