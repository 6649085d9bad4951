//! Retries of keyed POSTs (RETRY-01..03, RATE-03) and giving up on them: the result
//! is then unknown.

use super::Reply;
use crate::api::{ApiResponse, ErrorCode};
use crate::client::db::OrderOutcome;
use crate::client::decision::{Decision, PayerMessage, Subject};
use crate::client::policy::{After503, AntiPattern};
use crate::client::schedule;
use crate::client::server::{ClientTimer, Cx, Flight, MerchantServer, Op};
use crate::rules::Rule;
use crate::text::Text;

impl MerchantServer {
    /// RETRY-01..03: the same key after `min(30 s, 1 s × 2^(n-1))` plus jitter, or after
    /// Retry-After on 429 (RATE-03); after the last try the result is unknown.
    pub(super) fn retry_or_give_up(&mut self, cx: &mut Cx, flight: Flight, reply: Reply) {
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
            let message = if let Some(pattern) = self.config.policy.payer_told_confirming_on_503() {
                cx.depart(op.subject(), pattern);
                PayerMessage::Confirming
            } else {
                PayerMessage::TemporarilyUnavailable
            };
            cx.decide(
                op.subject(),
                Decision::ShowPayer { message },
                Rule::PausedMessage,
            );
        }
        let retry_after = response
            .filter(|r| r.status == 429)
            .and_then(|r| r.retry_after_s);
        let unavailable =
            response.and_then(ApiResponse::error_code) == Some(ErrorCode::TemporarilyUnavailable);
        let executed_nothing = unavailable || response.is_some_and(|r| r.status == 429);
        if matches!(op, Op::Submit { .. }) && !executed_nothing {
            // UNKNOWN-02: a timeout, a network error or another 5xx may have charged.
            self.memory.uncertain.insert(op.clone());
        }
        if try_no >= self.config.params.tries_max {
            let mut certain = !self.memory.uncertain.remove(&op);
            let loops = self.config.policy.loops_on_503();
            if let (true, Some(pattern)) = (unavailable, loops) {
                // The planted loop: unknown, and a fresh window after every round.
                cx.depart(op.subject(), pattern);
                certain = false;
            } else if let (Op::Submit { order, .. }, true, true) = (&op, unavailable, certain)
                && self.config.params.after_503 == After503::NotAccepted
            {
                return self.not_accepted(cx, order, ErrorCode::TemporarilyUnavailable);
            } else if let (Op::Submit { order, .. }, true, true) =
                (&op, response.is_some_and(|r| r.status == 429), certain)
                && self.config.params.after_429 == After503::NotAccepted
            {
                // A-429-REFERENCE-CODE, RATE-01's reading: five 429s executed nothing; a
                // later payment of the order waits for the last Retry-After (RATE-03), if
                // it carried one (A-RETRY-AFTER-429: absent and a date leave it to the
                // backoff).
                if let Some(seconds) = retry_after {
                    let until = cx.now.after(crate::time::Millis::secs(u64::from(seconds)));
                    self.memory.held_back.insert(op.clone(), until);
                }
                return self.not_accepted(cx, order, ErrorCode::RateLimited);
            }
            if let Some(seconds) = retry_after {
                // RATE-03 outlasts the tries: whatever sends this op again (a lookup that
                // finds nothing, QUERY-06; a restart) waits for this 429's Retry-After.
                let until = cx.now.after(crate::time::Millis::secs(u64::from(seconds)));
                self.memory.held_back.insert(op.clone(), until);
            }
            return self.give_up(cx, &op, certain);
        }
        let (failed_try, jitter) = self.detail_backoff(cx, &op, try_no);
        let params = &self.config.params;
        let ignores_retry_after = self.config.policy.ignores_retry_after();
        let (delay, rule) = match (retry_after, ignores_retry_after) {
            (Some(_), Some(pattern)) => {
                cx.depart(op.subject(), pattern);
                let delay = schedule::retry_delay(params, failed_try, jitter, None);
                (delay, pattern.breaks())
            }
            (Some(seconds), None) => (
                schedule::retry_delay(params, failed_try, jitter, Some(seconds)),
                Rule::RetryAfterHonoured,
            ),
            (None, _) => (
                schedule::retry_delay(params, failed_try, jitter, None),
                Rule::RetryBackoff,
            ),
        };
        let mut send_rule = if rule == Rule::RetryBackoff {
            Rule::RetrySameKey
        } else {
            rule
        };
        if let Some(pattern) = self.config.policy.key_drawn_again_on_retry() {
            cx.depart(op.subject(), pattern);
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

    /// The try number the backoff counts from and the jitter added, as RETRY-02 says
    /// (`try_no`, the drawn jitter) or as `BackoffNotDoubled` (always the first try's 1 s)
    /// and `JitterNotCapped` (four times the jitter) get them wrong.
    fn detail_backoff(&self, cx: &mut Cx, op: &Op, try_no: u32) -> (u32, crate::time::Millis) {
        let mut failed_try = try_no;
        let mut jitter = cx.jitter;
        for pattern in self.config.policy.backoff_departures() {
            cx.depart(op.subject(), pattern);
            match pattern {
                AntiPattern::BackoffNotDoubled => failed_try = 1,
                _ => jitter = crate::time::Millis(jitter.0 * 4),
            }
        }
        (failed_try, jitter)
    }

    /// Overwrites a keyed op's stored key (anti-patterns only).
    pub(super) fn replace_key(&mut self, cx: &mut Cx, op: &Op, key: Text) {
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
    /// `certain`: no try of the round may have executed (each was answered 503 or 429),
    /// so the round gives no new "first acceptance" to count the queries from.
    fn give_up(&mut self, cx: &mut Cx, op: &Op, certain: bool) {
        match op {
            Op::Submit { order, .. } => {
                if certain && cx.order(order).confirming_since.is_some() {
                    // A-S13-REFERENCE-CODE, the RESULT_UNKNOWN reading: a round of 503s
                    // after a "not found" (QUERY-06) keeps the window it came from, so
                    // the schedule, and the re-creates it leads to, end in 24 hours.
                    cx.order(order).submission.outcome = OrderOutcome::Unknown;
                } else {
                    self.became_unknown(cx, order);
                }
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
                    c.outcome = OrderOutcome::Unknown;
                }
                cx.order_decide(order, Decision::ResultUnknown, Rule::RetryMaxAttempts);
                self.keep_querying(cx, order);
            }
            Op::Refund { refund } => {
                if let Some(r) = cx.db.refund_mut(refund) {
                    r.outcome = OrderOutcome::Unknown;
                }
                // SCHED-03: refunds are not polled: webhooks and the daily reconciliation.
                let subject = Subject::Refund(refund.clone());
                cx.decide(subject, Decision::ResultUnknown, Rule::RefundNoPolling);
            }
            _ => {}
        }
    }

    /// S13, RATE-04 (A-S13-REFERENCE-CODE, the default reading): every try of the round
    /// was answered 503 `temporarily_unavailable` or 429, and none may have executed:
    /// "本次请求未受理，没有创建 Payment，也没有扣款" (not accepted, no Payment, no charge).
    /// The result is known: the payer was shown "temporarily unable to pay" (WORDING-01);
    /// nothing is queried; paying the order again later re-sends it under the same key.
    /// `code` is the last answer's: `rate_limited` only under `after_429 = not_accepted`
    /// (RATE-01, A-429-REFERENCE-CODE).
    fn not_accepted(&mut self, cx: &mut Cx, order: &str, code: ErrorCode) {
        let rule = match code {
            ErrorCode::RateLimited => Rule::RateLimited,
            _ => Rule::ChannelPaused,
        };
        let rec = cx.order(order);
        rec.submission.outcome = OrderOutcome::Rejected(code);
        rec.confirming_since = None;
        cx.order_decide(order, Decision::Rejected { code }, rule);
        self.stop_queries(cx, order);
    }

    /// A submission still sending has no result: "confirming" from now. A-CLIENT-SCHED-ANCHOR:
    /// the query window counts from here, not from an older window of the same order (a
    /// lookup before a crash, or an unknown result whose create was then found never made
    /// and sent again), which could be over already and leave the submission unqueried.
    pub(super) fn became_unknown(&mut self, cx: &mut Cx, order: &str) {
        let now = cx.now;
        let rec = cx.order(order);
        if rec.submission.outcome == OrderOutcome::Sending {
            rec.confirming_since = Some(now);
        }
        rec.submission.outcome = OrderOutcome::Unknown;
    }
}
