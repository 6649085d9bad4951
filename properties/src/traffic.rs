//! Traffic: a client's requests per business submission stay within what the contract's
//! schedules allow (RETRY-03, SCHED-01, QUERY-06), counted in
//! `sim/src/facts/traffic.rs`.

use crate::property::{Predicate, Property};
use payhub_model::Rule;

/// RETRY-03 and SCHED-01: a round of at most 5 tries, one query schedule of 24 hours, and
/// after each "not found" one more round, per event that may leave the result unknown.
pub const CLIENT_TRAFFIC_BOUNDED: Property = Property {
    name: "client-traffic-within-the-schedules",
    rules: &[Rule::RetryMaxAttempts, Rule::QuerySchedule],
    about: "A client database sends for one business submission (its creates or confirms, and the queries of its order's Payment) at most what the contract's schedules allow per opening: 5 tries (RETRY-03), the 11 queries of SCHED-01 and two immediate ones, and after each query's \"not found\" 5 more tries (QUERY-06); an opening is the submission's first request, a timeout, a 202 or a 5xx other than 503 answered to one of its servers (UNKNOWN-02), a command or a crash. A 503 opens nothing: it says \"not accepted\" (RATE-05).",
    predicate: Predicate::Always(|f| {
        f.traffic.excess.as_ref().map(|e| {
            format!(
                "database {} sent {} requests for order {} (submission {}) by {}, with {} openings: the schedules allow {}",
                e.db,
                e.sent,
                e.order,
                e.seq,
                e.at,
                e.openings.max(1),
                e.allowed
            )
        })
    }),
};
