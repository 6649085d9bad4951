//! [`CowSet`]: an ordered set with `BTreeSet`'s interface, a [`CowMap`] with unit values.

use super::entries::Iter;
use super::map::CowMap;
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::ops::RangeBounds;

/// An ordered set with `BTreeSet`'s interface: a [`CowMap`] with unit values.
#[derive(Clone)]
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

    pub fn clear(&mut self) {
        self.map.clear();
    }
}

impl<T: Ord> CowSet<T> {
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator + Clone {
        self.map.keys()
    }

    pub fn first(&self) -> Option<&T> {
        self.map.first_key_value().map(|(k, _)| k)
    }

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

impl<T: Ord> CowSet<T> {
    /// The elements of this set that `before` lacks, in order ([`CowMap::changes_from`]).
    pub fn added_since<'a>(&'a self, before: &'a CowSet<T>) -> impl Iterator<Item = &'a T> {
        self.map.changes_from(&before.map).map(|(t, _)| t)
    }
}

impl<T: Ord + Clone> CowSet<T> {
    /// Inserts; `true` if the value was not there.
    pub fn insert(&mut self, value: T) -> bool {
        // Shared: `contains_key` first, so that a value already there copies nothing.
        if self.map.is_shared() && self.map.contains_key(&value) {
            return false;
        }
        self.map.insert(value, ()).is_none()
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
}

as_field!(@compare CowSet<T>, map);

impl<T> Default for CowSet<T> {
    fn default() -> Self {
        CowSet::new()
    }
}

impl<T: Ord + fmt::Debug> fmt::Debug for CowSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<T: Ord + Serialize> Serialize for CowSet<T> {
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

impl<'a, T: Ord> IntoIterator for &'a CowSet<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Map<Iter<'a, T, ()>, fn((&'a T, &'a ())) -> &'a T>;

    fn into_iter(self) -> Self::IntoIter {
        self.map.iter().map(|(t, _)| t)
    }
}
