//! `check-log --profile FILE`: a platform's own dialect, read from the profile `conform`
//! takes (docs/conform.md), so one file describes the platform to both: which merchant
//! and environment each API key stands for (rotated keys included), the error codes it
//! uses for the contract's, and its test cards under `card_field`, each read as the
//! model's card of the same acquirer outcome. A card value the profile does not list is
//! never kept (CARD-02): only the test card a listed value stands for is.

use crate::conform::profile::Loaded;
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::observation::Dialect;
use payhub_model::{Card, Environment, MerchantId, cards};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// What `check-log` reads of a profile.
#[derive(Clone, Debug, Default)]
pub struct LogProfile {
    pub dialect: Dialect,
    pub cards: CardReading,
    /// Each of the platform's keys with the owner of the model key it stands for.
    pub keys: Vec<(String, (MerchantId, Environment))>,
}

/// How a request body names its test card.
#[derive(Clone, Debug, Default)]
pub struct CardReading {
    /// The platform's field for the card (`payment_method`); `card` by default.
    field: Option<String>,
    /// The platform's test card values, each as the model's card of its outcome.
    values: BTreeMap<String, Card>,
}

impl CardReading {
    /// The test card a create or confirm body carries: a value the profile lists under
    /// its field, or a label of the model's table under `card`; anything else (a card
    /// number) is not kept.
    pub fn read(&self, m: &Map<String, Value>) -> Option<Card> {
        let field = self.field.as_deref().unwrap_or("card");
        let value = m.get(field)?;
        if let Some(card) = self.values.get(&card_key(value)) {
            return Some(*card);
        }
        (field == "card")
            .then(|| cards::test_card(value.as_str()?).map(|t| Card(t.label)))
            .flatten()
    }

    /// The body field the card is read from.
    pub fn field(&self) -> &str {
        self.field.as_deref().unwrap_or("card")
    }

    /// `m` with a card value it does not list (a card number) replaced by
    /// `"[redacted]"`, so that a recording never holds card data (CARD-02): a test card
    /// stays, read back as itself.
    pub fn redact(&self, m: &mut Map<String, Value>) {
        let field = self.field.as_deref().unwrap_or("card");
        if m.contains_key(field) && self.read(m).is_none() {
            m.insert(field.to_owned(), Value::from("[redacted]"));
        }
    }
}

/// A card value as the profile's table keys it: a string as itself, any other JSON
/// value (a card object) as its compact text, its object keys in order.
fn card_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads `path` as a profile; an error names the field (exit 2).
pub fn load(path: &Path) -> Result<LogProfile, String> {
    let text = crate::input::read_text(path)?;
    let loaded = Loaded::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    of_loaded(&loaded).map_err(|e| format!("{}: {e}", path.display()))
}

/// What `check-log` reads of a profile conform has loaded; an error names the field.
pub fn of_loaded(loaded: &Loaded) -> Result<LogProfile, String> {
    let owners: Vec<_> = default_api_keys()
        .into_iter()
        .chain([rotated_key_spec()])
        .map(|k| (k.id.0, (k.merchant, k.environment)))
        .collect();
    let mut keys = Vec::new();
    for (model, entry) in loaded.model_keys.iter().zip(&loaded.profile.api_keys) {
        let owner = owners.iter().find(|(id, _)| id == model).map(|(_, o)| *o);
        let owner = owner.ok_or_else(|| {
            format!(
                "api_keys: {:?} stands for ak_{model}, which is not a key of the model",
                entry.key
            )
        })?;
        keys.push((entry.key.clone(), owner));
    }
    let values = loaded
        .profile
        .cards
        .iter()
        .filter_map(|c| Some((card_key(&c.card), Card(c.outcome.model_card()?))))
        .collect();
    Ok(LogProfile {
        dialect: loaded.dialect(),
        cards: CardReading {
            field: loaded.profile.card_field.clone(),
            values,
        },
        keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    /// The Python platform's profile: its keys are merchant 1's and 2's, its slow silent
    /// card is the model's G, and a value it does not list is not kept.
    #[test]
    fn a_profile_names_keys_codes_and_cards() {
        let p = load(Path::new("docs/profiles/pyplat.json")).unwrap();
        let owner = |k: &str| p.keys.iter().find(|(key, _)| key == k).map(|(_, o)| *o);
        assert_eq!(
            owner("sk_test_m1_2"),
            Some((MerchantId(1), Environment::Test))
        );
        assert_eq!(
            owner("sk_live_m1_1"),
            Some((MerchantId(1), Environment::Live))
        );
        assert_eq!(
            owner("sk_test_m2_1"),
            Some((MerchantId(2), Environment::Test))
        );
        assert_eq!(
            p.dialect
                .error_codes
                .get("attempt_limit_reached")
                .map(String::as_str),
            Some("attempts_exhausted")
        );
        let card = |j: &str| p.cards.read(&body(j));
        assert_eq!(card(r#"{"payment_method":"tok_silent"}"#), Some(Card('G')));
        assert_eq!(card(r#"{"payment_method":"tok_decline"}"#), Some(Card('B')));
        assert_eq!(card(r#"{"payment_method":"4242424242424242"}"#), None);
        assert_eq!(card(r#"{"card":"A"}"#), None);
        let sandbox = CardReading::default();
        assert_eq!(sandbox.read(&body(r#"{"card":"D"}"#)), Some(Card('D')));
        assert_eq!(sandbox.read(&body(r#"{"card":"4242424242424242"}"#)), None);
    }

    #[test]
    fn a_profile_of_the_wrong_shape_is_an_error_naming_the_field() {
        let dir = std::env::temp_dir().join(format!("pv-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.json");
        std::fs::write(&path, r#"{"name":"x","api_keys":"nope"}"#).unwrap();
        let e = load(&path).unwrap_err();
        assert!(e.contains("api_keys"), "{e}");
        std::fs::write(&path, r#"{"name":"x","api_keys":[{"key":"k","model":"ak_1"}],"cards":[{"card":"c","outcome":"teleport"}]}"#).unwrap();
        let e = load(&path).unwrap_err();
        assert!(e.contains("cards") && e.contains("teleport"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
