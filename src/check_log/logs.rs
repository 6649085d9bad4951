//! A HAR or an access log judged: read once, its records parsed on `--threads` workers
//! and taken back in the file's order ([`Reader`]), each request of the API folded in
//! its merchant's partition ([`super::parts`]) on `--threads` more, the partitions'
//! verdicts joined; with `--shard I/N`, only the merchants of shard I.

use super::bound::{Bound, STOPPED};
use super::detect::Format;
use super::entry::{self, Label};
use super::keys::Keys;
use super::parts::{self, Parts, Shard};
use super::pool::Ordered;
use super::profile::LogProfile;
use super::{Held, Judged, access_log, har};
use payhub_properties::evidence::Assumed;
use payhub_properties::facts::wire::{Retained, Seen};
use serde_json::value::RawValue;
use std::ops::ControlFlow;
use std::path::Path;

/// How a run reads its logs.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Threads parsing records and judging partitions (1: the reader's own).
    pub threads: usize,
    pub shard: Option<Shard>,
}

impl Run {
    pub const ONE: Run = Run {
        threads: 1,
        shard: None,
    };
}

/// One log to judge.
pub struct Log<'a> {
    pub path: &'a Path,
    pub format: Format,
    pub assumed: Assumed,
    pub seam: crate::serve::seam::EdgeSeam,
    pub run: Run,
}

pub fn judge(
    log: &Log,
    keys: Keys,
    profile: Option<&LogProfile>,
    input: &mut crate::input::Input,
    progress: &crate::progress::Progress,
    bound: &mut Bound,
) -> Result<Judged, String> {
    let name = input.name.clone();
    let mut parts = Parts::new(keys, profile, log.run.threads, log.run.shard);
    let mut each = |r: Result<entry::Entry, (Label, String)>| {
        let label = match r {
            Ok(e) => {
                let label = e.label;
                parts.push(e);
                label
            }
            Err((label, why)) => {
                parts.unreadable(label, why);
                label
            }
        };
        if parts.read % 65_536 == 0 {
            progress.say(&format!("{} entries", parts.read));
        }
        bound.check(label, parts.read)
    };
    let threads = log.run.threads;
    let stop = |e: String| if e == STOPPED { Ok(()) } else { Err(e) };
    match log.format {
        Format::Har if threads > 1 => {
            let seam = log.seam;
            let mut read = Reader::new(threads, move |batch: Vec<(u64, Box<RawValue>)>| {
                let entry = |(i, raw): (u64, Box<RawValue>)| har::entry(i, raw.get(), seam);
                batch.into_iter().map(entry).collect()
            });
            let mut handed = Ok(ControlFlow::Continue(()));
            har::read_raw(&mut input.reader, &mut |i, raw| {
                let bytes = raw.get().len();
                handed = read.hand((i, raw), bytes, &mut each);
                match handed {
                    Ok(ControlFlow::Continue(())) => ControlFlow::Continue(()),
                    _ => ControlFlow::Break(()),
                }
            })
            .map_err(|e| format!("{name}:{e}"))
            .or_else(|e| read.unwind(e, &mut each))
            .or_else(stop)?;
            if handed?.is_continue() {
                read.finish(&mut each)?;
            }
        }
        Format::Har => {
            har::read_raw(&mut input.reader, &mut |i, raw| {
                each(har::entry(i, raw.get(), log.seam))
            })
            .map_err(|e| format!("{name}:{e}"))?;
        }
        _ if threads > 1 => {
            let mut read = Reader::new(threads, |batch: Vec<Line>| {
                let entry = |l: Line| line_entry(l.n, l.text.as_deref(), l.unended);
                batch.into_iter().map(entry).collect()
            });
            crate::input::each_line(&mut input.reader, &name, &mut |line| {
                let bytes = line.text.map_or(0, str::len);
                let line = Line {
                    n: line.n,
                    text: line.text.map(str::to_owned),
                    unended: line.unended,
                };
                match read.hand(line, bytes, &mut each)? {
                    ControlFlow::Continue(()) => Ok(()),
                    ControlFlow::Break(()) => Err(STOPPED.to_owned()),
                }
            })
            .or_else(|e| read.unwind(e, &mut each))
            .and_then(|()| read.finish(&mut each))
            .or_else(stop)?;
        }
        _ => {
            crate::input::each_line(&mut input.reader, &name, &mut |line| match each(line_entry(
                line.n,
                line.text,
                line.unended,
            )) {
                ControlFlow::Continue(()) => Ok(()),
                ControlFlow::Break(()) => Err(STOPPED.to_owned()),
            })
            .or_else(stop)?;
        }
    }
    if let Some((label, why)) = &parts.disorder {
        return Err(format!("{name}: {label} {why}"));
    }
    let assumptions: Vec<String> = parts
        .keys
        .assumptions()
        .into_iter()
        .chain(super::assumption_texts(log.assumed))
        .collect();
    let label = if log.format == Format::Har {
        Label::HarEntry
    } else {
        Label::Line
    };
    let name = |s: &Seen| format!("{} at +{}", label(u64::from(s.id.0)), s.sent);
    let (mut entries, mut ignored, mut skipped) = (parts.entries, parts.ignored, parts.skipped);
    let mut skips = std::mem::take(&mut parts.skips);
    let (mut judged, mut unscoped) = (0, 0);
    let mut feeds: Vec<_> = parts.feeds()?.into_values().collect();
    let partitions = feeds.len();
    let mut retained = Retained::default();
    for feed in &mut feeds {
        feed.finish();
        feed.folded.side.supply.assume(log.assumed);
        let r = feed.folded.side.wire.retained();
        retained.keys += r.keys;
        retained.numbers += r.numbers;
        retained.objects += r.objects;
    }
    // Measured while every partition's facts are held.
    let held: Held = bound.held(retained);
    let mut each_verdicts = Vec::new();
    for mut feed in feeds {
        entries += feed.entries;
        judged += feed.judged;
        ignored += feed.ignored;
        skipped += feed.skipped;
        skips.append(&mut feed.skips);
        unscoped += feed.folded.side.wire.refused_auth;
        each_verdicts.push(feed.verdicts(&name));
    }
    skips.sort_by_key(|(label, _)| *label);
    skips.truncate(parts::SKIPS_LISTED);
    let verdicts = match parts::join(each_verdicts)? {
        Some(v) => v,
        // No partition: what a log with no request of the API gives.
        None => {
            let keys = Keys::default();
            let mut empty = super::feed::Feed::part(keys.wire_facts(), profile);
            empty.finish();
            empty.verdicts(&name)
        }
    };
    Ok(Judged {
        file: log.path.to_owned(),
        format: log.format,
        entries,
        judged,
        ignored,
        skipped,
        skips,
        assumptions,
        unscoped,
        verdicts,
        stopped: bound.stopped.take(),
        held,
        shard: log.run.shard,
        partitions,
        read: Default::default(),
    })
}

/// Line `n` of an access log as an entry, or why it does not read (`unended`: the file
/// ends inside it).
fn line_entry(n: u64, text: Option<&str>, unended: bool) -> Parsed {
    text.ok_or_else(|| "not UTF-8 text".to_owned())
        .and_then(|t| access_log::entry(n, t))
        .map_err(|why| (Label::Line(n), super::unreadable(unended, why)))
}

/// A line of an access log, owned to be parsed on a worker.
struct Line {
    n: u64,
    /// `None`: not UTF-8.
    text: Option<String>,
    unended: bool,
}

/// An entry read, or where it is and why it does not read.
type Parsed = Result<entry::Entry, (Label, String)>;

/// What each entry read goes to, in the file's order.
type Each<'a> = dyn FnMut(Parsed) -> ControlFlow<()> + 'a;

/// Records gathered into a batch before a worker parses it, or fewer once they hold
/// [`BATCH_BYTES`]: the read-ahead of `--threads` workers is then at most
/// `3 × threads × 1 MiB` beyond its largest records.
const BATCH: usize = 256;
const BATCH_BYTES: usize = 1 << 20;

/// The records of a file parsed on `--threads` workers ([`Ordered`]), handed to `each`
/// in the file's order whatever the threads.
struct Reader<R> {
    pool: Ordered<Vec<R>, Vec<Parsed>>,
    batch: Vec<R>,
    /// The bytes of the records in `batch`.
    bytes: usize,
    /// `each` broke: the read stops.
    stopped: bool,
}

impl<R: Send + 'static> Reader<R> {
    fn new(threads: usize, parse: impl Fn(Vec<R>) -> Vec<Parsed> + Send + Clone + 'static) -> Self {
        Reader {
            pool: Ordered::new(threads, parse),
            batch: Vec::with_capacity(BATCH),
            bytes: 0,
            stopped: false,
        }
    }

    /// Takes record `r` of `bytes` bytes; the entries parsed by then go to `each`, in
    /// order.
    fn hand(&mut self, r: R, bytes: usize, each: &mut Each) -> Result<ControlFlow<()>, String> {
        self.batch.push(r);
        self.bytes += bytes;
        if self.batch.len() < BATCH && self.bytes < BATCH_BYTES {
            return Ok(ControlFlow::Continue(()));
        }
        self.bytes = 0;
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        let parsed = self.pool.send(full)?;
        Ok(self.give(parsed, each))
    }

    fn give(&mut self, parsed: Option<Vec<Parsed>>, each: &mut Each) -> ControlFlow<()> {
        for p in parsed.into_iter().flatten() {
            if each(p).is_break() {
                self.stopped = true;
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    /// The end of the file: the last batch parsed, every entry given to `each` (until
    /// it breaks).
    fn finish(&mut self, each: &mut Each) -> Result<(), String> {
        if self.stopped {
            return Ok(());
        }
        let last = std::mem::take(&mut self.batch);
        if !last.is_empty() {
            let parsed = self.pool.send(last)?;
            if self.give(parsed, each).is_break() {
                return Ok(());
            }
        }
        loop {
            let parsed = self.pool.next()?;
            if parsed.is_none() || self.give(parsed, each).is_break() {
                return Ok(());
            }
        }
    }

    /// The file cannot be read on (`e`): the entries read before go to `each` first, as
    /// on one thread; if they stop the read, the stop is what the run says ([`STOPPED`]),
    /// else `e`.
    fn unwind(&mut self, e: String, each: &mut Each) -> Result<(), String> {
        if e == STOPPED || self.stopped {
            return Err(e);
        }
        self.finish(each)?;
        Err(if self.stopped { STOPPED.to_owned() } else { e })
    }
}
