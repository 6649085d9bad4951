//! The collections across the vector/tree threshold (`entries.rs`): every operation as
//! `BTreeMap`'s, the digest and the printed forms independent of the form the entries
//! take, `changes_from` exactly what changed, and `Schedule` as a plain timer set.

use super::entries::TREE_PAST;
use super::*;
use crate::time::Millis;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};

fn digest<T: Hash>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// A pseudo-random walk over up to 400 keys that grows the map past the threshold and
/// shrinks it back, with clones sharing its entries along the way.
#[test]
fn behaves_like_btreemap_across_the_threshold() {
    let mut cow: CowMap<u16, u32> = CowMap::new();
    let mut std: BTreeMap<u16, u32> = BTreeMap::new();
    let mut snapshots = Vec::new();
    let mut x: u32 = 3;
    for step in 0..20_000u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        // Phases of growth (mostly inserts) and shrinking (mostly removals).
        let growing = (step / 2_500) % 2 == 0;
        let key = ((x >> 8) % 400) as u16;
        match (x % 10, growing) {
            (0..=5, true) | (0..=1, false) => {
                assert_eq!(cow.insert(key, step), std.insert(key, step))
            }
            (6, _) | (2..=5, false) => assert_eq!(cow.remove(&key), std.remove(&key)),
            (7, _) => {
                if let (Some(a), Some(b)) = (cow.get_mut(&key), std.get_mut(&key)) {
                    *a += 1;
                    *b += 1;
                }
            }
            (8, _) => {
                assert_eq!(cow.pop_first(), std.pop_first());
            }
            _ if step % 97 == 0 => {
                cow.retain(|k, _| k % 7 != key % 7);
                std.retain(|k, _| k % 7 != key % 7);
            }
            _ if step % 89 == 0 => {
                cow.values_mut().for_each(|v| *v += 1);
                std.values_mut().for_each(|v| *v += 1);
            }
            _ => *cow.entry(key).or_insert(0) += 2,
        }
        if x % 10 == 9 && step % 97 != 0 && step % 89 != 0 {
            *std.entry(key).or_insert(0) += 2;
        }
        if step % 101 == 0 {
            snapshots.push((cow.clone(), std.clone()));
        }
        assert_eq!(cow.len(), std.len());
        assert_eq!(cow.first_key_value(), std.first_key_value());
        assert_eq!(cow.get(&key), std.get(&key));
        if step % 17 == 0 {
            assert!(cow.iter().eq(std.iter()));
            assert!(cow.iter().rev().eq(std.iter().rev()));
            assert!(cow.range(100..=250).eq(std.range(100..=250)));
            assert!(cow.range(..key).rev().eq(std.range(..key).rev()));
        }
    }
    assert!(
        snapshots.iter().any(|(c, _)| c.len() > 4 * TREE_PAST),
        "grew into a tree"
    );
    for (c, s) in snapshots {
        assert!(c.iter().eq(s.iter()), "a snapshot never moved");
    }
}

/// The same entries as a vector (built small) and as a tree (grown, then shrunk to the
/// same entries) are equal, hash alike, print and serialize alike.
#[test]
fn the_form_of_the_entries_is_not_observable() {
    let small: CowMap<u32, String> = (0..40).map(|k| (k, format!("v{k}"))).collect();
    let mut grown: CowMap<u32, String> = (0..400).map(|k| (k, format!("v{k}"))).collect();
    grown.retain(|k, _| *k < 40); // 40 entries: past the tree's floor, so still a tree
    assert_eq!(small, grown);
    assert_eq!(small.cmp(&grown), std::cmp::Ordering::Equal);
    assert_eq!(digest(&small), digest(&grown));
    assert_eq!(format!("{small:?}"), format!("{grown:?}"));
    assert_eq!(
        serde_json::to_string(&small).unwrap(),
        serde_json::to_string(&grown).unwrap()
    );
    let mut other = grown.clone();
    other.insert(7, "changed".into());
    assert_ne!(
        digest(&other),
        digest(&grown),
        "a change shows in the digest"
    );
    assert_ne!(other, grown);
}

/// `changes_from` names exactly the entries added or changed since a clone, in key
/// order, whether the maps are vectors or trees.
#[test]
fn changes_from_is_exactly_what_changed() {
    for size in [10u32, 5_000] {
        let before: CowMap<u32, u32> = (0..size).map(|k| (k, k)).collect();
        let mut after = before.clone();
        assert_eq!(
            after.changes_from(&before).count(),
            0,
            "a clone changed nothing"
        );
        after.insert(size + 3, 0); // added
        *after.get_mut(&7).unwrap() += 1; // changed
        after.insert(2, 2); // written, but the same value
        after.remove(&5); // removed: not an entry of `after`
        let changes: Vec<(u32, u32)> = after.changes_from(&before).map(|(k, v)| (*k, *v)).collect();
        assert_eq!(changes, vec![(7, 8), (size + 3, 0)], "size {size}");
        let empty = CowMap::new();
        assert_eq!(after.changes_from(&empty).count(), after.len());
        let set_before: CowSet<u32> = (0..size).collect();
        let mut set_after = set_before.clone();
        set_after.insert(size + 1);
        set_after.remove(&1);
        assert_eq!(
            set_after.added_since(&set_before).collect::<Vec<_>>(),
            vec![&(size + 1)]
        );
    }
}

/// A `Schedule` is a `CowSet<(Millis, T)>` whose cancel and lookup by timer are indexed:
/// under random operations it holds, iterates, hashes and prints as the plain set with
/// `retain`-based cancelling that it replaced.
#[test]
fn schedule_is_the_plain_timer_set() {
    let mut schedule: Schedule<u16> = Schedule::new();
    let mut plain: BTreeSet<(Millis, u16)> = BTreeSet::new();
    let mut x: u32 = 5;
    for step in 0..10_000u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let timer = ((x >> 8) % 300) as u16;
        let at = Millis(u64::from((x >> 4) % 50));
        match x % 5 {
            0 | 1 => assert_eq!(schedule.insert(at, timer), plain.insert((at, timer))),
            2 => {
                schedule.cancel(&timer);
                plain.retain(|(_, t)| *t != timer);
            }
            3 => assert_eq!(schedule.pop_first(), plain.pop_first()),
            _ => {}
        }
        assert_eq!(
            schedule.contains_timer(&timer),
            plain.iter().any(|(_, t)| *t == timer)
        );
        assert_eq!(schedule.first(), plain.first());
        assert_eq!(schedule.len(), plain.len());
        if step % 50 == 0 {
            assert!(schedule.iter().eq(plain.iter()));
            let set: CowSet<(Millis, u16)> = plain.iter().copied().collect();
            assert_eq!(digest(&schedule), digest(&set), "hashes as the set");
            assert_eq!(format!("{schedule:?}"), format!("{set:?}"));
            assert_eq!(
                serde_json::to_string(&schedule).unwrap(),
                serde_json::to_string(&set).unwrap()
            );
        }
    }
}
