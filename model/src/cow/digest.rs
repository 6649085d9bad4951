//! The cached digests the copy-on-write collections and boxes hash as.

use std::hash::Hasher;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A cached digest: 0 until someone asks for it, then the digest (a digest of 0 is kept
/// as 1). Lighter than a `OnceLock`: two threads that ask at once both compute it and
/// store the same value, which is harmless, so no thread ever waits for another.
pub(super) struct Digest(AtomicU64);

impl Digest {
    pub(super) const fn new() -> Digest {
        Digest(AtomicU64::new(0))
    }

    pub(super) fn get_or_init(&self, compute: impl FnOnce() -> u64) -> u64 {
        match self.0.load(Relaxed) {
            0 => {
                let digest = compute().max(1);
                self.0.store(digest, Relaxed);
                digest
            }
            digest => digest,
        }
    }
}

/// The fixed-key hasher of the cached digests (aHash, as stateright's fingerprints; fast
/// on the short strings and small integers of this model).
pub(super) fn digest_hasher() -> impl Hasher {
    use std::hash::BuildHasher;
    ahash::RandomState::with_seeds(
        0x7061_7968_7562_2d76,
        0x6572_6966_792d_636f,
        0x772d_6d61_702d_6469,
        0x6765_7374_2d73_6565,
    )
    .build_hasher()
}
