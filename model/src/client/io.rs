//! What goes into a merchant server and what comes out of it.

use super::decision::{Decision, Subject};
use crate::api::{ApiRequest, ApiResponse, ErrorCode};
use crate::ids::{Card, EventId};
use crate::platform::WebhookEvent;
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;
use serde::{Deserialize, Serialize};

/// A request of one server: `h{boot}.{n}`. Unique across the server's restarts, so that
/// an answer meant for a crashed process is never taken for a new one's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handle {
    /// The process incarnation that sent it (0 for the first process).
    pub boot: u32,
    /// Numbered from 1 within the incarnation.
    pub n: u32,
}

impl std::fmt::Display for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "h{}.{}", self.boot, self.n)
    }
}

/// The randomness a step may use, drawn by the driver: the model draws none.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(deny_unknown_fields)]
pub struct Draw {
    /// Added to a retry's backoff (RETRY-02); must be below `ClientParams::jitter_max`.
    pub jitter: Millis,
    /// Seeds any random key the step makes (GEN-04 `crypto.randomUUID()`).
    pub entropy: u64,
}

impl Draw {
    /// No jitter, entropy 0.
    pub const ZERO: Draw = Draw {
        jitter: Millis::ZERO,
        entropy: 0,
    };

    pub const fn new(jitter: Millis, entropy: u64) -> Draw {
        Draw { jitter, entropy }
    }
}

/// What the payer or the merchant asks a server to do.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// The payer pays `order` with `card`: create the Payment (or take over a submission
    /// another server started, under its persisted key).
    PayOrder {
        order: Text,
        amount: u64,
        currency: Text,
        card: Card,
    },
    /// After `failed`, the payer tries another card: a new submission (ATTEMPT-07, GEN-02).
    RetryWithCard { order: Text, card: Card },
    /// The merchant cancels the order's Payment.
    CancelOrder { order: Text },
    /// The merchant changes a submitted order's amount: refused by the reference policy
    /// (UNKNOWN-04); only `ChangedParamsSameKey` goes through with it.
    AmendOrder { order: Text, amount: u64 },
    /// The merchant refunds `amount` of a paid order as refund number `refund`.
    RefundOrder {
        order: Text,
        refund: Text,
        amount: u64,
    },
    /// Daily reconciliation: `GET /v1/refunds?status=processing` (SCHED-03).
    Reconcile,
}

/// One input to a merchant server.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum ClientInput {
    /// A command from the payer or the merchant.
    Command { command: Command, draw: Draw },
    /// The response to request `handle`.
    Response {
        handle: Handle,
        response: ApiResponse,
        draw: Draw,
    },
    /// Request `handle` failed without a response (connection refused or reset).
    NetworkError { handle: Handle, draw: Draw },
    /// Request `handle` got no response within its `timeout` (TIMEOUT-01); the client
    /// abandons it.
    Timeout { handle: Handle, draw: Draw },
    /// Fire every timer due at or before `now` ([`super::MerchantServer::poll_timeout`]).
    Wake,
    /// A webhook event arrives; the server acknowledges it.
    Webhook { event: WebhookEvent, draw: Draw },
    /// The process dies: memory is lost, the database stays.
    Crash,
    /// A new process starts from the database.
    Restart { draw: Draw },
}

/// One output of a merchant server, with the rule that led to it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "output", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientOutput {
    /// Send `request` as exchange `handle`; deliver `Timeout` if no response came within
    /// `timeout` (TIMEOUT-01).
    Send {
        handle: Handle,
        request: ApiRequest,
        timeout: Millis,
        rule: Rule,
    },
    /// Answer 2xx to webhook `event` (it is not re-delivered).
    AckWebhook { event: EventId, rule: Rule },
    /// A decision about `subject`, and the rule that led to it.
    Decision {
        subject: Subject,
        decision: Decision,
        rule: Rule,
    },
}

impl std::fmt::Display for ClientOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientOutput::Send {
                handle,
                request,
                timeout,
                rule,
            } => write!(f, "send {handle} {request}  (timeout {timeout}) [{rule}]"),
            ClientOutput::AckWebhook { event, rule } => write!(f, "ack {event} [{rule}]"),
            ClientOutput::Decision {
                subject,
                decision,
                rule,
            } => write!(f, "{subject}: {decision} [{rule}]"),
        }
    }
}

/// Misuse of a server by its driver: nothing was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The server is crashed: only `Restart` is accepted.
    #[error("server is down: only restart is accepted")]
    Down,
    /// `Restart` of a server that is running.
    #[error("restart of a running server")]
    AlreadyUp,
    /// A jitter of at least `ClientParams::jitter_max` (RETRY-02: below 250 ms).
    #[error("jitter {0} is not below the maximum")]
    JitterOutOfRange(Millis),
}

/// What came back for a request.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Reply<'a> {
    Response(&'a ApiResponse),
    NetworkError,
    Timeout,
}

impl Reply<'_> {
    /// RETRY-01: network errors, 429 and 5xx (503 included) are retried with the same key;
    /// so is the in-flight conflict of S5 and CONC-03, "retry later with the same key" (CONC-04), in
    /// the same loop with the same backoff and tries (A-CLIENT-INFLIGHT-409). S8's
    /// `payment_in_progress` is not retried: its advice is "wait for the result, or query"
    /// (等待结果或查询), see `answers.rs`.
    pub(super) fn is_retryable(self) -> bool {
        match self {
            Reply::NetworkError | Reply::Timeout => true,
            Reply::Response(r) => {
                r.status == 429
                    || r.status >= 500
                    || r.error_code() == Some(ErrorCode::OperationInProgress)
            }
        }
    }
}
