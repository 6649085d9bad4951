//! The merchant's database: what survives a crash, shared by every server of a merchant.
//!
//! One record per order and per refund: the persisted idempotency key of the current
//! business submission (GEN-06), the object's id once known, and the latest status and
//! `version` applied (WEBHOOK-02). The only card data is the opaque [`Card`] label the
//! payer gave for the current submission, kept so that a restarted process can re-send
//! that submission unchanged (GEN-06); no card number, no e-mail, no name.
//!
//! Servers write the database during [`super::MerchantServer::step`], before any output
//! of that step leaves: a crash "between persisting the key and sending" is a world that
//! drops the step's `Send`. One step is one transaction, and the order number is the
//! key of an order's record (A-CLIENT-DB-TXN).

use crate::api::{
    ErrorCode, PaymentStatus, PaymentView, RefundStatus, RefundView, ResolutionStatus,
};
use crate::cow::CowMap;
use crate::ids::{Card, PaymentId, RefundId};
use crate::text::Text;
use crate::time::Millis;
use serde::{Deserialize, Serialize};

/// Whether a create or confirm is a payment's first submission or a card change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubmissionKind {
    /// `POST /v1/payments` (sequence 1, or a new order number under an anti-pattern).
    Create,
    /// `POST /v1/payments/{id}/confirm` with the card the payer gave again (sequence ≥ 2).
    Confirm,
}

/// What came of a keyed request (create, confirm, cancel, refund).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(
    tag = "outcome",
    content = "code",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum OrderOutcome {
    /// Persisted and being sent or retried; no answer yet.
    Sending,
    /// Answered with the object (2xx other than 202).
    Answered,
    /// No result: a 202, or the tries ran out (RETRY-03). Queries and webhooks decide.
    Unknown,
    /// Refused with 4xx (REJECT-01): nothing executed under the key.
    Rejected(ErrorCode),
    /// 409 `idempotency_conflict`: an integration defect, never retried (UNKNOWN-04).
    Conflict,
}

impl OrderOutcome {
    /// Refused with 400, 401, 403 or 422 (REJECT-01): nothing executed under the key.
    fn rejected_unbound(self) -> bool {
        matches!(self, OrderOutcome::Rejected(c) if matches!(c.http_status(), 400 | 401 | 403 | 422))
    }
}

/// One business submission of an order: one key (GEN-05).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Submission {
    /// 1 for the create, + 1 for each new business submission such as a card change (GEN-02).
    pub seq: u32,
    pub kind: SubmissionKind,
    /// The order number the request carries: the order's own, except under
    /// `NewOrderNoAfterTimeout` and `RechargeOnManualReview`.
    pub merchant_order_no: Text,
    /// The persisted Idempotency-Key; `None` only under `KeyNotPersisted`.
    pub key: Option<Text>,
    /// The opaque card label the payer gave for this submission.
    pub card: Card,
    pub outcome: OrderOutcome,
}

/// The latest Payment state applied to an order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct AppliedPayment {
    pub status: PaymentStatus,
    pub resolution: ResolutionStatus,
    pub version: u32,
    pub attempt_count: u8,
    pub expires_at: Millis,
}

impl From<&PaymentView> for AppliedPayment {
    fn from(p: &PaymentView) -> Self {
        AppliedPayment {
            status: p.status,
            resolution: p.resolution_status,
            version: p.version,
            attempt_count: p.attempt_count,
            expires_at: p.expires_at,
        }
    }
}

/// A cancel of an order's Payment.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct CancelRecord {
    pub key: Option<Text>,
    pub outcome: OrderOutcome,
}

/// What the merchant shows for an order, derived from its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(
    tag = "state",
    content = "code",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum OrderState {
    /// A create or confirm is being sent or retried.
    Submitting,
    /// The result is unknown ("confirming", WORDING-02): querying and waiting for webhooks.
    Confirming,
    /// `manual_review`: pending confirmation, never charged again (RES-04).
    PendingConfirmation,
    /// `requires_action`: the payer must authenticate (RES-05).
    AwaitingPayer,
    /// `succeeded`.
    Paid,
    /// `failed`: the payer may change card (RES-06, ATTEMPT-07).
    Failed,
    /// `canceled` or `expired`.
    Closed,
    /// The submission was refused with this 4xx.
    Rejected(ErrorCode),
    /// 409 `idempotency_conflict`: an integration defect (UNKNOWN-04).
    Defect,
}

/// The order's state in words (traces).
impl std::fmt::Display for OrderState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OrderState::Submitting => f.write_str("submitting"),
            OrderState::Confirming => f.write_str("confirming"),
            OrderState::PendingConfirmation => f.write_str("pending confirmation"),
            OrderState::AwaitingPayer => f.write_str("awaiting the payer"),
            OrderState::Paid => f.write_str("paid"),
            OrderState::Failed => f.write_str("failed"),
            OrderState::Closed => f.write_str("closed"),
            OrderState::Rejected(code) => write!(f, "rejected: {}", code.as_str()),
            OrderState::Defect => f.write_str("integration defect"),
        }
    }
}

impl OrderState {
    /// Whether nothing more is sent for the order's payment (queries stop, SCHED-01).
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            OrderState::Paid
                | OrderState::Failed
                | OrderState::Closed
                | OrderState::Rejected(_)
                | OrderState::Defect
        )
    }
}

/// An order as the merchant keeps it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct OrderRecord {
    /// The merchant's order number (`ORDER-001`), the record's key.
    pub order_no: Text,
    /// Bound to the order number at the platform (UNIQ-01).
    pub amount: u64,
    pub currency: Text,
    /// The current business submission.
    pub submission: Submission,
    /// The Payment, once a response, a query or a webhook named it.
    pub payment_id: Option<PaymentId>,
    /// The latest Payment state applied, by version (WEBHOOK-02).
    pub applied: Option<AppliedPayment>,
    /// A cancel, once asked for.
    pub cancel: Option<CancelRecord>,
    /// Since when the result has been unknown: the query schedule counts from here
    /// (SCHED-01; A-CLIENT-SCHED-ANCHOR).
    pub confirming_since: Option<Millis>,
    /// When any server last sent a query of this order's Payment (SCHED-02).
    pub last_query_at: Option<Millis>,
    /// The Payment this order was fulfilled under (RES-07): at most once.
    pub fulfilled: Option<PaymentId>,
    /// When the merchant is to contact technical support about the order, if it is still
    /// pending confirmation then: 24 hours after the client first applied its Payment in
    /// manual_review (WORDING-03, A-CLIENT-SUPPORT-START); cleared once told.
    pub support_due: Option<Millis>,
}

impl OrderRecord {
    /// What the merchant shows for the order.
    pub fn state(&self) -> OrderState {
        let outcome = self.submission.outcome;
        if outcome == OrderOutcome::Conflict {
            return OrderState::Defect;
        }
        let Some(applied) = &self.applied else {
            return match outcome {
                OrderOutcome::Sending => OrderState::Submitting,
                OrderOutcome::Rejected(code) => OrderState::Rejected(code),
                _ => OrderState::Confirming,
            };
        };
        match applied.status {
            PaymentStatus::Succeeded => OrderState::Paid,
            PaymentStatus::Canceled | PaymentStatus::Expired => OrderState::Closed,
            _ if outcome == OrderOutcome::Sending => OrderState::Submitting,
            PaymentStatus::Failed => OrderState::Failed,
            PaymentStatus::Processing | PaymentStatus::RequiresAction
                if applied.resolution == ResolutionStatus::ManualReview =>
            {
                OrderState::PendingConfirmation
            }
            PaymentStatus::RequiresAction => OrderState::AwaitingPayer,
            PaymentStatus::Processing => OrderState::Confirming,
            PaymentStatus::RequiresPaymentMethod => match outcome {
                OrderOutcome::Rejected(code) => OrderState::Rejected(code),
                _ => OrderState::Confirming,
            },
        }
    }

    /// Whether the order's create was rejected with 400, 401, 403 or 422 (REJECT-01):
    /// nothing executed, no Payment exists for it, the key was not used up.
    pub fn create_rejected(&self) -> bool {
        self.submission.outcome.rejected_unbound()
            && self.submission.kind == SubmissionKind::Create
            && self.payment_id.is_none()
    }

    /// The status applied last, if any.
    pub fn status(&self) -> Option<PaymentStatus> {
        self.applied.as_ref().map(|a| a.status)
    }

    /// The version applied last (0: none).
    pub fn version(&self) -> u32 {
        self.applied.as_ref().map_or(0, |a| a.version)
    }
}

/// The latest Refund state applied.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct AppliedRefund {
    pub status: RefundStatus,
    pub resolution: ResolutionStatus,
    pub version: u32,
}

impl From<&RefundView> for AppliedRefund {
    fn from(r: &RefundView) -> Self {
        AppliedRefund {
            status: r.status,
            resolution: r.resolution_status,
            version: r.version,
        }
    }
}

/// A refund as the merchant keeps it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RefundRecord {
    /// The merchant's refund number (`REFUND-001`), the record's key.
    pub refund_no: Text,
    pub order_no: Text,
    pub payment_id: PaymentId,
    pub amount: u64,
    /// 1 for the first request, + 1 for a corrected one after a 400, 401, 403 or 422
    /// (REJECT-01, GEN-02: `refund.create:REFUND:2`).
    pub seq: u32,
    /// The persisted Idempotency-Key; `None` only under `KeyNotPersisted`.
    pub key: Option<Text>,
    pub outcome: OrderOutcome,
    pub refund_id: Option<RefundId>,
    /// The latest Refund state applied, by version (WEBHOOK-02).
    pub applied: Option<AppliedRefund>,
    /// When a server last sent a query of the refund (SCHED-02).
    pub last_query_at: Option<Millis>,
}

impl RefundRecord {
    /// Whether the refund's create was rejected with 400, 401, 403 or 422 (REJECT-01):
    /// nothing executed, the refund number is not bound at the platform.
    pub fn rejected(&self) -> bool {
        self.outcome.rejected_unbound() && self.refund_id.is_none()
    }

    /// Whether the refund reached `succeeded` or `failed` (`pending_review` and
    /// `processing` come before a terminal status, SCHED-03).
    pub fn is_final(&self) -> bool {
        self.applied.as_ref().is_some_and(|a| a.status.is_final())
    }
}

/// The merchant's database. Ordered maps only.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct MerchantDb {
    orders: CowMap<Text, OrderRecord>,
    refunds: CowMap<Text, RefundRecord>,
}

impl MerchantDb {
    pub fn new() -> MerchantDb {
        MerchantDb::default()
    }

    pub fn order(&self, order_no: &str) -> Option<&OrderRecord> {
        self.orders.get(order_no)
    }

    /// Every order, by order number.
    pub fn orders(&self) -> impl Iterator<Item = &OrderRecord> {
        self.orders.values()
    }

    pub fn refund(&self, refund_no: &str) -> Option<&RefundRecord> {
        self.refunds.get(refund_no)
    }

    /// Every refund, by refund number.
    pub fn refunds(&self) -> impl Iterator<Item = &RefundRecord> {
        self.refunds.values()
    }

    /// The order a Payment belongs to: the one that knows its id, else the one whose
    /// current submission carried its order number.
    pub fn order_of_payment(&self, view: &PaymentView) -> Option<&str> {
        let by_id = self.orders.values().find(|o| o.payment_id == Some(view.id));
        let by_no = || {
            self.orders.values().find(|o| {
                o.submission.merchant_order_no == view.merchant_order_no
                    || o.order_no == view.merchant_order_no
            })
        };
        by_id.or_else(by_no).map(|o| o.order_no.as_str())
    }

    pub(super) fn order_mut(&mut self, order_no: &str) -> Option<&mut OrderRecord> {
        self.orders.get_mut(order_no)
    }

    pub(super) fn insert_order(&mut self, record: OrderRecord) {
        self.orders.insert(record.order_no.clone(), record);
    }

    pub(super) fn refund_mut(&mut self, refund_no: &str) -> Option<&mut RefundRecord> {
        self.refunds.get_mut(refund_no)
    }

    pub(super) fn insert_refund(&mut self, record: RefundRecord) {
        self.refunds.insert(record.refund_no.clone(), record);
    }

    /// Order numbers, for a sweep that may change records.
    pub(super) fn order_nos(&self) -> Vec<Text> {
        self.orders.keys().cloned().collect()
    }

    /// Refund numbers, for a sweep that may change records.
    pub(super) fn refund_nos(&self) -> Vec<Text> {
        self.refunds.keys().cloned().collect()
    }
}
