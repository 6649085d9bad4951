//! The profile: what conform needs to know about a target, as JSON whose every key is
//! known (an unknown key is an error naming it); docs/conform.md, "The profile".
//! A control of the target is a template: method, path and body with `{seconds}`, `{ms}`,
//! `{merchant}` and `{on}` filled in when it is sent.

use payhub_model::observation::Dialect;
use payhub_model::{Branch, ErrorCode, Millis};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// A name for reports.
    pub name: String,
    /// `http://host:port`; `--target` overrides it.
    pub base_url: Option<String>,
    /// The target's API keys, each standing for one of the model's keys.
    pub api_keys: Vec<KeyEntry>,
    /// The target's test cards: what to send as `"card"` for each acquirer outcome.
    pub cards: Vec<CardEntry>,
    #[serde(default)]
    pub isolation: Isolation,
    #[serde(default)]
    pub clock: Clock,
    /// The contract's alternatives (S4, S5, S8, refund number) it may take; omitted: all.
    pub branches: Option<Vec<String>>,
    /// Answer fields compared for presence only, by name at any depth.
    #[serde(default)]
    pub volatile: Vec<String>,
    /// With `strict`: fields the target adds that the contract does not name, ignored
    /// (any other is exit 2).
    #[serde(default)]
    pub extra_fields: Vec<String>,
    /// Whole bodies in the model's own shape (the sandbox); default: each field the
    /// contract names judged where the target wrote it.
    #[serde(default)]
    pub strict: bool,
    /// The target's error codes that stand for one of the model's; a code neither the
    /// contract nor this map names is judged by its status alone.
    #[serde(default)]
    pub error_codes: BTreeMap<String, String>,
    /// Fields the target answers exactly as the model does (`version` by its number).
    #[serde(default)]
    pub model_fields: Vec<String>,
    /// The timeout per request (default 5 s): no answer within it is an unknown result.
    pub timeout: Option<String>,
    /// The name of the request field that carries the test card (default `card`).
    pub card_field: Option<String>,
    /// The target's own timings where the contract is silent (A-EXPIRES-AT, …), which
    /// the model takes.
    #[serde(default)]
    pub timings: Timings,
    /// Registry properties whose violations are not counted, each with its reason.
    #[serde(default)]
    pub suppress: Vec<Suppress>,
    /// Silent points pinned to one reading: any other reading there is a violation.
    #[serde(default)]
    pub readings: BTreeMap<String, String>,
    /// Headers sent with every request to the target's test endpoints (a token).
    #[serde(default)]
    pub control_headers: BTreeMap<String, String>,
    /// The test endpoints that switch the target's rate limit (429) and pause (503);
    /// without one, no case switches it.
    #[serde(default)]
    pub controls: Controls,
}

/// The target's own lengths where the contract gives none (durations: `1h`, `30min`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Timings {
    /// How long after creation a Payment expires (A-EXPIRES-AT; the model's: 24 h).
    pub payment_ttl: Option<String>,
    /// How long a checkout session lives (A-SESSION-TTL; the model's: 30 min).
    pub session_ttl: Option<String>,
    /// How often an unknown result is verified upstream (A-VERIFY-INTERVAL; 1 min).
    pub verify_interval: Option<String>,
    /// How long until an unknown result goes to manual review (A-AUTO-WINDOW; 1 h).
    pub auto_query_window: Option<String>,
}

/// A registry property the profile does not hold the target to, and why.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suppress {
    pub property: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Controls {
    /// Rate-limits one merchant (`{merchant}` in the path: the model merchant number).
    pub rate_limit: Option<Switch>,
    /// Pauses the payment channel (sent once per merchant: the pause is the platform's).
    pub pause: Option<Switch>,
}

/// A test endpoint that switches an input: `on` and `off` bodies, or one `body` with `{on}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    pub method: Option<String>,
    pub path: String,
    pub on: Option<Value>,
    pub off: Option<Value>,
    pub body: Option<Value>,
}

impl Switch {
    /// The request that switches it `on` or off.
    pub fn template(&self, on: bool) -> Template {
        let body = match (&self.body, on) {
            (Some(b), _) => Some(b.clone()),
            (None, true) => self.on.clone(),
            (None, false) => self.off.clone(),
        };
        Template {
            method: self.method.clone(),
            path: self.path.clone(),
            body,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// What the target takes after `Authorization: Bearer `.
    pub key: String,
    /// The model's key it stands for (`ak_1`…`ak_4`); several keys for one: rotation.
    pub model: String,
    /// The target's name of the key's merchant (`{merchant}`); default its number.
    pub merchant: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardOutcome {
    Approve,
    Decline,
    /// requires_action (3-D Secure); a cancel of it is confirmed by the acquirer.
    #[serde(alias = "requires_action_cancel_confirmed")]
    RequireAction,
    /// Approved after the synchronous wait (202, then succeeded).
    #[serde(alias = "approve_slow")]
    Slow,
    Silent,
    /// The acquirer's 5xx before charging.
    #[serde(alias = "upstream_error")]
    Fail,
    /// Silent, and a cancel of its charge answered only after the synchronous wait
    /// (cancel 202).
    SlowCancel,
    /// requires_action whose cancel the acquirer does not confirm in time (S12: 202).
    RequiresActionCancelUnconfirmed,
    /// Declined after the synchronous wait; the model has no card for it: never generated.
    DeclineSlow,
}

impl CardOutcome {
    /// The model's test card for this outcome, if it has one.
    pub fn model_card(self) -> Option<char> {
        use CardOutcome::*;
        Some(match self {
            Approve => 'A',
            Decline => 'B',
            // RequiresActionCancelUnconfirmed: for a target that is not strict the oracle
            // places the acquirer's word on a cancel before or after the synchronous wait (S12).
            RequireAction | RequiresActionCancelUnconfirmed => 'C',
            Slow => 'D',
            Silent => 'E',
            Fail => 'F',
            SlowCancel => 'G',
            DeclineSlow => return None,
        })
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardEntry {
    /// What the target takes as its card (under `card_field`): any JSON value.
    pub card: Value,
    pub outcome: CardOutcome,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Isolation {
    /// Prefix of every name conform makes (default `CF`), before each run's own tag.
    pub prefix: Option<String>,
    /// `POST` this path before each case (once per `{merchant}`), if there is one.
    pub reset: Option<String>,
    /// The target numbers objects per merchant: an id is read with its merchant.
    pub ids_per_merchant: bool,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Clock {
    /// The request that moves the target's clock; without it cases stay within the horizon.
    pub advance: Option<Template>,
    /// Where the target shows its clock: each move is checked to have moved it.
    pub read: Option<ClockRead>,
    /// How far the oracle lets the target's timers run within a case (default `2min`).
    pub horizon: Option<String>,
}

/// `GET path` answers the target's time in `field`: seconds, ms (`unit`) or ISO 8601.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockRead {
    pub path: String,
    pub field: String,
    pub unit: Option<String>,
}

/// A loaded, checked profile.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub profile: Profile,
    /// The model's parameters with the profile's `timings`.
    pub params: payhub_model::PlatformParams,
    /// The model key (`ApiKeyId` number) of each profile key, in order.
    pub model_keys: Vec<u32>,
    pub branches: Vec<Branch>,
    pub horizon: Millis,
    pub timeout: Millis,
    /// The readings `readings` pins.
    pub pins: super::readings::Pins,
}

/// The model merchant of model key `ak_N`: 2 for ak_3, 1 for ak_1, ak_2 and ak_4.
pub fn merchant_of(key: u32) -> u32 {
    if key == 3 { 2 } else { 1 }
}

/// An error naming the first placeholder of `templates` that is not one of a template's.
fn placeholders(name: &str, templates: &[Template]) -> Result<(), String> {
    match templates.iter().find_map(Template::unknown_placeholder) {
        Some(p) => Err(format!(
            "{name}: unknown placeholder {p} (one of {{seconds}}, {{ms}}, {{merchant}}, {{on}})"
        )),
        None => Ok(()),
    }
}

impl Loaded {
    pub fn from_json(text: &str) -> Result<Loaded, String> {
        // The error names the field (`controls.pause.method: invalid type …`).
        let de = &mut serde_json::Deserializer::from_str(text);
        let profile: Profile = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            if path == "." {
                e.inner().to_string()
            } else {
                format!("{path}: {}", e.inner())
            }
        })?;
        let model_key = |k: &KeyEntry| {
            let n = k.model.strip_prefix("ak_").and_then(|n| n.parse().ok());
            n.filter(|n| (1..=4).contains(n))
                .ok_or_else(|| format!("api_keys: model key {:?} is not one of ak_1…ak_4", k.model))
        };
        let model_keys: Vec<u32> = (profile.api_keys.iter())
            .map(model_key)
            .collect::<Result<_, _>>()?;
        if !model_keys.contains(&1) {
            return Err("api_keys: no key stands for ak_1 (merchant 1, test)".into());
        }
        if !(profile.cards.iter()).any(|c| c.outcome == CardOutcome::Approve) {
            return Err("cards: no card with outcome approve".into());
        }
        let branch = |n: &String| {
            let all: Vec<&str> = Branch::ALL.iter().map(|b| b.as_str()).collect();
            let known = format!("branches: unknown branch {n:?} (one of {})", all.join(", "));
            Branch::from_name(n).ok_or(known)
        };
        let branches = match &profile.branches {
            None => Branch::ALL.to_vec(),
            Some(names) => names.iter().map(branch).collect::<Result<Vec<_>, _>>()?,
        };
        let duration = |what: &str, v: &Option<String>, default: Millis| match v {
            None => Ok(default),
            Some(s) => payhub_sim::script::parse_duration(s)
                .ok_or_else(|| format!("{what}: {s:?} is not a duration (250ms, 2s, 2min, 8d)")),
        };
        let c = &profile.controls;
        for (name, sw) in [
            ("controls.rate_limit", &c.rate_limit),
            ("controls.pause", &c.pause),
        ] {
            let Some(sw) = sw else { continue };
            if sw.body.is_none() && (sw.on.is_none() || sw.off.is_none()) {
                return Err(format!(
                    "{name}: needs \"on\" and \"off\" bodies, or one \"body\" with {{on}}"
                ));
            }
            placeholders(name, &[sw.template(true), sw.template(false)])?;
        }
        placeholders("clock.advance", profile.clock.advance.as_slice())?;
        if let Some(r) = &profile.clock.read
            && !matches!(r.unit.as_deref(), None | Some("s" | "ms"))
        {
            return Err(format!(
                "clock.read.unit: {:?} is not \"s\" or \"ms\"",
                r.unit
            ));
        }
        let pins = super::readings::parse_pins(&profile.readings)?;
        for s in &profile.suppress {
            if s.property == super::page::PROPERTY {
                return Err(format!(
                    "suppress: {} is the oracle's judgement of every rule at once; pin the reading the target takes (`readings`) instead",
                    s.property
                ));
            }
            if !(payhub_properties::PROPERTIES.iter()).any(|p| p.name == s.property) {
                return Err(format!(
                    "suppress: {:?} is not a property of the registry",
                    s.property
                ));
            }
            if s.reason.trim().is_empty() {
                return Err(format!("suppress: {} has no reason", s.property));
            }
        }
        let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        for (theirs, model) in &profile.error_codes {
            if !codes.contains(&model.as_str()) {
                return Err(format!(
                    "error_codes: {theirs:?} maps to {model:?}, which is not one of the model's codes ({})",
                    codes.join(", ")
                ));
            }
        }
        for f in &profile.model_fields {
            if !super::compare::known_field(f) {
                let named = payhub_model::observation::NAMED_FIELDS;
                return Err(format!(
                    "model_fields: {f:?} is not a field of the model's answers ({}, {})",
                    named.join(", "),
                    super::compare::MODEL_ONLY_FIELDS.join(", ")
                ));
            }
        }
        let mut params = payhub_model::PlatformParams::default();
        let t = &profile.timings;
        let p = &mut params;
        p.payment_ttl = duration("timings.payment_ttl", &t.payment_ttl, p.payment_ttl)?;
        p.session_ttl = duration("timings.session_ttl", &t.session_ttl, p.session_ttl)?;
        let (name, v) = ("timings.verify_interval", &t.verify_interval);
        p.verify_interval = duration(name, v, p.verify_interval)?;
        let (name, v) = ("timings.auto_query_window", &t.auto_query_window);
        p.auto_query_window = duration(name, v, p.auto_query_window)?;
        let horizon = duration("clock.horizon", &profile.clock.horizon, Millis::mins(2))?;
        let timeout = duration("timeout", &profile.timeout, Millis::secs(5))?;
        Ok(Loaded {
            params,
            profile,
            model_keys,
            branches,
            horizon,
            timeout,
            pins,
        })
    }

    /// The target's `"card"` for an outcome, if it has a card for it.
    pub fn card(&self, outcome: CardOutcome) -> Option<&Value> {
        let mut cards = self.profile.cards.iter();
        cards.find(|c| c.outcome == outcome).map(|c| &c.card)
    }

    /// The outcomes the target has cards for and the model can drive.
    pub fn outcomes(&self) -> Vec<CardOutcome> {
        let cards = self.profile.cards.iter().map(|c| c.outcome);
        let v: std::collections::BTreeSet<CardOutcome> =
            cards.filter(|o| o.model_card().is_some()).collect();
        v.into_iter().collect()
    }

    /// Each of the profile's keys with the model key (`ak_N`) it stands for.
    fn keys(&self) -> impl Iterator<Item = (u32, &KeyEntry)> {
        self.model_keys.iter().copied().zip(&self.profile.api_keys)
    }

    /// The target's name of model merchant `n` (`{merchant}`).
    pub fn merchant_name(&self, n: u32) -> String {
        let mut keys = self.keys().filter(|(k, _)| merchant_of(*k) == n);
        keys.find_map(|(_, e)| e.merchant.clone())
            .unwrap_or_else(|| n.to_string())
    }

    /// The target's keys standing for model key `ak_N`, in the profile's order (more than
    /// one: rotation).
    pub fn target_keys(&self, model: u32) -> Vec<&str> {
        let keys = self.keys().filter(|(m, _)| *m == model);
        keys.map(|(_, e)| e.key.as_str()).collect()
    }

    /// A request body as the target takes it: the card under the profile's `card_field`.
    pub fn target_body(&self, body: Option<&str>) -> Option<String> {
        let body = body?;
        let Some(field) = self.profile.card_field.as_deref().filter(|f| *f != "card") else {
            return Some(body.to_owned());
        };
        match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(mut m)) => {
                if let Some(card) = m.remove("card") {
                    m.insert(field.to_owned(), card);
                }
                Some(Value::Object(m).to_string())
            }
            _ => Some(body.to_owned()),
        }
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

    /// The namespace of a request sent with model key `ak_N`: its merchant when ids are
    /// per merchant (ak_3 is merchant 2), else one for all.
    pub fn namespace(&self, key_of: u32) -> u32 {
        let per_merchant = self.profile.isolation.ids_per_merchant;
        if per_merchant { merchant_of(key_of) } else { 0 }
    }

    pub fn prefix(&self) -> &str {
        self.profile.isolation.prefix.as_deref().unwrap_or("CF")
    }
}

/// A request to one of the target's test endpoints: `method` (default POST), `path` and
/// `body`, where `{seconds}`, `{ms}`, `{merchant}` and `{on}` are filled in (a string
/// that is one placeholder alone becomes its JSON value: `{"seconds":"{seconds}"}` sends
/// `{"seconds":90}`). A plain string is a path POSTed with `{"by":"{ms}ms"}` (the
/// sandbox's clock).
#[derive(Clone, Debug, Deserialize)]
#[serde(from = "TemplateForm")]
pub struct Template {
    pub method: Option<String>,
    pub path: String,
    pub body: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum TemplateForm {
    Path(String),
    Full {
        method: Option<String>,
        path: String,
        body: Option<Value>,
    },
}

impl From<TemplateForm> for Template {
    fn from(f: TemplateForm) -> Template {
        match f {
            TemplateForm::Path(path) => Template {
                method: None,
                path,
                body: Some(serde_json::json!({"by": "{ms}ms"})),
            },
            TemplateForm::Full { method, path, body } => Template { method, path, body },
        }
    }
}

/// What fills a template's placeholders: each of [`PLACEHOLDERS`] it names, with its value.
pub type Fill = BTreeMap<&'static str, Value>;

/// The placeholders a template may hold.
pub const PLACEHOLDERS: [&str; 4] = ["seconds", "ms", "merchant", "on"];

/// `s` with each placeholder `fill` names replaced by its value.
fn text(fill: &Fill, s: &str) -> String {
    let mut out = s.to_owned();
    for (p, v) in fill {
        let v = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out = out.replace(&format!("{{{p}}}"), &v);
    }
    out
}

/// `v` with `fill`'s values: a string that is one placeholder alone becomes its value.
fn json(fill: &Fill, v: &Value) -> Value {
    match v {
        Value::String(s) => {
            let whole = s.strip_prefix('{').and_then(|r| r.strip_suffix('}'));
            let whole = whole.and_then(|name| fill.get(name)).cloned();
            whole.unwrap_or_else(|| Value::String(text(fill, s)))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| json(fill, x)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (text(fill, k), json(fill, x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Template {
    /// Method, path and body with `fill`'s values.
    pub fn render(&self, fill: &Fill) -> (String, String, Option<String>) {
        (
            self.method.clone().unwrap_or_else(|| "POST".into()),
            text(fill, &self.path),
            self.body.as_ref().map(|b| json(fill, b).to_string()),
        )
    }

    /// The first placeholder it holds that is not one of [`PLACEHOLDERS`].
    pub(super) fn unknown_placeholder(&self) -> Option<String> {
        let mut texts = vec![self.path.clone()];
        if let Some(b) = &self.body {
            texts.push(b.to_string());
        }
        texts.iter().find_map(|t| {
            t.split('{').skip(1).find_map(|rest| {
                let name = rest.split('}').next()?;
                let ident =
                    !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
                (ident && !PLACEHOLDERS.contains(&name)).then(|| format!("{{{name}}}"))
            })
        })
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
        assert_eq!(p.card(CardOutcome::Approve), Some(&serde_json::json!("ok")));
        assert_eq!(p.target_keys(1).first(), Some(&"k1"));
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
        let advance = r#""name":"t","clock":{"advance":{"path":"/c","verb":"PUT"}}"#;
        let e = Loaded::from_json(&GOOD.replace("\"name\":\"t\"", advance)).unwrap_err();
        assert!(e.contains("clock.advance"), "{e}");
    }
}
