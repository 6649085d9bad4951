//! API keys to merchants and environments (SCOPE-01: a scope starts with its key's owner).
//! Without `--api-key-map`, printed as assumptions: one key is one merchant; several keys no
//! map names are a merchant each; keys of the sandbox's form (`ak_1` …) are its merchants.
//! `--api-key-map FILE` overrides them all (`{"sk_live_4eC39": {"merchant": 1,
//! "environment": "live"}, "*": …}`; `"*"` owns entries with no `Authorization`). Key
//! strings are credentials: kept in memory as numbers, never printed.

use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::{ApiKeyId, Environment, MerchantId};
use payhub_properties::facts::wire::WireFacts;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The id entries without a key take when the map names their owner with `"*"`.
const ANONYMOUS: ApiKeyId = ApiKeyId(u32::MAX);
/// Interned keys are numbered from here (the harness's own are small).
const INTERNED_FROM: u32 = 1_000_000;
/// The merchants assumed for keys no map names are numbered from here.
const ASSUMED_FROM: u32 = 1_000_000;
/// The merchant assumed for entries with no key and no `"*"`.
const ASSUMED_HEADERLESS: u32 = u32::MAX;

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
    /// The keys the user's map names (the others in `map` are the sandbox's).
    named: std::collections::BTreeSet<String>,
    /// Distinct keys resolved as the sandbox's, no map naming them.
    pub sandbox: u64,
    anonymous: Option<(MerchantId, Environment)>,
    interned: BTreeMap<String, (ApiKeyId, (MerchantId, Environment))>,
    /// Requests with no `Authorization` header and no `"*"`.
    pub headerless: u64,
    /// Distinct keys no map names (each assumed a merchant of its own).
    pub unknown: u64,
}

impl Keys {
    /// The sandbox's keys, then those a profile names (`named`), then those of `map` if
    /// given (it overrides).
    pub fn load(
        map: Option<&Path>,
        named: &[(String, (MerchantId, Environment))],
    ) -> Result<Keys, String> {
        let mut keys = Keys::default();
        for k in default_api_keys().into_iter().chain([rotated_key_spec()]) {
            keys.map
                .insert(k.id.to_string(), (k.merchant, k.environment));
        }
        for (key, owner) in named {
            keys.named.insert(key.clone());
            keys.map.insert(key.clone(), *owner);
        }
        let Some(path) = map else { return Ok(keys) };
        let text = crate::input::read_text(path)?;
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
                keys.named.insert(key.clone());
                keys.map.insert(key, owner);
            }
        }
        Ok(keys)
    }

    /// Wire facts that know the anonymous owner.
    pub fn wire_facts(&self) -> WireFacts {
        WireFacts::new(self.anonymous.map(|o| (ANONYMOUS, o)))
            .keeping(payhub_properties::wire::RECORDS_KEPT)
    }

    /// The id of `key` and its owner. A key no map names is assumed a merchant of its
    /// own, and entries with no key (and no `"*"`) one more: each is judged as one scope
    /// of its own, and the assumption is printed ([`Keys::assumptions`]), never a lack
    /// that would withdraw a verdict. Keys are numbered, and unknown keys assumed
    /// merchants, in the order of the log: the same in every run over the same file,
    /// whatever its partitions.
    pub fn resolve_owner(&mut self, key: Option<&str>) -> (ApiKeyId, (MerchantId, Environment)) {
        let Some(key) = key else {
            let owner = self.anonymous.unwrap_or_else(|| {
                self.headerless += 1;
                (MerchantId(ASSUMED_HEADERLESS), Environment::Test)
            });
            return (ANONYMOUS, owner);
        };
        if let Some(&(id, owner)) = self.interned.get(key) {
            return (id, owner);
        }
        let id = ApiKeyId(INTERNED_FROM.saturating_add(self.interned.len() as u32));
        let owner = match self.map.get(key) {
            Some(owner) => {
                if !self.named.contains(key) {
                    self.sandbox += 1;
                }
                *owner
            }
            None => {
                let merchant = MerchantId(ASSUMED_FROM.saturating_add(self.unknown as u32));
                self.unknown += 1;
                (merchant, Environment::Test)
            }
        };
        self.interned.insert(key.to_owned(), (id, owner));
        (id, owner)
    }

    /// What was assumed of the keys, one sentence each.
    pub fn assumptions(&self) -> Vec<String> {
        let mut said = Vec::new();
        match self.unknown {
            0 => {}
            1 => said.push(
                "1 API key no --api-key-map names: judged as one merchant and environment (one scope); --api-key-map names its owner".to_owned(),
            ),
            n => said.push(format!(
                "{n} API keys no --api-key-map names: each judged as a merchant of its own (one scope per key); two keys of one merchant (a rotation, SCOPE-03) would share its order numbers and idempotency keys, which this does not judge: --api-key-map names their owners"
            )),
        }
        if self.sandbox > 0 {
            said.push(format!(
                "{} API key(s) of the sandbox's form (ak_N) judged as the sandbox's merchants; --api-key-map overrides",
                self.sandbox
            ));
        }
        if self.headerless > 0 {
            said.push(format!(
                "{} request(s) carry no Authorization header (a sanitized export): judged as one merchant of their own; --api-key-map with \"*\" names it",
                self.headerless
            ));
        }
        said
    }
}
