//! Cadence: when clients retry, wait and query, and when the platform verifies an
//! unknown charge with the upstream (RETRY-02, TIMEOUT-01, SCHED-01, RES-01, RES-03).
//!
//! Everything here is judged against the contract's numbers ([`Contract`]), never the
//! client's or the platform's parameters. Three kinds of state:
//! - **first witnesses** (`Option`s), one per kind of deviation, as in every family;
//! - **what each client node is handling** ([`ClientInputs`]): the answer delivered to it
//!   or its timeout, replaced by every such input, so that a decision is judged against
//!   the input it answers (a retry after a 429 with Retry-After is timed by it, others by
//!   the backoff);
//! - **history** ([`History`]): when each order was created, which database a node
//!   writes, which Payments a database holds as final, when the platform last queried
//!   each attempt upstream.
//!
//! All three are part of a state's identity: the checker fingerprints the facts with
//! the rest of the world, so two paths to one state with different histories are two
//! states, each judged with its own history. Leaving the last two outside the identity
//! would save 0–1.8 % of the states (`create-lossy`: 147,172 against 149,758) but keep,
//! for any state, the history of whichever path reached it first: a violation only another path carried
//! could be missed, and with two threads which path came first was a matter of timing.
//! Now a verdict is a function of the state, whatever the search order or thread count.

use super::attempts::Attempts;
use payhub_model::Shared;
use payhub_model::acquirer::UpstreamCall;
use payhub_model::client::{Decision, Subject};
use payhub_model::event::What;
use payhub_model::{
    AttemptId, Contract, Endpoint, Method, Millis, PaymentId, PaymentStatus, ResolutionStatus, Text,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a client node is handling: the last answer delivered to it, or its timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    Answer {
        status: u16,
        retry_after_s: Option<u32>,
    },
    Timeout,
}

/// The input each client node is handling, and what it has shown the payer since.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ClientInputs {
    pub input: BTreeMap<u8, Input>,
    /// Nodes that showed "temporarily unavailable" since their input (WORDING-01).
    pub showed_unavailable: BTreeSet<u8>,
    /// The order each node applied a `manual_review` Payment to since its input.
    pub applied_manual_review: BTreeMap<u8, Text>,
}

impl ClientInputs {
    /// Whether `what` is an input to a client node (an answer delivered, a timeout).
    pub fn is_input(what: &What) -> bool {
        matches!(what, What::Delivered { .. } | What::TimedOut { .. })
    }

    /// The node an input is for, and the input.
    fn input_of(what: &What) -> Option<(u8, Input)> {
        match what {
            What::Delivered { to, response, .. } => Some((
                *to,
                Input::Answer {
                    status: response.status,
                    retry_after_s: response.retry_after_s,
                },
            )),
            What::TimedOut { node, .. } => Some((*node, Input::Timeout)),
            _ => None,
        }
    }

    /// Whether folding `what` would change anything: not for the same input again with
    /// nothing shown since (the checker then copies nothing).
    pub fn changed_by(&self, what: &What) -> bool {
        Self::input_of(what).is_some_and(|(node, input)| {
            self.input.get(&node) != Some(&input)
                || self.showed_unavailable.contains(&node)
                || self.applied_manual_review.contains_key(&node)
        })
    }

    /// Folds an input: it replaces what the node was handling.
    pub fn observe(&mut self, what: &What) {
        let Some((node, input)) = Self::input_of(what) else {
            return;
        };
        self.input.insert(node, input);
        self.showed_unavailable.remove(&node);
        self.applied_manual_review.remove(&node);
    }

    /// What node `node` is handling.
    pub fn of(&self, node: u8) -> Option<Input> {
        self.input.get(&node).copied()
    }
}

/// History the cadence properties need (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct History {
    /// The database each client node writes, as its submissions name it.
    pub node_db: BTreeMap<u8, u8>,
    /// When each order (database, order number) first appeared in its database.
    pub created: BTreeMap<(u8, Text), Millis>,
    /// Payments a client database holds as succeeded, canceled or expired (a mirror).
    pub final_payments: BTreeMap<PaymentId, (u8, Text)>,
    /// When the platform last queried each attempt upstream on a timer.
    pub queried: BTreeMap<AttemptId, Millis>,
    /// Payments seen in manual_review.
    pub manual_review: BTreeSet<PaymentId>,
}

/// The cadence family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Cadence {
    /// Each in its own copy-on-write box: an event that changes one part of the family
    /// copies neither (their ordered maps were deep-copied and freed with every change
    /// of the family, a third of the checker's instructions at the time).
    pub inputs: Shared<ClientInputs>,
    pub history: Shared<History>,
    /// The first client request sent with a timeout below the contract's minimum.
    pub short_timeout: Option<Box<ShortTimeout>>,
    /// The first retry a client scheduled off the reference backoff.
    pub off_backoff: Option<Box<OffBackoff>>,
    /// The first query of a Payment its client database already holds as final.
    pub query_after_final: Option<Box<QueryAfterFinal>>,
    /// The first query schedule a client ended before its 24 hours.
    pub schedule_cut: Option<Box<ScheduleCut>>,
    /// The first automatic upstream verification of an unknown charge that came 24
    /// hours or more after the charge or the query before.
    pub late_verification: Option<Box<LateVerification>>,
    /// The first manual_review re-query that came more than 24 hours after the query
    /// before.
    pub late_requery: Option<Box<LateVerification>>,
    /// The first Payment put in manual_review before the platform verified it.
    pub early_manual_review: Option<Box<EarlyManualReview>>,
}

/// Merchant-`node` sent `what` with `timeout`, below `minimum`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ShortTimeout {
    pub node: u8,
    pub what: Text,
    pub timeout: Millis,
    pub minimum: Millis,
}

/// Merchant-`node` scheduled try `try_no` `delay` after the failure of the one before;
/// the reference code waits from `least` to below `below`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct OffBackoff {
    pub node: u8,
    pub subject: Text,
    pub try_no: u32,
    pub delay: Millis,
    pub least: Millis,
    pub below: Millis,
}

/// Merchant-`node` queried `payment` at `at` while order `order` was final in its database.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct QueryAfterFinal {
    pub node: u8,
    pub payment: PaymentId,
    pub order: Text,
    pub at: Millis,
}

/// Merchant-`node` ended the query schedule of `order` at `at`; the order was created at
/// `since`, and the schedule runs until `due` at least.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ScheduleCut {
    pub node: u8,
    pub order: Text,
    pub at: Millis,
    pub since: Millis,
    pub due: Millis,
}

/// The platform queried `attempt` upstream at `at`, `gap` after `since` (its charge, or
/// its previous query); `limit` is the longest gap allowed there.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct LateVerification {
    pub attempt: AttemptId,
    pub manual_review: bool,
    pub at: Millis,
    pub since: Millis,
    pub gap: Millis,
    pub limit: Millis,
}

/// `payment` went to manual_review at `at` with no upstream query of `attempt` before.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct EarlyManualReview {
    pub payment: PaymentId,
    pub attempt: Option<AttemptId>,
    pub at: Millis,
}

/// SCHED-01 read from the contract's numbers: the last query time of the schedule, as
/// an offset from when the result became unknown (10 s … 1 h, then every 4 hours while
/// within 24 hours: 21 h, assumption A-CLIENT-SCHED-4H).
pub fn last_scheduled_query() -> Millis {
    let mut last = *Contract::QUERY_OFFSETS.last().expect("offsets");
    while last.after(Contract::QUERY_EVERY) <= Contract::QUERY_UNTIL {
        last = last.after(Contract::QUERY_EVERY);
    }
    last
}

/// RETRY-02 read from the contract's numbers: the backoff after try `failed_try` fails,
/// `min(30 s, 1 s × 2^(n-1))`, without jitter.
pub fn contract_backoff(failed_try: u32) -> Millis {
    let exponent = failed_try.saturating_sub(1).min(32);
    let wait = Contract::BACKOFF_BASE.0.saturating_mul(1u64 << exponent);
    Millis(wait.min(Contract::BACKOFF_MAX.0))
}

/// The attempt an upstream call verifies on the platform's own (a query, or the cancel
/// it re-sends while a cancel is pending).
fn verified_attempt(call: &UpstreamCall) -> Option<AttemptId> {
    match call {
        UpstreamCall::QueryCharge { attempt } | UpstreamCall::CancelCharge { attempt } => {
            Some(*attempt)
        }
        _ => None,
    }
}

fn is_final(status: Option<PaymentStatus>) -> bool {
    matches!(
        status,
        Some(PaymentStatus::Succeeded | PaymentStatus::Canceled | PaymentStatus::Expired)
    )
}

impl Cadence {
    /// Whether `what` may change this family.
    pub(super) fn changes(&self, what: &What) -> bool {
        match what {
            What::Delivered { .. } | What::TimedOut { .. } => self.inputs.changed_by(what),
            What::ClientSends { held: false, .. } => true,
            What::ClientDecided { decision, .. } => matches!(
                decision,
                Decision::RetryScheduled { .. } | Decision::ScheduleEnded
            ),
            What::OrderStored { was, stored, .. } => {
                was.is_none()
                    || is_final(was.as_ref().and_then(|w| w.status))
                    || is_final(stored.status)
            }
            What::UpstreamCalled {
                call, during: None, ..
            } => verified_attempt(call).is_some(),
            What::PaymentStored { payment, stored } => {
                stored.resolution == ResolutionStatus::ManualReview
                    && !self.history.manual_review.contains(payment)
            }
            What::ClockCompressed { .. } => !self.history.queried.is_empty(),
            _ => false,
        }
    }

    pub(super) fn observe(&mut self, at: Millis, what: &What, attempts: &Attempts) {
        match what {
            // The periods a compressed jump skipped are not the platform's: its queries
            // count as made up to the jump's end.
            What::ClockCompressed { to, .. } => {
                for t in self.history.queried.values_mut() {
                    *t = (*t).max(*to);
                }
            }
            What::Delivered { .. } | What::TimedOut { .. } => self.inputs.observe(what),
            What::ClientSends {
                node,
                request,
                timeout,
                submission,
                held: false,
                ..
            } => {
                if let Some(s) = submission {
                    self.history.node_db.insert(*node, s.db);
                }
                self.on_timeout(*node, &request.endpoint, *timeout);
                match &request.endpoint {
                    Endpoint::GetPayment { payment_id } => {
                        self.on_query(at, *node, |p, _, _| p == *payment_id)
                    }
                    // By merchant order number: a query of the order's Payment as much. An
                    // order number is no Payment id: judged only against the database the
                    // node is known to write (another database's order of the same number
                    // is another order).
                    Endpoint::ListPayments { merchant_order_no } => {
                        if let Some(db) = self.history.node_db.get(node).copied() {
                            let of = |d: u8, o: &Text| d == db && o == merchant_order_no;
                            self.on_query(at, *node, |_, d, o| of(d, o))
                        }
                    }
                    _ => {}
                }
            }
            What::ClientDecided {
                node,
                subject,
                decision,
                ..
            } => match decision {
                Decision::RetryScheduled { try_no, at: due } => {
                    self.on_retry(at, *node, subject, *try_no, *due)
                }
                Decision::ScheduleEnded => self.on_schedule_end(at, *node, subject),
                _ => {}
            },
            What::OrderStored {
                db,
                order_no,
                was,
                stored,
            } => {
                if was.is_none() {
                    self.history.created.insert((*db, order_no.clone()), at);
                }
                let finals = &mut self.history.final_payments;
                finals.retain(|_, (d, o)| !(*d == *db && o == order_no));
                if let (true, Some(p)) = (is_final(stored.status), stored.payment_id) {
                    finals.insert(p, (*db, order_no.clone()));
                }
            }
            What::UpstreamCalled {
                call, during: None, ..
            } => {
                if let Some(attempt) = verified_attempt(call) {
                    self.on_verification(at, attempt, attempts);
                }
            }
            What::PaymentStored { payment, stored }
                if stored.resolution == ResolutionStatus::ManualReview =>
            {
                self.on_manual_review(at, *payment, stored.attempts.last().copied());
            }
            _ => {}
        }
    }

    /// RES-03: manual_review means the automatic window ran: the platform queried the
    /// latest attempt upstream on its own before.
    fn on_manual_review(&mut self, at: Millis, payment: PaymentId, attempt: Option<AttemptId>) {
        if !self.history.manual_review.insert(payment) {
            return;
        }
        let verified = attempt.is_some_and(|a| self.history.queried.contains_key(&a));
        if !verified && self.early_manual_review.is_none() {
            self.early_manual_review = Some(Box::new(EarlyManualReview {
                payment,
                attempt,
                at,
            }));
        }
    }

    /// TIMEOUT-01: at least 20 s for create and confirm, at least 10 s for queries.
    fn on_timeout(&mut self, node: u8, endpoint: &Endpoint, timeout: Millis) {
        let minimum = match endpoint {
            e if e.method() == Method::Get => Contract::QUERY_TIMEOUT_MIN,
            Endpoint::CreatePayment { .. } | Endpoint::ConfirmPayment { .. } => {
                Contract::POST_TIMEOUT_MIN
            }
            // Cancel and refund: the contract names no minimum (A-CLIENT-POST-TIMEOUT).
            _ => return,
        };
        if timeout < minimum && self.short_timeout.is_none() {
            self.short_timeout = Some(Box::new(ShortTimeout {
                node,
                what: Text::format(format_args!("{} {}", endpoint.method(), endpoint.path())),
                timeout,
                minimum,
            }));
        }
    }

    /// SCHED-01: queries stop at succeeded, canceled and expired, whether the query names
    /// the Payment or its order number (`queried` picks the held Payments it is of, by
    /// Payment, database and order number). (A
    /// failed Payment is final for its attempt, but a card retry reopens it and its queries
    /// run while the database still holds the old failed version: not judged.)
    fn on_query(&mut self, at: Millis, node: u8, queried: impl Fn(PaymentId, u8, &Text) -> bool) {
        let db = self.history.node_db.get(&node).copied();
        let held = self
            .history
            .final_payments
            .iter()
            .find(|(p, (d, o))| db.is_none_or(|db| db == *d) && queried(**p, *d, o));
        if let (Some((payment, (_, order))), None) = (held, &self.query_after_final) {
            self.query_after_final = Some(Box::new(QueryAfterFinal {
                node,
                payment: *payment,
                order: order.clone(),
                at,
            }));
        }
    }

    /// RETRY-02: try n+1 comes `min(30 s, 1 s × 2^(n-1))` plus a jitter below 250 ms after
    /// try n failed (judged while the client handles that failure). A retry after a 429
    /// carrying Retry-After is timed by it instead (RATE-03), and judged by
    /// `client-honours-retry-after`.
    fn on_retry(&mut self, now: Millis, node: u8, subject: &Subject, try_no: u32, due: Millis) {
        let failed = match self.inputs.of(node) {
            // RATE-03 times it.
            Some(Input::Answer {
                status: 429,
                retry_after_s: Some(_),
            }) => false,
            // What the reference code retries: a timeout, 429, 5xx, and the in-flight 409s
            // (A-CLIENT-INFLIGHT-409). A try scheduled on any other answer (a lookup that
            // found nothing, QUERY-06) follows no failed try.
            Some(Input::Timeout) => true,
            Some(Input::Answer { status, .. }) => status == 429 || status == 409 || status >= 500,
            None => false,
        };
        if !failed || try_no < 2 {
            return;
        }
        let least = contract_backoff(try_no.saturating_sub(1));
        let below = least.after(Contract::JITTER_BELOW);
        let delay = due.since(now);
        if (delay < least || delay >= below) && self.off_backoff.is_none() {
            self.off_backoff = Some(Box::new(OffBackoff {
                node,
                subject: Text::format(format_args!("{subject}")),
                try_no,
                delay,
                least,
                below,
            }));
        }
    }

    /// SCHED-01: the schedule of an unknown result runs until 24 hours; it cannot have
    /// become unknown before the order existed in its database.
    fn on_schedule_end(&mut self, now: Millis, node: u8, subject: &Subject) {
        let Subject::Order(order) = subject else {
            return;
        };
        // A server no submission named the database of (one that only queried, or ended
        // the schedule of an order another server of its database sent) is judged
        // against the earliest order of that number in any database: ending before
        // that one's 24 hours is early whichever database it writes.
        let since = match self.history.node_db.get(&node) {
            Some(db) => self.history.created.get(&(*db, order.clone())),
            None => (self.history.created.iter())
                .filter(|((_, o), _)| o == order)
                .map(|(_, t)| t)
                .min(),
        };
        let Some(since) = since else {
            return;
        };
        let due = since.after(last_scheduled_query());
        if now < due && self.schedule_cut.is_none() {
            self.schedule_cut = Some(Box::new(ScheduleCut {
                node,
                order: order.clone(),
                at: now,
                since: *since,
                due,
            }));
        }
    }

    /// RES-01, RES-03: an unknown charge is verified within the automatic window, faster
    /// than the manual_review cadence (the first query, and every one before
    /// manual_review, less than 24 hours after the charge or the query before); under
    /// manual_review, at least every 24 hours.
    fn on_verification(&mut self, now: Millis, attempt: AttemptId, attempts: &Attempts) {
        let last = self.history.queried.insert(attempt, now);
        let manual_review = attempts
            .payments
            .values()
            .find(|p| p.attempts.contains(&attempt))
            .is_some_and(|p| p.resolution == ResolutionStatus::ManualReview);
        let since = match last {
            Some(t) => t,
            None => match attempts.attempts.get(&attempt) {
                Some(a) => a.sent_at,
                None => return,
            },
        };
        let gap = now.since(since);
        let limit = Contract::MANUAL_REVIEW_REQUERY;
        // Under manual_review a query every 24 hours is on time; anywhere else 24 hours
        // is already the manual_review cadence, too slow for the automatic window.
        let requery = manual_review && last.is_some();
        let (late, witness) = if requery {
            (gap > limit, &mut self.late_requery)
        } else {
            (gap >= limit, &mut self.late_verification)
        };
        if late && witness.is_none() {
            *witness = Some(Box::new(LateVerification {
                attempt,
                manual_review,
                at: now,
                since,
                gap,
                limit,
            }));
        }
    }
}
