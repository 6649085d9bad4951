//! The sandbox keeps answering while its verdict is read: what the verdict judges is
//! taken under the session's lock without a copy of what the session folded, and copied
//! and judged after the lock is released, so a create sent meanwhile is answered within
//! a bound, and the verdict over thousands of Payments comes back. So for each reading:
//! the JSON verdict, the Markdown one and the page's (which an open page polls every
//! second).

mod common;
mod serve_support;

use serve_support::*;
use std::time::{Duration, Instant};

/// Payments the session holds before its verdict is read.
const PAYMENTS: usize = 5_000;
/// The longest a create may wait while a verdict is read.
const CREATE_WITHIN: Duration = Duration::from_millis(100);

/// The readings of the verdict, what each says when every property holds and what it
/// says of a violation.
const READINGS: [(&str, &str, &str); 3] = [
    (
        "/__sandbox/verdict",
        "\"holds\": true",
        "\"status\": \"violated\"",
    ),
    (
        "/__sandbox/verdict?format=markdown",
        "**Holds over what it judged**",
        "VIOLATED",
    ),
    (
        "/__sandbox/page.json",
        "\"status\":\"holds\"",
        "\"status\":\"violated\"",
    ),
];

#[test]
fn serve_busy_a_create_is_answered_while_the_verdict_is_read() {
    let s = Serve::start("busy", &["--clock", "manual"]);
    let fill = format!(r#"{{"payments":{PAYMENTS}}}"#);
    let r = s.control("POST", "/__sandbox/fill", &fill);
    assert_eq!(r.status, 200, "{}", r.body);
    for (nth, reading) in READINGS.into_iter().enumerate() {
        creates_answered_while_read(&s, nth, reading);
    }
}

fn creates_answered_while_read(s: &Serve, nth: usize, (path, holds, violated): (&str, &str, &str)) {
    std::thread::scope(|scope| {
        let reading = scope.spawn(|| {
            let v = s.control("GET", path, "");
            (v, Instant::now())
        });
        // Creates until the verdict is back: each answered within the bound.
        let mut answered = Vec::new();
        while !reading.is_finished() {
            let n = answered.len();
            let sent = Instant::now();
            let key = format!("k-busy-{nth}-{n}");
            let r = s.created(&key, &format!("ORDER-BUSY-{nth}-{n}"), 100);
            let took = sent.elapsed();
            assert_eq!(r.status, 201, "{}", r.body);
            answered.push((took, Instant::now()));
        }
        let (v, back) = reading.join().unwrap();
        assert_eq!(v.status, 200, "{path}: {}", v.body);
        assert!(v.body.contains(holds), "{path}: {}", v.body);
        assert!(!v.body.contains(violated), "{path}: {}", v.body);
        let during: Vec<Duration> = answered
            .iter()
            .filter(|(_, at)| *at < back)
            .map(|(took, _)| *took)
            .collect();
        assert!(
            during.len() >= 3,
            "{path} came back before the creates could overlap it: {answered:?}"
        );
        eprintln!("creates while {path} was read: {during:?}");
        let slowest = during.iter().max().copied().unwrap_or_default();
        assert!(
            slowest <= CREATE_WITHIN,
            "a create waited {slowest:?} while {path} was read: {during:?}"
        );
    });
}
