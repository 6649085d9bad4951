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
