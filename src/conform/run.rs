//! One case against the live target: the namespace reset (if the profile has a reset
//! endpoint) and fresh names, each round's requests sent at once with their faults,
//! each answer given to the oracle, the case's outcome.

use super::case::{self, Case, Fault, KeyUse, Names, Of, Op, Req, Round, Side, Switch};
use super::compare::{self, Observed};
use super::faults;
use super::oracle::{self, Oracle, RoundVerdict, Seen, Sent, TargetRefs};
use super::profile::{Fill, Loaded, Template, merchant_of};
use super::readings::{Reading, Taken};
use super::record::{CaseVerdicts, Recorder};
use crate::http_map::HttpRequest;
use crate::wire::{self, WireError, WireReply, WireRequest};
use payhub_sim::Choice;
use std::time::{Duration, Instant};

/// The target as a case sees it.
pub struct Target {
    pub profile: Loaded,
    /// `host:port` of the target.
    pub addr: String,
    /// Where the edge zoo plants a defect in the faults' path ([`faults::send`]).
    pub seam: crate::serve::seam::EdgeSeam,
    /// Model states the oracle may hold between rounds (`--max-states`).
    pub max_states: usize,
    /// The target's time, which stamps the exchanges the registry judges.
    pub clock: super::record::TargetClock,
    /// The profile as `check-log` reads it: how the registry reads the exchanges.
    pub log_profile: crate::check_log::profile::LogProfile,
}

/// One exchange as the report prints it.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Exchange {
    pub round: usize,
    pub request: String,
    pub answer: String,
    /// An answer of the breaking round that no model state explains with the others
    /// (the closest paths' misses): the witness.
    pub unexplained: bool,
    /// The request's place in its round's list (`None`: a note of a round that sends
    /// nothing, a clock move or a control).
    #[serde(skip)]
    pub place: Option<usize>,
}

/// How a case went.
#[derive(Clone, Debug)]
pub enum CaseOutcome {
    Conforms,
    /// Round `round` (0-based) got an answer no model state explains.
    Violation {
        round: usize,
        allowed: Vec<String>,
        /// The model's choices through the longest conforming prefix and its own run of
        /// the breaking round (for the what-if script).
        tape: Vec<Choice>,
        /// The rules by which the closest paths answered the requests whose answers no
        /// state explains (the rules the target broke).
        rules: Vec<&'static str>,
    },
    Incomplete(String),
}

#[derive(Debug)]
pub struct CaseRun {
    /// The readings the target took where the contract is silent (a conforming case),
    /// those every remaining model state took, each with the exchange that showed it.
    pub readings: Vec<(Reading, String)>,
    pub exchanges: Vec<Exchange>,
    pub outcome: CaseOutcome,
    /// The registry's verdicts over the case's exchanges ([`super::record`]).
    pub registry: CaseVerdicts,
    /// Exchanges the case sent, and those whose answer from the target could not be read
    /// or never came with no fault planned (the target's failures, why each).
    pub sent: usize,
    pub failed: Vec<String>,
}

/// Why a case's exchanges that the target failed leave it not judged: the unknown
/// outcomes the oracle allowed for them were the target's failures, not faults of the case.
fn failed_case(failed: &[String], sent: usize) -> String {
    format!(
        "the target failed {} of {sent} exchanges (its answer could not be read or never came, with no fault planned), and the case's judgement depended on them: first {}",
        failed.len(),
        failed.first().map_or("", String::as_str)
    )
}

pub(super) fn timeout(t: &Target) -> Duration {
    Duration::from_millis(t.profile.timeout.0)
}

/// Sends a control template to the target (reset, clock, pause) for each merchant of
/// the keys (once, if it does not name the merchant), or for `merchant` alone.
async fn control(
    t: &Target,
    template: &Template,
    fill: Fill,
    merchant: Option<u32>,
) -> Result<(), String> {
    let merchants = (t.profile.model_keys.iter()).map(|k| merchant_of(*k));
    let merchants: std::collections::BTreeSet<u32> = merchants.collect();
    let mut reqs = Vec::new();
    for m in merchant.map_or(merchants, |m| [m].into()) {
        let mut fill = fill.clone();
        fill.insert("merchant", t.profile.merchant_name(m).into());
        let r = template.render(&fill);
        if !reqs.contains(&r) {
            reqs.push(r);
        }
    }
    for (method, target, body) in reqs {
        match direct(t, &method, &target, body).await {
            Ok(r) if (200..300).contains(&r.status) => {}
            Ok(r) => {
                let body: String = r.body.chars().take(200).collect();
                return Err(format!("{method} {target} answered {}: {body}", r.status));
            }
            Err(e) => return Err(down_or(&format!("{method} {target}"), e)),
        }
    }
    Ok(())
}

/// Switches one of the target's inputs with the profile's control for it: a rate limit
/// is one merchant's; a pause is sent for each merchant of the keys.
pub(super) async fn switch(t: &Target, s: Switch) -> Result<(), String> {
    let controls = &t.profile.profile.controls;
    let (limit, pause) = (&controls.rate_limit, &controls.pause);
    let (entry, on, what, merchant) = match s {
        Switch::RateLimit { on, merchant } => (limit, on, "controls.rate_limit", Some(merchant)),
        Switch::Pause { on } => (pause, on, "controls.pause", None),
    };
    let Some(c) = entry else {
        return Err(format!(
            "the case switches the target's input, and the profile has no {what}"
        ));
    };
    let fill = Fill::from([("on", on.into())]);
    (control(t, &c.template(on), fill, merchant).await).map_err(|e| format!("{what}: {e}"))
}

/// Every control of the profile checked to take effect before the first case, else a
/// control the target answers 2xx and ignores would be blamed on the target: switched
/// on, a valid create must not be executed (RATE-01: its own 429; RATE-04: its own 503).
/// One that takes no effect is exit 2 naming it, never a violation.
pub async fn check_controls(t: &Target, tag: &str) -> Result<(), String> {
    let c = &t.profile.profile.controls;
    let rate_limit: fn(bool) -> Switch = |on| Switch::RateLimit { merchant: 1, on };
    let pause: fn(bool) -> Switch = |on| Switch::Pause { on };
    let checks = [
        (c.rate_limit.is_some(), "controls.rate_limit", rate_limit),
        (c.pause.is_some(), "controls.pause", pause),
    ];
    for (n, (_, name, to)) in checks.into_iter().enumerate().filter(|(_, c)| c.0) {
        switch(t, to(true)).await?;
        let status = create(t, &format!("{tag}-{n}")).await;
        switch(t, to(false)).await?;
        let status = status?;
        if (200..300).contains(&status) {
            return Err(format!(
                "{name} took no effect: switched on (answered 2xx), the target then executed a create ({status}); check the control's path, method and body"
            ));
        }
    }
    Ok(())
}

/// One create under a fresh key and order number: its status.
async fn create(t: &Target, tag: &str) -> Result<u16, String> {
    let req = Req::new(1, KeyUse::Slot(1), Op::approved(1));
    let names = Names::new(t.profile.prefix(), tag);
    let http = render(t, &names, &Default::default(), &req).wire();
    let reply = wire::send(&t.addr, &http, timeout(t)).await;
    (reply.map(|r| r.status)).map_err(|e| down_or("checking the controls: POST /v1/payments", e))
}

/// Moves the target's clock by `by` with `clock.advance`, and checks with `clock.read`
/// (if the profile has it) that it moved: a clock that did not is the profile's
/// problem (exit 2), never the target's violation.
async fn move_clock(t: &Target, by: payhub_model::Millis) -> Result<(), String> {
    let Some(advance) = &t.profile.profile.clock.advance else {
        return Err("the case moves the clock, and the profile has no clock.advance".into());
    };
    let read = t.profile.profile.clock.read.as_ref();
    let before = match read {
        Some(r) => Some((read_clock(t, r).await?, Instant::now())),
        None => None,
    };
    let fill = Fill::from([("seconds", by.0.div_ceil(1000).into()), ("ms", by.0.into())]);
    let moved = control(t, advance, fill, None).await;
    moved.map_err(|e| format!("clock.advance: {e}"))?;
    let Some((r, (before, read_at))) = read.zip(before) else {
        t.clock.moved(by.0);
        return Ok(());
    };
    let after = read_clock(t, r).await?;
    if after - before + 1 < by.0 as i128 {
        return Err(format!(
            "clock.advance did not move the target's clock: {} read {before} ms before and {after} ms after a move of {by} (the control took no effect)",
            r.path
        ));
    }
    // What the target says it moved, less the wall time the stamps count already.
    let wall = read_at.elapsed().as_millis() as i128;
    (t.clock).moved(u64::try_from(after - before - wall).unwrap_or(0).max(by.0));
    Ok(())
}

/// Sends `method target` (with `body`) to one of the target's test endpoints, with the
/// profile's `control_headers` and no fault.
async fn direct(
    t: &Target,
    method: &str,
    target: &str,
    body: Option<String>,
) -> Result<WireReply, WireError> {
    let headers = t.profile.profile.control_headers.iter();
    let req = WireRequest {
        headers: headers.map(|(n, v)| (n.clone(), v.clone())).collect(),
        ..WireRequest::new(method, target, body)
    };
    wire::send(&t.addr, &req, timeout(t)).await
}

/// A target that cannot be reached is down; else `what` failed.
pub(super) fn down_or(what: &str, e: WireError) -> String {
    match e {
        WireError::Connect(e) => format!("the target is down ({e})"),
        e => format!("{what}: {e}"),
    }
}

/// The target's time in milliseconds, read with `clock.read`.
async fn read_clock(t: &Target, r: &super::profile::ClockRead) -> Result<i128, String> {
    let reply = direct(t, "GET", &r.path, None).await;
    let reply = reply.map_err(|e| format!("clock.read: GET {}: {e}", r.path))?;
    let body: serde_json::Value = serde_json::from_str(&reply.body)
        .map_err(|e| format!("clock.read: GET {} is not JSON: {e}", r.path))?;
    clock_ms(&body, r).ok_or_else(|| {
        format!(
            "clock.read: GET {} has no number or ISO 8601 date {:?}",
            r.path, r.field
        )
    })
}

/// The time in milliseconds that `body`'s `clock.read` field shows: an ISO 8601 date,
/// or a number of seconds (of milliseconds with `"unit": "ms"`).
fn clock_ms(body: &serde_json::Value, r: &super::profile::ClockRead) -> Option<i128> {
    let field = body.get(&r.field)?;
    if let Some(text) = field.as_str() {
        return crate::utc::parse_ms(text).map(i128::from);
    }
    let scale = if r.unit.as_deref() == Some("ms") {
        1.0
    } else {
        1000.0
    };
    Some((field.as_f64()? * scale).round() as i128)
}

/// Runs `case` under names of `tag` (`har`: its exchanges kept as a HAR log too). `Err`:
/// the target or the profile is unusable (exit 2).
pub async fn run_case(t: &Target, case: &Case, tag: &str, har: bool) -> Result<CaseRun, String> {
    let names = Names::new(t.profile.prefix(), tag);
    if let Some(reset) = &t.profile.profile.isolation.reset {
        let reset = Template {
            method: None,
            path: reset.clone(),
            body: None,
        };
        let done = control(t, &reset, Fill::new(), None).await;
        done.map_err(|e| format!("isolation.reset: {e}"))?;
    }
    let mut oracle = Oracle::new(&t.profile, t.max_states);
    let mut refs = TargetRefs::default();
    let mut exchanges = Vec::new();
    let mut record = Recorder::new(&t.log_profile, har)?;
    let (mut sent_n, mut failed) = (0usize, Vec::new());
    let mut outcome = CaseOutcome::Conforms;
    for (ri, round) in case.rounds.iter().enumerate() {
        oracle.round_no = ri;
        let before = (oracle.states.first()).map_or_else(Vec::new, |s| s.tape.clone());
        let round_refs = refs.clone();
        let at = |sent| oracle::Round {
            names: &names,
            refs: &round_refs,
            sent,
        };
        let mut sent = Vec::new();
        let note = |request| Exchange {
            round: ri,
            request,
            ..Exchange::default()
        };
        let verdict = match round {
            Round::Advance(by) => {
                move_clock(t, *by).await?;
                exchanges.push(note(format!("(the target's clock moves {by})")));
                oracle.advance(*by)
            }
            Round::Control(s) => {
                switch(t, *s).await?;
                exchanges.push(note(s.to_string()));
                oracle.control(*s)
            }
            Round::Send(reqs) => {
                sent = send_round(t, &names, &refs, reqs, &mut failed).await?;
                sent_n += sent.len();
                record.round(&t.clock, &sent);
                let afters: Vec<_> = sent.iter().map(|s| s.after).collect();
                for i in print_order(&afters) {
                    exchanges.push(Exchange {
                        round: ri,
                        request: sent[i].request_line(),
                        answer: sent[i].seen.text(),
                        unexplained: false,
                        place: Some(i),
                    });
                }
                for s in &sent {
                    if let Seen::Answer(o) = &s.seen {
                        refs.learn(t.profile.namespace(s.req.key_of), &o.body);
                    }
                }
                oracle.round(at(&sent))
            }
        };
        match verdict {
            RoundVerdict::Conforms => {}
            RoundVerdict::Broken {
                allowed,
                unexplained,
                rules,
            } => {
                for e in exchanges.iter_mut().filter(|e| e.round == ri) {
                    e.unexplained = e.place.is_some_and(|i| unexplained.contains(&i));
                }
                let tape = match round {
                    Round::Send(_) => oracle.model_run(at(&sent)),
                    Round::Advance(_) | Round::Control(_) => None,
                };
                outcome = CaseOutcome::Violation {
                    round: ri,
                    allowed,
                    tape: tape.unwrap_or(before),
                    rules,
                };
                break;
            }
            RoundVerdict::Incomplete(why) => {
                outcome = CaseOutcome::Incomplete(why);
                break;
            }
        }
    }
    let mut readings = Vec::new();
    if matches!(outcome, CaseOutcome::Conforms) {
        if failed.is_empty() {
            readings = readings_shown(&oracle, &exchanges);
        } else {
            outcome = CaseOutcome::Incomplete(failed_case(&failed, sent_n));
        }
    }
    Ok(CaseRun {
        readings,
        exchanges,
        outcome,
        registry: record.judge(),
        sent: sent_n,
        failed,
    })
}

/// `req` as the target takes it: its keys, cards and ids, and its spelling of the body
/// (its card field), as sent and as reported.
pub(super) fn render(t: &Target, names: &Names, refs: &TargetRefs, req: &case::Req) -> HttpRequest {
    let ns = t.profile.namespace(req.key_of);
    req.render(
        names,
        &Side {
            of: Of::Target(&t.profile),
            refs,
            ns,
        },
    )
}

/// Sends a round's requests at once and reads what came of each (a duplicate's second
/// copy as a request of its own, sent after the first): one [`Sent`] each, which the
/// oracle and the registry ([`super::record`]) both read.
async fn send_round(
    t: &Target,
    names: &Names,
    refs: &TargetRefs,
    reqs: &[case::Req],
    failed: &mut Vec<String>,
) -> Result<Vec<Sent>, String> {
    let https: Vec<HttpRequest> = reqs.iter().map(|r| render(t, names, refs, r)).collect();
    let tasks: Vec<_> = (reqs.iter().zip(&https))
        .map(|(req, http)| {
            let (addr, wire_req, fault) = (t.addr.clone(), http.wire(), req.fault);
            let (limit, seam) = (timeout(t), t.seam);
            tokio::spawn(async move { faults::send(&addr, &wire_req, fault, limit, seam).await })
        })
        .collect();
    let mut sent = Vec::new();
    let mut seconds = Vec::new();
    for (i, (task, (req, http))) in tasks.into_iter().zip(reqs.iter().zip(&https)).enumerate() {
        let f = (task.await).map_err(|e| format!("a request task failed: {e}"))?;
        if let Some(why) = f.failure {
            failed.push(format!("{}: {why}", http.notation()));
        }
        sent.push(sent_of(t, *req, None, http, f.at, f.reply)?);
        if let Some((times, second)) = f.second {
            if let Err(e) = &second {
                failed.push(format!("{} (its second copy): {e}", http.notation()));
            }
            let copy = case::Req {
                fault: Fault::None,
                ..*req
            };
            seconds.push(sent_of(t, copy, Some(i), http, times, second)?);
        }
    }
    sent.extend(seconds);
    Ok(sent)
}

/// Request `req` as sent (`http`, at `at`), read: what the oracle sees of `result`,
/// which the registry records too.
fn sent_of(
    t: &Target,
    req: case::Req,
    after: Option<usize>,
    http: &HttpRequest,
    at: (Instant, Instant),
    result: Result<WireReply, WireError>,
) -> Result<Sent, String> {
    let seen = match &result {
        Ok(reply) => {
            let body: serde_json::Value = serde_json::from_str(&reply.body)
                .unwrap_or(serde_json::Value::String(reply.body.clone()));
            let strict = t.profile.profile.strict;
            if let Some(field) =
                compare::unexpected_field(&body, &t.profile.profile.extra_fields).filter(|_| strict)
            {
                return Err(format!(
                    "the target answered {} with field {field}, which the contract does not name and the profile does not expect (add it to \"extra_fields\", or leave \"strict\" off)",
                    http.notation()
                ));
            }
            Seen::Answer(Observed {
                status: reply.status,
                retry_after: reply.header("retry-after").map(str::to_owned),
                body,
            })
        }
        Err(WireError::Connect(e)) => return Err(format!("the target is down ({e})")),
        Err(WireError::Malformed(e)) => {
            return Err(format!(
                "the target's answer to {} is not HTTP: {e}",
                http.notation()
            ));
        }
        Err(WireError::Reset | WireError::Timeout) if req.fault == Fault::ResetBefore => {
            Seen::NotSent
        }
        Err(WireError::Reset | WireError::Timeout) => Seen::Unknown,
    };
    Ok(Sent {
        req,
        seen,
        after,
        http: http.clone(),
        at,
        reply: result.ok(),
    })
}

/// Whether the target answers at all (a GET of a Payment nobody has).
pub async fn probe(t: &Target) -> Result<(), String> {
    let key = t.profile.target_keys(1).first().copied().unwrap_or("");
    let auth = format!("Bearer {key}");
    let req = WireRequest::api("GET", "/v1/payments/pay_demo_999", &auth, None, None);
    let reply = wire::send(&t.addr, &req, timeout(t)).await;
    (reply.map(|_| ())).map_err(|e| down_or("the target does not answer HTTP", e))
}

/// A round's requests in the order the report prints them: each (by its place in the
/// round's list, where the duplicates' second copies come after all first copies),
/// then its second copy.
fn print_order(afters: &[Option<usize>]) -> Vec<usize> {
    (0..afters.len())
        .filter(|&i| afters[i].is_none())
        .flat_map(|i| {
            std::iter::once(i).chain((0..afters.len()).filter(move |&j| afters[j] == Some(i)))
        })
        .collect()
}

/// The readings every state of `oracle` took (what the answers showed, whichever state
/// explains them), each with the exchange that showed it first.
fn readings_shown(oracle: &Oracle, exchanges: &[Exchange]) -> Vec<(Reading, String)> {
    let Some(first) = oracle.states.first() else {
        return Vec::new();
    };
    let every = |t: &&Taken| {
        (oracle.states.iter()).all(|s| s.readings.iter().any(|x| x.reading == t.reading))
    };
    let shown = |t: &Taken| (t.reading, first_shown(t, exchanges));
    first.readings.iter().filter(every).map(shown).collect()
}

/// The line naming the exchange that showed `t` first.
fn first_shown(t: &Taken, exchanges: &[Exchange]) -> String {
    let mut round = exchanges.iter().filter(|e| e.round == t.round);
    let own = round.clone().find(|e| e.place == Some(t.request));
    own.or_else(|| round.next())
        .map(|e| format!("round {}: {} → {}", t.round + 1, e.request, e.answer))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::profile::ClockRead;
    use super::super::readings::{Reading, Taken};
    use super::{Exchange, first_shown, print_order};
    use serde_json::json;

    /// A reading shown by a request that comes after a duplicate in its round names that
    /// request, though the report prints the duplicate's second copy between them.
    #[test]
    fn a_reading_names_its_own_exchange_after_a_duplicate() {
        // Round 0: request 0 is a duplicate (its second copy is request 2), request 1 is not.
        let afters = [None, None, Some(0)];
        assert_eq!(print_order(&afters), [0, 2, 1]);
        let mut exchanges = Vec::new();
        for i in print_order(&afters) {
            exchanges.push(Exchange {
                round: 0,
                request: format!("request {i}"),
                answer: "200".into(),
                unexplained: false,
                place: Some(i),
            });
        }
        let taken = |request| Taken {
            reading: Reading::FieldsIgnored,
            round: 0,
            request,
        };
        assert_eq!(
            first_shown(&taken(1), &exchanges),
            "round 1: request 1 → 200"
        );
        assert_eq!(
            first_shown(&taken(2), &exchanges),
            "round 1: request 2 → 200"
        );
    }

    /// A target's clock read as a number of seconds, of milliseconds, or an ISO 8601
    /// date; anything else is no reading.
    #[test]
    fn a_clock_reads_as_seconds_milliseconds_or_an_iso_date() {
        let read = |field: &str, unit: Option<&str>| ClockRead {
            path: "/clock".into(),
            field: field.into(),
            unit: unit.map(str::to_owned),
        };
        let body =
            json!({"s": 90.5, "ms": 90500, "now": "1970-01-01T00:01:30.500Z", "bad": "soon"});
        assert_eq!(super::clock_ms(&body, &read("s", None)), Some(90_500));
        assert_eq!(
            super::clock_ms(&body, &read("ms", Some("ms"))),
            Some(90_500)
        );
        assert_eq!(super::clock_ms(&body, &read("now", None)), Some(90_500));
        assert_eq!(super::clock_ms(&body, &read("bad", None)), None);
        assert_eq!(super::clock_ms(&body, &read("absent", None)), None);
    }
}
