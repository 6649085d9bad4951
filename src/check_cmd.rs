//! `payhub-verify check`: exhaustive model checking of the presets.

use payhub_properties::checker::{Counterexample, Limits, PresetReport, Status};
use payhub_properties::presets::Preset;
use payhub_properties::{AlwaysCheck, check, presets};
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
    /// List the presets and what each explores.
    #[arg(long)]
    pub list: bool,
    /// The merchant policy of the client presets (default: the reference client), e.g.
    /// new_key_after_timeout+new_order_no_after_timeout.
    #[arg(long, value_parser = crate::usage::policy)]
    pub policy: Option<String>,
    /// Output format: the verdicts (text, json), or the first counterexample as a what-if
    /// script that `payhub-verify run` reproduces (script).
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,
}

/// How `check` prints its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    Text,
    Json,
    /// The first counterexample (presets in order, then properties) as a what-if script.
    Script,
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, String> {
    let all = match &args.policy {
        None => presets(),
        Some(name) => {
            let policy = payhub_sim::worlds::parse_policy(name)?;
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
    let limits = Limits {
        threads: args.threads,
        max_states: args.max_states.map(|n| n as usize),
        timeout: args.timeout.map(Duration::from_secs),
        max_depth: args.depth.map(|n| n as usize),
    };
    let mut reports = Vec::new();
    for preset in &selected {
        let report = check(preset, limits)?;
        if args.format == CheckFormat::Text {
            print_report(&report);
        }
        reports.push(report);
    }
    match args.format {
        CheckFormat::Text => {
            for r in reports.iter().filter(|r| !r.complete) {
                println!(
                    "preset {}: not judged (incomplete): stopped by {} after {} states",
                    r.name,
                    cut_by(r, &limits),
                    r.total_states
                );
            }
            if reports.iter().any(|r| !r.complete) {
                println!("reproduce: {}", crate::usage::command_line());
            }
        }
        CheckFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&reports).map_err(|e| e.to_string())?
        ),
        CheckFormat::Script => print_script(args, &selected, &reports)?,
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
            matches!(p.status, Status::Violated) || (r.complete && p.status == Status::Unreached)
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
    let mut flags = Vec::new();
    if let Some(n) = limits.max_states {
        flags.push(format!("--max-states {n}"));
    }
    if let Some(d) = limits.max_depth {
        flags.push(format!("--depth {d}"));
    }
    if let Some(t) = limits.timeout {
        flags.push(format!("--timeout {}", t.as_secs()));
    }
    if flags.is_empty() {
        "no bound (complete)".to_owned()
    } else {
        flags.join(" ")
    }
}

/// Which bound stopped an incomplete preset, as the flag that set it.
pub fn cut_by(r: &PresetReport, limits: &Limits) -> String {
    match (limits.max_states, limits.max_depth, limits.timeout) {
        (Some(n), _, _) if r.total_states >= n => format!("--max-states {n}"),
        (_, Some(d), _) if r.max_depth >= d => format!("--depth {d}"),
        (_, _, Some(t)) => format!("--timeout {}", t.as_secs()),
        _ => "a search bound".to_owned(),
    }
}

fn print_report(r: &PresetReport) {
    println!(
        "preset {:<22} {} unique={} total={} depth={} {:.2}s",
        r.name,
        if r.complete {
            "complete  "
        } else {
            "INCOMPLETE"
        },
        r.unique_states,
        r.total_states,
        r.max_depth,
        r.seconds
    );
    for p in &r.properties {
        let status = match p.status {
            Status::Holds => "holds",
            Status::Violated => "VIOLATED",
            Status::Reached => "reached",
            Status::Unreached => "UNREACHED",
            Status::Unknown => "not judged (incomplete)",
        };
        println!("    {:<44} {:<10} [{}]", p.name, status, p.rules.join(", "));
        if p.status == Status::Violated && p.counterexample.is_none() {
            println!("      (no counterexample found again within the search limits)");
        }
        if let Some(cx) = &p.counterexample {
            let setup = cx.tape.len().saturating_sub(cx.bfs_length);
            if cx.minimal && setup > 0 {
                println!(
                    "      {} (shortest path: {} steps after the preset's {setup}-step setup)",
                    cx.detail, cx.bfs_length
                );
            } else if cx.minimal {
                println!(
                    "      {} (shortest path: {} steps)",
                    cx.detail,
                    cx.tape.len()
                );
            } else {
                println!(
                    "      {} (shrunk to {} steps from a {}-step path)",
                    cx.detail,
                    cx.tape.len(),
                    cx.bfs_length
                );
            }
            for (i, c) in cx.tape.iter().enumerate() {
                println!("      {:>3}. {c}", i + 1);
            }
        }
    }
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
    // Bind first, so that a busy port is a clear error rather than a panic inside the server.
    drop(std::net::TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?);
    eprintln!(
        "Explorer for preset {} on http://{addr}/ (Ctrl-C to stop)",
        args.preset
    );
    payhub_properties::checker::serve(preset, addr)?;
    Ok(ExitCode::SUCCESS)
}
