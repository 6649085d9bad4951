//! Traces: what happened, step by step, in the contract's own notation.
//!
//! A trace is a consumer of the event stream ([`payhub_model::event`]): the world emits
//! events, [`Trace::record`] keeps them (for `--format events`) and turns each into the
//! lines a reader sees (time, from, to, what, and the rule that caused it). A trace
//! renders as text (`POST /v1/payments  Idempotency-Key: K → 409 {…}`), as JSON (serde),
//! as a Mermaid `sequenceDiagram`, and as JSON Lines of its events. Recording is
//! optional: the world takes `Option<&mut Trace>`, and a failing run is re-run from its
//! tape with recording on.

use crate::diagram::{Arrow, Diagram, Item, NoteKind, Shape};
use crate::network::Node;
use payhub_model::client::Command;
use payhub_model::event as ev;
use payhub_model::{
    ApiRequest, ApiResponse, Control, Millis, RequestId, Rule, UpstreamCall, UpstreamReply,
    WebhookEvent,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What a line of a trace shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum TraceWhat {
    /// A request arrives at the platform (or is sent, if it is then lost).
    Request {
        id: RequestId,
        request: ApiRequest,
    },
    /// A response reaches the merchant.
    Response {
        id: RequestId,
        response: ApiResponse,
    },
    /// A request or response was lost on the network.
    Lost {
        id: RequestId,
        response: bool,
    },
    /// The merchant's client timeout fired: no response.
    Timeout {
        id: RequestId,
    },
    /// A network message was duplicated.
    Duplicated {
        id: RequestId,
    },
    /// The platform's edge answered 500 (before or after executing).
    Fail500 {
        id: RequestId,
        executed: bool,
    },
    UpstreamCall {
        call: UpstreamCall,
    },
    UpstreamReply {
        reply: UpstreamReply,
    },
    /// An upstream call or reply was lost.
    UpstreamLost {
        text: String,
    },
    Webhook {
        event: WebhookEvent,
    },
    WebhookLost {
        event: WebhookEvent,
    },
    /// The payer authenticated (or failed to).
    Authenticated {
        text: String,
    },
    Crash,
    Restart,
    Control {
        control: Control,
    },
    /// The clock moved.
    Clock {
        to: Millis,
    },
    /// A client decision, with the rule that led to it.
    Decision {
        text: String,
    },
}

/// One line of a trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceLine {
    /// The index of the choice that caused it.
    pub step: u32,
    pub at: Millis,
    pub from: Node,
    pub to: Node,
    #[serde(flatten)]
    pub what: TraceWhat,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
}

/// A recorded run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// The lines a reader sees.
    pub events: Vec<TraceLine>,
    /// The event stream the lines were made from, in order.
    #[serde(skip)]
    pub stream: Vec<ev::Event>,
    /// The request line of each exchange, so a response renders next to its request.
    #[serde(skip)]
    requests: BTreeMap<RequestId, String>,
    #[serde(skip)]
    step: u32,
    /// What a node is called in the text and the drawings, where not its own name
    /// (`merchant-3`): the sandbox names a key's sender by its merchant and key.
    #[serde(skip)]
    names: BTreeMap<Node, String>,
}

impl Trace {
    pub fn new() -> Trace {
        Trace::default()
    }

    /// Calls `node` `name` in the text and the drawings (events and JSON keep the node).
    pub fn name_node(&mut self, node: Node, name: impl Into<String>) {
        self.names.insert(node, name.into());
    }

    /// An empty trace that names its nodes as this one does.
    pub fn named_alike(&self) -> Trace {
        Trace {
            names: self.names.clone(),
            ..Trace::default()
        }
    }

    /// What `node` is called: its name given by [`Trace::name_node`], or its own.
    pub fn node_name(&self, node: Node) -> String {
        self.names
            .get(&node)
            .cloned()
            .unwrap_or_else(|| node.to_string())
    }

    /// Starts the events of the next choice.
    pub fn begin_step(&mut self, step: u32) {
        self.step = step;
    }

    pub(crate) fn push(
        &mut self,
        at: Millis,
        from: Node,
        to: Node,
        what: TraceWhat,
        rule: Option<Rule>,
    ) {
        if let TraceWhat::Request { id, request } = &what {
            self.requests
                .entry(*id)
                .or_insert_with(|| request.to_string());
        }
        self.events.push(TraceLine {
            step: self.step,
            at,
            from,
            to,
            what,
            rule,
        });
    }

    /// Remembers a request's line without an event (a request lost before arriving).
    pub(crate) fn note_request(&mut self, id: RequestId, request: &ApiRequest) {
        self.requests
            .entry(id)
            .or_insert_with(|| request.to_string());
    }

    fn request_line(&self, id: RequestId) -> String {
        self.requests
            .get(&id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// One event in the contract's notation, without time or nodes.
    pub fn describe(&self, event: &TraceLine) -> String {
        match &event.what {
            TraceWhat::Request { request, .. } => request.to_string(),
            TraceWhat::Response { id, response } => {
                format!("{} → {response}", self.request_line(*id))
            }
            TraceWhat::Lost { id, response } => {
                if *response {
                    format!("{} → (response lost)", self.request_line(*id))
                } else {
                    format!("{} (request lost)", self.request_line(*id))
                }
            }
            TraceWhat::Timeout { id } => {
                format!("{} → (timeout, no response)", self.request_line(*id))
            }
            TraceWhat::Duplicated { id } => format!("{} (duplicated)", self.request_line(*id)),
            TraceWhat::Fail500 { id, executed } => format!(
                "answers {id}: 500 internal_error {}",
                if *executed {
                    "after executing"
                } else {
                    "before executing (not executed)"
                }
            ),
            TraceWhat::UpstreamCall { call } => call.to_string(),
            TraceWhat::UpstreamReply { reply } => reply.to_string(),
            TraceWhat::UpstreamLost { text } => format!("{text} (lost)"),
            TraceWhat::Webhook { event } => event.to_string(),
            TraceWhat::WebhookLost { event } => format!("{event} (lost)"),
            TraceWhat::Authenticated { text } => text.clone(),
            TraceWhat::Crash => "(crash: memory lost, database kept)".into(),
            TraceWhat::Restart => "(restart from the database)".into(),
            TraceWhat::Control { control } => control_text(control),
            TraceWhat::Clock { to } => format!("(clock → {to})"),
            TraceWhat::Decision { text } => text.clone(),
        }
    }

    /// The trace as text, one line per event:
    /// `[   20.000s] merchant-0 → platform  POST /v1/payments  Idempotency-Key: K → 200 {…}  [REPLAY-02]`.
    pub fn to_text(&self) -> String {
        let routes: Vec<String> = self
            .events
            .iter()
            .map(|e| {
                if e.from == e.to {
                    self.node_name(e.from)
                } else {
                    format!("{} → {}", self.node_name(e.from), self.node_name(e.to))
                }
            })
            .collect();
        // 24 columns, or wider when a node's given name needs it.
        let width = routes
            .iter()
            .map(|r| r.chars().count() + 1)
            .max()
            .unwrap_or(0)
            .max(24);
        let mut s = String::new();
        for (e, route) in self.events.iter().zip(&routes) {
            let secs = e.at.0 as f64 / 1000.0;
            let _ = write!(s, "[{secs:>11.3}s] {route:<width$} {}", self.describe(e));
            if let Some(rule) = e.rule {
                let _ = write!(s, "  [{}]", rule.id());
            }
            s.push('\n');
        }
        s
    }

    /// The event stream as JSON Lines: one event per line, in order.
    pub fn to_events_jsonl(&self) -> String {
        let mut s = String::new();
        for e in &self.stream {
            match serde_json::to_string(e) {
                Ok(line) => s.push_str(&line),
                Err(err) => {
                    let _ = write!(s, "{{\"error\":\"{err}\"}}");
                }
            }
            s.push('\n');
        }
        s
    }

    /// The trace as JSON (one object per event).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.events)
            .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The trace as a Mermaid `sequenceDiagram`: every participant declared first, one
    /// arrow per message (`-x` for a lost one, and for one that reaches a crashed server),
    /// notes for timeouts, crashes and the clock. A request is written out once, on its
    /// arrow; its response shows only the status and the object.
    pub fn to_mermaid(&self) -> String {
        self.to_mermaid_with_verdict(None)
    }

    /// [`Trace::to_mermaid`], with `verdict` (the violated property, its rules, what went
    /// wrong) as a note over every participant at the end: the step that violated it.
    pub fn to_mermaid_with_verdict(&self, verdict: Option<&str>) -> String {
        self.to_diagram(verdict, |_| false).to_mermaid()
    }

    /// The trace as a [`Diagram`]: participants in node order, one item per event (a
    /// request written out once, on its arrow; its response shows only the status and
    /// the object), the events `witness` picks marked, and `verdict` as the closing note.
    pub fn to_diagram(
        &self,
        verdict: Option<&str>,
        witness: impl Fn(&TraceLine) -> bool,
    ) -> Diagram {
        let mut nodes: Vec<Node> = Vec::new();
        for e in &self.events {
            for n in [e.from, e.to] {
                if !nodes.contains(&n) {
                    nodes.push(n);
                }
            }
        }
        nodes.sort();
        let mut d = Diagram::default();
        for n in &nodes {
            d.participant(&mermaid_id(*n), &self.node_name(*n));
        }
        let index = |n: Node| nodes.iter().position(|m| *m == n).unwrap_or(0);
        let mut down: Vec<Node> = Vec::new();
        for e in &self.events {
            let text = match &e.what {
                TraceWhat::Response { response, .. } => response.to_string(),
                _ => self.describe(e),
            };
            match &e.what {
                TraceWhat::Crash => down.push(e.from),
                TraceWhat::Restart => down.retain(|n| *n != e.from),
                _ => {}
            }
            let to_crashed = down.contains(&e.to)
                && matches!(
                    e.what,
                    TraceWhat::Response { .. } | TraceWhat::Webhook { .. }
                );
            let (from, to) = (index(e.from), index(e.to));
            let item = |shape: Shape, text: String| Item {
                rule: e.rule.map(|r| r.id().to_owned()),
                at: Some(e.at.0),
                exchange: exchange_of(&e.what),
                witness: witness(e),
                ..Item::new(shape, text)
            };
            let note = |kind, text| {
                item(
                    Shape::Note {
                        over: (from, from),
                        kind,
                    },
                    text,
                )
            };
            let message = |arrow, text| item(Shape::Message { from, to, arrow }, text);
            d.items.push(match &e.what {
                _ if to_crashed => message(Arrow::Lost, format!("{text} (lost: server down)")),
                TraceWhat::Crash | TraceWhat::Restart => note(NoteKind::Crash, text),
                TraceWhat::Clock { .. } => note(NoteKind::Clock, text),
                TraceWhat::Timeout { .. }
                | TraceWhat::Decision { .. }
                | TraceWhat::Duplicated { .. } => note(NoteKind::Plain, text),
                TraceWhat::Lost { .. }
                | TraceWhat::UpstreamLost { .. }
                | TraceWhat::WebhookLost { .. } => message(Arrow::Lost, text),
                TraceWhat::Response { .. } | TraceWhat::UpstreamReply { .. } => {
                    message(Arrow::Reply, text)
                }
                _ if e.from == e.to => note(NoteKind::Plain, text),
                _ => message(Arrow::Call, text),
            });
        }
        if let Some(verdict) = verdict {
            d.push_verdict(verdict);
        }
        d
    }
}

/// The HTTP exchange an event belongs to, by its request id.
fn exchange_of(what: &TraceWhat) -> Option<String> {
    match what {
        TraceWhat::Request { id, .. }
        | TraceWhat::Response { id, .. }
        | TraceWhat::Lost { id, .. }
        | TraceWhat::Timeout { id }
        | TraceWhat::Duplicated { id }
        | TraceWhat::Fail500 { id, .. } => Some(id.to_string()),
        _ => None,
    }
}

/// A business command given to a client server, in the contract's words:
/// `pay order ORDER-1 (amount 10000 USD, card A)`. The card is the payer's opaque label
/// (the model never holds card data).
pub fn command_text(command: &Command) -> String {
    match command {
        Command::PayOrder {
            order,
            amount,
            currency,
            card,
        } => format!("pay order {order} (amount {amount} {currency}, {card})"),
        Command::RetryWithCard { order, card } => format!("retry order {order} ({card})"),
        Command::CancelOrder { order } => format!("cancel order {order}"),
        Command::AmendOrder { order, amount } => format!("amend order {order} (amount {amount})"),
        Command::RefundOrder {
            order,
            refund,
            amount,
        } => format!("refund order {order} (refund number {refund}, amount {amount})"),
        Command::Reconcile => "reconcile refunds".to_owned(),
    }
}

/// A switch the environment throws on the platform: `rate limit on for merchant_1`.
pub fn control_text(control: &Control) -> String {
    match control {
        Control::SetRateLimited { merchant, on: true } => {
            format!("rate limit on for {merchant} (429 rate_limited)")
        }
        Control::SetRateLimited {
            merchant,
            on: false,
        } => {
            format!("rate limit off for {merchant}")
        }
        Control::SetChannelPaused { on: true } => {
            "channel paused (503 temporarily_unavailable for new transactions)".to_owned()
        }
        Control::SetChannelPaused { on: false } => "channel resumed".to_owned(),
        Control::IssueApiKey(spec) => format!(
            "API key {} issued ({} {}{})",
            spec.id,
            spec.merchant,
            spec.environment,
            if spec.read_only { ", read-only" } else { "" }
        ),
        Control::RevokeApiKey(id) => format!("API key {id} revoked"),
        Control::SetFeeRate { bps } => format!("fee rate set to {bps} bps"),
    }
}

/// A Mermaid-safe participant id.
fn mermaid_id(n: Node) -> String {
    match n {
        Node::Merchant(i) => format!("M{i}"),
        Node::Platform => "P".into(),
        Node::Acquirer => "A".into(),
        Node::Payer => "Y".into(),
        Node::Env => "E".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
    use payhub_model::{Card, MerchantId};

    #[test]
    fn commands_read_as_the_contract_writes_them() {
        let order = || payhub_model::Text::from("ORDER-1");
        let cases = [
            (
                Command::PayOrder {
                    order: order(),
                    amount: 10000,
                    currency: "USD".into(),
                    card: Card('A'),
                },
                "pay order ORDER-1 (amount 10000 USD, card A)",
            ),
            (
                Command::RetryWithCard {
                    order: order(),
                    card: Card('B'),
                },
                "retry order ORDER-1 (card B)",
            ),
            (
                Command::CancelOrder { order: order() },
                "cancel order ORDER-1",
            ),
            (
                Command::AmendOrder {
                    order: order(),
                    amount: 12000,
                },
                "amend order ORDER-1 (amount 12000)",
            ),
            (
                Command::RefundOrder {
                    order: order(),
                    refund: "R-1".into(),
                    amount: 5000,
                },
                "refund order ORDER-1 (refund number R-1, amount 5000)",
            ),
            (Command::Reconcile, "reconcile refunds"),
        ];
        for (command, text) in cases {
            assert_eq!(command_text(&command), text);
        }
    }

    #[test]
    fn controls_read_as_words_not_rust() {
        let mut controls = vec![
            Control::SetRateLimited {
                merchant: MerchantId(1),
                on: true,
            },
            Control::SetRateLimited {
                merchant: MerchantId(2),
                on: false,
            },
            Control::SetChannelPaused { on: true },
            Control::SetChannelPaused { on: false },
            Control::RevokeApiKey(payhub_model::ApiKeyId(1)),
            Control::SetFeeRate { bps: 350 },
        ];
        for spec in default_api_keys().into_iter().chain([rotated_key_spec()]) {
            controls.push(Control::IssueApiKey(spec));
        }
        for c in &controls {
            let text = control_text(c);
            assert!(!text.contains('{') && !text.contains("Set"), "{text}");
        }
        assert_eq!(
            control_text(&controls[0]),
            "rate limit on for merchant_1 (429 rate_limited)"
        );
        assert_eq!(control_text(&controls[5]), "fee rate set to 350 bps");
        assert_eq!(
            control_text(&Control::IssueApiKey(rotated_key_spec())),
            "API key ak_5 issued (merchant_1 test)"
        );
    }
}
