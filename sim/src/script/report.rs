//! What a run of a script did, and its renderings: text (each statement followed by
//! the trace lines it caused and the verdict of its expectation), JSON, Mermaid.

use super::ScriptError;
use super::ast::{Pos, Script, Server};
use crate::choice::Choice;
use crate::driver::Violation;
use crate::event_fold::EventFold;
use crate::trace::Trace;
use crate::world::World;
use payhub_model::{ApiRequest, ApiResponse, AttemptId, Card, PaymentId, RequestId};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// A request line and what came of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    pub line: u32,
    pub server: String,
    pub id: RequestId,
    pub request: ApiRequest,
    /// The response as the server received it.
    pub response: Option<ApiResponse>,
    /// The request or its response was lost.
    pub lost: bool,
}

impl Exchange {
    /// `201`, `409 idempotency_conflict`, `lost` or `pending`.
    pub fn outcome(&self) -> String {
        match (&self.response, self.lost) {
            (Some(r), _) => match r.error_code() {
                Some(c) => format!("{} {}", r.status, c.as_str()),
                None => r.status.to_string(),
            },
            (None, true) => "lost".to_owned(),
            (None, false) => "pending".to_owned(),
        }
    }
}

/// An upstream charge call, with the Idempotency-Key of the request that caused it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CallRecord {
    pub attempt: AttemptId,
    pub payment: PaymentId,
    pub card: Card,
    pub key: Option<String>,
}

/// The verdict on one expectation (or on a fault or branch that never applied).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExpectResult {
    pub pos: Pos,
    pub text: String,
    /// `None` when it holds.
    pub failure: Option<String>,
    /// The run stopped (at a violation) before this line.
    pub skipped: bool,
}

/// A run of a script.
#[derive(Clone, Debug)]
pub struct Report<F: EventFold> {
    /// The script that ran.
    pub script: Script,
    pub trace: Trace,
    /// The choices applied, in order: a tape [`crate::driver::replay`] reproduces.
    pub tape: Vec<Choice>,
    /// The script line of each choice.
    pub step_lines: Vec<u32>,
    /// Every request line, in order, with its response.
    pub exchanges: Vec<Exchange>,
    pub results: Vec<ExpectResult>,
    /// The first property violated, and the statement whose step violated it.
    pub violation: Option<(Violation, Pos)>,
    /// The rule IDs of the violated property (the caller that knows the properties
    /// fills them in: `payhub-verify run`), printed next to its name.
    pub violation_rules: Vec<&'static str>,
    /// A statement that could not apply (the world did not do what the script assumed).
    pub error: Option<ScriptError>,
    pub world: World<F>,
}

impl ExpectResult {
    /// `ok`, `not reached` or `FAILED: …`.
    fn verdict(&self) -> String {
        match (&self.failure, self.skipped) {
            (Some(f), _) => format!("FAILED: {f}"),
            (None, true) => "not reached".to_owned(),
            (None, false) => "ok".to_owned(),
        }
    }
}

impl<F: EventFold> Report<F> {
    /// The property the script expects violated (`expect violation NAME`).
    pub fn expected_violation(&self) -> Option<&str> {
        let expected = self.script.expected_violation.as_ref();
        expected.map(|(n, _)| n.as_str())
    }

    /// `NAME [IDEM-01, KEY-03]`: the violated property and its rule IDs, as `check`
    /// prints them.
    fn violated(&self, v: &Violation) -> String {
        match self.violation_rules.as_slice() {
            [] => v.property.clone(),
            rules => format!("{} [{}]", v.property, rules.join(", ")),
        }
    }

    /// Whether every expectation held and the violations are exactly the expected one.
    pub fn passed(&self) -> bool {
        let violation_ok = match (&self.violation, self.expected_violation()) {
            (None, None) => true,
            (Some((v, _)), Some(name)) => v.property == name,
            _ => false,
        };
        self.error.is_none() && violation_ok && self.results.iter().all(|r| r.failure.is_none())
    }

    /// The failures, one line each (`file:line:column: …`).
    pub fn failures(&self) -> Vec<String> {
        let file = &self.script.file;
        let mut out: Vec<String> = self.error.iter().map(|e| e.to_string()).collect();
        for r in self.results.iter().filter(|r| r.failure.is_some()) {
            let (Pos { line, column }, f) = (r.pos, r.failure.as_deref().unwrap_or_default());
            out.push(format!("{file}:{line}:{column}: {}: {f}", r.text));
        }
        if let (Some((v, Pos { line, column })), None) =
            (&self.violation, self.expected_violation())
        {
            let (name, detail) = (self.violated(v), &v.detail);
            out.push(format!("{file}:{line}:{column}: violated {name}: {detail}"));
        }
        out
    }

    /// `A=merchant-0 ak_1 (merchant_1 test)`, one per server.
    fn servers_line(&self) -> String {
        let server = |s: &Server| {
            let owner = match (s.merchant, s.environment) {
                (Some(m), Some(e)) => format!(" ({m} {e})"),
                _ => String::new(),
            };
            let client = match &s.policy {
                Some(p) => format!(" client={p} db={}", s.db),
                None => String::new(),
            };
            let (name, node, key) = (&s.name, s.node, s.api_key);
            format!("{name}=merchant-{node} {key}{owner}{client}")
        };
        let servers: Vec<String> = self.script.servers.iter().map(server).collect();
        servers.join(" · ")
    }

    /// Every setting of the world as `key=value`.
    fn settings_line(&self) -> String {
        let (script, config) = (&self.script, &self.script.config);
        let pick = |on: bool, yes: &'static str, no: &'static str| if on { yes } else { no };
        let delivery = pick(script.manual, "manual", "auto");
        let inbox = pick(config.immediate_inbox, "immediate", "travel");
        let jitter = pick(config.jitter, "on", "off");
        let mut line = format!("delivery={delivery} inbox={inbox} jitter={jitter}");
        for (setting, _) in super::parse_settings::param_settings(&config.params, true) {
            line += &format!(" {setting}");
        }
        line
    }

    /// One line per trace event, as [`Trace::to_text`] writes them.
    fn event_lines(&self) -> Vec<String> {
        let text = self.trace.to_text();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        if lines.len() == self.trace.events.len() {
            return lines;
        }
        let describe = |e: &crate::trace::TraceLine| self.trace.describe(e).replace('\n', " ");
        self.trace.events.iter().map(describe).collect()
    }

    /// The verdict line: `PASSED: …`, or `FAILED: …`.
    pub fn verdict(&self) -> String {
        let count = |n: usize, one: &str, many: &str| match n {
            1 => format!("1 expectation {one}"),
            n => format!("{n} expectations {many}"),
        };
        let violation = match (&self.violation, self.expected_violation()) {
            (None, _) => "no property violated".to_owned(),
            (Some((v, Pos { line, .. })), expected) => {
                let (name, detail) = (self.violated(v), &v.detail);
                if expected == Some(v.property.as_str()) {
                    format!("the expected violation witnessed: {name} at line {line}")
                } else {
                    format!("VIOLATED {name} at line {line}: {detail}")
                }
            }
        };
        let steps = self.tape.len();
        let results = self.results.iter();
        if self.passed() {
            let held = results.filter(|r| r.failure.is_none() && !r.skipped);
            let held = count(held.count(), "holds", "hold");
            format!("PASSED: {steps} steps, {held}, {violation}")
        } else if let Some(e) = &self.error {
            format!("FAILED: {e}")
        } else {
            let failed = results.filter(|r| r.failure.is_some()).count();
            let failed = count(failed, "failed", "failed");
            format!("FAILED: {steps} steps, {failed}, {violation}")
        }
    }

    /// The run as text: a header (file, title, servers, settings, assumptions), then each
    /// statement of the script followed by the trace lines its steps caused and the
    /// verdict of its expectation, then one verdict line.
    pub fn to_text(&self) -> String {
        let mut s = format!("script: {}\n", self.script.file);
        if let Some(t) = &self.script.title {
            let _ = writeln!(s, "title: {t}");
        }
        let _ = writeln!(s, "servers: {}", self.servers_line());
        let _ = writeln!(s, "settings: {}", self.settings_line());
        for a in &self.script.assumptions {
            let _ = writeln!(s, "assumes {}: {}", a.id(), a.taken());
        }
        let events = self.event_lines();
        let mut by_line: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, e) in self.trace.events.iter().enumerate() {
            let line = self.step_lines.get(e.step as usize).copied().unwrap_or(0);
            by_line.entry(line).or_default().push(i);
        }
        let statements = self.script.statements.iter().map(|s| s.pos.line);
        let results = self.results.iter().map(|r| r.pos.line);
        let lines: BTreeSet<u32> = statements.chain(results).collect();
        for line in lines {
            let text = self.script.source.get(line as usize - 1);
            let text = text.map_or("", |l| l.trim());
            let _ = writeln!(s, "{line:>4} | {text}");
            for i in by_line.get(&line).into_iter().flatten() {
                let _ = writeln!(s, "     |   {}", events[*i]);
            }
            for r in self.results.iter().filter(|r| r.pos.line == line) {
                let _ = writeln!(s, "     |   => {}", r.verdict());
            }
            if let Some((v, _)) = self.violation.as_ref().filter(|(_, p)| p.line == line) {
                let _ = writeln!(s, "     |   => violated {}: {}", self.violated(v), v.detail);
            }
        }
        let _ = writeln!(s, "{}", self.verdict());
        if !self.passed() {
            let _ = writeln!(s, "reproduce: payhub-verify run {}", self.script.file);
        }
        s
    }

    /// The run as JSON.
    pub fn to_json(&self) -> String {
        let script = &self.script;
        let assumptions = script.assumptions.iter();
        let steps = self.tape.iter().zip(&self.step_lines);
        let json = ReportJson {
            file: &script.file,
            title: script.title.as_deref(),
            passed: self.passed(),
            verdict: self.verdict(),
            servers: &script.servers,
            assumptions: assumptions
                .map(|a| AssumedJson {
                    id: a.id(),
                    taken: a.taken(),
                })
                .collect(),
            steps: steps
                .map(|(c, l)| StepJson {
                    line: *l,
                    choice: c.to_string(),
                })
                .collect(),
            events: &self.trace.events,
            exchanges: self.exchanges.iter().map(ExchangeJson::of).collect(),
            expectations: &self.results,
            violation: self.violation.as_ref().map(|(v, pos)| ViolationJson {
                property: &v.property,
                rules: &self.violation_rules,
                detail: &v.detail,
                line: pos.line,
            }),
            expected_violation: self.expected_violation(),
            error: self.error.as_ref(),
        };
        serde_json::to_string_pretty(&json).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The violation the run ended in (expected or not), as a diagram's closing note.
    fn violation_note(&self) -> Option<String> {
        let (v, pos) = self.violation.as_ref()?;
        let (name, line) = (self.violated(v), pos.line);
        Some(format!("VIOLATED {name} (line {line}): {}", v.detail))
    }

    /// The run as a drawing, its violation (if any) as the closing note.
    pub fn to_diagram(&self) -> crate::Diagram {
        let note = self.violation_note();
        self.trace.to_diagram(note.as_deref(), |_| false)
    }

    /// The run as a Mermaid `sequenceDiagram`, its verdicts as `%%` comments.
    pub fn to_mermaid(&self) -> String {
        let mut s = format!("%% script: {}\n", self.script.file);
        let note = self.violation_note();
        s.push_str(&self.trace.to_mermaid_with_verdict(note.as_deref()));
        for r in &self.results {
            let _ = writeln!(s, "%% line {}: {} => {}", r.pos.line, r.text, r.verdict());
        }
        let _ = writeln!(s, "%% {}", self.verdict());
        s
    }
}

/// [`Report::to_json`]'s document.
#[derive(Serialize)]
struct ReportJson<'a> {
    file: &'a str,
    title: Option<&'a str>,
    passed: bool,
    verdict: String,
    servers: &'a [Server],
    assumptions: Vec<AssumedJson<'a>>,
    steps: Vec<StepJson>,
    events: &'a [crate::trace::TraceLine],
    exchanges: Vec<ExchangeJson<'a>>,
    expectations: &'a [ExpectResult],
    violation: Option<ViolationJson<'a>>,
    expected_violation: Option<&'a str>,
    error: Option<&'a ScriptError>,
}

#[derive(Serialize)]
struct StepJson {
    line: u32,
    choice: String,
}

#[derive(Serialize)]
struct ExchangeJson<'a> {
    line: u32,
    server: &'a str,
    request: String,
    outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<&'a ApiResponse>,
}

impl ExchangeJson<'_> {
    fn of(x: &Exchange) -> ExchangeJson<'_> {
        let (line, server, request) = (x.line, &x.server, x.request.to_string());
        let (outcome, response) = (x.outcome(), x.response.as_ref());
        ExchangeJson {
            line,
            server,
            request,
            outcome,
            response,
        }
    }
}

#[derive(Serialize)]
struct ViolationJson<'a> {
    property: &'a str,
    rules: &'a [&'static str],
    detail: &'a str,
    line: u32,
}

#[derive(Serialize)]
struct AssumedJson<'a> {
    id: &'a str,
    taken: &'a str,
}
