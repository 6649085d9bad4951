//! The target's time as conform knows it, which stamps every exchange the registry
//! judges (`record`): the wall time since conform connected plus every move of the
//! target's clock so far (as `clock.read` measured it, if the profile has it), so a key
//! replayed after a move of 25 h is 25 h older (RET-01). It only grows; it never decides
//! a verdict of the oracle.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The target's time: wall time since `started` plus the moves made so far.
#[derive(Debug)]
pub struct TargetClock {
    started: Instant,
    /// Milliseconds the target's clock was moved, in total.
    moved_ms: AtomicU64,
}

impl Default for TargetClock {
    /// A clock reading 0 now.
    fn default() -> TargetClock {
        TargetClock {
            started: Instant::now(),
            moved_ms: AtomicU64::new(0),
        }
    }
}

impl TargetClock {
    /// The target's time at `at`, in milliseconds since conform connected.
    pub fn at(&self, at: Instant) -> i64 {
        let wall = at.saturating_duration_since(self.started).as_millis() as u64;
        let moved = self.moved_ms.load(Ordering::SeqCst);
        i64::try_from(wall.saturating_add(moved)).unwrap_or(i64::MAX)
    }

    /// The target's clock moved by `ms` (the move asked, or as `clock.read` measured it).
    pub fn moved(&self, ms: u64) {
        self.moved_ms.fetch_add(ms, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A move is counted in every later stamp, never in an earlier one's wall part.
    #[test]
    fn a_move_shifts_every_later_stamp() {
        let c = TargetClock::default();
        let t0 = c.started;
        assert_eq!(c.at(t0), 0);
        c.moved(90_000_000);
        assert_eq!(c.at(t0), 90_000_000);
        assert_eq!(c.at(t0 + Duration::from_millis(1500)), 90_001_500);
        c.moved(30_000);
        assert_eq!(c.at(t0 + Duration::from_millis(1500)), 90_031_500);
    }
}
