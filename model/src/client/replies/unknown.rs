//! The anti-patterns that act on an unknown result: a new key or a new order number
//! after a timeout, or the unknown taken for a failure.

use super::Unknown;
use crate::client::db::{OrderOutcome, SubmissionKind};
use crate::client::keys::KeyPurpose;
use crate::client::policy::AntiPattern;
use crate::client::server::{Cx, MerchantServer, Op};
use crate::text::Text;

impl MerchantServer {
    /// The anti-patterns that take an unknown result for a failure or switch key or order
    /// number on it. Returns whether one acted (the reference policy never does).
    pub(super) fn deviate_on_unknown(
        &mut self,
        cx: &mut Cx,
        order: &str,
        seq: u32,
        why: Unknown,
    ) -> bool {
        let rec = cx.order(order);
        let kind = rec.submission.kind;
        let has_payment = rec.payment_id.is_some();
        let departure = self
            .config
            .policy
            .charges_again_after_unknown(why == Unknown::Timeout, kind);
        let Some(pattern) = departure else {
            return false;
        };
        cx.order_depart(order, pattern);
        match pattern {
            AntiPattern::NewOrderNoAfterTimeout => {
                // `createPayment({ ...order, orderNo: `${order.orderNo}-retry` })`
                let number = Text::format(format_args!(
                    "{}-retry",
                    cx.order(order).submission.merchant_order_no
                ));
                let key = self.new_key(cx, KeyPurpose::CreatePayment, &number, 1);
                self.restart_submission(cx, order, seq + 1, SubmissionKind::Create, number, key);
                let op = Op::submit(order, seq + 1);
                self.send_keyed(cx, op, 1, pattern.breaks());
            }
            AntiPattern::NewKeyAfterTimeout => {
                // `createPayment(order, { idempotencyKey: crypto.randomUUID() })`
                let key = cx.dice.uuid();
                let op = Op::submit(order, seq);
                self.replace_key(cx, &op, key);
                self.send_keyed(cx, op, 1, pattern.breaks());
            }
            _ => {
                // "Failed": the payment is submitted again as a new business submission.
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
                let op = Op::submit(order, seq + 1);
                self.send_keyed(cx, op, 1, pattern.breaks());
            }
        }
        true
    }

    /// Replaces an order's submission (anti-patterns only): a new key, kept in the
    /// database (or in memory under `KeyNotPersisted`).
    pub(super) fn restart_submission(
        &mut self,
        cx: &mut Cx,
        order: &str,
        seq: u32,
        kind: SubmissionKind,
        merchant_order_no: Text,
        key: Text,
    ) {
        let op = Op::submit(order, seq);
        let stored = self.keep_key(cx, &op, key, seq, self.key_rule());
        let rec = cx.order(order);
        let new_number = merchant_order_no != rec.submission.merchant_order_no;
        rec.submission.seq = seq;
        rec.submission.kind = kind;
        rec.submission.merchant_order_no = merchant_order_no;
        rec.submission.key = stored;
        rec.submission.outcome = OrderOutcome::Sending;
        rec.confirming_since = None;
        if new_number {
            // A new order number is a new Payment as far as this server knows.
            rec.payment_id = None;
            rec.applied = None;
        }
    }
}
