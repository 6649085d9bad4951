//! `payhub-verify check-log FILE…`: recorded traffic judged against the contract.
//!
//! One way, as everywhere in the harness: a reader per format turns records into
//! entries ([`entry`]: [`har`] HAR 1.2, [`access_log`] the gateway shape; the project's
//! own event stream needs no entries), [`feed`] turns entries into events in time
//! order, the facts and the wire facts fold them, and the judge of `payhub-verify
//! judge` gives every property's verdict: `holds`, `violated`, or `cannot_judge`
//! naming the evidence a log cannot hold ([`report`] prints them).
//!
//! Exit codes: 0 every property judged holds; 1 a violation; 2 bad input or nothing
//! judged; 3 incomplete: some entries were unreadable (skipped, listed), or reading
//! stopped at `--memory-max` ([`crate::heap`]), and nothing was violated in what was
//! judged, so a pass is not claimed.
//!
//! Memory: the readers stream (one HAR entry, one line at a time); what stays is what
//! the rules must remember (the wire facts' scopes within RET-01's retention, order and
//! refund numbers, the objects still unresolved), counted by `--stats`.

pub mod access_log;
mod bound;
pub mod detect;
pub mod entry;
pub mod feed;
pub mod generate;
pub mod har;
pub mod keys;
mod logs;
pub mod merge;
pub mod page;
pub mod parts;
mod pool;
pub mod profile;
pub mod report;
pub mod request;

use bound::{Bound, STOPPED};
use detect::Format;
use entry::Label;
pub use logs::Run;
use payhub_properties::evidence::Assumed;
use payhub_properties::verdict::{Folded, Status, Verdict};
use profile::LogProfile;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct CheckLogArgs {
    /// HAR 1.2 files, payhub event streams (JSON Lines) or access logs (JSON Lines, the
    /// shape of docs/check-log.md); the format of each is detected. `-` is standard
    /// input; each is read once, so pipes, FIFOs and `<(zcat x.gz)` work (a gzip file
    /// itself is refused: decompress it first).
    #[arg(required_unless_present = "generate")]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: LogFormat,
    /// API keys to merchant and environment (JSON: {"KEY": {"merchant": 1,
    /// "environment": "test"}, "*": …}; "*" is the owner of entries with no key). Without
    /// it, each unknown key is assumed a merchant of its own (one scope per key, printed
    /// as an assumption).
    #[arg(long)]
    pub api_key_map: Option<PathBuf>,
    /// Assume the log is complete: every request made to the platform under the log's
    /// API keys while it was recorded is in it. Printed as an assumption; the wire
    /// properties that need it (a refused or rejected request later answered as if it
    /// had executed, RATE-01, RATE-04, REJECT-01) are judged, and listed only then.
    #[arg(long)]
    pub complete_log: bool,
    /// Read two creates of one merchant, environment, amount and currency, the second
    /// under another order number while the first was unknown, as one purchase renumbered
    /// (refunds of one Payment and amount alike): a breach of UNKNOWN-03. Printed as an
    /// assumption (A-SAME-PURCHASE-BY-AMOUNT); without it such a pair is `cannot judge`,
    /// since only the merchant's orders tell a new purchase from a renumbered one.
    #[arg(long)]
    pub same_purchase_by_amount: bool,
    /// The platform's profile, as `conform` reads it (docs/conform.md): its API keys'
    /// merchants and environments, its error codes and its test cards under
    /// `card_field`. `--api-key-map` overrides its keys.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Print a generated access log of N exchanges to stdout instead (for measuring:
    /// `check-log --generate 3000000 > big.jsonl`); judges no file.
    #[arg(long, value_name = "N", conflicts_with = "files",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub generate: Option<u64>,
    /// With --generate: the file's format (a HAR is one JSON document, written as it
    /// is generated, never held whole).
    #[arg(long, value_enum, default_value = "access-log", requires = "generate")]
    pub generate_format: generate::Shape,
    /// With --generate: spread the orders over M merchants (API keys no map names).
    #[arg(long, value_name = "M", default_value_t = 1, requires = "generate",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub generate_merchants: u32,
    /// Seconds to wait for a writer to open a FIFO given as a file; past it, exit 2.
    #[arg(long, value_name = "S", default_value_t = 30)]
    pub wait: u64,
    /// The most memory the process may hold resident (`512M`, `1.5G`, bytes): past it,
    /// reading stops and the run is incomplete (exit 3, naming the bound and the last
    /// entry judged; exit 1 if what was judged shows a violation), never an abort.
    /// Default: three quarters of the least of the address-space limit (`ulimit -v`), the
    /// control group's memory limit and the machine's memory, less 64 MiB.
    #[arg(long, value_name = "SIZE", value_parser = crate::heap::parse_size)]
    pub memory_max: Option<u64>,
    /// Print on standard error, per file, what the run held: the memory the judgement
    /// added (resident) at the end and at its peak, the idempotency keys, numbers and
    /// objects retained, the bytes per retained key and per record, and the throughput.
    #[arg(long)]
    pub stats: bool,
    /// Threads parsing the log's records, and as many judging its partitions (one per
    /// merchant: no scope crosses a merchant); the output is the same, byte for byte,
    /// whatever the number (but where --memory-max stops a run: the batches read ahead
    /// move the entry it stops at). Default: the machine's cores.
    #[arg(long, value_parser = crate::usage::threads)]
    pub threads: Option<usize>,
    /// Judge only the merchants whose stable hash is I of N (`0/4` … `3/4`): one machine
    /// of N; `payhub-verify merge` joins the N shards' `--format json` into the verdict
    /// of the whole log (docs/check-log.md, "Sharded across machines").
    #[arg(long, value_name = "I/N", value_parser = parts::shard_arg)]
    pub shard: Option<parts::Shard>,
    /// Judge one side only: `platform` (a log of requests a tester sent on purpose, such
    /// as `conform --har`'s, where the merchant's rules are broken by design) or
    /// `merchant`; the properties left out are named as an assumption, never as held.
    #[arg(long, value_enum)]
    pub side: Option<LogSide>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
    Markdown,
    /// JUnit XML: a test suite per file, a test case per property (docs/ci.md).
    Junit,
    /// One self-contained HTML page: the verdict, each violation's witness drawn (inline
    /// SVG), then what holds and what cannot be judged (docs/check-log.md).
    Html,
}

/// The side a log is judged for (`--side`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogSide {
    Platform,
    Merchant,
}

impl LogSide {
    /// `j` judged for this side only: the other side's verdicts dropped, and counted in
    /// an assumption so that nothing left out reads as held.
    fn keep(self, j: &mut Judged) {
        let platform = self == LogSide::Platform;
        let before = j.verdicts.len();
        j.verdicts.retain(|v| v.judges_platform() == platform);
        let (kept, other) = if platform {
            ("platform's", "merchant's")
        } else {
            ("merchant's", "platform's")
        };
        j.assumptions.push(format!(
            "only the {kept} properties are judged (--side): {} of the {other} are left out, neither held nor violated",
            before - j.verdicts.len()
        ));
    }
}

/// One file judged.
pub struct Judged {
    pub file: PathBuf,
    pub format: Format,
    pub entries: u64,
    pub judged: u64,
    pub ignored: u64,
    pub skipped: u64,
    pub skips: Vec<(Label, String)>,
    /// What was assumed where the file does not say (the owners of unknown API keys).
    pub assumptions: Vec<String>,
    /// Requests refused for authentication (401, key of no known owner): no scope.
    pub unscoped: u64,
    pub verdicts: Vec<Verdict>,
    /// Why reading stopped before the end (`--memory-max`): the run is incomplete.
    pub stopped: Option<String>,
    /// What the judgement held in memory.
    pub held: Held,
    /// `--shard I/N`: the merchants judged are those of shard I.
    pub shard: Option<parts::Shard>,
    /// The partitions (merchants) judged.
    pub partitions: usize,
    /// What was read of the log: a shard names the log it judged by it.
    pub read: crate::input::Identity,
}

/// What a file's judgement held in memory ([`crate::heap`]'s reading), and what it
/// retained: `--stats`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Held {
    /// Memory held by the judgement at the end of the file (resident, over what was held
    /// before it).
    pub end: u64,
    /// The most it held between two entries.
    pub peak: u64,
    pub retained: payhub_properties::facts::wire::Retained,
}

/// What a file's exit code and closing line are made of: of a [`Judged`], or of the
/// shards [`merge`] joins.
pub struct Closing<'a> {
    /// The first property violated: its name, its rules, its detail.
    pub violated: Option<(&'a str, String, &'a str)>,
    pub stopped: Option<&'a str>,
    /// A shard's run (`--shard`).
    pub sharded: bool,
    /// Requests judged; entries unreadable.
    pub judged_entries: u64,
    pub skipped: u64,
    /// Properties judged, and those that cannot judge.
    pub judged: usize,
    pub cannot: usize,
    /// Of those judged, the ones that hold vacuously (none of their requests in the log).
    pub vacuous: usize,
}

impl Closing<'_> {
    pub fn exit(&self) -> u8 {
        if self.violated.is_some() {
            1
        } else if self.stopped.is_some() {
            3
        } else if self.judged_entries == 0 && self.sharded {
            // A shard with none of the log's merchants: the merge judges.
            0
        } else if self.judged_entries == 0 || self.judged == 0 {
            2
        } else if self.skipped > 0 {
            3
        } else {
            0
        }
    }
}

impl Judged {
    pub fn exit(&self) -> u8 {
        self.closing().exit()
    }

    /// What the exit code and the closing line are made of.
    pub fn closing(&self) -> Closing<'_> {
        let judged = self
            .verdicts
            .iter()
            .filter(|v| v.status != Status::CannotJudge)
            .count();
        Closing {
            violated: self
                .verdicts
                .iter()
                .find(|v| v.status == Status::Violated)
                .map(|v| {
                    (
                        v.name,
                        v.rules.join(", "),
                        v.detail.as_deref().unwrap_or_default(),
                    )
                }),
            stopped: self.stopped.as_deref(),
            sharded: self.shard.is_some(),
            judged_entries: self.judged,
            skipped: self.skipped,
            judged,
            cannot: self.verdicts.len() - judged,
            vacuous: self.verdicts.iter().filter(|v| v.vacuous).count(),
        }
    }
}

/// The assumption `--complete-log` makes, as printed.
pub const COMPLETE_LOG: &str = "the log is complete (--complete-log): every request made to the platform under its API keys while it was recorded is in it, so a scope whose every logged request was refused (429, 503 temporarily_unavailable, 400, 403, 422) had nothing executed (RATE-01, RATE-04, REJECT-01)";

/// The assumption `--same-purchase-by-amount` makes, as printed.
pub const SAME_PURCHASE: &str = "the same purchase by amount (--same-purchase-by-amount, A-SAME-PURCHASE-BY-AMOUNT): a create of one merchant, environment, amount and currency under another order number while an earlier one was unknown is that purchase renumbered; a refund of one Payment and amount under another refund number alike (UNKNOWN-03)";

/// The assumptions `assumed` makes, as printed.
fn assumption_texts(assumed: Assumed) -> impl Iterator<Item = String> {
    [
        (assumed.complete_log, COMPLETE_LOG),
        (assumed.same_purchase_by_amount, SAME_PURCHASE),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, text)| text.to_owned())
}

pub fn run(args: &CheckLogArgs) -> Result<ExitCode, String> {
    if let Some(n) = args.generate {
        let (shape, merchants) = (args.generate_format, args.generate_merchants);
        generate::write(n, shape, merchants, &mut std::io::stdout().lock())
            .map_err(|e| format!("cannot write: {e}"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let memory_max = args.memory_max.unwrap_or_else(crate::heap::default_max);
    crate::input::set_writer_wait(args.wait);
    let started = std::time::Instant::now();
    let mut worst = 0u8;
    let mut all = Vec::new();
    let profile = args.profile.as_deref().map(profile::load).transpose()?;
    for file in &args.files {
        let key_map = args.api_key_map.as_deref();
        let seam = crate::serve::seam::EdgeSeam::REFERENCE;
        let at = std::time::Instant::now();
        let run = Run {
            threads: args
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            shard: args.shard,
        };
        let assumed = Assumed {
            complete_log: args.complete_log,
            same_purchase_by_amount: args.same_purchase_by_amount,
        };
        let bounds = (memory_max, run);
        match judge_file_seam(file, key_map, profile.as_ref(), assumed, seam, bounds) {
            Ok(mut j) => {
                if let Some(side) = args.side {
                    side.keep(&mut j);
                }
                if args.stats {
                    eprintln!("{}", stats_line(&j, at.elapsed().as_secs_f64()));
                }
                worst = rank(worst, j.exit());
                all.push(j);
            }
            Err(e) => {
                eprintln!("payhub-verify check-log: {e}");
                worst = 2;
            }
        }
    }
    report::print(&all, args.format, started.elapsed().as_secs_f64())?;
    Ok(ExitCode::from(worst))
}

/// The worse of two exit codes: bad input, then a violation, then incomplete.
fn rank(a: u8, b: u8) -> u8 {
    let order = |c: u8| match c {
        2 => 3,
        1 => 2,
        3 => 1,
        _ => 0,
    };
    if order(b) > order(a) { b } else { a }
}

/// `--stats`: what a file's judgement held and how fast it went.
pub fn stats_line(j: &Judged, seconds: f64) -> String {
    use crate::heap::show;
    let r = &j.held.retained;
    // Per key, the numbers and objects those keys made included.
    let per_key = match r.keys {
        0 => "no key retained".to_owned(),
        keys => format!("{} B per retained key", j.held.end / keys as u64),
    };
    let records = (r.keys + r.numbers + r.objects) as u64;
    let per_record = j.held.end.checked_div(records).unwrap_or(0);
    format!(
        "stats: {}: {} entries in {seconds:.2} s ({:.0} entries/s); memory held {} at the end, {} at the peak; retained {} idempotency keys, {} order and refund numbers, {} objects: {per_key}, {per_record} B per retained record",
        j.file.display(),
        j.entries,
        j.entries as f64 / seconds.max(1e-9),
        show(j.held.end),
        show(j.held.peak),
        r.keys,
        r.numbers,
        r.objects,
    )
}

/// [`judge_file_seam`] with the HAR reader's decision points `seam` (the edge zoo's).
pub fn judge_file_with(
    path: &Path,
    key_map: Option<&Path>,
    complete: bool,
    seam: crate::serve::seam::EdgeSeam,
) -> Result<Judged, String> {
    let assumed = Assumed {
        complete_log: complete,
        ..Assumed::default()
    };
    judge_file_seam(path, key_map, None, assumed, seam, (u64::MAX, Run::ONE))
}

/// Judges one file (`-`: standard input), read once; `Err` (exit 2) when it is none of
/// the formats, empty, compressed, past a bound, or judged nothing. `assumed`: what the
/// log is assumed to be ([`COMPLETE_LOG`], [`SAME_PURCHASE`]); `profile`: the
/// platform's keys, error codes and test cards (`--api-key-map` still overrides its keys).
fn judge_file_seam(
    path: &Path,
    key_map: Option<&Path>,
    profile: Option<&LogProfile>,
    assumed: Assumed,
    seam: crate::serve::seam::EdgeSeam,
    (memory_max, run): (u64, Run),
) -> Result<Judged, String> {
    let before = crate::heap::in_use();
    let mut bound = Bound {
        max: memory_max,
        before,
        peak: 0,
        stopped: None,
    };
    let named = profile.map_or(&[][..], |p| &p.keys[..]);
    let keys = keys::Keys::load(key_map, named)?;
    let mut input = crate::input::open(path)?;
    let format = detect::detect(&mut input)?;
    let name = input.name.clone();
    let progress = crate::progress::Progress::new(true);
    let judged = match format {
        // The platform's events (its store, the ledger) are not a merchant's: whole.
        Format::Events if run.shard.is_some() => {
            return Err(format!(
                "{name}: an event stream is judged whole: --shard splits a HAR or an access log by merchant"
            ));
        }
        Format::Events => judge_events(path, &mut input, &progress, assumed, &mut bound)?,
        Format::Har | Format::AccessLog => {
            let log = logs::Log {
                path,
                format,
                assumed,
                seam,
                run,
            };
            logs::judge(&log, keys, profile, &mut input, &progress, &mut bound)?
        }
    };
    progress.done();
    let judged = Judged {
        read: input.read.get(),
        ..judged
    };
    if run.shard.is_some() {
        return Ok(judged);
    }
    if judged.entries == 0 {
        return Err(format!("{name}: empty: nothing to judge"));
    }
    if let (0, Some((label, why))) = (judged.judged, judged.skips.first()) {
        return Err(format!(
            "{name}: {} entries, none judged: {} unreadable (first, {label}: {why}), {} not a request to the contract's API (/v1/…)",
            judged.entries, judged.skipped, judged.ignored
        ));
    }
    if judged.judged == 0 {
        return Err(format!(
            "{name}: {} entries, none a request to the contract's API (/v1/…): nothing judged",
            judged.entries
        ));
    }
    Ok(judged)
}

fn judge_events(
    path: &Path,
    input: &mut crate::input::Input,
    progress: &crate::progress::Progress,
    assumed: Assumed,
    bound: &mut Bound,
) -> Result<Judged, String> {
    // An event stream is the harness's (a world's, the sandbox's tape): judged as `judge`
    // judges it, with the sandbox's reading of "the same purchase".
    let mut folded = Folded::harness();
    let harness = folded.side.supply.assumed();
    let (mut entries, mut skipped, mut skips) = (0u64, 0u64, Vec::new());
    let mut last = None;
    let name = input.name.clone();
    crate::input::each_line(&mut input.reader, &name, &mut |line| {
        entries += 1;
        match crate::judge_cmd::event_of(&line) {
            Ok(e) => {
                crate::input::in_order(&mut last, e.at, &format!("{name}:{}", line.n))?;
                folded.observe(&e);
            }
            Err(why) => {
                skipped += 1;
                if skips.len() < 50 {
                    skips.push((Label::Line(line.n), unreadable(line.unended, why)));
                }
            }
        }
        if entries % 65_536 == 0 {
            progress.say(&format!("{entries} events"));
        }
        match bound.check(Label::Line(line.n), entries) {
            std::ops::ControlFlow::Continue(()) => Ok(()),
            std::ops::ControlFlow::Break(()) => Err(STOPPED.to_owned()),
        }
    })
    .or_else(|e| if e == STOPPED { Ok(()) } else { Err(e) })?;
    folded.close();
    let held = bound.held(folded.side.wire.retained());
    folded.side.supply.assume(Assumed {
        same_purchase_by_amount: harness.same_purchase_by_amount,
        ..assumed
    });
    Ok(Judged {
        file: path.to_owned(),
        format: Format::Events,
        entries,
        judged: folded.events as u64,
        ignored: 0,
        skipped,
        skips,
        assumptions: assumption_texts(assumed).collect(),
        unscoped: folded.side.wire.refused_auth,
        verdicts: folded.verdicts(),
        stopped: bound.stopped.take(),
        held,
        shard: None,
        partitions: 0,
        read: Default::default(),
    })
}

/// Why a line of a JSON Lines file is unreadable: `why`, or that it was cut off when the
/// file ends inside it (a tape on a full disk), as `judge` says it.
fn unreadable(unended: bool, why: String) -> String {
    if unended {
        crate::input::torn(&why)
    } else {
        why
    }
}

#[cfg(test)]
#[path = "tests_keys.rs"]
mod keys_tests;
