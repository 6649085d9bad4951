//! Small-scope presets for the exhaustive checker: each names what it explores.
//!
//! In these presets the platform is the reference model and the merchant side is
//! adversarial: any sequence, any interleaving, over a small alphabet of requests, with
//! a bounded budget of faults. Every state within the preset's time horizon is visited.

use crate::World;
use crate::property::{Kind, Property};
use crate::registry::{PROPERTIES, property};
use payhub_model::api::req;
use payhub_model::api_keys::{M1_LIVE, M1_TEST, M1_TEST_ROTATED, M2_TEST, rotated_key_spec};
use payhub_model::client::{Command, Policy};
use payhub_model::{
    AcquirerDecision, ApiRequest, Control, MerchantId, Millis, PaymentId, PlatformParams,
};
use payhub_model::{Card, Environment, Rule};
use payhub_sim::{Budget, Choice, ClientSpec, WorkItem, WorldConfig};

/// A checker preset.
#[derive(Clone, Debug)]
pub struct Preset {
    pub name: &'static str,
    /// What it explores, in one sentence.
    pub about: &'static str,
    pub config: WorldConfig,
    /// Choices applied to reach the initial state (e.g. a Payment that already succeeded).
    pub setup: Vec<Choice>,
    /// States later than this are not expanded (timers repeat forever).
    pub horizon: Millis,
    /// The `sometimes` properties this preset must reach, by name, each checked against
    /// the registry when the preset is built ([`Preset::reaching`]).
    pub reaches: &'static [&'static str],
    /// The rules the preset is built to exercise: each must decide something in a state
    /// it visits or have a witness reached there, or be an invariant
    /// ([`payhub_model::Rule::invariant`]) its properties judge there
    /// (`properties/tests/coverage.rs`). The coverage table counts invariants by this list.
    pub exercises: &'static [Rule],
}

/// The registered `sometimes` property `name`, or why there is none.
pub fn sometimes(name: &str) -> Result<&'static Property, String> {
    match property(name) {
        Some(p) if p.kind() == Kind::Sometimes => Ok(p),
        Some(_) => Err(format!(
            "'{name}' is an always property, not a witness a preset can reach"
        )),
        None => Err(format!(
            "'{name}' is not a registered property (sometimes properties: {})",
            PROPERTIES
                .iter()
                .filter(|p| p.kind() == Kind::Sometimes)
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Parameters that keep timer-driven state spaces small while keeping every rule's shape:
/// the platform verifies every 20 minutes, the automatic window is 1 hour, no webhook
/// re-deliveries. Every platform preset (the bug zoo's included) starts from them.
pub(crate) fn checker_params() -> PlatformParams {
    PlatformParams {
        verify_interval: Millis::mins(20),
        auto_query_window: Millis::hours(1),
        webhook_redeliveries_max: 0,
        ..PlatformParams::default()
    }
}

/// An adversarial world over `alphabet`: scripted senders whose responses arrive at once,
/// an approving acquirer, no payer, no webhooks, and a clock that waits until nothing is
/// in flight. Every platform preset (the bug zoo's included) is built on it.
pub(crate) fn base(alphabet: Vec<(u8, ApiRequest)>, budget: Budget) -> WorldConfig {
    WorldConfig {
        params: checker_params(),
        budget,
        alphabet: alphabet.into_iter().map(|(m, r)| (m, r.into())).collect(),
        decisions: vec![AcquirerDecision::Approve],
        payer: false,
        webhooks: Vec::new(),
        immediate_inbox: true,
        time_waits_for_messages: true,
        ..WorldConfig::default()
    }
}

pub(crate) const NO_FAULTS: Budget = Budget::NONE;

/// A budget of these knobs, every other none.
pub(crate) fn budget(knobs: &[(Knob, u8)]) -> Budget {
    let mut budget = NO_FAULTS;
    for (knob, n) in knobs {
        *knob.of(&mut budget) = *n;
    }
    budget
}

/// A setup step, resolved against the world as it is built (message ids are not guessed).
pub(crate) enum Step {
    /// Merchant 0 sends this request.
    Send(ApiRequest),
    /// Workload item `n` is given to its server.
    Command(u16),
    /// This control is applied.
    Control(Control),
    /// The newest request in flight is delivered.
    Deliver,
    /// The newest request in flight is answered 500 by the edge.
    Fail500,
    /// The first upstream call is decided so.
    Acquire(AcquirerDecision),
    /// The first upstream reply is delivered.
    DeliverUpstream,
    /// The clock jumps to the next deadline.
    Tick,
}

/// The choices that apply `steps` to a fresh world of `config`.
pub(crate) fn setup(config: &WorldConfig, steps: Vec<Step>) -> Vec<Choice> {
    let mut world = World::new(config);
    let mut enabled = Vec::new();
    let mut choices = Vec::new();
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
            Step::Send(request) => Some(Choice::Send {
                merchant: 0,
                request: request.into(),
            }),
            Step::Command(item) => Some(Choice::Command {
                item,
                crash_after: false,
            }),
            Step::Control(control) => Some(Choice::Control(control)),
            Step::Deliver => newest(|c| match c {
                Choice::Deliver { msg, branch: None } => Some(msg.0),
                _ => None,
            }),
            Step::Fail500 => newest(|c| match c {
                Choice::Fail500Before { msg } => Some(msg.0),
                _ => None,
            }),
            // Any decision, not only those the preset's acquirer may take later.
            Step::Acquire(decision) => enabled.iter().find_map(|c| match c {
                Choice::Acquire { msg, .. } => Some(Choice::Acquire {
                    msg: *msg,
                    decision,
                }),
                _ => None,
            }),
            Step::DeliverUpstream => enabled
                .iter()
                .find(|c| matches!(c, Choice::DeliverUpstream { .. }))
                .cloned(),
            Step::Tick => Some(Choice::Tick),
        }
        .expect("preset setup: the step is enabled");
        world
            .apply(config, &choice, None)
            .expect("preset setup applies");
        choices.push(choice);
    }
    choices
}

/// Setup: merchant 0 creates ORDER-1 (10000 USD) under `key` with card A and the acquirer
/// decides (the Payment is `pay_demo_001`).
pub(crate) fn paid(key: &str, decision: AcquirerDecision) -> Vec<Step> {
    let mut steps = vec![
        Step::Send(req::create(key, "ORDER-1", 10000, "USD", 'A')),
        Step::Deliver,
        Step::Acquire(decision),
    ];
    if decision != AcquirerDecision::ApproveSilently {
        steps.push(Step::DeliverUpstream);
    }
    steps
}

impl Preset {
    /// The world after the preset's setup, or the first setup choice (counted from 1)
    /// that does not apply to it and why.
    pub fn initial_state(&self) -> Result<World, (usize, payhub_sim::ApplyError)> {
        let mut world = World::new(&self.config);
        for (i, choice) in self.setup.iter().enumerate() {
            world
                .apply(&self.config, choice, None)
                .map_err(|error| (i + 1, error))?;
        }
        Ok(world)
    }

    /// A preset of `config` (its world named `name`) from its initial state, exploring
    /// up to `horizon`, built to exercise no rule and to reach nothing in particular.
    pub(crate) fn new(
        name: &'static str,
        about: &'static str,
        config: WorldConfig,
        horizon: Millis,
    ) -> Preset {
        Preset {
            name,
            about,
            config: WorldConfig {
                name: name.to_owned(),
                ..config
            },
            setup: Vec::new(),
            horizon,
            reaches: &[],
            exercises: &[],
        }
    }

    /// This preset, built to exercise `rules`.
    pub(crate) fn exercising(self, exercises: &'static [Rule]) -> Preset {
        Preset { exercises, ..self }
    }

    /// This preset, which must reach the `sometimes` properties `names`. Panics if one is
    /// not a registered `sometimes` property, so a misspelled witness is never silently
    /// not looked for: a preset is written in code, and the test that builds every
    /// preset catches it.
    pub(crate) fn reaching(self, names: &'static [&'static str]) -> Preset {
        if let Some(e) = names.iter().find_map(|name| sometimes(name).err()) {
            panic!("{e}");
        }
        Preset {
            reaches: names,
            ..self
        }
    }

    /// This preset, starting from the state `steps` reach in its world.
    pub(crate) fn after(self, steps: Vec<Step>) -> Preset {
        Preset {
            setup: setup(&self.config, steps),
            ..self
        }
    }
}

/// The Payment a setup creates.
pub(crate) const PAY_1: PaymentId = PaymentId(1);

/// Every preset, in the order `check --preset all` runs them.
pub fn presets() -> Vec<Preset> {
    let mut all = platform_presets();
    all.extend(client_presets(&Policy::reference()));
    all
}

/// Presets in which the platform is the reference and the merchant side adversarial.
pub fn platform_presets() -> Vec<Preset> {
    let create = |key| req::create(key, "ORDER-1", 10000, "USD", 'A');
    let create_as = |api_key| req::create_as(api_key, "K", "ORDER-1", 10000, "USD", Some('A'));
    vec![
        Preset::new(
            "replay-conflict",
            "S1, S3, S6, S7: one key replayed with the same parameters, another card, another amount; one lost message and one 500.",
            WorldConfig {
                decisions: vec![AcquirerDecision::Approve, AcquirerDecision::Decline],
                ..base(
                    vec![
                        (0, create("K")),
                        (0, req::create("K", "ORDER-1", 10000, "USD", 'B')),
                        (0, req::create("K", "ORDER-1", 12000, "USD", 'A')),
                    ],
                    budget(&[(Knob::Sends, 2), (Knob::Drops, 1), (Knob::Fail500, 1)]),
                )
            },
            Millis::mins(30),
        )
        .exercising(&[Rule::ReplayReusesObject, Rule::ReplayLatestStatus200, Rule::FirstExecution201, Rule::IdempotencyConflict, Rule::CardNotCompared, Rule::CardReplayNotCharged, Rule::OneBusinessEffect, Rule::OneBilling])
        .reaching(&["reach:replay-answered-200", "reach:409-idempotency-conflict"])
        .after(vec![Step::Send(create("K"))]),
        Preset::new(
            "concurrent-same-key",
            "S5: two servers send the same key at once while the upstream is slow or silent.",
            WorldConfig {
                decisions: vec![AcquirerDecision::Approve, AcquirerDecision::ApproveSilently],
                ..base(
                    vec![(0, create("K")), (1, create("K"))],
                    budget(&[(Knob::Sends, 3)]),
                )
            },
            Millis::mins(30),
        )
        .exercising(&[Rule::ConcurrentOneExecutes, Rule::ConcurrentWaitSameObject, Rule::ConcurrentWaitTimeout, Rule::OneBusinessEffect])
        .reaching(&["reach:409-operation-in-progress", "reach:202-result-unknown", "reach:needs-query"]),
        Preset::new(
            "order-number",
            "S4, RET-02: a new key for a used order number, before and after the 7-day retention.",
            WorldConfig {
                waits: vec![Millis::days(7)],
                ..base(
                    vec![
                        (0, create("K0")),
                        (0, create("K2")),
                        (0, req::create("K2", "ORDER-1", 12000, "USD", 'A')),
                    ],
                    budget(&[(Knob::Sends, 2), (Knob::Waits, 1)]),
                )
            },
            Millis::days(8),
        )
        .exercising(&[Rule::OrderNoNewKey, Rule::UniqueOrderNo, Rule::RetentionSevenDays, Rule::RetentionOrderNoOutlives])
        .reaching(&["reach:409-order-no-conflict", "reach:replay-after-retention", "reach:replay-answered-200"])
        .after(paid("K0", AcquirerDecision::Approve)),
        Preset::new(
            "confirm-past-retention",
            "RET-01, A-CONFIRM-RETENTION: a declined card retry's confirm key replayed before and after its 7-day retention, the replay read as a new attempt and as not new business.",
            WorldConfig {
                // Declines only: the Payment stays failed, so every replay may retry it.
                decisions: vec![AcquirerDecision::Decline],
                params: PlatformParams {
                    payment_ttl: Millis::days(30),
                    ..checker_params()
                },
                waits: vec![Millis::days(8)],
                ..base(
                    vec![(0, req::confirm("K2", PAY_1, 'B'))],
                    budget(&[(Knob::Sends, 2), (Knob::Waits, 1)]),
                )
            },
            Millis::days(9),
        )
        .exercising(&[Rule::RetentionSevenDays])
        .reaching(&["reach:replay-after-retention", "reach:replay-answered-200"])
        .after(paid("K0", AcquirerDecision::Decline)),
        Preset::new(
            "card-retry",
            "S8, S9: confirms with new keys and other cards while processing, after a decline, and after expires_at.",
            WorldConfig {
                decisions: vec![
                    AcquirerDecision::Approve,
                    AcquirerDecision::Decline,
                    AcquirerDecision::RequireAction,
                ],
                payer: true,
                params: PlatformParams {
                    payment_ttl: Millis::hours(2),
                    verify_interval: Millis::mins(30),
                    ..checker_params()
                },
                waits: vec![Millis::hours(3)],
                ..base(
                    vec![
                        (0, req::confirm("K2", PAY_1, 'B')),
                        (0, req::confirm("K3", PAY_1, 'C')),
                    ],
                    budget(&[(Knob::Sends, 3), (Knob::Waits, 1)]),
                )
            },
            Millis::hours(4),
        )
        .exercising(&[Rule::ConfirmWhileProcessing, Rule::CardRetryAfterFailure, Rule::CardRetryNewKey, Rule::CardRetryBeforeExpiry, Rule::RetryKeepsPaymentAndFee])
        .reaching(&["reach:second-card-succeeded", "reach:409-payment-in-progress"])
        .after(paid("K0", AcquirerDecision::Decline)),
        Preset::new(
            "refund",
            "S11: refunds retried with the same key, a new key for a used refund number, a second refund, lost and failing upstream.",
            WorldConfig {
                decisions: vec![
                    AcquirerDecision::Approve,
                    AcquirerDecision::Fail,
                    AcquirerDecision::ApproveSilently,
                ],
                ..base(
                    vec![
                        (0, req::refund("R1", PAY_1, "R-1", 6000)),
                        (0, req::refund("R2", PAY_1, "R-1", 6000)),
                        (0, req::refund("R3", PAY_1, "R-2", 6000)),
                    ],
                    budget(&[(Knob::Sends, 3), (Knob::Drops, 1)]),
                )
            },
            Millis::hours(1),
        )
        .exercising(&[Rule::RefundTimeoutNoSecondRefund, Rule::RefundReplaySameRefund, Rule::UniqueRefundNo])
        .reaching(&["reach:409-refund-no-conflict", "reach:refund-succeeded"])
        .after(paid("K0", AcquirerDecision::Approve)),
        Preset::new(
            "refund-review",
            "A-REFUND-REVIEW: refunds that wait in pending_review, one approved and sent, one rejected (failed, never sent), retried with the same key.",
            WorldConfig {
                decisions: vec![AcquirerDecision::Approve, AcquirerDecision::Fail],
                params: PlatformParams {
                    refund_review_from: 3000,
                    refund_review_rejects_from: 5000,
                    ..checker_params()
                },
                ..base(
                    vec![
                        (0, req::refund("R1", PAY_1, "R-1", 3000)),
                        (0, req::refund("R2", PAY_1, "R-2", 5000)),
                    ],
                    budget(&[(Knob::Sends, 3)]),
                )
            },
            Millis::hours(2),
        )
        .exercising(&[Rule::RefundNotBeyondCaptured, Rule::RefundReplaySameRefund])
        .reaching(&["reach:refund-succeeded", "reach:refund-rejected-in-review"])
        .after(paid("K0", AcquirerDecision::Approve)),
        Preset::new(
            "cancel",
            "S12: cancel of a requires_action payment that the upstream cannot confirm, then authentication or cancellation.",
            WorldConfig {
                decisions: vec![AcquirerDecision::Approve, AcquirerDecision::Fail],
                payer: true,
                ..base(vec![(0, req::cancel("C1", PAY_1))], budget(&[(Knob::Sends, 2)]))
            },
            Millis::hours(2),
        )
        .exercising(&[Rule::Cancel202KeepsStatus])
        .reaching(&["reach:cancel-202", "reach:replay-answered-200"])
        .after(paid("K0", AcquirerDecision::RequireAction)),
        Preset::new(
            "scope",
            "SCOPE-01..03: one key in test and live, for two merchants, and across an API-key rotation.",
            WorldConfig {
                controls: vec![Control::RevokeApiKey(M1_TEST)],
                ..base(
                    vec![
                        (0, create_as(M1_TEST)),
                        (0, create_as(M1_LIVE)),
                        (1, create_as(M2_TEST)),
                        (0, create_as(M1_TEST_ROTATED)),
                    ],
                    budget(&[(Knob::Sends, 2), (Knob::Controls, 1)]),
                )
            },
            Millis::mins(30),
        )
        .exercising(&[Rule::ScopeComponents, Rule::ScopeEnvironments, Rule::ScopeApiKeyRotation])
        .reaching(&["reach:replay-answered-200"])
        .after(vec![Step::Control(Control::IssueApiKey(rotated_key_spec()))]),
        Preset::new(
            "rate-and-pause",
            "S10, S13: 429 and 503 switch on and off around a create and its retries.",
            WorldConfig {
                controls: payhub_sim::worlds::rate_and_pause(),
                ..base(
                    vec![(0, create("K"))],
                    budget(&[(Knob::Sends, 2), (Knob::Controls, 2)]),
                )
            },
            Millis::mins(30),
        )
        .exercising(&[Rule::RateLimited, Rule::ChannelPaused, Rule::Only503NotAccepted])
        .reaching(&["reach:429-rate-limited", "reach:503-temporarily-unavailable", "reach:replay-answered-200"]),
        Preset::new(
            "checkout",
            "CKO-01, UNIQ-03: checkout sessions with new keys for one order, another amount, and paying the Payment.",
            base(
                vec![
                    (0, req::session("S1", "ORDER-1", 10000, "USD")),
                    (0, req::session("S2", "ORDER-1", 10000, "USD")),
                    (0, req::session("S3", "ORDER-1", 12000, "USD")),
                    (0, req::confirm("C1", PAY_1, 'A')),
                ],
                budget(&[(Knob::Sends, 3)]),
            ),
            Millis::mins(30),
        )
        .exercising(&[Rule::CheckoutNewSession, Rule::CheckoutSameProcess])
        .reaching(&["reach:new-checkout-session-same-payment", "reach:409-order-no-conflict"]),
        Preset::new(
            "unknown-result",
            "RES-01, RES-03, EXPIRY-01: a charge whose answer is lost; the platform verifies, goes to manual_review, and a replay reads the latest state.",
            WorldConfig {
                decisions: vec![
                    AcquirerDecision::Approve,
                    AcquirerDecision::Fail,
                    AcquirerDecision::ApproveSilently,
                ],
                ..base(
                    vec![(0, create("K"))],
                    budget(&[(Knob::Sends, 1), (Knob::UpstreamDrops, 1)]),
                )
            },
            Millis::hours(26),
        )
        .exercising(&[Rule::NeedsQuery, Rule::ManualReview, Rule::ExpiryLimitsNewOpsOnly, Rule::UnknownResult])
        .reaching(&["reach:202-result-unknown", "reach:needs-query", "reach:manual-review"])
        .after(vec![Step::Send(create("K")), Step::Deliver]),
    ]
    .into_iter()
    .chain(edge_presets())
    .collect()
}

mod client;
mod client_rate;
mod edges;
mod scope;
pub(crate) use client::pay;
pub use client::{OUTAGE_OTHER_READINGS_PRESET, OUTAGE_PRESET, client_presets, client_world};
pub use client_rate::TWO_SERVERS_RATE_PRESET;
use edges::edge_presets;
pub use edges::{EDGE_PRESETS, key_edges};
pub use scope::{Knob, ORDERS_MAX, SERVERS_MAX, ScopeChange, ScopeError};

/// Looks a preset up by name.
pub fn preset(name: &str) -> Option<Preset> {
    presets().into_iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every preset builds (its setup applies, its witnesses are registered `sometimes`
    /// properties): those `check` runs, with every policy, and the bug zoo's.
    #[test]
    fn every_preset_builds_with_registered_witnesses() {
        let mut all = presets();
        for pattern in payhub_model::client::AntiPattern::ALL {
            all.extend(client_presets(&Policy::reference_random().with(*pattern)));
        }
        all.extend(crate::zoo::platform_order());
        all.extend(crate::zoo::client_order(&Policy::reference_random()));
        for preset in &all {
            for name in preset.reaches {
                assert!(sometimes(name).is_ok(), "{}: {name}", preset.name);
            }
        }
        let witnesses: usize = presets().iter().map(|p| p.reaches.len()).sum();
        assert!(witnesses >= 20, "{witnesses} witnesses");
    }

    #[test]
    #[should_panic(expected = "'reach:replay-answerd-200' is not a registered property")]
    fn a_misspelled_witness_is_caught_when_the_preset_is_built() {
        let preset = Preset::new("misspelled", "", WorldConfig::default(), Millis(0));
        preset.reaching(&["reach:replay-answered-200", "reach:replay-answerd-200"]);
    }

    #[test]
    fn an_always_property_is_not_a_witness() {
        let e = sometimes("client-never-charges-an-order-twice").unwrap_err();
        assert!(e.contains("is an always property"), "{e}");
        assert!(sometimes("reach:manual-review").is_ok());
    }
}
