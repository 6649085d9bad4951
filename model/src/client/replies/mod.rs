//! What a server makes of answers: responses, network errors, timeouts, webhooks.
//!
//! Order of decisions for a keyed POST (create, confirm, cancel, refund):
//! timeout anti-patterns (the contract's "don't do this" code) → retryable (network
//! error, timeout, 429, 5xx, 409 `operation_in_progress`: RETRY-01) → the answer itself
//! (2xx, 202, 409 `idempotency_conflict`, 409 `payment_in_progress`, 409 order/refund
//! number conflict, other 4xx). Every object applied goes through [`MerchantServer::apply_payment`]
//! or [`MerchantServer::apply_refund`], which compare versions (WEBHOOK-02).

use super::decision::{Decision, Subject};
use super::io::Reply;
use super::server::{Cx, Flight, MerchantServer, Op};
use crate::rules::Rule;

mod answers;
mod apply;
mod queries;
mod retry;
mod unknown;

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
}
