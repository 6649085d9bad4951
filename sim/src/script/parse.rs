//! The parser: a script file to a [`Script`], or the first `file:line:column` error.
//!
//! One pass, one line at a time. Settings (`use`, `server`, `webhooks`) come before the
//! first step; every name a statement uses (a server, a property, an assumption, a
//! field of an expectation) is checked here, so that a script that parses runs. This
//! file reads the settings and dispatches; `parse_step` reads steps and
//! `parse_expect` expectations.

use super::ScriptError;
use super::ast::*;
use super::cursor::{Cursor, LineError};
use super::request::parse_api_key;
use crate::config::{Budget, ClientSpec, WorkItem, WorldConfig};
use payhub_model::harness::{default_api_keys, rotated_key_spec};
use payhub_model::{Assumption, Environment, MerchantId, Millis, PlatformParams};
use std::collections::BTreeSet;

/// Words that cannot name a server.
const RESERVED: &[&str] = &[
    "use",
    "server",
    "webhooks",
    "assume",
    "net",
    "platform",
    "upstream",
    "payer",
    "env",
    "branch",
    "expect",
    "wait",
    "tick",
    "until",
    "crash",
    "restart",
    "deliver",
    "drop",
    "duplicate",
    "acquire",
    "advance",
    "authenticate",
    "ledger",
    "payment",
    "refund",
    "webhook",
    "no",
    "violation",
    "order",
];

/// Parses a script. `properties` are the names `expect violation` may use.
pub fn parse(file: &str, bytes: &[u8], properties: &[&str]) -> Result<Script, ScriptError> {
    let text = decode(file, bytes)?;
    // A byte-order mark is not part of the first statement.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut p = Parser {
        properties: properties.iter().map(|s| s.to_string()).collect(),
        params: PlatformParams::default(),
        manual: false,
        immediate_inbox: false,
        jitter: false,
        servers: Vec::new(),
        declared: false,
        started: false,
        webhooks: Vec::new(),
        webhooks_set: false,
        workload: Vec::new(),
        assumptions: Vec::new(),
        expected_violation: None,
        statements: Vec::new(),
        requested: BTreeSet::new(),
    };
    let source: Vec<String> = text.lines().map(str::to_owned).collect();
    for (i, line) in source.iter().enumerate() {
        let n = i as u32 + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        p.line(n, line)
            .map_err(|(column, message)| ScriptError::new(file, n, column, message))?;
    }
    p.finish_settings();
    let title = source
        .first()
        .and_then(|l| l.trim().strip_prefix('#'))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let config = p.config(file);
    Ok(Script {
        file: file.to_owned(),
        source,
        title,
        config,
        servers: p.servers,
        assumptions: p.assumptions,
        manual: p.manual,
        expected_violation: p.expected_violation,
        statements: p.statements,
    })
}

/// The file as text: UTF-8 without NUL bytes, or an error at the first bad byte.
fn decode<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, ScriptError> {
    let at = |byte: usize, what: &str| {
        let before = &bytes[..byte];
        let line = before.iter().filter(|b| **b == b'\n').count() as u32 + 1;
        let start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&bytes[start..byte]).chars().count() as u32 + 1;
        ScriptError::new(
            file,
            line,
            column,
            format!("not a text file: {what} at byte {byte}"),
        )
    };
    let text = std::str::from_utf8(bytes).map_err(|e| at(e.valid_up_to(), "invalid UTF-8"))?;
    if let Some(nul) = bytes.iter().position(|b| *b == 0) {
        return Err(at(nul, "a NUL byte"));
    }
    Ok(text)
}

pub(super) struct Parser {
    pub(super) properties: Vec<String>,
    pub(super) params: PlatformParams,
    pub(super) manual: bool,
    pub(super) immediate_inbox: bool,
    pub(super) jitter: bool,
    pub(super) servers: Vec<Server>,
    /// Whether a `server` line was seen (else A and B exist).
    pub(super) declared: bool,
    /// Whether the first step was seen (settings are closed).
    pub(super) started: bool,
    pub(super) webhooks: Vec<(MerchantId, Environment, u8)>,
    /// Whether `webhooks` lines replace the default routing.
    pub(super) webhooks_set: bool,
    pub(super) workload: Vec<WorkItem>,
    pub(super) assumptions: Vec<Assumption>,
    pub(super) expected_violation: Option<(String, Pos)>,
    pub(super) statements: Vec<Statement>,
    /// Servers that have sent a request line so far (`usize::MAX`: any server).
    pub(super) requested: BTreeSet<usize>,
}

pub(super) fn err<T>(col: u32, message: impl Into<String>) -> Result<T, LineError> {
    Err((col, message.into()))
}

impl Parser {
    fn line(&mut self, n: u32, line: &str) -> Result<(), LineError> {
        let mut cur = Cursor::new(line);
        let col = cur.col();
        let (first, _) = cur.word().expect("a non-blank line");
        let pos = Pos {
            line: n,
            column: col,
        };
        // Settings.
        match first.as_str() {
            "use" => {
                return self
                    .settings_open(col)
                    .and_then(|()| self.use_line(&mut cur));
            }
            "server" => {
                return self
                    .settings_open(col)
                    .and_then(|()| self.server_line(&mut cur));
            }
            "webhooks" => {
                return self
                    .settings_open(col)
                    .and_then(|()| self.webhooks_line(&mut cur));
            }
            "assume" | "assume:" => return self.assume_line(&mut cur),
            _ => {}
        }
        if first == "expect" && cur.peek_word().as_deref() == Some("violation") {
            cur.word();
            let (name, ncol) = cur.expect_word("a property name")?;
            if !self.properties.contains(&name) {
                return err(
                    ncol,
                    format!(
                        "unknown property '{name}' (properties: {})",
                        self.properties.join(", ")
                    ),
                );
            }
            if let Some((_, first)) = &self.expected_violation {
                return err(
                    col,
                    format!(
                        "a second 'expect violation' (the first is on line {})",
                        first.line
                    ),
                );
            }
            cur.end()?;
            self.expected_violation = Some((
                name,
                Pos {
                    line: n,
                    column: ncol,
                },
            ));
            return Ok(());
        }
        self.finish_settings();
        let action = self.action(&first, col, &mut cur)?;
        cur.end()?;
        if let Action::Request { server, .. } = &action {
            self.requested.insert(*server);
            self.requested.insert(usize::MAX);
        }
        self.statements.push(Statement { pos, action });
        Ok(())
    }

    fn settings_open(&self, col: u32) -> Result<(), LineError> {
        if self.started {
            return err(
                col,
                "settings (use, server, webhooks) must come before the first step",
            );
        }
        Ok(())
    }

    /// Closes the settings: without `server` lines, A and B are merchant 1's test servers.
    fn finish_settings(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        if !self.declared {
            for (i, name) in ["A", "B"].iter().enumerate() {
                self.servers.push(Server {
                    name: (*name).to_owned(),
                    node: i as u8,
                    api_key: payhub_model::harness::M1_TEST,
                    merchant: Some(MerchantId(1)),
                    environment: Some(Environment::Test),
                    policy: None,
                    db: 0,
                });
            }
        }
    }

    fn use_line(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
        let pairs = cur.pairs()?;
        if pairs.is_empty() {
            return err(cur.col(), "'use' needs settings (use platform=reference)");
        }
        for (name, value, col) in pairs {
            let dur = || {
                parse_duration(&value)
                    .ok_or((col, format!("'{value}' is not a duration (15s, 7d, 2min)")))
            };
            let num = || -> Result<u64, LineError> {
                value
                    .parse()
                    .map_err(|_| (col, format!("'{value}' is not a number")))
            };
            let small = |n: u64| -> Result<u8, LineError> {
                u8::try_from(n).map_err(|_| (col, format!("{n} is too large")))
            };
            match name.as_str() {
                "platform" => {
                    if value != "reference" {
                        return err(
                            col,
                            format!("unknown platform '{value}' (platforms: reference)"),
                        );
                    }
                }
                "delivery" => {
                    self.manual = match value.as_str() {
                        "auto" => false,
                        "manual" => true,
                        _ => return err(col, format!("delivery=auto or manual, not '{value}'")),
                    }
                }
                "inbox" => {
                    self.immediate_inbox = match value.as_str() {
                        "travel" => false,
                        "immediate" => true,
                        _ => return err(col, format!("inbox=travel or immediate, not '{value}'")),
                    }
                }
                "jitter" => {
                    self.jitter = match value.as_str() {
                        "on" => true,
                        "off" => false,
                        _ => return err(col, format!("jitter=on or off, not '{value}'")),
                    }
                }
                "retention" => self.params.retention = dur()?,
                "sync_wait" => self.params.sync_wait = dur()?,
                "concurrent_wait_timeout" => self.params.concurrent_wait_timeout = dur()?,
                "attempts_max" | "max_attempts" => self.params.attempts_max = small(num()?)?,
                "payment_ttl" => self.params.payment_ttl = dur()?,
                "session_ttl" => self.params.session_ttl = dur()?,
                "verify_interval" => self.params.verify_interval = dur()?,
                "auto_query_window" => self.params.auto_query_window = dur()?,
                "manual_review_requery" => self.params.manual_review_requery = dur()?,
                "retry_after" | "retry_after_s" => {
                    self.params.retry_after_s =
                        u32::try_from(num()?).map_err(|_| (col, format!("{value} is too large")))?
                }
                "key_len_max" => self.params.key_len_max = num()? as usize,
                "webhook_redeliveries_max" => self.params.webhook_redeliveries_max = small(num()?)?,
                "webhook_redelivery_delay" => self.params.webhook_redelivery_delay = dur()?,
                "fee_rate_bps" => {
                    self.params.fee_rate_bps =
                        u32::try_from(num()?).map_err(|_| (col, format!("{value} is too large")))?
                }
                _ => {
                    return err(
                        col,
                        format!(
                            "unknown setting '{name}' (settings: platform, delivery, inbox, jitter, {})",
                            PARAM_NAMES.join(", ")
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    fn server_line(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
        let (name, ncol) = cur.expect_word("a server name")?;
        check_name(&name, ncol)?;
        if self.servers.iter().any(|s| s.name == name) {
            return err(ncol, format!("server '{name}' is declared twice"));
        }
        let mut key = None;
        let mut merchant = None;
        let mut environment = None;
        let mut node = None;
        let mut policy = None;
        let mut db = 0u8;
        for (k, v, col) in cur.pairs()? {
            match k.as_str() {
                "key" => {
                    key = Some(
                        parse_api_key(&v)
                            .ok_or((col, format!("'{v}' is not an API key (ak_1 … ak_5)")))?,
                    )
                }
                "merchant" => {
                    merchant = Some(
                        parse_merchant(&v)
                            .ok_or((col, format!("'{v}' is not a merchant (1, 2)")))?,
                    )
                }
                "env" => {
                    environment =
                        Some(parse_env(&v).ok_or((col, format!("env=test or live, not '{v}'")))?)
                }
                "node" => {
                    node = Some(
                        v.parse::<u8>()
                            .map_err(|_| (col, format!("'{v}' is not a node number")))?,
                    )
                }
                "client" => {
                    crate::worlds::parse_policy(&v).map_err(|e| (col + 7, e))?;
                    policy = Some(v)
                }
                "db" => {
                    db = v
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
        let keys = default_api_keys();
        let spec = |id| {
            keys.iter()
                .chain([rotated_key_spec()].iter())
                .find(|k| k.id == id)
                .copied()
        };
        let api_key = match (key, merchant, environment) {
            (Some(k), m, e) => {
                if let Some(s) = spec(k) {
                    if m.is_some_and(|m| m != s.merchant) || e.is_some_and(|e| e != s.environment) {
                        return err(
                            ncol,
                            format!("key {k} belongs to {} {}", s.merchant, s.environment),
                        );
                    }
                }
                k
            }
            (None, m, e) => {
                let m = m.unwrap_or(MerchantId(1));
                let e = e.unwrap_or(Environment::Test);
                keys.iter()
                    .find(|k| k.merchant == m && k.environment == e && !k.read_only)
                    .map(|k| k.id)
                    .ok_or((ncol, format!("no API key is issued for {m} {e}")))?
            }
        };
        let owner = spec(api_key);
        let node = match node {
            Some(n) => {
                if self.servers.iter().any(|s| s.node == n) {
                    return err(
                        ncol,
                        format!(
                            "node {n} is already server {}",
                            self.servers
                                .iter()
                                .find(|s| s.node == n)
                                .map(|s| s.name.as_str())
                                .unwrap_or("?")
                        ),
                    );
                }
                n
            }
            None => (0..=u8::MAX)
                .find(|n| !self.servers.iter().any(|s| s.node == *n))
                .ok_or((ncol, "too many servers".to_owned()))?,
        };
        self.declared = true;
        self.servers.push(Server {
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

    fn webhooks_line(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
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
                    environment =
                        Some(parse_env(&v).ok_or((col, format!("env=test or live, not '{v}'")))?)
                }
                "to" => {
                    let s = self
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

    fn assume_line(&mut self, cur: &mut Cursor) -> Result<(), LineError> {
        let (id, col) = cur.expect_word("an assumption ID (A-CKO-CONFLICT)")?;
        let a = Assumption::ALL.iter().find(|a| a.id() == id).ok_or((
            col,
            format!("unknown assumption '{id}' (see model/ASSUMPTIONS.md)"),
        ))?;
        cur.end()?;
        if !self.assumptions.contains(a) {
            self.assumptions.push(*a);
        }
        Ok(())
    }

    pub(super) fn unknown_server(&self, name: &str) -> String {
        let names: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
        format!("unknown server '{name}' (servers: {})", names.join(", "))
    }

    pub(super) fn server(&self, name: &str, col: u32) -> Result<usize, LineError> {
        if let Some(i) = self.servers.iter().position(|s| s.name == name) {
            return Ok(i);
        }
        // `merchant-N`, as the world and its traces name nodes.
        if let Some(n) = name
            .strip_prefix("merchant-")
            .and_then(|n| n.parse::<u8>().ok())
        {
            if let Some(i) = self.servers.iter().position(|s| s.node == n) {
                return Ok(i);
            }
        }
        err(col, self.unknown_server(name))
    }

    pub(super) fn client_server(&self, name: &str, col: u32) -> Result<usize, LineError> {
        let i = self.server(name, col)?;
        if self.servers[i].policy.is_none() {
            return err(
                col,
                format!(
                    "server {name} is a scripted sender; declare it with a client policy (server {name} client=reference) to crash it or give it business commands"
                ),
            );
        }
        Ok(i)
    }

    fn config(&self, file: &str) -> WorldConfig {
        let clients = self
            .servers
            .iter()
            .filter_map(|s| {
                s.policy.as_ref().map(|p| ClientSpec {
                    node: s.node,
                    api_key: s.api_key,
                    policy: crate::worlds::parse_policy(p).expect("checked when parsed"),
                    db: s.db,
                })
            })
            .collect();
        let webhooks = if !self.webhooks_set {
            // The first server (by node) of each merchant and environment gets its webhooks.
            let mut routes: Vec<(MerchantId, Environment, u8)> = Vec::new();
            let mut servers: Vec<&Server> = self.servers.iter().collect();
            servers.sort_by_key(|s| s.node);
            for s in servers {
                if let (Some(m), Some(e)) = (s.merchant, s.environment) {
                    if !routes.iter().any(|(rm, re, _)| *rm == m && *re == e) {
                        routes.push((m, e, s.node));
                    }
                }
            }
            routes
        } else {
            self.webhooks.clone()
        };
        let stem = std::path::Path::new(file)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(file);
        WorldConfig {
            name: format!("script:{stem}"),
            params: self.params.clone(),
            budget: Budget::UNLIMITED,
            immediate_inbox: self.immediate_inbox,
            clients,
            workload: self.workload.clone(),
            jitter: self.jitter,
            webhooks,
            ..WorldConfig::default()
        }
    }
}

/// The `use` settings that set a platform parameter.
pub(crate) const PARAM_NAMES: &[&str] = &[
    "retention",
    "sync_wait",
    "concurrent_wait_timeout",
    "attempts_max",
    "payment_ttl",
    "session_ttl",
    "verify_interval",
    "auto_query_window",
    "manual_review_requery",
    "retry_after",
    "key_len_max",
    "webhook_redeliveries_max",
    "webhook_redelivery_delay",
    "fee_rate_bps",
];

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
    if RESERVED.contains(&name) {
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

pub(super) fn parse_env(s: &str) -> Option<Environment> {
    match s {
        "test" => Some(Environment::Test),
        "live" => Some(Environment::Live),
        _ => None,
    }
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
    Some(Millis(total))
}
