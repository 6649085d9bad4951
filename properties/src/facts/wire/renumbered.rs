//! UNKNOWN-03's "the same request under another number": the creates (or refund
//! requests) whose outcome is still unknown, per owner and number, indexed by what
//! makes two of them the same request, so that a new create finds an earlier one under
//! another number without a scan of every unknown one (the scan made a long log's fold
//! quadratic in its unknown outcomes).

use payhub_model::{Environment, MerchantId, Text};
use std::collections::{BTreeMap, BTreeSet};

type Owner = (MerchantId, Environment);

/// Per owner and number, what makes its request the same as another (`S`) and its
/// witness (`V`); and per owner and `S`, the numbers held with it, in order.
#[derive(Clone, Debug)]
pub(super) struct Unresolved<S, V> {
    by_number: BTreeMap<(MerchantId, Environment, Text), (S, V)>,
    by_same: BTreeMap<(Owner, S), BTreeSet<Text>>,
}

impl<S, V> Default for Unresolved<S, V> {
    fn default() -> Self {
        Unresolved {
            by_number: BTreeMap::new(),
            by_same: BTreeMap::new(),
        }
    }
}

impl<S: Ord + Clone, V> Unresolved<S, V> {
    /// The request held under `owner`'s `number`, if any.
    pub(super) fn get(&self, owner: Owner, number: &Text) -> Option<&(S, V)> {
        self.by_number.get(&(owner.0, owner.1, number.clone()))
    }

    /// Holds `number`'s request unless one is held under it already (the first stays).
    pub(super) fn hold_first(
        &mut self,
        owner: Owner,
        number: Text,
        same: S,
        v: impl FnOnce() -> V,
    ) {
        let k = (owner.0, owner.1, number);
        if self.by_number.contains_key(&k) {
            return;
        }
        self.by_same
            .entry((owner, same.clone()))
            .or_default()
            .insert(k.2.clone());
        self.by_number.insert(k, (same, v()));
    }

    /// Forgets `number`'s request (its outcome became known).
    pub(super) fn forget(&mut self, owner: Owner, number: &Text) {
        let Some((same, _)) = self.by_number.remove(&(owner.0, owner.1, number.clone())) else {
            return;
        };
        let k = (owner, same);
        if let Some(numbers) = self.by_same.get_mut(&k) {
            numbers.remove(number);
            if numbers.is_empty() {
                self.by_same.remove(&k);
            }
        }
    }

    /// The request held under the first number other than `number` (in the numbers'
    /// order) whose request is the same as `same`.
    pub(super) fn same_under_other(&self, owner: Owner, same: &S, number: &Text) -> Option<&V> {
        let numbers = self.by_same.get(&(owner, same.clone()))?;
        let other = numbers.iter().find(|n| *n != number)?;
        self.by_number
            .get(&(owner.0, owner.1, other.clone()))
            .map(|(_, v)| v)
    }

    /// How many numbers are held.
    pub(super) fn len(&self) -> usize {
        self.by_number.len()
    }
}
