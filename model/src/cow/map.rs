//! [`CowMap`]: an ordered map with `BTreeMap`'s interface over copy-on-write entries
//! (a sorted vector while few, a persistent B-tree past that: `entries.rs`), and its
//! [`Entry`].

use super::digest::{Digest, digest_hasher};
use super::entries::{Entries, Iter, Range};
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::RangeBounds;
use std::sync::Arc;

/// An ordered map with `BTreeMap`'s interface and copy-on-write entries inside.
pub struct CowMap<K, V> {
    shared: Option<Arc<Shared<K, V>>>,
}

/// The entries one or more clones share, with their hash once someone asked for it.
///
/// The checker fingerprints every generated state, and a generated state shares most of
/// its collections with its parent: caching each collection's hash makes fingerprinting
/// an unchanged collection one `write_u64` instead of a walk over its entries.
struct Shared<K, V> {
    entries: Entries<K, V>,
    /// A function of `entries` alone (a fixed-key hasher), reset by every mutation.
    hash: Digest,
}

impl<K: Clone, V: Clone> Clone for Shared<K, V> {
    fn clone(&self) -> Self {
        Shared {
            entries: self.entries.clone(),
            hash: Digest::new(),
        }
    }
}

fn shared<K, V>(entries: Entries<K, V>) -> Option<Arc<Shared<K, V>>> {
    (entries.len() > 0).then(|| {
        Arc::new(Shared {
            entries,
            hash: Digest::new(),
        })
    })
}

impl<K, V> CowMap<K, V> {
    pub const fn new() -> Self {
        CowMap { shared: None }
    }

    pub fn len(&self) -> usize {
        self.shared.as_ref().map_or(0, |s| s.entries.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&mut self) {
        self.shared = None;
    }

    /// Whether another clone still refers to these entries.
    pub(super) fn is_shared(&self) -> bool {
        self.if_shared().is_some()
    }

    /// The entries, if another clone still refers to them.
    fn if_shared(&self) -> Option<&Entries<K, V>> {
        self.shared
            .as_ref()
            .filter(|s| Arc::strong_count(s) > 1)
            .map(|s| &s.entries)
    }
}

impl<K: Ord, V> CowMap<K, V> {
    pub fn iter(&self) -> Iter<'_, K, V> {
        match &self.shared {
            Some(s) => s.entries.iter(),
            None => Iter::empty(),
        }
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator + Clone {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone {
        self.iter().map(|(_, v)| v)
    }

    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.shared.as_ref()?.entries.first()
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.get_key_value(key).map(|(_, v)| v)
    }

    pub fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.shared.as_ref()?.entries.get_key_value(key)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.get_key_value(key).is_some()
    }

    /// The entries whose keys lie in `range`, in key order.
    pub fn range<Q, R>(&self, range: R) -> Range<'_, K, V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
        R: RangeBounds<Q>,
    {
        match &self.shared {
            Some(s) => s.entries.range(range),
            None => Range::empty(),
        }
    }
}

impl<K: Ord, V: PartialEq> CowMap<K, V> {
    /// The entries of this map that `before` lacks or holds with another value, in key
    /// order: what a step added or changed, if `before` is a clone taken before it. A
    /// clone that shares everything costs nothing; a large map (a tree) costs what
    /// changed, not what it holds.
    pub fn changes_from<'a>(
        &'a self,
        before: &'a CowMap<K, V>,
    ) -> Box<dyn Iterator<Item = (&'a K, &'a V)> + 'a> {
        match (&self.shared, &before.shared) {
            (None, _) => Box::new(std::iter::empty()),
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => Box::new(std::iter::empty()),
            (Some(a), Some(b)) => a.entries.changes_from(&b.entries),
            (Some(a), None) => Box::new(a.entries.iter()),
        }
    }
}

impl<K: Ord + Clone, V: Clone> CowMap<K, V> {
    /// The entries, unshared: copies them if another clone still refers to them (a
    /// tree's copy is a reference count), and forgets their digest.
    fn entries_mut(&mut self) -> &mut Entries<K, V> {
        let shared = Arc::make_mut(self.shared.get_or_insert_with(|| {
            Arc::new(Shared {
                entries: Entries::Sorted(Vec::new()),
                hash: Digest::new(),
            })
        }));
        shared.hash = Digest::new();
        &mut shared.entries
    }

    /// Drops emptied entries (an empty map holds none, as a new one).
    fn tidy(&mut self) {
        if self.is_empty() {
            self.shared = None;
        }
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> {
        let entries = match self.shared {
            Some(_) => &mut self.entries_mut().as_vec_mut()[..],
            None => &mut [],
        };
        entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> {
        self.iter_mut().map(|(_, v)| v)
    }

    /// Keeps the entries `keep` accepts.
    pub fn retain(&mut self, keep: impl FnMut(&K, &mut V) -> bool) {
        if self.shared.is_none() {
            return;
        }
        // Shared entries are not copied and then filtered: the kept entries are copied once.
        if let Some(entries) = self.if_shared() {
            self.shared = shared(entries.copy_kept(keep));
            return;
        }
        self.entries_mut().retain(keep);
        self.tidy();
    }

    pub fn pop_first(&mut self) -> Option<(K, V)> {
        if self.if_shared().is_some() {
            let key = self.first_key_value()?.0.clone();
            return self.remove_entry(&key);
        }
        self.shared.as_ref()?;
        let first = self.entries_mut().pop_first();
        self.tidy();
        first
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        // Shared entries are copied only if the key is there; unshared ones are searched once.
        if self.if_shared().is_some() && !self.contains_key(key) {
            return None;
        }
        let shared = Arc::make_mut(self.shared.as_mut()?);
        shared.hash = Digest::new();
        shared.entries.get_mut(key)
    }

    /// Inserts, returning the value the key had. Shared vector entries are copied once,
    /// around the new entry, into a vector of the right size (not copied, then grown,
    /// then shifted).
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(entries) = self.if_shared()
            && let Some(copy) = entries.copy_inserting(&key, &value)
        {
            self.shared = shared(copy);
            return None;
        }
        self.entries_mut().insert(key, value)
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.remove_entry(key).map(|(_, v)| v)
    }

    /// Removes `key`'s entry. Shared vector entries are copied once, without it (not
    /// copied, then shifted).
    fn remove_entry<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        if let Some(entries) = self.if_shared() {
            if let Entries::Sorted(_) = entries {
                let (copy, removed) = entries.copy_removing(key)?;
                self.shared = shared(copy);
                return Some(removed);
            }
            if !self.contains_key(key) {
                return None;
            }
        }
        // Unshared: searched once (a miss only forgets the cached digest).
        let removed = self.entries_mut().remove(key);
        self.tidy();
        removed
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
        if !self.map.contains_key(&self.key) {
            self.map.insert(self.key.clone(), make());
        }
        self.map.get_mut(&self.key).expect("inserted above")
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
            shared: self.shared.clone(),
        }
    }
}

impl<K, V> Default for CowMap<K, V> {
    fn default() -> Self {
        CowMap::new()
    }
}

impl<K: Ord, V: PartialEq> PartialEq for CowMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.shared, &other.shared) {
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => true,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl<K: Ord, V: Eq> Eq for CowMap<K, V> {}

impl<K: Ord, V: PartialOrd> PartialOrd for CowMap<K, V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.iter().partial_cmp(other.iter())
    }
}

impl<K: Ord, V: Ord> Ord for CowMap<K, V> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.iter().cmp(other.iter())
    }
}

/// A 64-bit digest of the length and every entry in key order, computed once per shared
/// version of the entries (see [`Shared`]) with a fixed-key hasher: equal contents give
/// equal hashes within a build, whatever the collection's history or the form its
/// entries take (aHash may differ between CPUs with and without AES instructions;
/// fingerprints never leave a run).
impl<K: Ord + Hash, V: Hash> Hash for CowMap<K, V> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let digest = match &self.shared {
            Some(shared) if shared.entries.len() > 0 => shared.hash.get_or_init(|| {
                let mut h = digest_hasher();
                h.write_usize(shared.entries.len());
                for (k, v) in shared.entries.iter() {
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

impl<K: Ord + fmt::Debug, V: fmt::Debug> fmt::Debug for CowMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Ord + Serialize, V: Serialize> Serialize for CowMap<K, V> {
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

impl<'a, K: Ord, V> IntoIterator for &'a CowMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
