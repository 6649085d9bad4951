//! The client preset of two servers under one rate limit: seed 948570's kind of case.
//!
//! RATE-03 binds a client from when a 429 reaches it. A 429 still in the network when
//! its client times out binds nothing: the client never read its Retry-After and retries
//! on its backoff (RETRY-02), one second after the timeout. Reaching that case takes a
//! request that sits in the network until the last second before its own timeout and is
//! answered 429 there. The clock stops inside that second only at another server's
//! deadline, and the deadlines of one server under a rate limit are whole seconds apart
//! (Retry-After: 2) unless a backoff's jitter shifts them: here server 1's first and third
//! tries are answered 500, so its Retry-After chain, its "result unknown" and its first
//! scheduled query land at 19.312 s, inside server 0's last second before its timeout at
//! 20 s (its retry at 21.088 s, jitter 88 ms). That prefix is the setup; every order of
//! what follows (server 0's request delivered at any of the deadlines or not, the 429 read
//! or not before the timeout, server 1's query) is explored. Exploring both servers from
//! time 0 instead reaches the same case only past 450,000 states; the seeded sweeps draw
//! it about once in a million runs (docs/planted-bugs.md).

use super::client::{client_world, pay};
use super::{Knob, Preset, Step, budget};
use payhub_model::client::Policy;
use payhub_model::{AcquirerDecision, Control, MerchantId, Millis, Rule};
use payhub_sim::WorldConfig;

/// The name of the two-server rate-limit preset ([`two_servers_rate_limited`]).
pub const TWO_SERVERS_RATE_PRESET: &str = "two-servers-rate-limited";

/// RATE-03 with two servers of merchant 1 under its rate limit (429, Retry-After: 2),
/// jitter drawn: server 0's first try sits in the network while server 1's tries
/// (500, 429, 500, 429, 429) move the clock to the last second before server 0's timeout.
pub fn two_servers_rate_limited(policy: &Policy) -> Preset {
    let config = WorldConfig {
        decisions: vec![AcquirerDecision::Approve],
        webhooks: Vec::new(),
        jitter: true,
        ..client_world(
            policy,
            2,
            vec![pay(0, "ORDER-1"), pay(1, "ORDER-2")],
            budget(&[(Knob::Fail500, 2)]),
        )
    };
    Preset::new(
        TWO_SERVERS_RATE_PRESET,
        "RATE-03 with two servers under one rate limit (429, Retry-After: 2), jitter drawn: server 0's request sits in the network while server 1's 500s and 429s move the clock into the last second before server 0's timeout; a 429 answered there binds only if it is read.",
        config,
        Millis::secs(22),
    )
    .exercising(&[
        Rule::RateLimited,
        Rule::RetryAfterHonoured,
        Rule::RetryBackoff,
    ])
    .reaching(&["reach:429-rate-limited"])
    .after(setup())
}

/// The rate limit on; server 0 sends ORDER-1's first try, which stays in the network;
/// server 1's ORDER-2 is answered 500 (retry at 1.112 s), 429 (3.112 s), 500 (7.312 s),
/// 429 (9.312 s) and 429: result unknown, its first query due at 19.312 s.
fn setup() -> Vec<Step> {
    use Step::{Command, Deliver, Fail500, Tick};
    let on = Control::SetRateLimited {
        merchant: MerchantId(1),
        on: true,
    };
    let mut steps = vec![
        Step::Control(on),
        Command(0),
        Command(1),
        Fail500,
        Deliver,
        Tick,
    ];
    for fail in [false, true, false, false] {
        steps.extend(if fail {
            vec![Fail500, Deliver, Tick]
        } else {
            vec![Deliver, Deliver, Tick]
        });
    }
    steps.pop(); // the last 429 is read; the clock stays at 9.312 s
    steps
}
