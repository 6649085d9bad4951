//! Compact history for the properties, built from the event stream alone.
//!
//! [`Facts::observe`] is the only way in: it reads one [`Event`] and updates the
//! families it concerns. The facts never look at the world, the platform or the
//! acquirer, so the same facts are built from a simulated run, a recorded JSON Lines
//! file or, later, a live session; and the properties read only facts. The checker hashes the world, facts included, so facts are small,
//! canonical and ordered: counters, ordered maps, mirrors of what the ground truth holds
//! (a function of the current state, so they add no states) and, where a property needs
//! history, the first witness of a pattern or an extreme with its witness (the closest
//! two queries of one object, the shortest timeout a node sent), typed, never text. The
//! property that reads an extreme compares it with the contract's number and writes the
//! words. The facts record; the properties decide: the responses family judges each
//! answer against the store at answer time with [`crate::responses::answers::judge`], the
//! money family reads the answers under a scope with [`crate::scope_answers`] and keeps a
//! scope's history for its RET-01 retention; the wire family keeps what its judge's
//! window says and records the soonest replay, the property applies RET-01.
//!
//! The world keeps these facts in its hashed state: [`Facts`] is its
//! [`payhub_sim::EventFold`] ([`requests`]: the request ids they hold, for the checker's
//! canonical form).
//!
//! One family per file, each module saying what it folds; [`resolution`] is folded beside
//! these facts, not one of their fields (see its module).

pub mod attempts;
pub mod cadence;
pub mod client;
pub mod effects;
pub mod money;
pub mod queries;
pub mod query_object;
pub mod refunds;
mod requests;
pub mod resolution;
pub mod responses;
pub mod traffic;
pub mod wire;

pub use money::{SafeParams, safety_parameters};
pub use payhub_model::event::ScopeKey;
pub use queries::RuleSet;

use payhub_model::client::{Decision, ObjectState};
use payhub_model::event::{BusinessOrder, Event, Handling, Owner, What};
use payhub_model::{ApiRequest, ApiResponse, Millis, PaymentId, RequestId, Shared};
use payhub_sim::{EventFold, Narrowing};
use serde::Serialize;

/// The facts, one field per family, each behind its own [`Shared`] box: an event copies
/// and re-digests only the families it changes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Facts {
    pub money: Shared<money::Money>,
    pub attempts: Shared<attempts::Attempts>,
    pub refunds: Shared<refunds::Refunds>,
    pub queries: Shared<queries::Queries>,
    pub client: Shared<client::Clients>,
    pub responses: Shared<responses::Responses>,
    pub cadence: Shared<cadence::Cadence>,
    pub effects: Shared<effects::Effects>,
    pub traffic: Shared<traffic::Traffic>,
}

macro_rules! changed {
    ($($family:ident),*) => {
        /// Which families an event changes, one flag per field of [`Facts`].
        #[derive(Clone, Copy, Debug, Default)]
        struct Changed {
            $($family: bool,)*
        }

        impl Changed {
            fn any(self) -> bool {
                $(self.$family)||*
            }
        }
    };
}

changed!(
    money, attempts, refunds, queries, client, responses, cadence, effects, traffic
);

impl Facts {
    /// EFFECT-01's "the same purchase" as a merchant database files it: `payments` are
    /// `business`'s (no copy when there are none).
    fn file_under(facts: &mut Shared<Facts>, payments: &[PaymentId], business: &BusinessOrder) {
        if payments.is_empty() {
            return;
        }
        let f: &mut Facts = facts;
        for p in payments {
            f.money.payment_business.insert(*p, business.clone());
        }
    }

    /// Folds one event into the facts. A family is asked first whether the event changes
    /// it; one that only repeats what the facts hold costs no copy and no new digest
    /// (most steps of the checker change no fact).
    pub fn observe(facts: &mut Shared<Facts>, event: &Event) {
        <Facts as EventFold>::observe_at(facts, event.at, &event.what);
    }

    /// Which families `what` changes.
    fn families_changed(&self, what: &What) -> Changed {
        Changed {
            money: self.money.changes(what),
            attempts: self.attempts.changes(what),
            refunds: self.refunds.changes(what),
            queries: self.queries.changes(what),
            client: self.client.changes(what),
            responses: self.responses.changes(
                what,
                &responses::Store {
                    attempts: &self.attempts,
                    refunds: &self.refunds,
                },
            ),
            cadence: self.cadence.changes(what),
            effects: self.effects.changes(what),
            traffic: self.traffic.changes(what, &self.cadence.history.node_db),
        }
    }

    /// Folds a whole stream, from empty facts: a recorded run judged without its world.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Facts {
        let mut facts = Shared::new(Facts::default());
        for e in events {
            Facts::observe(&mut facts, e);
        }
        Facts::clone(&facts)
    }
}

/// Keeps `witness()` in `slot` when `breach` and `slot` holds none yet: a family keeps the
/// first witness of each breach and never replaces it.
pub(crate) fn note_first<T>(slot: &mut Option<T>, breach: bool, witness: impl FnOnce() -> T) {
    if breach && slot.is_none() {
        *slot = Some(witness());
    }
}

/// The client decisions a family reads (the world emits these and notes the rest): the
/// retries and the end of the query schedule (cadence), fulfilments, payer messages,
/// pending confirmations and the manual_review states they follow (effects).
pub fn reads_decision(decision: &Decision) -> bool {
    matches!(
        decision,
        Decision::RetryScheduled { .. }
            | Decision::ScheduleEnded
            | Decision::Fulfil { .. }
            | Decision::ShowPayer { .. }
            | Decision::PendingConfirmation
            | Decision::Applied {
                object: ObjectState::Payment {
                    resolution: payhub_model::ResolutionStatus::ManualReview,
                    ..
                },
                ..
            }
    )
}

/// The world keeps the facts in its hashed state, and asks them what it must to emit
/// cheaply and to rename request ids ([`requests`]).
impl EventFold for Facts {
    fn planted(narrowing: Option<Narrowing>) -> Facts {
        let mut facts = Facts::default();
        match narrowing {
            Some(Narrowing::RetryAfterBindsUnread429) => facts.queries.binds_unread_429 = true,
            None => {}
        }
        facts
    }

    /// [`Facts::observe`] of what happened at `at`, before (or without) building its
    /// [`Event`].
    fn observe_at(facts: &mut Shared<Facts>, at: Millis, what: &What) {
        if let What::OrderInPurchase {
            payments, business, ..
        } = what
        {
            return Facts::file_under(facts, payments, business);
        }
        let changed = facts.families_changed(what);
        if !changed.any() {
            return;
        }
        let f: &mut Facts = facts;
        // Before the attempts family: a store change is judged against what it replaces.
        if changed.responses {
            let Facts {
                responses,
                attempts,
                refunds,
                ..
            } = f;
            let store = responses::Store { attempts, refunds };
            responses.observe(what, &store);
        }
        if changed.money {
            f.money.observe(at, what);
        }
        if changed.attempts {
            f.attempts.observe(what);
        }
        if changed.refunds {
            f.refunds.observe(what);
        }
        if changed.queries {
            f.queries.observe(at, what);
        }
        if changed.client {
            f.client.observe(what);
        }
        // After the attempts family: both read the platform's store as this event left it.
        if changed.cadence {
            f.cadence.observe(at, what, &f.attempts, &f.effects.inputs);
        }
        if changed.effects {
            f.effects.observe(at, what, &f.attempts);
        }
        if changed.traffic {
            f.traffic.observe(what, &f.cadence.history.node_db);
        }
    }

    /// Whether `what` changes any family.
    fn changed_by(&self, what: &What) -> bool {
        matches!(what, What::OrderInPurchase { payments, .. } if !payments.is_empty())
            || self.families_changed(what).any()
    }

    /// Whether any family reads this kind of event.
    fn reads(what: &What) -> bool {
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
                | What::OrderInPurchase { .. }
                | What::Commanded { .. }
                | What::ClientSends { held: false, .. }
                | What::Crashed { .. }
                | What::TimedOut { .. }
                | What::ClockCompressed { .. }
        ) || matches!(what, What::ClientDecided { decision, .. } if reads_decision(decision))
            || what.is_held_confirm()
        // `Delivered` is read too, for client nodes only: the world emits those and notes
        // the answers scripted senders get.
    }
    fn reads_decision(decision: &Decision) -> bool {
        reads_decision(decision)
    }

    fn handling_changes(
        &self,
        request: &ApiRequest,
        owner: Owner,
        answer: Option<&ApiResponse>,
        handling: &Handling,
    ) -> bool {
        // Only the money family reads a handled request.
        self.money
            .handling_changes(request, owner, answer, handling)
    }

    fn request_ids(&self, out: &mut dyn FnMut(&RequestId)) {
        requests::witnesses(self, out);
    }

    fn rename_requests(facts: &mut Shared<Facts>, rank: &impl Fn(RequestId) -> RequestId) {
        requests::rename_witnesses(facts, rank);
    }
}
