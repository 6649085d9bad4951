//! `payhub-verify conform`: a platform under test over HTTP, the model as the oracle
//! (docs/conform.md). Seeds become cases ([`generate`]), each sent with its [`faults`]
//! ([`run`]) and judged twice: by the [`oracle`] and by the registry ([`record`],
//! [`registry`]). A violation is shrunk against the live target ([`shrink`]) and
//! reported ([`report`], [`page`]; [`matrix`] over the zoo's mutants).

pub mod case;
pub mod compare;
pub mod faults;
pub mod generate;
pub mod matrix;
pub mod oracle;
mod outcome;
pub mod page;
pub mod profile;
pub mod readings;
pub mod record;
pub mod registry;
pub mod report;
pub mod rule_rows;
pub mod run;
pub mod shrink;
pub mod silent;

use crate::seeds::{SeedRange, Shard};
use crate::serve::seam::EdgeSeam;
use registry::Registry;
use run::{CaseOutcome, Exchange, Target};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub seed: u64,
    /// Requests of the generated case, and of the shrunk one.
    pub requests: usize,
    pub shrunk_requests: usize,
    /// Runs of the target shrinking took.
    pub shrink_runs: usize,
    /// Cases run until this one, and seconds (shrinking not included).
    pub detected_after_cases: usize,
    pub detected_after_s: f64,
    /// The shrunk case as run: every exchange, the last round's the one that broke.
    pub exchanges: Vec<Exchange>,
    /// The round whose answers no model state explains (0-based).
    pub breaking_round: usize,
    /// The model's answers that round could have had (closest paths), with why each differs.
    pub allowed: Vec<String>,
    pub mermaid: String,
    pub script: String,
    /// The property that judged it.
    pub property: &'static str,
    /// The rules by which the model's closest paths answered the requests whose answers
    /// no model state explains (the rules the target broke).
    pub rules: Vec<&'static str>,
    /// Other seeds that broke the same rule (`--keep-going` keeps one finding per rule).
    pub also_seeds: Vec<u64>,
}

/// The share of a run's exchanges the target may fail (no answer read, with no fault
/// planned) before the run is incomplete whatever its cases say.
pub const TARGET_FAILED_SHARE_PCT: usize = 5;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub target: String,
    pub profile: String,
    pub seeds: String,
    pub proxy_faults: bool,
    pub cases_run: usize,
    pub requests: usize,
    pub elapsed_s: f64,
    pub cases_per_s: f64,
    pub violations: Vec<Finding>,
    /// Cases the oracle could not finish (bounds), or whose judgement depended on an
    /// exchange the target failed: never a pass.
    pub incomplete: Vec<(u64, String)>,
    /// Exchanges sent, those whose answer from the target could not be read or never
    /// came with no fault planned, and the first of those.
    pub exchanged: usize,
    pub target_failed: usize,
    pub target_first_failure: Option<String>,
    /// Seeds not reached (the duration ran out, or the run stopped at a violation).
    pub not_run: usize,
    /// How to continue, when seeds were not reached.
    pub continue_with: Option<String>,
    /// The profile's suppressions, each a registry property with its reason and what it
    /// hid in this run.
    pub suppressed: Vec<String>,
    /// Per silent point, the reading the target took (`silent.rs`).
    pub readings: Vec<silent::PointRow>,
    /// The registry's verdicts over the exchanges sent, beside the oracle's.
    pub registry: Registry,
    /// Per rule the platform keeps, the registry's verdict (`rule_rows.rs`).
    pub rules: Vec<rule_rows::RuleRow>,
}

impl Report {
    /// 0 conforms, 1 a violation (the oracle's or the registry's), 3 incomplete (the
    /// oracle's bounds, seeds not reached, or a registry that judged nothing: see
    /// [`Registry::exit_code`]), 2 nothing checked.
    pub fn exit_code(&self) -> u8 {
        let registry = self.registry.exit_code(self.cases_run);
        if !self.violations.is_empty() || registry == 1 {
            1
        } else if !self.incomplete.is_empty()
            || self.target_failed_past_share()
            || (self.not_run > 0 && self.continue_with.is_some())
            || registry == 3
        {
            3
        } else if self.cases_run == 0 {
            2
        } else {
            0
        }
    }

    /// Whether the target failed more than [`TARGET_FAILED_SHARE_PCT`] % of the exchanges.
    pub fn target_failed_past_share(&self) -> bool {
        self.target_failed * 100 > self.exchanged * TARGET_FAILED_SHARE_PCT
    }

    pub fn verdict(&self) -> &'static str {
        match self.exit_code() {
            0 => "conforms",
            1 => "VIOLATION",
            3 => "incomplete",
            _ => "nothing checked",
        }
    }
}

impl Finding {
    /// The rule a finding is kept under, one per rule with `--keep-going`.
    pub fn rule(&self) -> &str {
        self.rules.last().copied().unwrap_or("(no rule)")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ConformFormat {
    Text,
    Json,
    Markdown,
    /// JUnit XML: a test case per violating or unfinished case, per mutant with
    /// --kill-matrix (docs/ci.md).
    Junit,
    /// One self-contained HTML page: the verdict, each violation's shrunk case drawn
    /// (inline SVG) with the answers no model state explains marked (docs/conform.md).
    Html,
}

#[derive(clap::Args, Debug)]
pub struct ConformArgs {
    /// The target's base URL (`http://127.0.0.1:8080`); overrides the profile's
    /// `base_url`. Not needed with --kill-matrix (conform starts each sandbox itself).
    #[arg(long)]
    pub target: Option<String>,
    /// The profile of the target (JSON, docs/conform.md; docs/profiles/sandbox.json for
    /// `payhub-verify serve --clock manual`).
    #[arg(long)]
    pub profile: PathBuf,
    /// Seeds of the cases, `A..B` (B excluded) or one seed.
    #[arg(long, conflicts_with = "preset")]
    pub seeds: Option<SeedRange>,
    /// A named sweep: `smoke` (seeds 0..50), `sweep` (0..2000), `long` (0..20000).
    #[arg(long)]
    pub preset: Option<String>,
    /// Put the proxy's faults on the wire (reset before forwarding, forward then reset,
    /// hold, duplicate) on about one request in seven.
    #[arg(long)]
    pub proxy_faults: bool,
    /// `I/N`: run only the seeds whose index modulo N is I (a CI matrix).
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Start no case after this long (`90s`, `10min`); the seeds not reached make the
    /// run incomplete (exit 3) and the report prints how to continue.
    #[arg(long)]
    pub duration: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ConformFormat,
    /// Model states the oracle may hold between rounds; more is an incomplete run.
    #[arg(long, default_value_t = 2048, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_states: usize,
    /// Runs a shrinking candidate with concurrent requests gets before it is dropped (a
    /// flaky target's race may need more than one).
    #[arg(long, default_value_t = 3)]
    pub reruns: usize,
    /// Runs of the target the shrinking of one violation may spend.
    #[arg(long, default_value_t = 150)]
    pub shrink_budget: usize,
    /// Start `payhub-verify serve --mutant NAME` for every platform and parameter mutant
    /// of the zoo (or those of --mutants), and report which conform finds over HTTP.
    #[arg(long)]
    pub kill_matrix: bool,
    /// Go on after a violation: every distinct violation is kept, one per rule (the
    /// rule the target broke), the other seeds that broke it listed with it.
    #[arg(long)]
    pub keep_going: bool,
    /// With --kill-matrix: only these mutants (comma-separated names); with --start, the
    /// planted bugs of the platform under test, each started in turn.
    #[arg(long, value_delimiter = ',')]
    pub mutants: Vec<String>,
    /// With --kill-matrix: a shell command that starts the platform under test with the
    /// planted bug `{mutant}` (each name of --mutants in turn) and prints its base URL
    /// (the first word starting `http://` on its stdout) once it listens; it is killed
    /// when its sweep ends. Any platform, in any language.
    #[arg(long, value_name = "COMMAND", requires = "kill_matrix")]
    pub start: Option<String>,
    /// Write each case's exchanges, as they were sent, to `DIR/seed-N.har`
    /// (HAR 1.2, card numbers redacted), for `check-log DIR/*.har --profile …`.
    #[arg(long, value_name = "DIR", conflicts_with = "kill_matrix")]
    pub har: Option<PathBuf>,
}

pub const HELP: &str = "\
Exit codes: 0 every case conforms and the registry finds no violation over the recorded
exchanges; 1 a violation (the oracle's printed shrunk, as Mermaid and as a what-if script;
the registry's with its witness exchanges); 2 bad usage, a bad profile, a target that is
down or answers a field the profile does not expect; 3 incomplete (a bound of the oracle,
--duration ran out, or the registry judged nothing: a property it cannot judge is listed,
never a pass).

Examples:
  payhub-verify serve --addr 127.0.0.1:8080 --clock manual &
  payhub-verify conform --target http://127.0.0.1:8080 --profile docs/profiles/sandbox.json --preset sweep --proxy-faults
  payhub-verify conform --target http://127.0.0.1:8080 --profile docs/profiles/sandbox.json --seeds 0..100000 --shard 3/8 --duration 10min
  payhub-verify conform --profile docs/profiles/sandbox.json --kill-matrix --seeds 0..300
  payhub-verify conform --profile docs/profiles/sandbox.json --kill-matrix --mutants key_claimed_after_charge,card_in_fingerprint
  payhub-verify conform --profile docs/profiles/pyplat.json --kill-matrix --start 'python3 tests/platform_py/platform.py --port 0 --bug {mutant}' --mutants conflict_ignores_currency,throttle_executes";

/// How a sweep runs.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub seeds: Vec<u64>,
    pub seeds_text: String,
    /// How `--seeds` continues from a seed not reached: the range's end and the shard.
    pub continue_to: String,
    pub proxy_faults: bool,
    pub reruns: usize,
    pub shrink_budget: usize,
    pub deadline: Option<Instant>,
    pub keep_going: bool,
    /// Where each case's HAR log is written (`--har`).
    pub har: Option<PathBuf>,
}

fn seeds_of(args: &ConformArgs) -> Result<(SeedRange, String), String> {
    let to = |end| SeedRange { start: 0, end };
    let range = match (&args.seeds, args.preset.as_deref()) {
        (Some(r), _) => *r,
        (None, None | Some("smoke")) => to(50),
        (None, Some("sweep")) => to(2000),
        (None, Some("long")) => to(20000),
        (None, Some(other)) => {
            return Err(format!(
                "--preset {other}: not a conform preset (smoke, sweep, long)"
            ));
        }
    };
    Ok((range, format!("{}..{}", range.start, range.end)))
}

pub fn run(args: &ConformArgs) -> Result<ExitCode, String> {
    let text = crate::input::read_text(&args.profile)?;
    let profile = profile::Loaded::from_json(&text)
        .map_err(|e| format!("{}: {e}", args.profile.display()))?;
    let (range, mut seeds_text) = seeds_of(args)?;
    let seeds: Vec<u64> = (range.start..range.end)
        .filter(|s| {
            (args.shard)
                .is_none_or(|sh| (s - range.start) % u64::from(sh.count) == u64::from(sh.index))
        })
        .collect();
    let shard = (args.shard).map(|sh| format!("shard {}/{}", sh.index, sh.count));
    let shard = |pre: &str| {
        shard
            .as_ref()
            .map(|s| format!(" {pre}{s}"))
            .unwrap_or_default()
    };
    seeds_text.push_str(&shard(""));
    let deadline = match &args.duration {
        Some(d) => Some(
            payhub_sim::script::parse_duration(d)
                .ok_or_else(|| format!("--duration {d}: not a duration (90s, 10min)"))?,
        ),
        None => None,
    };
    let options = SweepOptions {
        seeds,
        seeds_text,
        continue_to: format!("..{}{}", range.end, shard("--")),
        proxy_faults: args.proxy_faults,
        reruns: args.reruns,
        shrink_budget: args.shrink_budget,
        deadline: deadline.map(|d| Instant::now() + Duration::from_millis(d.0)),
        keep_going: args.keep_going,
        har: args.har.clone(),
    };
    if let Some(dir) = &options.har {
        let why = |what: &str, e: std::io::Error| format!("--har {}: {what}: {e}", dir.display());
        std::fs::create_dir_all(dir).map_err(|e| why("cannot create", e))?;
        let earlier = (std::fs::read_dir(dir).map_err(|e| why("cannot read", e))?)
            .filter_map(Result::ok)
            .any(|e| e.path().extension().is_some_and(|x| x == "har"));
        if earlier {
            return Err(format!(
                "--har {}: holds HAR files of an earlier run, which `check-log DIR/*.har` would judge too; give an empty folder",
                dir.display()
            ));
        }
    }
    let runtime = crate::serve::runtime()?;
    let (out, code) = if args.kill_matrix {
        let (start, only, max) = (args.start.as_deref(), &args.mutants, args.max_states);
        let rows = runtime.block_on(matrix::kill_matrix(&profile, &options, start, only, max))?;
        let out = match args.format {
            ConformFormat::Json => {
                serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?
            }
            ConformFormat::Text => matrix::text(&rows),
            ConformFormat::Junit => crate::outcome::junit::render(&outcome::matrix(&rows)),
            f => crate::outcome::doc::draw(page::matrix(&rows), f == ConformFormat::Html),
        };
        (format!("{out}\n"), u8::from(matrix::tally(&rows).2 > 0))
    } else {
        let url = (args.target.clone())
            .or_else(|| profile.profile.base_url.clone())
            .ok_or("no target: give --target URL or the profile's base_url")?;
        let report = runtime.block_on(async {
            let target = connect(&url, profile, args.max_states, EdgeSeam::REFERENCE).await?;
            sweep(&target, &url, &options, None).await
        })?;
        let out = match args.format {
            ConformFormat::Text => report.text(),
            ConformFormat::Json => {
                serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
            }
            ConformFormat::Junit => crate::outcome::junit::render(&outcome::outcome(&report)),
            f => crate::outcome::doc::draw(page::page(&report), f == ConformFormat::Html),
        };
        (out, report.exit_code())
    };
    print!("{out}");
    if !out.ends_with('\n') {
        println!();
    }
    Ok(ExitCode::from(code))
}

/// The target, checked to answer and to take its controls; `seam`: the faults' decision
/// points (the edge zoo's, else [`EdgeSeam::REFERENCE`]).
pub async fn connect(
    url: &str,
    profile: profile::Loaded,
    max_states: usize,
    seam: EdgeSeam,
) -> Result<Target, String> {
    let addr = crate::wire::authority(url)?;
    let log_profile = crate::check_log::profile::of_loaded(&profile)?;
    let target = Target {
        profile,
        addr,
        seam,
        max_states,
        clock: record::TargetClock::default(),
        log_profile,
    };
    let checked = match run::probe(&target).await {
        Ok(()) => run::check_controls(&target, &format!("check{}", run_tag())).await,
        Err(e) => Err(e),
    };
    checked.map(|()| target).map_err(|e| format!("{url}: {e}"))
}

/// The generator's alphabet for a profile.
pub fn alphabet(profile: &profile::Loaded, proxy_faults: bool) -> generate::Alphabet {
    generate::Alphabet {
        outcomes: profile.outcomes(),
        keys: profile.model_keys.clone(),
        clock: profile.profile.clock.advance.is_some(),
        rate_limit: profile.profile.controls.rate_limit.is_some(),
        pause: profile.profile.controls.pause.is_some(),
        shapes: !profile.profile.strict,
        rotation: profile.target_keys(1).len() > 1,
        fault_rate: if proxy_faults { 150 } else { 0 },
    }
}

/// A tag no earlier run used: without a reset endpoint, names must differ from any
/// earlier run's (the wall clock names a run; it never decides a verdict).
fn run_tag() -> String {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let t = since.map_or(0, |d| d.as_millis() as u64);
    format!("{:x}", t % 0xff_ffff)
}

/// Runs the options' seeds until the first violation (shrunk), the end, or the deadline.
/// `bar`: progress on a terminal.
pub async fn sweep(
    t: &Target,
    url: &str,
    o: &SweepOptions,
    quiet: Option<()>,
) -> Result<Report, String> {
    let started = Instant::now();
    let alphabet = alphabet(&t.profile, o.proxy_faults);
    let bar = crate::progress::Bar::new(quiet.is_none(), o.seeds.len() as u64, "cases");
    let reset = t.profile.profile.isolation.reset.is_some();
    let run_id = (!reset).then(run_tag).unwrap_or_default();
    let mut report = Report {
        target: url.to_owned(),
        profile: t.profile.profile.name.clone(),
        seeds: o.seeds_text.clone(),
        proxy_faults: o.proxy_faults,
        readings: silent::rows(&t.profile.pins),
        ..Report::default()
    };
    for (n, &seed) in o.seeds.iter().enumerate() {
        if o.deadline.is_some_and(|d| Instant::now() >= d) {
            report.not_run = o.seeds.len() - n;
            report.continue_with = Some(format!("--seeds {seed}{}", o.continue_to));
            break;
        }
        let case = generate::generate(seed, &alphabet);
        let tag = format!("{run_id}s{seed}");
        let mut run = run::run_case(t, &case, &tag, o.har.is_some()).await?;
        if let (Some(dir), Some(har)) = (&o.har, run.registry.har.take()) {
            let path = dir.join(format!("seed-{seed}.har"));
            let written = std::fs::write(&path, har);
            written.map_err(|e| format!("--har: cannot write {}: {e}", path.display()))?;
        }
        report.registry.add(seed, std::mem::take(&mut run.registry));
        report.cases_run += 1;
        report.requests += case.requests();
        report.exchanged += run.sent;
        report.target_failed += run.failed.len();
        if report.target_first_failure.is_none() {
            report.target_first_failure = run.failed.first().map(|f| format!("seed {seed}: {f}"));
        }
        bar.inc();
        match &run.outcome {
            CaseOutcome::Conforms => silent::add(&mut report.readings, seed, &run.readings),
            CaseOutcome::Incomplete(why) => report.incomplete.push((seed, why.clone())),
            CaseOutcome::Violation { .. } => {
                let detected = started.elapsed().as_secs_f64();
                let mut k = 0usize;
                let mut tag = || {
                    k += 1;
                    format!("{run_id}s{seed}x{k}")
                };
                let shrunk =
                    shrink::shrink(t, case.clone(), run, o.reruns, o.shrink_budget, &mut tag)
                        .await?;
                let f = finding(t, &case, shrunk, report.cases_run, detected);
                if let Some(same) = report.violations.iter_mut().find(|v| v.rule() == f.rule()) {
                    same.also_seeds.push(seed);
                } else {
                    report.violations.push(f);
                }
                if !o.keep_going && !report.violations.is_empty() {
                    report.not_run = o.seeds.len() - n - 1;
                    break;
                }
            }
        }
    }
    bar.done();
    report.suppressed = report.registry.suppress(&t.profile.profile.suppress);
    report.rules = rule_rows::rows(&report.registry);
    report.elapsed_s = started.elapsed().as_secs_f64();
    report.cases_per_s = report.cases_run as f64 / report.elapsed_s.max(1e-9);
    Ok(report)
}

fn finding(
    t: &Target,
    case: &case::Case,
    shrunk: shrink::Shrunk,
    cases: usize,
    detected_s: f64,
) -> Finding {
    let (round, allowed, tape, rules) = match &shrunk.run.outcome {
        CaseOutcome::Violation {
            round,
            allowed,
            tape,
            rules,
        } => (*round, allowed.clone(), tape.clone(), rules.clone()),
        _ => (0, Vec::new(), Vec::new(), Vec::new()),
    };
    let config = oracle::model_config();
    let about = format!(
        "payhub-verify conform against {}: seed {}, the shrunk case's model run",
        t.profile.profile.name, case.seed
    );
    let script = payhub_sim::script::script_from_tape(&config, &tape, None, &about);
    let mut script = script.unwrap_or_else(|e| format!("# no script: {e}\n"));
    for e in shrunk.run.exchanges.iter().filter(|e| e.round == round) {
        script.push_str(&format!(
            "# the target answered {}  →  {}\n",
            e.request, e.answer
        ));
    }
    for a in &allowed {
        script.push_str(&format!("# the model allows {a}\n"));
    }
    Finding {
        property: page::PROPERTY,
        rules,
        also_seeds: Vec::new(),
        seed: case.seed,
        requests: case.requests(),
        shrunk_requests: shrunk.case.requests(),
        shrink_runs: shrunk.runs,
        detected_after_cases: cases,
        detected_after_s: detected_s,
        mermaid: report::diagram(&shrunk.run.exchanges, round, &allowed).to_mermaid(),
        exchanges: shrunk.run.exchanges,
        breaking_round: round,
        allowed,
        script,
    }
}
