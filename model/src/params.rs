//! Named parameters: the contract's numbers, and every assumption where it is silent.
//!
//! Each field's doc says whether the contract states it (with the rule) or whether it is
//! an assumption (with its `A-…` name, listed in `model/ASSUMPTIONS.md` with the contract
//! sentence it fills in). Nothing in the model uses a constant that is not here. A field
//! for a number the contract states defaults to [`Contract`]'s figure; properties judge
//! against [`Contract`], so a platform run with another figure is caught.

use crate::contract::Contract;
use crate::time::Millis;
use serde::Serialize;

/// Parameters of the platform model.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct PlatformParams {
    /// Idempotency records are kept this long (contract: 7 days, RET-01).
    pub retention: Millis,
    /// The platform waits this long for the upstream before answering 202
    /// (contract: "about 15 seconds", UPSTREAM-01).
    pub sync_wait: Millis,
    /// A concurrent same-key request waits this long for the executing one before
    /// 409 `operation_in_progress` (assumption A-WAIT-TIMEOUT; CONC-03 names no figure).
    pub concurrent_wait_timeout: Millis,
    /// Maximum attempts per Payment (contract: default 3, ATTEMPT-05).
    pub attempts_max: u8,
    /// `expires_at` = creation + this (assumption A-EXPIRES-AT; the contract gives no length).
    pub payment_ttl: Millis,
    /// A checkout session expires this long after it is created (assumption A-SESSION-TTL).
    pub session_ttl: Millis,
    /// Interval of the platform's own upstream queries while a result is unknown
    /// (assumption A-VERIFY-INTERVAL; RES-01 says only that it verifies).
    pub verify_interval: Millis,
    /// The automatic query window: unknown this long after the charge was sent means
    /// `manual_review` (assumption A-AUTO-WINDOW; RES-03 names no length).
    pub auto_query_window: Millis,
    /// Under `manual_review` the platform queries the upstream this often
    /// (contract: every 24 hours, RES-03).
    pub manual_review_requery: Millis,
    /// How long after the charge was sent the `manual_review` re-queries of a Payment go
    /// on; `None`: for ever (assumption A-MANUAL-REVIEW-END; RES-03 names no end).
    pub manual_review_until: Option<Millis>,
    /// `Retry-After` on 429 in seconds, 0 included; `None`: no header (assumption
    /// A-RETRY-AFTER-429, the readings `seconds`, `zero` and `absent`; S10 shows 2).
    pub retry_after_s: Option<u32>,
    /// Maximum Idempotency-Key length in characters (contract: 255, KEY-07; a character is
    /// a Unicode scalar value, assumption A-KEY-LENGTH).
    pub key_len_max: usize,
    /// Webhook re-deliveries of an event that was not acknowledged
    /// (assumption A-WEBHOOK-REDELIVERY; the contract says webhooks are primary, not how often).
    pub webhook_redeliveries_max: u8,
    /// First re-delivery delay; doubled each time (assumption A-WEBHOOK-REDELIVERY).
    pub webhook_redelivery_delay: Millis,
    /// Fee rate snapshotted into a new Payment, in basis points, until changed by
    /// `Control::SetFeeRate` (assumption A-FEE-SNAPSHOT: "the fee rate of that time" is
    /// the rate when the Payment was created).
    pub fee_rate_bps: u32,
    /// Currencies the platform accepts; others get 422 `unsupported_currency`.
    pub currencies: &'static [&'static str],
    /// A refund of at least this amount starts `pending_review` and is sent upstream
    /// only when its review ends (assumption A-REFUND-REVIEW; the contract lists the
    /// status, not what leads to it). `u64::MAX`, the default: no refund is reviewed.
    pub refund_review_from: u64,
    /// A review ends this long after the refund was created: approved, the refund then
    /// becomes `processing` and is sent upstream (assumption A-REFUND-REVIEW).
    pub refund_review_time: Millis,
    /// A review of a refund of at least this amount rejects it: the refund ends `failed`
    /// (a final status of the contract's refund statuses, SCHED-03), is never sent
    /// upstream and frees its amount (A-REFUND-REVIEW). `u64::MAX`, the default: every
    /// review approves.
    pub refund_review_rejects_from: u64,
    /// The platform's identifiers start after this number: 0, the default, numbers every
    /// kind from 1 (`pay_demo_001`); the sandbox numbers merchant 2's from 500000
    /// (`pay_demo_500001`), so that an id names one merchant's object. Not a figure of
    /// the contract: ids are opaque to it.
    #[serde(skip_serializing_if = "is_zero")]
    pub ids_from: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for PlatformParams {
    fn default() -> Self {
        PlatformParams {
            retention: Contract::RETENTION,
            sync_wait: Contract::SYNC_WAIT,
            concurrent_wait_timeout: Millis::secs(10),
            attempts_max: Contract::ATTEMPTS_MAX,
            payment_ttl: Millis::hours(24),
            session_ttl: Millis::mins(30),
            verify_interval: Millis::mins(1),
            auto_query_window: Millis::hours(1),
            manual_review_requery: Contract::MANUAL_REVIEW_REQUERY,
            manual_review_until: None,
            retry_after_s: Some(Contract::S10_RETRY_AFTER_S),
            key_len_max: Contract::KEY_LEN_MAX,
            webhook_redeliveries_max: 3,
            webhook_redelivery_delay: Millis::mins(1),
            fee_rate_bps: 290,
            currencies: &["USD", "EUR", "CNY", "JPY"],
            refund_review_from: u64::MAX,
            refund_review_time: Millis::hours(1),
            refund_review_rejects_from: u64::MAX,
            ids_from: 0,
        }
    }
}
