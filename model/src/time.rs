//! Simulated time. The model never reads a clock: every input carries `now`.

use serde::{Deserialize, Serialize};

/// A point in simulated time, or a duration, in milliseconds since the start of a run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Millis(pub u64);

impl Millis {
    pub const ZERO: Millis = Millis(0);
    pub const fn ms(n: u64) -> Millis {
        Millis(n)
    }
    pub const fn secs(n: u64) -> Millis {
        Millis(n * 1_000)
    }
    pub const fn mins(n: u64) -> Millis {
        Millis(n * 60_000)
    }
    pub const fn hours(n: u64) -> Millis {
        Millis(n * 3_600_000)
    }
    pub const fn days(n: u64) -> Millis {
        Millis(n * 86_400_000)
    }
    /// `self + d`, saturating at the end of time.
    pub const fn after(self, d: Millis) -> Millis {
        Millis(self.0.saturating_add(d.0))
    }
    /// `self - earlier`, or zero.
    pub const fn since(self, earlier: Millis) -> Millis {
        Millis(self.0.saturating_sub(earlier.0))
    }
}

impl std::ops::Add for Millis {
    type Output = Millis;
    fn add(self, rhs: Millis) -> Millis {
        self.after(rhs)
    }
}

/// Renders the largest exact unit: `250ms`, `15s`, `2min`, `4h`, `7d`, `1d2h3min4.5s` style for mixed values.
impl std::fmt::Display for Millis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.0;
        const UNITS: [(u64, &str); 4] = [
            (86_400_000, "d"),
            (3_600_000, "h"),
            (60_000, "min"),
            (1_000, "s"),
        ];
        if ms == 0 {
            return f.write_str("0s");
        }
        let mut rest = ms;
        let mut wrote = false;
        for (unit, name) in UNITS {
            if rest >= unit {
                let n = rest / unit;
                rest %= unit;
                if unit == 1_000 && rest != 0 {
                    write!(f, "{}.{:03}s", n, rest)?;
                    return Ok(());
                }
                write!(f, "{n}{name}")?;
                wrote = true;
            }
        }
        if rest != 0 {
            write!(f, "{rest}ms")?;
        } else if !wrote {
            f.write_str("0s")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_readable_durations() {
        assert_eq!(Millis::secs(15).to_string(), "15s");
        assert_eq!(Millis::days(7).to_string(), "7d");
        assert_eq!(Millis::mins(2).to_string(), "2min");
        assert_eq!(Millis::ms(250).to_string(), "250ms");
        assert_eq!(Millis::ms(1_250).to_string(), "1.250s");
        assert_eq!((Millis::hours(1) + Millis::secs(10)).to_string(), "1h10s");
        assert_eq!(Millis::ZERO.to_string(), "0s");
    }
}
