//! API keys to merchants and environments (SCOPE-01): the scope of a request starts with
//! its key's owner. Keys of the sandbox's form (`ak_1` …) resolve to the sandbox's
//! merchants; any other key needs `--api-key-map FILE`:
//!
//! ```json
//! {"sk_live_4eC39": {"merchant": 1, "environment": "live"},
//!  "*":             {"merchant": 1, "environment": "test"}}
//! ```
//!
//! `"*"` names the owner of entries that carry no `Authorization` header (a sanitized
//! export). Key strings are credentials: they stay in memory, interned as numbers, and
//! are never printed.

use payhub_model::harness::{default_api_keys, rotated_key_spec};
use payhub_model::{ApiKeyId, Environment, MerchantId};
use payhub_sim::facts::wire::WireFacts;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The id entries without a key take when the map names their owner with `"*"`.
const ANONYMOUS: ApiKeyId = ApiKeyId(u32::MAX);
/// Interned keys are numbered from here (the harness's own are small).
const INTERNED_FROM: u32 = 1_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnerJson {
    merchant: u32,
    environment: Environment,
}

/// The key table of one run.
#[derive(Default)]
pub struct Keys {
    map: BTreeMap<String, (MerchantId, Environment)>,
    anonymous: Option<(MerchantId, Environment)>,
    interned: BTreeMap<String, ApiKeyId>,
    /// Requests with no `Authorization` header and no `"*"`.
    pub headerless: u64,
    /// Distinct keys that resolve to no owner.
    pub unknown: u64,
}

impl Keys {
    /// The sandbox's keys, and those of `map` if given.
    pub fn load(map: Option<&Path>) -> Result<Keys, String> {
        let mut keys = Keys::default();
        for k in default_api_keys().into_iter().chain([rotated_key_spec()]) {
            keys.map
                .insert(k.id.to_string(), (k.merchant, k.environment));
        }
        let Some(path) = map else { return Ok(keys) };
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let table: BTreeMap<String, OwnerJson> = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}: not an API key map ({{\"KEY\": {{\"merchant\": 1, \"environment\": \"test\"}}}}): {e}",
                path.display(),
                e.line()
            )
        })?;
        for (key, o) in table {
            let owner = (MerchantId(o.merchant), o.environment);
            if key == "*" {
                keys.anonymous = Some(owner);
            } else {
                keys.map.insert(key, owner);
            }
        }
        Ok(keys)
    }

    /// Wire facts that know the anonymous owner.
    pub fn wire_facts(&self) -> WireFacts {
        WireFacts::new(self.anonymous.map(|o| (ANONYMOUS, o)))
    }

    /// The id of `key` for the model, its owner taught to `wire` the first time.
    pub fn resolve(&mut self, key: Option<&str>, wire: &mut WireFacts) -> ApiKeyId {
        let Some(key) = key else {
            if self.anonymous.is_none() {
                self.headerless += 1;
            }
            return ANONYMOUS;
        };
        if let Some(id) = self.interned.get(key) {
            return *id;
        }
        let id = ApiKeyId(INTERNED_FROM.saturating_add(self.interned.len() as u32));
        match self.map.get(key) {
            Some(owner) => wire.own(id, *owner),
            None => self.unknown += 1,
        }
        self.interned.insert(key.to_owned(), id);
        id
    }

    /// Why the scopes are not all known, if they are not.
    pub fn unknown_reason(&self, requests: u64) -> Option<String> {
        match (self.headerless, self.unknown) {
            (0, 0) => None,
            (n, 0) => Some(format!(
                "{n} of {requests} requests carry no Authorization header (a sanitized export): their merchant is unknown; --api-key-map with \"*\" names it"
            )),
            (_, k) => Some(format!(
                "{k} API key(s) unknown: --api-key-map FILE names their merchant and environment"
            )),
        }
    }
}
