//! Every place where the contract is silent or ambiguous and the model had to assume.
//!
//! Each [`Assumption`] names the contract sentence it fills in, what the model does, and
//! the parameter of [`crate::PlatformParams`] or the [`crate::Branch`] that carries it
//! (if any), so that a reviewer can change the assumption instead of the code. The
//! model's code cites them by ID (`A-WAIT-TIMEOUT`) at the decision point.
//! `model/ASSUMPTIONS.md` lists the same IDs (a test keeps the two in step).

use serde::Serialize;

/// Why the model had to decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gap {
    /// The contract says nothing (a number, a code, an order of checks).
    Silent,
    /// The contract allows several behaviours ("A or B"): the checkers explore all.
    Alternatives,
    /// The contract's wording admits more than one reading.
    Ambiguous,
}

macro_rules! assumptions {
    ($( $variant:ident = $id:literal, $gap:ident, $param:expr, $contract:literal, $taken:literal; )*) => {
        /// An assumption of the model. See the module doc.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum Assumption {
            $(
                #[doc = concat!("`", $id, "`: ", $taken)]
                $variant,
            )*
        }

        impl Assumption {
            pub const ALL: &'static [Assumption] = &[$(Assumption::$variant),*];

            pub const fn id(self) -> &'static str {
                match self { $(Assumption::$variant => $id,)* }
            }
            pub const fn gap(self) -> Gap {
                match self { $(Assumption::$variant => Gap::$gap,)* }
            }
            /// The parameter or branch that carries it, if it can be changed without code.
            pub const fn parameter(self) -> Option<&'static str> {
                match self { $(Assumption::$variant => $param,)* }
            }
            /// What the contract says (or does not say), quoted or paraphrased.
            pub const fn contract(self) -> &'static str {
                match self { $(Assumption::$variant => $contract,)* }
            }
            /// What the model does.
            pub const fn taken(self) -> &'static str {
                match self { $(Assumption::$variant => $taken,)* }
            }
        }
    };
}

assumptions! {
    S4Branch = "A-S4-BRANCH", Alternatives, Some("Branch::S4Conflict | Branch::S4ReturnExisting"),
        "S4 / ORDER-01: a new key with the same order number \"returns the existing object identifier or a conflict\".",
        "Both are modelled and explored: 409 order_no_conflict with related_resource_id, or 200 with the existing Payment.";
    S4Bind = "A-S4-BIND", Silent, None,
        "S4 does not say whether the new key is bound when the existing object is returned.",
        "On the S4 'existing object' branch the new key is bound to the existing Payment, so its replays return the same object.";
    S4Params = "A-S4-PARAMS", Silent, None,
        "S4 shows only the same order with the same parameters; a new key, the same order number and another amount is not discussed.",
        "A new key with a used order number and a different amount or currency always gets 409 order_no_conflict (no branch).";
    S5Branch = "A-S5-BRANCH", Alternatives, Some("Branch::S5Wait | Branch::S5InProgress"),
        "S5 / CONC-02: the other server \"returns the same object or an in-flight conflict\".",
        "Both are modelled: wait for the executor (then 200 with the same object, or 409 operation_in_progress on wait timeout), or 409 operation_in_progress at once.";
    WaitTimeout = "A-WAIT-TIMEOUT", Silent, Some("PlatformParams::concurrent_wait_timeout"),
        "CONC-03: \"if the wait times out, 409 operation_in_progress\" gives no length.",
        "A concurrent same-key request waits at most 10 s.";
    S8Branch = "A-S8-BRANCH", Alternatives, Some("Branch::S8PaymentInProgress | Branch::S8OriginalStatus"),
        "S8 / ATTEMPT-01: confirm with a new key while processing gives \"409 payment_in_progress or returns the original status\".",
        "Both are modelled: 409 payment_in_progress with related_resource_id, or 200 with the current Payment; neither creates an attempt.";
    S8NoBind = "A-S8-NOBIND", Silent, None,
        "S8 does not say whether the new key is used up.",
        "Neither S8 branch binds the new key: the client may retry it with the same key after the attempt ends, as 'retry later with the same key' implies.";
    ConflictsDoNotBind = "A-409-NOBIND", Silent, None,
        "Only 400, 401, 403 and 422 are said not to use up a key; 404, 405 and the 409s are not mentioned.",
        "No 404, 405 or 409 response binds a key; only executions (2xx) do. 429 and 503 execute nothing (RATE-01, RATE-04).";
    ErrorCodes = "A-ERROR-CODES", Silent, None,
        "The contract names idempotency_conflict, operation_in_progress, order_no_conflict, payment_in_progress, rate_limited, internal_error and temporarily_unavailable only.",
        "Other rejections use: invalid_request (400, with field), authentication_failed (401), permission_denied (403), resource_missing (404), method_not_allowed (405), refund_no_conflict (409, with related_resource_id), unsupported_currency, payment_not_confirmable, payment_expired, attempts_exhausted, payment_not_cancelable, payment_not_refundable, refund_amount_exceeded (422).";
    KeyLength = "A-KEY-LENGTH", Ambiguous, Some("PlatformParams::key_len_max"),
        "KEY-07: \"1–255 characters; if it is missing, 400 … error.field Idempotency-Key\" says nothing of an empty or too long key, nor what a character is.",
        "Length counts Unicode scalar values; an empty or 256-character key gets the same 400 as a missing one.";
    StatusRequiresPaymentMethod = "A-STATUS-RPM", Silent, None,
        "The status table has no status for a Payment created by a checkout session before the payer pays.",
        "Such a Payment (and one created without a card) is requires_payment_method; the first confirm creates attempt 1.";
    CheckoutConflict = "A-CKO-CONFLICT", Silent, None,
        "CKO-01 covers a new key with the same order number, amount and currency only.",
        "A new session for a used order number with another amount or currency, or for a Payment that can no longer be paid, gets 409 order_no_conflict.";
    PauseScope = "A-PAUSE-SCOPE", Ambiguous, None,
        "RATE-04: the channel \"suspended new transactions\".",
        "503 applies to new executions of create payment, confirm and checkout session; cancel, refunds, queries and replays of finished keys are still served.";
    RateScope = "A-RATE-SCOPE", Ambiguous, None,
        "RATE-02: \"switching Key cannot get around the merchant's overall limit\" does not say which key (API key or idempotency key).",
        "The limit is per merchant, over every API key, environment, idempotency key and endpoint; it is checked right after authentication, so both readings hold.";
    RetryAfter = "A-RETRY-AFTER", Silent, Some("PlatformParams::retry_after_s"),
        "S10 shows Retry-After: 2 as an example.",
        "Retry-After is 2 seconds.";
    AutoWindow = "A-AUTO-WINDOW", Silent, Some("PlatformParams::auto_query_window"),
        "RES-03: \"the automatic query window has been exceeded\" gives no length.",
        "The window is 1 hour from the charge; then manual_review with a query every 24 hours.";
    VerifyInterval = "A-VERIFY-INTERVAL", Silent, Some("PlatformParams::verify_interval"),
        "RES-01: the platform \"is verifying with the upstream\" — how often is not said.",
        "The platform queries the upstream every minute while a result is unknown (and while requires_action).";
    ExpiresAt = "A-EXPIRES-AT", Silent, Some("PlatformParams::payment_ttl"),
        "ATTEMPT-04 and EXPIRY-01 use expires_at without giving its length.",
        "expires_at is 24 hours after the Payment is created.";
    SessionTtl = "A-SESSION-TTL", Silent, Some("PlatformParams::session_ttl"),
        "CKO-01 mentions an old session that \"has already expired\" without a length.",
        "A checkout session expires after 30 minutes.";
    FeeSnapshot = "A-FEE-SNAPSHOT", Ambiguous, Some("PlatformParams::fee_rate_bps"),
        "ATTEMPT-06: \"keeps … the fee rate of that time\" does not say which time.",
        "The fee rate is snapshotted when the Payment is created and kept by every attempt.";
    RefundLimit = "A-REFUND-LIMIT", Silent, None,
        "The contract names no refund limit.",
        "Processing and succeeded refunds of a Payment together never exceed its amount (422 refund_amount_exceeded).";
    RefundAsync = "A-REFUND-ASYNC", Silent, None,
        "The 15-second synchronous wait is stated for create and confirm; S11 only says the platform keeps verifying.",
        "A refund answers 201 processing at once; an unknown or not-found refund stays processing (needs_query, later manual_review) and is never sent again.";
    UpstreamVoid = "A-UPSTREAM-VOID", Silent, None,
        "The upstream protocol is not part of the contract.",
        "A query for a charge the acquirer never saw voids that reference: the attempt fails as not received, and a late charge under it is declined.";
    CancelOutcomes = "A-CANCEL", Silent, None,
        "S12 covers a cancel the upstream could not confirm (202); other cancels are not described.",
        "Cancel of failed or requires_payment_method cancels at once (200); of succeeded or expired gets 422; of canceled returns it (200); if the upstream says the charge was captured the answer is 200 succeeded; an attempt that fails while a cancel is pending ends canceled.";
    WebhookRedelivery = "A-WEBHOOK-REDELIVERY", Silent, Some("PlatformParams::webhook_redeliveries_max"),
        "WEBHOOK-01 makes webhooks the primary channel but says nothing of delivery guarantees.",
        "An event not acknowledged is re-delivered up to 3 times, after 1, 2 and 4 minutes.";
    Versions = "A-VERSION", Silent, None,
        "WEBHOOK-02: \"the latest version prevails\" does not define version.",
        "Every change visible in the object increments version by one and emits one webhook event carrying the new snapshot.";
    FirstStatusCodes = "A-STATUS-CODES", Silent, None,
        "The scenarios show 201 for a first create and 200 for a confirm (S9) but no code for a first cancel, session or refund.",
        "First executions answer 201 (create payment, checkout session, refund), 200 (confirm, cancel) or 202 (no upstream answer within the synchronous wait).";
    FailedAfterExpiry = "A-FAILED-AFTER-EXPIRY", Silent, None,
        "EXPIRY-01 says a processing payment may still succeed after expires_at, not what happens if it fails.",
        "It becomes failed (with failure.attempt_id) and stays so; a confirm then gets 422 payment_expired.";
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn assumption_ids_are_unique_and_listed_in_assumptions_md() {
        let md = include_str!("../ASSUMPTIONS.md");
        let mut seen = BTreeSet::new();
        for a in Assumption::ALL {
            assert!(seen.insert(a.id()), "duplicate {}", a.id());
            assert!(a.id().starts_with("A-"));
            assert!(
                md.contains(a.id()),
                "model/ASSUMPTIONS.md does not list {}",
                a.id()
            );
        }
    }
}
