//! `CowMap`, `CowSet` and `Shared` against `std`'s collections, and their digests.

use super::*;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

/// Every operation agrees with `BTreeMap`, including after clones share entries.
#[test]
fn behaves_like_btreemap_under_sharing() {
    let mut cow: CowMap<u8, u32> = CowMap::new();
    let mut std: BTreeMap<u8, u32> = BTreeMap::new();
    let mut snapshots = Vec::new();
    let mut x: u32 = 7;
    for step in 0..2_000u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let key = (x >> 8) as u8 % 24;
        match x % 7 {
            0 | 1 => assert_eq!(cow.insert(key, step), std.insert(key, step)),
            2 => assert_eq!(cow.remove(&key), std.remove(&key)),
            3 => {
                if let (Some(a), Some(b)) = (cow.get_mut(&key), std.get_mut(&key)) {
                    *a += 1;
                    *b += 1;
                }
            }
            4 => {
                cow.retain(|k, _| k % 5 != key % 5);
                std.retain(|k, _| k % 5 != key % 5);
            }
            5 => assert_eq!(cow.pop_first(), std.pop_first()),
            _ => *cow.entry(key).or_insert(0) += 2,
        }
        if x % 7 == 6 {
            *std.entry(key).or_insert(0) += 2;
        }
        if step % 13 == 0 {
            snapshots.push((cow.clone(), std.clone()));
        }
        assert!(cow.iter().eq(std.iter()));
        assert_eq!(format!("{cow:?}"), format!("{std:?}"));
        assert_eq!(
            cow.range(3..=9).collect::<Vec<_>>(),
            std.range(3..=9).collect::<Vec<_>>()
        );
    }
    // Mutating the live map never changed a snapshot.
    for (c, s) in snapshots {
        assert!(c.iter().eq(s.iter()));
    }
}

#[test]
fn set_behaves_like_btreeset_and_serializes_alike() {
    let mut cow = CowSet::new();
    let mut std = BTreeSet::new();
    for v in [5u8, 1, 9, 1, 3, 7] {
        assert_eq!(cow.insert(v), std.insert(v));
    }
    let shared = cow.clone();
    assert_eq!(cow.remove(&9), std.remove(&9));
    cow.retain(|v| *v != 3);
    std.retain(|v| *v != 3);
    assert!(cow.iter().eq(std.iter()));
    assert_eq!(shared.len(), 5);
    assert_eq!(
        serde_json::to_string(&cow).unwrap(),
        serde_json::to_string(&std).unwrap()
    );
    let map: CowMap<String, u8> = [("b".to_owned(), 2), ("a".to_owned(), 1)]
        .into_iter()
        .collect();
    let std_map: BTreeMap<String, u8> = map.iter().map(|(k, v)| (k.clone(), *v)).collect();
    assert_eq!(
        serde_json::to_string(&map).unwrap(),
        serde_json::to_string(&std_map).unwrap()
    );
    assert_eq!(map.get("a"), Some(&1));
}

/// Equal contents hash equally whatever the history (canonical state).
#[test]
fn hash_depends_on_contents_only() {
    use std::hash::DefaultHasher;
    let a: CowMap<u8, u8> = [(1, 1), (2, 2)].into_iter().collect();
    let mut b: CowMap<u8, u8> = [(2, 2), (3, 3), (1, 1)].into_iter().collect();
    b.remove(&3);
    let h = |m: &CowMap<u8, u8>| {
        let mut s = DefaultHasher::new();
        m.hash(&mut s);
        s.finish()
    };
    assert_eq!(a, b);
    assert_eq!(h(&a), h(&b));
}

/// The cached digest follows every mutation, shared or not.
#[test]
fn cached_hash_is_invalidated_by_mutation() {
    use std::hash::DefaultHasher;
    let h = |m: &CowMap<u8, u8>| {
        let mut s = DefaultHasher::new();
        m.hash(&mut s);
        s.finish()
    };
    let mut a: CowMap<u8, u8> = [(1, 1)].into_iter().collect();
    let before = h(&a);
    let b = a.clone();
    *a.get_mut(&1).unwrap() = 2; // shared: copied, fresh digest
    assert_ne!(h(&a), before);
    assert_eq!(h(&b), before);
    let after = h(&a);
    a.insert(1, 1); // unshared: in place, digest reset
    assert_ne!(h(&a), after);
    assert_eq!(h(&a), before);
    a.retain(|_, _| false);
    assert_eq!(h(&a), h(&CowMap::new()));
    let mut c: CowMap<u8, u8> = [(1, 1), (2, 2)].into_iter().collect();
    let _ = h(&c);
    c.values_mut().for_each(|v| *v += 1);
    let d: CowMap<u8, u8> = [(1, 2), (2, 3)].into_iter().collect();
    assert_eq!(h(&c), h(&d));
}

/// A shared box's digest follows mutation and never leaks to a clone that did not
/// change.
#[test]
fn shared_digest_follows_mutation() {
    use std::hash::DefaultHasher;
    let h = |m: &Shared<Vec<u8>>| {
        let mut s = DefaultHasher::new();
        m.hash(&mut s);
        s.finish()
    };
    let mut a = Shared::new(vec![1u8, 2]);
    let before = h(&a);
    let b = a.clone();
    a.push(3);
    assert_ne!(h(&a), before);
    assert_eq!(h(&b), before);
    a.pop();
    assert_eq!(h(&a), before);
    assert_eq!(a, b);
}

/// A `Journaled` map's journal names every key whose value a step changed, with the
/// value before (what the world compares to observe a step), whatever the writes.
#[test]
fn journal_names_every_change_with_its_value_before() {
    let mut map: Journaled<u8, u32> = Journaled::new();
    let mut x: u32 = 11;
    for step in 0..300u32 {
        let before: BTreeMap<u8, u32> = map.iter().map(|(k, v)| (*k, *v)).collect();
        map.begin();
        for _ in 0..(step % 4) {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let key = (x >> 8) as u8 % 12;
            match x % 3 {
                0 => {
                    map.insert(key, step);
                }
                1 => {
                    map.remove(&key);
                }
                _ => {
                    if let Some(v) = map.get_mut(&key) {
                        *v += 1;
                    }
                }
            }
        }
        let journal = map.take_journal();
        let mut keys: Vec<u8> = journal.iter().map(|(k, _)| *k).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), journal.len(), "each key once");
        for (k, was) in &journal {
            assert_eq!(was.as_ref(), before.get(k), "value before of {k}");
        }
        for k in 0..12u8 {
            if before.get(&k) != map.get(&k) {
                assert!(keys.contains(&k), "changed key {k} journaled");
            }
        }
        assert!(map.take_journal().is_empty(), "taken");
    }
}

/// The journal is scratch: two maps with the same entries are equal and hash alike
/// whatever their journals hold.
#[test]
fn journal_is_not_state() {
    let mut a: Journaled<u8, u32> = [(1, 1)].into_iter().collect();
    let b: Journaled<u8, u32> = [(1, 2)].into_iter().collect();
    *a.get_mut(&1).unwrap() = 2;
    assert_eq!(a, b);
    let hash = |m: &Journaled<u8, u32>| {
        let mut h = std::hash::DefaultHasher::new();
        m.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&a), hash(&b));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}
