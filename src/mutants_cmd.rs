//! `payhub-verify mutants`: the bug zoo's kill matrix, and one mutant's counterexample.

use crate::outcome::junit;
use payhub_properties::AlwaysCheck;
use payhub_properties::zoo::{self, KillMatrix, MutantRow, Side, Subject, ZooControl, ZooOptions};
use serde::Serialize;
use std::process::ExitCode;

#[derive(clap::Args, Debug, Clone)]
pub struct MutantsArgs {
    /// Output format; `script` (with --show) writes the counterexample as a what-if script
    /// that `payhub-verify run` reproduces (client anti-patterns: a script runs only the
    /// reference platform).
    #[arg(long, value_enum, default_value = "text")]
    pub format: MutantsFormat,
    /// Print this mutant's counterexample as a replayable tape and a Mermaid diagram
    /// (a platform mutant or a client anti-pattern, e.g. card_in_fingerprint).
    #[arg(long, value_name = "NAME")]
    pub show: Option<String>,
    /// With --show: also write the counterexample as a tape that `payhub-verify replay
    /// --tape FILE` replays (in the zoo's world, with the mutant planted).
    #[arg(long, value_name = "FILE", requires = "show")]
    pub save_tape: Option<std::path::PathBuf>,
    /// Worker threads (the matrix does not depend on it, only the timings).
    #[arg(long, default_value_t = 2, value_parser = crate::usage::threads)]
    pub threads: usize,
    /// Seeds of a simulation sweep (for subjects no preset catches, and the reference).
    #[arg(long, default_value_t = 2_000, value_parser = crate::usage::seeds)]
    pub seeds: u64,
    /// Skip the reference configurations (the unmutated platform and reference clients).
    #[arg(long)]
    pub no_reference: bool,
    /// List the mutants and the rules they break, without running anything.
    #[arg(long)]
    pub list: bool,
}

/// How `mutants` prints its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MutantsFormat {
    Text,
    Json,
    /// With --show: the counterexample as a what-if script.
    Script,
    /// JUnit XML: a test case per mutant and reference configuration (docs/ci.md).
    Junit,
}

impl MutantsArgs {
    fn options(&self) -> ZooOptions {
        ZooOptions {
            threads: self.threads.max(1),
            seeds: self.seeds,
            references: !self.no_reference,
            ..ZooOptions::default()
        }
    }
}

/// The zoo's progress and stop flag for this process (one `mutants` run).
static ZOO: ZooControl = ZooControl::new();

pub fn run(args: &MutantsArgs) -> Result<ExitCode, String> {
    if args.format == MutantsFormat::Script && (args.list || args.show.is_none()) {
        return Err(
            "--format script writes one mutant's counterexample: add --show NAME (e.g. --show new_key_after_timeout)".into(),
        );
    }
    if args.format == MutantsFormat::Junit && args.list {
        return Err("--format junit writes the kill matrix or a mutant's kill: drop --list".into());
    }
    if args.list {
        print_list(args.format)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.show {
        return show(args, name);
    }
    // Ctrl-C: the workers finish the jobs in hand, and the matrix of what ran is printed
    // as not judged (incomplete), with the command that runs it all.
    crate::interrupt::install();
    let options = ZooOptions {
        control: Some(&ZOO),
        ..args.options()
    };
    let follow = crate::progress::FollowZoo::start(args.format == MutantsFormat::Text, &ZOO);
    let matrix = zoo::run(&Subject::all(), &options);
    follow.done();
    let matrix = matrix.map_err(|e| e.to_string())?;
    match args.format {
        MutantsFormat::Json => println!("{}", crate::outcome::json(&matrix)?),
        MutantsFormat::Junit => {
            let zoo = crate::report::outcome::bug_zoo("mutants", &matrix);
            print!("{}", junit::of("payhub-verify mutants", vec![zoo]));
        }
        MutantsFormat::Text | MutantsFormat::Script => {
            print!("{}", text(&matrix));
            if let Some(why) = &matrix.incomplete {
                println!(
                    "bug zoo: not judged (incomplete): {why}\n    reproduce: {}",
                    crate::usage::command_line()
                );
            }
        }
    }
    // 1: a mutant survived or a reference configuration was caught (also in a run cut
    // short: what ran is real); 3: a reference configuration could not be explored
    // completely, or the run was interrupted (nothing can be claimed about what did not
    // run).
    Ok(
        if !matrix.survivors().is_empty() || matrix.reference_caught() {
            ExitCode::from(1)
        } else if matrix.reference_incomplete() || matrix.incomplete.is_some() {
            ExitCode::from(3)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// One subject as `mutants --list --format json` prints it (fields in the order that
/// output has always had).
#[derive(Serialize)]
struct Listed {
    about: &'static str,
    name: &'static str,
    rules: Vec<&'static str>,
    side: Side,
}

fn print_list(format: MutantsFormat) -> Result<(), String> {
    match format {
        MutantsFormat::Json => {
            let rows: Vec<Listed> = Subject::all()
                .into_iter()
                .map(|s| Listed {
                    about: s.about(),
                    name: s.name(),
                    rules: s.rules().iter().map(|r| r.id()).collect(),
                    side: s.side(),
                })
                .collect();
            println!("{}", crate::outcome::json(&rows)?)
        }
        MutantsFormat::Text | MutantsFormat::Script | MutantsFormat::Junit => {
            for s in Subject::all() {
                let rules: Vec<&str> = s.rules().iter().map(|r| r.id()).collect();
                println!(
                    "{:<32} {:<8} {:<36} {}",
                    s.name(),
                    side_name(s.side()),
                    rules.join(", "),
                    s.about()
                );
            }
        }
    }
    Ok(())
}

/// `platform`, `client` or `judge`.
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::Platform => "platform",
        Side::Client => "client",
        Side::Judge => "judge",
    }
}

/// A kill method as the matrix names it, a zoo-only preset (a small world of the bug zoo's
/// own, unknown to `check --preset`) marked as such.
pub fn method_name(method: &str) -> String {
    if method.starts_with("exhaustive:zoo-") {
        format!("{method} (zoo-only preset)")
    } else {
        method.to_owned()
    }
}

fn text(m: &KillMatrix) -> String {
    let mut s = vec![format!(
        "{:<32} {:<8} {:<32} {:<6} {:<44} {:<36} {:>8} {:>9} {:>5}",
        "mutant", "side", "rules", "killed", "property", "method", "seconds", "states", "steps"
    )];
    let dash = || "-".to_owned();
    s.extend(m.mutants.iter().map(|r| {
        format!(
            "{:<32} {:<8} {:<32} {:<6} {:<44} {:<36} {:>8.3} {:>9} {:>5}",
            r.name,
            side_name(r.side),
            r.rules.join(", "),
            ["NO", "yes"][usize::from(r.killed)],
            r.property.unwrap_or("-"),
            r.method.as_deref().map_or_else(dash, method_name),
            r.seconds,
            r.states_or_seeds,
            r.counterexample_steps.map_or_else(dash, |n| n.to_string()),
        )
    }));
    s.extend(m.references.iter().map(|r| {
        let detail = r.detail.as_deref().unwrap_or("");
        let verdict = match (r.caught, r.complete) {
            (true, _) => format!("CAUGHT by {}: {detail}", r.property.unwrap_or("?")),
            (false, false) => format!("not judged (incomplete): {detail}"),
            (false, true) => "nothing caught".into(),
        };
        format!(
            "reference {} — {}: {verdict} ({} states or seeds, {:.2}s)",
            r.name, r.method, r.states_or_seeds, r.seconds
        )
    }));
    s.push(format!(
        "bug zoo: {} of {} mutants{} killed; time to first counterexample: median {:.3}s, max {:.3}s; {:.1}s in all ({} threads)",
        m.killed,
        m.total,
        if m.incomplete.is_some() { " run" } else { "" },
        m.median_seconds,
        m.max_seconds,
        m.seconds,
        m.threads
    ));
    let survivors = m.survivors().into_iter();
    s.extend(survivors.map(|r| format!("SURVIVED {}: {}", r.name, r.about)));
    let failures = m.reference_failures().into_iter();
    s.extend(failures.map(|r| format!("REFERENCE FAILED {} ({})", r.name, r.method)));
    s.join("\n") + "\n"
}

fn show(args: &MutantsArgs, name: &str) -> Result<ExitCode, String> {
    let subject = Subject::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Subject::all().into_iter().map(|s| s.name()).collect();
        crate::usage::unknown("mutant", name, names.iter().copied())
    })?;
    let row = zoo::kill(subject, &args.options()).map_err(|e| e.to_string())?;
    if args.format == MutantsFormat::Junit {
        if let (Some(path), Some(found)) = (&args.save_tape, &row.counterexample) {
            save_tape(
                subject,
                row.method.as_deref().unwrap_or("?"),
                &found.proof,
                path,
            )?;
        }
        let item = crate::report::outcome::mutant("mutants.bug-zoo", &row, None);
        let part = crate::outcome::Part::new("mutants bug zoo", vec![item]);
        print!("{}", junit::of("payhub-verify mutants", vec![part]));
        return Ok(ExitCode::from(u8::from(!row.killed)));
    }
    let Some(found) = &row.counterexample else {
        match args.format {
            MutantsFormat::Json => println!("{}", crate::outcome::json(&row)?),
            MutantsFormat::Text | MutantsFormat::Junit => {
                println!("{name} SURVIVED: no property caught it ({})", row.about)
            }
            MutantsFormat::Script => eprintln!(
                "{name} SURVIVED: no property caught it, so there is no counterexample to write as a script"
            ),
        }
        return Ok(ExitCode::from(1));
    };
    let proof = &found.proof;
    if let Some(path) = &args.save_tape {
        save_tape(subject, row.method.as_deref().unwrap_or("?"), proof, path)?;
    }
    if args.format == MutantsFormat::Script {
        let about = format!(
            "counterexample of mutant {name} ({}), killed by {} via {}: {}",
            side_name(subject.side()),
            found.property.name,
            row.method.as_deref().unwrap_or("?"),
            proof.detail
        );
        let mut run_check = AlwaysCheck {
            config: &proof.config,
        };
        let script = proof.script(&mut run_check, &about).map_err(|e| {
            format!("mutant {name}: this counterexample cannot be written as a script: {e}")
        })?;
        print!("{script}");
        return Ok(ExitCode::SUCCESS);
    }
    let (tape, trace, mermaid) = (
        proof.labels(),
        proof.trace.to_text(),
        proof.trace.to_mermaid(),
    );
    match args.format {
        MutantsFormat::Json => {
            let shown = Shown {
                config: &proof.config.name,
                mermaid,
                mutant: &row,
                tape,
                trace,
            };
            println!("{}", crate::outcome::json(&shown)?);
        }
        MutantsFormat::Text | MutantsFormat::Script | MutantsFormat::Junit => println!(
            "{} ({}): {}\nbreaks {}\nkilled by {} via {} in {:.3}s; {} choices (first found: {})\n{}\n\n\
             # tape (world {} with the mutant planted, one choice label per line; `payhub-verify mutants --show {} --save-tape cx.tape && payhub-verify replay --tape cx.tape` replays it)\n{}\n\n# trace\n{trace}\n\n# mermaid\n{mermaid}",
            row.name,
            side_name(subject.side()),
            row.about,
            row.rules.join(", "),
            row.property.unwrap_or("?"),
            row.method.as_deref().unwrap_or("?"),
            row.seconds,
            tape.len(),
            row.found_steps.unwrap_or(0),
            row.detail.as_deref().unwrap_or(""),
            proof.config.name,
            row.name,
            tape.join("\n"),
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a zoo counterexample as a tape (`replay --tape FILE` replays it): its choices
/// from the initial world of the method that found it, which is checked to be the world
/// the counterexample ran in.
fn save_tape(
    subject: Subject,
    method: &str,
    proof: &payhub_properties::Counterexample,
    path: &std::path::Path,
) -> Result<(), String> {
    let world = subject.world_of(method);
    if world.as_ref() != Some(&proof.config) {
        return Err(format!(
            "mutant {}: its counterexample's world ({}) is not the world of method {method}; no tape written",
            subject.name(),
            proof.config.name
        ));
    }
    let tape = payhub_sim::tape::Tape::of_zoo(
        payhub_sim::tape::ZooWorld {
            mutant: subject.name().to_owned(),
            method: method.to_owned(),
        },
        proof.choices.clone(),
    );
    crate::whole_file::write(path, tape.to_json())?;
    eprintln!(
        "tape: {} (payhub-verify replay --tape {} replays it)",
        path.display(),
        path.display()
    );
    Ok(())
}

/// One mutant's counterexample as `mutants --show NAME --format json` prints it.
#[derive(Serialize)]
struct Shown<'a> {
    /// The world it runs in.
    config: &'a str,
    mermaid: String,
    mutant: &'a MutantRow,
    tape: Vec<String>,
    trace: String,
}
