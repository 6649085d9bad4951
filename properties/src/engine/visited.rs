//! The visited set of a search: exact (every 64-bit fingerprint, in shards) or a
//! bitstate array (SPIN's supertrace: `k` bits a state in a fixed array, so memory is
//! fixed and a new state whose bits are all set already is taken for a seen one).

use super::lock;
// SplitMix64's finaliser: a second hash, independent enough of the fingerprint.
use payhub_model::splitmix::finalise as mix;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// What a search remembers of the states it saw.
pub trait Visited: Sync {
    /// Whether `fp` is new (and now seen).
    fn insert(&self, fp: u64) -> bool;
    /// How many states were taken as new.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A fingerprint is already a hash: the sets use it as is.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

const SHARDS: usize = 64;

/// The fingerprints seen, in shards chosen by bits 32–37 of the fingerprint, so two
/// threads rarely wait for each other. Not the top bits: the hash table inside a shard
/// uses the top seven as its control byte, which would then take only two values.
pub struct Exact {
    shards: Vec<Mutex<HashSet<u64, BuildHasherDefault<Identity>>>>,
}

impl Default for Exact {
    fn default() -> Exact {
        Exact {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl Visited for Exact {
    fn insert(&self, fp: u64) -> bool {
        lock(&self.shards[(fp >> 32) as usize % SHARDS]).insert(fp)
    }

    fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len()).sum()
    }
}

/// Most bits a bitstate array takes: 2^35 bits are 4 GiB.
pub const BITSTATE_LOG2_MAX: u32 = 35;
/// Fewest: 2^16 bits (8 KiB).
pub const BITSTATE_LOG2_MIN: u32 = 16;
/// Bits set a state (SPIN's default `-k3`).
pub const BITSTATE_HASHES: u32 = 3;

/// SPIN's supertrace: `2^log2` bits; a state sets `hashes` bits chosen from its
/// fingerprint by double hashing (Kirsch and Mitzenmacher: `h1 + i·h2`). A state is
/// taken as new if one of its bits was clear; one whose bits were all set by others is
/// missed (with what only it leads to): a bitstate search is never complete.
pub struct Bitstate {
    words: Vec<AtomicU64>,
    log2: u32,
    hashes: u32,
    new: AtomicUsize,
}

impl Bitstate {
    /// An array of `2^log2` bits (clamped to [`BITSTATE_LOG2_MIN`]..=[`BITSTATE_LOG2_MAX`]).
    pub fn new(log2: u32, hashes: u32) -> Bitstate {
        let log2 = log2.clamp(BITSTATE_LOG2_MIN, BITSTATE_LOG2_MAX);
        Bitstate {
            words: (0..(1usize << (log2 - 6)))
                .map(|_| AtomicU64::new(0))
                .collect(),
            log2,
            hashes: hashes.max(1),
            new: AtomicUsize::new(0),
        }
    }

    pub fn bits(&self) -> u64 {
        1u64 << self.log2
    }

    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// The share of bits set.
    pub fn fill(&self) -> f64 {
        let set: u64 = self
            .words
            .iter()
            .map(|w| u64::from(w.load(Relaxed).count_ones()))
            .sum();
        set as f64 / self.bits() as f64
    }

    /// The expected number of new states taken for seen ones, the usual estimate: the
    /// `i`-th new state is missed with probability `(1 - e^(-k·i/m))^k` (all its `k`
    /// bits among those `i` states set, `m` bits in all); summed over the states stored.
    /// Those states' own successors, reached through no other state, are missed too.
    pub fn expected_missed(&self) -> f64 {
        expected_missed(
            self.len() as f64,
            self.bits() as f64,
            f64::from(self.hashes),
        )
    }
}

/// `∫₀ⁿ (1 - e^(-k·x/m))^k dx`, by the trapezoid rule over 4096 steps.
pub fn expected_missed(n: f64, m: f64, k: f64) -> f64 {
    if n <= 0.0 {
        return 0.0;
    }
    let p = |x: f64| (1.0 - (-k * x / m).exp()).powf(k);
    let steps = 4096;
    let h = n / steps as f64;
    let inner: f64 = (1..steps).map(|i| p(i as f64 * h)).sum();
    h * (inner + (p(0.0) + p(n)) / 2.0)
}

impl Visited for Bitstate {
    fn insert(&self, fp: u64) -> bool {
        let mask = self.bits() - 1;
        let (h1, h2) = (fp, mix(fp) | 1);
        let mut new = false;
        for i in 0..u64::from(self.hashes) {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) & mask;
            let word = &self.words[(bit >> 6) as usize];
            let b = 1u64 << (bit & 63);
            if word.load(Relaxed) & b == 0 && word.fetch_or(b, Relaxed) & b == 0 {
                new = true;
            }
        }
        if new {
            self.new.fetch_add(1, Relaxed);
        }
        new
    }

    fn len(&self) -> usize {
        self.new.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_set_forgets_nothing() {
        let seen = Exact::default();
        assert!(seen.insert(7) && seen.insert(1 << 40) && !seen.insert(7));
        assert_eq!(seen.len(), 2);
    }

    /// A nearly empty array keeps distinct states apart; a full one takes new states for
    /// seen ones, and the estimate says so.
    #[test]
    fn a_bitstate_array_misses_only_when_full() {
        let roomy = Bitstate::new(24, 3);
        let n = 10_000u64;
        let kept = (0..n).filter(|i| roomy.insert(mix(*i + 1))).count();
        assert!(kept as u64 >= n - 1, "{kept}");
        assert!(roomy.expected_missed() < 1.0, "{}", roomy.expected_missed());
        let tight = Bitstate::new(16, 3);
        let kept = (0..200_000u64)
            .filter(|i| tight.insert(mix(*i + 1)))
            .count();
        assert!(
            kept < 200_000,
            "a 64 Ki-bit array cannot hold 200 000 states apart"
        );
        assert!(tight.fill() > 0.9, "{}", tight.fill());
        let estimate = tight.expected_missed();
        let missed = 200_000.0 - kept as f64;
        assert!(estimate > 0.0 && missed > 0.0, "{estimate} {missed}");
    }

    #[test]
    fn the_estimate_follows_the_formula() {
        // Few states in many bits: nearly nothing missed; as many states as bits: most.
        assert!(expected_missed(1e6, 1e9, 3.0) < 1.0);
        let most = expected_missed(1e6, 1e6, 3.0);
        assert!(most > 1e5 && most < 1e6, "{most}");
    }
}
