//! The seeds a sweep runs (`--seeds A..B`) and the shard of them a machine takes
//! (`--shard I/N`): `simulate` and `conform` read them alike.

/// A range of seeds, `A..B` (B excluded) or a single seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub start: u64,
    pub end: u64,
}

impl std::str::FromStr for SeedRange {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not a seed range (e.g. 0..10000, or 42)");
        match s.split_once("..") {
            Some((a, b)) => {
                let start: u64 = a.trim().parse().map_err(|_| bad())?;
                let end: u64 = b.trim().parse().map_err(|_| bad())?;
                if end <= start {
                    return Err(format!("seed range '{s}' is empty"));
                }
                Ok(SeedRange { start, end })
            }
            None => {
                let seed: u64 = s.trim().parse().map_err(|_| bad())?;
                Ok(SeedRange {
                    start: seed,
                    end: seed + 1,
                })
            }
        }
    }
}

/// `I/N`: this shard takes the seeds whose index modulo N is I (the swarm's shards read
/// alike).
pub use payhub_properties::engine::swarm::Shard;
