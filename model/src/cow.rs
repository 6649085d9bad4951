//! Copy-on-write ordered collections for the state the checker hashes and clones.
//!
//! The exhaustive checker clones the whole world for every generated state, and most
//! steps change one or two collections of it. `std`'s `BTreeMap` allocates a whole
//! node (eleven slots) even for one entry and deep-copies on clone; these collections
//! keep their entries as one sorted `Vec` behind an `Arc`: cloning is a reference-count
//! increment, the first mutation of a shared copy copies just that collection, and an
//! unshared one is mutated in place (the simulator's case).
//!
//! They iterate, compare, hash, print (`Debug`) and serialize exactly like `BTreeMap` and
//! `BTreeSet`: in key order, so the state stays canonical (the checker deduplicates
//! states by a hash of them). Lookups are binary searches; the collections of this model
//! hold a handful of entries, where a sorted vector beats a tree.

use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// An ordered map with `BTreeMap`'s interface and a copy-on-write sorted vector inside.
pub struct CowMap<K, V> {
    entries: Option<Arc<Entries<K, V>>>,
}

/// A cached digest: 0 until someone asks for it, then the digest (a digest of 0 is kept
/// as 1). Lighter than a `OnceLock`: two threads that ask at once both compute it and
/// store the same value, which is harmless, so no thread ever waits for another.
struct Digest(AtomicU64);

impl Digest {
    const fn new() -> Digest {
        Digest(AtomicU64::new(0))
    }

    fn get_or_init(&self, compute: impl FnOnce() -> u64) -> u64 {
        match self.0.load(Relaxed) {
            0 => {
                let digest = compute().max(1);
                self.0.store(digest, Relaxed);
                digest
            }
            digest => digest,
        }
    }
}

/// The entries one or more clones share, with their hash once someone asked for it.
///
/// The checker fingerprints every generated state, and a generated state shares most of
/// its collections with its parent: caching each collection's hash makes fingerprinting
/// an unchanged collection one `write_u64` instead of a walk over its entries.
struct Entries<K, V> {
    entries: Vec<(K, V)>,
    /// A function of `entries` alone (a fixed-key hasher), reset by every mutation.
    hash: Digest,
}

impl<K: Clone, V: Clone> Clone for Entries<K, V> {
    fn clone(&self) -> Self {
        Entries {
            entries: self.entries.clone(),
            hash: Digest::new(),
        }
    }
}

impl<K, V> CowMap<K, V> {
    pub const fn new() -> Self {
        CowMap { entries: None }
    }

    fn slice(&self) -> &[(K, V)] {
        match &self.entries {
            Some(e) => &e.entries,
            None => &[],
        }
    }

    pub fn len(&self) -> usize {
        self.slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.slice().is_empty()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator + Clone {
        self.slice().iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator + Clone {
        self.slice().iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone {
        self.slice().iter().map(|(_, v)| v)
    }

    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.slice().first().map(|(k, v)| (k, v))
    }

    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.slice().last().map(|(k, v)| (k, v))
    }

    pub fn clear(&mut self) {
        self.entries = None;
    }
}

impl<K: Clone, V: Clone> CowMap<K, V> {
    /// The entries, unshared: copies them if another clone still refers to them.
    fn vec_mut(&mut self) -> &mut Vec<(K, V)> {
        let shared = Arc::make_mut(self.entries.get_or_insert_with(|| {
            Arc::new(Entries {
                entries: Vec::new(),
                hash: Digest::new(),
            })
        }));
        shared.hash = Digest::new();
        &mut shared.entries
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> {
        let entries = match self.entries {
            Some(_) => &mut self.vec_mut()[..],
            None => &mut [],
        };
        entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> {
        self.iter_mut().map(|(_, v)| v)
    }

    /// Keeps the entries `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        if self.entries.is_none() {
            return;
        }
        // A shared vector is not copied and then filtered: the kept entries are copied once.
        if let Some(shared) = &self.entries
            && Arc::strong_count(shared) > 1
        {
            let kept: Vec<(K, V)> = shared
                .entries
                .iter()
                .filter_map(|(k, v)| {
                    let mut v = v.clone();
                    keep(k, &mut v).then(|| (k.clone(), v))
                })
                .collect();
            self.entries = (!kept.is_empty()).then(|| {
                Arc::new(Entries {
                    entries: kept,
                    hash: Digest::new(),
                })
            });
            return;
        }
        let entries = self.vec_mut();
        entries.retain_mut(|(k, v)| keep(k, v));
        if entries.is_empty() {
            self.entries = None;
        }
    }

    pub fn pop_first(&mut self) -> Option<(K, V)> {
        if self.is_empty() {
            return None;
        }
        Some(self.remove_at(0))
    }

    pub fn pop_last(&mut self) -> Option<(K, V)> {
        if self.is_empty() {
            return None;
        }
        Some(self.remove_at(self.len() - 1))
    }
}

impl<K: Clone, V: Clone> CowMap<K, V> {
    /// Inserts at position `i`. A shared vector is copied once, around the new entry,
    /// into a vector of the right size (not copied, then grown, then shifted).
    fn insert_at(&mut self, i: usize, key: K, value: V) {
        if let Some(shared) = &self.entries
            && Arc::strong_count(shared) > 1
        {
            let old = &shared.entries;
            let mut entries = Vec::with_capacity(old.len() + 1);
            entries.extend_from_slice(&old[..i]);
            entries.push((key, value));
            entries.extend_from_slice(&old[i..]);
            self.entries = Some(Arc::new(Entries {
                entries,
                hash: Digest::new(),
            }));
        } else {
            self.vec_mut().insert(i, (key, value));
        }
    }

    /// Removes the entry at position `i`; a shared vector is copied once, without it.
    fn remove_at(&mut self, i: usize) -> (K, V) {
        if let Some(shared) = &self.entries
            && Arc::strong_count(shared) > 1
        {
            let old = &shared.entries;
            let removed = old[i].clone();
            let entries: Vec<(K, V)> = old[..i].iter().chain(&old[i + 1..]).cloned().collect();
            self.entries = (!entries.is_empty()).then(|| {
                Arc::new(Entries {
                    entries,
                    hash: Digest::new(),
                })
            });
            return removed;
        }
        let entries = self.vec_mut();
        let removed = entries.remove(i);
        if entries.is_empty() {
            self.entries = None;
        }
        removed
    }
}

impl<K: Ord, V> CowMap<K, V> {
    fn search<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.slice().binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = self.search(key).ok()?;
        Some(&self.slice()[i].1)
    }

    pub fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = self.search(key).ok()?;
        let (k, v) = &self.slice()[i];
        Some((k, v))
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.search(key).is_ok()
    }

    /// The entries whose keys lie in `range`, in key order.
    pub fn range<Q, R>(&self, range: R) -> impl DoubleEndedIterator<Item = (&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
        R: RangeBounds<Q>,
    {
        let entries = self.slice();
        let start = match range.start_bound() {
            Bound::Included(q) => entries.partition_point(|(k, _)| k.borrow() < q),
            Bound::Excluded(q) => entries.partition_point(|(k, _)| k.borrow() <= q),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(q) => entries.partition_point(|(k, _)| k.borrow() <= q),
            Bound::Excluded(q) => entries.partition_point(|(k, _)| k.borrow() < q),
            Bound::Unbounded => entries.len(),
        };
        entries[start..end.max(start)].iter().map(|(k, v)| (k, v))
    }
}

impl<K: Ord + Clone, V: Clone> CowMap<K, V> {
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = self.search(key).ok()?;
        Some(&mut self.vec_mut()[i].1)
    }

    /// Inserts, returning the value the key had.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.search(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.vec_mut()[i].1, value)),
            Err(i) => {
                self.insert_at(i, key, value);
                None
            }
        }
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = self.search(key).ok()?;
        Some(self.remove_at(i).1)
    }

    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        Entry { map: self, key }
    }
}

/// A key's place in a [`CowMap`], as `btree_map::Entry`'s commonly used half.
pub struct Entry<'a, K, V> {
    map: &'a mut CowMap<K, V>,
    key: K,
}

impl<'a, K: Ord + Clone, V: Clone> Entry<'a, K, V> {
    pub fn or_insert_with(self, make: impl FnOnce() -> V) -> &'a mut V {
        let i = match self.map.search(&self.key) {
            Ok(i) => i,
            Err(i) => {
                self.map.insert_at(i, self.key, make());
                i
            }
        };
        &mut self.map.vec_mut()[i].1
    }

    pub fn or_insert(self, value: V) -> &'a mut V {
        self.or_insert_with(|| value)
    }

    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }

    pub fn and_modify(self, f: impl FnOnce(&mut V)) -> Self {
        if let Some(v) = self.map.get_mut(&self.key) {
            f(v);
        }
        self
    }
}

/// `map[&key]`: the value, or a panic if the key is absent (as `BTreeMap`).
impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> std::ops::Index<&Q> for CowMap<K, V> {
    type Output = V;

    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<K, V> Clone for CowMap<K, V> {
    fn clone(&self) -> Self {
        CowMap {
            entries: self.entries.clone(),
        }
    }
}

impl<K, V> Default for CowMap<K, V> {
    fn default() -> Self {
        CowMap::new()
    }
}

impl<K: PartialEq, V: PartialEq> PartialEq for CowMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.entries, &other.entries) {
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => true,
            _ => self.slice() == other.slice(),
        }
    }
}

impl<K: Eq, V: Eq> Eq for CowMap<K, V> {}

impl<K: PartialOrd, V: PartialOrd> PartialOrd for CowMap<K, V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.slice().partial_cmp(other.slice())
    }
}

impl<K: Ord, V: Ord> Ord for CowMap<K, V> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.slice().cmp(other.slice())
    }
}

/// The fixed-key hasher of the cached digests (aHash, as stateright's fingerprints; fast
/// on the short strings and small integers of this model).
fn digest_hasher() -> impl Hasher {
    use std::hash::BuildHasher;
    ahash::RandomState::with_seeds(
        0x7061_7968_7562_2d76,
        0x6572_6966_792d_636f,
        0x772d_6d61_702d_6469,
        0x6765_7374_2d73_6565,
    )
    .build_hasher()
}

/// A 64-bit digest of the length and every entry in key order, computed once per shared
/// version of the entries (see [`Entries`]) with a fixed-key hasher: equal contents give
/// equal hashes within a build, whatever the collection's history (aHash may differ
/// between CPUs with and without AES instructions; fingerprints never leave a run).
impl<K: Hash, V: Hash> Hash for CowMap<K, V> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let digest = match &self.entries {
            Some(shared) if !shared.entries.is_empty() => shared.hash.get_or_init(|| {
                let mut h = digest_hasher();
                h.write_usize(shared.entries.len());
                for (k, v) in &shared.entries {
                    k.hash(&mut h);
                    v.hash(&mut h);
                }
                h.finish()
            }),
            _ => 0,
        };
        state.write_u64(digest);
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for CowMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Serialize, V: Serialize> Serialize for CowMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<K: Ord + Clone, V: Clone> FromIterator<(K, V)> for CowMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = CowMap::new();
        map.extend(iter);
        map
    }
}

impl<K: Ord + Clone, V: Clone> Extend<(K, V)> for CowMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<'a, K, V> IntoIterator for &'a CowMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.slice().iter().map(|(k, v)| (k, v))
    }
}

/// An ordered set with `BTreeSet`'s interface: a [`CowMap`] with unit values.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CowSet<T> {
    map: CowMap<T, ()>,
}

impl<T> CowSet<T> {
    pub const fn new() -> Self {
        CowSet { map: CowMap::new() }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator + Clone {
        self.map.keys()
    }

    pub fn first(&self) -> Option<&T> {
        self.map.first_key_value().map(|(k, _)| k)
    }

    pub fn last(&self) -> Option<&T> {
        self.map.last_key_value().map(|(k, _)| k)
    }

    pub fn clear(&mut self) {
        self.map.clear();
    }
}

impl<T: Ord> CowSet<T> {
    pub fn contains<Q>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.contains_key(value)
    }

    pub fn range<Q, R>(&self, range: R) -> impl DoubleEndedIterator<Item = &T>
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
        R: RangeBounds<Q>,
    {
        self.map.range(range).map(|(k, _)| k)
    }
}

impl<T: Ord + Clone> CowSet<T> {
    /// Inserts; `true` if the value was not there.
    pub fn insert(&mut self, value: T) -> bool {
        match self.map.search(&value) {
            Ok(_) => false,
            Err(i) => {
                self.map.insert_at(i, value, ());
                true
            }
        }
    }

    /// Removes; `true` if the value was there.
    pub fn remove<Q>(&mut self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.remove(value).is_some()
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.map.retain(|k, _| keep(k));
    }

    pub fn pop_first(&mut self) -> Option<T> {
        self.map.pop_first().map(|(k, _)| k)
    }

    pub fn pop_last(&mut self) -> Option<T> {
        self.map.pop_last().map(|(k, _)| k)
    }
}

impl<T> Default for CowSet<T> {
    fn default() -> Self {
        CowSet::new()
    }
}

/// As [`CowMap`]'s: a cached digest of the elements.
impl<T: Hash> Hash for CowSet<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.map.hash(state);
    }
}

impl<T: fmt::Debug> fmt::Debug for CowSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<T: Serialize> Serialize for CowSet<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<T: Ord + Clone> FromIterator<T> for CowSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut set = CowSet::new();
        set.extend(iter);
        set
    }
}

impl<T: Ord + Clone> Extend<T> for CowSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for t in iter {
            self.insert(t);
        }
    }
}

impl<'a, T> IntoIterator for &'a CowSet<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (T, ())>, fn(&'a (T, ())) -> &'a T>;

    fn into_iter(self) -> Self::IntoIter {
        self.map.slice().iter().map(|(t, _)| t)
    }
}

/// A copy-on-write box for a large part of the world (the platform, the facts, the
/// merchants): cloning is a reference-count increment, and any mutable access copies the
/// part first if another clone still shares it (`Arc::make_mut`). It compares, prints
/// and serializes as the value inside, so the state stays canonical; it hashes as a
/// cached digest of the value (as [`CowMap`]), so an unchanged part costs the checker's
/// fingerprint one `write_u64`.
pub struct Shared<T>(Arc<Boxed<T>>);

struct Boxed<T> {
    value: T,
    hash: Digest,
}

impl<T: Clone> Clone for Boxed<T> {
    fn clone(&self) -> Self {
        Boxed {
            value: self.value.clone(),
            hash: Digest::new(),
        }
    }
}

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Arc::new(Boxed {
            value,
            hash: Digest::new(),
        }))
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0.value
    }
}

/// Copies the value first if it is shared, and forgets its digest.
impl<T: Clone> std::ops::DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        let boxed = Arc::make_mut(&mut self.0);
        boxed.hash = Digest::new();
        &mut boxed.value
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T: Default> Default for Shared<T> {
    fn default() -> Self {
        Shared::new(T::default())
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.value == other.0.value
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let digest = self.0.hash.get_or_init(|| {
            let mut h = digest_hasher();
            self.0.value.hash(&mut h);
            h.finish()
        });
        state.write_u64(digest);
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.value.fmt(f)
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.value.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

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
}
