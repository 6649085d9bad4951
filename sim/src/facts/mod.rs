//! Compact history for the properties, built from the event stream alone.
//!
//! [`Facts::observe`] is the only way in: it reads one [`Event`] and updates the
//! families it concerns. The facts never look at the world, the platform or the
//! acquirer, so the same facts are built from a simulated run, a recorded JSON Lines
//! file or, later, a live session; and the properties (crate `payhub-properties`) read
//! only facts. The checker hashes the world, facts included, so facts are small,
//! canonical and ordered: counters, ordered maps, mirrors of what the ground truth holds
//! (a function of the current state, so they add no states) and, where a property needs
//! history, the first witness of a pattern (typed, never text).
//!
//! One family per file:
//! - [`money`]: idempotency scopes, charges, answers' objects and conflicts, the ledger;
//! - [`attempts`]: the platform's Payments and attempts, the acquirer's charges;
//! - [`refunds`]: refunds on the platform and upstream;
//! - [`queries`]: every answer and rule seen, query spacing, Retry-After;
//! - [`client`]: what merchant clients sent and stored.

pub mod attempts;
pub mod client;
pub mod money;
pub mod queries;
pub mod refunds;

pub use money::{SafeParams, safety_parameters};
pub use payhub_model::event::ScopeKey;
pub use queries::RuleSet;

use payhub_model::{Shared, UpstreamCall};
use payhub_model::event::{Event, What};
use serde::Serialize;

/// The facts, one field per family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Facts {
    pub money: money::Money,
    pub attempts: attempts::Attempts,
    pub refunds: refunds::Refunds,
    pub queries: queries::Queries,
    pub client: client::Clients,
}

impl Facts {
    /// Folds one event into the facts. Events no family reads leave the shared facts
    /// untouched (no copy, no new digest): most steps of the checker change no fact.
    pub fn observe(facts: &mut Shared<Facts>, event: &Event) {
        if !facts.changes(&event.what) {
            return;
        }
        let f: &mut Facts = facts;
        let at = event.at;
        f.money.observe(at, &event.what);
        f.attempts.observe(&event.what);
        f.refunds.observe(&event.what);
        f.queries.observe(at, &event.what);
        f.client.observe(&event.what);
    }

    /// Folds a whole stream, from empty facts: a recorded run judged without its world.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Facts {
        let mut facts = Shared::new(Facts::default());
        for e in events {
            Facts::observe(&mut facts, e);
        }
        Facts::clone(&facts)
    }

    /// Whether `what` may change a family: asked before the shared facts are copied, so
    /// an event that only repeats what the facts hold costs no copy and no new digest.
    fn changes(&self, what: &What) -> bool {
        let own = match what {
            What::Handled { .. } | What::Ledger { .. } => true,
            What::Answered {
                response,
                route: Some(_),
                ..
            } => response.is_success(),
            What::UpstreamCalled {
                call: UpstreamCall::Charge { .. },
                during: None,
                ..
            }
            | What::UpstreamCalled {
                call: UpstreamCall::Refund { .. },
                ..
            } => true,
            What::PaymentStored { .. }
            | What::AttemptStored { .. }
            | What::RefundStored { .. }
            | What::Charge { .. }
            | What::Voided { .. } => true,
            _ => false,
        };
        own || self.queries.changes(what) || self.client.changes(what)
    }

    /// Whether any family reads this kind of event.
    pub(crate) fn reads(what: &What) -> bool {
        matches!(
            what,
            What::Handled { .. }
                | What::Answered { .. }
                | What::UpstreamCalled { .. }
                | What::WebhookEmitted { .. }
                | What::Ledger { .. }
                | What::Charge { .. }
                | What::Voided { .. }
                | What::PaymentStored { .. }
                | What::AttemptStored { .. }
                | What::RefundStored { .. }
                | What::OrderStored { .. }
                | What::ClientSends { held: false, .. }
                | What::Crashed { .. }
        )
    }
}
