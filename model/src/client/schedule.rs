//! When to retry a POST and when to query: pure functions of the contract's numbers.
//!
//! Assumption A-CLIENT-SCHED-ANCHOR: the contract counts query times "from first
//! acceptance", which a client cannot observe. The schedule counts from the moment the
//! client learned that the result is unknown (a 202, or the last retry failing), which
//! is never earlier than acceptance.
//!
//! Assumption A-CLIENT-SCHED-4H: "after that, once every 4 hours until 24 hours" is read
//! as 4-hour steps after the 1-hour query: 5 h, 9 h, 13 h, 17 h, 21 h.

use super::policy::ClientParams;
use crate::time::Millis;

/// RETRY-02: the wait after try `failed_try` (1-based) fails, before the next try:
/// `min(30 s, 1 s × 2^(n-1))`, without jitter.
pub fn backoff(params: &ClientParams, failed_try: u32) -> Millis {
    let exponent = failed_try.saturating_sub(1).min(32);
    let wait = params.backoff_base.0.saturating_mul(1u64 << exponent);
    Millis(wait.min(params.backoff_max.0))
}

/// RETRY-02 and RATE-03, exactly as the contract's reference code computes `waitMs`:
/// the backoff plus the jitter, replaced as a whole by `Retry-After` seconds on a 429
/// that carries one.
pub fn retry_delay(
    params: &ClientParams,
    failed_try: u32,
    jitter: Millis,
    retry_after_s: Option<u32>,
) -> Millis {
    match retry_after_s {
        Some(seconds) => Millis::secs(u64::from(seconds)),
        None => backoff(params, failed_try).after(jitter),
    }
}

/// SCHED-01: every query time, as offsets from the anchor, in order.
pub fn query_offsets(params: &ClientParams) -> Vec<Millis> {
    let mut offsets: Vec<Millis> = params
        .query_offsets
        .iter()
        .copied()
        // A-CLIENT-AFTER-24H: nothing is queried after the 24-hour window.
        .filter(|o| *o <= params.query_until)
        .collect();
    if params.query_every > Millis::ZERO {
        // A-CLIENT-SCHED-4H: the 4-hour steps follow the last fixed offset (1 h).
        let mut at = offsets.last().copied().unwrap_or(Millis::ZERO);
        loop {
            at = at.after(params.query_every);
            if at > params.query_until {
                break;
            }
            offsets.push(at);
        }
    }
    offsets
}

/// SCHED-01: the first query time strictly after `now`, for a result unknown since
/// `anchor`; `None` once the schedule is over (24 h).
pub fn next_query_at(params: &ClientParams, anchor: Millis, now: Millis) -> Option<Millis> {
    query_offsets(params)
        .into_iter()
        .map(|o| anchor.after(o))
        .find(|at| *at > now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_02_backoff_doubles_from_one_second_up_to_thirty() {
        let p = ClientParams::default();
        let waits: Vec<u64> = (1..=8).map(|n| backoff(&p, n).0).collect();
        assert_eq!(
            waits,
            [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]
        );
        assert_eq!(backoff(&p, 200), Millis::secs(30));
        assert_eq!(retry_delay(&p, 3, Millis::ms(249), None), Millis::ms(4_249));
        // RATE-03: Retry-After replaces backoff and jitter.
        assert_eq!(
            retry_delay(&p, 3, Millis::ms(249), Some(2)),
            Millis::secs(2)
        );
        assert_eq!(retry_delay(&p, 1, Millis::ms(5), Some(0)), Millis::ZERO);
    }

    #[test]
    fn sched_01_query_times_follow_the_contract() {
        let p = ClientParams::default();
        let expected = [
            Millis::secs(10),
            Millis::secs(30),
            Millis::mins(2),
            Millis::mins(5),
            Millis::mins(15),
            Millis::hours(1),
            Millis::hours(5),
            Millis::hours(9),
            Millis::hours(13),
            Millis::hours(17),
            Millis::hours(21),
        ];
        assert_eq!(query_offsets(&p), expected);
        let anchor = Millis::secs(100);
        assert_eq!(
            next_query_at(&p, anchor, anchor),
            Some(anchor.after(Millis::secs(10)))
        );
        assert_eq!(
            next_query_at(&p, anchor, anchor.after(Millis::secs(10))),
            Some(anchor.after(Millis::secs(30)))
        );
        assert_eq!(
            next_query_at(&p, anchor, anchor.after(Millis::hours(21))),
            None
        );
        // SCHED-02: consecutive scheduled queries are at least 10 s apart.
        let times = query_offsets(&p);
        assert!(
            times
                .windows(2)
                .all(|w| w[1].since(w[0]) >= p.query_spacing_min)
        );
    }
}
