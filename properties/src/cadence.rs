//! Cadence properties: when the client retries, how long it waits, how long it queries,
//! and when the platform verifies an unknown charge with the upstream. The facts
//! (`properties/src/facts/cadence.rs`) record the extremes; every figure they are held to is
//! the contract's ([`Contract`]), compared here. Retry-After (RATE-03) and the 10-second
//! spacing (SCHED-02) are `client-honours-retry-after` and `client-spaces-queries`.

use crate::Facts;
use crate::evidence::{CLIENT, CLIENT_PLATFORM, PLATFORM, PLATFORM_LEDGER};
use crate::exercise::{CHARGES, Exercise};
use crate::facts::cadence::{Waited, sync_wait_window};
use crate::facts::resolution::Resolution;
use crate::property::{Predicate, Property};
use crate::witnessed::Witnessed;
use payhub_model::{Contract, Millis, ResolutionStatus, Rule};

/// SCHED-01 read from the contract's numbers: the last query time of the schedule, as
/// an offset from when the result became unknown (10 s … 1 h, then every 4 hours while
/// within 24 hours: 21 h, assumption A-CLIENT-SCHED-4H).
pub fn last_scheduled_query() -> Millis {
    let mut last = *Contract::QUERY_OFFSETS.last().expect("offsets");
    while last.after(Contract::QUERY_EVERY) <= Contract::QUERY_UNTIL {
        last = last.after(Contract::QUERY_EVERY);
    }
    last
}

/// RETRY-02 read from the contract's numbers: the backoff after try `failed_try` fails,
/// `min(30 s, 1 s × 2^(n-1))`, without jitter.
pub fn contract_backoff(failed_try: u32) -> Millis {
    let exponent = failed_try.saturating_sub(1).min(32);
    let wait = Contract::BACKOFF_BASE.0.saturating_mul(1u64 << exponent);
    Millis(wait.min(Contract::BACKOFF_MAX.0))
}

/// TIMEOUT-01's minimum for a kind of request.
fn timeout_min(waited: Waited) -> Millis {
    match waited {
        Waited::Query => Contract::QUERY_TIMEOUT_MIN,
        Waited::CreateOrConfirm => Contract::POST_TIMEOUT_MIN,
    }
}

/// RETRY-02: the backoff and jitter of the contract's reference code.
pub const CLIENT_BACKOFF: Property = Property {
    name: "client-backs-off-as-the-reference-code",
    rules: &[Rule::RetryBackoff],
    about: "Every retry a client schedules comes min(30 s, 1 s × 2^(n-1)) plus a jitter below 250 ms after try n failed (a 429 with Retry-After excepted: RATE-03).",
    needs: CLIENT,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        f.cadence.retry_waits.iter().find_map(|(try_no, waits)| {
            let least = contract_backoff(try_no.saturating_sub(1));
            let below = least.after(Contract::JITTER_BELOW);
            let off = if waits.shortest.delay < least {
                &waits.shortest
            } else if waits.longest.delay >= below {
                &waits.longest
            } else {
                return None;
            };
            Some(
                Witnessed::new(format!(
                    "merchant-{} scheduled try {try_no} of {} {} after the try before failed; the reference code waits from {least} to below {below}",
                    off.node, off.subject, off.delay
                ))
                .subject(&off.subject),
            )
        })
    }),
};

/// TIMEOUT-01: at least 20 s for create and confirm, at least 10 s for queries.
pub const CLIENT_TIMEOUTS: Property = Property {
    name: "client-waits-the-contract-timeouts",
    rules: &[Rule::ClientTimeouts],
    about: "A client waits at least 20 s for a create or confirm and at least 10 s for a query before it gives up on the answer.",
    needs: CLIENT,
    exercised_by: &[Exercise::Create, Exercise::Confirm, Exercise::Query],
    predicate: Predicate::Levels {
        facts: |f| {
            f.cadence
            .shortest_timeout
            .iter()
            .find(|((_, waited), timeout)| **timeout < timeout_min(*waited))
            .map(|((node, waited), timeout)| {
                let what = match waited {
                    Waited::Query => "a query",
                    Waited::CreateOrConfirm => "a create or confirm",
                };
                Witnessed::new(format!(
                    "merchant-{node} sent {what} with a timeout of {timeout}, below the contract's {}",
                    timeout_min(*waited)
                ))
            })
        },
        wire: crate::wire::CLIENT_WAITS_THE_CONTRACT_TIMEOUTS,
    },
};

/// SCHED-01: the schedule runs to 24 hours (10 s … 1 h, then every 4 hours).
pub const CLIENT_QUERIES_24H: Property = Property {
    name: "client-queries-until-24-hours",
    rules: &[Rule::QuerySchedule],
    about: "A client ends the query schedule of an unknown result only after its last query within 24 hours (10 s, 30 s, 2 min, 5 min, 15 min, 1 h, then every 4 h), counted from no earlier than the order's creation.",
    needs: CLIENT_PLATFORM,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        let c = f.cadence.earliest_schedule_end.as_ref()?;
        (c.ran() < last_scheduled_query()).then(|| {
            Witnessed::new(format!(
                "merchant-{} ended the query schedule of {} at {}; the order was created at {}, so the schedule runs until {} at least",
                c.node,
                c.order,
                c.at,
                c.since,
                c.since.after(last_scheduled_query())
            ))
            .order(&c.order)
        })
    }),
};

/// SCHED-01: queries stop at a final status.
pub const CLIENT_STOPS_AT_FINAL: Property = Property {
    name: "client-stops-querying-at-a-final-status",
    rules: &[Rule::QuerySchedule],
    about: "A client never queries a Payment its database already holds as succeeded, failed, canceled or expired (a failed one only until a client sends a confirm of it: a card retry reopens it).",
    needs: CLIENT_PLATFORM,
    exercised_by: &[Exercise::Query],
    predicate: Predicate::Levels {
        facts: |f| {
            f.cadence.query_after_final.as_ref().map(|q| {
                Witnessed::new(format!(
                    "merchant-{} queried {} at {} though its database holds order {} as final",
                    q.node, q.payment, q.at, q.order
                ))
                .payment(q.payment)
                .order(&q.order)
            })
        },
        wire: crate::wire::CLIENT_STOPS_QUERYING_AT_A_FINAL_STATUS,
    },
};

/// What a recorded stream's end leaves of a windowed property that held over it.
pub enum AtEnd {
    /// A window still open where the stream ends: "holds" would claim what the stream
    /// did not show, so the verdict is not judged yet, with the reason.
    Open(String),
    /// A window that closed before the end without what the rule asks: a violation.
    Overdue(Witnessed),
}

/// SCHED-01, RES-01 and RES-03 over a recorded stream (the world's own runs heal for the
/// whole window): a client's query schedule of an order not final in its database that
/// the stream ends inside (open); an unfinished charge whose Payment is not in
/// manual_review, whose 24 hours since the charge or the query before run past the end
/// (open) or ran out before it with no query (overdue); under manual_review, only the
/// overdue (its queries never end, so none is open).
pub fn at_end(p: &Property, facts: &Facts, resolution: &Resolution) -> Option<AtEnd> {
    if p.name == CLIENT_QUERIES_24H.name {
        return crate::liveness::schedule_open(resolution).map(AtEnd::Open);
    }
    let review = p.name == PLATFORM_REQUERIES_MANUAL_REVIEW.name;
    if !review && p.name != PLATFORM_VERIFIES.name {
        return None;
    }
    let (end, attempts, limit) = (
        resolution.end,
        &facts.attempts,
        Contract::MANUAL_REVIEW_REQUERY,
    );
    let in_review = |a| {
        (attempts.payment_of.get(a))
            .and_then(|p| attempts.payments.get(p))
            .is_some_and(|p| p.resolution == ResolutionStatus::ManualReview)
    };
    let mut open = None;
    for (id, a) in attempts.attempts.iter() {
        if !a.status.is_unfinished() || in_review(id) != review {
            continue;
        }
        let queried = facts.cadence.history.queried.get(id).copied();
        let last = queried.unwrap_or(a.sent_at);
        let due = last.after(limit);
        let words = match review {
            true if end > due => format!(
                "{id} stayed in manual_review from its query at {last} to the stream's end at {end} with no query upstream: under manual_review the platform queries at least once in {limit}"
            ),
            false if end >= due => format!(
                "{id} was unfinished from {last} to the stream's end at {end} with no query upstream: the automatic window verifies faster than once in {limit}"
            ),
            true => continue,
            false => {
                open.get_or_insert_with(|| format!("{id} is unfinished since {last} and the stream ends at {end}, before its next verification is due at {due}"));
                continue;
            }
        };
        return Some(AtEnd::Overdue(Witnessed::new(words).attempt(*id)));
    }
    open.map(AtEnd::Open)
}

/// RES-01, RES-03: the automatic window verifies faster than the manual_review cadence.
pub const PLATFORM_VERIFIES: Property = Property {
    name: "platform-verifies-unknown-results-within-its-window",
    rules: &[Rule::NeedsQuery, Rule::ManualReview],
    about: "The platform queries the upstream about an unfinished charge less than 24 hours (the manual_review cadence) after the charge, and less than 24 hours after each automatic query before.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        // Anywhere but under manual_review 24 hours is already the manual_review
        // cadence, too slow for the automatic window.
        let v = f.cadence.slowest_verification.as_ref()?;
        let limit = Contract::MANUAL_REVIEW_REQUERY;
        (v.gap >= limit).then(|| {
            Witnessed::new(format!(
                "the platform verified {} at {}, {} after {}: the automatic window verifies faster than once in {limit}",
                v.attempt, v.at, v.gap, v.since
            ))
            .attempt(v.attempt)
        })
    }),
};

/// RES-03: "the platform still queries the upstream once every 24 hours".
pub const PLATFORM_REQUERIES_MANUAL_REVIEW: Property = Property {
    name: "platform-requeries-manual-review-every-24-hours",
    rules: &[Rule::ManualReview],
    about: "Under manual_review the platform queries the upstream about the charge at most 24 hours after its previous query.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        // Under manual_review a query every 24 hours is on time.
        let v = f.cadence.slowest_requery.as_ref()?;
        let limit = Contract::MANUAL_REVIEW_REQUERY;
        (v.gap > limit).then(|| {
            Witnessed::new(format!(
                "the platform re-queried {} under manual_review at {}, {} after the query at {} (every {limit} at most)",
                v.attempt, v.at, v.gap, v.since
            ))
            .attempt(v.attempt)
        })
    }),
};

/// RES-03: manual_review means "the automatic query window has been exceeded".
pub const PLATFORM_MANUAL_REVIEW_AFTER_WINDOW: Property = Property {
    name: "platform-goes-to-manual-review-after-its-automatic-queries",
    rules: &[Rule::ManualReview, Rule::NeedsQuery],
    about: "A Payment goes to manual_review only after the platform queried the upstream about its latest attempt on its own (the automatic window ran).",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        f.cadence.early_manual_review.as_ref().map(|m| {
            let attempt = m
                .attempt
                .map_or_else(|| "no attempt".to_owned(), |a| a.to_string());
            let found = Witnessed::new(format!(
                "{} went to manual_review at {} before the platform queried {attempt} upstream",
                m.payment, m.at
            ))
            .payment(m.payment);
            match m.attempt {
                Some(a) => found.attempt(a),
                None => found,
            }
        })
    }),
};

/// UPSTREAM-01: "the platform waits synchronously for the upstream for about 15 seconds,
/// and returns 202 beyond that".
pub const PLATFORM_202_AFTER_SYNC_WAIT: Property = Property {
    name: "platform-answers-202-after-about-15-seconds",
    rules: &[Rule::SyncWait],
    about: "A create or confirm the platform answers 202 because the upstream did not answer within its synchronous wait is answered about 15 s after its step sent the charge (within 3 s of it, A-SYNC-WAIT-ABOUT): never at once, never at or past the client's 20 s (TIMEOUT-01).",
    needs: PLATFORM,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        let off = f.cadence.sync_wait_off.as_ref()?;
        let (least, most) = sync_wait_window();
        Some(
            Witnessed::new(format!(
                "the platform answered {} 202 at {}, {} after its step sent the charge; the synchronous wait is about {} ({least} to {most})",
                off.id,
                off.at,
                off.waited,
                Contract::SYNC_WAIT
            ))
            .request(off.id),
        )
    }),
};
