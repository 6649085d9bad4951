//! The kill matrix over HTTP: for every platform and parameter mutant of the zoo,
//! `payhub-verify serve --mutant NAME` started as a child on a free loopback port and a
//! conform sweep run against it until it finds a violation (then shrunk).
//!
//! Each mutant is tried first against a sandbox on the manual test clock (conform moves
//! it; its branches seeded, so that both alternatives of S4, S5 and S8 are taken), then
//! on the manual clock with the second alternatives always (a bug in a branch a seeded
//! mix takes rarely), then, if neither found it, against one on the real clock whose
//! upstream answers 150 ms late (the sandbox's `slow_upstream` fault): a race needs a
//! window in which a second request meets the first one in flight. A mutant none finds
//! is listed with the reason the wire cannot see it, if one is known, else as missed.

use super::profile::{CardOutcome, Loaded};
use super::report::Finding;
use super::{SweepOptions, connect, sweep};

/// Cases against the real-clock sandbox, per mutant.
pub const REAL_CLOCK_CASES: usize = 60;
use payhub_model::{Mutant, ParameterMutant};
use serde::Serialize;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub mutant: String,
    pub found: bool,
    /// The rules of the violation that found it.
    pub rules: Vec<&'static str>,
    /// The sandbox it was found against.
    pub setup: Option<String>,
    pub cases: usize,
    pub seconds_to_detection: Option<f64>,
    pub shrunk_requests: Option<usize>,
    pub reason: Option<String>,
    #[serde(skip)]
    pub finding: Option<Finding>,
}

/// Why the wire cannot show a mutant to conform (what it would need), for a target
/// described by `profile`: some need a control or a test card the profile may lack.
pub fn blind_reason(name: &str, profile: &Loaded) -> Option<String> {
    let controls = &profile.profile.controls;
    Some(match name {
        "scope_without_merchant" => {
            "needs two merchants in one world: the sandbox's setups (each merchant a session of its own, and `serve --shared-merchants`) gave the bug nothing to collide with".into()
        }
        "lock_expires_before_upstream" => {
            "needs a same-key request to arrive after the 10 s concurrent wait and before the upstream answers (15 s): an upstream over 10 s late in real time, past the sweeps' bounds (the manual clock's advance cannot come between a request and its answer)".into()
        }
        "cancel_accepted_marks_canceled" if profile.card(CardOutcome::SlowCancel).is_none() => {
            "needs a cancel the acquirer does not answer within the synchronous wait (a 202): the profile has no card with outcome slow_cancel (the sandbox's card G)".into()
        }
        "rate_limit_binds_key" if controls.rate_limit.is_none() => {
            "needs the target to rate-limit on demand (429): the profile has no controls.rate_limit, and a 429 the proxy made up is not the target's".into()
        }
        "pause_creates_payment" | "pause_answers_internal_error" if controls.pause.is_none() => {
            "needs the target's channel paused (503 temporarily_unavailable) on demand: the profile has no controls.pause".into()
        }
        "query_triggers_charge" | "refund_resent_when_unknown" => {
            "the second upstream call shows on the acquirer's ledger, not in any answer: the wire cannot see it".into()
        }
        "sync-wait-90s" => {
            "changes only how long the platform holds a create or confirm before its 202 (UPSTREAM-01): conform judges what an answer says against the model, not how long after the request it came".into()
        }
        "manual-review-requery-48h" => {
            "changes only how often the platform queries the acquirer under manual_review: upstream traffic the wire does not carry".into()
        }
        _ => return None,
    })
}

struct Child2 {
    child: Child,
}

impl Drop for Child2 {
    fn drop(&mut self) {
        // A started platform leads a process group of its own: the shell and everything
        // it started go with it (for a child that leads none, this finds no group).
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on a process group id; no memory is touched.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `serve` with `args` on a free port; its address.
fn start_serve(args: &[&str]) -> Result<(Child2, String), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut child = Command::new(exe)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start serve: {e}"))?;
    let stdout = child.stdout.take().ok_or("serve has no stdout")?;
    let guard = Child2 { child };
    let mut lines = BufReader::new(stdout);
    let mut first = String::new();
    lines
        .read_line(&mut first)
        .map_err(|e| format!("serve printed nothing: {e}"))?;
    std::thread::spawn(move || for _ in lines.lines() {});
    let url = first
        .trim()
        .rsplit(' ')
        .next()
        .filter(|u| u.starts_with("http://"))
        .ok_or_else(|| format!("serve's first line is not its address: {first:?}"))?
        .to_owned();
    Ok((guard, url))
}

/// The setup whose sandbox keeps every merchant in one session.
const SHARED: &str = "manual clock, merchants in one session";

/// The profile for `serve --shared-merchants`: one namespace, so ids are not per
/// merchant and the namespace's endpoints are POSTed once (docs/profiles/sandbox-shared.json).
pub fn shared(profile: &Loaded) -> Loaded {
    let mut p = profile.clone();
    let once = |path: &mut Option<String>| {
        if let Some(x) = path {
            *x = x.replace("?merchant={merchant}", "");
        }
    };
    p.profile.isolation.ids_per_merchant = false;
    once(&mut p.profile.isolation.reset);
    if let Some(a) = &mut p.profile.clock.advance {
        a.path = a.path.replace("?merchant={merchant}", "");
    }
    if let Some(c) = &mut p.profile.controls.pause {
        c.path = c.path.replace("?merchant={merchant}", "");
    }
    p
}

/// The sandbox setups a mutant is tried against, in order.
fn setups(dir: &std::path::Path) -> Result<Vec<(&'static str, Vec<String>)>, String> {
    let plan = dir.join("slow-upstream.json");
    crate::whole_file::write(
        &plan,
        r#"{"faults":[{"endpoint":"create_payment","probability":1.0,"action":"slow_upstream","ms":150},
                      {"endpoint":"confirm_payment","probability":1.0,"action":"slow_upstream","ms":150}]}"#,
    )?;
    Ok(vec![
        ("manual clock", vec!["--clock".into(), "manual".into()]),
        (
            "manual clock, branches b",
            vec![
                "--clock".into(),
                "manual".into(),
                "--branches".into(),
                "b".into(),
            ],
        ),
        (
            SHARED,
            vec![
                "--clock".into(),
                "manual".into(),
                "--shared-merchants".into(),
            ],
        ),
        (
            "real clock, upstream 150 ms late",
            vec![
                "--clock".into(),
                "real".into(),
                "--faults".into(),
                plan.display().to_string(),
            ],
        ),
    ])
}

pub async fn kill_matrix(
    profile: &Loaded,
    o: &SweepOptions,
    only: &[String],
    max_states: usize,
) -> Result<Vec<Row>, String> {
    let mut names: Vec<String> = Mutant::ALL
        .iter()
        .map(|m| m.name().to_owned())
        .chain(ParameterMutant::ALL.iter().map(|m| m.name().to_owned()))
        .collect();
    if !only.is_empty() {
        if let Some(bad) = only.iter().find(|n| !names.contains(n)) {
            return Err(format!(
                "--mutants: {bad} is not a platform or parameter mutant of the zoo"
            ));
        }
        names.retain(|n| only.contains(n));
    }
    let dir = std::env::temp_dir().join(format!("payhub-conform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let setups = setups(&dir)?;
    let mut rows = Vec::new();
    for name in names {
        let mut row = Row {
            mutant: name.clone(),
            found: false,
            rules: Vec::new(),
            setup: None,
            cases: 0,
            seconds_to_detection: None,
            shrunk_requests: None,
            reason: None,
            finding: None,
        };
        let started = Instant::now();
        for (label, args) in &setups {
            let phase_at = started.elapsed().as_secs_f64();
            let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
            args.extend(["--mutant", &name]);
            let (_child, url) = start_serve(&args)?;
            let mut p = if *label == SHARED {
                shared(profile)
            } else {
                profile.clone()
            };
            let mut o = o.clone();
            if label.starts_with("real clock") {
                // The real clock: no clock moves, no cards that wait out the synchronous
                // wait in real time, and fewer cases (each create takes 150 ms).
                p.profile.clock.advance = None;
                p.profile.cards.retain(|c| {
                    matches!(
                        c.outcome,
                        CardOutcome::Approve | CardOutcome::Decline | CardOutcome::Fail
                    )
                });
                // The controls' cases (429, 503) were tried on the manual clock.
                p.profile.controls = Default::default();
                o.seeds.truncate(REAL_CLOCK_CASES);
            }
            let target = connect(&url, p, max_states).await?;
            let report = sweep(&target, &url, &o, Some(())).await?;
            row.cases += report.cases_run;
            if let Some(f) = report.violations.into_iter().next() {
                row.found = true;
                row.setup = Some((*label).to_owned());
                // Until the violation: earlier setups, the sandbox's start, the cases.
                row.seconds_to_detection = Some(phase_at + f.detected_after_s);
                row.shrunk_requests = Some(f.shrunk_requests);
                row.rules = f.rules.clone();
                row.finding = Some(f);
                break;
            }
        }
        if !row.found {
            row.reason = blind_reason(&name, profile);
        }
        eprintln!(
            "conform kill matrix: {name}: {} ({} cases, {:.1}s)",
            if row.found { "found" } else { "not found" },
            row.cases,
            started.elapsed().as_secs_f64()
        );
        rows.push(row);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rows)
}

/// Starts `command` through the shell with `{mutant}` replaced, in a process group of
/// its own (killed whole when dropped); the base URL it prints once it listens.
fn start_command(command: &str, mutant: &str) -> Result<(Child2, String), String> {
    use std::os::unix::process::CommandExt as _;
    let line = command.replace("{mutant}", mutant);
    let mut child = Command::new("sh")
        .args(["-c", &line])
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("--start: cannot run {line:?}: {e}"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or("--start: the command has no stdout")?;
    let guard = Child2 { child };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut found = false;
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !found && let Some(url) = l.split_whitespace().find(|w| w.starts_with("http://")) {
                found = true;
                let _ = tx.send(url.trim_end_matches(['.', ',', ';']).to_owned());
            }
        }
    });
    let url = rx.recv_timeout(START_TIMEOUT).map_err(|_| {
        format!("--start: {line:?} printed no http:// address within {START_TIMEOUT:?}")
    })?;
    Ok((guard, url))
}

/// How long a started platform has to print its address.
const START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The kill matrix of any platform: each planted bug of `names` started by `command`
/// (`{mutant}` replaced) and swept until a violation; not found is missed (the tool
/// knows no reason the wire cannot show another platform's bug).
pub async fn kill_matrix_started(
    profile: &Loaded,
    o: &SweepOptions,
    command: &str,
    names: &[String],
    max_states: usize,
) -> Result<Vec<Row>, String> {
    if names.is_empty() {
        return Err("--start needs --mutants: the names of the planted bugs to start".into());
    }
    let mut rows = Vec::new();
    for name in names {
        let started = Instant::now();
        let (_child, url) = start_command(command, name)?;
        let target = connect(&url, profile.clone(), max_states).await?;
        let report = sweep(&target, &url, o, Some(())).await?;
        let f = report.violations.into_iter().next();
        eprintln!(
            "conform kill matrix: {name}: {} ({} cases, {:.1}s)",
            if f.is_some() { "found" } else { "not found" },
            report.cases_run,
            started.elapsed().as_secs_f64()
        );
        rows.push(Row {
            mutant: name.clone(),
            found: f.is_some(),
            rules: f.as_ref().map(|f| f.rules.clone()).unwrap_or_default(),
            setup: f
                .as_ref()
                .map(|_| "the platform's start command".to_owned()),
            cases: report.cases_run,
            seconds_to_detection: f.as_ref().map(|f| f.detected_after_s),
            shrunk_requests: f.as_ref().map(|f| f.shrunk_requests),
            reason: None,
            finding: f,
        });
    }
    Ok(rows)
}

pub fn text(rows: &[Row]) -> String {
    let found = rows.iter().filter(|r| r.found).count();
    let blind = rows
        .iter()
        .filter(|r| !r.found && r.reason.is_some())
        .count();
    let mut s = format!(
        "conform kill matrix over HTTP: {found} of {} mutants found, {blind} the wire cannot see, {} missed\n",
        rows.len(),
        rows.len() - found - blind
    );
    for r in rows {
        if r.found {
            s.push_str(&format!(
                "  {:<40} found    shrunk to {:>2} requests, {:>5.1}s, {:>3} cases ({}) [{}]\n",
                r.mutant,
                r.shrunk_requests.unwrap_or(0),
                r.seconds_to_detection.unwrap_or(0.0),
                r.cases,
                r.setup.as_deref().unwrap_or(""),
                r.rules.join(", ")
            ));
        } else {
            s.push_str(&format!(
                "  {:<40} {}  after {} cases{}\n",
                r.mutant,
                if r.reason.is_some() {
                    "blind "
                } else {
                    "MISSED"
                },
                r.cases,
                r.reason
                    .as_deref()
                    .map(|x| format!(": {x}"))
                    .unwrap_or_default()
            ));
        }
    }
    s
}

pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| mutant | over HTTP | rules | shrunk requests | time to detection | cases | setup / reason |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            r.mutant,
            if r.found {
                "found"
            } else if r.reason.is_some() {
                "blind"
            } else {
                "missed"
            },
            r.rules.join(", "),
            r.shrunk_requests.map(|n| n.to_string()).unwrap_or_default(),
            r.seconds_to_detection
                .map(|t| format!("{t:.1} s"))
                .unwrap_or_default(),
            r.cases,
            r.setup.as_deref().or(r.reason.as_deref()).unwrap_or("")
        ));
    }
    s
}
