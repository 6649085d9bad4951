//! The reference policy, its parameters, and the anti-patterns the contract warns against.
//!
//! A [`Policy`] is data: how keys are made, and which [`AntiPattern`]s the server
//! follows instead of the contract. The server's code has one path per decision and
//! asks the policy's decision point (`conduct.rs`) at the exact point where an
//! anti-pattern departs, so every variant is the reference client plus one documented
//! deviation.

use super::keys::Keys;
use crate::rules::Rule;
use crate::time::Millis;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// How a merchant server integrates: its keys and its deviations from the contract.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    pub keys: Keys,
    /// Empty for the reference policy.
    pub anti_patterns: BTreeSet<AntiPattern>,
}

impl Policy {
    /// The contract's reference client with deterministic keys (GEN-01).
    pub fn reference() -> Policy {
        Policy {
            keys: Keys::Deterministic,
            anti_patterns: BTreeSet::new(),
        }
    }

    /// The contract's reference client with random keys persisted before sending (GEN-04).
    pub fn reference_random() -> Policy {
        Policy {
            keys: Keys::RandomPersisted,
            anti_patterns: BTreeSet::new(),
        }
    }

    /// This policy, also following `pattern`.
    pub fn with(mut self, pattern: AntiPattern) -> Policy {
        self.anti_patterns.insert(pattern);
        self
    }

    /// Whether this is a reference policy (no anti-pattern).
    pub fn is_reference(&self) -> bool {
        self.anti_patterns.is_empty()
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::reference()
    }
}

macro_rules! anti_patterns {
    (
        named { $( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $rule:path, $deviation:literal; )* }
        detail { $( $(#[doc = $ddoc:literal])* $dvariant:ident = $dname:literal, $drule:path, $ddeviation:literal; )* }
    ) => {
        /// A named way of breaking the contract, as a variant of the reference policy: its
        /// snake_case name (as in traces and on the command line), the contract rule it
        /// breaks, and what the server does instead of the reference policy, in one line.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum AntiPattern {
            $( $(#[doc = $doc])* #[serde(rename = $name)] $variant, )*
            $( $(#[doc = $ddoc])* #[serde(rename = $dname)] $dvariant, )*
        }

        impl AntiPattern {
            /// Every variant, in declaration order.
            pub const ALL: &'static [AntiPattern] =
                &[$(AntiPattern::$variant,)* $(AntiPattern::$dvariant,)*];

            /// Whether the variant is one of the detail mutants (cadence and merchant
            /// effects), listed after the anti-patterns the contract names.
            pub const fn is_detail(self) -> bool {
                matches!(self, $(AntiPattern::$dvariant)|*)
            }

            /// The contract rule the variant breaks.
            pub const fn breaks(self) -> Rule {
                match self {
                    $(AntiPattern::$variant => $rule,)*
                    $(AntiPattern::$dvariant => $drule,)*
                }
            }

            /// Its name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(AntiPattern::$variant => $name,)*
                    $(AntiPattern::$dvariant => $dname,)*
                }
            }

            /// What the server does instead of the reference policy.
            pub const fn deviation(self) -> &'static str {
                match self {
                    $(AntiPattern::$variant => $deviation,)*
                    $(AntiPattern::$dvariant => $ddeviation,)*
                }
            }
        }
    };
}

anti_patterns! {
    named {
        /// "Don't do this: after a timeout, switching to a new idempotency key … and charging
        /// again — the payer may be charged twice" (`crypto.randomUUID()` after a timeout).
        NewKeyAfterTimeout = "new_key_after_timeout", Rule::NeverSwitchKeyOnUnknown,
            "after a create or confirm times out, sends it again at once under a new random key";
        /// "Don't do this: after a timeout, switching to … a new order number and charging
        /// again" (`orderNo: \`${order.orderNo}-retry\``: "new order number = new payment").
        NewOrderNoAfterTimeout = "new_order_no_after_timeout", Rule::NeverSwitchKeyOnUnknown,
            "after a create times out, creates the payment again as ORDER-retry under a new key";
        /// "Must be written to the database first and then sent … after a process crash,
        /// retrieve the original key from the database and retry": here a random key lives in
        /// memory only and a restarted process makes a new one.
        KeyNotPersisted = "key_not_persisted", Rule::PersistBeforeSend,
            "keeps a random key in memory only; after a restart, creates again under a new key";
        /// "On retry, read it from the database — it must not be regenerated": here every
        /// retry after a network error, 429 or 5xx draws a new random key.
        KeyRegeneratedOnRetry = "key_regenerated_on_retry", Rule::RandomKeyPersistedFirst,
            "draws a new random key for every retry after a network error, 429 or 5xx";
        /// "This is an integration defect: fix the key-generation logic; do not change the
        /// parameters and then replay the original key": here an amended order is re-sent
        /// under its original key.
        ChangedParamsSameKey = "changed_params_same_key", Rule::ConflictIsDefect,
            "accepts an amended amount and re-sends the create under the original key";
        /// "With a timeout, a 5xx or a 202, the charge may already have been made": here a
        /// timeout or a 202 counts as a failure and the payment is submitted again as a new
        /// business submission (a new key, sequence + 1).
        UnknownAsFailure = "unknown_as_failure", Rule::RetryMaxAttempts,
            "takes a timeout or a 202 as a failure and submits again with sequence + 1";
        /// "Do not treat it as canceled; wait for payment.canceled, or query" (S12): here a
        /// 202 on cancel closes the order.
        Cancel202AsCanceled = "cancel_202_as_canceled", Rule::Cancel202NotCanceled,
            "takes a 202 on cancel as canceled and closes the order";
        /// "Initiate only after the payment has status=failed": here the payer may change
        /// card while the payment is `processing` or `requires_action`.
        CardRetryWhileInProgress = "card_retry_while_in_progress", Rule::CardRetryOnlyAfterFailed,
            "lets the payer change card while the payment is processing or requires_action";
        /// "When the two give conflicting results, the latest version prevails": here every
        /// webhook is applied as it comes, older versions included.
        WebhookIgnoresVersion = "webhook_ignores_version", Rule::LatestVersionWins,
            "applies every webhook, older versions included";
        /// "Leave at least 10 seconds between two queries of the same object": here the
        /// server polls every second.
        PollTooFast = "poll_too_fast", Rule::QuerySpacing,
            "queries every second, with no spacing";
        /// "429 rate_limited … Wait Retry-After seconds, then retry with the original
        /// idempotency key": here a 429 is retried after the usual backoff.
        IgnoreRetryAfter = "ignore_retry_after", Rule::RetryAfterHonoured,
            "retries a 429 after the usual backoff, not Retry-After";
        /// "manual_review … Keep the order as pending confirmation; do not charge again":
        /// here the server gives up on the order and charges again under a new order number.
        RechargeOnManualReview = "recharge_on_manual_review", Rule::ManualReviewClient,
            "on manual_review, charges again under a new order number";
        /// "One business submission corresponds to one key; the same key is used only for
        /// the same endpoint": here cancel and refunds reuse the order's payment key.
        KeyReusedAcrossEndpoints = "key_reused_across_endpoints", Rule::OneKeyPerSubmission,
            "sends cancel and refunds under the order's payment key";
    }

    // ---- detail mutants: cadence and effects ----
    detail {
        /// "Math.min(30_000, 1000 * 2 ** (attempt - 1))": here the backoff stays at 1 s and
        /// never doubles.
        BackoffNotDoubled = "backoff_not_doubled", Rule::RetryBackoff,
            "waits 1 s before every retry, never doubling";
        /// "+ Math.floor(Math.random() * 250)": here the jitter is four times the drawn one,
        /// up to a second.
        JitterNotCapped = "jitter_not_capped", Rule::RetryBackoff,
            "adds four times the drawn jitter, up to 1 s";
        /// "Client timeouts: at least 20 seconds for creating and confirming payments": here
        /// creates and confirms give up after 5 s.
        PostTimeout5s = "post_timeout_5s", Rule::ClientTimeouts,
            "gives up on a create or confirm after 5 s";
        /// "at least 10 seconds for queries": here queries give up after 5 s.
        QueryTimeout5s = "query_timeout_5s", Rule::ClientTimeouts,
            "gives up on a query after 5 s";
        /// "10 seconds, 30 seconds, 2 minutes, 5 minutes, 15 minutes, 1 hour; after that,
        /// once every 4 hours until 24 hours": here the schedule ends after the 1-hour query.
        QueriesStopAt1h = "queries_stop_at_1h", Rule::QuerySchedule,
            "ends the query schedule after the 1-hour query";
        /// "On entering succeeded / failed / canceled / expired … stop": here the schedule
        /// goes on after a final status.
        QueriesAfterFinal = "queries_after_final", Rule::QuerySchedule,
            "goes on querying after a final status";
        /// "On entering … `failed` … stop": here the schedule stops at succeeded, canceled
        /// and expired but goes on after failed.
        QueriesAfterFailed = "queries_after_failed", Rule::QuerySchedule,
            "goes on querying a failed Payment";
        /// "Fulfil idempotently by Payment id": here the order is fulfilled again for every
        /// newer `succeeded` version (a refund's, a webhook's).
        FulfilPerVersion = "fulfil_per_version", Rule::FulfilByPaymentId,
            "fulfils the order again for every newer succeeded version";
        /// Fulfil only on `succeeded`: here the order is fulfilled as soon as its Payment
        /// exists, processing included.
        FulfilBeforeSucceeded = "fulfil_before_succeeded", Rule::FulfilByPaymentId,
            "fulfils the order as soon as its Payment exists, processing included";
        /// 503 temporarily_unavailable: "Temporarily unable to pay, please try again later":
        /// here the payer is shown "confirming the payment result".
        ConfirmingOn503 = "confirming_on_503", Rule::PausedMessage,
            "shows the payer \"confirming\" on a 503 instead of \"temporarily unavailable\"";
        /// Close an order only on a closed Payment: here a declined (failed) payment closes
        /// the order as canceled.
        CloseOnFailed = "close_on_failed", Rule::TerminalStatuses,
            "closes the order as canceled when the payment fails";
        /// S13 (\"not accepted\") and SCHED-01 (one schedule \"from first acceptance\"): here
        /// five 503s are a result unknown whose query window starts afresh after every round,
        /// so a paused channel gives lookup, "not found", five 503s, for good.
        LoopOn503 = "loop_on_503", Rule::QuerySchedule,
            "takes five 503s as unknown and restarts the query window after every round";
    }
}

impl AntiPattern {
    /// Looks a variant up by its [`AntiPattern::name`].
    pub fn from_name(name: &str) -> Option<AntiPattern> {
        AntiPattern::ALL.iter().copied().find(|p| p.name() == name)
    }
}

impl std::fmt::Display for AntiPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The contract's numbers for a merchant client. Each field says where it comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ClientParams {
    /// Client timeout of create, confirm, cancel and refund requests (contract: at least
    /// 20 s for create and confirm, TIMEOUT-01; the reference code uses 20 s for every POST:
    /// assumption A-CLIENT-POST-TIMEOUT).
    pub post_timeout: Millis,
    /// Client timeout of queries (contract: at least 10 s, TIMEOUT-01).
    pub query_timeout: Millis,
    /// Tries of one POST, the first included (contract: `maxAttempts = 5`, RETRY-03).
    pub tries_max: u32,
    /// Backoff after try 1 (contract: 1 s, RETRY-02); doubled after each further try.
    pub backoff_base: Millis,
    /// Backoff cap (contract: 30 s, RETRY-02).
    pub backoff_max: Millis,
    /// Jitter is below this (contract: `Math.random() * 250`, RETRY-02). The driver
    /// supplies it with each input that can schedule a retry.
    pub jitter_max: Millis,
    /// Query times after the result became unknown (contract: 10 s, 30 s, 2 min, 5 min,
    /// 15 min, 1 h, SCHED-01).
    pub query_offsets: &'static [Millis],
    /// After the last offset, one query every this long (contract: 4 h, SCHED-01; where
    /// the steps start is assumption A-CLIENT-SCHED-4H) …
    pub query_every: Millis,
    /// … until this long after the result became unknown (contract: 24 h, SCHED-01).
    pub query_until: Millis,
    /// Least time between two queries of one object (contract: 10 s, SCHED-02).
    pub query_spacing_min: Millis,
    /// The query interval of [`AntiPattern::PollTooFast`].
    pub poll_too_fast_every: Millis,
    /// The timeout of [`AntiPattern::PostTimeout5s`] and [`AntiPattern::QueryTimeout5s`].
    pub short_timeout: Millis,
    /// Attempts per Payment (contract: default 3, ATTEMPT-05): no card retry beyond it.
    pub attempts_max: u8,
    /// Longest Idempotency-Key (contract: 255 characters, KEY-07).
    pub key_len_max: usize,
    /// What a create or confirm whose tries all ended in 503 `temporarily_unavailable`
    /// (or 429) comes to: S13's "not accepted" or the reference code's `RESULT_UNKNOWN`
    /// (the contract says both: A-S13-REFERENCE-CODE).
    pub after_503: After503,
    /// The same two readings for a create or confirm whose last try was answered 429 and
    /// none of whose tries may have executed: RATE-01's "本次请求没有执行" (not executed) or
    /// the reference code's `RESULT_UNKNOWN` (A-429-REFERENCE-CODE); the default follows
    /// the code.
    pub after_429: After503,
}

/// The two readings of a create or confirm whose every try was answered 503
/// `temporarily_unavailable` (A-S13-REFERENCE-CODE, a contradiction of the contract).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum After503 {
    /// S13, RATE-04, RATE-05: "本次请求未受理，没有创建 Payment" (this request was not
    /// accepted; no Payment was created): the order is refused for now, the payer is shown
    /// "temporarily unable to pay", nothing is queried, and paying the order again later
    /// re-sends it under the same key ("稍后用 K 重试"). The default.
    NotAccepted,
    /// The reference code's `postWithRetry`, which retries "5xx（含 503
    /// temporarily_unavailable）" and then throws `RESULT_UNKNOWN` ("标记订单'正在确认'，
    /// 转入查询"): the order is confirming and queried on SCHED-01, its window anchored
    /// once for the submission, so a "not found" re-creates at most once per query.
    ResultUnknown,
}

impl Default for ClientParams {
    fn default() -> Self {
        ClientParams {
            post_timeout: Millis::secs(20),
            query_timeout: Millis::secs(10),
            tries_max: 5,
            backoff_base: Millis::secs(1),
            backoff_max: Millis::secs(30),
            jitter_max: Millis::ms(250),
            query_offsets: crate::Contract::QUERY_OFFSETS,
            query_every: Millis::hours(4),
            query_until: Millis::hours(24),
            query_spacing_min: Millis::secs(10),
            poll_too_fast_every: Millis::secs(1),
            short_timeout: Millis::secs(5),
            attempts_max: 3,
            key_len_max: 255,
            after_503: After503::NotAccepted,
            after_429: After503::ResultUnknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_anti_pattern_has_a_name_a_rule_and_a_warning() {
        let mut names = BTreeSet::new();
        for &p in AntiPattern::ALL {
            assert!(names.insert(p.name()), "{p}");
            assert_eq!(AntiPattern::from_name(p.name()), Some(p));
            assert!(!p.deviation().is_empty());
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert!(crate::rules::Rule::ALL.contains(&p.breaks()));
        }
        assert_eq!(AntiPattern::ALL.len(), 25);
        assert_eq!(
            AntiPattern::ALL.iter().filter(|p| p.is_detail()).count(),
            12
        );
        assert!(Policy::reference().is_reference());
        assert!(
            !Policy::reference()
                .with(AntiPattern::PollTooFast)
                .is_reference()
        );
    }
}
