//! [`Derived`]: a value computed from the rest of a state (an index), which is not
//! itself state.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

/// A value that is a function of the other fields of the struct holding it (an index
/// kept beside a map to look it up by another key). It takes no part in equality,
/// ordering or hashing (two states that agree on everything else agree on it), and
/// prints as `_`; skip it when serializing (`#[serde(skip)]`). The holder must keep it
/// in step with what it is derived from.
#[derive(Clone, Default)]
pub struct Derived<T>(pub T);

impl<T> Deref for Derived<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Derived<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> PartialEq for Derived<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Eq for Derived<T> {}

impl<T> PartialOrd for Derived<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Derived<T> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<T> Hash for Derived<T> {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl<T> fmt::Debug for Derived<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_")
    }
}
