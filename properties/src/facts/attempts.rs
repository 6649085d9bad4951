//! Payments and attempts: what the platform's store holds of them and what the acquirer
//! knows of their charges (UNIQ-01, UNIQ-02, ATTEMPT-01..05, RES-03, RES-06). Mirrors of
//! the ground truth, updated from the store and acquirer observations of the stream.

use payhub_model::acquirer::ChargeState;
use payhub_model::cow::{Derived, INDEX_PAST};
use payhub_model::event::{StoredAttempt, StoredPayment, What};
use payhub_model::{AttemptId, CowMap, CowSet, Environment, MerchantId, PaymentId, Text};
use serde::Serialize;

/// A merchant order number's scope: (merchant, environment, merchant_order_no).
type OrderKey = (MerchantId, Environment, Text);

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
    /// `payments` by (merchant, environment, merchant_order_no), once they are more than
    /// [`INDEX_PAST`]: an index, not state (a walk over every Payment per request made
    /// the sandbox's answers cost time in proportion to the Payments held; a few, the
    /// checker's case, are walked, which costs less than copying an index).
    #[serde(skip)]
    by_order: Derived<Option<CowMap<OrderKey, CowSet<PaymentId>>>>,
}

impl Attempts {
    /// The Payment (the lowest id, if several) stored under this merchant order number.
    pub fn payment_by_order(
        &self,
        merchant: MerchantId,
        environment: Environment,
        order: &Text,
    ) -> Option<(&PaymentId, &StoredPayment)> {
        let Some(index) = &*self.by_order else {
            return self.payments.iter().find(|(_, p)| {
                p.merchant == merchant
                    && p.environment == environment
                    && p.merchant_order_no == *order
            });
        };
        let ids = index.get(&(merchant, environment, order.clone()))?;
        ids.iter().find_map(|id| self.payments.get_key_value(id))
    }

    /// Keeps `by_order` in step with a Payment just stored (`old`: what it replaced).
    fn index_order(
        &mut self,
        payment: PaymentId,
        old: Option<&StoredPayment>,
        new: &StoredPayment,
    ) {
        let key = |p: &StoredPayment| (p.merchant, p.environment, p.merchant_order_no.clone());
        match &mut *self.by_order {
            None if self.payments.len() > INDEX_PAST => {
                let mut index: CowMap<OrderKey, CowSet<PaymentId>> = CowMap::new();
                for (id, p) in self.payments.iter() {
                    index.entry(key(p)).or_default().insert(*id);
                }
                *self.by_order = Some(index);
            }
            None => {}
            Some(_) if old.is_some_and(|o| key(o) == key(new)) => {}
            Some(index) => {
                if let Some(ids) = old.and_then(|o| index.get_mut(&key(o))) {
                    ids.remove(&payment);
                }
                index.entry(key(new)).or_default().insert(payment);
            }
        }
    }

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
                let old = self.payments.insert(*payment, stored.clone());
                self.index_order(*payment, old.as_ref(), stored);
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
