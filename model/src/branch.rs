//! Where the contract allows two behaviours, the model takes the branch as an input.
//!
//! A request that reaches one of these points cannot be handled without a [`Branch`]:
//! [`crate::Platform::branch_point`] says which point a request would reach (a pure look
//! at the state), and the world offers both alternatives as choices, so the checkers
//! explore every branch and a test names the one it wants.

use serde::{Deserialize, Serialize};

crate::named! {
    fn as_str;
    /// A place where the contract says "A or B".
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    pub enum BranchPoint {
        /// S4 / ORDER-01: a new key for an existing `merchant_order_no` "returns the existing
        /// object identifier or a conflict".
        OrderNoReuse = "S4 (a used merchant_order_no under a new key)",
        /// S5 / CONC-02, CONC-03: a concurrent same-key request "returns the same object or an
        /// in-flight conflict".
        ConcurrentSameKey = "S5 (a same-key request while the first executes)",
        /// S8 / ATTEMPT-01: confirm with a new key while processing gives "409
        /// payment_in_progress or returns the original status". The card-retry section says
        /// the same confirm "will be rejected (409 payment_in_progress)": the contract
        /// contradicts itself, and both readings are explored (A-S8-CARD-RETRY). While
        /// requires_action only the card-retry sentence speaks: 409, no branch.
        ConfirmWhileProcessing = "S8 (a confirm under a new key while the Payment is processing)",
        /// UNIQ-04 / RET-03: a new key (or the original key after retention) for a used
        /// `merchant_refund_no`, the same Payment and amount: the contract names no answer; by
        /// S4's "the existing object identifier or a conflict" both are explored
        /// (A-REFUND-NO-BRANCH).
        RefundNoReuse = "a used merchant_refund_no under a new key",
        /// CKO-01 / EXPIRY-01: a checkout session under a new key for an order whose Payment
        /// is expired. CKO-01 gives "a new session for the same Payment, not a conflict";
        /// EXPIRY-01's "订单的有效期只限制新的付款操作" (the validity period limits new payment
        /// operations) allows 422 payment_expired, which is not the conflict CKO-01 rules
        /// out. Both are explored (A-CKO-ANY-STATUS).
        SessionOfExpired = "CKO-01 (a new checkout session for an order whose Payment is expired)",
        /// RET-01 and the rules table's "不会重新解释为新业务" (will not be reinterpreted as
        /// new business), whose subject the contract omits: a confirm under a key whose
        /// record's 7-day retention has passed, which would start a new attempt. Both readings
        /// are explored (A-CONFIRM-RETENTION).
        ConfirmPastRetention = "RET-01 (a confirm key replayed after its 7-day retention)",
    }
}

impl BranchPoint {
    /// The two alternatives, the one the contract's example shows first.
    pub fn alternatives(self) -> [Branch; 2] {
        match self {
            BranchPoint::OrderNoReuse => [Branch::S4Conflict, Branch::S4ReturnExisting],
            BranchPoint::ConcurrentSameKey => [Branch::S5Wait, Branch::S5InProgress],
            BranchPoint::ConfirmWhileProcessing => {
                [Branch::S8PaymentInProgress, Branch::S8OriginalStatus]
            }
            BranchPoint::RefundNoReuse => [Branch::RefundNoConflict, Branch::RefundNoExisting],
            BranchPoint::SessionOfExpired => {
                [Branch::ExpiredNewSession, Branch::ExpiredPaymentExpired]
            }
            BranchPoint::ConfirmPastRetention => {
                [Branch::RetentionNewAttempt, Branch::RetentionNotNewBusiness]
            }
        }
    }
}

crate::named! {
    fn as_str;
    /// One alternative at a [`BranchPoint`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    pub enum Branch {
        /// S4: 409 `order_no_conflict` with `related_resource_id` (the contract's example).
        S4Conflict = "S4:conflict",
        /// S4: 200 with the existing Payment; the new key is bound to it (A-S4-BIND).
        S4ReturnExisting = "S4:existing",
        /// S5: wait for the executing request and return the same object (or 409
        /// `operation_in_progress` when the wait times out).
        S5Wait = "S5:wait",
        /// S5: answer 409 `operation_in_progress` at once.
        S5InProgress = "S5:in-progress",
        /// S8: 409 `payment_in_progress` with `related_resource_id` (the contract's example).
        S8PaymentInProgress = "S8:payment-in-progress",
        /// S8: 200 with the Payment's current status; no attempt, no charge (A-S8-NOBIND).
        S8OriginalStatus = "S8:original-status",
        /// A used refund number: 409 `refund_no_conflict` naming the existing Refund.
        RefundNoConflict = "refund-no:conflict",
        /// A used refund number: 200 with the existing Refund; the key is bound to it
        /// (A-REFUND-NO-BRANCH).
        RefundNoExisting = "refund-no:existing",
        /// An expired Payment's order: 201 with a new session for the same Payment (CKO-01's
        /// words; the model's first reading).
        ExpiredNewSession = "cko-expired:new-session",
        /// An expired Payment's order: 422 payment_expired, nothing recorded (EXPIRY-01).
        ExpiredPaymentExpired = "cko-expired:payment-expired",
        /// A confirm key past its retention: judged afresh, a new attempt that charges the
        /// card (the subject of "not reinterpreted as new business" is the order and refund
        /// numbers only; the model's first reading, A-CONFIRM-RETENTION).
        RetentionNewAttempt = "confirm-past-retention:new-attempt",
        /// A confirm key past its retention: not new business; 200 with the Payment as it
        /// stands, no attempt, no charge, the key left unbound (A-CONFIRM-RETENTION).
        RetentionNotNewBusiness = "confirm-past-retention:not-new-business",
    }
}

impl Branch {
    /// The point this is an alternative of.
    pub fn point(self) -> BranchPoint {
        let of = |p: &BranchPoint| p.alternatives().contains(&self);
        *BranchPoint::ALL
            .iter()
            .find(|p| of(p))
            .expect("every branch has its point")
    }
}
