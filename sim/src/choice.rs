//! Every nondeterministic decision of the world is a [`Choice`].
//!
//! The world lists the choices enabled in a state ([`crate::World::enabled`]) and applies
//! one ([`crate::World::apply`]). A seeded driver picks among them with a ChaCha RNG; the
//! exhaustive checker tries them all; a script or a saved tape names them. A choice's
//! `Display` is its label: unique among the choices enabled in a state and stable across
//! runs, so a tape of labels replays a run exactly; `FromStr` reads every label back.

use crate::error::{LabelError, ReplayError};
use crate::network::MsgId;
use payhub_model::{AcquirerDecision, ApiRequest, AttemptId, Branch, Control, Millis};
use serde::Serialize;

/// One decision of the world.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "choice", rename_all = "snake_case")]
pub enum Choice {
    /// Deliver a network message; a request reaching a branch point names its branch.
    Deliver { msg: MsgId, branch: Option<Branch> },
    /// Lose a network message (a lost request, or a lost response after execution).
    Drop { msg: MsgId },
    /// Deliver a network message twice: a second copy stays in flight.
    Duplicate { msg: MsgId },
    /// The platform's edge answers 500 without executing the request.
    Fail500Before { msg: MsgId },
    /// The platform executes the request, but its answer is replaced by a 500.
    Fail500After { msg: MsgId, branch: Option<Branch> },
    /// The acquirer handles an upstream call the way `decision` says.
    Acquire {
        msg: MsgId,
        decision: AcquirerDecision,
    },
    /// Deliver an acquirer reply to the platform.
    DeliverUpstream { msg: MsgId },
    /// Lose an upstream call or reply.
    DropUpstream { msg: MsgId },
    /// The payer completes (or fails) authentication of a `requires_action` charge.
    Authenticate { attempt: AttemptId, ok: bool },
    /// A client node is given workload item `item` (a business command); with
    /// `crash_after`, the server crashes right after the step's database writes and
    /// before anything it would send leaves (a crash between persisting and sending).
    Command { item: u16, crash_after: bool },
    /// A merchant server crashes: its memory is lost, its database survives.
    Crash { merchant: u8 },
    /// A crashed merchant server restarts from its database.
    Restart { merchant: u8 },
    /// The environment switches something on the platform (429, 503, keys, fees).
    Control(Control),
    /// A scripted or adversarial sender sends a request.
    Send {
        merchant: u8,
        /// Shared: the same request is offered in every state of a sweep or a check.
        request: std::sync::Arc<ApiRequest>,
    },
    /// The clock jumps to the next deadline and every timer due fires.
    Tick,
    /// The clock moves forward by this much, firing every timer on the way (scripts).
    Advance(Millis),
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let branch = |b: &Option<Branch>| b.map(|b| format!(" {}", b.as_str())).unwrap_or_default();
        match self {
            Choice::Deliver { msg, branch: b } => write!(f, "deliver {msg}{}", branch(b)),
            Choice::Drop { msg } => write!(f, "drop {msg}"),
            Choice::Duplicate { msg } => write!(f, "duplicate {msg}"),
            Choice::Fail500Before { msg } => write!(f, "500-before {msg}"),
            Choice::Fail500After { msg, branch: b } => write!(f, "500-after {msg}{}", branch(b)),
            Choice::Acquire { msg, decision } => {
                write!(f, "acquire u{} {}", msg.0, decision.as_str())
            }
            Choice::DeliverUpstream { msg } => write!(f, "deliver u{}", msg.0),
            Choice::DropUpstream { msg } => write!(f, "drop u{}", msg.0),
            Choice::Authenticate { attempt, ok } => {
                write!(
                    f,
                    "authenticate {attempt} {}",
                    if *ok { "ok" } else { "fail" }
                )
            }
            Choice::Command { item, crash_after } => {
                write!(
                    f,
                    "command {item}{}",
                    if *crash_after { " then crash" } else { "" }
                )
            }
            Choice::Crash { merchant } => write!(f, "crash merchant-{merchant}"),
            Choice::Restart { merchant } => write!(f, "restart merchant-{merchant}"),
            Choice::Control(c) => match c {
                Control::SetRateLimited { merchant, on } => {
                    write!(f, "rate-limit {merchant} {}", on_off(*on))
                }
                Control::SetChannelPaused { on } => write!(f, "pause-channel {}", on_off(*on)),
                Control::IssueApiKey(spec) => write!(f, "issue-api-key {}", spec.id),
                Control::RevokeApiKey(id) => write!(f, "revoke-api-key {id}"),
                Control::SetFeeRate { bps } => write!(f, "fee-rate {bps}"),
            },
            Choice::Send { merchant, request } => write!(
                f,
                "send merchant-{merchant} {}",
                crate::script::render_send(request)
            ),
            Choice::Tick => f.write_str("tick"),
            Choice::Advance(d) => write!(f, "advance {d}"),
        }
    }
}

/// Reads a label back: every label `Display` writes parses to the same choice
/// (`payhub-verify replay --tape` uses it for choices a world applies without listing
/// them as enabled: scripted sends, advances, controls).
impl std::str::FromStr for Choice {
    type Err = LabelError;

    fn from_str(label: &str) -> Result<Choice, Self::Err> {
        crate::script::parse_label(label)
    }
}

impl Choice {
    /// Choice `index` (0-based) of a tape, read from its label; the error names the step.
    pub(crate) fn of_step(index: usize, label: &str) -> Result<Choice, ReplayError> {
        label.parse().map_err(|error| ReplayError::NotALabel {
            step: index + 1,
            label: label.to_owned(),
            error,
        })
    }
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

#[cfg(test)]
pub(crate) use fixtures::examples;

/// The choices the label and tape round-trip tests read.
#[cfg(test)]
mod fixtures {
    use super::*;

    /// Choices of every variant, with every branch, decision and control, sends of odd
    /// requests and durations of every unit: the label and tape round-trip tests.
    pub(crate) fn examples() -> Vec<Choice> {
        let mut out = message_examples();
        out.extend(node_examples());
        out.extend(control_examples());
        out.extend(send_examples());
        out.push(Choice::Tick);
        for ms in [
            0,
            1,
            250,
            1_000,
            1_500,
            15_000,
            60_250,
            120_000,
            3_600_000,
            86_400_000 * 7,
            86_400_000 + 2 * 3_600_000 + 60_000 + 1_001,
        ] {
            out.push(Choice::Advance(Millis(ms)));
        }
        out
    }

    /// Choices on network messages and upstream calls: every branch, every decision.
    fn message_examples() -> Vec<Choice> {
        let branches = std::iter::once(None).chain(Branch::ALL.iter().copied().map(Some));
        let mut out = Vec::new();
        for (i, branch) in branches.into_iter().enumerate() {
            let msg = MsgId(i as u32 * 7 + 1);
            out.push(Choice::Deliver { msg, branch });
            out.push(Choice::Fail500After { msg, branch });
        }
        for n in [0, 1, 12, u32::MAX] {
            let msg = MsgId(n);
            out.extend([
                Choice::Drop { msg },
                Choice::Duplicate { msg },
                Choice::Fail500Before { msg },
                Choice::DeliverUpstream { msg },
                Choice::DropUpstream { msg },
            ]);
        }
        for &decision in AcquirerDecision::ALL {
            out.push(Choice::Acquire {
                msg: MsgId(3),
                decision,
            });
        }
        out
    }

    /// Choices of the payer and of merchant servers: authentications, commands, crashes.
    fn node_examples() -> Vec<Choice> {
        let mut out = Vec::new();
        for (n, ok) in [(1, true), (2, false), (1234, true)] {
            out.push(Choice::Authenticate {
                attempt: AttemptId(n),
                ok,
            });
        }
        for (item, crash_after) in [(0, false), (0, true), (65535, false)] {
            out.push(Choice::Command { item, crash_after });
        }
        for merchant in [0, 7, 255] {
            out.push(Choice::Crash { merchant });
            out.push(Choice::Restart { merchant });
        }
        out
    }

    /// Every kind of control, with every key the world can issue.
    fn control_examples() -> Vec<Choice> {
        use payhub_model::MerchantId;
        use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
        let mut out = Vec::new();
        for on in [true, false] {
            out.push(Choice::Control(Control::SetRateLimited {
                merchant: MerchantId(2),
                on,
            }));
            out.push(Choice::Control(Control::SetChannelPaused { on }));
        }
        for spec in default_api_keys().into_iter().chain([rotated_key_spec()]) {
            out.push(Choice::Control(Control::IssueApiKey(spec)));
            out.push(Choice::Control(Control::RevokeApiKey(spec.id)));
        }
        out.push(Choice::Control(Control::SetFeeRate { bps: 0 }));
        out.push(Choice::Control(Control::SetFeeRate { bps: 350 }));
        out
    }

    /// Sends of the chaos world's alphabet and of odd requests (keys with spaces, quotes and
    /// braces, a negative amount, unknown routes).
    fn send_examples() -> Vec<Choice> {
        use payhub_model::api::req;
        use payhub_model::{
            ApiKeyId, CreatePaymentBody, Endpoint, Json, Method, PaymentId, RefundId,
        };
        let mut requests: Vec<ApiRequest> = crate::worlds::chaos()
            .alphabet
            .into_iter()
            .map(|(_, r)| ApiRequest::clone(&r))
            .collect();
        requests.extend([
            req::get_refund(RefundId(2)),
            req::by_refund_no("R-1"),
            req::query(Endpoint::ListRefundsProcessing),
            req::with_key(
                req::create("a key with spaces", "ORDER 1", 1, "EUR", 'Z'),
                None,
            ),
            req::with_key(
                req::create("K", "ORDER-1", 1, "USD", 'A'),
                Some("\"quoted\""),
            ),
            req::with_key(req::create("K", "ORDER-1", 1, "USD", 'A'), Some("{brace")),
            req::with_api_key(req::get(PaymentId(12)), ApiKeyId(0)),
            req::with_api_key(req::cancel("X", PaymentId(3)), ApiKeyId(5)),
            ApiRequest {
                api_key: ApiKeyId(1),
                idempotency_key: Some("E".into()),
                endpoint: Endpoint::CreatePayment {
                    body: Json::Parsed(CreatePaymentBody {
                        amount: Some(-5),
                        ..CreatePaymentBody::default()
                    }),
                },
            },
            req::query(Endpoint::Other {
                method: Method::Delete,
                path: "/v1/payments/pay_demo_001".into(),
            }),
            req::query(Endpoint::Other {
                method: Method::Get,
                path: "/v2/nothing?x=1".into(),
            }),
        ]);
        requests
            .into_iter()
            .enumerate()
            .map(|(i, request)| Choice::Send {
                merchant: (i % 3) as u8,
                request: request.into(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant, so that a new one fails to compile here until it has examples.
    fn variant(c: &Choice) -> &'static str {
        match c {
            Choice::Deliver { .. } => "deliver",
            Choice::Drop { .. } => "drop",
            Choice::Duplicate { .. } => "duplicate",
            Choice::Fail500Before { .. } => "500-before",
            Choice::Fail500After { .. } => "500-after",
            Choice::Acquire { .. } => "acquire",
            Choice::DeliverUpstream { .. } => "deliver-upstream",
            Choice::DropUpstream { .. } => "drop-upstream",
            Choice::Authenticate { .. } => "authenticate",
            Choice::Command { .. } => "command",
            Choice::Crash { .. } => "crash",
            Choice::Restart { .. } => "restart",
            Choice::Control(Control::SetRateLimited { .. }) => "rate-limit",
            Choice::Control(Control::SetChannelPaused { .. }) => "pause-channel",
            Choice::Control(Control::IssueApiKey(_)) => "issue-api-key",
            Choice::Control(Control::RevokeApiKey(_)) => "revoke-api-key",
            Choice::Control(Control::SetFeeRate { .. }) => "fee-rate",
            Choice::Send { .. } => "send",
            Choice::Tick => "tick",
            Choice::Advance(_) => "advance",
        }
    }

    const VARIANTS: usize = 20;

    /// Display → parse gives back the same choice, for every variant.
    #[test]
    fn every_label_parses_back_to_its_choice() {
        let all = examples();
        let covered: std::collections::BTreeSet<&str> = all.iter().map(variant).collect();
        assert_eq!(covered.len(), VARIANTS, "{covered:?}");
        for choice in all {
            let label = choice.to_string();
            let back: Choice = label
                .parse()
                .unwrap_or_else(|e| panic!("'{label}' does not parse: {e}"));
            assert_eq!(back, choice, "'{label}'");
            assert_eq!(back.to_string(), label);
        }
    }

    #[test]
    fn bad_labels_say_what_is_wrong() {
        for (label, expected) in [
            ("", "expected a choice label"),
            ("fly m1", "unknown choice 'fly'"),
            ("deliver x1", "'x1' is not a message id"),
            ("duplicate u1", "'u1' is not a message id (m3)"),
            ("deliver m1 S9:nope", "unknown branch 'S9:nope'"),
            ("acquire u1 maybe", "unknown decision 'maybe'"),
            ("advance soon", "'soon' is not a duration"),
            ("tick now", "unexpected 'now'"),
            (
                "send merchant-0 PATCH /v1/payments",
                "unknown method 'PATCH'",
            ),
            (
                "send m0 GET /v1/payments/pay_demo_001",
                "'m0' is not a node",
            ),
            ("issue-api-key ak_9", "not a key the world can issue"),
            ("command 1 then stop", "'then crash'"),
        ] {
            let e = label.parse::<Choice>().unwrap_err().to_string();
            assert!(e.contains(expected), "'{label}': {e}");
        }
    }
}
