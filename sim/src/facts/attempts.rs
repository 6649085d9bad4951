//! Payments and attempts: what the platform's store holds of them and what the acquirer
//! knows of their charges (UNIQ-01, UNIQ-02, ATTEMPT-01..05, RES-03, RES-06). Mirrors of
//! the ground truth, updated from the store and acquirer observations of the stream.

use payhub_model::acquirer::ChargeState;
use payhub_model::event::{StoredAttempt, StoredPayment, What};
use payhub_model::{AttemptId, CowMap, CowSet, PaymentId};
use serde::Serialize;

/// The attempts family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Attempts {
    /// Every Payment the platform's store holds.
    pub payments: CowMap<PaymentId, StoredPayment>,
    /// Every attempt the platform's store holds.
    pub attempts: CowMap<AttemptId, StoredAttempt>,
    /// The Payment each stored attempt is of, as its store observation says (whether or
    /// not the Payment's record lists it).
    pub payment_of: CowMap<AttemptId, PaymentId>,
    /// What the acquirer knows of each charge reference it has seen.
    pub charges: CowMap<AttemptId, ChargeState>,
    /// References the acquirer voided before their charge arrived (A-UPSTREAM-VOID).
    pub voided: CowSet<AttemptId>,
}

impl Attempts {
    /// Whether `what` changes this family: every observation of it is a change.
    pub(super) fn changes(&self, what: &What) -> bool {
        matches!(
            what,
            What::PaymentStored { .. }
                | What::AttemptStored { .. }
                | What::Charge { .. }
                | What::Voided { .. }
        )
    }

    pub(super) fn observe(&mut self, what: &What) {
        match what {
            What::PaymentStored { payment, stored } => {
                self.payments.insert(*payment, stored.clone());
            }
            What::AttemptStored {
                attempt,
                payment,
                stored,
            } => {
                self.attempts.insert(*attempt, *stored);
                if self.payment_of.get(attempt) != Some(payment) {
                    self.payment_of.insert(*attempt, *payment);
                }
            }
            What::Charge { attempt, state } => {
                self.charges.insert(*attempt, *state);
            }
            What::Voided { attempt } => {
                self.voided.insert(*attempt);
            }
            _ => {}
        }
    }
}

impl Attempts {
    /// Every attempt of `payment`: those its record lists, in order, then those the store
    /// holds for it that the record does not list (UNIQ-02, ATTEMPT-05: an attempt made
    /// is one the store holds, listed or not).
    pub fn attempts_of(&self, payment: PaymentId) -> Vec<AttemptId> {
        let mut all: Vec<AttemptId> = self
            .payments
            .get(&payment)
            .map(|p| p.attempts.to_vec())
            .unwrap_or_default();
        for (a, p) in self.payment_of.iter() {
            if *p == payment && !all.contains(a) {
                all.push(*a);
            }
        }
        all
    }
}
