//! The round trip: a tape (the choices of a run, on a world configuration) written as a
//! script that [`super::run`] reproduces step for step.
//!
//! The script declares the world (`use … delivery=manual`, one `server` line per node,
//! the webhook routing), then writes one statement per choice: request lines for sends,
//! business commands for client nodes, `env:` lines for controls, and the world's own
//! choice labels (`deliver m3`, `acquire u1 approve`, `tick`) for the rest. Under each
//! step, comments show the trace lines it caused. A run that violated a property ends
//! with `expect violation NAME`, so the script passes while the bug is there and fails
//! once it is fixed (or when the line is removed).

use super::command::render_command;
use super::request;
use crate::choice::Choice;
use crate::config::WorldConfig;
use crate::driver::Violation;
use crate::error::ExportError;
use crate::trace::Trace;
use crate::world::World;
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::event::BusinessOrder;
use payhub_model::{ApiKeyId, Control, PlatformParams};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Writes `tape`, run on `config`, as a script; `violation` names the property the run
/// violates, if any; `about` becomes the script's first (title) comment line.
pub fn script_from_tape(
    config: &WorldConfig,
    tape: &[Choice],
    violation: Option<&str>,
    about: &str,
) -> Result<String, ExportError> {
    script_from_tape_filed(config, tape, &BTreeMap::new(), violation, about)
}

/// [`script_from_tape`] for a run whose sends were filed under business orders outside
/// the tape (the sandbox's `business.rs`): `filed` maps a step of the tape (a
/// `Choice::Send`) to the business order its request's origin carried, written as
/// `NAME: for order ORDER db=N POST …`.
pub fn script_from_tape_filed(
    config: &WorldConfig,
    tape: &[Choice],
    filed: &BTreeMap<usize, BusinessOrder>,
    violation: Option<&str>,
    about: &str,
) -> Result<String, ExportError> {
    exportable(config)?;
    let send = |i: &usize| matches!(tape.get(*i), Some(Choice::Send { .. }));
    if let Some(i) = filed.keys().find(|i| !send(i)) {
        return Err(ExportError::FiledNotARequest(i + 1));
    }
    let nodes = Nodes::of(config, tape)?;
    let mut s = String::new();
    write_settings(&mut s, config, &nodes, about);
    let comments = step_comments(config, tape)?;
    for (i, choice) in tape.iter().enumerate() {
        let mut statement = nodes.statement(config, i, choice)?;
        if let (Some(b), Choice::Send { merchant, .. }) = (filed.get(&i), choice) {
            let (name, line) = statement.split_once(": ").expect("a request line");
            // The server line's database: its client's, else 0 (as `server` sets it).
            let db = Some(b.db).filter(|db| *db != config.client(*merchant).map_or(0, |c| c.db));
            let db = db.map(|db| format!(" db={db}")).unwrap_or_default();
            let order = request::render_value(&b.order);
            statement = format!("{name}: for order {order}{db} {line}");
        }
        let _ = writeln!(s, "{statement}");
        for c in comments.get(&(i as u32)).into_iter().flatten() {
            let _ = writeln!(s, "#   {c}");
        }
    }
    if let Some(name) = violation {
        let _ = writeln!(
            s,
            "# The last step violates {name}; without the next line the run fails."
        );
        let _ = writeln!(s, "expect violation {name}");
    }
    Ok(s)
}

/// Whether a script can set up this world: the reference platform, the default
/// currencies and API keys.
fn exportable(config: &WorldConfig) -> Result<(), ExportError> {
    let defaults = PlatformParams::default();
    if let Some(mutant) = config.variant.mutant() {
        return Err(ExportError::Mutant(mutant.name()));
    }
    if config.params.currencies != defaults.currencies {
        return Err(ExportError::Currencies);
    }
    if config.api_keys != default_api_keys() || config.spare_keys != vec![rotated_key_spec()] {
        return Err(ExportError::ApiKeys);
    }
    Ok(())
}

/// Every node the run involves, with the key its requests carry.
struct Nodes(BTreeMap<u8, Option<ApiKeyId>>);

impl Nodes {
    fn of(config: &WorldConfig, tape: &[Choice]) -> Result<Nodes, ExportError> {
        let mut nodes: BTreeMap<u8, Option<ApiKeyId>> = BTreeMap::new();
        for c in &config.clients {
            nodes.insert(c.node, Some(c.api_key));
        }
        for (_, _, n) in &config.webhooks {
            nodes.entry(*n).or_insert(None);
        }
        for choice in tape {
            match choice {
                Choice::Send { merchant, request } => {
                    let key = nodes.entry(*merchant).or_insert(None);
                    key.get_or_insert(request.api_key);
                }
                Choice::Command { item, .. } => {
                    let work = config.workload.get(*item as usize);
                    let work = work.ok_or(ExportError::NoWorkItem(*item))?;
                    nodes.entry(work.node).or_insert(None);
                }
                Choice::Crash { merchant } | Choice::Restart { merchant } => {
                    nodes.entry(*merchant).or_insert(None);
                }
                _ => {}
            }
        }
        Ok(Nodes(nodes))
    }

    /// The server name of a node: `A` for node 0, … `Z`, then `S26`, ….
    fn name(node: u8) -> String {
        if node < 26 {
            ((b'A' + node) as char).to_string()
        } else {
            format!("S{node}")
        }
    }

    fn key_of(&self, node: u8) -> ApiKeyId {
        let key = self.0.get(&node).copied().flatten();
        key.unwrap_or(payhub_model::api_keys::M1_TEST)
    }

    /// The statement of step `i`: checked to read back as the same choice where the
    /// rendering could lose something (requests, durations).
    fn statement(
        &self,
        config: &WorldConfig,
        i: usize,
        choice: &Choice,
    ) -> Result<String, ExportError> {
        let name = Nodes::name;
        Ok(match choice {
            Choice::Send { merchant, request } => {
                let line = request::render(request, self.key_of(*merchant));
                let mut cur = super::cursor::Cursor::new(&line);
                let back = request::parse(&mut cur, self.key_of(*merchant)).map_err(
                    |(column, message)| ExportError::RequestUnreadable {
                        step: i + 1,
                        line: line.clone(),
                        column,
                        message,
                    },
                )?;
                if back != **request {
                    return Err(ExportError::RequestChanged { step: i + 1, line });
                }
                format!("{}: {line}", name(*merchant))
            }
            Choice::Command { item, crash_after } => {
                let work = &config.workload[*item as usize];
                let (server, command) = (name(work.node), render_command(&work.command));
                let then = if *crash_after { " then crash" } else { "" };
                format!("{server}: {command}{then}")
            }
            Choice::Crash { merchant } => format!("crash {}", name(*merchant)),
            Choice::Restart { merchant } => format!("restart {}", name(*merchant)),
            Choice::Control(c) => format!("env: {}", control(c)?),
            Choice::Tick => "tick".to_owned(),
            Choice::Advance(d) => {
                let text = d.to_string();
                if super::parse_settings::parse_duration(&text) != Some(*d) {
                    return Err(ExportError::DurationChanged { step: i + 1, text });
                }
                format!("advance {text}")
            }
            other => other.to_string(),
        })
    }
}

/// The title comments, `use`, one `server` line per node, and the webhook routing.
fn write_settings(s: &mut String, config: &WorldConfig, nodes: &Nodes, about: &str) {
    let world = &config.name;
    let _ = write!(
        s,
        "# {about}\n# Written by payhub-verify from a run of the world '{world}'; `payhub-verify run FILE` replays it.\n\
         # One statement per choice of the world; the comments under a step are the trace it caused.\n\
         use platform=reference delivery=manual"
    );
    if config.immediate_inbox {
        s.push_str(" inbox=immediate");
    }
    if config.jitter {
        s.push_str(" jitter=on");
    }
    for (setting, changed) in super::parse_settings::param_settings(&config.params, false) {
        if changed {
            let _ = write!(s, " {setting}");
        }
    }
    s.push('\n');
    // A script's client servers share one reading of each contradiction.
    let readings = config.clients.first().map(|c| c.readings);
    if let Some(r) = readings.filter(|r| *r != crate::config::Readings::default()) {
        let _ = writeln!(s, "use client {}", r.notation());
    }
    for node in nodes.0.keys() {
        let (name, key) = (Nodes::name(*node), nodes.key_of(*node));
        let _ = write!(s, "server {name} node={node} key={key}");
        if let Some(c) = config.client(*node) {
            let _ = write!(
                s,
                " client={} db={}",
                crate::worlds::policy_name(&c.policy),
                c.db
            );
        }
        s.push('\n');
    }
    if config.webhooks.is_empty() {
        s.push_str("webhooks none\n");
    }
    for (m, e, n) in &config.webhooks {
        let _ = writeln!(
            s,
            "webhooks merchant={} env={e} to={}",
            m.0,
            Nodes::name(*n)
        );
    }
}

/// The trace lines each step caused, by step, for the comments under it.
fn step_comments(
    config: &WorldConfig,
    tape: &[Choice],
) -> Result<BTreeMap<u32, Vec<String>>, ExportError> {
    let mut trace = Trace::new();
    let mut no_check = |_: &World<()>| -> Option<Violation> { None };
    crate::driver::replay(config, tape, &mut no_check, Some(&mut trace))
        .map_err(|(i, error)| ExportError::DoesNotReplay { step: i + 1, error })?;
    let text = trace.to_text();
    let lines: Vec<&str> = text.lines().collect();
    let mut comments: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    if lines.len() == trace.events.len() {
        for (e, line) in trace.events.iter().zip(lines) {
            comments.entry(e.step).or_default().push(line.to_owned());
        }
    }
    Ok(comments)
}

fn control(c: &Control) -> Result<String, ExportError> {
    let on_off = |on: bool| if on { "on" } else { "off" };
    Ok(match c {
        Control::SetRateLimited { merchant, on } => {
            format!("rate-limit {} merchant={}", on_off(*on), merchant.0)
        }
        Control::SetChannelPaused { on } => format!("pause-channel {}", on_off(*on)),
        Control::IssueApiKey(spec) if super::parse_settings::known_key(spec.id) == Some(*spec) => {
            format!("issue-key {}", spec.id)
        }
        Control::IssueApiKey(spec) => return Err(ExportError::UnknownKey(format!("{spec:?}"))),
        Control::RevokeApiKey(id) => format!("revoke-key {id}"),
        Control::SetFeeRate { bps } => format!("fee-rate {bps}"),
    })
}
