//! One request of a conform round as both judges read it: the oracle, which explains
//! its answer by the model ([`super::oracle`]), and the registry, which records the
//! exchange for the properties ([`super::record`]).

use super::case::{self, Req};
use super::compare::Observed;
use crate::wire::WireReply;
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
    pub http: case::Http,
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
