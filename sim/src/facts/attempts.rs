//! Payments and attempts: what the platform's store holds of them and what the acquirer
//! knows of their charges (UNIQ-01, UNIQ-02, ATTEMPT-01..05, RES-03, RES-06). Mirrors of
//! the ground truth, updated from the store and acquirer observations of the stream.

use payhub_model::acquirer::ChargeState;
use payhub_model::cow::Derived;
use payhub_model::event::{StoredAttempt, StoredPayment, What};
use payhub_model::{AttemptId, CowMap, CowSet, Environment, MerchantId, PaymentId, Text};
use serde::Serialize;

/// The attempts family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Attempts {
    /// Every Payment the platform's store holds.
    pub payments: CowMap<PaymentId, StoredPayment>,
    /// Every attempt the platform's store holds.
    pub attempts: CowMap<AttemptId, StoredAttempt>,
    /// What the acquirer knows of each charge reference it has seen.
    pub charges: CowMap<AttemptId, ChargeState>,
    /// References the acquirer voided before their charge arrived (A-UPSTREAM-VOID).
    pub voided: CowSet<AttemptId>,
    /// `payments` by (merchant, environment, merchant_order_no): an index, not state (a
    /// walk over every Payment per request made the sandbox's answers cost time in
    /// proportion to the Payments held).
    #[serde(skip)]
    by_order: Derived<CowMap<(MerchantId, Environment, Text), CowSet<PaymentId>>>,
}

impl Attempts {
    /// The Payment (the lowest id, if several) stored under this merchant order number.
    pub fn payment_by_order(
        &self,
        merchant: MerchantId,
        environment: Environment,
        order: &Text,
    ) -> Option<(&PaymentId, &StoredPayment)> {
        let ids = self.by_order.get(&(merchant, environment, order.clone()))?;
        ids.iter().find_map(|id| self.payments.get_key_value(id))
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
                let key =
                    |p: &StoredPayment| (p.merchant, p.environment, p.merchant_order_no.clone());
                if let Some(old) = self.payments.insert(*payment, stored.clone())
                    && key(&old) != key(stored)
                    && let Some(ids) = self.by_order.get_mut(&key(&old))
                {
                    ids.remove(payment);
                }
                self.by_order
                    .entry(key(stored))
                    .or_default()
                    .insert(*payment);
            }
            What::AttemptStored {
                attempt, stored, ..
            } => {
                self.attempts.insert(*attempt, *stored);
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
