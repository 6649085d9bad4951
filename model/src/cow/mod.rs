//! Copy-on-write ordered collections for the state the checker hashes and clones.
//!
//! The exhaustive checker clones the whole world for every generated state, and most
//! steps change one or two collections of it. `std`'s `BTreeMap` allocates a whole
//! node (eleven slots) even for one entry and deep-copies on clone; these collections
//! keep their entries behind an `Arc`: cloning is a reference-count increment, the first
//! mutation of a shared copy copies just that collection, and an unshared one is mutated
//! in place (the simulator's case). Up to 64 entries they are one sorted `Vec`; past
//! that, a persistent B-tree (`imbl::OrdMap`), whose copy shares its nodes and whose
//! inserts and removals are O(log n) (the sandbox holds up to a million Payments).
//!
//! They iterate, compare, hash, print (`Debug`) and serialize exactly like `BTreeMap` and
//! `BTreeSet`: in key order, so the state stays canonical (the checker deduplicates
//! states by a hash of them). The checker's collections hold a handful of entries, where a
//! sorted vector beats a tree (`payhub-verify bench --cow` measures both).

/// Equality, ordering and hashing (and, without `@compare`, `Debug` and serialization) of a
/// collection that is its field `$field` alone: what else it holds is a journal or an
/// index, a function of that field or scratch, never state.
macro_rules! as_field {
    (@compare $ty:ident<$k:ident $(, $v:ident)?>, $field:ident) => {
        impl<$k: Ord $(, $v: PartialEq)?> PartialEq for $ty<$k $(, $v)?> {
            fn eq(&self, other: &Self) -> bool {
                self.$field == other.$field
            }
        }

        impl<$k: Ord $(, $v: Eq)?> Eq for $ty<$k $(, $v)?> {}

        impl<$k: Ord $(, $v: Ord)?> PartialOrd for $ty<$k $(, $v)?> {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl<$k: Ord $(, $v: Ord)?> Ord for $ty<$k $(, $v)?> {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.$field.cmp(&other.$field)
            }
        }

        impl<$k: Ord + std::hash::Hash $(, $v: std::hash::Hash)?> std::hash::Hash for $ty<$k $(, $v)?> {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.$field.hash(state)
            }
        }
    };
    ($ty:ident<$k:ident $(, $v:ident)?>, $field:ident) => {
        as_field!(@compare $ty<$k $(, $v)?>, $field);

        impl<$k: Ord + std::fmt::Debug $(, $v: std::fmt::Debug)?> std::fmt::Debug for $ty<$k $(, $v)?> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.$field.fmt(f)
            }
        }

        impl<$k: Ord + serde::Serialize $(, $v: serde::Serialize)?> serde::Serialize for $ty<$k $(, $v)?> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.$field.serialize(serializer)
            }
        }
    };
}

mod derived;
mod digest;
mod entries;
mod journaled;
mod map;
mod schedule;
mod set;
mod shared;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_bench;
#[cfg(test)]
mod tests_tree;

pub use derived::Derived;
pub use entries::{Iter, Range};
pub use journaled::Journaled;
pub use map::{CowMap, Entry};
pub use schedule::{INDEX_PAST, Schedule};
pub use set::CowSet;
pub use shared::Shared;
