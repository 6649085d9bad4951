//! Liveness in the form that is sound here: a bounded property of the world after faults
//! stop. stateright's `eventually` misses violations on cycles, so instead every run is
//! healed ([`payhub_sim::driver::heal`]: no more faults, deliveries and approvals first,
//! time passing) for the contract's 24-hour window, and then every business submission of
//! the reference client must be in a status the client knows.

use payhub_model::client::OrderState;
use payhub_model::{Millis, Rule};
use payhub_sim::{World, WorldConfig};

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

/// After healing: `Some(order)` naming a submission the client still does not know.
pub fn unresolved(config: &WorldConfig, world: &World) -> Option<String> {
    let _ = config;
    for db in world.dbs.iter() {
        for order in db.orders() {
            let known = order.state().is_settled()
                || matches!(
                    order.state(),
                    OrderState::PendingConfirmation | OrderState::AwaitingPayer
                );
            if !known {
                return Some(format!(
                    "order {} is still {:?} after faults stopped for 25 h",
                    order.order_no,
                    order.state()
                ));
            }
        }
    }
    None
}

/// Heals `world` and judges it.
pub fn check(config: &WorldConfig, world: &mut World) -> Option<String> {
    payhub_sim::driver::heal(config, world, SPAN, 20_000);
    unresolved(config, world)
}
