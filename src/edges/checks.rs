//! The end-to-end checks of the edges over one session, each a pure function of what
//! the session left and failing with one sentence naming the first divergence:
//!
//! - [`EdgeCheck::SandboxVerdict`]: the sandbox's own verdict violates exactly the
//!   properties the session's clients break (none for the reference client);
//! - [`EdgeCheck::JudgeEvents`]: `judge` (check-log on the session's JSON Lines) gives the
//!   sandbox's verdict, property by property;
//! - [`EdgeCheck::CheckLogHar`]: check-log on the sandbox's HAR gives the sandbox's verdict
//!   for every property the wire witnesses (at least ten), the rest `cannot_judge`;
//! - [`EdgeCheck::CheckLogCapture`]: check-log on the client's own capture (the world's
//!   shape: [`super::capture`]) gives what it gives on the sandbox's HAR: the same
//!   exchanges, the same evidence;
//! - [`EdgeCheck::HttpMapping`]: every exchange the client made is, on the session's
//!   events, the request it sent (its `Idempotency-Key`) and the answer it read (status
//!   and `Retry-After`), or lost where it read none: the sandbox's HTTP mapping checked
//!   against its own record;
//! - [`EdgeCheck::FaultEffects`]: every fault of the plan had its documented effect on
//!   what executed (`serve::faults`: `reset_before` and `500_before` execute nothing,
//!   `reset_after` and `500_after` execute, `rate_limited` is a 429 with `Retry-After`,
//!   `unavailable` a 503 or its key's replay), read from the session's events, the plan matched here from
//!   its documentation (endpoint, `nth`, `times`), not by the sandbox's matcher.

use super::EdgeSeam;
use super::session::Session;
use crate::serve::faults::{Action, Plan};
use payhub_model::ApiRequest;
use payhub_model::event::{Event, Message, What};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

payhub_model::named! {
    fn name;
    /// One end-to-end check.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum EdgeCheck {
        SandboxVerdict = "sandbox-verdict",
        JudgeEvents = "judge-events",
        CheckLogHar = "check-log-har",
        CheckLogCapture = "check-log-capture",
        FaultEffects = "fault-effects",
        /// What the client saw is what the session's events say was sent and delivered.
        HttpMapping = "http-mapping",
        /// A conform smoke run against the sandbox ([`super::smoke`]).
        ConformSmoke = "conform-smoke",
    }
}

impl EdgeCheck {
    /// The checks over a session, in the order they run.
    pub const SESSION: [EdgeCheck; 6] = [
        EdgeCheck::SandboxVerdict,
        EdgeCheck::JudgeEvents,
        EdgeCheck::FaultEffects,
        EdgeCheck::HttpMapping,
        EdgeCheck::CheckLogHar,
        EdgeCheck::CheckLogCapture,
    ];
}

/// Property name → status, from a verdict's `properties`.
type Statuses = BTreeMap<String, String>;

fn statuses_of_json(verdict: &serde_json::Value) -> Statuses {
    let properties = verdict["properties"].as_array().into_iter().flatten();
    let status = |p: &serde_json::Value| -> Option<(String, String)> {
        Some((p["name"].as_str()?.into(), p["status"].as_str()?.into()))
    };
    properties.filter_map(status).collect()
}

/// The properties a session's sandbox verdict violates.
pub fn violated(verdict: &serde_json::Value) -> Vec<String> {
    statuses_of_json(verdict)
        .into_iter()
        .filter(|(_, s)| s == "violated")
        .map(|(n, _)| n)
        .collect()
}

/// check-log over `text` written to `dir/name`, read through `seam`.
fn check_log(dir: &Path, name: &str, text: &str, seam: EdgeSeam) -> Result<Statuses, String> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    let judged = crate::check_log::judge_file_with(&path, None, false, seam)?;
    Ok(judged
        .verdicts
        .iter()
        .map(|v| (v.name.to_owned(), v.status.as_str().to_owned()))
        .collect())
}

fn first_difference(want: &Statuses, got: &Statuses) -> Option<String> {
    want.iter().find_map(|(name, w)| {
        let g = got.get(name).map_or("absent", String::as_str);
        (g != w).then(|| format!("{name}: {g}, where the reference reading says {w}"))
    })
}

/// Runs `check` over `session`; `Err` with the first divergence. `expect_violated`:
/// the properties the session's clients break.
pub fn run(
    check: EdgeCheck,
    session: &Session,
    plan: &Plan,
    expect_violated: &[&str],
    dir: &Path,
    tag: &str,
    seam: EdgeSeam,
) -> Result<(), String> {
    if let Some(e) = session.errors.first() {
        return Err(format!("the session did not run: {e}"));
    }
    let sandbox = statuses_of_json(&session.verdict);
    if sandbox.is_empty() {
        return Err("the sandbox gave no verdict".into());
    }
    let sandbox_har = |seam| check_log(dir, &format!("{tag}.har"), &session.har, seam);
    match check {
        EdgeCheck::SandboxVerdict => {
            let violated = violated(&session.verdict);
            let mut want = expect_violated.to_vec();
            want.sort_unstable();
            if violated != want {
                return Err(format!(
                    "the sandbox's verdict violates [{}], where the clients break [{}]",
                    violated.join(", "),
                    want.join(", ")
                ));
            }
            Ok(())
        }
        EdgeCheck::JudgeEvents => {
            let events = check_log(dir, &format!("{tag}.jsonl"), &session.events, seam)?;
            first_difference(&sandbox, &events).map_or(Ok(()), |d| {
                Err(format!("judge on the session's events: {d}"))
            })
        }
        EdgeCheck::CheckLogHar => {
            let har = sandbox_har(seam)?;
            let judged = har.values().filter(|s| *s != "cannot_judge").count();
            for (name, s) in &har {
                if s != "cannot_judge" && sandbox.get(name) != Some(s) {
                    return Err(format!(
                        "check-log on the sandbox's HAR: {name}: {s}, where the sandbox says {}",
                        sandbox.get(name).map_or("nothing", String::as_str)
                    ));
                }
            }
            if judged < 10 {
                return Err(format!(
                    "check-log on the sandbox's HAR judges {judged} properties, fewer than 10"
                ));
            }
            Ok(())
        }
        EdgeCheck::CheckLogCapture => {
            let har = sandbox_har(EdgeSeam::REFERENCE)?;
            let text = super::capture::to_har(&session.seen);
            let capture = check_log(dir, &format!("{tag}-capture.har"), &text, seam)?;
            first_difference(&har, &capture).map_or(Ok(()), |d| {
                Err(format!("check-log on the client's capture: {d}"))
            })
        }
        EdgeCheck::FaultEffects => fault_effects(&session.events, plan),
        EdgeCheck::HttpMapping => http_mapping(session),
        EdgeCheck::ConformSmoke => {
            Err("conform's smoke run is no check over a session (super::smoke runs it)".into())
        }
    }
}

/// The documented action of the plan for each request, in the order the sandbox saw
/// them: the first rule whose window (`nth` .. `nth + times` of its matches) holds it.
/// Only `endpoint` matchers are read (the sessions' plans use no other).
fn planned(plan: &Plan, endpoint: &str, counts: &mut [u32]) -> Option<Action> {
    let mut hit = None;
    for (rule, n) in plan.faults.iter().zip(counts.iter_mut()) {
        if rule.endpoint.as_deref().is_some_and(|e| e != endpoint) {
            continue;
        }
        *n += 1;
        if hit.is_none() && *n >= rule.nth && *n < rule.nth + rule.times {
            hit = Some(rule.action);
        }
    }
    hit
}

/// What the events show of one request.
#[derive(Default)]
struct Fate {
    arrived: bool,
    refused: bool,
    handled: bool,
    request_lost: bool,
    answer_lost: bool,
    delivered: Option<(u16, Option<u32>)>,
}

/// The session's requests in the order sent (id, request), and each one's fate.
type Fates = (Vec<(u32, ApiRequest)>, BTreeMap<u32, Fate>);

fn fates_of(events: &str) -> Result<Fates, String> {
    let mut order = Vec::new();
    let mut fates: BTreeMap<u32, Fate> = BTreeMap::new();
    for line in events.lines().filter(|l| !l.trim().is_empty()) {
        let e: Event = serde_json::from_str(line).map_err(|e| format!("not an event: {e}"))?;
        match e.what {
            What::Sent { id, request, .. } => {
                order.push((id.0, request));
                fates.entry(id.0).or_default();
            }
            What::Arrived { id, .. } => fates.entry(id.0).or_default().arrived = true,
            What::Refused500 { id, .. } => fates.entry(id.0).or_default().refused = true,
            What::Handled { id, .. } => fates.entry(id.0).or_default().handled = true,
            What::Lost {
                message: Message::Request { id, .. },
            } => fates.entry(id.0).or_default().request_lost = true,
            What::Lost {
                message: Message::Response { id, .. },
            } => fates.entry(id.0).or_default().answer_lost = true,
            What::Delivered { id, response, .. } => {
                fates.entry(id.0).or_default().delivered =
                    Some((response.status, response.retry_after_s));
            }
            _ => {}
        }
    }
    Ok((order, fates))
}

fn http_mapping(session: &Session) -> Result<(), String> {
    let (order, fates) = fates_of(&session.events)?;
    let api: Vec<_> = session
        .seen
        .iter()
        .filter(|x| x.request.target.starts_with("/v1/"))
        .collect();
    if api.len() != order.len() {
        return Err(format!(
            "the client made {} exchanges, the sandbox's events send {}",
            api.len(),
            order.len()
        ));
    }
    for (n, (x, (id, request))) in api.iter().zip(&order).enumerate() {
        let sent_key = x
            .request
            .headers
            .iter()
            .find(|(h, _)| h.eq_ignore_ascii_case("idempotency-key"))
            .map(|(_, v)| v.as_str());
        let key = request.idempotency_key.as_ref().map(|k| k.as_str());
        if sent_key != key {
            return Err(format!(
                "exchange {}: the client sent Idempotency-Key {sent_key:?}, the events record {key:?}",
                n + 1
            ));
        }
        let f = &fates[id];
        let recorded = f.delivered.filter(|_| !(f.request_lost || f.answer_lost));
        let read = x.answer.as_ref().map(|r| {
            (
                r.status,
                r.header("retry-after")
                    .and_then(|v| v.trim().parse::<u32>().ok()),
            )
        });
        if read != recorded {
            return Err(format!(
                "exchange {}: the client read {}, the events record {}",
                n + 1,
                answer_text(read),
                answer_text(recorded)
            ));
        }
    }
    Ok(())
}

/// `429 with Retry-After 1`, `409 without Retry-After`, `no answer`.
fn answer_text(answer: Option<(u16, Option<u32>)>) -> String {
    match answer {
        None => "no answer".into(),
        Some((status, Some(s))) => format!("{status} with Retry-After {s}"),
        Some((status, None)) => format!("{status} without Retry-After"),
    }
}

/// The plan's name of `action` (`reset_before`).
fn action_name(action: Action) -> String {
    serde_json::to_value(action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn fault_effects(events: &str, plan: &Plan) -> Result<(), String> {
    let (order, fates) = fates_of(events)?;
    let mut counts = vec![0u32; plan.faults.len()];
    for (n, (id, request)) in order.iter().enumerate() {
        let endpoint = crate::serve::faults::endpoint_name(&request.endpoint);
        let Some(action) = planned(plan, endpoint, &mut counts) else {
            continue;
        };
        let f = &fates[id];
        let executed = f.handled;
        let (ok, should) = match action {
            Action::ResetBefore => (
                f.request_lost && !f.arrived && !executed,
                "is lost before the platform: nothing executes",
            ),
            Action::ResetAfter => (executed && f.answer_lost, "executes and its answer is lost"),
            Action::Fail500Before => (
                f.refused && !executed && f.delivered.is_some_and(|d| d.0 == 500),
                "is answered 500 by the edge: nothing executes",
            ),
            Action::Fail500After => (
                executed && f.delivered.is_some_and(|d| d.0 == 500),
                "executes, and the edge answers 500",
            ),
            Action::RateLimited => (
                f.delivered.is_some_and(|d| d.0 == 429 && d.1.is_some()),
                "is answered 429 with Retry-After",
            ),
            // A paused channel creates nothing; a key whose first execution completed is
            // replayed (200) before the channel is asked.
            Action::Unavailable => (
                f.delivered.is_some_and(|d| d.0 == 503 || d.0 == 200),
                "is answered 503 (or 200, its key's replay)",
            ),
            Action::SlowUpstream | Action::Hold => (true, ""),
        };
        if !ok {
            return Err(format!(
                "request {} ({endpoint}, exchange {id}) met {}, which {should}; the events show: arrived {}, executed {}, answer {}",
                n + 1,
                action_name(action),
                f.arrived,
                executed,
                match (f.answer_lost, f.delivered) {
                    (true, _) => "lost".to_owned(),
                    (_, Some((s, _))) => format!("{s}"),
                    _ => "none".to_owned(),
                }
            ));
        }
    }
    Ok(())
}
