//! `payhub-verify check`: exhaustive model checking of the presets.

mod swarm;

use payhub_properties::checker::{
    CheckStatus, Counterexample, Limits, Order, PresetReport, Search,
};
use payhub_properties::presets::{Knob, ORDERS_MAX, Preset, SERVERS_MAX, ScopeChange};
use payhub_properties::{AlwaysCheck, presets};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// A preset name, or `all`.
    #[arg(long, default_value = "all")]
    pub preset: String,
    /// Checker threads (the counts and verdicts do not depend on it, only the time).
    #[arg(long, default_value_t = 2, value_parser = crate::usage::threads)]
    pub threads: usize,
    /// Stop a preset after this many generated states, repeats included (the run is then
    /// incomplete: exit 3).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_states: Option<u64>,
    /// Stop a preset after this many seconds (incomplete: exit 3).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Do not expand states at this depth or deeper (the initial state is at depth 1;
    /// incomplete if it cuts: exit 3).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub depth: Option<u64>,
    /// List the presets, what each explores and its default scope.
    #[arg(long)]
    pub list: bool,
    /// Set fault budgets of the scope, e.g. drops=2,crashes=1 (knobs: drops, dups,
    /// fail_500, upstream_drops, crashes, sends, controls, waits); the others keep the
    /// preset's default (`--list`). A fault knob counts the search's faults: those the
    /// preset's own setup spends come on top.
    #[arg(long, value_parser = faults)]
    pub faults: Option<Faults>,
    /// Merchant servers of a client preset (sharing one database and policy).
    #[arg(long, value_parser = servers)]
    pub servers: Option<u8>,
    /// Orders a client preset pays (ORDER-1, ORDER-2, ...).
    #[arg(long, value_parser = orders)]
    pub orders: Option<u8>,
    /// State-space reductions (default: requests,por, the same verdicts for fewer
    /// states; `none`: every state of the model): ids (message ids do not tell states
    /// apart), requests (request ids neither: renumbered by rank; implies ids), por
    /// (answers nobody awaits are delivered first, in one order only).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub reduce: Vec<Reduction>,
    /// The search order (default: dfs; bfs with --depth): bfs (level by level; shortest
    /// depths) or dfs (memory is the visited set and one path; the same states and
    /// counts).
    #[arg(long, value_enum)]
    pub search: Option<SearchOrder>,
    /// SPIN's supertrace: a visited set of 2^N bits (N from 16 to 35), searched depth
    /// first, in bounded memory; the run is incomplete (exit 3) with the states it may
    /// have missed estimated, never a pass.
    #[arg(long, value_parser = bitstate)]
    pub bitstate: Option<u32>,
    /// The merchant policy of the client presets (default: the reference client), e.g.
    /// new_key_after_timeout+new_order_no_after_timeout.
    #[arg(long, value_parser = crate::usage::policy)]
    pub policy: Option<String>,
    /// Output format: the verdicts (text, json), or the first counterexample as a what-if
    /// script that `payhub-verify run` reproduces (script).
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,
    #[command(flatten)]
    pub swarm: swarm::SwarmArgs,
}

/// Fault budgets given with `--faults`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Faults(pub Vec<(Knob, u8)>);

/// `--faults drops=2,crashes=1`: known knobs, each once, each a count from 0 to 9.
pub(crate) fn faults(s: &str) -> Result<Faults, String> {
    let mut set: Vec<(Knob, u8)> = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, n) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}' is not KNOB=N (e.g. drops=2)"))?;
        let name = name.trim();
        let knob = Knob::from_name(name).ok_or_else(|| {
            crate::usage::unknown("fault knob", name, Knob::ALL.iter().map(|k| k.name()))
        })?;
        let n: u8 = n
            .trim()
            .parse()
            .ok()
            .filter(|n| *n <= FAULTS_MAX)
            .ok_or_else(|| {
                format!(
                    "{name} must be a count from 0 to {FAULTS_MAX}, not '{}'",
                    n.trim()
                )
            })?;
        if set.iter().any(|(k, _)| *k == knob) {
            return Err(format!("{name} is given twice"));
        }
        set.push((knob, n));
    }
    if set.is_empty() {
        return Err("no knob given (e.g. drops=2,crashes=1)".into());
    }
    Ok(Faults(set))
}

/// Most of one fault kind a scope takes: past a few, no scope finishes anyway.
const FAULTS_MAX: u8 = 9;

fn servers(s: &str) -> Result<u8, String> {
    count(s, SERVERS_MAX, "merchant servers")
}

fn orders(s: &str) -> Result<u8, String> {
    count(s, ORDERS_MAX, "orders")
}

fn count(s: &str, max: u8, what: &str) -> Result<u8, String> {
    s.trim()
        .parse::<u8>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| format!("must be a number of {what} from 1 to {max}, not '{s}'"))
}

fn bitstate(s: &str) -> Result<u32, String> {
    use payhub_properties::engine::visited::{BITSTATE_LOG2_MAX, BITSTATE_LOG2_MIN};
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| (BITSTATE_LOG2_MIN..=BITSTATE_LOG2_MAX).contains(n))
        .ok_or_else(|| {
            format!(
                "must be N for 2^N bits, from {BITSTATE_LOG2_MIN} (8 KiB) to {BITSTATE_LOG2_MAX} (4 GiB), not '{s}'"
            )
        })
}

impl CheckArgs {
    /// The search order: `--search`, else depth-first, or breadth-first under `--depth`
    /// (a depth bound cuts a breadth-first search only).
    pub fn order(&self) -> SearchOrder {
        self.search.unwrap_or(if self.depth.is_some() {
            SearchOrder::Bfs
        } else {
            SearchOrder::Dfs
        })
    }

    /// The reductions: `--reduce`, else [`Reduction::DEFAULT`]; `--reduce none`: none.
    pub fn reductions(&self) -> Result<Vec<Reduction>, String> {
        match self.reduce.as_slice() {
            [] => Ok(Reduction::DEFAULT.to_vec()),
            [Reduction::None] => Ok(Vec::new()),
            more if more.contains(&Reduction::None) => {
                Err("--reduce none means no reduction: give it alone".into())
            }
            more => Ok(more.to_vec()),
        }
    }

    /// The search as the header names it (`depth-first, reduced: requests, por`).
    pub fn search_text(&self) -> Result<String, String> {
        let order = match self.order() {
            SearchOrder::Bfs => "breadth-first",
            SearchOrder::Dfs => "depth-first",
        };
        let reduce = self.reductions()?;
        Ok(if reduce.is_empty() {
            format!("{order}, every state")
        } else {
            let names: Vec<&str> = reduce.iter().map(|r| r.name()).collect();
            format!("{order}, reduced: {}", names.join(", "))
        })
    }
}

payhub_model::named! {
    fn name;
    /// A state-space reduction.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
    pub enum Reduction {
        /// No reduction: every state of the model (alone only).
        None = "none",
        /// Canonical states: message ids do not tell states apart.
        Ids = "ids",
        /// Request ids renumbered by rank among those a state holds (implies ids).
        Requests = "requests",
        /// Partial-order reduction: an answer nobody awaits any more (a late one, a
        /// crashed process's, a network copy's) is delivered before anything else, in one
        /// order only (`sim/src/inert.rs`).
        Por = "por",
    }
}

impl Reduction {
    /// The reductions `check` searches with unless `--reduce` says otherwise: the
    /// fastest whose soundness the tests show (`properties/tests/reduction.rs`: the same
    /// verdicts, and the same witnesses reached, on every preset and planted bug).
    pub const DEFAULT: &[Reduction] = &[Reduction::Requests, Reduction::Por];

    /// A search with the reductions of `--reduce` on (and every other option default).
    pub fn search(reduce: &[Reduction]) -> Search {
        Search {
            canonical_ids: reduce.contains(&Reduction::Ids),
            canonical_requests: reduce.contains(&Reduction::Requests),
            partial_order: reduce
                .contains(&Reduction::Por)
                .then_some(payhub_properties::checker::INERT_FIRST),
            ..Search::default()
        }
    }
}

/// `--search`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchOrder {
    Bfs,
    Dfs,
}

/// How `check` prints its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    Text,
    Json,
    /// The first counterexample (presets in order, then properties) as a what-if script.
    Script,
    /// JUnit XML: a test suite per preset, a test case per property (docs/ci.md).
    Junit,
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, String> {
    let all = match &args.policy {
        None => presets(),
        Some(name) => {
            let policy = payhub_sim::worlds::parse_policy(name).map_err(|e| e.to_string())?;
            let mut all = payhub_properties::presets::platform_presets();
            all.extend(payhub_properties::presets::client_presets(&policy));
            all
        }
    };
    if args.list {
        if args.format == CheckFormat::Script {
            return Err(
                "--list prints names, not a script (--format script is for counterexamples)".into(),
            );
        }
        for p in &all {
            println!("{:<22} {}", p.name, p.about);
            println!("{:<22} default scope: {}", "", p.scope_text());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let selected: Vec<_> = if args.preset == "all" {
        all
    } else {
        let names: Vec<&str> = all.iter().map(|p| p.name).collect();
        let chosen: Vec<_> = all
            .iter()
            .filter(|p| p.name == args.preset)
            .cloned()
            .collect();
        if chosen.is_empty() {
            return Err(crate::usage::unknown(
                "preset",
                &args.preset,
                names.iter().copied().chain(["all"]),
            ));
        }
        let platform: Vec<&str> = payhub_properties::presets::platform_presets()
            .iter()
            .map(|p| p.name)
            .collect();
        if args.policy.is_some() && platform.contains(&args.preset.as_str()) {
            return Err(format!(
                "--policy sets the merchant client of the client presets; '{}' is a platform preset (an adversarial sender, no client)",
                args.preset
            ));
        }
        chosen
    };
    let change = ScopeChange {
        faults: args.faults.clone().map(|f| f.0).unwrap_or_default(),
        servers: args.servers,
        orders: args.orders,
    };
    let selected = selected
        .into_iter()
        .map(|p| p.with_scope(&change))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if let Some(shard) = args.swarm.shard {
        return swarm::run(args, shard, &selected);
    }
    let reduce = args.reductions()?;
    let search = Search {
        order: match args.order() {
            SearchOrder::Bfs => Order::Breadth,
            SearchOrder::Dfs => Order::Depth,
        },
        bitstate: args.bitstate,
        interrupted: Some(crate::interrupt::requested),
        ..Reduction::search(&reduce)
    };
    if args.order() == SearchOrder::Dfs && args.depth.is_some() {
        return Err("--depth bounds a breadth-first search (a depth-first one would cut states it reaches again shallower); drop --search dfs or --depth".into());
    }
    let limits = Limits {
        threads: args.threads,
        max_states: args.max_states.map(|n| n as usize),
        timeout: args.timeout.map(Duration::from_secs),
        max_depth: args.depth.map(|n| n as usize),
    };
    if args.format == CheckFormat::Text {
        println!(
            "search: {} (--search bfs: shortest depths first; --reduce none: every state)",
            args.search_text()?
        );
    }
    let mut reports = Vec::new();
    // Ctrl-C: the preset in hand ends incomplete and is reported; the others are not run.
    crate::interrupt::install();
    let progress = crate::progress::Progress::new(args.format == CheckFormat::Text);
    for preset in &selected {
        if crate::interrupt::requested() {
            break;
        }
        progress.say(&format!(
            "preset {} ({}), Ctrl-C: stop and report",
            preset.name,
            preset.scope_text()
        ));
        let report = payhub_properties::checker::check_with(preset, limits, search);
        progress.done();
        let report = report.map_err(|e| e.to_string())?;
        if args.format == CheckFormat::Text {
            print_report(&report, !change.is_empty());
        }
        reports.push(report);
    }
    match args.format {
        CheckFormat::Text => {
            let mut out: Vec<String> = reports.iter().filter(|r| !r.complete).map(|r| match &r.bitstate {
                Some(b) => format!(
                    "preset {}: not judged (incomplete): a bitstate search (2^{} bits, {} hashes a state, {:.1}% set) may have missed about {:.0} states (and what only they lead to)",
                    r.name, b.bits.trailing_zeros(), b.hashes, b.fill * 100.0, b.expected_missed
                ),
                None => format!(
                    "preset {}: not judged (incomplete): stopped by {} after {} states",
                    r.name, cut_by(r, &limits), r.total_states
                ),
            }).collect();
            let skipped = selected.len() - reports.len();
            let incomplete = reports.iter().any(|r| !r.complete);
            if skipped > 0 {
                out.push(format!("{skipped} presets not checked (stopped by Ctrl-C)"));
            }
            if incomplete || skipped > 0 {
                out.push(format!("reproduce: {}", crate::usage::command_line()));
            }
            let reduced = args.order() == SearchOrder::Dfs
                && reduce.contains(&Reduction::Requests)
                && reduce.contains(&Reduction::Por);
            if !reduced && args.bitstate.is_none() && incomplete {
                out.push("a deeper scope completes sooner with --search dfs --reduce requests,por (the same verdicts, fewer states: docs/performance-history.md, \"Deeper scopes\")".into());
            }
            out.iter().for_each(|l| println!("{l}"));
        }
        CheckFormat::Json => println!("{}", crate::outcome::json(&reports)?),
        CheckFormat::Script => print_script(args, &selected, &reports)?,
        CheckFormat::Junit => {
            use crate::outcome::{Item, ItemResult, Part};
            let mut parts = crate::report::outcome::presets("check", &reports);
            for p in &selected[reports.len()..] {
                let why = ItemResult::Skipped("not run: stopped by Ctrl-C".into());
                parts.push(Part::new(
                    format!("check {}", p.name),
                    vec![Item::new(format!("check.{}", p.name), p.name, why)],
                ));
            }
            print!(
                "{}",
                crate::outcome::junit::of("payhub-verify check", parts)
            );
        }
    }
    let passed_so_far = reports.iter().all(|r| r.passed());
    if reports.len() < selected.len() && passed_so_far {
        // Stopped by Ctrl-C before every preset ran: incomplete, never a pass.
        return Ok(ExitCode::from(3));
    }
    Ok(exit_code(&reports))
}

/// Prints the first counterexample as a script on stdout; the others are named on
/// stderr. No counterexample: a note on stderr, nothing on stdout.
fn print_script(
    args: &CheckArgs,
    presets: &[Preset],
    reports: &[PresetReport],
) -> Result<(), String> {
    let found: Vec<(&Preset, &'static str, &Counterexample)> = presets
        .iter()
        .zip(reports)
        .flat_map(|(preset, r)| {
            r.properties.iter().filter_map(move |p| {
                let cx = p.counterexample.as_ref()?;
                Some((preset, p.name, cx))
            })
        })
        .collect();
    let Some((preset, property, cx)) = found.first() else {
        eprintln!("no counterexample: nothing to write as a script");
        return Ok(());
    };
    let policy = args
        .policy
        .as_deref()
        .map(|p| format!(", policy {p}"))
        .unwrap_or_default();
    let about = format!(
        "counterexample of preset {}{policy}: {property} ({})",
        preset.name, cx.detail
    );
    let mut run_check = AlwaysCheck {
        config: &preset.config,
    };
    let script = cx.proof.script(&mut run_check, &about).map_err(|e| {
        format!(
            "preset {}, {property}: this counterexample cannot be written as a script: {e}",
            preset.name
        )
    })?;
    print!("{script}");
    for (preset, property, _) in &found[1..] {
        eprintln!(
            "also violated in preset {}: {property} (not written; --format text shows its counterexample)",
            preset.name
        );
    }
    Ok(())
}

/// 1 if anything is violated or unreached, else 3 if any run was incomplete, else 0.
pub fn exit_code(reports: &[PresetReport]) -> ExitCode {
    let failed = reports.iter().any(|r| {
        r.properties.iter().any(|p| {
            matches!(p.status, CheckStatus::Violated)
                || (r.complete && p.status == CheckStatus::Unreached)
        })
    });
    if failed {
        ExitCode::from(1)
    } else if reports.iter().any(|r| !r.complete) {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// The bounds set, as the flags that set them (`--max-states 5000 --timeout 10`).
pub fn limits_text(limits: &Limits) -> String {
    let flags = [
        limits.max_states.map(|n| format!("--max-states {n}")),
        limits.max_depth.map(|d| format!("--depth {d}")),
        limits.timeout.map(|t| format!("--timeout {}", t.as_secs())),
    ];
    let flags: Vec<String> = flags.into_iter().flatten().collect();
    match flags.is_empty() {
        true => "no bound (complete)".to_owned(),
        false => flags.join(" "),
    }
}

/// Which bound stopped an incomplete preset, as the flag that set it.
pub fn cut_by(r: &PresetReport, limits: &Limits) -> String {
    if crate::interrupt::requested() {
        return "Ctrl-C".to_owned();
    }
    match (limits.max_states, limits.max_depth, limits.timeout) {
        (Some(n), _, _) if r.total_states >= n => format!("--max-states {n}"),
        (_, Some(d), _) if r.max_depth >= d => format!("--depth {d}"),
        (_, _, Some(t)) => format!("--timeout {}", t.as_secs()),
        _ => "a search bound".to_owned(),
    }
}

/// The report of one preset; its scope is shown when set on the command line.
fn print_report(r: &PresetReport, show_scope: bool) {
    let complete = ["INCOMPLETE", "complete  "][usize::from(r.complete)];
    let mut out = vec![format!(
        "preset {:<22} {complete} unique={} total={} depth={} {:.2}s",
        r.name, r.unique_states, r.total_states, r.max_depth, r.seconds
    )];
    let mut how: Vec<String> = r.reductions.iter().map(|r| format!("reduce {r}")).collect();
    let bits = r.bitstate.as_ref().map(|b| b.bits.trailing_zeros());
    how.extend(bits.map(|b| format!("bitstate 2^{b}")));
    match how.is_empty() {
        false => out.push(format!("    scope {}; {}", r.scope, how.join(", "))),
        true if show_scope => out.push(format!("    scope {}", r.scope)),
        true => {}
    }
    // The name column is as wide as the longest name, so statuses line up.
    let width = r.properties.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &r.properties {
        let status = match p.status {
            CheckStatus::Holds => "holds",
            CheckStatus::Violated => "VIOLATED",
            CheckStatus::Reached => "reached",
            CheckStatus::Unreached => "UNREACHED",
            CheckStatus::Unknown => "not judged (incomplete)",
        };
        let rules = p.rules.join(", ");
        out.push(format!("    {:<width$} {status:<10} [{rules}]", p.name));
        if p.status == CheckStatus::Violated && p.counterexample.is_none() {
            out.push("      (no counterexample found again within the search limits)".into());
        }
        let Some(cx) = &p.counterexample else {
            continue;
        };
        let (steps, path) = (cx.tape.len(), cx.bfs_length);
        let how = match steps.saturating_sub(path) {
            setup if cx.minimal && setup > 0 => {
                format!("shortest path: {path} steps after the preset's {setup}-step setup")
            }
            _ if cx.minimal => format!("shortest path: {steps} steps"),
            _ => format!("shrunk to {steps} steps from a {path}-step path"),
        };
        out.push(format!("      {} ({how})", cx.detail));
        let tape = cx.tape.iter().enumerate();
        out.extend(tape.map(|(i, c)| format!("      {:>3}. {c}", i + 1)));
    }
    println!("{}", out.join("\n"));
}

#[derive(clap::Args, Debug)]
pub struct ExploreArgs {
    /// The preset to explore.
    #[arg(long, default_value = "replay-conflict")]
    pub preset: String,
    /// Where to listen: a loopback address only.
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub addr: String,
}

/// Serves the Explorer until the process is stopped.
pub fn explore(args: &ExploreArgs) -> Result<ExitCode, String> {
    let addr: std::net::SocketAddr = args
        .addr
        .parse()
        .map_err(|_| format!("'{}' is not an address (e.g. 127.0.0.1:3000)", args.addr))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "{addr} is not a loopback address: the Explorer only serves on 127.0.0.1 or [::1]"
        ));
    }
    let all = presets();
    let preset = all
        .iter()
        .find(|p| p.name == args.preset)
        .cloned()
        .ok_or_else(|| crate::usage::unknown("preset", &args.preset, all.iter().map(|p| p.name)))?;
    // Bind first, so that a busy port is a clear error rather than a panic inside the server;
    // with port 0 the port the system chose is the one served and printed (the Explorer binds
    // its own socket, so another program could take it in between: then its bind fails clearly).
    let addr = {
        let probe = std::net::TcpListener::bind(addr)
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        probe
            .local_addr()
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?
    };
    eprintln!(
        "Explorer for preset {} on http://{addr}/ (Ctrl-C to stop)",
        args.preset
    );
    payhub_properties::checker::serve(preset, addr).map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}
