//! The profile: what conform needs to know about a target (docs/conform.md).
//!
//! JSON, every key known (an unknown key is an error naming it): the base URL, the API
//! keys of its merchants and environments (each standing for one of the model's keys),
//! its test cards and the acquirer outcome each produces, how a case is isolated (order,
//! refund and key prefixes; a reset endpoint if it has one), how its clock moves (a
//! test-clock endpoint, else short horizons only), which of the contract's branches it
//! implements, and which answer fields are volatile (compared for presence only).

use payhub_model::observation::Dialect;
use payhub_model::{Branch, ErrorCode, Millis};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// A name for reports.
    pub name: String,
    /// `http://host:port`; `--target` overrides it.
    #[serde(default)]
    pub base_url: Option<String>,
    /// The target's API keys, each standing for one of the model's keys.
    pub api_keys: Vec<KeyEntry>,
    /// The target's test cards: what to send as `"card"` for each acquirer outcome.
    pub cards: Vec<CardEntry>,
    #[serde(default)]
    pub isolation: Isolation,
    #[serde(default)]
    pub clock: Clock,
    /// The contract's alternatives (S4, S5, S8, refund number) the target may take
    /// (`"S4:conflict"`, …); omitted: all of them.
    #[serde(default)]
    pub branches: Option<Vec<String>>,
    /// Answer fields compared for presence only (timestamps, opaque values): by name
    /// (`expires_at`) at any depth.
    #[serde(default)]
    pub volatile: Vec<String>,
    /// With `strict`: answer fields the target adds that the contract does not name,
    /// ignored; any other unexpected field is an error (exit 2). Without `strict` every
    /// field the contract does not name is accepted.
    #[serde(default)]
    pub extra_fields: Vec<String>,
    /// The target answers whole bodies in the model's own shape (the sandbox): every
    /// field the model answers must be there, and no field the contract does not name
    /// (but `extra_fields`). Default: each field the contract names is judged where the
    /// target wrote it, and other fields are accepted.
    #[serde(default)]
    pub strict: bool,
    /// The target's error codes that stand for one of the model's (`{"resource_not_found":
    /// "resource_missing"}`): each is then judged as that code. A code the contract does
    /// not name and this map does not list is judged by its status alone.
    #[serde(default)]
    pub error_codes: BTreeMap<String, String>,
    /// Fields the contract does not name that the target answers exactly as the model
    /// does (`amount_refunded`, `fee_rate_bps`, `list`; `version` by its number).
    #[serde(default)]
    pub model_fields: Vec<String>,
    /// The client's timeout per request (default 5 s): no answer within it is an
    /// unknown result.
    #[serde(default)]
    pub timeout: Option<String>,
    /// The target's test endpoints that switch the platform's own inputs: its rate
    /// limit (429 with `Retry-After`) and its paused channel (503
    /// `temporarily_unavailable`). Without one, no case switches it.
    #[serde(default)]
    pub controls: Controls,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Controls {
    /// Rate-limits one merchant (`{merchant}` in the path: the model merchant number).
    #[serde(default)]
    pub rate_limit: Option<Switch>,
    /// Pauses the payment channel (POSTed once per merchant of the profile, as reset:
    /// the contract's pause is the platform's, not one merchant's).
    #[serde(default)]
    pub pause: Option<Switch>,
}

/// A test endpoint POSTed with one body to switch an input on and another to switch it off.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    pub path: String,
    pub on: serde_json::Value,
    pub off: serde_json::Value,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// What the target takes after `Authorization: Bearer `.
    pub key: String,
    /// The model's key it stands for: `ak_1` merchant 1 test, `ak_2` merchant 1 live,
    /// `ak_3` merchant 2 test, `ak_4` merchant 1 test read-only.
    pub model: String,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Approve,
    Decline,
    RequireAction,
    Slow,
    Silent,
    Fail,
    /// Silent, and a cancel of its charge answered only after the synchronous wait
    /// (cancel 202).
    SlowCancel,
}

impl Outcome {
    /// The model's test card for this outcome (the sandbox's table, `serve --help`).
    pub fn model_card(self) -> char {
        match self {
            Outcome::Approve => 'A',
            Outcome::Decline => 'B',
            Outcome::RequireAction => 'C',
            Outcome::Slow => 'D',
            Outcome::Silent => 'E',
            Outcome::Fail => 'F',
            Outcome::SlowCancel => 'G',
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardEntry {
    /// What the target takes as `"card"`.
    pub card: String,
    pub outcome: Outcome,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Isolation {
    /// Prefix of every order and refund number and key conform makes (default `CF`);
    /// each case (and each re-run while shrinking) adds its own tag after it.
    #[serde(default)]
    pub prefix: Option<String>,
    /// `POST` this path before each case (`{merchant}`: the model merchant number,
    /// once per merchant of the profile), if the target has a reset endpoint.
    #[serde(default)]
    pub reset: Option<String>,
    /// The target numbers objects per merchant (each merchant a namespace of its own,
    /// as in the sandbox): an id is compared together with its merchant.
    #[serde(default)]
    pub ids_per_merchant: bool,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    /// `POST` this path with `{"by":"8d"}` to move the target's clock (`{merchant}` as
    /// for reset); without it cases stay within the horizon.
    #[serde(default)]
    pub advance: Option<String>,
    /// How far the oracle lets the target's own timers run within a case (default
    /// `2min`: the ~15 s synchronous wait, the 10 s concurrent wait, a few queries).
    #[serde(default)]
    pub horizon: Option<String>,
}

/// A loaded, checked profile.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub profile: Profile,
    /// The model key (`ApiKeyId` number) of each profile key, in order.
    pub model_keys: Vec<u32>,
    pub branches: Vec<Branch>,
    pub horizon: Millis,
    pub timeout: Millis,
}

pub const ALL_BRANCHES: [Branch; 10] = Branch::ALL;

impl Loaded {
    pub fn from_json(text: &str) -> Result<Loaded, String> {
        let profile: Profile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let model_keys = profile
            .api_keys
            .iter()
            .map(
                |k| match k.model.strip_prefix("ak_").map(str::parse::<u32>) {
                    Some(Ok(n)) if (1..=4).contains(&n) => Ok(n),
                    _ => Err(format!(
                        "api_keys: model key {:?} is not one of ak_1…ak_4",
                        k.model
                    )),
                },
            )
            .collect::<Result<Vec<_>, _>>()?;
        if !model_keys.contains(&1) {
            return Err("api_keys: no key stands for ak_1 (merchant 1, test)".into());
        }
        if !profile.cards.iter().any(|c| c.outcome == Outcome::Approve) {
            return Err("cards: no card with outcome approve".into());
        }
        let branches = match &profile.branches {
            None => ALL_BRANCHES.to_vec(),
            Some(names) => names
                .iter()
                .map(|n| {
                    ALL_BRANCHES
                        .iter()
                        .copied()
                        .find(|b| b.as_str() == n)
                        .ok_or_else(|| {
                            let all: Vec<&str> = ALL_BRANCHES.iter().map(|b| b.as_str()).collect();
                            format!("branches: unknown branch {n:?} (one of {})", all.join(", "))
                        })
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        let duration = |what: &str, v: &Option<String>, default: Millis| match v {
            None => Ok(default),
            Some(s) => payhub_sim::script::parse_duration(s)
                .ok_or_else(|| format!("{what}: {s:?} is not a duration (250ms, 2s, 2min, 8d)")),
        };
        for (theirs, model) in &profile.error_codes {
            if !ErrorCode::ALL.iter().any(|c| c.as_str() == model) {
                return Err(format!(
                    "error_codes: {theirs:?} maps to {model:?}, which is not one of the model's codes ({})",
                    ErrorCode::ALL
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        for f in &profile.model_fields {
            if !super::compare::KNOWN_FIELDS.contains(&f.as_str()) {
                return Err(format!(
                    "model_fields: {f:?} is not a field of the model's answers ({})",
                    super::compare::KNOWN_FIELDS.join(", ")
                ));
            }
        }
        let horizon = duration("clock.horizon", &profile.clock.horizon, Millis::mins(2))?;
        let timeout = duration("timeout", &profile.timeout, Millis::secs(5))?;
        Ok(Loaded {
            profile,
            model_keys,
            branches,
            horizon,
            timeout,
        })
    }

    /// The target's `"card"` for an outcome, if it has a card for it.
    pub fn card(&self, outcome: Outcome) -> Option<&str> {
        self.profile
            .cards
            .iter()
            .find(|c| c.outcome == outcome)
            .map(|c| c.card.as_str())
    }

    /// The outcomes the target has cards for.
    pub fn outcomes(&self) -> Vec<Outcome> {
        let mut v: Vec<Outcome> = self.profile.cards.iter().map(|c| c.outcome).collect();
        v.sort();
        v.dedup();
        v
    }

    /// The target's key standing for model key `ak_N`.
    pub fn target_key(&self, model: u32) -> Option<&str> {
        self.model_keys
            .iter()
            .position(|m| *m == model)
            .map(|i| self.profile.api_keys[i].key.as_str())
    }

    /// How the target speaks the contract, for the oracle.
    pub fn dialect(&self) -> Dialect {
        let p = &self.profile;
        Dialect {
            error_codes: p.error_codes.clone(),
            strict: p.strict,
            model_fields: p.model_fields.clone(),
            volatile: p.volatile.clone(),
            extra: p.extra_fields.clone(),
        }
    }

    pub fn prefix(&self) -> &str {
        self.profile.isolation.prefix.as_deref().unwrap_or("CF")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"name":"t","api_keys":[{"key":"k1","model":"ak_1"}],
        "cards":[{"card":"ok","outcome":"approve"}]}"#;

    #[test]
    fn a_minimal_profile_loads_with_its_defaults() {
        let p = Loaded::from_json(GOOD).unwrap();
        assert_eq!(p.branches.len(), Branch::ALL.len());
        assert_eq!(p.horizon, Millis::mins(2));
        assert_eq!(p.card(Outcome::Approve), Some("ok"));
        assert_eq!(p.target_key(1), Some("k1"));
        assert_eq!(p.prefix(), "CF");
    }

    #[test]
    fn the_shipped_profiles_load_and_the_manual_clock_ones_have_controls() {
        for (file, controls) in [
            ("sandbox.json", true),
            ("sandbox-shared.json", true),
            ("sandbox-real-clock.json", true),
        ] {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/profiles/");
            let text = std::fs::read_to_string(format!("{path}{file}")).unwrap();
            let p = Loaded::from_json(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            let c = &p.profile.controls;
            assert_eq!(
                c.rate_limit.is_some() && c.pause.is_some(),
                controls,
                "{file}"
            );
        }
        let e = Loaded::from_json(&GOOD.replace(
            "\"name\":\"t\"",
            "\"name\":\"t\",\"controls\":{\"rate_limit\":{\"path\":\"/x\",\"on\":1}}",
        ))
        .unwrap_err();
        assert!(e.contains("off"), "{e}");
    }

    #[test]
    fn unknown_keys_and_values_are_named() {
        let e = Loaded::from_json(&GOOD.replace("\"name\"", "\"nmae\"")).unwrap_err();
        assert!(e.contains("nmae"), "{e}");
        let e = Loaded::from_json(&GOOD.replace("ak_1", "ak_9")).unwrap_err();
        assert!(e.contains("ak_9"), "{e}");
        let e = Loaded::from_json(&GOOD.replace(
            "\"name\":\"t\"",
            "\"name\":\"t\",\"branches\":[\"S4:maybe\"]",
        ))
        .unwrap_err();
        assert!(e.contains("S4:maybe"), "{e}");
    }
}
