//! Parsing the settings that come before the first step: `use`, `server`, `webhooks`,
//! `assume`, and the names and values they take.

use super::ast::Server;
use super::cursor::{Cursor, LineError};
use super::parse::{Parser, err};
use super::parse_step::PREFIXES;
use super::request::parse_api_key;
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::{
    ApiKeyId, ApiKeySpec, Assumption, Environment, MerchantId, Millis, PlatformParams,
};

/// Words that cannot name a server, besides the words statements start with.
const RESERVED: &[&str] = &[
    "webhooks",
    "ledger",
    "payment",
    "refund",
    "webhook",
    "no",
    "violation",
    "order",
];

impl Parser {
    pub(super) fn use_line(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
        if cur.peek_word().as_deref() == Some("client") {
            cur.word();
            return self.use_client(cur);
        }
        let pairs = cur.pairs()?;
        if pairs.is_empty() {
            return err(cur.col(), "'use' needs settings (use platform=reference)");
        }
        for (name, value, col) in pairs {
            if !self.use_mode(&name, &value, col)?
                && !set_param(&mut self.script.config.params, &name, &value, col)?
            {
                return err(
                    col,
                    format!(
                        "unknown setting '{name}' (settings: platform, delivery, inbox, jitter, wire, {})",
                        PARAMS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
        Ok(())
    }

    /// `use client after_503=not_accepted|result_unknown after_429=…`: the client servers'
    /// readings of the contract's contradictions (A-S13-REFERENCE-CODE,
    /// A-429-REFERENCE-CODE).
    fn use_client(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
        let pairs = cur.pairs()?;
        if pairs.is_empty() {
            return err(
                cur.col(),
                "'use client' needs a reading (use client after_503=result_unknown)",
            );
        }
        for (name, value, col) in pairs {
            let reading = match crate::config::reading_named(&value) {
                Some(reading) => reading,
                None => {
                    return err(
                        col,
                        format!("{name}=not_accepted or result_unknown, not '{value}'"),
                    );
                }
            };
            match name.as_str() {
                "after_503" => self.readings.after_503 = reading,
                "after_429" => self.readings.after_429 = reading,
                _ => {
                    return err(
                        col,
                        format!("unknown client reading '{name}' (readings: after_503, after_429)"),
                    );
                }
            }
        }
        Ok(())
    }

    /// `platform`, `delivery`, `inbox`, `jitter`, `wire`: how the script runs. Whether
    /// `name` is one.
    fn use_mode(&mut self, name: &str, value: &str, col: u32) -> Result<bool, LineError> {
        match name {
            "platform" => {
                if value != "reference" {
                    return err(
                        col,
                        format!("unknown platform '{value}' (platforms: reference)"),
                    );
                }
            }
            "delivery" => {
                self.script.manual = either(name, value, [("auto", false), ("manual", true)], col)?
            }
            "inbox" => {
                self.script.config.immediate_inbox =
                    either(name, value, [("travel", false), ("immediate", true)], col)?
            }
            "jitter" => {
                self.script.config.jitter =
                    either(name, value, [("on", true), ("off", false)], col)?
            }
            "wire" => {
                self.script.judge_wire =
                    either(name, value, [("judged", true), ("unjudged", false)], col)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    pub(super) fn server_line(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
        let (name, ncol) = cur.expect_word("a server name")?;
        check_name(&name, ncol)?;
        if self.script.servers.iter().any(|s| s.name == name) {
            return err(ncol, format!("server '{name}' is declared twice"));
        }
        // `key=… merchant=… env=… node=… client=… db=…`.
        let mut server = Server {
            name,
            node: 0,
            api_key: ApiKeyId(0),
            merchant: None,
            environment: None,
            policy: None,
            db: 0,
        };
        let (mut key, mut node) = (None, None);
        for (k, v, col) in cur.pairs()? {
            match k.as_str() {
                "key" => {
                    key = Some(
                        parse_api_key(&v)
                            .ok_or((col, format!("'{v}' is not an API key (ak_1 … ak_5)")))?,
                    )
                }
                "merchant" => {
                    server.merchant = Some(
                        parse_merchant(&v)
                            .ok_or((col, format!("'{v}' is not a merchant (1, 2)")))?,
                    )
                }
                "env" => {
                    server.environment = Some(
                        Environment::from_name(&v)
                            .ok_or((col, format!("env=test or live, not '{v}'")))?,
                    )
                }
                "node" => {
                    node = Some(
                        v.parse::<u8>()
                            .map_err(|_| (col, format!("'{v}' is not a node number")))?,
                    )
                }
                "client" => {
                    crate::worlds::parse_policy(&v).map_err(|e| (col + 7, e.to_string()))?;
                    server.policy = Some(v)
                }
                "db" => {
                    server.db = v
                        .parse()
                        .map_err(|_| (col, format!("'{v}' is not a database number")))?
                }
                _ => {
                    return err(
                        col,
                        format!(
                            "unknown server setting '{k}' (settings: key, merchant, env, node, client, db)"
                        ),
                    );
                }
            }
        }
        server.api_key = server_key(key, server.merchant, server.environment, ncol)?;
        let owner = known_key(server.api_key);
        server.merchant = owner.map(|s| s.merchant);
        server.environment = owner.map(|s| s.environment);
        server.node = self.free_node(node, ncol)?;
        self.declared = true;
        self.script.servers.push(server);
        Ok(())
    }

    /// The node a `server` line asks for, or the first free one.
    fn free_node(&self, node: Option<u8>, ncol: u32) -> Result<u8, LineError> {
        match node {
            Some(n) => {
                if self.script.servers.iter().any(|s| s.node == n) {
                    return err(
                        ncol,
                        format!(
                            "node {n} is already server {}",
                            self.script
                                .servers
                                .iter()
                                .find(|s| s.node == n)
                                .map(|s| s.name.as_str())
                                .unwrap_or("?")
                        ),
                    );
                }
                Ok(n)
            }
            None => (0..=u8::MAX)
                .find(|n| !self.script.servers.iter().any(|s| s.node == *n))
                .ok_or((ncol, "too many servers".to_owned())),
        }
    }

    pub(super) fn webhooks_line(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
        if cur.peek_word().as_deref() == Some("none") {
            cur.word();
            self.webhooks_set = true;
            return cur.end();
        }
        let mut merchant = None;
        let mut environment = None;
        let mut to = None;
        let col0 = cur.col();
        for (k, v, col) in cur.pairs()? {
            match k.as_str() {
                "merchant" => {
                    merchant =
                        Some(parse_merchant(&v).ok_or((col, format!("'{v}' is not a merchant")))?)
                }
                "env" => {
                    environment = Some(
                        Environment::from_name(&v)
                            .ok_or((col, format!("env=test or live, not '{v}'")))?,
                    )
                }
                "to" => {
                    let s = self
                        .script
                        .servers
                        .iter()
                        .find(|s| s.name == v)
                        .ok_or((col, self.unknown_server(&v)))?;
                    to = Some(s.node);
                }
                _ => {
                    return err(
                        col,
                        format!("unknown webhooks setting '{k}' (settings: merchant, env, to)"),
                    );
                }
            }
        }
        match (merchant, environment, to) {
            (Some(m), Some(e), Some(n)) => {
                self.webhooks_set = true;
                self.webhooks.push((m, e, n));
                Ok(())
            }
            _ => err(col0, "webhooks needs merchant=N env=test|live to=SERVER"),
        }
    }

    pub(super) fn assume_line(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
        let (id, col) = cur.expect_word("an assumption ID (A-CKO-CONFLICT)")?;
        let a = Assumption::ALL.iter().find(|a| a.id() == id).ok_or((
            col,
            format!("unknown assumption '{id}' (see model/ASSUMPTIONS.md)"),
        ))?;
        cur.end()?;
        if !self.script.assumptions.contains(a) {
            self.script.assumptions.push(*a);
        }
        Ok(())
    }
}

/// The meaning of `value` for a setting `name` that is one of two words.
fn either(name: &str, value: &str, words: [(&str, bool); 2], col: u32) -> Result<bool, LineError> {
    match words.iter().find(|(w, _)| *w == value) {
        Some((_, meaning)) => Ok(*meaning),
        None => err(
            col,
            format!("{name}={} or {}, not '{value}'", words[0].0, words[1].0),
        ),
    }
}

/// An issued or spare API key, by id.
pub(super) fn known_key(id: ApiKeyId) -> Option<ApiKeySpec> {
    default_api_keys()
        .into_iter()
        .chain([rotated_key_spec()])
        .find(|k| k.id == id)
}

/// A server's key: the one it names, which must belong to the merchant and environment
/// it names, or the first writable key of that merchant and environment (1, test).
fn server_key(
    key: Option<ApiKeyId>,
    merchant: Option<MerchantId>,
    environment: Option<Environment>,
    ncol: u32,
) -> Result<ApiKeyId, LineError> {
    match (key, merchant, environment) {
        (Some(k), m, e) => {
            if let Some(s) = known_key(k) {
                if m.is_some_and(|m| m != s.merchant) || e.is_some_and(|e| e != s.environment) {
                    return err(
                        ncol,
                        format!("key {k} belongs to {} {}", s.merchant, s.environment),
                    );
                }
            }
            Ok(k)
        }
        (None, m, e) => {
            let m = m.unwrap_or(MerchantId(1));
            let e = e.unwrap_or(Environment::Test);
            default_api_keys()
                .iter()
                .find(|k| k.merchant == m && k.environment == e && !k.read_only)
                .map(|k| k.id)
                .ok_or((ncol, format!("no API key is issued for {m} {e}")))
        }
    }
}

/// A platform parameter as `use NAME=VALUE` reads it and a report or an exported script
/// writes it.
trait Setting {
    fn set(&mut self, value: &str, col: u32) -> Result<(), LineError>;
    fn show(&self) -> String;
}

fn number(value: &str, col: u32) -> Result<u64, LineError> {
    value
        .parse()
        .map_err(|_| (col, format!("'{value}' is not a number")))
}

fn duration(value: &str, col: u32) -> Result<Millis, LineError> {
    parse_duration(value).ok_or((
        col,
        format!("'{value}' is not a duration of at most 36500d (15s, 7d, 2min)"),
    ))
}

/// A number of at most 32 bits; a larger one is too large, as written.
fn number_u32(value: &str, col: u32) -> Result<u32, LineError> {
    u32::try_from(number(value, col)?).map_err(|_| (col, format!("{value} is too large")))
}

impl Setting for Millis {
    fn set(&mut self, value: &str, col: u32) -> Result<(), LineError> {
        *self = duration(value, col)?;
        Ok(())
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

/// A count: a number that fits the parameter (a larger one is too large).
macro_rules! count_setting {
    ($($t:ty),*) => {$(
        impl Setting for $t {
            fn set(&mut self, value: &str, col: u32) -> Result<(), LineError> {
                let n = number(value, col)?;
                *self = <$t>::try_from(n).map_err(|_| (col, format!("{n} is too large")))?;
                Ok(())
            }
            fn show(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

count_setting!(u8, u64, usize);

impl Setting for u32 {
    fn set(&mut self, value: &str, col: u32) -> Result<(), LineError> {
        *self = number_u32(value, col)?;
        Ok(())
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

/// A-MANUAL-REVIEW-END: `never` (the model's) or a duration after the charge.
impl Setting for Option<Millis> {
    fn set(&mut self, value: &str, col: u32) -> Result<(), LineError> {
        *self = (value != "never")
            .then(|| duration(value, col))
            .transpose()?;
        Ok(())
    }
    fn show(&self) -> String {
        self.map_or_else(|| "never".to_owned(), |d| d.to_string())
    }
}

/// A-RETRY-AFTER-429: `absent` is the reading without the header.
impl Setting for Option<u32> {
    fn set(&mut self, value: &str, col: u32) -> Result<(), LineError> {
        *self = (value != "absent")
            .then(|| number_u32(value, col))
            .transpose()?;
        Ok(())
    }
    fn show(&self) -> String {
        self.map_or_else(|| "absent".to_owned(), |s| s.to_string())
    }
}

type Field = fn(&mut PlatformParams) -> &mut dyn Setting;

/// The `use` settings that set a platform parameter, in the order messages list them.
const PARAMS: &[(&str, Field)] = &[
    ("retention", |p| &mut p.retention),
    ("sync_wait", |p| &mut p.sync_wait),
    ("concurrent_wait_timeout", |p| {
        &mut p.concurrent_wait_timeout
    }),
    ("attempts_max", |p| &mut p.attempts_max),
    ("payment_ttl", |p| &mut p.payment_ttl),
    ("session_ttl", |p| &mut p.session_ttl),
    ("verify_interval", |p| &mut p.verify_interval),
    ("auto_query_window", |p| &mut p.auto_query_window),
    ("manual_review_requery", |p| &mut p.manual_review_requery),
    ("manual_review_until", |p| &mut p.manual_review_until),
    ("retry_after", |p| &mut p.retry_after_s),
    ("key_len_max", |p| &mut p.key_len_max),
    ("webhook_redeliveries_max", |p| {
        &mut p.webhook_redeliveries_max
    }),
    ("webhook_redelivery_delay", |p| {
        &mut p.webhook_redelivery_delay
    }),
    ("fee_rate_bps", |p| &mut p.fee_rate_bps),
    ("refund_review_from", |p| &mut p.refund_review_from),
    ("refund_review_time", |p| &mut p.refund_review_time),
    ("refund_review_rejects_from", |p| {
        &mut p.refund_review_rejects_from
    }),
    ("ids_from", |p| &mut p.ids_from),
];

/// The parameters a run report's settings line leaves out (and the refund review's,
/// which an exported script leaves out too).
const UNREPORTED: &[&str] = &["manual_review_until", "ids_from"];

/// A platform parameter of `use` (`retention=7d`). Whether `name` is one.
fn set_param(
    params: &mut PlatformParams,
    name: &str,
    value: &str,
    col: u32,
) -> Result<bool, LineError> {
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
    PARAMS
        .iter()
        .filter(|(n, _)| !(report && (n.starts_with("refund_review") || UNREPORTED.contains(n))))
        .map(|(name, field)| {
            let v = field(&mut p).show();
            let changed = v != field(&mut d).show();
            (format!("{name}={v}"), changed)
        })
        .collect()
}

pub(super) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

pub(super) fn check_name(name: &str, col: u32) -> Result<(), LineError> {
    if !is_name(name) {
        return err(
            col,
            format!("'{name}' is not a server name (a letter, then letters, digits, '_' or '-')"),
        );
    }
    let mut statement = super::parse_step::STATEMENTS.iter().chain(PREFIXES);
    if RESERVED.contains(&name) || statement.any(|w| *w == name && !w.contains('-')) {
        return err(
            col,
            format!("'{name}' is a reserved word and cannot name a server"),
        );
    }
    if name.starts_with("merchant-") {
        return err(
            col,
            format!("'{name}' is how traces name nodes; choose another server name"),
        );
    }
    Ok(())
}

pub(super) fn parse_merchant(s: &str) -> Option<MerchantId> {
    s.strip_prefix("merchant_")
        .unwrap_or(s)
        .parse()
        .ok()
        .map(MerchantId)
}

/// `15s`, `2min`, `7d`, `1d2h`, `1.250s`, `250ms`: what [`Millis`]'s `Display` writes.
pub fn parse_duration(s: &str) -> Option<Millis> {
    let mut total: u64 = 0;
    let mut rest = s;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let (num, tail) = rest.split_at(num_len);
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let scale: u64 = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" | "min" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return None,
        };
        let ms = match num.split_once('.') {
            None => num.parse::<u64>().ok()?.checked_mul(scale)?,
            Some((whole, frac)) => {
                if frac.is_empty() || frac.len() > 3 || scale < 1_000 {
                    return None;
                }
                let whole: u64 = if whole.is_empty() {
                    0
                } else {
                    whole.parse().ok()?
                };
                let frac_ms: u64 = format!("{frac:0<3}").parse().ok()?;
                whole
                    .checked_mul(scale)?
                    .checked_add(frac_ms * (scale / 1_000))?
            }
        };
        total = total.checked_add(ms)?;
        rest = next;
    }
    // Past the bound of a duration: refused (a clock moved near `u64::MAX` saturates
    // every timer at one instant, and the world's retries would never end).
    (total <= DURATION_MAX.0).then_some(Millis(total))
}

/// The longest duration a script or the sandbox's clock control accepts: 100 years
/// (36500d), beyond every window of the contract; longer is "not a duration".
pub const DURATION_MAX: Millis = Millis(36_500 * 86_400_000);
