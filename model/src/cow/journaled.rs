//! [`Journaled`]: a [`CowMap`] that remembers, for the step under way, the value each
//! key had before the step first wrote it (an undo journal).
//!
//! The world observes what a platform step did to the store (which Payments, attempts
//! and refunds are new or changed). Comparing against a clone of the whole store taken
//! before the step made the step's first write copy the whole store (the clone shares
//! it): a create cost time proportional to the Payments held. The journal holds only
//! the entries the step wrote, so observing costs what the step touched.
//!
//! Reads go through `Deref` to the map; every write goes through a method here that
//! journals the key first (there is no `DerefMut`, so a write that skips the journal
//! does not compile). The journal is scratch, not state: it takes no part in equality,
//! hashing, ordering, `Debug` or serialization.

use super::CowMap;
use std::borrow::Borrow;
use std::ops::Deref;

/// A [`CowMap`] with an undo journal of the keys written since [`Journaled::begin`].
#[derive(Clone)]
pub struct Journaled<K, V> {
    map: CowMap<K, V>,
    /// Each key written since `begin`, once, with the value it had then (`None`: absent).
    undo: Vec<(K, Option<V>)>,
}

impl<K, V> Journaled<K, V> {
    pub const fn new() -> Self {
        Journaled {
            map: CowMap::new(),
            undo: Vec::new(),
        }
    }

    /// Starts a step: forgets what earlier steps wrote.
    pub fn begin(&mut self) {
        self.undo.clear();
    }

    /// What was written since [`Journaled::begin`]: each key once, in the order first
    /// written, with the value it had before.
    pub fn take_journal(&mut self) -> Vec<(K, Option<V>)> {
        std::mem::take(&mut self.undo)
    }
}

impl<K: Ord + Clone, V: Clone> Journaled<K, V> {
    /// Notes `key`'s value before its first write of this step.
    fn journal(&mut self, key: &K) {
        if self.undo.iter().any(|(k, _)| k == key) {
            return;
        }
        let before = self.map.get(key).cloned();
        self.undo.push((key.clone(), before));
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (k, _) = self.map.get_key_value(key)?;
        let k = k.clone();
        self.journal(&k);
        self.map.get_mut(key)
    }

    /// Inserts, returning the value the key had.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.journal(&key);
        self.map.insert(key, value)
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (k, _) = self.map.get_key_value(key)?;
        let k = k.clone();
        self.journal(&k);
        self.map.remove(key)
    }
}

impl<K, V> Deref for Journaled<K, V> {
    type Target = CowMap<K, V>;

    fn deref(&self) -> &CowMap<K, V> {
        &self.map
    }
}

impl<K, V> Default for Journaled<K, V> {
    fn default() -> Self {
        Journaled::new()
    }
}

impl<K: Ord + Clone, V: Clone> FromIterator<(K, V)> for Journaled<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Journaled {
            map: iter.into_iter().collect(),
            undo: Vec::new(),
        }
    }
}

as_field!(Journaled<K, V>, map);
