//! SplitMix64 (Steele, Lea and Flood, 2014), written once: the mixing function behind
//! every seeded draw outside the model's own choices (the sandbox's faults and branches,
//! conform's generator, the client's random keys from the driver's entropy, swarm
//! shards' seeds, the bitstate's second hash). A pure function: no state, no entropy.

/// The golden-ratio increment: the generator's state advances by it per draw.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The draw of a generator whose state was `x`: [`finalise`] of `x + GOLDEN`.
pub fn splitmix64(x: u64) -> u64 {
    finalise(x.wrapping_add(GOLDEN))
}

/// SplitMix64's finaliser alone (a bijective 64-bit mix).
pub fn finalise(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published reference stream from state 0 (the first three outputs of
    /// `splitmix64.c` seeded with 0).
    #[test]
    fn the_reference_stream() {
        let mut state = 0u64;
        let mut next = || {
            let out = splitmix64(state);
            state = state.wrapping_add(GOLDEN);
            out
        };
        assert_eq!(next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(next(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(next(), 0x06c4_5d18_8009_454f);
    }
}
