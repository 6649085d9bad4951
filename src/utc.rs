//! Times in UTC as the outputs write them and the logs record them, on the `time`
//! crate: one place for the calendar (it had been written by hand four times). Only
//! edges read the wall clock; these functions only convert numbers they are given.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

fn at_ms(ms: i64) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).ok()
}

/// `2026-12-01T10:00:05.250Z` for `ms` milliseconds since the epoch (HAR's
/// `startedDateTime`, access logs); `ms` out of the calendar's range is clamped to it.
pub fn iso_ms(ms: i64) -> String {
    let fmt =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    let t = at_ms(ms).unwrap_or(if ms < 0 {
        OffsetDateTime::UNIX_EPOCH
    } else {
        at_ms(253_402_300_799_999).unwrap_or(OffsetDateTime::UNIX_EPOCH)
    });
    t.format(&fmt).unwrap_or_default()
}

/// `2025-12-01 09:51:02 UTC` for `secs` since the epoch (the report's header).
pub fn date_time(secs: u64) -> String {
    let fmt = format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    i64::try_from(secs)
        .ok()
        .and_then(|s| OffsetDateTime::from_unix_timestamp(s).ok())
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| format!("{secs} s after the epoch"))
}

/// Milliseconds since the epoch of an RFC 3339 / ISO 8601 time as captures write it:
/// `2026-12-01T10:00:00.123Z`, `…+01:00`, fractions of any length, read leniently (a
/// space or a lower-case `t` between date and time, no offset meaning UTC, as some
/// gateways log).
pub fn parse_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() < 19 || !s.is_char_boundary(10) {
        return None;
    }
    let (date, rest) = s.split_at(10);
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let zoned = rest.ends_with(['Z', 'z']) || rest.get(8..).is_some_and(|r| r.contains(['+', '-']));
    let text = format!("{date}T{rest}{}", if zoned { "" } else { "Z" }).replace('z', "Z");
    let t = OffsetDateTime::parse(&text, &Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_format_and_parse_with_zones_and_fractions() {
        assert_eq!(iso_ms(5_250), "1970-01-01T00:00:05.250Z");
        assert_eq!(iso_ms(1_796_083_200_000), "2026-12-01T00:00:00.000Z");
        assert_eq!(date_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(date_time(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(parse_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_ms("1970-01-01T00:00:05.25Z"), Some(5_250));
        assert_eq!(parse_ms("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(
            parse_ms("1970-01-10T01:00:00.000Z"),
            Some(9 * 86_400_000 + 3_600_000)
        );
        assert_eq!(parse_ms("1970-01-01 00:00:07"), Some(7_000));
        assert_eq!(parse_ms("1970-01-01t00:00:07z"), Some(7_000));
        assert_eq!(
            parse_ms("2026-12-01T10:00:00.123456-05:00").map(|t| t % 1000),
            Some(123)
        );
        for ms in [0, 5_250, 1_796_083_200_123] {
            assert_eq!(parse_ms(&iso_ms(ms)), Some(ms));
        }
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-12-01T00:00:00Q",
            "2026-12-01é00:00:00Z",
        ] {
            assert_eq!(parse_ms(bad), None, "{bad}");
        }
    }
}
