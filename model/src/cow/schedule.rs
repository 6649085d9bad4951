//! [`Schedule`]: timers in firing order, with an index by timer once they are many, so
//! that cancelling one or asking whether one is set costs a lookup, not a walk over
//! every timer.

use super::CowSet;
use crate::time::Millis;
use std::ops::Bound;

/// A set of `(when, timer)` in firing order (as a `CowSet<(Millis, T)>`) and, once it
/// holds more than [`INDEX_PAST`] timers, the same pairs by timer. A few timers (the
/// checker's case) are walked, as a plain set would be: an index would cost the checker
/// a second set to copy at every step. The index is a function of the set: it takes no
/// part in equality, ordering, hashing, `Debug` or serialization, which are the set's.
#[derive(Clone)]
pub struct Schedule<T> {
    by_time: CowSet<(Millis, T)>,
    by_timer: Option<CowSet<(T, Millis)>>,
}

/// Past this many timers the schedule keeps an index by timer; below a quarter of it, not.
pub const INDEX_PAST: usize = 64;

impl<T> Schedule<T> {
    pub const fn new() -> Self {
        Schedule {
            by_time: CowSet::new(),
            by_timer: None,
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
        if let Some(index) = &mut self.by_timer {
            index.insert((timer.clone(), at));
        }
        let new = self.by_time.insert((at, timer));
        self.reindex();
        new
    }

    /// Takes the next timer to fire.
    pub fn pop_first(&mut self) -> Option<(Millis, T)> {
        let (at, timer) = self.by_time.pop_first()?;
        if let Some(index) = &mut self.by_timer {
            index.remove(&(timer.clone(), at));
        }
        self.reindex();
        Some((at, timer))
    }

    /// When `timer` is set, earliest first (with the index).
    fn times_of<'a>(
        index: &'a CowSet<(T, Millis)>,
        timer: &T,
    ) -> impl Iterator<Item = Millis> + 'a {
        let from = Bound::Included((timer.clone(), Millis(0)));
        let to = Bound::Included((timer.clone(), Millis(u64::MAX)));
        index.range((from, to)).map(|(_, at)| *at)
    }

    /// Whether `timer` is set (for any time).
    pub fn contains_timer(&self, timer: &T) -> bool {
        match &self.by_timer {
            Some(index) => Self::times_of(index, timer).next().is_some(),
            None => self.by_time.iter().any(|(_, t)| t == timer),
        }
    }

    /// Cancels `timer` wherever it is set.
    pub fn cancel(&mut self, timer: &T) {
        let Some(index) = &mut self.by_timer else {
            self.by_time.retain(|(_, t)| t != timer);
            return;
        };
        loop {
            let Some(at) = Self::times_of(index, timer).next() else {
                break;
            };
            index.remove(&(timer.clone(), at));
            self.by_time.remove(&(at, timer.clone()));
        }
        self.reindex();
    }

    /// Builds the index past [`INDEX_PAST`] timers, drops it below a quarter of that.
    fn reindex(&mut self) {
        let len = self.by_time.len();
        match &self.by_timer {
            None if len > INDEX_PAST => {
                let index = self
                    .by_time
                    .iter()
                    .map(|(at, t)| (t.clone(), *at))
                    .collect();
                self.by_timer = Some(index);
            }
            Some(_) if len < INDEX_PAST / 4 => self.by_timer = None,
            _ => {}
        }
    }
}

impl<T> Default for Schedule<T> {
    fn default() -> Self {
        Schedule::new()
    }
}

as_field!(Schedule<T>, by_time);
