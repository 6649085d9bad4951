//! The platform's records: Payments, attempts, refunds, checkout sessions and
//! idempotency records. Only ordered maps; no card data anywhere (CARD-02).

use crate::acquirer::UpstreamCall;
use crate::api::{
    Failure, PaymentStatus, PaymentView, RefundStatus, RefundView, ResolutionStatus, SessionView,
};
use crate::ids::{
    ApiKeyId, AttemptId, Card, Environment, MerchantId, PaymentId, RefundId, RequestId, ResourceId,
    SessionId,
};
use crate::text::Text;
use crate::time::Millis;
use serde::Serialize;

/// What an API key authenticates (SCOPE-03: the key itself is not part of any scope).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
pub struct ApiKeySpec {
    pub id: ApiKeyId,
    pub merchant: MerchantId,
    pub environment: Environment,
    /// A read-only key gets 403 on every POST.
    pub read_only: bool,
}

/// The method and path part of an idempotency scope (SCOPE-01). The payment id of
/// confirm and cancel is part of the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    CreatePayment,
    Confirm(PaymentId),
    Cancel(PaymentId),
    CheckoutSession,
    Refund,
}

/// An idempotency scope: merchant + environment + method + path + key (SCOPE-01).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Scope {
    pub merchant: MerchantId,
    pub environment: Environment,
    pub route: Route,
    pub key: Text,
}

/// The safety-relevant parameters of a request, per endpoint (SAFE-01; which fields,
/// A-SAFE-FIELDS). Card data is never part of it (CARD-01).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "endpoint", rename_all = "snake_case")]
pub enum Fingerprint {
    CreatePayment {
        merchant_order_no: Text,
        amount: u64,
        currency: Text,
    },
    /// The payment id is in the path; the body holds only the card.
    Confirm,
    Cancel,
    CheckoutSession {
        merchant_order_no: Text,
        amount: u64,
        currency: Text,
    },
    Refund {
        payment_id: PaymentId,
        merchant_refund_no: Text,
        amount: u64,
    },
}

/// What a new execution claims: its scope, and the fingerprint every later request
/// under that scope is compared with (SCOPE-01, CONFLICT-01).
#[derive(Clone, Debug)]
pub struct Claim {
    pub scope: Scope,
    pub fingerprint: Fingerprint,
}

/// Whether a scope is executing or done.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RecordState {
    /// One request holds the right to execute (CONC-01).
    InFlight { executor: RequestId },
    /// Executed; replays return this object's latest state (REPLAY-01, REPLAY-02).
    Done { resource: ResourceId },
}

/// An idempotency record.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct IdempotencyRecord {
    pub fingerprint: Fingerprint,
    pub created_at: Millis,
    pub state: RecordState,
}

/// Status of one attempt (one charge sent upstream).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum AttemptStatus {
    Processing,
    RequiresAction,
    Succeeded,
    Failed,
    Canceled,
}

impl AttemptStatus {
    /// Unfinished: the upstream may still capture (UNIQ-02).
    pub fn is_unfinished(self) -> bool {
        matches!(
            self,
            AttemptStatus::Processing | AttemptStatus::RequiresAction
        )
    }
}

/// One attempt of a Payment.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Attempt {
    pub payment: PaymentId,
    pub status: AttemptStatus,
    /// When the charge was sent upstream; the automatic query window counts from here
    /// (A-AUTO-WINDOW).
    pub sent_at: Millis,
}

/// A Payment.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Payment {
    pub merchant: MerchantId,
    pub environment: Environment,
    pub merchant_order_no: Text,
    pub amount: u64,
    pub currency: Text,
    /// Snapshot taken at creation; kept by every attempt (ATTEMPT-06, A-FEE-SNAPSHOT).
    pub fee_rate_bps: u32,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub status: PaymentStatus,
    pub resolution: ResolutionStatus,
    pub attempts: Vec<AttemptId>,
    pub failure: Option<Failure>,
    /// A cancel was asked for and not yet confirmed by the upstream (CANCEL-01).
    pub cancel_requested: bool,
    /// Sum of refunds that are processing or succeeded (A-REFUND-LIMIT).
    pub amount_refunded: u64,
    pub version: u32,
}

impl Payment {
    /// The latest attempt, if any.
    pub fn latest_attempt(&self) -> Option<AttemptId> {
        self.attempts.last().copied()
    }

    /// The upstream charge of `attempt` of this Payment (`payment`) with `card`.
    pub fn charge(&self, payment: PaymentId, attempt: AttemptId, card: Card) -> UpstreamCall {
        UpstreamCall::Charge {
            attempt,
            payment,
            merchant: self.merchant,
            environment: self.environment,
            amount: self.amount,
            currency: self.currency.clone(),
            card,
        }
    }

    pub fn view(&self, id: PaymentId) -> PaymentView {
        PaymentView {
            id,
            merchant_order_no: self.merchant_order_no.clone(),
            amount: self.amount,
            currency: self.currency.clone(),
            status: self.status,
            resolution_status: self.resolution,
            attempt_count: self.attempts.len() as u8,
            failure: self.failure,
            next_action: self.status == PaymentStatus::RequiresAction,
            expires_at: self.expires_at,
            fee_rate_bps: self.fee_rate_bps,
            amount_refunded: self.amount_refunded,
            version: self.version,
        }
    }
}

/// A Refund.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Refund {
    pub payment: PaymentId,
    /// The captured attempt the money goes back from.
    pub attempt: AttemptId,
    pub merchant: MerchantId,
    pub environment: Environment,
    pub merchant_refund_no: Text,
    pub amount: u64,
    pub status: RefundStatus,
    pub resolution: ResolutionStatus,
    pub sent_at: Millis,
    pub version: u32,
}

impl Refund {
    pub fn view(&self, id: RefundId) -> RefundView {
        RefundView {
            id,
            payment_id: self.payment,
            merchant_refund_no: self.merchant_refund_no.clone(),
            amount: self.amount,
            status: self.status,
            resolution_status: self.resolution,
            version: self.version,
        }
    }
}

/// A checkout session: a hosted page for one Payment (UNIQ-03).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Session {
    pub payment: PaymentId,
    pub created_at: Millis,
    pub expires_at: Millis,
}

impl Session {
    pub fn view(&self, id: SessionId) -> SessionView {
        SessionView {
            id,
            payment_id: self.payment,
            expires_at: self.expires_at,
        }
    }
}

/// A business-uniqueness key: (merchant, environment, number). Outlives idempotency
/// records (UNIQ-01, UNIQ-04, RET-02, RET-03).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct BusinessKey {
    pub merchant: MerchantId,
    pub environment: Environment,
    pub number: Text,
}

impl BusinessKey {
    pub fn new(merchant: MerchantId, environment: Environment, number: impl Into<Text>) -> Self {
        BusinessKey {
            merchant,
            environment,
            number: number.into(),
        }
    }

    /// `number` in the merchant and environment of `scope`.
    pub fn of(scope: &Scope, number: impl Into<Text>) -> Self {
        BusinessKey::new(scope.merchant, scope.environment, number)
    }
}

/// What an unanswered request is waiting for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Pending {
    /// Holds the right to execute and waits (at most `sync_wait`) for the upstream.
    Executor { scope: Scope, waits_on: WaitsOn },
    /// A concurrent same-key request waiting for the executor (CONC-02).
    Waiter { scope: Scope },
}

/// The upstream answer an executor waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitsOn {
    /// A create (answers 201) or confirm (answers 200) waits for its charge.
    Charge { attempt: AttemptId, created: bool },
    /// A cancel waits for the upstream's cancel answer.
    Cancel { payment: PaymentId },
}
