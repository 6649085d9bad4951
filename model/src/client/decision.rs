//! Decisions: what a server concluded, recorded with the rule that led to it, so that a
//! trace says why the client sent what it sent.

use super::db::OrderState;
use super::io::Handle;
use super::policy::AntiPattern;
use crate::api::{ErrorCode, PaymentStatus, RefundStatus, ResolutionStatus};
use crate::ids::{PaymentId, ResourceId};
use crate::text::Text;
use crate::time::Millis;
use serde::{Deserialize, Serialize};

/// What a decision is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(
    tag = "subject",
    content = "no",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum Subject {
    /// An order, by the merchant's order number.
    Order(Text),
    /// A refund, by the merchant's refund number.
    Refund(Text),
    /// The server as a whole (restart, reconciliation, unknown objects).
    Server,
}

impl std::fmt::Display for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subject::Order(no) | Subject::Refund(no) => f.write_str(no),
            Subject::Server => f.write_str("server"),
        }
    }
}

/// Where an object's state came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// The response to a create, confirm, cancel or refund.
    Response,
    /// A query.
    Query,
    /// A webhook event.
    Webhook,
}

/// The state an applied object is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "object", rename_all = "snake_case", deny_unknown_fields)]
pub enum ObjectState {
    Payment {
        status: PaymentStatus,
        resolution: ResolutionStatus,
    },
    Refund {
        status: RefundStatus,
    },
}

/// Why a command was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case", deny_unknown_fields)]
pub enum Refusal {
    /// No such order (or refund's order) in the database.
    UnknownOrder,
    /// An empty order number, a zero amount, or an order number too long for its keys.
    InvalidOrder,
    /// The order exists and its submission is not waiting to be sent.
    OrderExists { state: OrderState },
    /// A submitted order's amount and currency are bound to its key and number.
    ParametersBound,
    /// This server is already sending the submission.
    AlreadyInProgress,
    /// The Payment's id is not known yet.
    NoPaymentId,
    /// A card retry needs `failed` (ATTEMPT-07).
    NotFailed { status: Option<PaymentStatus> },
    /// The attempt limit is reached (ATTEMPT-05).
    AttemptsExhausted,
    /// `expires_at` has passed (ATTEMPT-04).
    Expired,
    /// The order can no longer be canceled.
    NotCancelable { state: OrderState },
    /// Only a paid order is refunded.
    NotPaid { state: OrderState },
    /// The refund number is taken by another refund.
    RefundExists,
}

/// Where an applied version came from, as traces say it.
impl std::fmt::Display for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Via::Response => "from a response",
            Via::Query => "from a query",
            Via::Webhook => "from a webhook",
        })
    }
}

/// Why a command was refused, as traces say it.
impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::UnknownOrder => f.write_str("no such order"),
            Refusal::InvalidOrder => f.write_str("invalid order"),
            Refusal::OrderExists { state } => write!(f, "the order exists ({state})"),
            Refusal::ParametersBound => {
                f.write_str("amount and currency are bound to the submitted order")
            }
            Refusal::AlreadyInProgress => f.write_str("already being sent"),
            Refusal::NoPaymentId => f.write_str("the payment's id is not known yet"),
            Refusal::NotFailed { status: Some(s) } => {
                write!(
                    f,
                    "a card retry needs failed, the payment is {}",
                    s.as_str()
                )
            }
            Refusal::NotFailed { status: None } => {
                f.write_str("a card retry needs failed, the payment's status is unknown")
            }
            Refusal::AttemptsExhausted => f.write_str("the attempt limit is reached"),
            Refusal::Expired => f.write_str("expires_at has passed"),
            Refusal::NotCancelable { state } => write!(f, "not cancelable ({state})"),
            Refusal::NotPaid { state } => write!(f, "only a paid order is refunded ({state})"),
            Refusal::RefundExists => f.write_str("the refund number is taken"),
        }
    }
}

/// What the merchant shows, as traces say it.
impl std::fmt::Display for PayerMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PayerMessage::TemporarilyUnavailable => "\"temporarily unable to pay\"",
            PayerMessage::Confirming => "\"confirming the payment result\"",
        })
    }
}

/// What the merchant shows (Wording rules: documented, not machine-checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PayerMessage {
    /// "Temporarily unable to pay, please try again later" (WORDING-01).
    TemporarilyUnavailable,
    /// "Confirming the payment result" (WORDING-02).
    Confirming,
}

/// A decision of a merchant server.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case", deny_unknown_fields)]
pub enum Decision {
    /// A business submission's key was written to the database before the request
    /// leaves (GEN-06; GEN-01 derived, GEN-04 random, GEN-02 a new sequence).
    KeyPersisted { key: Text, seq: u32 },
    /// The server departs from the reference policy here; the rule is the one it breaks.
    Deviate { pattern: AntiPattern },
    /// Try `try_no` of a POST is due at `at` (RETRY-02, RATE-03).
    RetryScheduled { try_no: u32, at: Millis },
    /// A due retry is not sent: the submission was answered or replaced meanwhile.
    RetryDropped { try_no: u32 },
    /// The result is unknown (a 202, or the tries ran out): the order is confirming and
    /// only queries, webhooks and the same key may follow (RETRY-03, UNKNOWN-03).
    ResultUnknown,
    /// The next query is due at `at` (SCHED-01).
    QueryScheduled { at: Millis },
    /// A query put off until `until`, to keep 10 s between two queries (SCHED-02).
    QueryDeferred { until: Millis },
    /// No more queries: the status is final (SCHED-01).
    QueryStopped,
    /// The 24-hour query schedule is over; webhooks still count (SCHED-01).
    ScheduleEnded,
    /// A newer version was applied (WEBHOOK-02).
    Applied {
        object: ObjectState,
        version: u32,
        via: Via,
    },
    /// A version not newer than the one applied was ignored (WEBHOOK-02).
    Stale {
        version: u32,
        applied: u32,
        via: Via,
    },
    /// A Payment other than the order's current one: not applied to the order.
    OtherPayment { payment: PaymentId },
    /// The platform named the existing object for this order or refund number
    /// (UNKNOWN-05, UNIQ-04): it is ours; query it, never change the number.
    Adopted { object: ResourceId },
    /// Fulfil the order, once per order (RES-07).
    Fulfil { payment: PaymentId },
    /// `manual_review`: pending confirmation, never charged again (RES-04).
    PendingConfirmation,
    /// A 202 on cancel is not "canceled" (CANCEL-02).
    CancelNotConfirmed,
    /// Refused with this 4xx: nothing executed; the merchant must fix the request (REJECT-01).
    Rejected { code: ErrorCode },
    /// An integration defect to report; never retried around (UNKNOWN-04).
    Defect { code: ErrorCode },
    /// A command the policy refuses.
    Refused { reason: Refusal },
    /// Show the payer a message.
    ShowPayer { message: PayerMessage },
    /// Tell the merchant's staff to contact technical support with this payment number:
    /// still unconfirmed more than 24 hours into manual_review (WORDING-03). The contract
    /// addresses the merchant (你), not the payer.
    ContactSupport { payment: PaymentId },
    /// An answer for a request this process no longer waits for: ignored.
    LateReply { handle: Handle },
    /// A webhook or list entry about an object the database does not know.
    UnknownObject,
    /// A new process started from the database.
    Restarted { boot: u32 },
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::KeyPersisted { key, seq } => {
                write!(f, "persist key {key} (submission {seq})")
            }
            Decision::Deviate { pattern } => {
                write!(f, "anti-pattern {pattern}: {}", pattern.deviation())
            }
            Decision::RetryScheduled { try_no, at } => write!(f, "try {try_no} at {at}"),
            Decision::RetryDropped { try_no } => write!(f, "try {try_no} not needed"),
            Decision::ResultUnknown => f.write_str("result unknown: confirming"),
            Decision::QueryScheduled { at } => write!(f, "query at {at}"),
            Decision::QueryDeferred { until } => write!(f, "query deferred to {until}"),
            Decision::QueryStopped => f.write_str("queries stop"),
            Decision::ScheduleEnded => f.write_str("query schedule over"),
            Decision::Applied {
                object,
                version,
                via,
            } => {
                let state = match object {
                    ObjectState::Payment { status, resolution } => {
                        format!("{}/{}", status.as_str(), resolution.as_str())
                    }
                    ObjectState::Refund { status } => status.as_str().to_owned(),
                };
                write!(f, "apply {state} version {version} ({via})")
            }
            Decision::Stale {
                version,
                applied,
                via,
            } => write!(f, "ignore version {version} <= {applied} ({via})"),
            Decision::OtherPayment { payment } => write!(f, "{payment} is not the order's payment"),
            Decision::Adopted { object } => write!(f, "{object} already exists for this number"),
            Decision::Fulfil { payment } => write!(f, "fulfil by {payment}"),
            Decision::PendingConfirmation => f.write_str("pending confirmation (manual review)"),
            Decision::CancelNotConfirmed => f.write_str("202 on cancel: not canceled"),
            Decision::Rejected { code } => write!(f, "rejected: {}", code.as_str()),
            Decision::Defect { code } => write!(f, "integration defect: {}", code.as_str()),
            Decision::Refused { reason } => write!(f, "refused: {reason}"),
            Decision::ShowPayer { message } => write!(f, "show {message}"),
            Decision::ContactSupport { payment } => {
                write!(f, "merchant: contact technical support with {payment}")
            }
            Decision::LateReply { handle } => write!(f, "late answer for {handle} ignored"),
            Decision::UnknownObject => f.write_str("unknown object ignored"),
            Decision::Restarted { boot } => write!(f, "process {boot} resumes from the database"),
        }
    }
}
