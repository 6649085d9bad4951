//! A HAR or an access log judged: read once, entry by entry, each request of the API
//! folded in its merchant's partition ([`super::parts`]), on `--threads` threads, the
//! partitions' verdicts joined; with `--shard I/N`, only the merchants of shard I.

use super::bound::{Bound, STOPPED};
use super::detect::Format;
use super::entry::{self, Label};
use super::keys::Keys;
use super::parts::{self, Parts, Shard};
use super::profile::LogProfile;
use super::{COMPLETE_LOG, Held, Judged, access_log, har};
use payhub_properties::facts::wire::{Retained, Seen};
use std::ops::ControlFlow;
use std::path::Path;

/// How a run reads its logs.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Threads judging partitions (1: the reader's own).
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
    pub complete: bool,
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
    if log.format == Format::Har {
        har::read_with(&mut input.reader, log.seam, &mut each)
            .map_err(|e| format!("{name}:{e}"))?;
    } else {
        crate::input::each_line(&mut input.reader, &name, &mut |line| {
            let n = line.n;
            let read = line
                .text
                .ok_or_else(|| "not UTF-8 text".to_owned())
                .and_then(|t| access_log::entry(n, t))
                .map_err(|why| (Label::Line(n), super::unreadable(&line, why)));
            match each(read) {
                ControlFlow::Continue(()) => Ok(()),
                ControlFlow::Break(()) => Err(STOPPED.to_owned()),
            }
        })
        .or_else(|e| if e == STOPPED { Ok(()) } else { Err(e) })?;
    }
    if let Some((label, why)) = &parts.disorder {
        return Err(format!("{name}: {label} {why}"));
    }
    let assumptions: Vec<String> = parts
        .keys
        .assumptions()
        .into_iter()
        .chain(log.complete.then(|| COMPLETE_LOG.to_owned()))
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
        if log.complete {
            feed.folded.supply.assume_complete_log();
        }
        let r = feed.folded.wire.retained();
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
        unscoped += feed.folded.wire.refused_auth;
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
    })
}
