//! The contract's own numbers, as one table.
//!
//! Every figure the contract states ("Idempotency, retries and status queries", v1.0.0; the Chinese original authoritative)
//! is a constant of [`Contract`], with the rule that states it and the sentence it comes
//! from. Properties and facts judge against these, never against the parameters a
//! platform or a client runs with: a platform configured with a wrong number (a 1-day
//! retention, a fourth attempt) is then caught like any other bug (the bug zoo's
//! [`crate::mutants::ParameterMutant`]s). Where the platform or the client has a parameter
//! for one of them, its default is taken from here ([`crate::PlatformParams`]).
//!
//! Numbers the contract does not state (the concurrent wait, the automatic query window,
//! …) are assumptions and live in [`crate::PlatformParams`] alone.

use crate::time::Millis;

/// The contract's numbers. See the module doc.
pub struct Contract;

impl Contract {
    /// The contract's title, as its English translation gives it.
    pub const TITLE: &'static str = "Idempotency, retries and status queries";
    /// The contract's title in the Chinese original, which is authoritative.
    pub const TITLE_ZH: &'static str = "幂等、重试与查单";
    /// "Contract v1.0.0" (契约 v1.0.0): the version every verdict is given against.
    pub const VERSION: &'static str = "v1.0.0";
    /// "Last updated 2026-10-14" (最后更新于 2026-10-14).
    pub const UPDATED: &'static str = "2026-10-14";

    /// The contract named in one line, as every report heads its verdict:
    /// `"Idempotency, retries and status queries" (幂等、重试与查单) v1.0.0, 2026-10-14`.
    pub fn named() -> String {
        format!(
            "\"{}\" ({}) {}, {}",
            Self::TITLE,
            Self::TITLE_ZH,
            Self::VERSION,
            Self::UPDATED
        )
    }

    /// KEY-07: "Request header Idempotency-Key, 1–255 characters"
    /// (请求头 Idempotency-Key，1–255 个字符).
    pub const KEY_LEN_MIN: usize = 1;
    /// KEY-07: "Request header Idempotency-Key, 1–255 characters"
    /// (请求头 Idempotency-Key，1–255 个字符).
    pub const KEY_LEN_MAX: usize = 255;
    /// RET-01: "Idempotency records are retained online for 7 days."
    /// (幂等记录在线保留 7 天。)
    pub const RETENTION: Millis = Millis::days(7);
    /// ATTEMPT-05: "without exceeding the maximum number of attempts (default 3)"
    /// (未超过最多尝试次数（默认 3 次）).
    pub const ATTEMPTS_MAX: u8 = 3;
    /// UPSTREAM-01: "the platform waits synchronously for the upstream for about 15
    /// seconds, and returns 202 beyond that" (平台同步等待上游约 15 秒，超出返回 202).
    pub const SYNC_WAIT: Millis = Millis::secs(15);
    /// UPSTREAM-01's "about" (约 15 秒): how far from 15 s a 202 told for a wait that ran
    /// out may come, either way (assumption A-SYNC-WAIT-ABOUT). Not the contract's figure
    /// but the reading of its word, named here so that a reader can change it; the judge
    /// also holds such a 202 below the client's 20 s ([`Contract::POST_TIMEOUT_MIN`]).
    pub const SYNC_WAIT_TOLERANCE: Millis = Millis::secs(3);
    /// TIMEOUT-01: "Client timeouts: at least 20 seconds for creating and confirming
    /// payments" (客户端超时：创建、确认支付不少于 20 秒).
    pub const POST_TIMEOUT_MIN: Millis = Millis::secs(20);
    /// TIMEOUT-01: "at least 10 seconds for queries" (查询不少于 10 秒).
    pub const QUERY_TIMEOUT_MIN: Millis = Millis::secs(10);
    /// SCHED-01: "Recommended query times (from first acceptance): 10 seconds, 30 seconds,
    /// 2 minutes, 5 minutes, 15 minutes, 1 hour" (10 秒、30 秒、2 分钟、5 分钟、15 分钟、1 小时).
    pub const QUERY_OFFSETS: &'static [Millis] = &[
        Millis::secs(10),
        Millis::secs(30),
        Millis::mins(2),
        Millis::mins(5),
        Millis::mins(15),
        Millis::hours(1),
    ];
    /// SCHED-01: "after that, once every 4 hours until 24 hours" (之后每 4 小时一次直到 24 小时).
    pub const QUERY_EVERY: Millis = Millis::hours(4);
    /// SCHED-01: "after that, once every 4 hours until 24 hours" (之后每 4 小时一次直到 24 小时).
    pub const QUERY_UNTIL: Millis = Millis::hours(24);
    /// SCHED-02: "Leave at least 10 seconds between two queries of the same object"
    /// (同一对象两次查询间隔不少于 10 秒).
    pub const QUERY_SPACING_MIN: Millis = Millis::secs(10);
    /// RES-03: "the platform still queries the upstream once every 24 hours"
    /// (平台仍每 24 小时向上游查询一次).
    pub const MANUAL_REVIEW_REQUERY: Millis = Millis::hours(24);
    /// WORDING-03: "if still not confirmed after more than 24 hours, you may contact
    /// technical support" (超过 24 小时仍未确认可联系技术支持).
    pub const MANUAL_REVIEW_SUPPORT_AFTER: Millis = Millis::hours(24);
    /// RATE-01 (S10): "Submit with K → 429 (Retry-After: 2) … Wait 2 seconds, then retry
    /// with K" (用 K 提交 → 429（Retry-After: 2）). An example: the contract fixes no
    /// figure, the platform's default takes it (A-RETRY-AFTER).
    pub const S10_RETRY_AFTER_S: u32 = 2;
    /// RETRY-03: "postWithRetry(path, body, { idempotencyKey, maxAttempts = 5 })": at most
    /// 5 tries by the reference retry implementation.
    pub const TRIES_MAX: u32 = 5;
    /// RETRY-02: "Math.min(30_000, 1000 * 2 ** (attempt - 1))": the first backoff is 1 s …
    pub const BACKOFF_BASE: Millis = Millis::secs(1);
    /// RETRY-02: "Math.min(30_000, 1000 * 2 ** (attempt - 1))": … doubled, at most 30 s.
    pub const BACKOFF_MAX: Millis = Millis::secs(30);
    /// RETRY-02: "+ Math.floor(Math.random() * 250)": a jitter below 250 ms.
    pub const JITTER_BELOW: Millis = Millis::ms(250);
}

// The table is consistent, checked when the crate compiles: SCHED-01's offsets grow, the
// 4-hourly queries come after the last offset and end at 24 hours, the first query keeps
// SCHED-02's spacing; a client POST timeout outlasts the platform's synchronous wait.
const _: () = {
    let offsets = Contract::QUERY_OFFSETS;
    let mut i = 1;
    while i < offsets.len() {
        assert!(offsets[i - 1].0 < offsets[i].0);
        i += 1;
    }
    assert!(offsets[offsets.len() - 1].0 < Contract::QUERY_EVERY.0);
    assert!(Contract::QUERY_EVERY.0 < Contract::QUERY_UNTIL.0);
    assert!(offsets[0].0 >= Contract::QUERY_SPACING_MIN.0);
    assert!(Contract::POST_TIMEOUT_MIN.0 > Contract::SYNC_WAIT.0);
    assert!(Contract::SYNC_WAIT_TOLERANCE.0 < Contract::SYNC_WAIT.0);
    assert!(Contract::BACKOFF_BASE.0 < Contract::BACKOFF_MAX.0);
    assert!(Contract::KEY_LEN_MIN <= Contract::KEY_LEN_MAX);
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlatformParams;
    use crate::client::ClientParams;

    /// The platform's and the client's parameters for a number the contract states
    /// default to the contract's figure.
    #[test]
    fn ret_01_attempt_05_parameters_default_to_the_contract() {
        let p = PlatformParams::default();
        assert_eq!(p.retention, Contract::RETENTION);
        assert_eq!(p.retention, Millis::days(7));
        assert_eq!(p.attempts_max, Contract::ATTEMPTS_MAX);
        assert_eq!(p.sync_wait, Contract::SYNC_WAIT);
        assert_eq!(p.manual_review_requery, Contract::MANUAL_REVIEW_REQUERY);
        assert_eq!(p.key_len_max, Contract::KEY_LEN_MAX);
        assert_eq!(p.retry_after_s, Some(Contract::S10_RETRY_AFTER_S));
        let c = ClientParams::default();
        assert!(c.post_timeout >= Contract::POST_TIMEOUT_MIN);
        assert!(c.post_timeout > Contract::SYNC_WAIT);
        assert!(c.query_timeout >= Contract::QUERY_TIMEOUT_MIN);
        assert_eq!(c.query_offsets, Contract::QUERY_OFFSETS);
        assert_eq!(c.query_every, Contract::QUERY_EVERY);
        assert_eq!(c.query_until, Contract::QUERY_UNTIL);
        assert_eq!(c.query_spacing_min, Contract::QUERY_SPACING_MIN);
        assert_eq!(c.attempts_max, Contract::ATTEMPTS_MAX);
        assert_eq!(c.key_len_max, Contract::KEY_LEN_MAX);
        assert_eq!(c.tries_max, Contract::TRIES_MAX);
        assert_eq!(c.backoff_base, Contract::BACKOFF_BASE);
        assert_eq!(c.backoff_max, Contract::BACKOFF_MAX);
        assert_eq!(c.jitter_max, Contract::JITTER_BELOW);
    }
}
