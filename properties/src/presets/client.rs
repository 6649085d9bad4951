//! The client presets: reference clients (or a policy's) of merchant 1 paying orders
//! under faults, and the outage preset (S10, S13).

use super::*;

/// A world of reference clients: `servers` servers of merchant 1 (test) sharing one
/// database, each given `workload`.
pub fn client_world(
    policy: &Policy,
    servers: u8,
    workload: Vec<WorkItem>,
    budget: Budget,
) -> WorldConfig {
    WorldConfig {
        clients: (0..servers)
            .map(|node| ClientSpec {
                node,
                api_key: M1_TEST,
                policy: policy.clone(),
                db: 0,
                readings: Default::default(),
            })
            .collect(),
        workload,
        webhooks: vec![(MerchantId(1), Environment::Test, 0)],
        immediate_inbox: false,
        // A client's timeout is the point: time passes while messages are in flight.
        time_waits_for_messages: false,
        decisions: vec![AcquirerDecision::Approve, AcquirerDecision::ApproveSilently],
        ..base(Vec::new(), budget)
    }
}

/// Node `node` pays `order` (10000 USD, card A) once.
pub(crate) fn pay(node: u8, order: &str) -> WorkItem {
    WorkItem {
        node,
        command: Command::PayOrder {
            order: order.into(),
            amount: 10000,
            currency: "USD".into(),
            card: Card('A'),
        },
        times: 1,
    }
}

/// Presets in which the merchant side is the contract's reference client.
pub fn client_presets(policy: &Policy) -> Vec<Preset> {
    let order_1 = || vec![pay(0, "ORDER-1")];
    vec![
        Preset::new(
            "create-lossy",
            "One server pays an order while one message (request, response or upstream answer) is lost or the acquirer goes silent: a timeout, a retry with the same key, queries.",
            client_world(policy, 1, order_1(), budget(&[(Knob::Drops, 1)])),
            Millis::secs(45),
        )
        .exercising(&[
            Rule::OneBusinessEffect,
            Rule::RetrySameKey,
            Rule::RetryBackoff,
            Rule::QuerySchedule,
            Rule::SyncWait,
        ])
        .reaching(&["reach:replay-answered-200"]),
        Preset::new(
            "create-crash",
            "One server pays an order and crashes once, anywhere (also between persisting the key and sending), then restarts from its database.",
            WorldConfig {
                webhooks: Vec::new(),
                ..client_world(policy, 1, order_1(), budget(&[(Knob::Crashes, 1)]))
            },
            Millis::secs(25),
        )
        .exercising(&[
            Rule::OneBusinessEffect,
            Rule::PersistBeforeSend,
            Rule::NotFoundMeansNeverCreated,
            Rule::NotFoundRetryOriginalKey,
        ]),
        Preset::new(
            "two-servers-one-order",
            "Two servers sharing a database pay the same order at once (the same derived key from both).",
            WorldConfig {
                decisions: vec![AcquirerDecision::Approve],
                webhooks: Vec::new(),
                ..client_world(policy, 2, vec![pay(0, "ORDER-1"), pay(1, "ORDER-1")], NO_FAULTS)
            },
            Millis::secs(16),
        )
        .exercising(&[Rule::OneBusinessEffect, Rule::DeterministicKeys]),
        outage_preset(policy),
        outage_other_readings(policy),
        super::client_rate::two_servers_rate_limited(policy),
    ]
}

/// The name of the client preset under 429 and 503 ([`outage_preset`]).
pub const OUTAGE_PRESET: &str = "client-rate-and-pause";

/// The name of [`OUTAGE_PRESET`] with the client's other readings of the contradictions.
pub const OUTAGE_OTHER_READINGS_PRESET: &str = "client-rate-and-pause-other-readings";

/// [`outage_preset`] with both contradictions read the other way (A-S13-REFERENCE-CODE:
/// five 503s are a result unknown, queried; A-429-REFERENCE-CODE: five 429s are not
/// accepted, the order refused for now): the same properties judge both readings.
fn outage_other_readings(policy: &Policy) -> Preset {
    let mut preset = outage_preset(policy);
    for c in &mut preset.config.clients {
        c.readings = payhub_sim::Readings::other();
    }
    preset.config.name = OUTAGE_OTHER_READINGS_PRESET.into();
    Preset {
        name: OUTAGE_OTHER_READINGS_PRESET,
        about: "S10, S13 read the other way (after_503=result_unknown, after_429=not_accepted): one server pays an order while the merchant is rate-limited and the channel paused.",
        ..preset
    }
}

/// S10, S13 for the reference client: it pays an order while the merchant is rate-limited
/// (429, Retry-After) and the channel is paused (503) for a while; jitter is drawn.
fn outage_preset(policy: &Policy) -> Preset {
    let config = WorldConfig {
        decisions: vec![AcquirerDecision::Approve],
        webhooks: Vec::new(),
        jitter: true,
        controls: payhub_sim::worlds::outages(),
        ..client_world(
            policy,
            1,
            vec![pay(0, "ORDER-1")],
            budget(&[(Knob::Controls, 3)]),
        )
    };
    Preset::new(
        OUTAGE_PRESET,
        "S10, S13: one server pays an order while the merchant is rate-limited (429, Retry-After: 2) and the channel paused (503): retries after Retry-After and the backoff with jitter, \"temporarily unavailable\", then the payment.",
        config,
        Millis::secs(30),
    )
    .exercising(&[
        Rule::RateLimited,
        Rule::RetryAfterHonoured,
        Rule::ChannelPaused,
        Rule::NotFoundRetryOriginalKey,
    ])
    .reaching(&["reach:429-rate-limited", "reach:503-temporarily-unavailable"])
}
