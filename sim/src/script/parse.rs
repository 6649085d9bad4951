//! The parser: a script file to a [`Script`], or its `file:line:column` errors.
//!
//! One pass, one line at a time. A statement with an error is reported and skipped, and
//! parsing goes on at the next line (statements are lines; there are no blocks), so one
//! run names every error of a file, as a compiler does. Settings (`use`, `server`,
//! `webhooks`) come before the first step; every name a statement uses (a server, a
//! property, an assumption, a field of an expectation) is checked here, so that a script
//! that parses runs.

use super::ast::*;
use super::cursor::{Cursor, Parsed, fail};
use super::{ERRORS_SHOWN, ScriptError, ScriptErrors};
use crate::config::{Budget, ClientSpec};
use payhub_model::{Environment, MerchantId};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::path::Path;
use std::rc::Rc;

/// Parses a script, or fails with its first error. `properties` are the names
/// `expect violation` may use.
pub fn parse(file: &str, bytes: &[u8], properties: &[&str]) -> Result<Script, ScriptError> {
    parse_all(file, bytes, properties).map_err(ScriptErrors::first)
}

/// Parses a script, or fails with every error of the file (the first [`ERRORS_SHOWN`]
/// in file order, and how many there are): one per statement, the statement skipped
/// and parsing resumed at the next line.
pub fn parse_all(file: &str, bytes: &[u8], properties: &[&str]) -> Result<Script, ScriptErrors> {
    let text = decode(file, bytes)?;
    // A byte-order mark is not part of the first statement.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let properties = properties.iter().map(|s| s.to_string()).collect();
    let mut p = Parser {
        properties,
        ..Parser::default()
    };
    let (file, mut errors) = (file.to_owned(), ScriptErrors::default());
    let source: Vec<String> = text.lines().map(str::to_owned).collect();
    for (i, line) in source.iter().enumerate() {
        let n = i as u32 + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        p.cascade.set(false);
        if let Err((column, message)) = p.line(n, line) {
            // An error that only follows from an earlier one is not reported again.
            if p.cascade.get() {
                continue;
            }
            errors.total += 1;
            if errors.errors.len() < ERRORS_SHOWN {
                let error = ScriptError::new(&file, n, column, message);
                errors.errors.push(error);
            }
        }
    }
    if errors.total > 0 {
        return Err(ScriptErrors { file, ..errors });
    }
    p.finish_settings();
    let first = source.first().map(|l| l.trim());
    let title = first.and_then(|l| l.strip_prefix('#')).map(str::trim);
    p.script.title = title.filter(|t| !t.is_empty()).map(str::to_owned);
    p.complete_config(&file);
    Ok(Script {
        file,
        source,
        ..p.script
    })
}

/// The file as text: UTF-8 without NUL bytes, or an error at the first bad byte.
fn decode<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, ScriptError> {
    let at = |byte: usize, what: &str| {
        let before = &bytes[..byte];
        let line = before.iter().filter(|b| **b == b'\n').count() as u32 + 1;
        let newline = before.iter().rposition(|b| *b == b'\n');
        let start = newline.map_or(0, |i| i + 1);
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

#[derive(Default)]
pub(super) struct Parser {
    pub(super) properties: Vec<String>,
    /// The script read so far (its world's `config` completed when the file is read).
    pub(super) script: Script,
    /// The client servers' readings of the contract's contradictions (`use client …`).
    pub(super) readings: crate::config::Readings,
    /// Whether a `server` line was seen (else A and B exist).
    pub(super) declared: bool,
    /// Whether the first step was seen (settings are closed).
    pub(super) started: bool,
    /// The routing of `webhooks` lines, which replaces the default one (`webhooks none`: empty).
    pub(super) webhooks: Option<Vec<(MerchantId, Environment, u8)>>,
    /// Servers that have sent a request line so far (`usize::MAX`: any server).
    pub(super) requested: BTreeSet<usize>,
    /// Servers whose `server` line had an error: a later use of the name is not
    /// reported as an unknown server.
    pub(super) unsure: BTreeSet<String>,
    /// Set when the line's error names an unsure server (it follows from that error).
    pub(super) cascade: Cell<bool>,
    /// Bytes every repeat of the script has expanded to (bounded: [`super::cursor::EXPANDED_MAX`]).
    expanded: Rc<Cell<usize>>,
}

impl Parser {
    fn line(&mut self, n: u32, line: &str) -> Parsed<()> {
        let mut cur = Cursor::sharing(line, self.expanded.clone());
        let col = cur.col();
        let (first, _) = cur.word().expect("a non-blank line");
        let (line, column) = (n, col);
        let pos = Pos { line, column };
        // Settings.
        let open = self.settings_open(col);
        match first.as_str() {
            "use" => return open.and_then(|()| self.use_line(&mut cur)),
            "server" => {
                let name = cur.peek_word();
                let read = open.and_then(|()| self.server_line(&mut cur));
                if let (Err(_), Some(name)) = (&read, name)
                    && self.script.servers.iter().all(|s| s.name != name)
                {
                    // The file declares its servers (A and B are not there).
                    self.declared = true;
                    self.unsure.insert(name);
                }
                return read;
            }
            "webhooks" => return open.and_then(|()| self.webhooks_line(&mut cur)),
            "assume" | "assume:" => return self.assume_line(&mut cur),
            "expect" if cur.eat("violation") => return self.expect_violation(pos, &mut cur),
            _ => {}
        }
        self.finish_settings();
        let action = self.action(&first, col, &mut cur)?;
        cur.end()?;
        if let Action::Request { server, .. } = &action {
            self.requested.insert(*server);
            self.requested.insert(usize::MAX);
        }
        self.script.statements.push(Statement { pos, action });
        Ok(())
    }

    /// `expect violation NAME`: the property the script must break.
    fn expect_violation(&mut self, pos: Pos, cur: &mut Cursor) -> Parsed<()> {
        let (name, column) = cur.expect_word("a property name")?;
        if !self.properties.contains(&name) {
            let names = self.properties.join(", ");
            fail!(column, "unknown property '{name}' (properties: {names})");
        }
        if let Some((_, first)) = &self.script.expected_violation {
            fail!(
                pos.column,
                "a second 'expect violation' (the first is on line {})",
                first.line
            );
        }
        cur.end()?;
        self.script.expected_violation = Some((name, Pos { column, ..pos }));
        Ok(())
    }

    fn settings_open(&self, col: u32) -> Parsed<()> {
        if self.started {
            fail!(
                col,
                "settings (use, server, webhooks) must come before the first step"
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
            for (node, name) in [(0, "A"), (1, "B")] {
                self.script.servers.push(Server {
                    name: name.to_owned(),
                    node,
                    api_key: payhub_model::api_keys::M1_TEST,
                    merchant: Some(MerchantId(1)),
                    environment: Some(Environment::Test),
                    policy: None,
                    db: 0,
                });
            }
        }
    }

    pub(super) fn unknown_server(&self, name: &str) -> String {
        if self.unsure.contains(name) {
            self.cascade.set(true);
        }
        let servers = &self.script.servers;
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        // `upstrem:` reads as a server named `upstrem`: name the statement it nearly is.
        let statements = super::parse_step::PREFIXES.iter().copied();
        let hint = super::suggest::hint(name, names.iter().copied().chain(statements));
        if names.is_empty() {
            return format!("unknown server '{name}'{hint} (no server is declared)");
        }
        let names = names.join(", ");
        format!("unknown server '{name}'{hint} (servers: {names})")
    }

    pub(super) fn server(&self, name: &str, col: u32) -> Parsed<usize> {
        // `merchant-N`, as the world and its traces name nodes.
        let node: Option<u8> = name.strip_prefix("merchant-").and_then(|n| n.parse().ok());
        let servers = &self.script.servers;
        let by_node = || servers.iter().position(|s| Some(s.node) == node);
        let found = servers.iter().position(|s| s.name == name).or_else(by_node);
        found.ok_or_else(|| (col, self.unknown_server(name)))
    }

    pub(super) fn client_server(&self, name: &str, col: u32) -> Parsed<usize> {
        let i = self.server(name, col)?;
        if self.script.servers[i].policy.is_none() {
            fail!(
                col,
                "server {name} is a scripted sender; declare it with a client policy (server {name} client=reference) to crash it or give it business commands"
            );
        }
        Ok(i)
    }

    /// Completes the world's settings: its name, budget, clients and webhook routing.
    fn complete_config(&mut self, file: &str) {
        let client = |s: &Server| {
            let policy =
                crate::worlds::parse_policy(s.policy.as_ref()?).expect("checked when parsed");
            let (node, api_key, db, readings) = (s.node, s.api_key, s.db, self.readings);
            Some(ClientSpec {
                node,
                api_key,
                policy,
                db,
                readings,
            })
        };
        let clients = self.script.servers.iter().filter_map(client).collect();
        let mut webhooks = self.webhooks.clone().unwrap_or_default();
        if self.webhooks.is_none() {
            // The first server (by node) of each merchant and environment gets its webhooks.
            let mut servers: Vec<&Server> = self.script.servers.iter().collect();
            servers.sort_by_key(|s| s.node);
            for s in servers {
                if let (Some(m), Some(e)) = (s.merchant, s.environment)
                    && !webhooks.iter().any(|(rm, re, _)| *rm == m && *re == e)
                {
                    webhooks.push((m, e, s.node));
                }
            }
        }
        let stem = Path::new(file).file_stem().and_then(|s| s.to_str());
        let config = &mut self.script.config;
        config.name = format!("script:{}", stem.unwrap_or(file));
        config.budget = Budget::UNLIMITED;
        config.clients = clients;
        config.webhooks = webhooks;
    }
}
