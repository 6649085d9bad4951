//! [`Entries`]: the entries of a [`CowMap`](super::CowMap), as a sorted vector while
//! they are few and as a persistent B-tree (`imbl::OrdMap`) past [`TREE_PAST`].
//!
//! The checker's collections hold a handful of entries, where a sorted vector is the
//! cheapest thing to search, clone and hash. The sandbox holds up to a million Payments
//! and their timers, where a sorted vector makes every insert and every removal of the
//! first entry shift the whole vector: the tree makes them O(log n), and cloning it (when
//! a clone of the map shares it) is a reference-count increment, as the vector's `Arc`.
//! Either way the entries iterate in key order, so nothing observable (iteration, hash,
//! `Debug`, serialization) depends on which one holds them.
//! `payhub-verify bench --cow` measures the two (and the tree alone) side by side.

use std::borrow::Borrow;
use std::ops::RangeBounds;

type Tree<K, V> = imbl::OrdMap<K, V>;

/// A vector past this many entries becomes a tree.
pub(super) const TREE_PAST: usize = 64;
/// A tree below this many entries becomes a vector again (well below [`TREE_PAST`], so
/// a map that hovers around the threshold does not switch at every step).
const VEC_BELOW: usize = TREE_PAST / 4;

pub(super) enum Entries<K, V> {
    Sorted(Vec<(K, V)>),
    Tree(Tree<K, V>),
}

impl<K: Clone, V: Clone> Clone for Entries<K, V> {
    fn clone(&self) -> Self {
        match self {
            Entries::Sorted(v) => Entries::Sorted(v.clone()),
            Entries::Tree(t) => Entries::Tree(t.clone()),
        }
    }
}

impl<K, V> Entries<K, V> {
    pub(super) fn len(&self) -> usize {
        match self {
            Entries::Sorted(v) => v.len(),
            Entries::Tree(t) => t.len(),
        }
    }
}

impl<K: Ord, V> Entries<K, V> {
    pub(super) fn iter(&self) -> Iter<'_, K, V> {
        Pairs(match self {
            Entries::Sorted(v) => Either::Sorted(v.iter()),
            Entries::Tree(t) => Either::Tree(t.iter()),
        })
    }

    pub(super) fn first(&self) -> Option<(&K, &V)> {
        match self {
            Entries::Sorted(v) => v.first().map(|(k, v)| (k, v)),
            Entries::Tree(t) => t.get_min().map(|(k, v)| (k, v)),
        }
    }

    pub(super) fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match self {
            Entries::Sorted(v) => {
                let i = search(v, key).ok()?;
                let (k, v) = &v[i];
                Some((k, v))
            }
            Entries::Tree(t) => t.get_key_value(key),
        }
    }

    pub(super) fn range<Q, R>(&self, range: R) -> Range<'_, K, V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
        R: RangeBounds<Q>,
    {
        use std::ops::Bound;
        Pairs(match self {
            Entries::Sorted(v) => {
                let start = match range.start_bound() {
                    Bound::Included(q) => v.partition_point(|(k, _)| k.borrow() < q),
                    Bound::Excluded(q) => v.partition_point(|(k, _)| k.borrow() <= q),
                    Bound::Unbounded => 0,
                };
                let end = match range.end_bound() {
                    Bound::Included(q) => v.partition_point(|(k, _)| k.borrow() <= q),
                    Bound::Excluded(q) => v.partition_point(|(k, _)| k.borrow() < q),
                    Bound::Unbounded => v.len(),
                };
                Either::Sorted(v[start..end.max(start)].iter())
            }
            Entries::Tree(t) => Either::Tree(t.range(range)),
        })
    }
}

impl<K: Ord, V: PartialEq> Entries<K, V> {
    /// The entries of `self` that `before` lacks or holds with another value, in key
    /// order. Two trees (one a copy of the other, then changed) are compared by skipping
    /// the nodes they still share: this costs what changed, not what they hold.
    pub(super) fn changes_from<'a>(
        &'a self,
        before: &'a Entries<K, V>,
    ) -> Box<dyn Iterator<Item = (&'a K, &'a V)> + 'a> {
        use imbl::ordmap::DiffItem;
        match (self, before) {
            (Entries::Tree(after), Entries::Tree(before)) => {
                Box::new(before.diff(after).filter_map(|d| match d {
                    DiffItem::Add(k, v) | DiffItem::Update { new: (k, v), .. } => Some((k, v)),
                    DiffItem::Remove(..) => None,
                }))
            }
            _ => Box::new(
                self.iter()
                    .filter(move |(k, v)| before.get_key_value(*k).map(|(_, b)| b) != Some(*v)),
            ),
        }
    }
}

impl<K: Ord + Clone, V: Clone> Entries<K, V> {
    /// Inserts, returning the value the key had.
    pub(super) fn insert(&mut self, key: K, value: V) -> Option<V> {
        let old = match self {
            Entries::Sorted(v) => match search(v, &key) {
                Ok(i) => Some(std::mem::replace(&mut v[i].1, value)),
                Err(i) => {
                    v.insert(i, (key, value));
                    None
                }
            },
            Entries::Tree(t) => t.insert(key, value),
        };
        self.rebalance();
        old
    }

    /// A copy of these (shared) entries with `key` inserted, for a vector copied once
    /// into one of the right size; `None` if the key is there or the entries are a tree
    /// (where a copy is cheap and the caller inserts into it).
    pub(super) fn copy_inserting(&self, key: &K, value: &V) -> Option<Entries<K, V>> {
        let Entries::Sorted(old) = self else {
            return None;
        };
        let i = search(old, key).err()?;
        if old.len() >= TREE_PAST {
            return None;
        }
        let mut v = Vec::with_capacity(old.len() + 1);
        v.extend_from_slice(&old[..i]);
        v.push((key.clone(), value.clone()));
        v.extend_from_slice(&old[i..]);
        Some(Entries::Sorted(v))
    }

    /// A copy of these (shared) entries without `key`'s entry, and that entry, for a
    /// vector copied once without it; `None` if the key is absent or the entries are a
    /// tree (whose copy is cheap: the caller removes from it).
    pub(super) fn copy_removing<Q>(&self, key: &Q) -> Option<(Entries<K, V>, (K, V))>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let Entries::Sorted(old) = self else {
            return None;
        };
        let i = search(old, key).ok()?;
        let v: Vec<(K, V)> = old[..i].iter().chain(&old[i + 1..]).cloned().collect();
        Some((Entries::Sorted(v), old[i].clone()))
    }

    pub(super) fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match self {
            Entries::Sorted(v) => {
                let i = search(v, key).ok()?;
                Some(&mut v[i].1)
            }
            Entries::Tree(t) => t.get_mut(key),
        }
    }

    pub(super) fn remove<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let removed = match self {
            Entries::Sorted(v) => {
                let i = search(v, key).ok()?;
                Some(v.remove(i))
            }
            Entries::Tree(t) => t.remove_with_key(key),
        };
        self.rebalance();
        removed
    }

    pub(super) fn pop_first(&mut self) -> Option<(K, V)> {
        let removed = match self {
            Entries::Sorted(v) if v.is_empty() => None,
            Entries::Sorted(v) => Some(v.remove(0)),
            Entries::Tree(t) => {
                let key = t.get_min()?.0.clone();
                t.remove_with_key(&key)
            }
        };
        self.rebalance();
        removed
    }

    /// The entries as a mutable vector: a tree becomes a vector first (the tree has no
    /// mutable iteration; this costs what walking it costs, and a later insert makes it
    /// a tree again).
    pub(super) fn as_vec_mut(&mut self) -> &mut Vec<(K, V)> {
        if let Entries::Tree(t) = self {
            let v: Vec<(K, V)> = std::mem::take(t).into_iter().collect();
            *self = Entries::Sorted(v);
        }
        match self {
            Entries::Sorted(v) => v,
            Entries::Tree(_) => unreachable!("made a vector above"),
        }
    }

    /// The entries `keep` accepts, copied from these (shared) ones.
    pub(super) fn copy_kept(&self, mut keep: impl FnMut(&K, &mut V) -> bool) -> Entries<K, V> {
        let kept: Vec<(K, V)> = self
            .iter()
            .filter_map(|(k, v)| {
                let mut v = v.clone();
                keep(k, &mut v).then(|| (k.clone(), v))
            })
            .collect();
        let mut entries = Entries::Sorted(kept);
        entries.rebalance();
        entries
    }

    pub(super) fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        match self {
            Entries::Sorted(v) => v.retain_mut(|(k, v)| keep(k, v)),
            Entries::Tree(_) => *self = self.copy_kept(keep),
        }
        self.rebalance();
    }

    /// A vector past [`TREE_PAST`] becomes a tree, a tree below [`VEC_BELOW`] a vector.
    fn rebalance(&mut self) {
        match self {
            Entries::Sorted(v) if v.len() > TREE_PAST => {
                *self = Entries::Tree(std::mem::take(v).into_iter().collect());
            }
            Entries::Tree(t) if t.len() < VEC_BELOW => {
                *self = Entries::Sorted(std::mem::take(t).into_iter().collect());
            }
            _ => {}
        }
    }
}

fn search<K: Borrow<Q>, Q: Ord + ?Sized, V>(v: &[(K, V)], key: &Q) -> Result<usize, usize> {
    v.binary_search_by(|(k, _)| k.borrow().cmp(key))
}

enum Either<A, B> {
    Sorted(A),
    Tree(B),
}

impl<A: Clone, B: Clone> Clone for Either<A, B> {
    fn clone(&self) -> Self {
        match self {
            Either::Sorted(a) => Either::Sorted(a.clone()),
            Either::Tree(b) => Either::Tree(b.clone()),
        }
    }
}

/// Entries in key order, from either form: the sorted vector's slice or the tree's
/// iterator `T` (all of them, [`Iter`], or a range of keys, [`Range`]).
pub struct Pairs<'a, K, V, T>(Either<std::slice::Iter<'a, (K, V)>, T>);

/// The entries of a [`CowMap`](super::CowMap) in key order.
pub type Iter<'a, K, V> = Pairs<'a, K, V, imbl::ordmap::Iter<'a, K, V, Ptr>>;

/// The entries of a [`CowMap`](super::CowMap) within a range of keys, in key order.
pub type Range<'a, K, V> = Pairs<'a, K, V, imbl::ordmap::RangedIter<'a, K, V, Ptr>>;

type Ptr = imbl::shared_ptr::DefaultSharedPtr;

impl<K, V, T: Clone> Clone for Pairs<'_, K, V, T> {
    fn clone(&self) -> Self {
        Pairs(self.0.clone())
    }
}

impl<'a, K: 'a, V: 'a, T: Iterator<Item = (&'a K, &'a V)>> Iterator for Pairs<'a, K, V, T> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Either::Sorted(i) => i.next().map(|(k, v)| (k, v)),
            Either::Tree(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            Either::Sorted(i) => i.size_hint(),
            Either::Tree(i) => i.size_hint(),
        }
    }
}

impl<'a, K: 'a, V: 'a, T: DoubleEndedIterator<Item = (&'a K, &'a V)>> DoubleEndedIterator
    for Pairs<'a, K, V, T>
{
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Either::Sorted(i) => i.next_back().map(|(k, v)| (k, v)),
            Either::Tree(i) => i.next_back(),
        }
    }
}

impl<'a, K: 'a, V: 'a, T: ExactSizeIterator<Item = (&'a K, &'a V)>> ExactSizeIterator
    for Pairs<'a, K, V, T>
{
}

impl<K, V, T> Pairs<'_, K, V, T> {
    pub(super) fn empty() -> Self {
        Pairs(Either::Sorted([].iter()))
    }
}
