//! The kill matrix over HTTP: for every platform and parameter mutant of the zoo,
//! `payhub-verify serve --mutant NAME` started on a free loopback port and swept until a
//! violation, against each setup of [`setups`] in turn (the manual clock, its second
//! branches, merchants in one session, then the real clock with a late upstream, for
//! races). A mutant none finds is listed with why the wire cannot see it, else missed.

use super::Finding;
use super::profile::{CardOutcome, Loaded};
use super::{SweepOptions, connect, sweep};
use crate::serve::seam::EdgeSeam;

/// Cases against the real-clock sandbox, per mutant.
pub const REAL_CLOCK_CASES: usize = 60;
use payhub_model::{Mutant, ParameterMutant};
use serde::Serialize;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

#[derive(Clone, Debug, Default, Serialize)]
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

impl Row {
    /// Found under `setup` by `f`, `at` seconds after the mutant's first setup began.
    fn found(&mut self, setup: &str, at: f64, f: Finding) {
        self.found = true;
        self.setup = Some(setup.to_owned());
        self.seconds_to_detection = Some(at + f.detected_after_s);
        self.shrunk_requests = Some(f.shrunk_requests);
        self.rules = f.rules.clone();
        self.finding = Some(f);
    }
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
        "retention_replay_charged_anyway" => {
            "acts only on a confirm replayed past its key's 7-day retention on a platform that takes the reading confirm-past-retention:not-new-business; the sweeps' cases never replay a confirm that late, and the sandbox takes new-attempt".into()
        }
        "rejected_refund_sent_anyway" => {
            "acts only on a refund its review rejects, which the sandbox's parameters never do (refund_review_rejects_from: none); the refund it sends shows on the acquirer's ledger, not in an answer".into()
        }
        "card_retry_takes_current_fee" => {
            "needs the platform's fee rate changed between a Payment's creation and its card retry (ATTEMPT-06): a profile has no pricing control, so every case runs at one rate".into()
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

struct Child2(Child);

impl Drop for Child2 {
    fn drop(&mut self) {
        // A started platform leads a process group of its own: the shell and everything
        // it started go with it (for a child that leads none, this finds no group).
        if let Ok(pid) = i32::try_from(self.0.id()) {
            // SAFETY: kill(2) on a process group id; no memory is touched.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `serve` with `args` on a free port; its address.
fn start_serve(args: &[&str]) -> Result<(Child2, String), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut serve = Command::new(exe);
    serve.args(["serve", "--addr", "127.0.0.1:0"]).args(args);
    started(serve, "serve")
}

/// The setup whose sandbox keeps every merchant in one session.
const SHARED: &str = "manual clock, merchants in one session";

/// The profile for `serve --shared-merchants`: one namespace, so ids are not per
/// merchant and the namespace's endpoints are POSTed once (docs/profiles/sandbox-shared.json).
pub fn shared(profile: &Loaded) -> Loaded {
    let mut p = profile.clone();
    p.profile.isolation.ids_per_merchant = false;
    let q = &mut p.profile;
    let paths = (q.isolation.reset.iter_mut())
        .chain(q.clock.advance.iter_mut().map(|a| &mut a.path))
        .chain(q.controls.pause.iter_mut().map(|c| &mut c.path));
    for path in paths {
        *path = path.replace("?merchant={merchant}", "");
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
    let args = |a: &str| a.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let mut real = args("--clock real --faults");
    real.push(plan.display().to_string());
    Ok(vec![
        ("manual clock", args("--clock manual")),
        (
            "manual clock, branches b",
            args("--clock manual --branches b"),
        ),
        (SHARED, args("--clock manual --shared-merchants")),
        ("real clock, upstream 150 ms late", real),
    ])
}

/// The kill matrix: each mutant of the zoo (or of `only`) planted in a sandbox of each
/// setup in turn until one finds it; with `start`, each planted bug of `only` started by
/// that command (`{mutant}` replaced) instead, and not found is missed (the tool knows
/// no reason the wire cannot show another platform's bug).
pub async fn kill_matrix(
    profile: &Loaded,
    o: &SweepOptions,
    start: Option<&str>,
    only: &[String],
    max_states: usize,
) -> Result<Vec<Row>, String> {
    let parameters = ParameterMutant::ALL.iter().map(|m| m.name());
    let mut names: Vec<String> = Mutant::ALL
        .iter()
        .map(|m| m.name())
        .chain(parameters)
        .map(str::to_owned)
        .collect();
    if start.is_some() {
        if only.is_empty() {
            return Err("--start needs --mutants: the names of the planted bugs to start".into());
        }
        names = only.to_vec();
    } else if !only.is_empty() {
        if let Some(bad) = only.iter().find(|n| !names.contains(n)) {
            return Err(format!(
                "--mutants: {bad} is not a platform or parameter mutant of the zoo"
            ));
        }
        names.retain(|n| only.contains(n));
    }
    let dir = std::env::temp_dir().join(format!("payhub-conform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let setups = match start {
        Some(_) => vec![("the platform's start command", Vec::new())],
        None => setups(&dir)?,
    };
    let mut rows = Vec::new();
    for name in names {
        let mut row = Row {
            mutant: name.clone(),
            ..Row::default()
        };
        let started = Instant::now();
        for (label, args) in &setups {
            let phase_at = started.elapsed().as_secs_f64();
            let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
            args.extend(["--mutant", &name]);
            let (_child, url) = match start {
                Some(command) => start_command(command, &name)?,
                None => start_serve(&args)?,
            };
            let mut p = match *label {
                SHARED => shared(profile),
                _ => profile.clone(),
            };
            let mut o = o.clone();
            if label.starts_with("real clock") {
                // The real clock: no clock moves, no cards that wait out the synchronous
                // wait in real time, and fewer cases (each create takes 150 ms).
                p.profile.clock.advance = None;
                use CardOutcome::{Approve, Decline, Fail};
                (p.profile.cards).retain(|c| [Approve, Decline, Fail].contains(&c.outcome));
                // The controls' cases (429, 503) were tried on the manual clock.
                p.profile.controls = Default::default();
                o.seeds.truncate(REAL_CLOCK_CASES);
            }
            let target = connect(&url, p, max_states, EdgeSeam::REFERENCE).await?;
            let report = sweep(&target, &url, &o, Some(())).await?;
            row.cases += report.cases_run;
            if let Some(f) = report.violations.into_iter().next() {
                // Until the violation: earlier setups, the sandbox's start, the cases.
                row.found(label, phase_at, f);
                break;
            }
        }
        if !row.found && start.is_none() {
            row.reason = blind_reason(&name, profile);
        }
        let found = ["not found", "found"][usize::from(row.found)];
        let s = started.elapsed().as_secs_f64();
        eprintln!(
            "conform kill matrix: {name}: {found} ({} cases, {s:.1}s)",
            row.cases
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
    let mut sh = Command::new("sh");
    sh.args(["-c", &line]).process_group(0);
    started(sh, &format!("--start: {line:?}"))
}

/// Runs `command` (`what` in errors) and waits for the first `http://` word it prints.
fn started(mut command: Command, what: &str) -> Result<(Child2, String), String> {
    let child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn();
    let mut child = child.map_err(|e| format!("{what}: cannot start: {e}"))?;
    let stdout = child.stdout.take().ok_or(format!("{what}: no stdout"))?;
    let guard = Child2(child);
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
    let url = rx.recv_timeout(START_TIMEOUT);
    let url =
        url.map_err(|_| format!("{what}: printed no http:// address within {START_TIMEOUT:?}"))?;
    Ok((guard, url))
}

/// How long a started platform has to print its address.
const START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Mutants found, those the wire cannot see (blind), and those missed.
pub fn tally(rows: &[Row]) -> (usize, usize, usize) {
    let found = rows.iter().filter(|r| r.found).count();
    let blind = rows.iter().filter(|r| !r.found && r.reason.is_some());
    let blind = blind.count();
    (found, blind, rows.len() - found - blind)
}

pub fn text(rows: &[Row]) -> String {
    let (found, blind, missed) = tally(rows);
    let mut s = format!(
        "conform kill matrix over HTTP: {found} of {} mutants found, {blind} the wire cannot see, {missed} missed\n",
        rows.len()
    );
    for r in rows {
        s += &match (r.found, &r.reason) {
            (true, _) => format!(
                "  {:<40} found    shrunk to {:>2} requests, {:>5.1}s, {:>3} cases ({}) [{}]\n",
                r.mutant,
                r.shrunk_requests.unwrap_or(0),
                r.seconds_to_detection.unwrap_or(0.0),
                r.cases,
                r.setup.as_deref().unwrap_or(""),
                r.rules.join(", ")
            ),
            (false, Some(why)) => format!(
                "  {:<40} blind   after {} cases: {why}\n",
                r.mutant, r.cases
            ),
            (false, None) => format!("  {:<40} MISSED  after {} cases\n", r.mutant, r.cases),
        };
    }
    s
}

#[cfg(test)]
mod tests {
    /// The profile made for `serve --shared-merchants` is the one shipped for it.
    #[test]
    fn the_shared_merchants_profile_is_the_shipped_one() {
        let load = |file: &str| {
            let text = std::fs::read_to_string(format!("docs/profiles/{file}")).unwrap();
            super::Loaded::from_json(&text).unwrap()
        };
        let made = super::shared(&load("sandbox.json")).profile;
        let shipped = load("sandbox-shared.json").profile;
        let paths = |p: &super::super::profile::Profile| {
            let advance = p.clock.advance.as_ref().map(|a| a.path.clone());
            let pause = p.controls.pause.as_ref().map(|c| c.path.clone());
            (
                p.isolation.ids_per_merchant,
                p.isolation.reset.clone(),
                advance,
                pause,
            )
        };
        assert_eq!(paths(&made), paths(&shipped));
        assert_eq!(
            made.controls.rate_limit.map(|c| c.path),
            Some("/__sandbox/controls?merchant={merchant}".to_owned())
        );
    }
}
