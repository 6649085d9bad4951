//! How each event of the stream reads in a trace: the lines [`Trace::record`] appends.
//!
//! Observations of the ground truth (ledger, store, databases) and the platform's
//! bookkeeping (`Handled`) add no line: the trace shows what travelled and what was
//! decided, the facts keep the rest.

use crate::network::Node;
use crate::trace::{Trace, TraceWhat, command_text};
use payhub_model::event::{self as ev, Message};
use payhub_model::{Millis, RequestId, Rule};

impl Trace {
    /// Keeps one event of the stream and appends the lines it reads as.
    pub fn record(&mut self, event: ev::Event) {
        self.lines_for(&event);
        self.stream.push(event);
    }

    /// The lines of one event: each domain's events read their own way; observations and
    /// bookkeeping add none.
    fn lines_for(&mut self, event: &ev::Event) {
        let (at, what) = (event.at, &event.what);
        let _ = self.wire_lines(at, what)
            || self.upstream_lines(at, what)
            || self.merchant_lines(at, what);
    }

    /// The merchants' network and the platform's answers and webhooks.
    fn wire_lines(&mut self, at: Millis, what: &ev::What) -> bool {
        let (m, p) = (Node::Merchant, Node::Platform);
        match what {
            ev::What::Sent { id, request, .. } => self.note_request(*id, request),
            ev::What::Duplicated { message, copy } => self.duplicated(at, message, *copy),
            ev::What::Lost { message } => self.lost(at, message),
            ev::What::Arrived { id, from, request } => {
                let what = TraceWhat::Request {
                    id: *id,
                    request: request.clone(),
                };
                self.push(at, m(*from), p, what, None);
            }
            // A 500 reads as the platform's answer, as any answer does (`answers req_1:
            // 500 …`): the request travels on its own arrow, the 500 on the delivery's.
            ev::What::Refused500 { id, from, request } => {
                self.note_request(*id, request);
                let what = TraceWhat::Request {
                    id: *id,
                    request: request.clone(),
                };
                self.push(at, m(*from), p, what, None);
                let what = TraceWhat::Fail500 {
                    id: *id,
                    executed: false,
                };
                self.push(at, p, p, what, Some(Rule::UnknownResult));
            }
            ev::What::Answered {
                id,
                response,
                rule,
                route: Some(route),
            } => {
                if route.edge_500 {
                    let what = TraceWhat::Fail500 {
                        id: *id,
                        executed: true,
                    };
                    let rule = Some(Rule::FiveXxMayHaveExecuted);
                    self.push(at, p, p, what, rule);
                } else {
                    let text = format!("answers {id}: {}", response.status);
                    self.push(at, p, p, TraceWhat::Decision { text }, Some(*rule));
                }
            }
            ev::What::Delivered { id, to, response }
            | ev::What::DeliveredUnread { id, to, response } => {
                let what = TraceWhat::Response {
                    id: *id,
                    response: response.clone(),
                };
                self.push(at, p, m(*to), what, None);
            }
            ev::What::WebhookEmitted {
                event,
                rule,
                to: Some(_),
            } => {
                let text = format!("emits {event}");
                self.push(at, p, p, TraceWhat::Decision { text }, Some(*rule));
            }
            ev::What::WebhookDelivered { to, event } => {
                let what = TraceWhat::Webhook {
                    event: event.clone(),
                };
                self.push(at, p, m(*to), what, None);
            }
            _ => return false,
        }
        true
    }

    /// The upstream link, the acquirer and the payer.
    fn upstream_lines(&mut self, at: Millis, what: &ev::What) -> bool {
        let (p, a) = (Node::Platform, Node::Acquirer);
        match what {
            ev::What::UpstreamCalled { call, rule, .. } => {
                let what = TraceWhat::UpstreamCall { call: call.clone() };
                self.push(at, p, a, what, Some(*rule));
            }
            ev::What::Acquired { call, decision } => {
                let text = format!("{call}: {}", decision.as_str());
                self.push(at, a, a, TraceWhat::Decision { text }, None);
            }
            ev::What::UpstreamReplied { reply } => {
                self.push(at, a, p, TraceWhat::UpstreamReply { reply: *reply }, None)
            }
            ev::What::UpstreamCallLost { call } => {
                let text = call.to_string();
                self.push(at, p, a, TraceWhat::UpstreamLost { text }, None);
            }
            ev::What::UpstreamReplyLost { reply } => {
                let text = reply.to_string();
                self.push(at, a, p, TraceWhat::UpstreamLost { text }, None);
            }
            ev::What::Authenticated { attempt, ok } => {
                let outcome = if *ok { "succeeded" } else { "failed" };
                let text = format!("{attempt}: payer authentication {outcome}");
                self.push(at, Node::Payer, a, TraceWhat::Authenticated { text }, None);
            }
            _ => return false,
        }
        true
    }

    /// Merchant servers and the environment.
    fn merchant_lines(&mut self, at: Millis, what: &ev::What) -> bool {
        let m = Node::Merchant;
        let (line, rule) = match what {
            ev::What::Commanded { node, command } => {
                let text = command_text(command);
                self.push(at, Node::Env, m(*node), TraceWhat::Decision { text }, None);
                return true;
            }
            ev::What::Controlled { control } => {
                let what = TraceWhat::Control {
                    control: control.clone(),
                };
                self.push(at, Node::Env, Node::Platform, what, None);
                return true;
            }
            ev::What::Clock { to } => {
                self.push(at, Node::Env, Node::Env, TraceWhat::Clock { to: *to }, None);
                return true;
            }
            ev::What::ClientSends {
                node,
                handle,
                request,
                timeout,
                rule,
                held,
                ..
            } => {
                let text = if *held {
                    format!("{request} (never sent: the process died first)")
                } else {
                    format!("sends {handle} (timeout {timeout})")
                };
                ((*node, TraceWhat::Decision { text }), Some(*rule))
            }
            ev::What::ClientDecided {
                node,
                subject,
                decision,
                rule,
            } => {
                let text = format!("{subject}: {decision}");
                ((*node, TraceWhat::Decision { text }), Some(*rule))
            }
            ev::What::TimedOut { node, id } => (
                (*node, TraceWhat::Timeout { id: *id }),
                Some(Rule::ClientTimeouts),
            ),
            ev::What::Crashed { node } => ((*node, TraceWhat::Crash), None),
            ev::What::Restarted { node } => ((*node, TraceWhat::Restart), None),
            _ => return false,
        };
        let (node, what) = line;
        self.push(at, m(node), m(node), what, rule);
        true
    }

    fn duplicated(&mut self, at: Millis, message: &Message, copy: Option<RequestId>) {
        match message {
            Message::Request { id, from, request } => {
                if let Some(copy) = copy {
                    self.note_request(copy, request);
                }
                self.note_request(*id, request);
                let what = TraceWhat::Duplicated { id: *id };
                self.push(at, Node::Merchant(*from), Node::Platform, what, None);
            }
            Message::Response { id, to } => {
                let what = TraceWhat::Duplicated { id: *id };
                self.push(at, Node::Platform, Node::Merchant(*to), what, None);
            }
            Message::Webhook { to, event } => {
                let text = format!("{event} (duplicated)");
                self.push(
                    at,
                    Node::Platform,
                    Node::Merchant(*to),
                    TraceWhat::Decision { text },
                    None,
                );
            }
        }
    }

    fn lost(&mut self, at: Millis, message: &Message) {
        match message {
            Message::Request { id, from, request } => {
                self.note_request(*id, request);
                let what = TraceWhat::Lost {
                    id: *id,
                    response: false,
                };
                self.push(at, Node::Merchant(*from), Node::Platform, what, None);
            }
            Message::Response { id, to } => {
                let what = TraceWhat::Lost {
                    id: *id,
                    response: true,
                };
                self.push(at, Node::Platform, Node::Merchant(*to), what, None);
            }
            Message::Webhook { to, event } => {
                let what = TraceWhat::WebhookLost {
                    event: event.clone(),
                };
                self.push(at, Node::Platform, Node::Merchant(*to), what, None);
            }
        }
    }
}
