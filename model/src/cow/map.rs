//! [`CowMap`]: an ordered map with `BTreeMap`'s interface over a copy-on-write sorted
//! vector, and its [`Entry`].

use super::digest::{Digest, digest_hasher};
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// An ordered map with `BTreeMap`'s interface and a copy-on-write sorted vector inside.
pub struct CowMap<K, V> {
    entries: Option<Arc<Entries<K, V>>>,
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

    pub(super) fn slice(&self) -> &[(K, V)] {
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
    pub(super) fn insert_at(&mut self, i: usize, key: K, value: V) {
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
    pub(super) fn search<Q>(&self, key: &Q) -> Result<usize, usize>
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
