//! Cadence: when clients retry, wait and query, when the platform answers 202 after its
//! synchronous wait and when it verifies an unknown charge with the upstream (RETRY-02,
//! TIMEOUT-01, SCHED-01, UPSTREAM-01, RES-01, RES-03).
//!
//! The facts record; the cadence properties (`properties/src/cadence.rs`) compare them
//! with the contract's numbers, never with the client's or the platform's parameters.
//! Three kinds of state:
//! - **extremes with their witnesses**: the shortest timeout each node sent, the shortest
//!   and longest wait before each try, the earliest end of a query schedule, the slowest
//!   upstream verification; and first witnesses where no number decides (a query after
//!   a final status, manual_review before any verification);
//! - **what each client node is handling** ([`ClientInputs`], kept by the effects family
//!   and read here): the answer delivered to it or its timeout, replaced by every such
//!   input, so that a decision is judged against the input it answers (a retry after a
//!   429 with Retry-After is timed by it, others by the backoff);
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
use super::note_first;
use payhub_model::acquirer::UpstreamCall;
use payhub_model::client::{Decision, Subject};
use payhub_model::event::What;
use payhub_model::{
    AttemptId, Contract, CowMap, Endpoint, Method, Millis, PaymentId, PaymentStatus, RequestId,
    ResolutionStatus, Rule, Text,
};
use payhub_model::{CowSet, Shared};
use serde::Serialize;

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
    pub input: CowMap<u8, Input>,
    /// Nodes that showed "temporarily unavailable" since their input (WORDING-01).
    pub showed_unavailable: CowSet<u8>,
    /// The order each node applied a `manual_review` Payment to since its input.
    pub applied_manual_review: CowMap<u8, Text>,
}

impl ClientInputs {
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
    pub node_db: CowMap<u8, u8>,
    /// When each order (database, order number) first appeared in its database.
    pub created: CowMap<(u8, Text), Millis>,
    /// Payments a client database holds as succeeded, failed, canceled or expired (a
    /// mirror), but a failed one a client has sent a confirm of (a card retry reopens
    /// it while the database still holds the old failed version, and a client that
    /// restarts during one resends it and queries while a server beside it applies the
    /// retry's own failure: not judged).
    pub final_payments: CowMap<PaymentId, (u8, Text)>,
    /// When the platform last queried each attempt upstream on a timer.
    pub queried: CowMap<AttemptId, Millis>,
    /// Payments seen in manual_review.
    pub manual_review: CowSet<PaymentId>,
    /// Payments a client has sent a confirm of (a card retry, or the first confirm of a
    /// Payment created without a card).
    pub confirmed: CowSet<PaymentId>,
    /// Creates and confirms whose own step sent a charge upstream and that are not
    /// answered yet: when the step came (a mirror of the platform's synchronous waits).
    pub waiting_upstream: CowMap<RequestId, Millis>,
}

/// The cadence family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Cadence {
    /// In its own copy-on-write box: an event that changes the rest of the family does
    /// not copy it (its ordered maps were deep-copied and freed with every change of the
    /// family, a third of the checker's instructions at the time).
    pub history: Shared<History>,
    /// The shortest timeout each client node sent with a request of each kind the
    /// contract names a minimum for (TIMEOUT-01).
    pub shortest_timeout: CowMap<(u8, Waited), Millis>,
    /// Per try number, the shortest and the longest wait a client scheduled before it
    /// after the try before failed (RETRY-02; the first witness of each extreme).
    pub retry_waits: CowMap<u32, RetryWaits>,
    /// The first query of a Payment its client database already holds as final.
    pub query_after_final: Option<Box<QueryAfterFinal>>,
    /// The query schedule a client ended soonest after its order's creation (the
    /// first such end: a later one replaces it only when sooner).
    pub earliest_schedule_end: Option<Shared<ScheduleEnd>>,
    /// The automatic upstream verification of an unknown charge that came longest after
    /// the charge or the query before (the first such).
    pub slowest_verification: Option<Shared<Verification>>,
    /// The manual_review re-query that came longest after the query before (the first
    /// such).
    pub slowest_requery: Option<Shared<Verification>>,
    /// The first Payment put in manual_review before the platform verified it.
    pub early_manual_review: Option<Box<EarlyManualReview>>,
    /// The first 202 told for a synchronous wait that ran out outside the contract's
    /// "about 15 s" after its request's step (UPSTREAM-01; the window is the property's,
    /// [`sync_wait_window`]). Only a breach is kept: a reference run, whose
    /// every such 202 comes at 15 s, keeps nothing, so no state is split by when it came.
    pub sync_wait_off: Option<SyncWait>,
}

/// Exchange `id` was answered 202 `waited` after its step sent the charge upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SyncWait {
    pub id: RequestId,
    pub at: Millis,
    pub waited: Millis,
}

/// The requests TIMEOUT-01 names a minimum timeout for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Waited {
    /// A query (GET).
    Query,
    /// A create or a confirm.
    CreateOrConfirm,
}

/// Merchant-`node` scheduled a try of `subject` `delay` after the failure of the one
/// before.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RetryWait {
    pub node: u8,
    pub subject: Text,
    pub delay: Millis,
}

/// The shortest and the longest wait scheduled before one try number.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RetryWaits {
    pub shortest: RetryWait,
    pub longest: RetryWait,
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
/// `since`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ScheduleEnd {
    pub node: u8,
    pub order: Text,
    pub at: Millis,
    pub since: Millis,
}

impl ScheduleEnd {
    /// How long after the order's creation the schedule ended.
    pub fn ran(&self) -> Millis {
        self.at.since(self.since)
    }
}

/// The platform queried `attempt` upstream at `at`, `gap` after `since` (its charge, or
/// its previous query).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Verification {
    pub attempt: AttemptId,
    pub manual_review: bool,
    pub at: Millis,
    pub since: Millis,
    pub gap: Millis,
}

/// `payment` went to manual_review at `at` with no upstream query of `attempt` before.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct EarlyManualReview {
    pub payment: PaymentId,
    pub attempt: Option<AttemptId>,
    pub at: Millis,
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

/// Whether a create's or confirm's own step left it waiting for the charge it sent
/// upstream (UPSTREAM-01: the platform's synchronous wait).
fn waits_upstream(
    request: &payhub_model::ApiRequest,
    handling: &payhub_model::event::Handling,
) -> bool {
    handling.answer.is_none()
        && handling
            .calls
            .iter()
            .any(|c| matches!(c, UpstreamCall::Charge { .. }))
        && matches!(
            request.endpoint,
            Endpoint::CreatePayment { .. } | Endpoint::ConfirmPayment { .. }
        )
}

/// RETRY-02: whether a try scheduled while a node handles `input` follows a failed try.
/// What the reference code retries: a timeout, 429, 5xx, and the in-flight 409s
/// (A-CLIENT-INFLIGHT-409); a 429 carrying Retry-After is timed by it instead (RATE-03).
/// A try scheduled on any other answer (a lookup that found nothing, QUERY-06) follows no
/// failed try.
fn follows_failure(input: Option<Input>) -> bool {
    match input {
        Some(Input::Answer {
            status: 429,
            retry_after_s: Some(_),
        }) => false,
        Some(Input::Timeout) => true,
        Some(Input::Answer { status, .. }) => status == 429 || status == 409 || status >= 500,
        None => false,
    }
}

/// UPSTREAM-01's window read from the contract's numbers: about 15 s either way by
/// `Contract::SYNC_WAIT_TOLERANCE` (A-SYNC-WAIT-ABOUT), and below the client's 20 s
/// (TIMEOUT-01), both ends included but the last.
pub fn sync_wait_window() -> (Millis, Millis) {
    let least = Millis(Contract::SYNC_WAIT.0 - Contract::SYNC_WAIT_TOLERANCE.0);
    let most = Contract::SYNC_WAIT
        .after(Contract::SYNC_WAIT_TOLERANCE)
        .min(Millis(Contract::POST_TIMEOUT_MIN.0 - 1));
    (least, most)
}

/// SCHED-01: "On entering succeeded / failed / canceled / expired … stop".
fn is_final(status: Option<PaymentStatus>) -> bool {
    status.is_some_and(PaymentStatus::is_terminal)
}

impl Cadence {
    /// Whether `what` may change this family.
    pub(super) fn changes(&self, what: &What) -> bool {
        match what {
            What::ClientSends { held, .. } => !held || what.is_held_confirm(),
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
            What::Handled {
                request, handling, ..
            } => waits_upstream(request, handling),
            What::Answered { id, .. } => self.history.waiting_upstream.contains_key(id),
            _ => false,
        }
    }

    /// `inputs`: what each client node is handling (the effects family's).
    pub(super) fn observe(
        &mut self,
        at: Millis,
        what: &What,
        attempts: &Attempts,
        inputs: &ClientInputs,
    ) {
        match what {
            // The periods a compressed jump skipped are not the platform's: its queries
            // count as made up to the jump's end.
            What::ClockCompressed { to, .. } => {
                for t in self.history.queried.values_mut() {
                    *t = (*t).max(*to);
                }
            }
            What::ClientSends {
                node,
                request,
                timeout,
                submission,
                held,
                ..
            } => {
                if let (false, Some(s)) = (held, submission)
                    && self.history.node_db.get(node) != Some(&s.db)
                {
                    self.history.node_db.insert(*node, s.db);
                }
                if !held {
                    self.on_timeout(*node, &request.endpoint, *timeout);
                }
                match &request.endpoint {
                    // ATTEMPT-02: a card retry reopens a failed Payment, also one its
                    // process died before sending (the database holds the retry, GEN-06
                    // resends it); its queries run until the database holds how the new
                    // attempt ended.
                    Endpoint::ConfirmPayment { payment_id, .. }
                        if !self.history.confirmed.contains(payment_id) =>
                    {
                        let h = &mut *self.history;
                        h.confirmed.insert(*payment_id);
                        h.final_payments.remove(payment_id);
                    }
                    _ if *held => {}
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
                Decision::RetryScheduled { try_no, at: due }
                    if follows_failure(inputs.of(*node)) =>
                {
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
                let h = &mut *self.history;
                h.final_payments
                    .retain(|_, (d, o)| !(*d == *db && o == order_no));
                if let (true, Some(p)) = (is_final(stored.status), stored.payment_id) {
                    let retried =
                        stored.status == Some(PaymentStatus::Failed) && h.confirmed.contains(&p);
                    if !retried {
                        h.final_payments.insert(p, (*db, order_no.clone()));
                    }
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
            What::Handled {
                id,
                request,
                handling,
                ..
            } if waits_upstream(request, handling) => {
                self.history.waiting_upstream.insert(*id, at);
            }
            What::Answered {
                id, response, rule, ..
            } => {
                if let Some(since) = self.history.waiting_upstream.remove(id)
                    && response.status == 202
                    && *rule == Rule::SyncWait
                {
                    self.on_sync_wait(SyncWait {
                        id: *id,
                        at,
                        waited: at.since(since),
                    });
                }
            }
            _ => {}
        }
    }

    /// UPSTREAM-01: a 202 told for a wait that ran out, kept when it is the first
    /// outside the window the property reads the contract's "about 15 s" as.
    fn on_sync_wait(&mut self, wait: SyncWait) {
        let (least, most) = sync_wait_window();
        let off = wait.waited < least || wait.waited > most;
        note_first(&mut self.sync_wait_off, off, || wait);
    }

    /// RES-03: manual_review means the automatic window ran: the platform queried the
    /// latest attempt upstream on its own before.
    fn on_manual_review(&mut self, at: Millis, payment: PaymentId, attempt: Option<AttemptId>) {
        if !self.history.manual_review.insert(payment) {
            return;
        }
        let verified = attempt.is_some_and(|a| self.history.queried.contains_key(&a));
        note_first(&mut self.early_manual_review, !verified, || {
            Box::new(EarlyManualReview {
                payment,
                attempt,
                at,
            })
        });
    }

    /// TIMEOUT-01 names a minimum for queries and for creates and confirms: the
    /// shortest timeout of each kind a node sent.
    fn on_timeout(&mut self, node: u8, endpoint: &Endpoint, timeout: Millis) {
        let waited = match endpoint {
            e if e.method() == Method::Get => Waited::Query,
            Endpoint::CreatePayment { .. } | Endpoint::ConfirmPayment { .. } => {
                Waited::CreateOrConfirm
            }
            // Cancel and refund: the contract names no minimum (A-CLIENT-POST-TIMEOUT).
            _ => return,
        };
        let key = (node, waited);
        if self.shortest_timeout.get(&key).is_none_or(|t| timeout < *t) {
            self.shortest_timeout.insert(key, timeout);
        }
    }

    /// SCHED-01: queries stop at succeeded, failed, canceled and expired, whether the
    /// query names the Payment or its order number (`queried` picks the held Payments it
    /// is of, by Payment, database and order number). A failed Payment a confirm (a card
    /// retry) has been sent for is not held (see `History::final_payments`).
    fn on_query(&mut self, at: Millis, node: u8, queried: impl Fn(PaymentId, u8, &Text) -> bool) {
        let db = self.history.node_db.get(&node).copied();
        let held = self
            .history
            .final_payments
            .iter()
            .find(|(p, (d, o))| db.is_none_or(|db| db == *d) && queried(**p, *d, o));
        if let Some((payment, (_, order))) = held {
            note_first(&mut self.query_after_final, true, || {
                let (payment, order) = (*payment, order.clone());
                Box::new(QueryAfterFinal {
                    node,
                    payment,
                    order,
                    at,
                })
            });
        }
    }

    /// RETRY-02: the wait before try n+1 after try n failed (read while the client
    /// handles that failure), kept when it is the shortest or the longest of its try
    /// number. A retry after a 429 carrying Retry-After is timed by it instead (RATE-03),
    /// and judged by `client-honours-retry-after`.
    fn on_retry(&mut self, now: Millis, node: u8, subject: &Subject, try_no: u32, due: Millis) {
        if try_no < 2 {
            return;
        }
        let delay = due.since(now);
        let wait = || RetryWait {
            node,
            subject: Text::format(format_args!("{subject}")),
            delay,
        };
        let waits = match self.retry_waits.get(&try_no) {
            None => {
                let shortest = wait();
                let longest = shortest.clone();
                RetryWaits { shortest, longest }
            }
            Some(held) if delay < held.shortest.delay => RetryWaits {
                shortest: wait(),
                longest: held.longest.clone(),
            },
            Some(held) if delay > held.longest.delay => RetryWaits {
                shortest: held.shortest.clone(),
                longest: wait(),
            },
            Some(_) => return,
        };
        self.retry_waits.insert(try_no, waits);
    }

    /// SCHED-01: the schedule of an unknown result runs until 24 hours; it cannot have
    /// become unknown before the order existed in its database: the end kept is the one
    /// soonest after its order's creation.
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
        let ran = now.since(*since);
        if self
            .earliest_schedule_end
            .as_ref()
            .is_none_or(|e| ran < e.ran())
        {
            self.earliest_schedule_end = Some(Shared::new(ScheduleEnd {
                node,
                order: order.clone(),
                at: now,
                since: *since,
            }));
        }
    }

    /// RES-01, RES-03: how long after the charge or the query before the platform
    /// verified an unknown charge, kept when the slowest: one slowest automatic
    /// verification (the first query, and every one before manual_review), one slowest
    /// re-query under manual_review.
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
        let requery = manual_review && last.is_some();
        let slowest = if requery {
            &mut self.slowest_requery
        } else {
            &mut self.slowest_verification
        };
        if slowest.as_ref().is_none_or(|v| gap > v.gap) {
            *slowest = Some(Shared::new(Verification {
                attempt,
                manual_review,
                at: now,
                since,
                gap,
            }));
        }
    }
}
