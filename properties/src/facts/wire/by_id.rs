//! A map by Payment id, dense where the ids are: a source numbers its Payments one after
//! another (the model's `pay_demo_001` …, foreign ids interned in the order they come),
//! so the ids are held in runs of [`RUN`], each run a bit per id held and one vector of
//! their values in id order, grown to its size (a full run holds its values back to back,
//! where a B-tree of ids arriving in order leaves its nodes about half full). Sparse ids
//! cost what a B-tree entry would; the ids of several merchants interleaved (a partition
//! holds one merchant's) share a run's bits.

use payhub_model::PaymentId;
use std::collections::BTreeMap;

/// The ids of one run share all but their lowest `SHIFT` bits.
const SHIFT: u32 = 6;
const RUN: usize = 1 << SHIFT;

/// Values by Payment id (see the module doc).
#[derive(Clone, Debug, Default)]
pub(super) struct ById<V> {
    runs: BTreeMap<u32, (u64, Vec<V>)>,
}

/// The run of `id`, and its bit in the run.
fn split(id: PaymentId) -> (u32, u64) {
    (id.0 >> SHIFT, 1 << (id.0 as usize % RUN))
}

/// Where the value of `bit` is among the values of a run holding `held`.
fn index(held: u64, bit: u64) -> usize {
    (held & (bit - 1)).count_ones() as usize
}

impl<V: Default> ById<V> {
    pub(super) fn get(&self, id: &PaymentId) -> Option<&V> {
        let (run, bit) = split(*id);
        let (held, values) = self.runs.get(&run)?;
        (held & bit != 0).then(|| &values[index(*held, bit)])
    }

    /// The value of `id`, a default one first if it has none.
    pub(super) fn at(&mut self, id: PaymentId) -> &mut V {
        let (run, bit) = split(id);
        let (held, values) = self.runs.entry(run).or_default();
        let i = index(*held, bit);
        if *held & bit == 0 {
            if values.len() == values.capacity() {
                // Doubling up to the run's size: a full run is exactly full.
                values.reserve_exact(values.len().clamp(1, RUN - values.len()));
            }
            values.insert(i, V::default());
            *held |= bit;
        }
        &mut values[i]
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &V> {
        self.runs.values().flat_map(|(_, values)| values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_and_out_of_order_are_found_and_runs_fill_exactly() {
        let mut m: ById<u32> = ById::default();
        for id in (0..100).rev().chain(128..300).chain([7_000_000, 5]) {
            *m.at(PaymentId(id)) += id + 1;
        }
        assert_eq!(m.get(&PaymentId(5)), Some(&12));
        assert_eq!(m.get(&PaymentId(250)), Some(&251));
        assert_eq!(m.get(&PaymentId(7_000_000)), Some(&7_000_001));
        assert_eq!(m.get(&PaymentId(110)), None);
        assert_eq!(m.values().count(), 273);
        let (held, full) = &m.runs[&(200 >> SHIFT)];
        assert_eq!((*held, full.len(), full.capacity()), (u64::MAX, RUN, RUN));
    }
}
