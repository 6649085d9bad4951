//! The world a sandbox session runs: its keys, its nodes and what the page calls them.

use crate::serve::faults::Plan;
use payhub_model::harness::{default_api_keys, rotated_key_spec};
use payhub_model::{ApiKeyId, PlatformParams};
use payhub_sim::network::Node;
use payhub_sim::{Budget, WorldConfig};

/// The world of a sandbox: the default API keys and the rotated pair, no client models
/// (every node is a scripted sender: the merchant's own integration is the client),
/// every fault affordable, no webhooks, responses travelling so that one can be lost.
pub fn world_config(plan: &Plan, webhooks: bool) -> WorldConfig {
    let mut params = PlatformParams::default();
    if let Some(s) = plan.retry_after_s {
        params.retry_after_s = s;
    }
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
        ..WorldConfig::default().judged_by(&payhub_properties::JUDGING)
    }
}

/// The node that sends a key's requests: `merchant-N` for `ak_N` (N ≤ 5), node 0 for
/// any other key.
pub fn node_of(key: ApiKeyId) -> u8 {
    if (1..=5).contains(&key.0) {
        key.0 as u8
    } else {
        0
    }
}

/// What the session's text and drawings call each key's sender: its merchant and key
/// (`merchant 2 (ak_3)`), as the sandbox's `?merchant=` names the merchant; the node
/// numbers (`merchant-3` is `ak_3`'s sender) stay in events, tapes and scripts.
pub fn node_names() -> Vec<(Node, String)> {
    default_api_keys()
        .into_iter()
        .chain([rotated_key_spec()])
        .map(|k| {
            let name = format!("merchant {} ({})", k.merchant.0, k.id);
            (Node::Merchant(node_of(k.id)), name)
        })
        .collect()
}
