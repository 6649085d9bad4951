//! Planted narrowings of the judge: a fact family read as it once was, narrower than the
//! rule its property names. A narrowing is not a bug of the platform or of a client: the
//! zoo plants one in the facts of the reference world to show that some scope of `verify`
//! reaches the case the old reading got wrong (the reference client is then "violated",
//! and the narrowing counts as killed). Every judge outside the zoo runs without one.

use payhub_model::Rule;
use serde::Serialize;

/// A planted narrowing of the judge (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Narrowing {
    /// RATE-03 judged from when the platform answers a 429, read or not: a 429 still in
    /// the network when its client times out binds the client's retry (seed 948570 of the
    /// million-seed sweep, a 429 answered 48 ms before the timeout and never read).
    RetryAfterBindsUnread429,
}

impl Narrowing {
    /// Every narrowing, in declaration order.
    pub const ALL: &'static [Narrowing] = &[Narrowing::RetryAfterBindsUnread429];

    /// snake_case name, as in the kill matrix and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Narrowing::RetryAfterBindsUnread429 => "retry_after_binds_unread_429",
        }
    }

    /// The rules whose property it narrows.
    pub const fn breaks(self) -> &'static [Rule] {
        match self {
            Narrowing::RetryAfterBindsUnread429 => &[Rule::RetryAfterHonoured],
        }
    }

    /// One line: what the narrowed judge does.
    pub const fn about(self) -> &'static str {
        match self {
            Narrowing::RetryAfterBindsUnread429 => {
                "judges Retry-After from when the platform answers a 429, also one the client timed out before reading"
            }
        }
    }
}
