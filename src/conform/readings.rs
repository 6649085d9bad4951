//! The silent points (docs/conform.md, "Silent points"): where the contract is silent or
//! ambiguous, each [`Point`]'s readings the contract allows ([`Reading`]), the model's
//! own first (its assumption in `model/ASSUMPTIONS.md`); a state keeps one per point.

use std::collections::BTreeMap;

/// Declares [`Point`], a place where the contract leaves the platform a choice, with
/// each point's profile name, the assumption of `model/ASSUMPTIONS.md` that quotes the
/// contract there and the readings the contract allows, the model's first; and
/// [`Reading`], one reading of one point, with its profile name (unique within its
/// point) and what a platform that takes it does.
macro_rules! points {
    ($($(#[$doc:meta])* $point:ident $name:literal $assumption:literal {
        $($reading:ident $rname:literal $text:literal,)+
    })+) => {
        /// A place where the contract leaves the platform a choice.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Point { $($(#[$doc])* $point,)+ }

        /// One reading of one [`Point`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Reading { $($($reading,)+)+ }

        const POINTS: &[(Point, &str, &str, &[Reading])] =
            &[$((Point::$point, $name, $assumption, &[$(Reading::$reading),+])),+];

        const READINGS: &[(Reading, &str, &str)] = &[$($((Reading::$reading, $rname, $text)),+),+];
    };
}

points! {
    /// A body field the endpoint does not name (a confirm carrying `amount`).
    UnnamedFields "unnamed_fields" "A-UNNAMED-FIELDS" {
        FieldsRefused "refused"
            "a body field the endpoint does not name refused (400 invalid_request)",
        FieldsIgnored "ignored"
            "a body field the endpoint does not name ignored (the request served without it)",
    }
    /// Which requests a merchant's rate limit answers with 429.
    RateLimitScope "rate_limit_scope" "A-RATE-SCOPE" {
        LimitEveryRequest "every_request" "a rate-limited merchant's every request answered 429",
        LimitPostsOnly "posts_only"
            "a rate-limited merchant's POSTs answered 429, its queries served",
    }
    /// A cancel of a Payment that is `processing`.
    CancelProcessing "cancel_processing" "A-CANCEL" {
        CancelAccepted "accepted" "a cancel of a processing Payment accepted (200 or 202)",
        CancelInProgress "payment_in_progress"
            "a cancel of a processing Payment refused (409 payment_in_progress), nothing executed",
    }
    /// Which requests a paused channel answers with 503.
    PauseScope "pause_scope" "A-PAUSE-SCOPE" {
        PauseNewTransactions "new_transactions"
            "a paused channel answers 503 to creates, confirms and checkout sessions",
        PauseCreatesOnly "creates_only"
            "a paused channel answers 503 to creates only; confirms and sessions served",
    }
    /// Which characters an `Idempotency-Key` may have.
    KeyCharset "key_charset" "A-KEY-LENGTH" {
        KeyAnyCharacter "any_character"
            "an Idempotency-Key of 1–255 characters of any kind accepted",
        KeyPrintableAscii "printable_ascii"
            "an Idempotency-Key outside printable ASCII refused (400), nothing executed",
    }
    /// Which refusal wins when a rate limit or a pause and a refusal of the request
    /// itself both apply.
    RefusalOrder "refusal_order" "A-REFUSAL-ORDER" {
        SwitchFirst "switch_first"
            "a rate limit or pause answered before the request's own refusal",
        RefusalFirst "refusal_first"
            "the request's own refusal (4xx) answered before a rate limit or pause",
        PauseBeforeLookup "pause_before_lookup"
            "a paused channel checked before the Payment is looked up (503, not 404)",
    }
    /// The codes of refusals the contract does not name.
    UnnamedCodes "unnamed_codes" "A-ERROR-CODES" {
        ModelCodes "model_codes" "refusals the contract does not name use the model's codes",
        OwnCodes "own_codes" "refusals the contract does not name use codes of the platform's \
            own (same status class)",
    }
    /// `Retry-After` on a 503.
    RetryAfter503 "retry_after_503" "A-RETRY-AFTER" {
        No503RetryAfter "absent" "a 503 without Retry-After",
        With503RetryAfter "present" "a 503 with Retry-After",
    }
    /// `Retry-After` on a 429: seconds, 0, none or an HTTP date.
    RetryAfter429 "retry_after_429" "A-RETRY-AFTER-429" {
        Seconds429 "seconds" "a 429 with Retry-After in seconds (from 1)",
        Zero429 "zero" "a 429 with Retry-After: 0 (retry at once)",
        Absent429 "absent" "a 429 without Retry-After (the reference code's backoff decides)",
        HttpDate429 "http_date"
            "a 429 with Retry-After as an HTTP date (the reference code's backoff decides)",
    }
    /// An upstream that gave no definite answer.
    UnknownResult "unknown_result" "A-STATUS-CODES" {
        UnknownAs202 "accepted_202" "an upstream without a definite answer told as 202",
        UnknownAs500 "internal_error_500"
            "an upstream without a definite answer told as 500 internal_error, not 202",
    }
    /// A new checkout session for a Payment that is no longer open.
    ClosedPaymentSession "closed_payment_session" "A-CKO-ANY-STATUS" {
        SessionForClosed "new_session"
            "a new checkout session for a Payment no longer open granted (201)",
        SessionRefused "refused" "a new checkout session for a Payment no longer open refused",
    }
}

impl Point {
    /// Every point, in the report's order.
    pub fn all() -> impl Iterator<Item = Point> {
        POINTS.iter().map(|p| p.0)
    }

    fn row(self) -> &'static (Point, &'static str, &'static str, &'static [Reading]) {
        &POINTS[self as usize]
    }

    /// The profile's name for it.
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// The assumption of `model/ASSUMPTIONS.md` that quotes the contract at this point.
    pub fn assumption(self) -> &'static str {
        self.row().2
    }

    /// The readings the contract allows here, the model's first.
    pub fn readings(self) -> &'static [Reading] {
        self.row().3
    }
}

impl Reading {
    pub fn point(self) -> Point {
        let mut points = Point::all();
        points
            .find(|p| p.readings().contains(&self))
            .unwrap_or(Point::UnnamedFields)
    }

    fn row(self) -> &'static (Reading, &'static str, &'static str) {
        &READINGS[self as usize]
    }

    /// The profile's name for it (unique within its point).
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// What a platform that takes it does.
    pub fn text(self) -> &'static str {
        self.row().2
    }

    /// Whether it is the model's own reading (the one `model/ASSUMPTIONS.md` describes).
    pub fn is_model(self) -> bool {
        self.point().readings().first() == Some(&self)
    }

    /// The reading the model's observation layer names.
    pub fn of_observation(r: payhub_model::observation::Reading) -> Reading {
        use payhub_model::observation::Reading as O;
        match r {
            O::UnknownAs500 => Reading::UnknownAs500,
            O::SessionRefused => Reading::SessionRefused,
            O::PausedBeforeLookup => Reading::PauseBeforeLookup,
        }
    }
}

/// A reading a model state took, and the exchange that showed it first (round and
/// request of the case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    pub reading: Reading,
    pub round: usize,
    pub request: usize,
}

/// The readings a profile pins, one per point.
pub type Pins = BTreeMap<Point, Reading>;

/// Reads a profile's `readings` object: each key a point, each value one of its readings.
pub fn parse_pins(raw: &BTreeMap<String, String>) -> Result<Pins, String> {
    let names = |v: Vec<&str>| v.join(", ");
    let mut pins = Pins::new();
    for (point, reading) in raw {
        let Some(p) = Point::all().find(|p| p.name() == point) else {
            let all = names(Point::all().map(|p| p.name()).collect());
            return Err(format!(
                "readings: {point:?} is not a silent point (one of: {all})"
            ));
        };
        let Some(r) = p.readings().iter().find(|r| r.name() == reading) else {
            let all = names(p.readings().iter().map(|r| r.name()).collect());
            return Err(format!(
                "readings: {reading:?} is not a reading of {point} (one of: {all})"
            ));
        };
        pins.insert(p, *r);
    }
    Ok(pins)
}

/// Adds `r` to a state's `taken` readings, or says why that state cannot take it: it
/// took another reading of the same point before, or the profile pins another.
/// [`Point::UnnamedCodes`] and [`Point::RefusalOrder`] may differ from one refusal to
/// the next (a platform's codes and checks are per endpoint), and [`Point::RetryAfter429`]
/// from one 429 to the next (a limit's wait is the platform's, per answer), so they are
/// only recorded.
pub fn take(taken: &mut Vec<Taken>, at: Taken, pins: &Pins) -> Result<(), String> {
    let r = at.reading;
    let p = r.point();
    if let Some(pin) = pins.get(&p).filter(|pin| **pin != r) {
        return Err(format!(
            "{}: the answer shows the reading {} where the profile pins {}",
            p.name(),
            r.name(),
            pin.name()
        ));
    }
    let per_answer = matches!(
        p,
        Point::UnnamedCodes | Point::RefusalOrder | Point::RetryAfter429
    );
    let mut others = (taken.iter())
        .map(|t| t.reading)
        .filter(|t| t.point() == p && *t != r);
    if !per_answer && let Some(other) = others.next() {
        return Err(format!(
            "{}: the answer shows the reading {} where the target showed {} before",
            p.name(),
            r.name(),
            other.name()
        ));
    }
    if !taken.iter().any(|t| t.reading == r) {
        taken.push(at);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reading_has_one_point_and_names_are_unique_per_point() {
        for (i, row) in READINGS.iter().enumerate() {
            assert_eq!(row.0 as usize, i, "READINGS is in the order of Reading");
        }
        for (i, p) in Point::all().enumerate() {
            assert_eq!(p as usize, i, "POINTS is in the order of Point");
            let names: std::collections::BTreeSet<_> =
                p.readings().iter().map(|r| r.name()).collect();
            assert_eq!(names.len(), p.readings().len(), "{p:?}");
            for r in p.readings() {
                assert_eq!(r.point(), p, "{r:?}");
            }
            assert!(p.readings()[0].is_model());
        }
    }

    #[test]
    fn pins_name_what_does_not_exist() {
        let raw = |k: &str, v: &str| [(k.to_owned(), v.to_owned())].into_iter().collect();
        let pins = parse_pins(&raw("rate_limit_scope", "posts_only")).unwrap();
        assert_eq!(pins[&Point::RateLimitScope], Reading::LimitPostsOnly);
        let e = parse_pins(&raw("rate_limit_scope", "gets_only")).unwrap_err();
        assert!(
            e.contains("\"gets_only\"") && e.contains("posts_only"),
            "{e}"
        );
        let e = parse_pins(&raw("rate_scope", "posts_only")).unwrap_err();
        assert!(e.contains("\"rate_scope\""), "{e}");
    }

    #[test]
    fn a_state_keeps_one_reading_per_point_and_the_pin() {
        let mut taken = Vec::new();
        let none = Pins::new();
        let at = |reading| Taken {
            reading,
            round: 0,
            request: 0,
        };
        take(&mut taken, at(Reading::LimitPostsOnly), &none).unwrap();
        take(&mut taken, at(Reading::LimitPostsOnly), &none).unwrap();
        assert_eq!(taken.len(), 1);
        assert!(take(&mut taken, at(Reading::LimitEveryRequest), &none).is_err());
        take(&mut taken, at(Reading::ModelCodes), &none).unwrap();
        take(&mut taken, at(Reading::OwnCodes), &none).unwrap();
        let pinned: Pins = [(Point::PauseScope, Reading::PauseCreatesOnly)]
            .into_iter()
            .collect();
        let e = take(&mut taken, at(Reading::PauseNewTransactions), &pinned).unwrap_err();
        assert!(e.contains("pins creates_only"), "{e}");
    }
}
