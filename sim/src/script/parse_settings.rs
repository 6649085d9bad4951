//! Parsing the settings that come before the first step: `use`, `server`, `webhooks`,
//! `assume`, and the names and values they take.

use super::ast::{Script, Server};
use super::cursor::{Cursor, Parsed, fail};
use super::parse::Parser;
use super::parse_step::statement_words;
use super::request::parse_api_key;
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::{
    ApiKeyId, ApiKeySpec, Assumption, Environment, MerchantId, Millis, PlatformParams,
};

/// Words that cannot name a server, besides the words statements start with.
const RESERVED: &str = "webhooks ledger payment refund webhook no violation order";

/// A `use` setting that is one of two words, and the flag of the script it sets.
type Mode = (
    &'static str,
    [(&'static str, bool); 2],
    fn(&mut Script) -> &mut bool,
);

/// `delivery`, `inbox`, `jitter`, `wire`: how the script runs.
const MODES: &[Mode] = &[
    ("delivery", [("auto", false), ("manual", true)], |s| {
        &mut s.manual
    }),
    ("inbox", [("travel", false), ("immediate", true)], |s| {
        &mut s.config.immediate_inbox
    }),
    ("jitter", [("on", true), ("off", false)], |s| {
        &mut s.config.jitter
    }),
    ("wire", [("judged", true), ("unjudged", false)], |s| {
        &mut s.judge_wire
    }),
];

impl Parser {
    pub(super) fn use_line(&mut self, cur: &mut Cursor) -> Parsed<()> {
        if cur.eat("client") {
            return self.use_client(cur);
        }
        let pairs = cur.pairs()?;
        if pairs.is_empty() {
            fail!(cur.col(), "'use' needs settings (use platform=reference)");
        }
        for (name, value, col) in pairs {
            if name == "platform" && value != "reference" {
                fail!(col, "unknown platform '{value}' (platforms: reference)");
            } else if let Some((_, words, flag)) = MODES.iter().find(|m| m.0 == name) {
                let Some((_, on)) = words.iter().find(|(w, _)| *w == value) else {
                    let (a, b) = (words[0].0, words[1].0);
                    fail!(col, "{name}={a} or {b}, not '{value}'");
                };
                *flag(&mut self.script) = *on;
            } else if name != "platform"
                && !set_param(&mut self.script.config.params, &name, &value, col)?
            {
                let params: Vec<&str> = PARAMS.iter().map(|p| p.0).collect();
                fail!(
                    col,
                    "unknown setting '{name}' (settings: platform, delivery, inbox, jitter, wire, {})",
                    params.join(", ")
                );
            }
        }
        Ok(())
    }

    /// `use client after_503=not_accepted|result_unknown after_429=…`: the client servers'
    /// readings of the contract's contradictions (A-S13-REFERENCE-CODE,
    /// A-429-REFERENCE-CODE).
    fn use_client(&mut self, cur: &mut Cursor) -> Parsed<()> {
        let pairs = cur.pairs()?;
        if pairs.is_empty() {
            fail!(
                cur.col(),
                "'use client' needs a reading (use client after_503=result_unknown)"
            );
        }
        for (name, value, col) in pairs {
            let Some(reading) = crate::config::reading_named(&value) else {
                fail!(col, "{name}=not_accepted or result_unknown, not '{value}'");
            };
            match name.as_str() {
                "after_503" => self.readings.after_503 = reading,
                "after_429" => self.readings.after_429 = reading,
                _ => fail!(
                    col,
                    "unknown client reading '{name}' (readings: after_503, after_429)"
                ),
            }
        }
        Ok(())
    }

    pub(super) fn server_line(&mut self, cur: &mut Cursor) -> Parsed<()> {
        let (name, ncol) = cur.expect_word("a server name")?;
        check_name(&name, ncol)?;
        if self.script.servers.iter().any(|s| s.name == name) {
            fail!(ncol, "server '{name}' is declared twice");
        }
        // `key=… merchant=… env=… node=… client=… db=…`.
        let (mut key, mut merchant, mut env, mut node) = (None, None, None, None);
        let (mut policy, mut db) = (None, 0);
        for (k, v, col) in cur.pairs()? {
            let not = |what: &str| (col, format!("'{v}' is not {what}"));
            match k.as_str() {
                "key" => {
                    key = Some(parse_api_key(&v).ok_or_else(|| not("an API key (ak_1 … ak_5)"))?)
                }
                "merchant" => {
                    merchant = Some(parse_merchant(&v).ok_or_else(|| not("a merchant (1, 2)"))?)
                }
                "env" => env = Some(environment(&v, col)?),
                "node" => node = Some(v.parse::<u8>().map_err(|_| not("a node number"))?),
                "client" => {
                    crate::worlds::parse_policy(&v).map_err(|e| (col + 7, e.to_string()))?;
                    policy = Some(v)
                }
                "db" => db = v.parse().map_err(|_| not("a database number"))?,
                _ => fail!(
                    col,
                    "unknown server setting '{k}' (settings: key, merchant, env, node, client, db)"
                ),
            }
        }
        let api_key = server_key(key, merchant, env, ncol)?;
        let owner = known_key(api_key);
        let node = self.free_node(node, ncol)?;
        self.declared = true;
        self.script.servers.push(Server {
            name,
            node,
            api_key,
            merchant: owner.map(|s| s.merchant),
            environment: owner.map(|s| s.environment),
            policy,
            db,
        });
        Ok(())
    }

    /// The node a `server` line asks for, or the first free one.
    fn free_node(&self, node: Option<u8>, ncol: u32) -> Parsed<u8> {
        let taken = |n: u8| self.script.servers.iter().find(|s| s.node == n);
        match node.map(|n| (n, taken(n))) {
            Some((n, Some(s))) => fail!(ncol, "node {n} is already server {}", s.name),
            Some((n, None)) => Ok(n),
            None => {
                let free = (0..=u8::MAX).find(|n| taken(*n).is_none());
                free.ok_or((ncol, "too many servers".to_owned()))
            }
        }
    }

    pub(super) fn webhooks_line(&mut self, cur: &mut Cursor) -> Parsed<()> {
        if cur.eat("none") {
            self.webhooks.get_or_insert_default();
            return cur.end();
        }
        let (mut merchant, mut env, mut to) = (None, None, None);
        let col0 = cur.col();
        for (k, v, col) in cur.pairs()? {
            match k.as_str() {
                "merchant" => {
                    merchant =
                        Some(parse_merchant(&v).ok_or((col, format!("'{v}' is not a merchant")))?)
                }
                "env" => env = Some(environment(&v, col)?),
                "to" => {
                    let servers = &self.script.servers;
                    let s = servers.iter().find(|s| s.name == v);
                    to = Some(s.ok_or((col, self.unknown_server(&v)))?.node);
                }
                _ => fail!(
                    col,
                    "unknown webhooks setting '{k}' (settings: merchant, env, to)"
                ),
            }
        }
        let (Some(m), Some(e), Some(n)) = (merchant, env, to) else {
            fail!(col0, "webhooks needs merchant=N env=test|live to=SERVER");
        };
        self.webhooks.get_or_insert_default().push((m, e, n));
        Ok(())
    }

    pub(super) fn assume_line(&mut self, cur: &mut Cursor) -> Parsed<()> {
        let a = cur.read(
            "an assumption ID (A-CKO-CONFLICT)",
            |id| Assumption::ALL.iter().find(|a| a.id() == id),
            |id| format!("unknown assumption '{id}' (see model/ASSUMPTIONS.md)"),
        )?;
        cur.end()?;
        if !self.script.assumptions.contains(a) {
            self.script.assumptions.push(*a);
        }
        Ok(())
    }
}

/// `env=test` or `env=live`.
fn environment(v: &str, col: u32) -> Parsed<Environment> {
    Environment::from_name(v).ok_or((col, format!("env=test or live, not '{v}'")))
}

/// An issued or spare API key, by id.
pub(super) fn known_key(id: ApiKeyId) -> Option<ApiKeySpec> {
    let mut keys = default_api_keys();
    keys.push(rotated_key_spec());
    keys.into_iter().find(|k| k.id == id)
}

/// A server's key: the one it names, which must belong to the merchant and environment
/// it names, or the first writable key of that merchant and environment (1, test).
fn server_key(
    key: Option<ApiKeyId>,
    m: Option<MerchantId>,
    e: Option<Environment>,
    ncol: u32,
) -> Parsed<ApiKeyId> {
    if let Some(k) = key {
        if let Some(s) = known_key(k)
            && (m.is_some_and(|m| m != s.merchant) || e.is_some_and(|e| e != s.environment))
        {
            fail!(ncol, "key {k} belongs to {} {}", s.merchant, s.environment);
        }
        return Ok(k);
    }
    let (m, e) = (m.unwrap_or(MerchantId(1)), e.unwrap_or(Environment::Test));
    let issued = |k: &&ApiKeySpec| k.merchant == m && k.environment == e && !k.read_only;
    match default_api_keys().iter().find(issued) {
        Some(k) => Ok(k.id),
        None => fail!(ncol, "no API key is issued for {m} {e}"),
    }
}

/// A platform parameter as `use NAME=VALUE` reads it and a report or an exported script
/// writes it.
trait Setting {
    fn set(&mut self, value: &str, col: u32) -> Parsed<()>;
    fn show(&self) -> String;
}

/// Each setting's type: how `use` reads a value of it (`value`, `col`) and how it is
/// written (`it`).
macro_rules! settings {
    ($($t:ty: |$value:ident, $col:ident| $read:expr, |$it:ident| $show:expr;)*) => {$(
        impl Setting for $t {
            fn set(&mut self, $value: &str, $col: u32) -> Parsed<()> {
                *self = $read?;
                Ok(())
            }
            fn show(&self) -> String {
                let $it = self;
                $show
            }
        }
    )*};
}

settings! {
    Millis: |v, col| duration(v, col), |d| d.to_string();
    u8: |v, col| count(v, col), |n| n.to_string();
    u64: |v, col| count(v, col), |n| n.to_string();
    usize: |v, col| count(v, col), |n| n.to_string();
    u32: |v, col| number_u32(v, col), |n| n.to_string();
    // A-MANUAL-REVIEW-END: `never` (the model's) or a duration after the charge.
    Option<Millis>: |v, col| (v != "never").then(|| duration(v, col)).transpose(),
        |d| d.map_or_else(|| "never".to_owned(), |d| d.to_string());
    // A-RETRY-AFTER-429: `absent` is the reading without the header.
    Option<u32>: |v, col| (v != "absent").then(|| number_u32(v, col)).transpose(),
        |s| s.map_or_else(|| "absent".to_owned(), |s| s.to_string());
}

fn number(value: &str, col: u32) -> Parsed<u64> {
    value
        .parse()
        .map_err(|_| (col, format!("'{value}' is not a number")))
}

/// A count: a number that fits the parameter (a larger one is too large).
fn count<T: TryFrom<u64>>(value: &str, col: u32) -> Parsed<T> {
    let n = number(value, col)?;
    T::try_from(n).map_err(|_| (col, format!("{n} is too large")))
}

/// A number of at most 32 bits; a larger one is too large, as written.
fn number_u32(value: &str, col: u32) -> Parsed<u32> {
    u32::try_from(number(value, col)?).map_err(|_| (col, format!("{value} is too large")))
}

fn duration(value: &str, col: u32) -> Parsed<Millis> {
    let message = || format!("'{value}' is not a duration of at most 36500d (15s, 7d, 2min)");
    parse_duration(value).ok_or_else(|| (col, message()))
}

type Field = fn(&mut PlatformParams) -> &mut dyn Setting;

/// `("name", |p| &mut p.name)` for each field, or `("name", |p| &mut p.field)` for
/// `field as "name"`.
macro_rules! params {
    ($($field:ident $(as $name:literal)?),*) => {
        &[$(([$($name,)? stringify!($field)][0], |p| &mut p.$field)),*]
    };
}

/// The `use` settings that set a platform parameter, in the order messages list them.
const PARAMS: &[(&str, Field)] = params!(
    retention, sync_wait, concurrent_wait_timeout, attempts_max, payment_ttl, session_ttl,
    verify_interval, auto_query_window, manual_review_requery, manual_review_until,
    retry_after_s as "retry_after", key_len_max, webhook_redeliveries_max,
    webhook_redelivery_delay, fee_rate_bps, refund_review_from, refund_review_time,
    refund_review_rejects_from, ids_from
);

/// The parameters a run report's settings line leaves out (and the refund review's,
/// which an exported script leaves out too).
const UNREPORTED: &[&str] = &["manual_review_until", "ids_from"];

/// A platform parameter of `use` (`retention=7d`). Whether `name` is one.
fn set_param(params: &mut PlatformParams, name: &str, value: &str, col: u32) -> Parsed<bool> {
    let name = match name {
        "max_attempts" => "attempts_max",
        "retry_after_s" => "retry_after",
        name => name,
    };
    let Some((_, field)) = PARAMS.iter().find(|(n, _)| *n == name) else {
        return Ok(false);
    };
    field(params).set(value, col)?;
    Ok(true)
}

/// `name=value` for every parameter of `params` a report (`report`) or an exported script
/// writes, and whether it differs from the default.
pub(super) fn param_settings(params: &PlatformParams, report: bool) -> Vec<(String, bool)> {
    let (mut p, mut d) = (params.clone(), PlatformParams::default());
    let written =
        |n: &&str| !(report && (n.starts_with("refund_review") || UNREPORTED.contains(n)));
    let setting = |(name, field): &(&str, Field)| {
        let v = field(&mut p).show();
        let changed = v != field(&mut d).show();
        (format!("{name}={v}"), changed)
    };
    PARAMS
        .iter()
        .filter(|(n, _)| written(n))
        .map(setting)
        .collect()
}

pub(super) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

pub(super) fn check_name(name: &str, col: u32) -> Parsed<()> {
    if !is_name(name) {
        fail!(
            col,
            "'{name}' is not a server name (a letter, then letters, digits, '_' or '-')"
        );
    }
    let mut statement = statement_words();
    if RESERVED.split(' ').any(|w| w == name) || statement.any(|w| w == name && !w.contains('-')) {
        fail!(col, "'{name}' is a reserved word and cannot name a server");
    }
    if name.starts_with("merchant-") {
        fail!(
            col,
            "'{name}' is how traces name nodes; choose another server name"
        );
    }
    Ok(())
}

pub(super) fn parse_merchant(s: &str) -> Option<MerchantId> {
    let n = s.strip_prefix("merchant_").unwrap_or(s);
    n.parse().ok().map(MerchantId)
}

/// `15s`, `2min`, `7d`, `1d2h`, `1.250s`, `250ms`: what [`Millis`]'s `Display` writes.
pub fn parse_duration(s: &str) -> Option<Millis> {
    let (mut total, mut rest) = (0u64, s);
    if s.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let (num, tail) = split_while(rest, |c| c.is_ascii_digit() || c == '.');
        let (unit, next) = split_while(tail, |c| !c.is_ascii_digit());
        let scale: u64 = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" | "min" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return None,
        };
        // Milliseconds as written: a whole number of the unit, and up to three decimals
        // of a unit of at least a second.
        let (whole, frac) = match num.split_once('.') {
            None => (num.parse::<u64>().ok()?, 0),
            Some((w, f)) if !f.is_empty() && f.len() <= 3 && scale >= 1_000 => {
                let whole = if w.is_empty() { 0 } else { w.parse().ok()? };
                (
                    whole,
                    format!("{f:0<3}").parse::<u64>().ok()? * (scale / 1_000),
                )
            }
            Some(_) => return None,
        };
        total = total.checked_add(whole.checked_mul(scale)?.checked_add(frac)?)?;
        rest = next;
    }
    // Past the bound of a duration: refused (a clock moved near `u64::MAX` saturates
    // every timer at one instant, and the world's retries would never end).
    (total <= DURATION_MAX.0).then_some(Millis(total))
}

/// `s` split after its leading characters that `f` holds for.
fn split_while(s: &str, f: impl Fn(char) -> bool) -> (&str, &str) {
    s.split_at(s.find(|c| !f(c)).unwrap_or(s.len()))
}

/// The longest duration a script or the sandbox's clock control accepts: 100 years
/// (36500d), beyond every window of the contract; longer is "not a duration".
pub const DURATION_MAX: Millis = Millis(36_500 * 86_400_000);
