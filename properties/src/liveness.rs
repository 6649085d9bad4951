//! Liveness in the form that is sound here: a bounded property of the world after faults
//! stop. stateright's `eventually` misses violations on cycles, so instead every run is
//! healed ([`payhub_sim::driver::heal`]: no more faults, deliveries and approvals first,
//! time passing) for the contract's 24-hour window, and then every business submission of
//! the reference client must be in a status the client knows.
//!
//! Where the contract leaves the client no way to learn the result, the run is not
//! judged a pass or a violation: [`judge`] reports the assumption that was reached
//! ([`gap`]): A-CLIENT-AFTER-24H (a confirming order whose query window ended) or
//! A-WEBHOOK-BLACKOUT (an order no query is due for, that missed every delivery of the
//! Payment's latest event: the servers were down, or it was lost). Telling them
//! apart needs what reached the merchant side during the run ([`Deliveries`]), which the
//! world does not keep: [`replay_and_heal`] replays a run's tape and observes it.

use payhub_model::client::{OrderRecord, OrderState, schedule};
use payhub_model::{Assumption, Contract, Millis, PaymentId, PaymentStatus, Rule, WebhookObject};
use payhub_sim::driver::{self, Observer};
use payhub_sim::{Choice, Payload, World, WorldConfig};
use std::collections::BTreeSet;

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

/// Most choices of the healing phase.
pub const HEAL_STEPS: usize = 20_000;

/// A Payment version a response or webhook brought to a running client server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub node: u8,
    pub payment: PaymentId,
    pub version: u32,
}

/// One delivery of a Payment webhook event to a client node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WebhookDelivery {
    pub node: u8,
    pub payment: PaymentId,
    pub version: u32,
    /// 0 for the first delivery, then 1, 2, … (A-WEBHOOK-REDELIVERY).
    pub delivery: u8,
    /// Whether some server sharing the node's database was running (it hears nothing when
    /// the node is down).
    pub db_up: bool,
    /// Whether the node it was sent to was running (the world routes an event to a
    /// running server of the merchant when it is sent; that server may crash before it
    /// arrives).
    pub node_up: bool,
    /// Lost in the network (a `drop`): it never reached the node.
    pub lost: bool,
}

impl WebhookDelivery {
    /// Whether the merchant missed it: lost, or the server it was sent to was down.
    pub fn missed(&self) -> bool {
        self.lost || !self.node_up
    }
}

/// What a run brought to the merchant side, observed around each choice
/// ([`Observer`]).
#[derive(Clone, Debug, Default)]
pub struct Deliveries {
    /// Every Payment version handed to a running client server (in an answer it was
    /// waiting for, or in a webhook), in order.
    pub received: Vec<Received>,
    /// Every delivery of a Payment webhook to a client node, in order.
    pub webhooks: Vec<WebhookDelivery>,
    /// Every (Payment, version) the platform sent a webhook event of (A-VERSION: every
    /// change of a Payment emits one).
    pub emitted: BTreeSet<(PaymentId, u32)>,
    /// When each client database went down (no server of it running) or up again, in
    /// order; a database with no entry was up from the start.
    pub uptime: Vec<DbUptime>,
}

/// From `at`, database `db` has a server running (`up`) or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DbUptime {
    pub at: Millis,
    pub db: u8,
    pub up: bool,
}

impl Deliveries {
    /// Whether database `db` had a server running all through instant `t`: up before it
    /// and not going down or coming up at it (a server restarted at `t` skips a query
    /// due at `t`; one crashing at `t` may not have made it).
    pub fn db_up_through(&self, db: u8, t: Millis) -> bool {
        let mut of_db = self.uptime.iter().rev().filter(|u| u.db == db);
        if of_db.clone().any(|u| u.at == t) {
            return false;
        }
        of_db.find(|u| u.at < t).is_none_or(|u| u.up)
    }

    fn note_uptime(&mut self, config: &WorldConfig, world: &World) {
        let dbs: BTreeSet<u8> = config.clients.iter().map(|c| c.db).collect();
        for db in dbs {
            let up = db_up(config, world, db);
            let was = self
                .uptime
                .iter()
                .rev()
                .find(|u| u.db == db)
                .is_none_or(|u| u.up);
            if up != was {
                self.uptime.push(DbUptime {
                    at: world.now,
                    db,
                    up,
                });
            }
        }
    }
}

/// Whether client node `node` is running.
pub fn node_up(world: &World, node: u8) -> bool {
    world.server_up(node)
}

/// Whether some server of database `db` is running.
pub fn db_up(config: &WorldConfig, world: &World, db: u8) -> bool {
    config
        .clients
        .iter()
        .any(|c| c.db == db && node_up(world, c.node))
}

impl Observer for Deliveries {
    fn before(&mut self, config: &WorldConfig, world: &World, choice: &Choice) {
        let (msg, lost) = match choice {
            Choice::Deliver { msg, .. } => (msg, false),
            Choice::Drop { msg } => (msg, true),
            _ => return,
        };
        let carried = match world.net.get(*msg) {
            // Only an answer the client is waiting for reaches its code: the answer to a
            // duplicated request, or to one it gave up on or lost in a crash, is not read
            // (`World::response_to_client`).
            Some(Payload::Response { to, id, response })
                if !lost && world.awaiting.get(id).is_some_and(|a| a.node == *to) =>
            {
                response.payment().map(|p| (*to, p.id, p.version, None))
            }
            Some(Payload::Webhook { to, event }) => match &event.object {
                WebhookObject::Payment(p) => Some((*to, p.id, p.version, Some(event.delivery))),
                WebhookObject::Refund(_) => None,
            },
            _ => None,
        };
        let Some((node, payment, version, delivery)) = carried else {
            return;
        };
        if let (Some(spec), Some(delivery)) = (config.client(node), delivery) {
            self.webhooks.push(WebhookDelivery {
                node,
                payment,
                version,
                delivery,
                db_up: db_up(config, world, spec.db),
                node_up: node_up(world, node),
                lost,
            });
        }
        if !lost && node_up(world, node) {
            self.received.push(Received {
                node,
                payment,
                version,
            });
        }
    }

    fn after(&mut self, config: &WorldConfig, world: &World) {
        self.note_uptime(config, world);
        for (_, payload) in world.net.iter() {
            if let Payload::Webhook { event, .. } = payload
                && let WebhookObject::Payment(p) = &event.object
            {
                self.emitted.insert((p.id, p.version));
            }
        }
    }
}

/// An order the client does not know the result of after healing, with why.
fn not_known(world: &World, order: &OrderRecord) -> Option<String> {
    let state = order.state();
    if state.is_settled() || state == OrderState::PendingConfirmation {
        return None;
    }
    if state == OrderState::AwaitingPayer {
        // Known only while it is true: the payer must still authenticate (RES-05).
        let latest = order
            .payment_id
            .and_then(|p| world.platform.payment_view(p));
        return match latest {
            Some(view) if view.status == PaymentStatus::RequiresAction => None,
            Some(view) => Some(format!(
                "order {} still awaits the payer's authentication (requires_action, version {}) \
                 after faults stopped for 25 h, but its Payment is {} (version {})",
                order.order_no,
                order.version(),
                view.status.as_str(),
                view.version
            )),
            None => Some(format!(
                "order {} awaits the payer's authentication (requires_action) without a Payment the platform has",
                order.order_no
            )),
        };
    }
    Some(format!(
        // In the contract's words (WORDING-02's "confirming"), never the model's names.
        "order {} is still {} after faults stopped for 25 h",
        order.order_no, state
    ))
}

/// After healing: `Some(order)` naming a submission the client still does not know: not
/// settled, not pending confirmation (manual_review), and not awaiting the payer while
/// the platform's Payment still requires action. It does not tell a documented gap from a
/// violation: [`judge`] does.
pub fn unresolved(config: &WorldConfig, world: &World) -> Option<String> {
    let _ = config;
    world
        .dbs
        .iter()
        .flat_map(|db| db.orders())
        .find_map(|order| not_known(world, order))
}

/// Whether order `order` of database `db`, behind the platform's latest version of its
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
pub fn gap(
    config: &WorldConfig,
    world: &World,
    seen: &Deliveries,
    db: u8,
    order: &OrderRecord,
) -> Result<Assumption, String> {
    let Some(payment) = order.payment_id else {
        return window_ran_without_payment(config, world, db, order);
    };
    let latest = world
        .platform
        .payment_view(payment)
        .ok_or_else(|| format!("the platform has no {payment}"))?;
    let version = latest.version;
    if order.version() >= version {
        return Err(format!(
            "the order holds version {} of {payment}, the platform's latest",
            order.version()
        ));
    }
    let state = order.state();
    if !state.is_settled() {
        let server = config
            .clients
            .iter()
            .filter(|c| c.db == db)
            .find_map(|c| world.server(c.node))
            .ok_or("no client server of the order's database")?;
        let params = &server.config().params;
        let anchor = order
            .confirming_since
            .ok_or("the order has no query window (confirming_since)")?;
        if let Some(at) = schedule::next_query_at(params, anchor, world.now) {
            return Err(format!(
                "its query window (since {anchor}) is not over: a query is due at {at}"
            ));
        }
        if state == OrderState::Confirming {
            window_ran(seen, db, order.last_query_at, anchor)?;
        }
    }
    if !seen.emitted.contains(&(payment, version)) {
        return Err(format!(
            "the platform sent no webhook event of version {version} of {payment}"
        ));
    }
    let of_db = |node: u8| config.client(node).is_some_and(|c| c.db == db);
    if seen
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
    let deliveries: Vec<&WebhookDelivery> = seen
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
    let last = config.params.webhook_redeliveries_max;
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
    seen: &Deliveries,
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
    let last = crate::cadence::last_scheduled_query();
    let fixed = Contract::QUERY_OFFSETS.to_vec();
    let mut at = *fixed.last().expect("offsets");
    let mut steps = Vec::new();
    while at.after(Contract::QUERY_EVERY) <= last {
        at = at.after(Contract::QUERY_EVERY);
        steps.push(at);
    }
    fixed.into_iter().chain(steps).map(move |o| anchor.after(o))
}

/// A-CLIENT-AFTER-24H for a confirming order that names no Payment (every answer was
/// lost or refused, say 429 all day), only if the gap's own conditions hold: its query
/// window really ran its 24 hours (its last query came the contract's last scheduled
/// offset after the window began, SCHED-01) and the platform holds no Payment of its
/// order number, so no webhook will ever tell (QUERY-05: none was created).
fn window_ran_without_payment(
    config: &WorldConfig,
    world: &World,
    db: u8,
    order: &OrderRecord,
) -> Result<Assumption, String> {
    if order.state() != OrderState::Confirming {
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
    let number = &order.submission.merchant_order_no;
    let owners: Vec<_> = config
        .clients
        .iter()
        .filter(|c| c.db == db)
        .map(|c| config.key_owner(c.api_key))
        .collect();
    let created = world.platform.payments().iter().find(|(_, p)| {
        p.merchant_order_no == *number && owners.contains(&Some((p.merchant, p.environment)))
    });
    match created {
        Some((id, _)) => Err(format!(
            "the order names no Payment, but the platform holds {id} for {number}"
        )),
        None => Ok(Assumption::ClientAfterWindow),
    }
}

/// The liveness verdict of a healed run.
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
    /// A submission the client does not know, outside every documented gap.
    Unresolved(String),
}

/// Judges a healed `world`, with what reached the merchant side during the run.
pub fn judge(config: &WorldConfig, world: &World, seen: &Deliveries) -> LivenessVerdict {
    let mut reached: Option<(Assumption, String)> = None;
    for (db, orders) in world.dbs.iter().enumerate() {
        for order in orders.orders() {
            let Some(why) = not_known(world, order) else {
                continue;
            };
            match gap(config, world, seen, db as u8, order) {
                Ok(assumption) => {
                    reached.get_or_insert((assumption, why));
                }
                Err(not) => {
                    return LivenessVerdict::Unresolved(format!(
                        "{why} (not a documented gap: {not})"
                    ));
                }
            }
        }
    }
    match reached {
        None => LivenessVerdict::Resolved,
        Some((assumption, detail)) => LivenessVerdict::Gap { assumption, detail },
    }
}

/// Replays `tape` from the start, then heals, observing what reaches the merchant side.
/// `Err` names a choice that does not apply.
pub fn replay_and_heal(
    config: &WorldConfig,
    tape: &[Choice],
) -> Result<(World, Deliveries), String> {
    let mut world = World::new(config);
    let mut seen = Deliveries::default();
    for (i, choice) in tape.iter().enumerate() {
        driver::apply_observed(config, &mut world, choice, &mut seen)
            .map_err(|e| format!("step {}: '{choice}': {e}", i + 1))?;
    }
    driver::heal_observed(config, &mut world, SPAN, HEAL_STEPS, &mut seen);
    Ok((world, seen))
}

/// Heals `world` and says whether some submission is not known ([`unresolved`]).
pub fn check(config: &WorldConfig, world: &mut World) -> Option<String> {
    driver::heal(config, world, SPAN, HEAL_STEPS);
    unresolved(config, world)
}

/// The verdict of the run `tape` describes: healed, then judged ([`judge`]). A run whose
/// healed world has every submission known needs no replay: `world`, the run's end, is
/// healed first, and the tape is replayed with observation only if something is not
/// known.
pub fn verdict(config: &WorldConfig, mut world: World, tape: &[Choice]) -> LivenessVerdict {
    if check(config, &mut world).is_none() {
        return LivenessVerdict::Resolved;
    }
    match replay_and_heal(config, tape) {
        Ok((healed, seen)) => judge(config, &healed, &seen),
        Err(e) => LivenessVerdict::Unresolved(format!("the run's tape does not replay: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{DbUptime, Deliveries, window_ran};
    use payhub_model::Millis;

    fn down_then_up(down: Millis, up: Option<Millis>) -> Deliveries {
        let mut seen = Deliveries::default();
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
        let running = Deliveries::default();
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
