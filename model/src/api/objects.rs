//! The business objects a response or a webhook carries: Payment, Refund, checkout
//! session, and their statuses.

use crate::ids::{AttemptId, PaymentId, RefundId, SessionId};
use crate::text::Text;
use crate::time::Millis;
use serde::{Deserialize, Serialize};

crate::named! {
    fn as_str;
    /// `status` of a Payment.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum PaymentStatus {
        /// Created by a checkout session or without a card; no attempt yet (assumption A-STATUS-RPM).
        RequiresPaymentMethod = "requires_payment_method",
        Processing = "processing",
        RequiresAction = "requires_action",
        Succeeded = "succeeded",
        Failed = "failed",
        Canceled = "canceled",
        Expired = "expired",
    }
}

impl PaymentStatus {
    /// `succeeded`, `failed`, `canceled`, `expired`: where the query schedule stops (SCHED-01).
    /// `failed` is terminal for the attempt, not for the Payment (ATTEMPT-02 allows a card retry).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            PaymentStatus::Succeeded
                | PaymentStatus::Failed
                | PaymentStatus::Canceled
                | PaymentStatus::Expired
        )
    }

    /// `processing` or `requires_action`: an attempt is unfinished (UNIQ-02).
    pub fn is_in_progress(self) -> bool {
        matches!(
            self,
            PaymentStatus::Processing | PaymentStatus::RequiresAction
        )
    }
}

crate::named! {
    fn as_str;
    /// `resolution_status` of a Payment or Refund (RES-01…RES-03).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum ResolutionStatus {
        Known = "known",
        NeedsQuery = "needs_query",
        ManualReview = "manual_review",
    }
}

/// `failure` of a failed Payment: the code and the attempt that failed (RES-06).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    pub code: FailureCode,
    pub attempt_id: AttemptId,
}

crate::named! {
    fn as_str;
    /// Why an attempt definitively failed.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum FailureCode {
        CardDeclined = "card_declined",
        AuthenticationFailed = "authentication_failed",
        /// The upstream never received the charge and voided its reference on our query.
        NotReceivedByUpstream = "not_received_by_upstream",
    }
}

/// The Payment object as returned by the API and carried by webhooks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentView {
    pub id: PaymentId,
    pub merchant_order_no: Text,
    pub amount: u64,
    pub currency: Text,
    pub status: PaymentStatus,
    pub resolution_status: ResolutionStatus,
    pub attempt_count: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Present while `requires_action`: the payer must authenticate (RES-05).
    pub next_action: bool,
    pub expires_at: Millis,
    pub fee_rate_bps: u32,
    pub amount_refunded: u64,
    pub version: u32,
}

crate::named! {
    fn as_str;
    /// `status` of a Refund.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum RefundStatus {
        Processing = "processing",
        Succeeded = "succeeded",
        Failed = "failed",
        /// SCHED-03 lists `pending_review` and `processing` before a terminal status. What
        /// puts a refund there and what moves it out is assumption A-REFUND-REVIEW.
        PendingReview = "pending_review",
    }
}

impl RefundStatus {
    /// `succeeded` or `failed`.
    pub fn is_final(self) -> bool {
        matches!(self, RefundStatus::Succeeded | RefundStatus::Failed)
    }
}

/// The Refund object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefundView {
    pub id: RefundId,
    pub payment_id: PaymentId,
    pub merchant_refund_no: Text,
    pub amount: u64,
    pub status: RefundStatus,
    pub resolution_status: ResolutionStatus,
    pub version: u32,
}

/// The checkout session object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionView {
    pub id: SessionId,
    pub payment_id: PaymentId,
    pub expires_at: Millis,
}
