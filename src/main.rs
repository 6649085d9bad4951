//! `payhub-verify`: the command line of the harness, and its HTTP edges (the sandbox,
//! check-log's readers, conform's proxy and client). It reads files, sockets and the wall
//! clock at those edges and hands the model only what they read; it never decides a
//! verdict: every verdict comes from `payhub-properties`, and this crate renders it.
//!
//! Exit codes: 0 everything holds, 1 a property was violated or a mutant survived,
//! 2 bad usage or bad input, 3 an incomplete run.

mod assumptions_cmd;
mod bench_cmd;
mod check_cmd;
mod check_log;
mod conform;
mod edges;
mod header;
mod heap;
mod http_map;
mod input;
mod interrupt;
mod judge_cmd;
mod mutants_cmd;
mod outcome;
mod progress;
mod replay_cmd;
mod report;
mod retry_after;
mod rules_cmd;
mod script_cmd;
mod seeds;
mod serve;
mod simulate_cmd;
mod usage;
mod utc;
mod verify_cmd;
mod whole_file;
mod wire;

use clap::{Parser, Subcommand, ValueEnum};

use std::process::ExitCode;

/// Output format of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Parser, Debug)]
#[command(
    name = "payhub-verify",
    version,
    about = "Deterministic simulation and model checking of the PayHub idempotency, retry and status-query contract",
    after_help = "With no command it runs `verify`.\n\nExamples:\n  payhub-verify\n  payhub-verify check --preset all\n  payhub-verify simulate --seeds 0..10000\n  payhub-verify scenario S7 --format mermaid\n  payhub-verify rules --coverage"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Verify everything (the default): presets, simulation, chaos, scenarios, bug zoo; write the report.
    #[command(
        after_help = "Examples:\n  payhub-verify\n  payhub-verify verify --quick\n  payhub-verify verify --seeds 100000 --threads 2 --out my-report"
    )]
    Verify(verify_cmd::VerifyArgs),
    /// Print the rule catalogue: every normative statement of the contract with its ID.
    #[command(
        after_help = "Examples:\n  payhub-verify rules\n  payhub-verify rules --format json\n  payhub-verify rules --id KEY-07\n  payhub-verify rules --coverage"
    )]
    Rules(rules_cmd::RulesArgs),
    /// Print the assumptions the model takes where the contract is silent or ambiguous (model/ASSUMPTIONS.md).
    #[command(
        after_help = "Examples:\n  payhub-verify assumptions\n  payhub-verify assumptions --id A-WEBHOOK-BLACKOUT\n  payhub-verify assumptions --format json"
    )]
    Assumptions(assumptions_cmd::AssumptionsArgs),
    /// Check the presets exhaustively: every always holds, every sometimes is reached.
    #[command(
        after_help = "Examples:\n  payhub-verify check\n  payhub-verify check --preset card-retry --threads 2\n  payhub-verify check --list\n  payhub-verify check --format json\n  payhub-verify check --preset create-lossy --policy new_key_after_timeout+new_order_no_after_timeout --max-states 60000 --format script > cx.pha && payhub-verify run cx.pha"
    )]
    Check(check_cmd::CheckArgs),
    /// Run seeded simulation sweeps of merchant clients against the platform.
    #[command(
        after_help = "Examples:\n  payhub-verify simulate --seeds 0..10000\n  payhub-verify simulate --seeds 0..2000 --policy new_key_after_timeout+new_order_no_after_timeout\n  payhub-verify simulate --seeds 0..100000 --shard 3/8"
    )]
    Simulate(simulate_cmd::SimulateArgs),
    /// Replay one run, from a seed or a saved tape, and print its trace.
    #[command(
        after_help = "Examples:\n  payhub-verify replay --seed 17\n  payhub-verify replay --tape target/payhub-report/tapes/seed-17.tape --format mermaid\n  payhub-verify replay --seed 3 --format events > run.jsonl"
    )]
    Replay(replay_cmd::ReplayArgs),
    /// Judge a recorded event stream (JSON Lines, as `replay --format events` writes it) by every property.
    #[command(
        after_help = "Examples:\n  payhub-verify replay --seed 3 --format events > run.jsonl && payhub-verify judge run.jsonl\n  payhub-verify judge run.jsonl --format json"
    )]
    Judge(judge_cmd::JudgeArgs),
    /// Judge recorded traffic (HAR 1.2, payhub events, the access-log shape of docs/check-log.md) against the contract.
    #[command(
        name = "check-log",
        after_help = "Exit codes: 0 every property judged holds, 1 a violation, 2 bad input or nothing judged, 3 incomplete (entries unreadable, or reading stopped at --memory-max).\n\nExamples:\n  curl -s localhost:8080/__sandbox/har > session.har && payhub-verify check-log session.har\n  payhub-verify check-log capture.har --api-key-map keys.json --format markdown\n  payhub-verify check-log --generate 3000000 > big.jsonl && payhub-verify check-log big.jsonl --stats\n  payhub-verify check-log big.har --memory-max 1.5G --threads 2\n  payhub-verify check-log day.jsonl --shard 0/4 --format json > shard-0.json"
    )]
    CheckLog(check_log::CheckLogArgs),
    /// Measure simulator steps per second and checker states per second.
    #[command(
        after_help = "Examples:\n  payhub-verify bench\n  payhub-verify bench --preset scope --format json"
    )]
    Bench(bench_cmd::BenchArgs),
    /// Run what-if scripts (docs/scripts.md): every always property after every step, plus the script's expectations.
    #[command(
        after_help = "Examples:\n  payhub-verify run scenarios/*.pha\n  payhub-verify run my-what-if.pha --format mermaid"
    )]
    Run(script_cmd::RunArgs),
    /// Run one of the contract's scenarios or findings scripts (scenarios/: S1–S13, the S2b/S4b/S5b/S8b branches, S10b, findings F1, F1b, F1c, F2–F28, F10b, F17b, F24b).
    #[command(
        after_help = "Scenarios: S1 S2 S2b S3 S4 S4b S5 S5b S6 S7 S8 S8b S9 S10 S10b S11 S12 S13 (the contract's S1–S13 and the other branch where it says \"or\")\nFindings:  F1 F1b F1c F2 F3 F4 F5 F6 F7 F8 F9 F10 F10b F11 F12 F13 F14 F15 F16 F17 F17b F18 F19 F20 F21 F22 F23 F24 F24b F25 F26 F27 F28 (behaviours the contract permits that a reader would not expect, its contradictions and silences)\n`payhub-verify scenario --list` prints each with its title and AC number.\n\nExamples:\n  payhub-verify scenario S7\n  payhub-verify scenario S4b --format json\n  payhub-verify scenario --list"
    )]
    Scenario(script_cmd::ScenarioArgs),
    /// Serve stateright's Explorer for a preset on a loopback address, to step through it.
    #[command(
        after_help = "Examples:\n  payhub-verify explore --preset card-retry\n  payhub-verify explore --preset scope --addr 127.0.0.1:3001"
    )]
    Explore(check_cmd::ExploreArgs),
    /// The bug zoo: planted platform bugs and client anti-patterns, and which property kills each.
    #[command(
        after_help = "Examples:\n  payhub-verify mutants\n  payhub-verify mutants --format json --threads 2\n  payhub-verify mutants --show card_in_fingerprint\n  payhub-verify mutants --show new_key_after_timeout --format script > cx.pha\n  payhub-verify mutants --list"
    )]
    Mutants(mutants_cmd::MutantsArgs),
    /// Join the verdicts of `check-log --shard I/N --format json` run on N machines into the whole log's.
    #[command(
        after_help = "Exit codes: those of check-log over the whole log; 2 for a shard missing, given twice, or of another log.\n\nExamples:\n  payhub-verify merge shard-0.json shard-1.json shard-2.json shard-3.json > verdict.json"
    )]
    Merge(check_log::merge::MergeArgs),
    /// The sandbox: the platform model as a live HTTP API on loopback, with test cards, faults on the wire, a test clock and a verdict.
    #[command(after_help = serve::HELP)]
    Serve(serve::ServeArgs),
    /// Test a platform against the contract over HTTP: generated cases, proxy faults, the model as the oracle.
    #[command(after_help = conform::HELP)]
    Conform(conform::ConformArgs),
}

/// A closed pipe (`payhub-verify check | head`) ends the process quietly, as for any Unix
/// tool, instead of a panic in `println!`.
#[cfg(unix)]
fn quiet_on_closed_pipe() {
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn quiet_on_closed_pipe() {}

/// A failed write of the output (a full disk, a closed file) ends the run with exit 2 and
/// one line, never a panic's backtrace: nothing was reported, so nothing passed or failed.
fn plain_on_failed_output() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(why) = message.strip_prefix("failed printing to stdout: ") {
            eprintln!("payhub-verify: cannot write the output: {why}; nothing was reported");
            std::process::exit(2);
        }
        default(info);
    }));
}

/// A usage error on one line: clap's first line, and its tip if it gives one.
fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut line = lines.next().unwrap_or("error").to_owned();
    if let Some(tip) = lines.find(|l| l.starts_with("tip:")) {
        line.push_str(&format!(" ({tip})"));
    }
    line
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    plain_on_failed_output();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            eprintln!("{}", one_line(&e.render().to_string()));
            return ExitCode::from(2);
        }
    };
    let command = cli
        .command
        .unwrap_or(Command::Verify(verify_cmd::VerifyArgs::default()));
    let result = match command {
        Command::Verify(args) => verify_cmd::run(&args),
        Command::Rules(args) => rules_cmd::run(&args),
        Command::Assumptions(args) => assumptions_cmd::run(&args),
        Command::Check(args) => check_cmd::run(&args),
        Command::Simulate(args) => simulate_cmd::run(&args),
        Command::Replay(args) => replay_cmd::replay(&args),
        Command::Judge(args) => judge_cmd::run(&args),
        Command::CheckLog(args) => check_log::run(&args),
        Command::Merge(args) => check_log::merge::run(&args),
        Command::Bench(args) => bench_cmd::run(&args),
        Command::Run(args) => script_cmd::run(&args),
        Command::Scenario(args) => script_cmd::scenario(&args),
        Command::Explore(args) => check_cmd::explore(&args),
        Command::Mutants(args) => mutants_cmd::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Conform(args) => conform::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("payhub-verify: {message}");
            ExitCode::from(2)
        }
    }
}
