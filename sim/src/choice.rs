//! Every nondeterministic decision of the world is a [`Choice`].
//!
//! The world lists the choices enabled in a state ([`crate::World::enabled`]) and applies
//! one ([`crate::World::apply`]). A seeded driver picks among them with a ChaCha RNG; the
//! exhaustive checker tries them all; a script or a saved tape names them. A choice's
//! `Display` is its label: unique among the choices enabled in a state and stable across
//! runs, so a tape of labels replays a run exactly.

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
    Send { merchant: u8, request: ApiRequest },
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
                let d = serde_json::to_string(decision).unwrap_or_default();
                write!(f, "acquire u{} {}", msg.0, d.trim_matches('"'))
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
            Choice::Send { merchant, request } => write!(f, "send merchant-{merchant} {request}"),
            Choice::Tick => f.write_str("tick"),
            Choice::Advance(d) => write!(f, "advance {d}"),
        }
    }
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

impl Choice {
    /// Whether this choice is a fault (loss, duplication, crash, 500, a control switch).
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Choice::Drop { .. }
                | Choice::Duplicate { .. }
                | Choice::Fail500Before { .. }
                | Choice::Fail500After { .. }
                | Choice::DropUpstream { .. }
                | Choice::Crash { .. }
                | Choice::Control(_)
        )
    }
}
