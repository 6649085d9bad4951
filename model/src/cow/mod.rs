//! Copy-on-write ordered collections for the state the checker hashes and clones.
//!
//! The exhaustive checker clones the whole world for every generated state, and most
//! steps change one or two collections of it. `std`'s `BTreeMap` allocates a whole
//! node (eleven slots) even for one entry and deep-copies on clone; these collections
//! keep their entries as one sorted `Vec` behind an `Arc`: cloning is a reference-count
//! increment, the first mutation of a shared copy copies just that collection, and an
//! unshared one is mutated in place (the simulator's case).
//!
//! They iterate, compare, hash, print (`Debug`) and serialize exactly like `BTreeMap` and
//! `BTreeSet`: in key order, so the state stays canonical (the checker deduplicates
//! states by a hash of them). Lookups are binary searches; the collections of this model
//! hold a handful of entries, where a sorted vector beats a tree.
//!
//! Files, one concept each: `map` the map, `set` the set (a map with unit values),
//! `shared` the copy-on-write box, `digest` the cached digests they hash as, `journaled`
//! a map that remembers what the step under way wrote (for observing a step cheaply).

mod digest;
mod journaled;
mod map;
mod set;
mod shared;
#[cfg(test)]
mod tests;

pub use journaled::Journaled;
pub use map::{CowMap, Entry};
pub use set::CowSet;
pub use shared::Shared;
