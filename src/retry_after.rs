//! How a `Retry-After` header on a 429 reads (A-RETRY-AFTER-429). RATE-03 says "等待
//! Retry-After 秒后用原幂等键重试" (wait Retry-After seconds, then retry with the original
//! key); the contract's reference code reads the header as
//! `const seconds = raw === null ? NaN : Number(raw); if (Number.isFinite(seconds) && seconds >= 0) waitMs = seconds * 1000;`
//! so no header and a value that is not a number keep its backoff, and any number of
//! seconds from 0 replaces it. Conform and check-log read it here, once.

/// One `Retry-After` value, as the contract's readings name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// A whole number of seconds from 1 (S10's `Retry-After: 2`).
    Seconds(u32),
    /// `Retry-After: 0`: retry at once (the code's `seconds >= 0`).
    Zero,
    /// An HTTP date (IMF-fixdate, RFC 850 or asctime): HTTP's other form; the code's
    /// `Number()` of it is NaN, so its backoff decides.
    HttpDate,
}

impl RetryAfter {
    /// Reads a header value; `None` for one that is neither seconds nor an HTTP date.
    pub fn read(raw: &str) -> Option<RetryAfter> {
        let raw = raw.trim();
        if let Ok(s) = raw.parse::<u32>() {
            return Some(if s == 0 {
                RetryAfter::Zero
            } else {
                RetryAfter::Seconds(s)
            });
        }
        httpdate::parse_http_date(raw)
            .ok()
            .map(|_| RetryAfter::HttpDate)
    }

    /// The seconds the reference code waits, `None` where its backoff decides (a date).
    pub fn seconds(self) -> Option<u32> {
        match self {
            RetryAfter::Seconds(s) => Some(s),
            RetryAfter::Zero => Some(0),
            RetryAfter::HttpDate => None,
        }
    }
}

/// The seconds a header value tells the reference code to wait: `None` for no header, an
/// HTTP date or a value that is not a number of seconds (its backoff decides).
pub fn seconds(raw: Option<&str>) -> Option<u32> {
    raw.and_then(RetryAfter::read).and_then(RetryAfter::seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_03_every_reading_of_the_reference_code() {
        assert_eq!(RetryAfter::read("2"), Some(RetryAfter::Seconds(2)));
        assert_eq!(RetryAfter::read(" 0 "), Some(RetryAfter::Zero));
        for date in [
            "Sun, 06 Dec 2026 08:49:37 GMT",
            "Sunday, 06-Dec-26 08:49:37 GMT",
            "Sun Dec  6 08:49:37 2026",
        ] {
            assert_eq!(RetryAfter::read(date), Some(RetryAfter::HttpDate), "{date}");
        }
        for bad in ["soon", "-1", "2.5", ""] {
            assert_eq!(RetryAfter::read(bad), None, "{bad}");
        }
        assert_eq!(seconds(Some("0")), Some(0));
        assert_eq!(seconds(Some("Sun, 06 Dec 2026 08:49:37 GMT")), None);
        assert_eq!(seconds(None), None);
    }
}
