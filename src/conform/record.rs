//! conform's record of one case as one log, read and judged as `check-log` reads and
//! judges one (docs/conform.md, "The registry beside the oracle"): each exchange stamped
//! with the target's time ([`TargetClock`]: the wall time since conform connected plus
//! every move of the target's clock so far, as `clock.read` measured it if the profile
//! has it, so a key replayed after a move of 25 h is 25 h older, RET-01; it only grows
//! and never decides a verdict of the oracle) in the order conform saw it ([`Stamps`]);
//! with `--har DIR` also written as a HAR log, card numbers redacted. One request of a
//! round ([`Sent`]) is read by both judges: the oracle, which explains its answer by the
//! model ([`super::oracle`]), and this record.

use super::case::{self, Req};
use super::compare::Observed;
use crate::check_log::entry::{Entry, Label, Reply, bearer};
use crate::check_log::feed::Feed;
use crate::check_log::keys::Keys;
use crate::check_log::profile::{CardReading, LogProfile};
use crate::http_map::HttpRequest;
use crate::wire::WireReply;
use payhub_properties::facts::wire::Seen as WireSeen;
use payhub_properties::verdict::Verdict;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What the target's side of one request came to.
#[derive(Clone, Debug)]
pub enum Seen {
    Answer(Observed),
    /// Forwarded, no answer (reset after forwarding, a timeout): executed or not.
    Unknown,
    /// Never forwarded (reset before): nothing reached the target.
    NotSent,
    /// Whatever the model answers (to write the model's own run of a round).
    Any,
}

impl Seen {
    /// The answer in the contract's notation, as the report prints it.
    pub fn text(&self) -> String {
        match self {
            Seen::Answer(o) => o.notation(),
            Seen::Unknown => "(no answer: connection reset or timeout)".into(),
            Seen::NotSent => "(connection reset before forwarding)".into(),
            Seen::Any => "(any)".into(),
        }
    }
}

/// One request of a round as it was sent, which both judges read: the case's
/// request and what the oracle saw of it; the request as it went on the wire, when it
/// was sent and closed, and the answer as read (`None`: none came), which the registry
/// records ([`super::record`]). `after`: sent only once that request of the round is
/// done (a duplicate's second copy).
#[derive(Clone, Debug)]
pub struct Sent {
    pub req: Req,
    pub seen: Seen,
    pub after: Option<usize>,
    pub http: HttpRequest,
    pub at: (Instant, Instant),
    pub reply: Option<WireReply>,
}

impl Sent {
    /// The request in the contract's notation, with its key and fault, as the report
    /// prints it.
    pub fn request_line(&self) -> String {
        match self.after {
            None => case::line(&self.req, &self.http),
            Some(_) => format!("{}  (the proxy's second copy)", self.http.notation()),
        }
    }
}

/// The record of one case, judged when it ends.
pub struct Recorder {
    feed: Feed,
    lines: Vec<String>,
    stamps: Stamps,
    /// The exchanges as HAR entries, when the case is to be written (`--har`).
    har: Option<Vec<serde_json::Value>>,
    cards: CardReading,
}

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

/// Millisecond stamps in the order conform saw the events: the target's time
/// ([`TargetClock::at`]), raised by a millisecond where it would tie with or fall behind
/// an earlier event's. The feed orders a log's events by their stamps and reads a tie as
/// "after"; conform's own clock tells them apart. The shift is a millisecond per event
/// that shared one, far below every length the contract names.
#[derive(Debug, Default)]
struct Stamps {
    /// The latest event stamped, and its stamp.
    last: Option<(Instant, i64)>,
}

impl Stamps {
    /// Stamps `instants` (any order; every one later than those stamped before).
    fn stamp(&mut self, clock: &TargetClock, instants: &[Instant]) -> BTreeMap<Instant, i64> {
        let mut sorted = instants.to_vec();
        sorted.sort();
        sorted.dedup();
        let mut out = BTreeMap::new();
        for at in sorted {
            let ms = match self.last {
                Some((before, ms)) if at <= before => ms,
                Some((_, ms)) => clock.at(at).max(ms + 1),
                None => clock.at(at),
            };
            self.last = Some((at, ms));
            out.insert(at, ms);
        }
        out
    }
}

/// What the registry said of one case.
#[derive(Debug, Default)]
pub struct CaseVerdicts {
    /// Every property's verdict, in the registry's order.
    pub verdicts: Vec<Verdict>,
    /// Exchange `n` (1-based) in the contract's notation: `lines[n - 1]`.
    pub lines: Vec<String>,
    /// Exchanges judged, and those the reader could not read as the contract's (why).
    pub judged: u64,
    pub unreadable: Vec<String>,
    /// The case as a HAR 1.2 log, when it was asked for.
    pub har: Option<String>,
}

impl Recorder {
    /// A record read with the profile's keys, codes and cards; `har`: kept as HAR too.
    pub fn new(profile: &LogProfile, har: bool) -> Result<Recorder, String> {
        let keys = Keys::load(None, &profile.keys)?;
        Ok(Recorder {
            feed: Feed::new(keys, Some(profile)),
            lines: Vec::new(),
            stamps: Stamps::default(),
            har: har.then(Vec::new),
            cards: profile.cards.clone(),
        })
    }

    /// Records a round's exchanges that reached the target, stamped on `clock`.
    pub fn round(&mut self, clock: &TargetClock, sent: &[Sent]) {
        let reached = sent.iter().filter(|s| !matches!(s.seen, Seen::NotSent));
        let mut exchanges: Vec<&Sent> = reached.collect();
        exchanges.sort_by_key(|e| e.at.0);
        let instants: Vec<Instant> = exchanges.iter().flat_map(|e| [e.at.0, e.at.1]).collect();
        let stamps = self.stamps.stamp(clock, &instants);
        for e in exchanges {
            let started_ms = stamps[&e.at.0];
            let duration_ms = u64::try_from(stamps[&e.at.1] - started_ms).unwrap_or(0);
            if let Some(har) = &mut self.har {
                har.push(har_entry(e, started_ms, duration_ms, &self.cards));
            }
            let line = format!("{}  →  {}", e.request_line(), e.seen.text());
            self.lines.push(line);
            let entry = Entry {
                label: Label::Exchange(self.lines.len() as u64),
                started_ms,
                duration_ms,
                http: e.http.clone(),
                api_key: (e.http.authorization.as_deref())
                    .and_then(|a| bearer(&String::from_utf8_lossy(a))),
                outcome: match &e.reply {
                    Some(r) => Reply::Answered {
                        status: r.status,
                        retry_after_s: crate::retry_after::seconds(r.header("retry-after")),
                        body: Some(r.body.clone().into_bytes()),
                    },
                    None => Reply::NoAnswer,
                },
            };
            self.feed.push(entry);
        }
    }

    /// The case has ended: every property's verdict over its exchanges.
    pub fn judge(mut self) -> CaseVerdicts {
        if let Some(disorder) = self.feed.disorder.take() {
            // Never re-timed silently: the case is not judged whole.
            self.feed.skipped += 1;
            self.feed.skips.push(disorder);
        }
        self.feed.finish();
        let name = |s: &WireSeen| format!("exchange {} at +{}", s.id.0, s.sent);
        let unreadable = (self.feed.skips.iter()).map(|(label, why)| format!("{label}: {why}"));
        CaseVerdicts {
            verdicts: self.feed.verdicts(&name),
            judged: self.feed.judged,
            unreadable: unreadable.collect(),
            lines: self.lines,
            har: self
                .har
                .map(|entries| crate::serve::har::document("payhub-verify conform", entries)),
        }
    }
}

/// One exchange as a HAR entry: the request as sent (a card number in the body
/// redacted), the answer as read, or status 0 with `_error` when none came.
fn har_entry(e: &Sent, started_ms: i64, time: u64, cards: &CardReading) -> Value {
    use crate::serve::har::{entry, json_response, no_response, pair, request_entry};
    let h = &e.http;
    let headers = h.wire().headers.iter().map(|(n, v)| pair(n, v)).collect();
    let body = (!h.body.is_empty()).then(|| match serde_json::from_slice(&h.body) {
        Ok(Value::Object(mut m)) => {
            cards.redact(&mut m);
            Value::Object(m).to_string()
        }
        // Not an object: no card field to read, and the bytes could hold one.
        _ => "[redacted: not a JSON object]".to_owned(),
    });
    let url = format!("http://target{}", h.target);
    let request = request_entry(&h.method, url, headers, Vec::new(), body.as_deref());
    let response = match &e.reply {
        Some(r) => {
            let headers = r.headers.iter().map(|(n, v)| pair(n, v)).collect();
            json_response(r.status, headers, &r.body)
        }
        None => {
            let mut out = no_response("HTTP/1.1");
            out["_error"] = json!("no answer within the timeout, or the connection was reset");
            out
        }
    };
    entry(crate::utc::iso_ms(started_ms), time, request, response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_properties::verdict::Status;

    const CREATE: &str =
        r#"{"amount":10000,"card":"A","currency":"USD","merchant_order_no":"O-1"}"#;
    const PAYMENT: &str = r#"{"amount":10000,"amount_refunded":0,"attempt_count":1,"currency":"USD","fee_rate_bps":290,"id":"pay_demo_001","merchant_order_no":"O-1","next_action":false,"resolution_status":"known","status":"succeeded","version":2}"#;
    const ORDER_TAKEN: &str = r#"{"error":{"code":"order_no_conflict","retryable":false,"related_resource_id":"pay_demo_001"}}"#;

    fn reply((status, body): (u16, &str)) -> WireReply {
        WireReply {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    fn create(answer: (u16, &str)) -> Sent {
        use crate::conform::case::{Fault, KeyUse, Op, Req};
        let now = Instant::now();
        Sent {
            req: Req {
                key_of: 1,
                key: KeyUse::Slot(1),
                op: Op::approved(1),
                fault: Fault::None,
                rotation: 0,
            },
            seen: Seen::Any,
            after: None,
            at: (now, now),
            http: HttpRequest {
                method: "POST".into(),
                target: "/v1/payments".into(),
                authorization: Some(b"Bearer ak_1".to_vec()),
                idempotency_key: Some(b"K-1".to_vec()),
                body: CREATE.into(),
            },
            reply: Some(reply(answer)),
        }
    }

    /// CARD-02: a recorded case never holds a card number: a test card stays, any other
    /// card value is redacted, and a body that is not a JSON object is not kept.
    #[test]
    fn the_har_of_a_case_redacts_card_numbers() {
        let profile =
            crate::check_log::profile::load(std::path::Path::new("docs/profiles/sandbox.json"))
                .unwrap();
        let mut record = Recorder::new(&profile, true).unwrap();
        let with = |body: &str| {
            let mut r = create((201, PAYMENT));
            r.http.body = body.into();
            r
        };
        record.round(
            &TargetClock::default(),
            &[
                with(r#"{"amount":1,"card":"4242424242424242"}"#),
                with(r#"{"amount":1,"card":"A"}"#),
                with("card=4242424242424242"),
            ],
        );
        let har = record.judge().har.unwrap();
        assert!(!har.contains("4242"), "{har}");
        assert!(har.contains(r#"\"card\":\"[redacted]\""#), "{har}");
        assert!(har.contains(r#"\"card\":\"A\""#), "{har}");
        assert!(har.contains("[redacted: not a JSON object]"), "{har}");
        let doc: Value = serde_json::from_str(&har).unwrap();
        assert_eq!(doc["log"]["entries"].as_array().unwrap().len(), 3);
    }

    /// A create, then its replay answered as new business (409 order_no_conflict), with
    /// the target's clock moved `moved_ms` between them: the replay property's verdict.
    fn replay_after(moved_ms: u64) -> Status {
        let profile =
            crate::check_log::profile::load(std::path::Path::new("docs/profiles/sandbox.json"))
                .unwrap();
        let clock = TargetClock::default();
        let mut record = Recorder::new(&profile, false).unwrap();
        record.round(&clock, &[create((201, PAYMENT))]);
        clock.moved(moved_ms);
        record.round(&clock, &[create((409, ORDER_TAKEN))]);
        let judged = record.judge();
        assert_eq!(judged.judged, 2);
        judged
            .verdicts
            .iter()
            .find(|v| v.name == "replay-returns-same-object")
            .unwrap()
            .status
    }

    /// RET-01: a replay within the 7 days of retention is answered with the original
    /// object; after a clock move of 8 days the key may be gone, and the order number
    /// answers. The stamps carry the move: without it the same exchanges are a violation.
    #[test]
    fn stamps_carry_the_clock_moves_so_an_expired_key_is_not_a_replay() {
        assert_eq!(replay_after(8 * 86_400_000), Status::Holds);
        assert_eq!(replay_after(0), Status::Violated);
    }

    /// The replay property over a create with `first` as its answer (`None`: lost), then
    /// its replay answered 201.
    fn replay_answered_201(first: Option<(u16, &str)>) -> Status {
        let profile =
            crate::check_log::profile::load(std::path::Path::new("docs/profiles/sandbox.json"))
                .unwrap();
        let clock = TargetClock::default();
        let mut record = Recorder::new(&profile, false).unwrap();
        let mut create_1 = create((0, ""));
        create_1.reply = first.map(reply);
        record.round(&clock, &[create_1]);
        record.round(&clock, &[create((201, PAYMENT))]);
        let judged = record.judge();
        judged
            .verdicts
            .iter()
            .find(|v| v.name == "replay-returns-same-object")
            .unwrap()
            .status
    }

    /// A waiter answered 200 in the same millisecond as the executor it waited on was sent
    /// (seen apart by conform's clock) is stamped before that send's answer: a request
    /// in flight, never a replay after the answer. Stamped by the millisecond alone,
    /// the executor's 201 read as a replay answered 201.
    #[test]
    fn events_in_one_millisecond_keep_the_order_conform_saw() {
        let profile =
            crate::check_log::profile::load(std::path::Path::new("docs/profiles/sandbox.json"))
                .unwrap();
        let clock = TargetClock::default();
        let t = Instant::now();
        let us = std::time::Duration::from_micros;
        let mut executor = create((201, PAYMENT));
        executor.at = (t, t + us(300));
        let mut waiter = create((200, PAYMENT));
        waiter.at = (t + us(100), t + us(200));
        let mut record = Recorder::new(&profile, false).unwrap();
        record.round(&clock, &[waiter, executor]);
        let judged = record.judge();
        let status = |name: &str| {
            judged
                .verdicts
                .iter()
                .find(|v| v.name == name)
                .unwrap()
                .status
        };
        assert_eq!(status("replay-returns-same-object"), Status::Holds);
        let mut stamps = Stamps::default();
        let at = stamps.stamp(&clock, &[t + us(300), t, t + us(100), t + us(200)]);
        let order: Vec<i64> = at.values().copied().collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    }

    /// A `reset_after` is recorded as no answer, an unknown outcome: a 201 to the retry
    /// may be the first execution. Had the first been answered 201, it is a violation.
    #[test]
    fn a_reset_after_is_an_unknown_answer() {
        assert_eq!(replay_answered_201(None), Status::Holds);
        assert_eq!(replay_answered_201(Some((201, PAYMENT))), Status::Violated);
    }

    /// A move is counted in every later stamp, never in an earlier one's wall part.
    #[test]
    fn a_move_shifts_every_later_stamp() {
        use std::time::Duration;
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
