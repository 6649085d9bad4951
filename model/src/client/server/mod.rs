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

use super::db::{MerchantDb, OrderRecord};
use super::decision::{Decision, Refusal, Subject};
use super::io::{ClientError, ClientInput, ClientOutput, Draw, Handle};
use super::keys::Dice;
use super::policy::{AntiPattern, ClientParams, Policy};
use crate::cow::{CowMap, CowSet};
use crate::ids::ApiKeyId;
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;
use serde::Serialize;

mod keying;
mod queries;
mod restart;
mod sending;
mod wake;

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
    /// The create or confirm of submission `seq` of `order`.
    pub(super) fn submit(order: &str, seq: u32) -> Op {
        Op::Submit {
            order: order.into(),
            seq,
        }
    }

    pub(super) fn cancel(order: &str) -> Op {
        Op::Cancel {
            order: order.into(),
        }
    }

    pub(super) fn refund(refund: &str) -> Op {
        Op::Refund {
            refund: refund.into(),
        }
    }

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
}

/// A server timer. Closed set; ordered so that firing order is deterministic.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "timer", rename_all = "snake_case")]
pub enum ClientTimer {
    /// Send try `try_no` of a keyed POST, citing `rule` (RETRY-02, RATE-03).
    Retry { op: Op, try_no: u32, rule: Rule },
    /// Query an order's Payment (SCHED-01, SCHED-02).
    Query { order: Text },
    /// Tell the merchant to contact technical support if the order is still pending
    /// confirmation (WORDING-03).
    Support { order: Text },
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
    /// Keyed ops whose last try was answered 429 with Retry-After when the tries ran
    /// out: not sent again before this time (RATE-03).
    pub(in crate::client) held_back: CowMap<Op, Millis>,
    /// Creates and confirms a try of which, since the round's first try, may have
    /// executed: a timeout, a network error, a 5xx other than 503, an in-flight 409
    /// (UNKNOWN-02). A round with none, whose last answer is 503, was not accepted (S13).
    pub(in crate::client) uncertain: CowSet<Op>,
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

    /// Records where an anti-pattern leaves the reference: `Decision::Deviate`, with the
    /// rule it breaks.
    pub(super) fn depart(&mut self, subject: Subject, pattern: AntiPattern) {
        self.decide(subject, Decision::Deviate { pattern }, pattern.breaks());
    }

    /// [`Self::depart`] for an order.
    pub(super) fn order_depart(&mut self, order: &str, pattern: AntiPattern) {
        self.depart(Subject::Order(order.into()), pattern);
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
            } => self.on_reply(&mut cx, handle, super::io::Reply::Response(&response)),
            ClientInput::NetworkError { handle, .. } => {
                self.on_reply(&mut cx, handle, super::io::Reply::NetworkError)
            }
            ClientInput::Timeout { handle, .. } => {
                self.on_reply(&mut cx, handle, super::io::Reply::Timeout)
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
