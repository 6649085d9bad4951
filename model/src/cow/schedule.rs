//! [`Schedule`]: timers in firing order, with an index by timer so that cancelling one
//! or asking whether one is set costs a lookup, not a walk over every timer.

use super::CowSet;
use crate::time::Millis;
use serde::{Serialize, Serializer};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Bound;

/// A set of `(when, timer)` in firing order (as a `CowSet<(Millis, T)>`) and the same
/// pairs by timer. The index is a function of the set: it takes no part in equality,
/// ordering, hashing, `Debug` or serialization, which are the set's.
#[derive(Clone)]
pub struct Schedule<T> {
    by_time: CowSet<(Millis, T)>,
    by_timer: CowSet<(T, Millis)>,
}

impl<T> Schedule<T> {
    pub const fn new() -> Self {
        Schedule {
            by_time: CowSet::new(),
            by_timer: CowSet::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.by_time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_time.is_empty()
    }
}

impl<T: Ord + Clone> Schedule<T> {
    /// The timers, in firing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &(Millis, T)> + ExactSizeIterator {
        self.by_time.iter()
    }

    /// The next timer to fire.
    pub fn first(&self) -> Option<&(Millis, T)> {
        self.by_time.first()
    }

    /// Sets `timer` to fire at `at`; `true` if it was not already set for then.
    pub fn insert(&mut self, at: Millis, timer: T) -> bool {
        self.by_timer.insert((timer.clone(), at));
        self.by_time.insert((at, timer))
    }

    /// Takes the next timer to fire.
    pub fn pop_first(&mut self) -> Option<(Millis, T)> {
        let (at, timer) = self.by_time.pop_first()?;
        self.by_timer.remove(&(timer.clone(), at));
        Some((at, timer))
    }

    /// When `timer` is set, earliest first.
    fn times_of(&self, timer: &T) -> impl Iterator<Item = Millis> + '_ {
        let from = Bound::Included((timer.clone(), Millis(0)));
        let to = Bound::Included((timer.clone(), Millis(u64::MAX)));
        self.by_timer.range((from, to)).map(|(_, at)| *at)
    }

    /// Whether `timer` is set (for any time).
    pub fn contains_timer(&self, timer: &T) -> bool {
        self.times_of(timer).next().is_some()
    }

    /// Cancels `timer` wherever it is set.
    pub fn cancel(&mut self, timer: &T) {
        let times: Vec<Millis> = self.times_of(timer).collect();
        for at in times {
            self.by_timer.remove(&(timer.clone(), at));
            self.by_time.remove(&(at, timer.clone()));
        }
    }
}

impl<T> Default for Schedule<T> {
    fn default() -> Self {
        Schedule::new()
    }
}

impl<T: Ord> PartialEq for Schedule<T> {
    fn eq(&self, other: &Self) -> bool {
        self.by_time == other.by_time
    }
}

impl<T: Ord> Eq for Schedule<T> {}

impl<T: Ord> PartialOrd for Schedule<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Ord> Ord for Schedule<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.by_time.cmp(&other.by_time)
    }
}

impl<T: Ord + Hash> Hash for Schedule<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.by_time.hash(state);
    }
}

impl<T: Ord + fmt::Debug> fmt::Debug for Schedule<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.by_time.fmt(f)
    }
}

impl<T: Ord + Serialize> Serialize for Schedule<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.by_time.serialize(serializer)
    }
}
