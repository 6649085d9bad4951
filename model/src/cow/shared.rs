//! [`Shared`]: a copy-on-write box with a cached digest.

use super::digest::{Digest, digest_hasher};
use serde::{Serialize, Serializer};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A copy-on-write box for a large part of the world (the platform, the facts, the
/// merchants): cloning is a reference-count increment, and any mutable access copies the
/// part first if another clone still shares it (`Arc::make_mut`). It compares, prints
/// and serializes as the value inside, so the state stays canonical; it hashes as a
/// cached digest of the value (as [`CowMap`](super::CowMap)), so an unchanged part costs the checker's
/// fingerprint one `write_u64`.
pub struct Shared<T>(Arc<Boxed<T>>);

struct Boxed<T> {
    value: T,
    hash: Digest,
}

impl<T: Clone> Clone for Boxed<T> {
    fn clone(&self) -> Self {
        Boxed {
            value: self.value.clone(),
            hash: Digest::new(),
        }
    }
}

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Arc::new(Boxed {
            value,
            hash: Digest::new(),
        }))
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0.value
    }
}

/// Copies the value first if it is shared, and forgets its digest.
impl<T: Clone> std::ops::DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        let boxed = Arc::make_mut(&mut self.0);
        boxed.hash = Digest::new();
        &mut boxed.value
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T: Default> Default for Shared<T> {
    fn default() -> Self {
        Shared::new(T::default())
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.value == other.0.value
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: Hash> Shared<T> {
    /// The cached 64-bit digest of the value (computed at the first ask, forgotten by
    /// any mutable access): two equal values have the same digest.
    pub fn digest(&self) -> u64 {
        self.0.hash.get_or_init(|| {
            let mut h = digest_hasher();
            self.0.value.hash(&mut h);
            h.finish()
        })
    }
}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.digest());
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.value.fmt(f)
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.value.serialize(serializer)
    }
}
