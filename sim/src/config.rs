//! What a world contains and which faults it allows.

use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::client::{After503, Command, Policy};
use payhub_model::{
    AcquirerDecision, ApiKeyId, ApiKeySpec, ApiRequest, Control, Environment, MerchantId,
    PlatformParams, Variant,
};
use serde::Serialize;

/// How many faults and sends a run may still make. Part of the world's state, so the
/// exhaustive checker's state space is finite; a seeded run sets them high.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Budget {
    /// Lost merchant ⇄ platform messages (requests, responses, webhooks).
    pub drops: u8,
    /// Duplicated merchant ⇄ platform messages.
    pub duplicates: u8,
    /// 500s from the platform's edge, before or after executing.
    pub fail_500: u8,
    /// Lost upstream calls or replies.
    pub upstream_drops: u8,
    /// Control switches (429 on/off, 503 on/off, key rotation, fee change).
    pub controls: u8,
    /// Requests from the alphabet (adversarial or scripted senders).
    pub sends: u8,
    /// Merchant-server crashes.
    pub crashes: u8,
    /// Jumps of the clock by one of the configured waits (`WorldConfig::waits`).
    pub waits: u8,
}

impl Budget {
    /// No faults at all.
    pub const NONE: Budget = Budget::all(0);
    /// Practically unlimited (a seeded run's faults are limited by its profile's rates).
    pub const UNLIMITED: Budget = Budget::all(u8::MAX);

    const fn all(n: u8) -> Budget {
        Budget {
            drops: n,
            duplicates: n,
            fail_500: n,
            upstream_drops: n,
            controls: n,
            sends: n,
            crashes: n,
            waits: n,
        }
    }
}

/// A merchant node run by a client model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClientSpec {
    /// The node (`merchant-N`).
    pub node: u8,
    pub api_key: ApiKeyId,
    pub policy: Policy,
    /// The database it uses: nodes with the same `db` share one (several servers of one merchant).
    pub db: u8,
    /// Its readings of the contract's two contradictions on a round of 503s and of 429s.
    pub readings: Readings,
}

/// A client's readings where the contract contradicts itself: after a round of 503s
/// (A-S13-REFERENCE-CODE, `after_503`) and after a round of 429s (A-429-REFERENCE-CODE,
/// `after_429`). Both are explored: the presets and the sweep run each, a script picks one
/// (`use client after_503=result_unknown`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Readings {
    pub after_503: After503,
    pub after_429: After503,
}

impl Default for Readings {
    /// The reference client's: S13's not_accepted after 503s, the reference code's
    /// result_unknown after 429s.
    fn default() -> Self {
        let p = payhub_model::client::ClientParams::default();
        Readings {
            after_503: p.after_503,
            after_429: p.after_429,
        }
    }
}

impl Readings {
    /// Both contradictions read the other way from the reference client's.
    pub fn other() -> Readings {
        let flip = |a| match a {
            After503::NotAccepted => After503::ResultUnknown,
            After503::ResultUnknown => After503::NotAccepted,
        };
        let d = Readings::default();
        Readings {
            after_503: flip(d.after_503),
            after_429: flip(d.after_429),
        }
    }

    /// Whether these are the reference client's readings.
    pub fn is_default(&self) -> bool {
        *self == Readings::default()
    }

    /// `after_503=not_accepted after_429=result_unknown`.
    pub fn notation(self) -> String {
        format!(
            "after_503={} after_429={}",
            reading_name(self.after_503),
            reading_name(self.after_429)
        )
    }
}

/// A reading as scripts and the command line name it: `not_accepted`, `result_unknown`.
pub fn reading_name(reading: After503) -> &'static str {
    match reading {
        After503::NotAccepted => "not_accepted",
        After503::ResultUnknown => "result_unknown",
    }
}

/// The reading `name` names (`not_accepted`, `result_unknown`), if any.
pub fn reading_named(name: &str) -> Option<After503> {
    [After503::NotAccepted, After503::ResultUnknown]
        .into_iter()
        .find(|r| reading_name(*r) == name)
}

/// A business command the payer or the merchant may give a client node, at most `times` times.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkItem {
    pub node: u8,
    pub command: Command,
    pub times: u8,
}

/// The configuration of a world. Not part of the state: the drivers pass it alongside.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorldConfig {
    /// A name for reports (`create-lossy`, `script:S7`, …).
    pub name: String,
    pub params: PlatformParams,
    /// The platform that runs: the reference, or one with a planted bug (the bug zoo).
    #[serde(skip_serializing_if = "Variant::is_reference")]
    pub variant: Variant,
    /// API keys issued at the start.
    pub api_keys: Vec<ApiKeySpec>,
    /// Keys a control may issue later (rotation); used to attribute requests to scopes.
    pub spare_keys: Vec<ApiKeySpec>,
    /// Faults and sends allowed.
    pub budget: Budget,
    /// Requests senders may send at any time (adversarial presets), by merchant node.
    pub alphabet: Vec<(u8, std::sync::Arc<ApiRequest>)>,
    /// Controls the environment may switch.
    pub controls: Vec<Control>,
    /// Decisions the acquirer may take.
    pub decisions: Vec<AcquirerDecision>,
    /// Whether the payer may authenticate `requires_action` charges.
    pub payer: bool,
    /// Whether the clock may jump to the next deadline.
    pub tick: bool,
    /// Whether the clock waits until nothing is in flight before it jumps. A small-scope
    /// reduction for the checker: messages then arrive before any timer fires, and a late
    /// answer is modelled by loss or by a silent acquirer instead of by delay.
    pub time_waits_for_messages: bool,
    /// Waits the clock may make at any time (e.g. 7 days, to pass the key retention).
    pub waits: Vec<payhub_model::Millis>,
    /// Which merchant node receives the webhooks of a (merchant, environment).
    pub webhooks: Vec<(MerchantId, Environment, u8)>,
    /// Responses and webhooks to scripted merchants arrive at once instead of travelling
    /// (a scripted sender reacts to nothing, so their delivery order is noise for the
    /// checker). Scripts that lose responses keep them travelling.
    pub immediate_inbox: bool,
    /// Merchant nodes run by a client model; every other node is a scripted sender.
    pub clients: Vec<ClientSpec>,
    /// Business commands the clients may be given.
    pub workload: Vec<WorkItem>,
    /// Whether clients draw a retry jitter (below 250 ms); the checker keeps it 0.
    pub jitter: bool,
    /// A narrowing of the judge the zoo plants ([`crate::Narrowing`]); none elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub narrowing: Option<crate::Narrowing>,
}

impl Default for WorldConfig {
    fn default() -> Self {
        WorldConfig {
            name: "default".into(),
            params: PlatformParams::default(),
            variant: Variant::REFERENCE,
            api_keys: default_api_keys(),
            spare_keys: vec![rotated_key_spec()],
            budget: Budget::NONE,
            alphabet: Vec::new(),
            controls: Vec::new(),
            decisions: AcquirerDecision::ALL.to_vec(),
            payer: true,
            tick: true,
            time_waits_for_messages: false,
            waits: Vec::new(),
            immediate_inbox: false,
            clients: Vec::new(),
            workload: Vec::new(),
            jitter: false,
            narrowing: None,
            webhooks: vec![
                (MerchantId(1), Environment::Test, 0),
                (MerchantId(1), Environment::Live, 0),
                (MerchantId(2), Environment::Test, 1),
            ],
        }
    }
}

impl WorldConfig {
    /// The merchant node that receives webhooks for (merchant, environment).
    pub fn webhook_target(&self, merchant: MerchantId, environment: Environment) -> Option<u8> {
        self.webhooks
            .iter()
            .find(|(m, e, _)| *m == merchant && *e == environment)
            .map(|(_, _, node)| *node)
    }

    /// The client spec of a node, if a client model runs it.
    pub fn client(&self, node: u8) -> Option<&ClientSpec> {
        self.clients.iter().find(|c| c.node == node)
    }

    /// The merchant and environment an API key authenticates, if it is one of ours.
    pub fn key_owner(&self, key: ApiKeyId) -> Option<(MerchantId, Environment)> {
        self.api_keys
            .iter()
            .chain(&self.spare_keys)
            .find(|k| k.id == key)
            .map(|k| (k.merchant, k.environment))
    }
}
