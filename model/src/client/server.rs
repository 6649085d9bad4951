//! The merchant server: a sans-IO state machine over a shared [`MerchantDb`].
//!
//! # Inputs, outputs, time
//! [`MerchantServer::step`] takes one [`ClientInput`] at the simulated time `now`, reads
//! and writes the database it is given, and pushes [`ClientOutput`]s: requests to send,
//! webhook acknowledgements, and decisions with the rule behind each.
//! [`MerchantServer::poll_timeout`] says when the server next wants
//! [`ClientInput::Wake`]; the driver jumps the clock there and steps again.
//!
//! # What a crash loses
//! Memory: requests in flight, try counters, timers (and, under `KeyNotPersisted`, the
//! keys kept there). The database keeps the rest; [`ClientInput::Restart`] resumes from
//! it: a submission with no answer is re-sent under its persisted key (GEN-06), or, for
//! a create whose Payment id was never saved, looked up by order number first (RETRY-04)
//! and re-sent under its key if the lookup gets no answer; an unknown result resumes its
//! query schedule (SCHED-01). A submission still sending always has a request in flight
//! or a timer on some server of its database, or a server down that will resume it.
//!
//! # The driver's side of the protocol
//! For every `Send`, deliver exactly one of `Response`, `NetworkError` or `Timeout` (the
//! latter no earlier than the `timeout` the send names), unless the server crashes
//! first: a crash ends its exchanges. An answer for a handle the server no longer waits
//! for is ignored with a `LateReply` decision. Inputs that can schedule a retry or make
//! a key carry a [`Draw`]: the jitter (below 250 ms) and the entropy of random keys.

use super::db::{MerchantDb, OrderRecord, Outcome, SubmissionKind};
use super::decision::{Decision, PayerMessage, Refusal, Subject};
use super::io::{ClientError, ClientInput, ClientOutput, Draw, Handle};
use super::keys::{self, Dice, KeyPurpose, Keys};
use super::policy::{AntiPattern, ClientParams, Policy};
use super::schedule;
use crate::api::{
    ApiRequest, ConfirmBody, CreatePaymentBody, Endpoint, Json, Method, PaymentStatus, RefundBody,
};
use crate::cow::{CowMap, CowSet};
use crate::ids::ApiKeyId;
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;
use serde::Serialize;

/// How a server is set up: whose API key, which policy, which numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ServerConfig {
    /// `Authorization: Bearer …`: the merchant and environment.
    pub api_key: ApiKeyId,
    pub policy: Policy,
    pub params: ClientParams,
}

impl ServerConfig {
    /// The reference policy with the contract's numbers.
    pub fn new(api_key: ApiKeyId, policy: Policy) -> ServerConfig {
        ServerConfig {
            api_key,
            policy,
            params: ClientParams::default(),
        }
    }
}

/// What a request or a timer is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// The create or confirm of submission `seq` of an order.
    Submit { order: Text, seq: u32 },
    /// The cancel of an order's Payment.
    Cancel { order: Text },
    /// The create of a refund.
    Refund { refund: Text },
    /// A query of an order's Payment: by id, or by order number when no id is known.
    QueryPayment { order: Text },
    /// A query of a refund: by id, or by refund number when no id is known.
    QueryRefund { refund: Text },
    /// `GET /v1/refunds?status=processing` (SCHED-03).
    ReconcileRefunds,
}

impl Op {
    /// What decisions about this op are about.
    pub fn subject(&self) -> Subject {
        match self {
            Op::Submit { order, .. } | Op::Cancel { order } | Op::QueryPayment { order } => {
                Subject::Order(order.clone())
            }
            Op::Refund { refund } | Op::QueryRefund { refund } => Subject::Refund(refund.clone()),
            Op::ReconcileRefunds => Subject::Server,
        }
    }

    /// Whether the op is a keyed POST with a retry loop (RETRY-01).
    pub fn is_keyed(&self) -> bool {
        matches!(
            self,
            Op::Submit { .. } | Op::Cancel { .. } | Op::Refund { .. }
        )
    }
}

/// A server timer. Closed set; ordered so that firing order is deterministic.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "timer", rename_all = "snake_case")]
pub enum ClientTimer {
    /// Send try `try_no` of a keyed POST, citing `rule` (RETRY-02, RATE-03).
    Retry { op: Op, try_no: u32, rule: Rule },
    /// Query an order's Payment (SCHED-01, SCHED-02).
    Query { order: Text },
}

/// A request in flight.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub(super) struct Flight {
    pub(super) op: Op,
    /// 1 for the first try (RETRY-03 counts these).
    pub(super) try_no: u32,
}

/// What a crash loses.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub(super) struct Memory {
    pub(super) next_handle: u32,
    pub(super) in_flight: CowMap<Handle, Flight>,
    pub(super) timers: CowSet<(Millis, ClientTimer)>,
    /// Random keys never written to the database (`KeyNotPersisted` only).
    pub(super) unpersisted: CowMap<Op, Text>,
}

/// Everything one step works with.
pub(super) struct Cx<'a> {
    pub(super) now: Millis,
    pub(super) db: &'a mut MerchantDb,
    pub(super) out: &'a mut Vec<ClientOutput>,
    pub(super) jitter: Millis,
    pub(super) dice: Dice,
}

impl Cx<'_> {
    pub(super) fn decide(&mut self, subject: Subject, decision: Decision, rule: Rule) {
        self.out.push(ClientOutput::Decision {
            subject,
            decision,
            rule,
        });
    }

    pub(super) fn refuse(&mut self, subject: Subject, reason: Refusal, rule: Rule) {
        self.decide(subject, Decision::Refused { reason }, rule);
    }

    pub(super) fn order_decide(&mut self, order: &str, decision: Decision, rule: Rule) {
        self.decide(Subject::Order(order.into()), decision, rule);
    }

    pub(super) fn order(&mut self, order: &str) -> &mut OrderRecord {
        self.db
            .order_mut(order)
            .expect("callers look the order up first")
    }
}

/// A merchant server: configuration, process incarnation, and memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct MerchantServer {
    /// Fixed for the server's life; shared between states (cheap clone, cached hash).
    pub(super) config: crate::cow::Shared<ServerConfig>,
    /// The process incarnation: 0, then + 1 per restart. Like a process id, this is not
    /// state the merchant's code keeps; it only makes handles unique across crashes.
    pub(super) boot: u32,
    pub(super) up: bool,
    pub(super) memory: Memory,
}

impl MerchantServer {
    /// A running server with empty memory.
    pub fn new(config: ServerConfig) -> MerchantServer {
        MerchantServer {
            config: crate::cow::Shared::new(config),
            boot: 0,
            up: true,
            memory: Memory::default(),
        }
    }

    // ---- getters ------------------------------------------------------------------

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }
    pub fn policy(&self) -> &Policy {
        &self.config.policy
    }
    pub fn is_up(&self) -> bool {
        self.up
    }
    pub fn boot(&self) -> u32 {
        self.boot
    }

    /// When the server next wants [`ClientInput::Wake`] (`None` when down or idle).
    pub fn poll_timeout(&self) -> Option<Millis> {
        self.memory.timers.first().map(|(at, _)| *at)
    }

    /// The timers, in firing order.
    pub fn timers(&self) -> impl Iterator<Item = &(Millis, ClientTimer)> {
        self.memory.timers.iter()
    }

    /// Requests in flight and what each is for.
    pub fn in_flight(&self) -> impl Iterator<Item = (Handle, &Op)> {
        self.memory.in_flight.iter().map(|(h, f)| (*h, &f.op))
    }

    // ---- the step function --------------------------------------------------------

    /// Handles one input at `now` against `db`, pushing outputs to `out`. On error
    /// nothing changed.
    pub fn step(
        &mut self,
        now: Millis,
        db: &mut MerchantDb,
        input: ClientInput,
        out: &mut Vec<ClientOutput>,
    ) -> Result<(), ClientError> {
        match (&input, self.up) {
            (ClientInput::Restart { .. }, true) => return Err(ClientError::AlreadyUp),
            (ClientInput::Restart { .. }, false) => {}
            (_, false) => return Err(ClientError::Down),
            _ => {}
        }
        let draw = input.draw().unwrap_or(Draw::ZERO);
        if draw.jitter >= self.config.params.jitter_max {
            // RETRY-02: the jitter is below 250 ms.
            return Err(ClientError::JitterOutOfRange(draw.jitter));
        }
        let mut cx = Cx {
            now,
            db,
            out,
            jitter: draw.jitter,
            dice: Dice::new(draw.entropy),
        };
        match input {
            ClientInput::Command { command, .. } => self.on_command(&mut cx, command),
            ClientInput::Response {
                handle, response, ..
            } => self.on_reply(&mut cx, handle, super::replies::Reply::Response(&response)),
            ClientInput::NetworkError { handle, .. } => {
                self.on_reply(&mut cx, handle, super::replies::Reply::NetworkError)
            }
            ClientInput::Timeout { handle, .. } => {
                self.on_reply(&mut cx, handle, super::replies::Reply::Timeout)
            }
            ClientInput::Wake => self.on_wake(&mut cx),
            ClientInput::Webhook { event, .. } => self.on_webhook(&mut cx, &event),
            ClientInput::Crash => {
                self.up = false;
                self.memory = Memory::default();
            }
            ClientInput::Restart { .. } => self.on_restart(&mut cx),
        }
        Ok(())
    }

    // ---- keys ---------------------------------------------------------------------

    /// The rule behind a new key: GEN-01 derived, GEN-04 random.
    pub(super) fn key_rule(&self) -> Rule {
        match self.config.policy.keys {
            Keys::Deterministic => Rule::DeterministicKeys,
            Keys::RandomPersisted => Rule::RandomKeyPersistedFirst,
        }
    }

    /// A key for a new business submission: derived (GEN-01) or random (GEN-04).
    pub(super) fn new_key(&self, cx: &mut Cx, purpose: KeyPurpose, number: &str, seq: u32) -> Text {
        match self.config.policy.keys {
            Keys::Deterministic => keys::derived(purpose, number, seq),
            Keys::RandomPersisted => cx.dice.uuid(),
        }
    }

    /// Records a new key: in the database, which the caller writes (GEN-06) — or, under
    /// `KeyNotPersisted` with random keys, in memory only. Returns what the database holds.
    pub(super) fn keep_key(
        &mut self,
        cx: &mut Cx,
        op: &Op,
        key: Text,
        seq: u32,
        rule: Rule,
    ) -> Option<Text> {
        let lost_on_crash = self.config.policy.has(AntiPattern::KeyNotPersisted)
            && self.config.policy.keys == Keys::RandomPersisted;
        if lost_on_crash {
            let pattern = AntiPattern::KeyNotPersisted;
            self.memory.unpersisted.insert(op.clone(), key);
            cx.decide(
                op.subject(),
                Decision::Deviate { pattern },
                pattern.breaks(),
            );
            return None;
        }
        cx.decide(
            op.subject(),
            Decision::KeyPersisted {
                key: key.clone(),
                seq,
            },
            rule,
        );
        Some(key)
    }

    /// The key of an order's current submission, wherever it is kept.
    pub(super) fn submission_key(&self, cx: &mut Cx, order: &str) -> Text {
        let rec = cx.db.order(order).expect("looked up");
        let op = Op::Submit {
            order: order.into(),
            seq: rec.submission.seq,
        };
        self.stored_key(cx.db, &op)
            .unwrap_or_else(|| cx.dice.uuid())
    }

    /// The key of a keyed op as stored: in the database, else in this process's memory.
    pub(super) fn stored_key(&self, db: &MerchantDb, op: &Op) -> Option<Text> {
        let in_db = match op {
            Op::Submit { order, seq } => db
                .order(order)
                .filter(|o| o.submission.seq == *seq)
                .and_then(|o| o.submission.key.clone()),
            Op::Cancel { order } => db
                .order(order)
                .and_then(|o| o.cancel.as_ref())
                .and_then(|c| c.key.clone()),
            Op::Refund { refund } => db.refund(refund).and_then(|r| r.key.clone()),
            _ => None,
        };
        in_db.or_else(|| self.memory.unpersisted.get(op).cloned())
    }

    // ---- sending ------------------------------------------------------------------

    /// Whether this process is sending `op` or will retry it.
    pub(super) fn busy(&self, op: &Op) -> bool {
        self.memory.in_flight.values().any(|f| f.op == *op)
            || self
                .memory
                .timers
                .iter()
                .any(|(_, t)| matches!(t, ClientTimer::Retry { op: o, .. } if o == op))
    }

    /// Whether a keyed op is still waiting for an answer (no other server or channel has
    /// answered it, and no newer submission replaced it).
    pub(super) fn op_current(&self, db: &MerchantDb, op: &Op) -> bool {
        match op {
            Op::Submit { order, seq } => db.order(order).is_some_and(|o| {
                o.submission.seq == *seq && o.submission.outcome == Outcome::Sending
            }),
            Op::Cancel { order } => db
                .order(order)
                .and_then(|o| o.cancel.as_ref())
                .is_some_and(|c| c.outcome == Outcome::Sending),
            Op::Refund { refund } => db
                .refund(refund)
                .is_some_and(|r| r.outcome == Outcome::Sending),
            _ => true,
        }
    }

    /// Sends try `try_no` of a keyed POST under its stored key (RETRY-01: the same key
    /// on every try). Only a random key kept in memory can be missing, after a crash: the
    /// naive process then makes a new one (`KeyNotPersisted`).
    pub(super) fn send_keyed(&mut self, cx: &mut Cx, op: Op, try_no: u32, rule: Rule) {
        let (key, rule) = match self.stored_key(cx.db, &op) {
            Some(key) => (key, rule),
            None => {
                let pattern = AntiPattern::KeyNotPersisted;
                let key = cx.dice.uuid();
                self.memory.unpersisted.insert(op.clone(), key.clone());
                cx.decide(
                    op.subject(),
                    Decision::Deviate { pattern },
                    pattern.breaks(),
                );
                (key, pattern.breaks())
            }
        };
        if let Some(request) = self.keyed_request(cx.db, &op, key) {
            self.send(cx, op, try_no, request, rule);
        }
    }

    /// The request of a keyed op, built from the database.
    fn keyed_request(&self, db: &MerchantDb, op: &Op, key: Text) -> Option<ApiRequest> {
        let endpoint = match op {
            Op::Submit { order, .. } => {
                let rec = db.order(order)?;
                let card = Some(rec.submission.card);
                match rec.submission.kind {
                    SubmissionKind::Create => Endpoint::CreatePayment {
                        body: Json::Parsed(CreatePaymentBody {
                            merchant_order_no: Some(rec.submission.merchant_order_no.clone()),
                            amount: Some(rec.amount as i64),
                            currency: Some(rec.currency.clone()),
                            card,
                        }),
                    },
                    SubmissionKind::Confirm => Endpoint::ConfirmPayment {
                        payment_id: rec.payment_id?,
                        body: Json::Parsed(ConfirmBody { card }),
                    },
                }
            }
            Op::Cancel { order } => Endpoint::CancelPayment {
                payment_id: db.order(order)?.payment_id?,
            },
            Op::Refund { refund } => {
                let rec = db.refund(refund)?;
                Endpoint::CreateRefund {
                    body: Json::Parsed(RefundBody {
                        payment_id: Some(rec.payment_id),
                        merchant_refund_no: Some(rec.refund_no.clone()),
                        amount: Some(rec.amount as i64),
                    }),
                }
            }
            _ => return None,
        };
        Some(ApiRequest {
            api_key: self.config.api_key,
            idempotency_key: Some(key),
            endpoint,
        })
    }

    /// A GET: no Idempotency-Key (KEY-06).
    pub(super) fn query_request(&self, endpoint: Endpoint) -> ApiRequest {
        ApiRequest {
            api_key: self.config.api_key,
            idempotency_key: None,
            endpoint,
        }
    }

    /// Hands a request to the network. TIMEOUT-01: at least 20 s for POSTs, 10 s for GETs;
    /// A-CLIENT-POST-TIMEOUT: cancel and refund wait 20 s like create and confirm.
    pub(super) fn send(
        &mut self,
        cx: &mut Cx,
        op: Op,
        try_no: u32,
        request: ApiRequest,
        rule: Rule,
    ) {
        self.memory.next_handle += 1;
        let handle = Handle {
            boot: self.boot,
            n: self.memory.next_handle,
        };
        let timeout = if request.endpoint.method() == Method::Get {
            self.config.params.query_timeout
        } else {
            self.config.params.post_timeout
        };
        self.memory.in_flight.insert(handle, Flight { op, try_no });
        cx.out.push(ClientOutput::Send {
            handle,
            request,
            timeout,
            rule,
        });
    }

    // ---- queries ------------------------------------------------------------------

    /// Whether a query of the order's Payment is in flight (no concurrent polling, SCHED-02).
    fn querying(&self, order: &str) -> bool {
        self.memory
            .in_flight
            .values()
            .any(|f| matches!(&f.op, Op::QueryPayment { order: o } if o == order))
    }

    /// Queries the order's Payment now — by id, or by order number when no id was saved
    /// (RETRY-04) — or, to keep 10 s between two queries of it by any server (SCHED-02),
    /// as soon as allowed. Returns whether a query was sent.
    pub(super) fn query_payment(&mut self, cx: &mut Cx, order: &str, rule: Rule) -> bool {
        if self.querying(order) {
            return false;
        }
        let spacing = self.config.params.query_spacing_min;
        let polls_fast = self.config.policy.has(AntiPattern::PollTooFast);
        let now = cx.now;
        let rec = cx.order(order);
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
    pub(super) fn send_refund_query(&mut self, cx: &mut Cx, refund: &str, rule: Rule) {
        let Some(rec) = cx.db.refund(refund) else {
            return;
        };
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
        let existing = self
            .memory
            .timers
            .iter()
            .find(|(_, t)| matches!(t, ClientTimer::Query { order: o } if o == order))
            .cloned();
        match existing {
            Some((earlier, _)) if earlier <= at => false,
            Some(entry) => {
                self.memory.timers.remove(&entry);
                self.memory.timers.insert((
                    at,
                    ClientTimer::Query {
                        order: order.into(),
                    },
                ));
                true
            }
            None => {
                self.memory.timers.insert((
                    at,
                    ClientTimer::Query {
                        order: order.into(),
                    },
                ));
                true
            }
        }
    }

    /// SCHED-01: the status is final or a webhook settled it: no more queries.
    pub(super) fn stop_queries(&mut self, cx: &mut Cx, order: &str) {
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
    pub(super) fn keep_querying(&mut self, cx: &mut Cx, order: &str) -> bool {
        let Some(rec) = cx.db.order_mut(order) else {
            return false;
        };
        // SCHED-01: queries stop "on entering succeeded / failed / canceled / expired", and
        // the window below ends at 24 h. A-WEBHOOK-BLACKOUT: a later change of the Payment
        // (a failed one expiring, a paid one refunded, a requires_action one succeeding
        // after the window) reaches this client only by webhook; if every delivery finds
        // every server of its database down, nothing here catches up.
        if rec.state().is_settled() {
            return false;
        }
        let now = cx.now;
        // A-CLIENT-SCHED-ANCHOR: the schedule counts from when this client first learned
        // that the result is not final, not from "first acceptance", which it cannot see.
        let anchor = *rec.confirming_since.get_or_insert(now);
        let next = if self.config.policy.has(AntiPattern::PollTooFast) {
            Some(now.after(self.config.params.poll_too_fast_every))
        } else {
            schedule::next_query_at(&self.config.params, anchor, now)
        };
        let Some(at) = next else {
            return false;
        };
        if self.set_query_timer(order, at) {
            cx.order_decide(order, Decision::QueryScheduled { at }, Rule::QuerySchedule);
        }
        true
    }

    // ---- timers -------------------------------------------------------------------

    fn on_wake(&mut self, cx: &mut Cx) {
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
                if rec.state().is_settled() {
                    return;
                }
                let sent = self.query_payment(cx, &order, Rule::QuerySchedule);
                if (sent || self.querying(&order)) && !self.keep_querying(cx, &order) {
                    // SCHED-01: that was the last query of the 24 hours; webhooks still count.
                    cx.order_decide(&order, Decision::ScheduleEnded, Rule::QuerySchedule);
                    let pending = cx.db.order(&order).map(|o| o.state());
                    if pending == Some(super::db::OrderState::PendingConfirmation) {
                        let message = PayerMessage::ContactSupport;
                        let decision = Decision::ShowPayer { message };
                        cx.order_decide(&order, decision, Rule::ManualReviewSupport);
                    }
                }
            }
        }
    }

    // ---- restart ------------------------------------------------------------------

    /// A new process resumes every unfinished business submission from the database.
    /// A-CLIENT-RESTART-SWEEP: every one in the shared database, whichever server started
    /// it: submissions, cancels and refunds still sending, and every query schedule.
    fn on_restart(&mut self, cx: &mut Cx) {
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
            let op = Op::Submit {
                order: order.clone(),
                seq: sub.seq,
            };
            let in_progress = rec.status().is_some_and(PaymentStatus::is_in_progress);
            let resume_queries = rec.confirming_since.is_some() || in_progress;
            let cancel_sending = rec
                .cancel
                .as_ref()
                .is_some_and(|c| c.outcome == Outcome::Sending);
            if sub.outcome == Outcome::Sending {
                if sub.key.is_none() {
                    // KeyNotPersisted: the key died with the process; it sends again at once.
                    self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
                } else if sub.kind == SubmissionKind::Create && rec.payment_id.is_none() {
                    // RETRY-04: no Payment id was saved: look it up by order number first.
                    self.query_payment(cx, &order, Rule::QueryByOrderNoAfterCrash);
                } else {
                    // GEN-06: read the original key back and retry.
                    self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
                }
            }
            if cancel_sending {
                let op = Op::Cancel {
                    order: order.clone(),
                };
                self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
            }
            if resume_queries {
                self.keep_querying(cx, &order);
            }
        }
        for refund in cx.db.refund_nos() {
            let sending = cx
                .db
                .refund(&refund)
                .is_some_and(|r| r.outcome == Outcome::Sending);
            if sending {
                let op = Op::Refund { refund };
                self.send_keyed(cx, op, 1, Rule::PersistBeforeSend);
            }
        }
    }
}

impl ClientInput {
    /// The draw an input carries, if any.
    pub fn draw(&self) -> Option<Draw> {
        match self {
            ClientInput::Command { draw, .. }
            | ClientInput::Response { draw, .. }
            | ClientInput::NetworkError { draw, .. }
            | ClientInput::Timeout { draw, .. }
            | ClientInput::Webhook { draw, .. }
            | ClientInput::Restart { draw } => Some(*draw),
            ClientInput::Wake | ClientInput::Crash => None,
        }
    }
}
