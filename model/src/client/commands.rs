//! Business commands: what the payer or the merchant asks of a server, and where the
//! reference policy refuses (each refusal cites the rule behind it).

use super::db::{
    CancelRecord, OrderOutcome, OrderRecord, OrderState, RefundRecord, Submission, SubmissionKind,
};
use super::decision::{Refusal, Subject};
use super::io::Command;
use super::keys::{self, KeyPurpose, Keys};
use super::server::{Cx, MerchantServer, Op};
use crate::api::{Endpoint, ErrorCode, PaymentStatus};
use crate::ids::Card;
use crate::rules::Rule;
use crate::text::Text;

impl MerchantServer {
    // ---- commands -----------------------------------------------------------------

    pub(super) fn on_command(&mut self, cx: &mut Cx, command: Command) {
        match command {
            Command::PayOrder {
                order,
                amount,
                currency,
                card,
            } => self.pay_order(cx, &order, amount, currency, card),
            Command::RetryWithCard { order, card } => self.retry_with_card(cx, &order, card),
            Command::CancelOrder { order } => self.cancel_order(cx, &order),
            Command::AmendOrder { order, amount } => self.amend_order(cx, &order, amount),
            Command::RefundOrder {
                order,
                refund,
                amount,
            } => self.refund_order(cx, &order, &refund, amount),
            Command::Reconcile => self.reconcile(cx),
        }
    }

    fn pay_order(&mut self, cx: &mut Cx, order: &str, amount: u64, currency: Text, card: Card) {
        let subject = Subject::Order(order.into());
        if order.is_empty() || amount == 0 || amount > i64::MAX as u64 {
            return cx.refuse(subject, Refusal::InvalidOrder, Rule::SafeParameters);
        }
        if keys::derived_len_max(order) > self.config.params.key_len_max {
            // KEY-07: every key of this order must fit in 255 characters.
            return cx.refuse(subject, Refusal::InvalidOrder, Rule::KeyLength);
        }
        if self.config.policy.keys == Keys::Deterministic && keys::looks_personal(order) {
            // GEN-03: a derived key carries the order number; it must carry no e-mail.
            return cx.refuse(subject, Refusal::InvalidOrder, Rule::NoSensitiveDataInKeys);
        }
        if let Some(rec) = cx.db.order(order) {
            if rec.create_rejected() {
                // REJECT-01: "after correcting them, submit with a new key": the corrected
                // order is a new business submission (A-CLIENT-CORRECTED-KEY).
                let seq = rec.submission.seq + 1;
                return self.resubmit_corrected(cx, order, seq, (amount, currency), card);
            }
            if rec.amount != amount || rec.currency != currency {
                // UNKNOWN-04: the order number and its key are bound to these parameters.
                return cx.refuse(subject, Refusal::ParametersBound, Rule::ConflictIsDefect);
            }
            let op = Op::submit(order, rec.submission.seq);
            let not_accepted = match rec.submission.outcome {
                OrderOutcome::Rejected(ErrorCode::TemporarilyUnavailable) => {
                    Some(Rule::ChannelPaused)
                }
                OrderOutcome::Rejected(ErrorCode::RateLimited) => Some(Rule::RetryAfterHonoured),
                _ => None,
            };
            if let Some(rule) = not_accepted
                && rec.payment_id.is_none()
            {
                // S13: "稍后用 K 重试" (retry later with K): the 503s executed nothing and
                // bound no key, so paying the order again re-sends it under the same key;
                // so do 429s taken as not executed (RATE-03, A-429-REFERENCE-CODE).
                cx.order(order).submission.outcome = OrderOutcome::Sending;
                if !self.busy(&op) {
                    self.send_keyed(cx, op, 1, rule);
                }
                return;
            }
            if rec.submission.outcome != OrderOutcome::Sending {
                let state = rec.state();
                let rule = if state == OrderState::Paid {
                    Rule::FulfilByPaymentId
                } else {
                    Rule::UniqueOrderNo
                };
                return cx.refuse(subject, Refusal::OrderExists { state }, rule);
            }
            if self.busy(&op) {
                return cx.refuse(subject, Refusal::AlreadyInProgress, Rule::DeterministicKeys);
            }
            // S5: another server (or a crashed process) started this submission. The key
            // and the card come from the database, so both servers send the same request
            // (GEN-01 derived, GEN-04 read back). A-CLIENT-DB-TXN: the order number is the
            // database's key and each step one transaction, so no second order exists.
            let rule = match self.config.policy.keys {
                Keys::Deterministic => Rule::DeterministicKeys,
                Keys::RandomPersisted => Rule::RandomKeyPersistedFirst,
            };
            return self.send_keyed(cx, op, 1, rule);
        }
        let key = self.new_key(cx, KeyPurpose::CreatePayment, order, 1);
        let op = Op::submit(order, 1);
        let stored = self.keep_key(cx, &op, key, 1, self.key_rule());
        cx.db.insert_order(OrderRecord {
            order_no: order.into(),
            amount,
            currency,
            submission: Submission {
                seq: 1,
                kind: SubmissionKind::Create,
                merchant_order_no: order.into(),
                key: stored,
                card,
                outcome: OrderOutcome::Sending,
            },
            payment_id: None,
            applied: None,
            cancel: None,
            confirming_since: None,
            last_query_at: None,
            fulfilled: None,
            support_due: None,
        });
        // GEN-06: the key is in the database before the request leaves.
        self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
    }

    /// A-CLIENT-CORRECTED-KEY: the order's create was rejected with 400, 401, 403 or 422
    /// (nothing executed, REJECT-01); paying it again, corrected or not, is a new business
    /// submission: sequence + 1, so a derived key is new (`payment.create:ORDER:2`, GEN-02)
    /// and a random one is drawn and persisted afresh (GEN-04).
    fn resubmit_corrected(
        &mut self,
        cx: &mut Cx,
        order: &str,
        seq: u32,
        (amount, currency): (u64, Text),
        card: Card,
    ) {
        let key = self.new_key(cx, KeyPurpose::CreatePayment, order, seq);
        let op = Op::submit(order, seq);
        let stored = self.keep_key(cx, &op, key, seq, Rule::SequenceOnlyForNewSubmission);
        let rec = cx.order(order);
        rec.amount = amount;
        rec.currency = currency;
        rec.submission = Submission {
            seq,
            kind: SubmissionKind::Create,
            merchant_order_no: order.into(),
            key: stored,
            card,
            outcome: OrderOutcome::Sending,
        };
        rec.confirming_since = None;
        self.send_keyed(cx, op, 1, Rule::RejectionsDoNotOccupyKey);
    }

    fn retry_with_card(&mut self, cx: &mut Cx, order: &str, card: Card) {
        let subject = Subject::Order(order.into());
        let Some(rec) = cx.db.order(order) else {
            return cx.refuse(subject, Refusal::UnknownOrder, Rule::PersistBeforeSend);
        };
        let Some(applied) = rec.applied.clone().filter(|_| rec.payment_id.is_some()) else {
            // ATTEMPT-07: no Payment known, so no `failed` status seen: no card retry.
            return cx.refuse(
                subject,
                Refusal::NoPaymentId,
                Rule::CardRetryOnlyAfterFailed,
            );
        };
        if rec.submission.outcome == OrderOutcome::Sending {
            // UNIQ-02: one unfinished attempt at a time, this merchant's own included.
            let reason = Refusal::AlreadyInProgress;
            return cx.refuse(subject, reason, Rule::OneUnfinishedAttempt);
        }
        let failed = applied.status == PaymentStatus::Failed;
        let pending = rec.state() == OrderState::PendingConfirmation;
        let seq = rec.submission.seq + 1;
        let merchant_order_no = rec.submission.merchant_order_no.clone();
        if !failed {
            let in_progress = applied.status.is_in_progress();
            let departure = self.config.policy.card_retry_while_in_progress();
            if let (true, Some(pattern)) = (in_progress, departure) {
                cx.depart(subject.clone(), pattern);
            } else {
                // ATTEMPT-07 (the client's side of ATTEMPT-02): a card retry only after
                // `failed`, never while processing or requires_action; under manual_review
                // never a new charge (RES-04).
                let rule = if pending {
                    Rule::ManualReviewClient
                } else {
                    Rule::CardRetryOnlyAfterFailed
                };
                let status = Some(applied.status);
                return cx.refuse(subject, Refusal::NotFailed { status }, rule);
            }
        }
        if applied.attempt_count >= self.config.params.attempts_max {
            return cx.refuse(subject, Refusal::AttemptsExhausted, Rule::AttemptsMax);
        }
        if cx.now >= applied.expires_at {
            return cx.refuse(subject, Refusal::Expired, Rule::CardRetryBeforeExpiry);
        }
        // GEN-02: a card change is a new business submission: sequence + 1, a new key.
        let key = self.new_key(cx, KeyPurpose::ConfirmPayment, order, seq);
        let op = Op::submit(order, seq);
        let stored = self.keep_key(cx, &op, key, seq, Rule::SequenceOnlyForNewSubmission);
        let rec = cx.order(order);
        rec.submission = Submission {
            seq,
            kind: SubmissionKind::Confirm,
            merchant_order_no,
            key: stored,
            card,
            outcome: OrderOutcome::Sending,
        };
        // A new submission: its query schedule, if any, starts afresh (A-CLIENT-SCHED-ANCHOR).
        rec.confirming_since = None;
        self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
    }

    fn cancel_order(&mut self, cx: &mut Cx, order: &str) {
        let subject = Subject::Order(order.into());
        let Some(rec) = cx.db.order(order) else {
            return cx.refuse(subject, Refusal::UnknownOrder, Rule::PersistBeforeSend);
        };
        if rec.payment_id.is_none() {
            return cx.refuse(subject, Refusal::NoPaymentId, Rule::QueryById);
        }
        let state = rec.state();
        if state.is_settled() && state != OrderState::Failed {
            return cx.refuse(
                subject,
                Refusal::NotCancelable { state },
                Rule::TerminalStatuses,
            );
        }
        let op = Op::cancel(order);
        if let Some(cancel) = &rec.cancel {
            let again = matches!(
                cancel.outcome,
                OrderOutcome::Sending | OrderOutcome::Unknown
            );
            if !again || self.busy(&op) {
                return cx.refuse(
                    subject,
                    Refusal::AlreadyInProgress,
                    Rule::Cancel202NotCanceled,
                );
            }
            // The same cancel, under the same key (a 202 is not canceled: CANCEL-02); an
            // order has one cancel (A-CLIENT-CANCEL-KEY).
            if let Some(c) = cx.order(order).cancel.as_mut() {
                c.outcome = OrderOutcome::Sending;
            }
            return self.send_keyed(cx, op, 1, Rule::Cancel202NotCanceled);
        }
        let key = if let Some(pattern) = self.config.policy.key_of_follow_up() {
            cx.depart(subject, pattern);
            self.submission_key(cx, order)
        } else {
            // GEN-05: one key per submission and endpoint.
            self.new_key(cx, KeyPurpose::CancelPayment, order, 1)
        };
        let stored = self.keep_key(cx, &op, key, 1, Rule::OneKeyPerSubmission);
        cx.order(order).cancel = Some(CancelRecord {
            key: stored,
            outcome: OrderOutcome::Sending,
        });
        self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
    }

    fn amend_order(&mut self, cx: &mut Cx, order: &str, amount: u64) {
        let subject = Subject::Order(order.into());
        let Some(rec) = cx.db.order(order) else {
            return cx.refuse(subject, Refusal::UnknownOrder, Rule::PersistBeforeSend);
        };
        let departure = self.config.policy.amends_under_original_key();
        let Some(pattern) = departure.filter(|_| amount != 0) else {
            // UNKNOWN-04: never change the parameters and replay the original key; the
            // order number is bound to them as well (UNIQ-01).
            return cx.refuse(subject, Refusal::ParametersBound, Rule::ConflictIsDefect);
        };
        let op = Op::submit(order, rec.submission.seq);
        let resend = rec.submission.kind == SubmissionKind::Create && !self.busy(&op);
        cx.depart(subject, pattern);
        let rec = cx.order(order);
        rec.amount = amount;
        if resend {
            rec.submission.outcome = OrderOutcome::Sending;
            self.send_keyed(cx, op, 1, pattern.breaks());
        }
    }

    /// REFUND-04 (S11): a refund is one submission under one key and one refund number;
    /// a lost answer is retried under both (RETRY-01), never renumbered.
    fn refund_order(&mut self, cx: &mut Cx, order: &str, refund: &str, amount: u64) {
        let subject = Subject::Refund(refund.into());
        let op = Op::refund(refund);
        if let Some(existing) = cx.db.refund(refund) {
            if existing.rejected() && existing.order_no == order {
                // REJECT-01: "修正后用新键提交" (after correcting, submit with a new key):
                // the platform never bound the refund number (A-CLIENT-CORRECTED-KEY).
                let seq = existing.seq + 1;
                return self.refund_corrected(cx, refund, seq, amount);
            }
            let same = existing.order_no == order && existing.amount == amount;
            if same && existing.outcome == OrderOutcome::Sending && !self.busy(&op) {
                // Another server's refund: the same key from the database.
                let rule = self.key_rule();
                return self.send_keyed(cx, op, 1, rule);
            }
            return cx.refuse(subject, Refusal::RefundExists, Rule::UniqueRefundNo);
        }
        let Some(rec) = cx.db.order(order) else {
            return cx.refuse(subject, Refusal::UnknownOrder, Rule::PersistBeforeSend);
        };
        let state = rec.state();
        let (Some(payment_id), OrderState::Paid) = (rec.payment_id, state) else {
            return cx.refuse(subject, Refusal::NotPaid { state }, Rule::TerminalStatuses);
        };
        let too_long = keys::derived_len_max(refund) > self.config.params.key_len_max;
        if refund.is_empty() || amount == 0 || amount > i64::MAX as u64 || too_long {
            return cx.refuse(subject, Refusal::InvalidOrder, Rule::KeyLength);
        }
        if self.config.policy.keys == Keys::Deterministic && keys::looks_personal(refund) {
            return cx.refuse(subject, Refusal::InvalidOrder, Rule::NoSensitiveDataInKeys);
        }
        let key = if let Some(pattern) = self.config.policy.key_of_follow_up() {
            cx.depart(subject, pattern);
            self.submission_key(cx, order)
        } else {
            self.new_key(cx, KeyPurpose::CreateRefund, refund, 1)
        };
        let stored = self.keep_key(cx, &op, key, 1, self.key_rule());
        cx.db.insert_refund(RefundRecord {
            refund_no: refund.into(),
            order_no: order.into(),
            payment_id,
            amount,
            seq: 1,
            key: stored,
            outcome: OrderOutcome::Sending,
            refund_id: None,
            applied: None,
            last_query_at: None,
        });
        self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
    }

    /// A-CLIENT-CORRECTED-KEY for refunds: a refund rejected with 400, 401, 403 or 422
    /// asked for again (its amount corrected, or not) is a new submission: sequence + 1,
    /// a new derived key (`refund.create:REFUND:2`, GEN-02) or a new random one (GEN-04).
    fn refund_corrected(&mut self, cx: &mut Cx, refund: &str, seq: u32, amount: u64) {
        let subject = Subject::Refund(refund.into());
        if amount == 0 || amount > i64::MAX as u64 {
            return cx.refuse(subject, Refusal::InvalidOrder, Rule::SafeParameters);
        }
        let op = Op::refund(refund);
        if self.busy(&op) {
            return cx.refuse(subject, Refusal::AlreadyInProgress, Rule::UniqueRefundNo);
        }
        let key = self.new_key(cx, KeyPurpose::CreateRefund, refund, seq);
        let stored = self.keep_key(cx, &op, key, seq, Rule::SequenceOnlyForNewSubmission);
        let rec = cx.db.refund_mut(refund).expect("looked up");
        rec.amount = amount;
        rec.seq = seq;
        rec.key = stored;
        rec.outcome = OrderOutcome::Sending;
        self.send_keyed(cx, op, 1, Rule::RejectionsDoNotOccupyKey);
    }

    /// SCHED-03: refunds are not polled; once a day, list the processing ones, and look up
    /// by refund number each refund whose create never got an answer (A-CLIENT-REFUND-LOOKUP).
    fn reconcile(&mut self, cx: &mut Cx) {
        if !self.busy(&Op::ReconcileRefunds) {
            let request = self.query_request(Endpoint::ListRefundsProcessing);
            self.send(cx, Op::ReconcileRefunds, 1, request, Rule::RefundNoPolling);
        }
        for refund in cx.db.refund_nos() {
            let Some(rec) = cx.db.refund(&refund) else {
                continue;
            };
            let op = Op::QueryRefund {
                refund: refund.clone(),
            };
            if rec.outcome == OrderOutcome::Unknown && rec.refund_id.is_none() && !self.busy(&op) {
                self.send_refund_query(cx, &refund, Rule::RefundNoPolling);
            }
        }
    }
}
