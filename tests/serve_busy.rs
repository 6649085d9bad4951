//! The sandbox keeps answering while its verdict is read: the verdict is judged over a
//! copy of the session taken under its lock, so a create sent meanwhile is answered
//! within a bound, and the verdict over thousands of Payments comes back.

mod common;
mod serve_support;

use serve_support::*;
use std::time::{Duration, Instant};

/// Payments the session holds before its verdict is read.
const PAYMENTS: usize = 5_000;
/// The longest a create may wait while a verdict is read.
const CREATE_WITHIN: Duration = Duration::from_millis(100);

#[test]
fn serve_busy_a_create_is_answered_while_the_verdict_is_read() {
    let s = Serve::start("busy", &["--clock", "manual"]);
    let fill = format!(r#"{{"payments":{PAYMENTS}}}"#);
    let r = s.control("POST", "/__sandbox/fill", &fill);
    assert_eq!(r.status, 200, "{}", r.body);
    std::thread::scope(|scope| {
        let reading = scope.spawn(|| {
            let v = s.verdict();
            (v, Instant::now())
        });
        // Creates until the verdict is back: each answered within the bound.
        let mut answered = Vec::new();
        while !reading.is_finished() {
            let n = answered.len();
            let sent = Instant::now();
            let r = s.created(&format!("k-busy-{n}"), &format!("ORDER-BUSY-{n}"), 100);
            let took = sent.elapsed();
            assert_eq!(r.status, 201, "{}", r.body);
            answered.push((took, Instant::now()));
        }
        let (v, back) = reading.join().unwrap();
        assert_eq!(v["holds"], true, "{v:#}");
        let during: Vec<Duration> = answered
            .iter()
            .filter(|(_, at)| *at < back)
            .map(|(took, _)| *took)
            .collect();
        assert!(
            during.len() >= 3,
            "the verdict came back before the creates could overlap it: {answered:?}"
        );
        eprintln!("creates while the verdict was read: {during:?}");
        // The first create may have waited for the copy taken under the lock.
        let slowest = during.iter().skip(1).max().copied().unwrap_or_default();
        assert!(
            slowest <= CREATE_WITHIN,
            "a create waited {slowest:?} while the verdict was read: {during:?}"
        );
    });
}
