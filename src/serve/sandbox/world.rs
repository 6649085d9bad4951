//! The world a sandbox session runs: its keys, its nodes and what the page calls them.

use crate::serve::faults::Plan;
use payhub_model::PlatformParams;
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_sim::WorldConfig;
use payhub_sim::network::Node;
use payhub_sim::worlds::{self, node_of};

/// The world of a sandbox: the live edge's world ([`worlds::edge`]) with the plan's
/// `Retry-After`, judged by the harness's properties.
pub fn world_config(plan: &Plan, webhooks: bool) -> WorldConfig {
    let mut params = PlatformParams::default();
    if let Some(s) = plan.retry_after_s {
        params.retry_after_s = Some(s);
    }
    worlds::edge(params, webhooks)
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
