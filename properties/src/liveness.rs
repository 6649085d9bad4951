//! Liveness in the form that is sound here: a bounded property of a stream whose faults
//! stop. stateright's `eventually` misses violations on cycles, so instead the judgement
//! is bounded: every business submission of the reference client must reach a status the
//! client knows (terminal, manual_review, or requires_action while the platform says so)
//! within the contract's 24-hour query window plus an hour ([`WINDOW`]).
//!
//! It reads only the stream's [`Resolution`] facts (folded from events: what the
//! merchant databases show, what reached the merchant side, the platform's Payments,
//! which servers were down) and its end ([`StreamEnd`]), so a simulated run, a recorded
//! stream (`judge`) and the sandbox are judged alike. A simulated run is healed first
//! ([`payhub_sim::driver::heal`]: no more faults, deliveries and approvals first, time
//! passing for the whole window) and judged at its end; a recorded stream whose
//! submission is still unknown less than the window after it became unknown is not
//! judged yet ([`LivenessVerdict::Incomplete`]), never a pass.
//!
//! Where the contract leaves the client no way to learn the result, the stream is not
//! judged a pass or a violation: [`judge`] reports the assumption that was reached
//! ([`gap`]): A-CLIENT-AFTER-24H (a confirming order whose query window ended) or
//! A-WEBHOOK-BLACKOUT (an order no query is due for, that missed every delivery of the
//! Payment's latest event: the servers were down, or it was lost).

use crate::evidence::{Evidence, EvidenceSet, Supply};
use crate::facts::resolution::{OrderSeen, Placement, Resolution, WebhookDelivery};
use crate::verdict::{Status, Verdict};
use crate::witnessed::{Named, Witnessed};
use crate::{Kind, World};
use payhub_model::client::{ClientParams, OrderState};
use payhub_model::event::ShownOrder;
use payhub_model::{Assumption, Contract, Millis, PaymentId, PaymentStatus, Rule};
use payhub_sim::{Choice, Trace, WorldConfig, driver};
use std::collections::BTreeMap;

/// The name the reports use.
pub const NAME: &str = "eventually:submissions-resolve-within-24h";

/// The rules it checks: the query schedule and webhooks bring every unknown result to a
/// known status (terminal or manual_review) within the 24-hour window.
pub const RULES: &[Rule] = &[
    Rule::QuerySchedule,
    Rule::WebhookPrimary,
    Rule::LatestVersionWins,
    Rule::ManualReview,
    Rule::RetryMaxAttempts,
];

/// How long the healed world is given: the 24-hour query window plus an hour.
pub const SPAN: Millis = Millis::hours(25);

/// How long a submission may stay unknown: the 24-hour query window (SCHED-01) plus the
/// hour of slack the healed world is given ([`SPAN`]).
pub const WINDOW: Millis = SPAN;

/// What it needs of a stream: what the merchant databases show (its orders), the
/// platform's store and webhooks (the latest version of each Payment), the client's
/// sends (which database a node uses) and the wire (what reached the merchant side).
pub const NEEDS: EvidenceSet = EvidenceSet::of(&[
    Evidence::Wire,
    Evidence::Platform,
    Evidence::ClientProcess,
    Evidence::MerchantDb,
]);

/// Most choices of the healing phase.
pub const HEAL_STEPS: usize = 20_000;

/// Where a stream ends, as its source says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamEnd {
    /// The time of its last event.
    pub at: Millis,
    /// When the source stopped every fault and let the world settle for the whole
    /// [`WINDOW`] (the simulated heal): every submission is judged at the end, whenever
    /// it became unknown. `None` for a recorded stream.
    pub healed_from: Option<Millis>,
}

impl StreamEnd {
    /// The end of a recorded stream: its last event.
    pub fn recorded(facts: &Resolution) -> StreamEnd {
        StreamEnd {
            at: facts.end,
            healed_from: None,
        }
    }
}

/// The resolution facts of a simulated world's stream: its client nodes placed as the
/// configuration says, the platform's re-deliveries as configured.
pub fn placed(config: &WorldConfig) -> Resolution {
    let nodes: BTreeMap<u8, Placement> = config
        .clients
        .iter()
        .map(|c| {
            let owner = config.key_owner(c.api_key);
            (c.node, Placement { db: c.db, owner })
        })
        .collect();
    Resolution::placed(nodes, config.params.webhook_redeliveries_max)
}

/// An order the client does not know the result of at the stream's end, with why: not
/// settled, not pending confirmation (manual_review), and not awaiting the payer while
/// the platform's Payment (`platform`: its status and version) still requires action
/// (RES-05).
fn not_known(
    order_no: &str,
    shown: &ShownOrder,
    platform: impl Fn(PaymentId) -> Option<(PaymentStatus, u32)>,
    after: &str,
) -> Option<String> {
    let state = shown.state;
    if state.is_settled() || state == OrderState::PendingConfirmation {
        return None;
    }
    if state == OrderState::AwaitingPayer {
        // Known only while it is true: the payer must still authenticate (RES-05).
        return match shown.payment_id.and_then(platform) {
            Some((PaymentStatus::RequiresAction, _)) => None,
            Some((status, version)) => Some(format!(
                "order {} still awaits the payer's authentication (requires_action, version {}) \
                 {after}, but its Payment is {} (version {})",
                order_no,
                shown.version,
                status.as_str(),
                version
            )),
            None => Some(format!(
                "order {} awaits the payer's authentication (requires_action) without a Payment the platform has",
                order_no
            )),
        };
    }
    Some(format!(
        // In the contract's words (WORDING-02's "confirming"), never the model's names.
        "order {} is still {} {after}",
        order_no, state
    ))
}

/// How a healed run says how long the faults had stopped.
const HEALED: &str = "after faults stopped for 25 h";

/// [`not_known`] of an order of the stream that ended at `end`.
fn not_known_in(
    facts: &Resolution,
    order_no: &str,
    order: &OrderSeen,
    end: StreamEnd,
) -> Option<String> {
    let platform =
        |p: PaymentId| (facts.payments.get(&p)).map(|p| (p.stored.status, p.stored.version));
    match end.healed_from {
        Some(_) => not_known(order_no, &order.shown, platform, HEALED),
        None => {
            let after = format!(
                "from {} to the stream's end at {}",
                unknown_since(facts, order),
                end.at
            );
            not_known(order_no, &order.shown, platform, &after)
        }
    }
}

/// Since when `order` has been unknown without a break: the start of its last run of
/// states that are never known (submitting, confirming), or, awaiting the payer, since
/// the platform's Payment left requires_action.
fn unknown_since(facts: &Resolution, order: &OrderSeen) -> Millis {
    let never_known = |s: &OrderState| {
        !s.is_settled() && *s != OrderState::PendingConfirmation && *s != OrderState::AwaitingPayer
    };
    if order.shown.state == OrderState::AwaitingPayer {
        let entered = order.states.last().map_or(order.since, |(at, _)| *at);
        let left = order
            .shown
            .payment_id
            .and_then(|p| facts.payments.get(&p))
            .map_or(entered, |p| p.status_since);
        return entered.max(left);
    }
    order
        .states
        .iter()
        .rev()
        .take_while(|(_, s)| never_known(s))
        .last()
        .map_or(order.since, |(at, _)| *at)
}

/// Whether order `order_no` of database `db`, behind the platform's latest version of its
/// Payment, is exactly a situation the contract leaves open, and which:
///
/// - no query of it is due (SCHED-01: the query window is over, or the order is in a
///   status queries stop at), and the platform sent an event of its latest version that
///   no server of the database received (WEBHOOK-01: webhooks are the primary channel);
/// - if it is confirming, that is A-CLIENT-AFTER-24H;
/// - otherwise A-WEBHOOK-BLACKOUT, which also needs every delivery of that event (the
///   first and every re-delivery, A-WEBHOOK-REDELIVERY) to have been made and missed:
///   it found the server it was sent to down, or was lost in the network.
///
/// `Err` says which part does not hold.
pub fn gap(facts: &Resolution, end: Millis, db: u8, order_no: &str) -> Result<Assumption, String> {
    let seen = facts
        .orders
        .get(&(db, order_no.into()))
        .ok_or_else(|| format!("db {db} has no order {order_no}"))?;
    let order = &seen.shown;
    let Some(payment) = order.payment_id else {
        return window_ran_without_payment(facts, db, seen);
    };
    let latest = facts
        .payments
        .get(&payment)
        .ok_or_else(|| format!("the platform has no {payment}"))?;
    let version = latest.stored.version;
    if order.version >= version {
        return Err(format!(
            "the order holds version {} of {payment}, the platform's latest",
            order.version
        ));
    }
    let state = order.state;
    if !state.is_settled() {
        if !facts.nodes.values().any(|p| p.db == db) {
            return Err("no client server of the order's database".into());
        }
        let anchor = order
            .confirming_since
            .ok_or("the order has no query window (confirming_since)")?;
        if let Some(until) = order.queries_until.filter(|u| *u > end) {
            return Err(format!(
                "its query window (since {anchor}) is not over: queries are due until {until}"
            ));
        }
        if state == OrderState::Confirming {
            window_ran(facts, db, order.last_query_at, anchor)?;
        }
    }
    if !facts.emitted.contains(&(payment, version)) {
        return Err(format!(
            "the platform sent no webhook event of version {version} of {payment}"
        ));
    }
    let of_db = |node: u8| facts.db_of(node) == Some(db);
    if facts
        .received
        .iter()
        .any(|r| r.payment == payment && r.version >= version && of_db(r.node))
    {
        return Err(format!(
            "a server of db {db} received version {version} of {payment}"
        ));
    }
    if state == OrderState::Confirming {
        return Ok(Assumption::ClientAfterWindow);
    }
    let deliveries: Vec<&WebhookDelivery> = facts
        .webhooks
        .iter()
        .filter(|d| (d.payment, d.version) == (payment, version) && of_db(d.node))
        .collect();
    if let Some(d) = deliveries.iter().find(|d| !d.missed()) {
        return Err(format!(
            "delivery {} of version {version} of {payment} reached a running server of db {db}",
            d.delivery
        ));
    }
    let last = facts.redeliveries;
    if let Some(missing) = (0..=last).find(|n| !deliveries.iter().any(|d| d.delivery == *n)) {
        return Err(format!(
            "delivery {missing} of version {version} of {payment} never reached db {db} \
             (not yet made)"
        ));
    }
    Ok(Assumption::WebhookBlackout)
}

/// A-CLIENT-AFTER-24H's own condition, read from the contract's numbers and not the
/// client's (whose schedule may be the bug): the order's query window ran its 24 hours,
/// every query of the contract's schedule (SCHED-01, A-CLIENT-SCHED-4H) made while a
/// server of its database was running. Judged on the order's last query: it is no
/// earlier than the latest scheduled query a running server owed (less the 10-second
/// spacing a deferral may add, SCHED-02). A server down through the rest of the window
/// (the assumption's own case) owed nothing after it went down.
pub fn window_ran(
    seen: &Resolution,
    db: u8,
    last_query_at: Option<Millis>,
    anchor: Millis,
) -> Result<(), String> {
    let owed = contract_query_times(anchor)
        .filter(|t| seen.db_up_through(db, *t))
        .last();
    let Some(owed) = owed else {
        return Ok(());
    };
    let earliest = Millis(owed.0.saturating_sub(Contract::QUERY_SPACING_MIN.0));
    match last_query_at {
        Some(last) if last >= earliest => Ok(()),
        last => Err(format!(
            "its query window (since {anchor}) did not run its 24 hours: a server of db {db} \
             was running at {owed}, a query of the contract's schedule, but the order's last \
             query was {}",
            last.map_or_else(|| "none".to_owned(), |t| t.to_string())
        )),
    }
}

/// SCHED-01 from the contract's numbers: every query time of a window opened at `anchor`
/// (10 s … 1 h, then every 4 hours while within 24 hours).
fn contract_query_times(anchor: Millis) -> impl Iterator<Item = Millis> {
    let (fixed, last) = (
        Contract::QUERY_OFFSETS,
        crate::cadence::last_scheduled_query(),
    );
    let every = |t: &Millis| Some(t.after(Contract::QUERY_EVERY));
    let steps = std::iter::successors(fixed.last().and_then(every), every);
    let steps = steps.take_while(move |t| *t <= last);
    fixed
        .iter()
        .copied()
        .chain(steps)
        .map(move |o| anchor.after(o))
}

/// A-CLIENT-AFTER-24H for a confirming order that names no Payment (every answer was
/// lost or refused, say 429 all day), only if the gap's own conditions hold: its query
/// window really ran its 24 hours (its last query came the contract's last scheduled
/// offset after the window began, SCHED-01) and the platform holds no Payment of its
/// order number, so no webhook will ever tell (QUERY-05: none was created).
fn window_ran_without_payment(
    facts: &Resolution,
    db: u8,
    seen: &OrderSeen,
) -> Result<Assumption, String> {
    let order = &seen.shown;
    if order.state != OrderState::Confirming {
        return Err("the order names no Payment".into());
    }
    let anchor = order
        .confirming_since
        .ok_or("the order names no Payment and has no query window")?;
    let due = anchor.after(crate::cadence::last_scheduled_query());
    match order.last_query_at {
        Some(last) if last >= due => {}
        last => {
            return Err(format!(
                "the order names no Payment and its query window (since {anchor}) did not run                  its 24 hours: last query {}, the schedule's last is due at {due}",
                last.map_or_else(|| "none".to_owned(), |t| t.to_string())
            ));
        }
    }
    let number = &order.merchant_order_no;
    let owners: Vec<_> = facts
        .nodes
        .values()
        .filter(|p| p.db == db)
        .map(|p| p.owner)
        .collect();
    let created = facts.payments.iter().find(|(_, p)| {
        p.stored.merchant_order_no == *number
            && owners.contains(&Some((p.stored.merchant, p.stored.environment)))
    });
    match created {
        Some((id, _)) => Err(format!(
            "the order names no Payment, but the platform holds {id} for {number}"
        )),
        None => Ok(Assumption::ClientAfterWindow),
    }
}

/// The liveness verdict of a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LivenessVerdict {
    /// Every submission is in a status the client knows.
    Resolved,
    /// Some are not, each in a situation the contract leaves open ([`gap`]): the
    /// assumption was reached; neither a pass nor a violation.
    Gap {
        assumption: Assumption,
        detail: String,
    },
    /// A submission the client does not know, outside every documented gap: the words,
    /// and the order it names.
    Unresolved(Witnessed),
    /// A submission still unknown when the stream ended, less than [`WINDOW`] after it
    /// became unknown (or a stream that shows no merchant database): not judged yet,
    /// neither a pass nor a violation.
    Incomplete(String),
}

/// SCHED-01 over a recorded stream: the first order not final in its client's database
/// (its Payment processing or requires_action, manual_review among them) whose query
/// schedule, counted from the order's creation, runs past the stream's end.
pub fn schedule_open(facts: &Resolution) -> Option<String> {
    let until = |order: &OrderSeen| order.since.after(crate::cadence::last_scheduled_query());
    facts.orders.iter().find_map(|((db, order_no), order)| {
        (!order.shown.state.is_settled() && facts.end < until(order)).then(|| {
            format!(
                "order {order_no} of db {db} is not final in its database and the stream ends at {}, before its query schedule's last query at {}",
                facts.end,
                until(order)
            )
        })
    })
}

/// Judges a stream by its resolution facts and where it ended. A violation stands
/// whatever else the stream lacks; otherwise a submission not yet judgeable makes the
/// stream incomplete, before any gap reached.
pub fn judge(facts: &Resolution, end: StreamEnd) -> LivenessVerdict {
    let mut reached: Option<(Assumption, String)> = None;
    let mut pending: Option<String> = None;
    for ((db, order_no), order) in &facts.orders {
        let Some(why) = not_known_in(facts, order_no, order, end) else {
            continue;
        };
        if end.healed_from.is_none() {
            let since = unknown_since(facts, order);
            if end.at < since.after(WINDOW) {
                pending.get_or_insert_with(|| {
                    format!(
                        "order {order_no} of db {db} is unknown since {since} and the stream \
                         ends at {}, before its {WINDOW} window closes",
                        end.at
                    )
                });
                continue;
            }
        }
        match gap(facts, end.at, *db, order_no) {
            Ok(assumption) => {
                reached.get_or_insert((assumption, why));
            }
            Err(not) => {
                return LivenessVerdict::Unresolved(Witnessed {
                    detail: format!("{why} (not a documented gap: {not})"),
                    named: Named {
                        orders: vec![order_no.to_string()],
                        ..Named::default()
                    },
                });
            }
        }
    }
    if !facts.saw_orders {
        return LivenessVerdict::Incomplete(
            "the stream shows no merchant database's orders".into(),
        );
    }
    match (pending, reached) {
        (Some(detail), _) => LivenessVerdict::Incomplete(detail),
        (None, None) => LivenessVerdict::Resolved,
        (None, Some((assumption, detail))) => LivenessVerdict::Gap { assumption, detail },
    }
}

/// The resolution facts of a recorded stream (`judge`, `check-log`): each node's
/// database learned from the submissions it sends, the platform re-delivering as the
/// harness's platform does (A-WEBHOOK-REDELIVERY).
pub fn learning() -> Resolution {
    Resolution::learning(payhub_model::PlatformParams::default().webhook_redeliveries_max)
}

/// The liveness verdict of a recorded stream that supplied `supply`, beside the
/// registry's: a gap reached holds with the assumption named (as `replay` reports it); a
/// stream that ends before a submission's window closes cannot be judged yet. A stream
/// that lacks any of [`NEEDS`] cannot be judged at all, even with a submission unknown
/// past its window: what it lacks (the platform's latest version, the deliveries) is
/// what tells a violation from a documented gap.
pub fn stream_verdict(facts: &Resolution, supply: &Supply) -> Verdict {
    let missing = supply.missing(NEEDS);
    let (status, detail, named) = match judge(facts, StreamEnd::recorded(facts)) {
        _ if !missing.is_empty() => (Status::CannotJudge, None, None),
        LivenessVerdict::Unresolved(w) => (Status::Violated, Some(w.detail), Some(w.named)),
        LivenessVerdict::Resolved => (Status::Holds, None, None),
        LivenessVerdict::Gap { assumption, detail } => (
            Status::Holds,
            Some(format!(
                "contract finding {} reached, neither a pass nor a violation: {detail}",
                assumption.id()
            )),
            None,
        ),
        LivenessVerdict::Incomplete(why) => (
            Status::CannotJudge,
            Some(format!("not judged yet: {why}")),
            None,
        ),
    };
    Verdict {
        name: NAME,
        kind: Kind::Always,
        rules: RULES.iter().map(|r| r.id()).collect(),
        status,
        detail,
        vacuous: false,
        missing,
        side: None,
        witness: None,
        named,
    }
}

/// Replays `tape` from the start, then heals, recording every event, and folds them into
/// the resolution facts. `Err` names a choice that does not apply.
pub fn replay_and_heal(
    config: &WorldConfig,
    tape: &[Choice],
) -> Result<(World, Resolution, StreamEnd), String> {
    let mut trace = Trace::new();
    let (mut world, _) = driver::replay(config, tape, &mut |_: &World| None, Some(&mut trace))
        .map_err(|(i, e)| format!("step {}: '{}': {e}", i + 1, tape[i]))?;
    let healed_from = world.now;
    driver::heal_recorded(config, &mut world, SPAN, HEAL_STEPS, Some(&mut trace));
    let facts = placed(config).fold(&trace.stream);
    let end = StreamEnd {
        at: world.now.max(facts.end),
        healed_from: Some(healed_from),
    };
    Ok((world, facts, end))
}

/// Heals `world` and says whether some submission its databases hold is not in a status
/// the client knows. The shortcut of [`verdict`], read from the healed world's own
/// databases and store (the ground truth the events mirror): a world where every
/// submission is known needs no replay.
pub fn check(config: &WorldConfig, world: &mut World) -> Option<String> {
    driver::heal(config, world, SPAN, HEAL_STEPS);
    unresolved(world)
}

/// After healing: `Some(order)` naming a submission the client still does not know,
/// read from the world's databases and store (the shortcut of [`verdict`]; the
/// judgement is [`judge`]'s, from events).
pub fn unresolved(world: &World) -> Option<String> {
    let params = ClientParams::default();
    world
        .dbs
        .iter()
        .flat_map(|db| db.orders())
        .find_map(|order| {
            not_known(
                &order.order_no,
                &ShownOrder::of(order, &params),
                |p| {
                    world
                        .platform
                        .payment_view(p)
                        .map(|v| (v.status, v.version))
                },
                HEALED,
            )
        })
}

/// The verdict of the run `tape` describes: healed, then judged from its events
/// ([`judge`]). A run whose healed world has every submission known needs no replay
/// ([`check`]); otherwise the tape is replayed and healed again with its events
/// recorded.
pub fn verdict(config: &WorldConfig, mut world: World, tape: &[Choice]) -> LivenessVerdict {
    if check(config, &mut world).is_none() {
        return LivenessVerdict::Resolved;
    }
    match replay_and_heal(config, tape) {
        Ok((_, facts, end)) => judge(&facts, end),
        Err(e) => LivenessVerdict::Unresolved(Witnessed {
            detail: format!("the run's tape does not replay: {e}"),
            named: Named::default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::window_ran;
    use crate::facts::resolution::{DbUptime, Resolution};
    use payhub_model::Millis;

    fn down_then_up(down: Millis, up: Option<Millis>) -> Resolution {
        let mut seen = Resolution::default();
        seen.uptime.push(DbUptime {
            at: down,
            db: 0,
            up: false,
        });
        if let Some(at) = up {
            seen.uptime.push(DbUptime {
                at,
                db: 0,
                up: true,
            });
        }
        seen
    }

    /// A-CLIENT-AFTER-24H only if its window ran: a client that stopped querying after
    /// 1 h while its servers ran (a cut schedule, the client's own bug) is no gap; one
    /// whose servers were down through the rest of the window (the assumption's case) is.
    #[test]
    fn the_window_ran_its_24_hours_or_its_servers_were_down() {
        let anchor = Millis::secs(5);
        let running = Resolution::default();
        let at = |t: Millis| Some(anchor.after(t));
        assert!(window_ran(&running, 0, at(Millis::hours(21)), anchor).is_ok());
        // A query deferred by the 10-second spacing is still the 21-hour one.
        let deferred = Millis::hours(21).0 - 9_000;
        assert!(window_ran(&running, 0, at(Millis(deferred)), anchor).is_ok());
        for cut in [at(Millis::hours(1)), at(Millis::hours(17)), None] {
            let why = window_ran(&running, 0, cut, anchor).expect_err("the window did not run");
            assert!(why.contains("did not run its 24 hours"), "{why}");
        }
        // Down from 36 s for good: it owed the 10 s and 30 s queries only.
        let down = down_then_up(anchor.after(Millis::secs(36)), None);
        assert!(window_ran(&down, 0, at(Millis::secs(30)), anchor).is_ok());
        assert!(window_ran(&down, 0, at(Millis::secs(10)), anchor).is_err());
        // Down from the start (F3): it owed nothing.
        let never = down_then_up(Millis::ZERO, None);
        assert!(window_ran(&never, 0, None, anchor).is_ok());
        // Back up at 9 h: it owed 13 h, 17 h and 21 h.
        let back = down_then_up(Millis::ZERO, Some(anchor.after(Millis::hours(9))));
        assert!(window_ran(&back, 0, None, anchor).is_err());
        assert!(window_ran(&back, 0, at(Millis::hours(21)), anchor).is_ok());
        // Another database's downtime is not this one's.
        assert!(window_ran(&never, 1, None, anchor).is_err());
        // Restarted at the very instant of the last query: that query was not owed, the
        // ones before it found every server down.
        let at_21 = down_then_up(Millis::ZERO, Some(anchor.after(Millis::hours(21))));
        assert!(window_ran(&at_21, 0, None, anchor).is_ok());
    }
}
