//! Payments and attempts: what the platform's store holds of them and what the acquirer
//! knows of their charges (UNIQ-01, UNIQ-02, ATTEMPT-01..05, RES-03, RES-06). Mirrors of
//! the ground truth, updated from the store and acquirer observations of the stream.

use super::effects::OrderKey;
use super::note_first;
use payhub_model::acquirer::ChargeState;
use payhub_model::cow::{Derived, INDEX_PAST};
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
    /// The Payment each stored attempt is of, as its store observation says (whether or
    /// not the Payment's record lists it).
    pub payment_of: CowMap<AttemptId, PaymentId>,
    /// What the acquirer knows of each charge reference it has seen.
    pub charges: CowMap<AttemptId, ChargeState>,
    /// References the acquirer voided before their charge arrived (A-UPSTREAM-VOID).
    pub voided: CowSet<AttemptId>,
    /// ATTEMPT-06: the first Payment stored with a fee rate other than the one it was
    /// stored with before.
    pub fee_changed: Option<FeeChanged>,
    /// `payments` by (merchant, environment, merchant_order_no), once they are more than
    /// [`INDEX_PAST`]: an index, not state (a walk over every Payment per request made
    /// the sandbox's answers cost time in proportion to the Payments held; a few, the
    /// checker's case, are walked, which costs less than copying an index).
    #[serde(skip)]
    by_order: Derived<Option<CowMap<OrderKey, CowSet<PaymentId>>>>,
    /// `payment_of` by Payment, once it holds more than [`INDEX_PAST`] attempts: an
    /// index, not state (a walk over every attempt per Payment made each verdict
    /// quadratic in the Payments held).
    #[serde(skip)]
    by_payment: Derived<Option<CowMap<PaymentId, CowSet<AttemptId>>>>,
}

/// `payment` was stored with fee rate `now` (bps) after `was`, holding `attempts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FeeChanged {
    pub payment: PaymentId,
    pub was: u32,
    pub now: u32,
    pub attempts: usize,
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

    /// The first two Payments, in id order, stored under one order number: (the earlier,
    /// the later), the later the lowest id that has an earlier one (UNIQ-01).
    pub fn shared_order(&self) -> Option<(PaymentId, PaymentId)> {
        let Some(index) = &*self.by_order else {
            let mut seen = std::collections::BTreeMap::new();
            for (id, p) in self.payments.iter() {
                let key = (p.merchant, p.environment, &p.merchant_order_no);
                if let Some(other) = seen.insert(key, *id) {
                    return Some((other, *id));
                }
            }
            return None;
        };
        index
            .values()
            .filter_map(|ids| {
                let mut ids = ids.iter();
                Some((*ids.next()?, *ids.next()?))
            })
            .min_by_key(|(_, later)| *later)
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

    /// Keeps `by_payment` in step with an attempt just filed under `payment` (`old`: the
    /// Payment it was filed under before).
    fn index_attempt(&mut self, attempt: AttemptId, old: Option<PaymentId>, payment: PaymentId) {
        match &mut *self.by_payment {
            None if self.payment_of.len() > INDEX_PAST => {
                let mut index: CowMap<PaymentId, CowSet<AttemptId>> = CowMap::new();
                for (a, p) in self.payment_of.iter() {
                    index.entry(*p).or_default().insert(*a);
                }
                *self.by_payment = Some(index);
            }
            None => {}
            Some(index) => {
                if let Some(ids) = old.and_then(|o| index.get_mut(&o)) {
                    ids.remove(&attempt);
                }
                index.entry(payment).or_default().insert(attempt);
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
                // ATTEMPT-06: the fee-rate snapshot is the Payment's for good.
                if let Some(o) = &old {
                    let (was, now) = (o.fee_rate_bps, stored.fee_rate_bps);
                    note_first(&mut self.fee_changed, was != now, || FeeChanged {
                        payment: *payment,
                        was,
                        now,
                        attempts: stored.attempts.len(),
                    });
                }
                self.index_order(*payment, old.as_ref(), stored);
            }
            What::AttemptStored {
                attempt,
                payment,
                stored,
            } => {
                self.attempts.insert(*attempt, *stored);
                if self.payment_of.get(attempt) != Some(payment) {
                    let old = self.payment_of.insert(*attempt, *payment);
                    self.index_attempt(*attempt, old, *payment);
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
        let listed = all.len();
        let mut file = |a: &AttemptId| {
            if !all[..listed].contains(a) {
                all.push(*a);
            }
        };
        match &*self.by_payment {
            Some(index) => index.get(&payment).into_iter().flatten().for_each(file),
            None => self
                .payment_of
                .iter()
                .filter(|(_, p)| **p == payment)
                .for_each(|(a, _)| file(a)),
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::platform::state::AttemptStatus;
    use payhub_model::{Millis, PaymentStatus, ResolutionStatus};

    fn stored(order: &str, attempts: Vec<AttemptId>) -> StoredPayment {
        StoredPayment {
            merchant: MerchantId(1),
            environment: Environment::Test,
            merchant_order_no: order.into(),
            status: PaymentStatus::Processing,
            resolution: ResolutionStatus::Known,
            expires_at: Millis(0),
            attempts,
            failure_attempt: None,
            version: 1,
            fee_rate_bps: 290,
        }
    }

    /// `n` Payments, each with an attempt its record lists and one it does not; Payment
    /// `n - 3` reuses the order number of Payment `n / 2`, and so does Payment `n - 1`.
    fn filled(n: u32) -> Attempts {
        let mut a = Attempts::default();
        for i in 1..=n {
            let order = match i {
                i if i == n - 3 || i == n - 1 => format!("ORDER-{}", n / 2),
                i => format!("ORDER-{i}"),
            };
            let (listed, unlisted) = (AttemptId(2 * i), AttemptId(2 * i + 1));
            a.observe(&What::PaymentStored {
                payment: PaymentId(i),
                stored: stored(&order, vec![listed]),
            });
            for attempt in [unlisted, listed] {
                a.observe(&What::AttemptStored {
                    attempt,
                    payment: PaymentId(i),
                    stored: StoredAttempt {
                        status: AttemptStatus::Processing,
                        sent_at: Millis(0),
                    },
                });
            }
        }
        a
    }

    #[test]
    fn the_indexes_answer_as_the_walks_do() {
        // 10 Payments are walked; 200 are past INDEX_PAST, so read through the indexes.
        for n in [10, 200] {
            let a = filled(n);
            assert_eq!(a.by_order.is_some(), n as usize > INDEX_PAST);
            assert_eq!(a.by_payment.is_some(), 2 * n as usize > INDEX_PAST);
            assert_eq!(
                a.shared_order(),
                Some((PaymentId(n / 2), PaymentId(n - 3))),
                "{n} Payments"
            );
            for i in [1, n / 2, n] {
                assert_eq!(
                    a.attempts_of(PaymentId(i)),
                    vec![AttemptId(2 * i), AttemptId(2 * i + 1)],
                    "{n} Payments"
                );
            }
            assert!(a.attempts_of(PaymentId(n + 1)).is_empty());
        }
    }
}
