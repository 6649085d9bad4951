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
use super::{Knob, Preset, Reaches, budget};
use crate::World;
use payhub_model::client::Policy;
use payhub_model::{AcquirerDecision, Control, MerchantId, Millis, Rule};
use payhub_sim::{Choice, WorldConfig};

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
            TWO_SERVERS_RATE_PRESET,
            policy,
            2,
            vec![pay(0, "ORDER-1"), pay(1, "ORDER-2")],
            budget(&[(Knob::Fail500, 2)]),
        )
    };
    let setup = setup(&config);
    Preset {
        name: TWO_SERVERS_RATE_PRESET,
        about: "RATE-03 with two servers under one rate limit (429, Retry-After: 2), jitter drawn: server 0's request sits in the network while server 1's 500s and 429s move the clock into the last second before server 0's timeout; a 429 answered there binds only if it is read.",
        config,
        setup,
        horizon: Millis::secs(22),
        exercises: &[
            Rule::RateLimited,
            Rule::RetryAfterHonoured,
            Rule::RetryBackoff,
        ],
        reaches: Reaches::of(&["reach:429-rate-limited"]),
    }
}

/// One step of the setup, resolved against the world as it is built.
enum Pick {
    /// Workload item `n` is given to its server.
    Command(u16),
    /// The newest message in flight is answered 500 by the edge.
    Fail500,
    /// The newest message in flight is delivered.
    Deliver,
    /// The clock jumps to the next deadline.
    Tick,
}

/// The rate limit on; server 0 sends ORDER-1's first try, which stays in the network;
/// server 1's ORDER-2 is answered 500 (retry at 1.112 s), 429 (3.112 s), 500 (7.312 s),
/// 429 (9.312 s) and 429: result unknown, its first query due at 19.312 s.
fn setup(config: &WorldConfig) -> Vec<Choice> {
    use Pick::*;
    let mut steps = vec![Command(0), Command(1), Fail500, Deliver, Tick];
    for fail in [false, true, false, false] {
        steps.extend(if fail {
            vec![Fail500, Deliver, Tick]
        } else {
            vec![Deliver, Deliver, Tick]
        });
    }
    steps.pop(); // the last 429 is read; the clock stays at 9.312 s
    let mut world = World::new(config);
    let on = Choice::Control(Control::SetRateLimited {
        merchant: MerchantId(1),
        on: true,
    });
    world.apply(config, &on, None).expect("rate limit on");
    let mut choices = vec![on];
    let mut enabled = Vec::new();
    for step in steps {
        world.enabled(config, &mut enabled);
        let newest = |f: fn(&Choice) -> Option<u32>| {
            enabled
                .iter()
                .filter_map(|c| f(c).map(|m| (m, c)))
                .max_by_key(|(m, _)| *m)
                .map(|(_, c)| c.clone())
        };
        let choice = match step {
            Command(n) => Some(Choice::Command {
                item: n,
                crash_after: false,
            }),
            Fail500 => newest(|c| match c {
                Choice::Fail500Before { msg } => Some(msg.0),
                _ => None,
            }),
            Deliver => newest(|c| match c {
                Choice::Deliver { msg, branch: None } => Some(msg.0),
                _ => None,
            }),
            Tick => Some(Choice::Tick),
        }
        .expect("preset setup: the step is enabled");
        world
            .apply(config, &choice, None)
            .expect("preset setup applies");
        choices.push(choice);
    }
    choices
}
