//! `payhub-verify run FILE…` (what-if scripts) and `payhub-verify scenario S7` (the
//! contract's scenarios, kept as scripts in `scenarios/`).
//!
//! Exit codes: 0 every expectation and property held, 1 one failed, 2 a script is
//! malformed (each of its errors as `file:line:column: what is wrong`, up to 20 a file;
//! then nothing runs) or a scenario does not exist.

use payhub_properties::ScriptReport as Report;
use payhub_properties::rules_of;
use payhub_properties::{AlwaysCheck, Kind, PROPERTIES};
use payhub_sim::script::{self, Script, ScriptError, ScriptErrors};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod html;

/// How a run is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScriptFormat {
    /// Each statement with the trace lines it caused and its verdict.
    Text,
    Json,
    Mermaid,
    /// One self-contained HTML page: the verdict, each violation's run drawn (inline SVG)
    /// with its witness marked, then the expectations and the properties checked.
    Html,
    /// JUnit XML: a test case per script (docs/ci.md).
    Junit,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Script files (see docs/scripts.md).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ScriptFormat,
}

#[derive(clap::Args, Debug)]
pub struct ScenarioArgs {
    /// The scenario: S1 … S13, a branch (S2b, S4b, S5b, S8b) or a contract finding (F1, F1b, F1c, F2 … F28).
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// List the scenarios with their AC numbers.
    #[arg(long)]
    pub list: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ScriptFormat,
    /// The folder of scenario scripts (default: ./scenarios, else the repository's).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// The names `expect violation` accepts: every *always* property a world's facts judge
/// (a script's run holds no wire facts).
pub fn always_properties() -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .filter(|p| p.over_facts() && p.kind() == Kind::Always)
        .map(|p| p.name)
        .collect()
}

/// The names `expect violation` accepts: the *always* properties a world's facts judge and
/// the properties over the wire alone judged over the run's exchanges at its end
/// ([`execute`]).
pub fn expectable_properties() -> Vec<&'static str> {
    let wire = PROPERTIES
        .iter()
        .filter(|p| p.wire_only() && p.patterns().is_some_and(|w| !w.assumes_complete_log))
        .map(|p| p.name);
    always_properties().into_iter().chain(wire).collect()
}

/// Reads and parses one script file, or fails with its first error.
pub fn load(path: &Path) -> Result<Script, ScriptError> {
    load_all(path).map_err(ScriptErrors::first)
}

/// Reads and parses one script file, or fails with every error of it.
pub fn load_all(path: &Path) -> Result<Script, ScriptErrors> {
    let file = path.display().to_string();
    let bytes = crate::input::read_all(path, crate::input::SCRIPT_MAX).map_err(|e| {
        let why = e.strip_prefix(&format!("{file}: ")).unwrap_or(&e);
        ScriptError::new(&file, 1, 1, why)
    })?;
    let script = script::parse_all(&file, &bytes, &expectable_properties())?;
    if script.statements.is_empty() {
        return Err(ScriptError::new(
            &file,
            1,
            1,
            "nothing to check: the script has no statement (only comments or settings)",
        )
        .into());
    }
    Ok(script)
}

/// Runs a parsed script, checking every *always* property after every step; a
/// violated property is reported with its rule IDs.
pub fn execute(script: &Script) -> Report {
    let mut check = AlwaysCheck {
        config: &script.config,
    };
    let mut report = script::run(script, &mut check);
    if script.judge_wire && report.violation.is_none() && report.error.is_none() {
        let last = report.script.statements.last().map(|s| s.pos);
        if let (Some(v), Some(pos)) = (wire_violation(&report), last) {
            // `expect violation` of it is met after all.
            let unmet = format!("no step violated {}", v.property);
            for r in &mut report.results {
                if r.failure.as_deref() == Some(unmet.as_str()) {
                    r.failure = None;
                }
            }
            report.violation = Some((v, pos));
        }
    }
    if let Some((v, _)) = &report.violation {
        report.violation_rules = rules_of(&v.property);
    }
    report
}

/// The first property the run's exchanges violate at its level over the wire, judged at
/// its end as the sandbox judges a session (`client-creates-an-order-under-one-key`, …), for a
/// script that says `use wire=judged` (the sandbox's export does): a session exported as
/// a script and run fails on what its verdict named.
fn wire_violation(report: &Report) -> Option<payhub_sim::driver::Violation> {
    let mut side = payhub_properties::verdict::WireSide::default();
    for e in &report.trace.stream {
        side.observe(e);
    }
    side.close();
    side.verdicts(&report.world.facts)
        .into_iter()
        .filter(|v| v.status == payhub_properties::verdict::Status::Violated)
        .find(|v| v.witness.is_some())
        .map(|v| payhub_sim::driver::Violation {
            property: v.name.to_owned(),
            detail: v.detail.unwrap_or_default(),
        })
}

/// Parses every file first (any error: print every error of every file, run none, exit
/// 2), then runs
/// each and prints its report.
fn run_files(files: &[PathBuf], format: ScriptFormat, command: &str) -> ExitCode {
    let mut scripts = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match load_all(f) {
            Ok(s) => scripts.push(s),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("{e}");
        }
        return ExitCode::from(2);
    }
    let mut seconds = Vec::with_capacity(scripts.len());
    let reports: Vec<Report> = scripts
        .iter()
        .map(|s| {
            let started = std::time::Instant::now();
            let r = execute(s);
            seconds.push(started.elapsed().as_secs_f64());
            r
        })
        .collect();
    match format {
        ScriptFormat::Html => print!("{}", html::page(&reports, &seconds)),
        ScriptFormat::Junit => print!("{}", junit(&reports, &seconds, command)),
        ScriptFormat::Json => {
            let items: Vec<String> = reports.iter().map(Report::to_json).collect();
            println!("[{}]", items.join(",\n"));
        }
        // Several diagrams are several Mermaid documents: one fenced block each, a
        // Markdown page any code host renders (one diagram alone stays a bare document).
        ScriptFormat::Mermaid if reports.len() > 1 => {
            for r in &reports {
                println!(
                    "## {}\n\n```mermaid\n{}```\n",
                    r.script.file,
                    r.to_mermaid()
                );
            }
        }
        _ => {
            for (i, r) in reports.iter().enumerate() {
                if i > 0 {
                    println!();
                }
                match format {
                    ScriptFormat::Text => print!("{}", r.to_text()),
                    _ => print!("{}", r.to_mermaid()),
                }
            }
        }
    }
    let failed: Vec<&Report> = reports.iter().filter(|r| !r.passed()).collect();
    for r in &failed {
        for f in r.failures() {
            eprintln!("{f}");
        }
    }
    if reports.len() > 1 && format == ScriptFormat::Text {
        println!(
            "\n{} of {} scripts passed",
            reports.len() - failed.len(),
            reports.len()
        );
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Scripts run, as the outcome document's JUnit: a part of scripts, an item per script.
fn junit(reports: &[Report], seconds: &[f64], command: &str) -> String {
    let results: Vec<crate::verify_cmd::report::ScenarioResult> = reports
        .iter()
        .map(|r| {
            crate::verify_cmd::report::ScenarioResult::from_report(Path::new(&r.script.file), r)
        })
        .collect();
    let mut part = crate::report::outcome::scripts("scripts", "run", &results);
    for (item, seconds) in part.items.iter_mut().zip(seconds) {
        item.seconds = Some(*seconds);
    }
    crate::outcome::junit::of(command, vec![part])
}

pub fn run(args: &RunArgs) -> Result<ExitCode, String> {
    if args.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err("'-' (standard input) given twice: it can be read once".into());
    }
    Ok(run_files(&args.files, args.format, "payhub-verify run"))
}

/// The folder of scenario scripts.
pub fn scenario_dir(dir: Option<&Path>) -> PathBuf {
    if let Some(d) = dir {
        return d.to_path_buf();
    }
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
    }
}

/// The scenario files of a folder, sorted, with their names (`S07`, `S04b`, `F01`).
fn scenario_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<(String, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pha"))
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?;
            let name = stem.split('-').next()?.to_owned();
            Some((name, p))
        })
        .collect();
    // The contract's scenarios first, then the findings.
    files.sort_by_key(|(name, path)| (!name.starts_with('S'), path.clone()));
    Ok(files)
}

/// `s7` → `S07`, `S4b` → `S04b`, `f1` → `F01`.
pub fn normalize_name(name: &str) -> String {
    let letters: String = name.chars().take_while(|c| c.is_alphabetic()).collect();
    let rest = &name[letters.len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let suffix = &rest[digits.len()..];
    match digits.parse::<u32>() {
        Ok(n) => format!("{}{n:02}{}", letters.to_uppercase(), suffix.to_lowercase()),
        Err(_) => name.to_owned(),
    }
}

pub fn scenario(args: &ScenarioArgs) -> Result<ExitCode, String> {
    let dir = scenario_dir(args.dir.as_deref());
    let files = scenario_files(&dir)?;
    if args.list {
        return list(&files, args.format);
    }
    let want = normalize_name(args.name.as_deref().unwrap_or_default());
    let Some((_, path)) = files.iter().find(|(n, _)| *n == want) else {
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        let hint = crate::usage::closest(&want, names.iter().copied())
            .map(|c| format!("did you mean '{c}'? "))
            .unwrap_or_default();
        return Err(format!(
            "no scenario '{}' in {} ({hint}scenarios: {})",
            args.name.as_deref().unwrap_or_default(),
            dir.display(),
            names.join(", ")
        ));
    };
    Ok(run_files(
        std::slice::from_ref(path),
        args.format,
        "payhub-verify scenario",
    ))
}

fn list(files: &[(String, PathBuf)], format: ScriptFormat) -> Result<ExitCode, String> {
    #[derive(serde::Serialize)]
    struct Entry {
        name: String,
        ac: Option<String>,
        title: Option<String>,
        assumptions: Vec<&'static str>,
        file: String,
    }
    let mut entries = Vec::new();
    for (name, path) in files {
        let s = load(path).map_err(|e| e.to_string())?;
        entries.push(Entry {
            name: name.clone(),
            ac: s.ac().map(str::to_owned),
            title: s.title.clone(),
            assumptions: s.assumptions.iter().map(|a| a.id()).collect(),
            file: path.display().to_string(),
        });
    }
    match format {
        ScriptFormat::Json => println!("{}", crate::outcome::json(&entries)?),
        _ => {
            for e in &entries {
                let assumes = if e.assumptions.is_empty() {
                    String::new()
                } else {
                    format!("  (assumes {})", e.assumptions.join(", "))
                };
                println!(
                    "{:<5} {:<7} {}{assumes}",
                    e.name,
                    e.ac.as_deref().unwrap_or("no AC"),
                    e.title.as_deref().unwrap_or("")
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_violated_property_is_named_with_its_rule_ids() {
        let rules = rules_of("client-never-charges-an-order-twice");
        assert!(rules.contains(&"EFFECT-01"), "{rules:?}");
        assert!(rules_of("no-such-property").is_empty());
        let source = b"A: POST /v1/payments  Idempotency-Key: K1  {\"merchant_order_no\":\"ORDER-001\",\"amount\":100,\"currency\":\"USD\",\"card\":\"A\"}\n";
        let script = script::parse("t.pha", source, &always_properties()).unwrap();
        let mut report = execute(&script);
        // No violation here: no rules to print, and none printed.
        assert!(report.violation_rules.is_empty());
        report.violation = Some((
            payhub_sim::driver::Violation {
                property: "client-never-charges-an-order-twice".into(),
                detail: "planted".into(),
            },
            Default::default(),
        ));
        report.violation_rules = rules_of("client-never-charges-an-order-twice");
        assert!(
            report
                .verdict()
                .contains("client-never-charges-an-order-twice [EFFECT-01")
        );
        assert!(report.to_json().contains("\"rules\""));
    }

    #[test]
    fn scenario_names_normalize_to_file_prefixes() {
        assert_eq!(normalize_name("S7"), "S07");
        assert_eq!(normalize_name("s7"), "S07");
        assert_eq!(normalize_name("S4b"), "S04b");
        assert_eq!(normalize_name("S13"), "S13");
        assert_eq!(normalize_name("F1"), "F01");
        assert_eq!(normalize_name("x"), "x");
    }
}
