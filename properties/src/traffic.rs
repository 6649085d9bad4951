//! Traffic: a client's requests per business submission stay within what the contract's
//! schedules allow (RETRY-03, SCHED-01, QUERY-06), counted in
//! `properties/src/facts/traffic.rs`.

use crate::evidence::CLIENT_DB;
use crate::property::{Predicate, Property};
use payhub_model::{Contract, Rule};

/// What the contract's schedules allow one submission per opening: a round of tries
/// (RETRY-03: 5), each scheduled query of SCHED-01 (10 s … 1 h, then every 4 hours within
/// 24 hours: 11) plus the two immediate ones (an order-number conflict's, a restart's
/// lookup), and after each query's "not found" one more round (QUERY-06).
pub fn allowed_per_opening() -> u32 {
    let queries = scheduled_queries() + 2;
    Contract::TRIES_MAX * (1 + queries) + queries
}

/// SCHED-01's query times within 24 hours (A-CLIENT-SCHED-4H: 11).
pub fn scheduled_queries() -> u32 {
    let fixed = Contract::QUERY_OFFSETS;
    let mut last = *fixed.last().expect("offsets");
    let mut n = fixed.len() as u32;
    while last.after(Contract::QUERY_EVERY) <= Contract::QUERY_UNTIL {
        last = last.after(Contract::QUERY_EVERY);
        n += 1;
    }
    n
}

/// RETRY-03 and SCHED-01: a round of at most 5 tries, one query schedule of 24 hours, and
/// after each "not found" one more round, per event that may leave the result unknown.
pub const CLIENT_TRAFFIC_BOUNDED: Property = Property {
    name: "client-traffic-within-the-schedules",
    rules: &[Rule::RetryMaxAttempts, Rule::QuerySchedule],
    needs: CLIENT_DB,
    exercised_by: &[],
    about: "A client database sends for one business submission (its creates or confirms, and the queries of its order's Payment) at most what the contract's schedules allow per opening: 5 tries (RETRY-03), the 11 queries of SCHED-01 and two immediate ones, and after each query's \"not found\" 5 more tries (QUERY-06); an opening is the submission's first request, a timeout, a 202 or a 5xx other than 503 answered to one of its servers (UNKNOWN-02), a command or a crash. A 503 opens nothing: it says \"not accepted\" (RATE-05).",
    predicate: Predicate::Always(|f| {
        let e = f.traffic.densest.as_ref()?;
        let allowed = e.openings.max(1) * allowed_per_opening();
        (e.sent > allowed).then(|| {
            crate::witnessed::Witnessed::new(format!(
                "database {} sent {} requests for order {} (submission {}) with {} openings: the schedules allow {}",
                e.db,
                e.sent,
                e.order,
                e.seq,
                e.openings.max(1),
                allowed
            ))
            .order(&e.order)
        })
    }),
};
