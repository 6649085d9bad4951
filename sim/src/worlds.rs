//! Named worlds for simulation sweeps: who the merchants are, which policy their servers
//! follow, and the business they are given; and the world of a live edge ([`edge`]),
//! whose requests come from outside it.

use crate::config::{Budget, ClientSpec, WorkItem, WorldConfig};
use crate::error::SettingsError;
use payhub_model::api::req;
use payhub_model::api_keys::{M1_LIVE, M1_TEST, M1_TEST_READ_ONLY, M2_TEST};
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::client::{AntiPattern, Command, Policy};
use payhub_model::{ApiKeyId, Card, Environment, MerchantId, PlatformParams};
use payhub_model::{ApiRequest, Control, Endpoint, Json, PaymentId};

/// Parses a policy name: `reference`, `reference-random`, or anti-pattern names joined
/// by `+` or `,` (each on top of the reference policy).
pub fn parse_policy(name: &str) -> Result<Policy, SettingsError> {
    match name {
        "reference" => Ok(Policy::reference()),
        "reference-random" => Ok(Policy::reference_random()),
        _ => {
            let mut policy = Policy::reference_random();
            for part in name.split(['+', ',']) {
                let part = part.trim();
                let pattern = AntiPattern::from_name(part).ok_or_else(|| {
                    let names: Vec<&str> = AntiPattern::ALL.iter().map(|p| p.name()).collect();
                    SettingsError::UnknownPolicy {
                        name: part.to_owned(),
                        known: names.join(", "),
                    }
                })?;
                policy = policy.with(pattern);
            }
            Ok(policy)
        }
    }
}

/// The name of a policy, as [`parse_policy`] reads it.
pub fn policy_name(policy: &Policy) -> String {
    if policy.is_reference() {
        return match policy.keys {
            payhub_model::client::Keys::Deterministic => "reference".into(),
            payhub_model::client::Keys::RandomPersisted => "reference-random".into(),
        };
    }
    policy
        .anti_patterns
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join("+")
}

/// The simulation world: `servers` servers of merchant 1 (test) sharing one database,
/// one server of merchant 1 in live, every fault allowed, and a business day
/// ([`business_day`]).
pub fn simulation(policy: &Policy, servers: u8) -> WorldConfig {
    let servers = servers.max(1);
    let live = servers;
    let mut clients: Vec<ClientSpec> = (0..servers)
        .map(|node| ClientSpec {
            node,
            api_key: M1_TEST,
            policy: policy.clone(),
            db: 0,
            readings: Default::default(),
        })
        .collect();
    clients.push(ClientSpec {
        node: live,
        api_key: M1_LIVE,
        policy: policy.clone(),
        db: 1,
        readings: Default::default(),
    });
    WorldConfig {
        name: format!(
            "simulation policy={} servers={servers}",
            policy_name(policy)
        ),
        budget: Budget {
            crashes: 3,
            // Up to four outages (on and off) a run.
            controls: 8,
            ..Budget::UNLIMITED
        },
        clients,
        workload: business_day(servers),
        // A-REFUND-REVIEW: the refunds of 4000 wait in pending_review, approved.
        params: PlatformParams {
            refund_review_from: 4000,
            ..PlatformParams::default()
        },
        // S10, S13: the reference client meets 429s and 503s too; each seed's swarm
        // profile draws how often (`FaultProfile::control_weight`), and healing ends them.
        controls: outages(),
        jitter: true,
        webhooks: vec![
            (MerchantId(1), Environment::Test, 0),
            (MerchantId(1), Environment::Live, live),
        ],
        ..WorldConfig::default()
    }
}

/// The world of a live edge (a sandbox session, conform's oracle of a target): the
/// default API keys and the rotated pair, no client models (every node is a scripted
/// sender: the merchant's own integration is the client), every fault affordable,
/// webhooks to each writing key's node if `webhooks`, responses travelling so that one
/// can be lost.
pub fn edge(params: PlatformParams, webhooks: bool) -> WorldConfig {
    WorldConfig {
        name: "sandbox".into(),
        params,
        api_keys: default_api_keys(),
        spare_keys: vec![rotated_key_spec()],
        budget: Budget::UNLIMITED,
        webhooks: if webhooks {
            default_api_keys()
                .iter()
                .filter(|k| !k.read_only)
                .map(|k| (k.merchant, k.environment, node_of(k.id)))
                .collect()
        } else {
            Vec::new()
        },
        immediate_inbox: false,
        ..WorldConfig::default()
    }
}

/// The node that sends a key's requests in the [`edge`] world: `merchant-N` for `ak_N`
/// (N ≤ 5), node 0 for any other key.
pub fn node_of(key: ApiKeyId) -> u8 {
    if (1..=5).contains(&key.0) {
        key.0 as u8
    } else {
        0
    }
}

/// Merchant 1's rate limit (429, Retry-After) and the channel pause (503), on and off:
/// the simulation world's outages, and the client preset's under 429 and 503.
pub fn outages() -> Vec<Control> {
    let rate = |on| Control::SetRateLimited {
        merchant: MerchantId(1),
        on,
    };
    let pause = |on| Control::SetChannelPaused { on };
    vec![rate(true), rate(false), pause(true), pause(false)]
}

/// The simulation world's workload for `servers` test servers (and the live server after
/// them): two servers paying one order at once, a card change, a second order that is
/// canceled, a refund sent by two servers, the same order number in live, a reconciliation.
fn business_day(servers: u8) -> Vec<WorkItem> {
    let live = servers;
    let other = if servers > 1 { 1 } else { 0 };
    let pay = |order: &str, amount: u64, currency: &str, card: char| Command::PayOrder {
        order: order.into(),
        amount,
        currency: currency.into(),
        card: Card(card),
    };
    vec![
        WorkItem {
            node: 0,
            command: pay("ORDER-1", 10000, "USD", 'A'),
            times: 1,
        },
        WorkItem {
            node: other,
            command: pay("ORDER-1", 10000, "USD", 'A'),
            times: 1,
        },
        WorkItem {
            node: 0,
            command: Command::RetryWithCard {
                order: "ORDER-1".into(),
                card: Card('B'),
            },
            times: 2,
        },
        WorkItem {
            node: other,
            command: pay("ORDER-2", 5000, "EUR", 'C'),
            times: 1,
        },
        WorkItem {
            node: 0,
            command: Command::CancelOrder {
                order: "ORDER-2".into(),
            },
            times: 1,
        },
        WorkItem {
            node: 0,
            command: Command::RefundOrder {
                order: "ORDER-1".into(),
                refund: "R-1".into(),
                amount: 4000,
            },
            times: 1,
        },
        WorkItem {
            node: other,
            command: Command::RefundOrder {
                order: "ORDER-1".into(),
                refund: "R-1".into(),
                amount: 4000,
            },
            times: 1,
        },
        WorkItem {
            node: live,
            command: pay("ORDER-1", 10000, "USD", 'A'),
            times: 1,
        },
        WorkItem {
            node: 0,
            command: Command::Reconcile,
            times: 1,
        },
    ]
}

/// The chaos world: two scripted senders fire any request of a small adversarial alphabet
/// (replays, conflicting replays, another card, another order's key, other merchants and
/// environments, missing, empty and over-long keys, a malformed body, a read-only key,
/// confirms, cancels, refunds, queries) at the reference platform, under every fault,
/// with rate limits and channel pauses switching.
/// The input edges of the chaos alphabet: keys of 1 and 255 characters next to
/// the 0 and 256 above, multi-byte keys of 255 and 256 characters, keyless and empty-key
/// requests on every endpoint that needs a key, an order number that differs only in
/// case, refunds of an unpaid Payment (the session's) and beyond a refunded one, confirm
/// and cancel of a Payment once closed, GETs of unknown ids and routes.
fn chaos_edges() -> Vec<ApiRequest> {
    let pay = PaymentId(1);
    let unpaid = PaymentId(2);
    let create =
        |k: Option<&str>| req::with_key(req::create("K1", "ORDER-1", 10000, "USD", 'A'), k);
    let mut edges = vec![
        create(Some("k")),
        create(Some(&"k".repeat(255))),
        create(Some(&"é".repeat(255))),
        create(Some(&"é".repeat(256))),
        req::create("K5", "order-1", 10000, "USD", 'A'),
        req::by_order("order-1"),
        req::refund("R4", unpaid, "R-3", 5000),
        req::refund("R5", pay, "R-4", 10000),
        req::cancel("X2", unpaid),
        req::confirm("C3", unpaid, 'A'),
        req::get(PaymentId(9)),
        req::get_refund(payhub_model::RefundId(9)),
        req::query(Endpoint::Other {
            method: payhub_model::Method::Delete,
            path: "/v1/payments/pay_demo_001".into(),
        }),
    ];
    for k in [None, Some("")] {
        edges.extend([
            req::with_key(req::confirm("C1", pay, 'B'), k),
            req::with_key(req::cancel("X1", pay), k),
            req::with_key(req::session("S1", "ORDER-2", 10000, "USD"), k),
            req::with_key(req::refund("R1", pay, "R-1", 5000), k),
        ]);
    }
    edges
}

pub fn chaos() -> WorldConfig {
    let create = |k: &str, amount: i64, card: char| req::create(k, "ORDER-1", amount, "USD", card);
    let pay = PaymentId(1);
    let long_key = "k".repeat(256);
    let alphabet: Vec<ApiRequest> = vec![
        create("K1", 10000, 'A'),
        create("K1", 10000, 'B'),
        create("K1", 12000, 'A'),
        create("K2", 10000, 'A'),
        req::create_as(M1_LIVE, "K1", "ORDER-1", 10000, "USD", Some('A')),
        req::create_as(M2_TEST, "K1", "ORDER-1", 10000, "USD", Some('A')),
        req::create_as(M1_TEST_READ_ONLY, "K3", "ORDER-1", 10000, "USD", Some('A')),
        req::with_key(create("K1", 10000, 'A'), None),
        req::with_key(create("K1", 10000, 'A'), Some("")),
        req::with_key(create("K1", 10000, 'A'), Some(&long_key)),
        ApiRequest {
            api_key: M1_TEST,
            idempotency_key: Some("K4".into()),
            endpoint: Endpoint::CreatePayment {
                body: Json::Malformed("{\"amount\":".into()),
            },
        },
        req::confirm("C1", pay, 'B'),
        req::confirm("C2", pay, 'C'),
        req::cancel("X1", pay),
        req::refund("R1", pay, "R-1", 5000),
        req::refund("R2", pay, "R-1", 5000),
        req::refund("R3", pay, "R-2", 8000),
        req::session("S1", "ORDER-2", 10000, "USD"),
        req::session("S2", "ORDER-2", 10000, "USD"),
        req::get(pay),
        req::by_order("ORDER-1"),
    ];
    let alphabet: Vec<ApiRequest> = alphabet.into_iter().chain(chaos_edges()).collect();
    WorldConfig {
        name: "chaos".into(),
        alphabet: alphabet
            .into_iter()
            .enumerate()
            .map(|(i, r)| ((i % 2) as u8, r.into()))
            .collect(),
        budget: Budget {
            sends: 10,
            ..Budget::UNLIMITED
        },
        controls: rate_and_pause(),
        immediate_inbox: true,
        webhooks: Vec::new(),
        ..WorldConfig::default()
    }
}

/// 429 switched on and off for merchant 1, and the channel paused and resumed (S10, S13).
pub fn rate_and_pause() -> Vec<Control> {
    let rate = |on| Control::SetRateLimited {
        merchant: MerchantId(1),
        on,
    };
    let pause = |on| Control::SetChannelPaused { on };
    vec![rate(true), rate(false), pause(true), pause(false)]
}
