//! A log judged by partitions, one per merchant, on `--threads` cores or on other machines
//! (`--shard I/N`, then `payhub-verify merge`).
//!
//! No scope crosses a merchant (SCOPE-01; UNIQ-01 and UNIQ-04 number per merchant and
//! environment). A partition is a merchant with all its environments: SCOPE-02's witness is
//! one object under two environments of one merchant. The reader of the whole log keeps
//! what is the log's (order, time 0, keys, entries not of the API); the partitions'
//! verdicts are joined by [`pick`], in an order independent of the grouping, so that one
//! thread, several, and shards merged give the same verdicts byte for byte.

use super::entry::{Entry, Label};
use super::feed::{Feed, out_of_order};
use super::keys::Keys;
use super::profile::LogProfile;
use payhub_model::{ApiKeyId, Environment, MerchantId};
use payhub_properties::facts::wire::WireFacts;
use payhub_properties::verdict::Verdict;
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Entries handed to a worker at once.
const BATCH: usize = 512;
/// Unreadable entries listed by name; beyond this many, only counted (as [`Feed`]).
pub const SKIPS_LISTED: usize = 50;

/// `--shard I/N`: this run keeps the merchants whose [`shard_of`] is `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub of: u32,
}

/// Reads `I/N` (0 ≤ I < N).
pub fn shard_arg(s: &str) -> Result<Shard, String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("'{s}' is not I/N (0/4 … 3/4)"))?;
    let number = |x: &str| (x.trim().parse()).map_err(|_| format!("'{x}' is not a number"));
    let (index, of): (u32, u32) = (number(i)?, number(n)?);
    if of == 0 || index >= of {
        return Err(format!("'{s}': I/N with 0 ≤ I < N"));
    }
    Ok(Shard { index, of })
}

/// The shard of `merchant` among `of`: FNV-1a of its number, the same on every machine
/// and in every run (not the standard library's randomized hash).
pub fn shard_of(merchant: MerchantId, of: u32) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in merchant.0.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % u64::from(of)) as u32
}

/// An entry of the API on its way to its partition.
struct Routed {
    entry: Entry,
    key: ApiKeyId,
    owner: (MerchantId, Environment),
    base: i64,
}

/// The partitions' feeds, by merchant.
type Feeds = BTreeMap<MerchantId, Feed>;

/// What each partition's feed starts from.
#[derive(Clone)]
struct Start {
    wire: WireFacts,
    profile: Option<LogProfile>,
}

impl Start {
    fn push(&self, feeds: &mut Feeds, r: Routed) {
        feeds
            .entry(r.owner.0)
            .or_insert_with(|| Feed::part(self.wire.clone(), self.profile.as_ref()))
            .push_as(r.entry, r.key, r.owner, r.base);
    }
}

enum Sink {
    Here(Feeds),
    Workers {
        senders: Vec<SyncSender<Vec<Routed>>>,
        batches: Vec<Vec<Routed>>,
        handles: Vec<JoinHandle<Feeds>>,
    },
}

/// The reader's side of a partitioned judgement.
pub struct Parts {
    pub keys: Keys,
    start: Start,
    shard: Option<Shard>,
    sink: Sink,
    base: Option<i64>,
    previous: Option<(Label, i64)>,
    /// The first entry out of the log's order: the file is refused naming it.
    pub disorder: Option<(Label, String)>,
    /// Entries the reader kept for itself (shard 0 counts them): not the API, or
    /// unreadable.
    pub entries: u64,
    pub ignored: u64,
    pub skipped: u64,
    pub skips: Vec<(Label, String)>,
    /// Every entry read, whatever its partition (how far the read got).
    pub read: u64,
}

impl Parts {
    /// Partitions judged on `threads` threads (1: in the reader's), keeping the shard's.
    pub fn new(
        keys: Keys,
        profile: Option<&LogProfile>,
        threads: usize,
        shard: Option<Shard>,
    ) -> Parts {
        let start = Start {
            wire: keys.wire_facts(),
            profile: profile.cloned(),
        };
        let sink = if threads <= 1 {
            Sink::Here(Feeds::new())
        } else {
            let (mut senders, mut handles) = (Vec::new(), Vec::new());
            for _ in 0..threads {
                let (tx, rx) = sync_channel::<Vec<Routed>>(4);
                let start = start.clone();
                senders.push(tx);
                handles.push(std::thread::spawn(move || work(&start, &rx)));
            }
            Sink::Workers {
                batches: (0..threads).map(|_| Vec::with_capacity(BATCH)).collect(),
                senders,
                handles,
            }
        };
        Parts {
            keys,
            start,
            shard,
            sink,
            base: None,
            previous: None,
            disorder: None,
            entries: 0,
            ignored: 0,
            skipped: 0,
            skips: Vec::new(),
            read: 0,
        }
    }

    fn ours(&self, merchant: Option<MerchantId>) -> bool {
        self.shard.is_none_or(|s| match merchant {
            Some(m) => shard_of(m, s.of) == s.index,
            // What is the log's, not a merchant's: the first shard's.
            None => s.index == 0,
        })
    }

    /// An entry that could not be read at all.
    pub fn unreadable(&mut self, label: Label, why: String) {
        self.read += 1;
        if self.ours(None) {
            self.entries += 1;
            self.skipped += 1;
            if self.skips.len() < SKIPS_LISTED {
                self.skips.push((label, why));
            }
        }
    }

    pub fn push(&mut self, entry: Entry) {
        self.read += 1;
        if let Some(why) = out_of_order(self.previous, &entry) {
            self.disorder.get_or_insert((entry.label, why));
        }
        self.previous = Some((entry.label, entry.started_ms));
        if !entry.is_api() {
            if self.ours(None) {
                self.entries += 1;
                self.ignored += 1;
            }
            return;
        }
        let (key, owner) = self.keys.resolve_owner(entry.api_key.as_deref());
        let base = *self.base.get_or_insert(entry.started_ms);
        if !self.ours(Some(owner.0)) {
            return;
        }
        let routed = Routed {
            entry,
            key,
            owner,
            base,
        };
        match &mut self.sink {
            Sink::Here(feeds) => self.start.push(feeds, routed),
            Sink::Workers {
                senders, batches, ..
            } => {
                let w = (owner.0.0 as usize) % senders.len();
                batches[w].push(routed);
                if batches[w].len() >= BATCH {
                    let full = std::mem::replace(&mut batches[w], Vec::with_capacity(BATCH));
                    // A worker that is gone has panicked: its join says so.
                    let _ = senders[w].send(full);
                }
            }
        }
    }

    /// Every partition's feed, once every entry was folded.
    pub fn feeds(self) -> Result<Feeds, String> {
        match self.sink {
            Sink::Here(feeds) => Ok(feeds),
            Sink::Workers {
                senders,
                batches,
                handles,
            } => {
                for (tx, batch) in senders.iter().zip(batches) {
                    let _ = tx.send(batch);
                }
                drop(senders);
                let mut all = Feeds::new();
                for h in handles {
                    let feeds = h
                        .join()
                        .map_err(|_| "a partition's judge stopped unexpectedly".to_owned())?;
                    all.extend(feeds);
                }
                Ok(all)
            }
        }
    }
}

fn work(start: &Start, rx: &Receiver<Vec<Routed>>) -> Feeds {
    let mut feeds = Feeds::new();
    while let Ok(batch) = rx.recv() {
        for r in batch {
            start.push(&mut feeds, r);
        }
    }
    feeds
}

/// The order in which candidate verdicts of one property are joined: a violation, then
/// reached, holds, unreached, cannot judge, and last holds vacuously (a partition without
/// the requests it judges says nothing of another that has them); among violations, the one whose witness's
/// last exchange closed first; then the whole verdict's text. A total order, so the
/// least of several is the same however they are grouped.
fn order_key(v: &serde_json::Value) -> (u8, u64, String) {
    let rank = match v["status"].as_str() {
        Some("violated") => 0,
        Some("reached") => 1,
        Some("holds") if v["vacuous"] == true => 5,
        Some("holds") => 2,
        Some("unreached") => 3,
        _ => 4,
    };
    let closed = v["witness"]["entries"]
        .as_array()
        .and_then(|es| es.iter().filter_map(|e| e["closed"].as_u64()).max())
        .unwrap_or(0);
    (rank, closed, v.to_string())
}

/// Which of `candidates` (one property's verdicts, as JSON) the joined verdict is.
pub fn pick(candidates: &[serde_json::Value]) -> Option<usize> {
    (0..candidates.len()).min_by_key(|&i| order_key(&candidates[i]))
}

/// Every partition's verdicts joined property by property ([`pick`]); `None` when there
/// is no partition.
pub fn join(mut each: Vec<Vec<Verdict>>) -> Result<Option<Vec<Verdict>>, String> {
    let Some(first) = each.first() else {
        return Ok(None);
    };
    let properties = first.len();
    if each.iter().any(|v| v.len() != properties) {
        return Err("partitions judged different properties".into());
    }
    let mut joined = Vec::with_capacity(properties);
    for p in 0..properties {
        let candidates: Vec<serde_json::Value> = each
            .iter()
            .map(|v| serde_json::to_value(&v[p]).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let i = pick(&candidates).unwrap_or(0);
        joined.push(i);
    }
    let mut taken: Vec<Vec<Option<Verdict>>> = each
        .drain(..)
        .map(|v| v.into_iter().map(Some).collect())
        .collect();
    Ok(Some(
        joined
            .iter()
            .enumerate()
            .filter_map(|(p, &i)| taken[i][p].take())
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_read_and_hash_stably() {
        assert_eq!(shard_arg("1/4"), Ok(Shard { index: 1, of: 4 }));
        assert!(shard_arg("4/4").is_err());
        assert!(shard_arg("0/0").is_err());
        assert!(shard_arg("x").is_err());
        // Fixed values: a change of the hash would move merchants between machines.
        let spread: Vec<u32> = (1..=8).map(|m| shard_of(MerchantId(m), 4)).collect();
        assert_eq!(spread, [0, 3, 2, 1, 0, 3, 2, 1]);
        let all: std::collections::BTreeSet<u32> =
            (0..1000).map(|m| shard_of(MerchantId(m), 4)).collect();
        assert_eq!(all.len(), 4);
    }

    #[test]
    fn the_join_prefers_a_violation_and_then_the_first_witness() {
        let v = |status: &str, closed: u64| serde_json::json!({"status": status, "witness": {"entries": [{"closed": closed}]}});
        let c = [
            v("holds", 0),
            v("violated", 50),
            v("violated", 20),
            v("cannot_judge", 0),
        ];
        assert_eq!(pick(&c), Some(2));
        // The same least, whatever the grouping.
        let (a, b) = (pick(&c[..2]).unwrap(), pick(&c[2..]).unwrap() + 2);
        assert_eq!(
            pick(&[c[a].clone(), c[b].clone()]).map(|i| [a, b][i]),
            Some(2)
        );
        assert_eq!(pick(&[]), None);
    }

    /// A property held vacuously in one partition (none of the requests it judges) and
    /// over requests in another holds over those: the join is not vacuous.
    #[test]
    fn the_join_prefers_a_pass_earned_to_a_vacuous_one() {
        let vacuous = serde_json::json!({"status": "holds", "detail": "vacuously: no refund", "vacuous": true});
        let earned = serde_json::json!({"status": "holds"});
        assert_eq!(pick(&[vacuous.clone(), earned.clone()]), Some(1));
        assert_eq!(pick(&[earned, vacuous.clone()]), Some(0));
        // Nor is a partition that cannot judge it (a refund without its answer's body).
        let cannot = serde_json::json!({"status": "cannot_judge"});
        assert_eq!(pick(&[vacuous, cannot]), Some(1));
    }
}
