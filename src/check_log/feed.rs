//! Entries to events, in time order: a `Sent` at the entry's start and, at its end, a
//! `DeliveredStatus` with the answer read at the contract's level ([`ObservedAnswer`]) or a
//! `Lost`. Ends wait until a later entry starts, so overlapping exchanges
//! interleave as they happened. The recorded order is evidence: an entry that starts before
//! the one above it is never re-timed; the first is kept in [`Feed::disorder`] and the file
//! is refused naming it.

use super::entry::{Entry, Label, Reply};
use super::keys::Keys;
use super::profile::{CardReading, LogProfile};
use payhub_model::event::{Event, Message, What};
use payhub_model::observation::Dialect;
use payhub_model::observed::{ObservedAnswer, Shape};
use payhub_model::{Millis, RequestId};
use payhub_properties::evidence::Evidence;
use payhub_properties::verdict::{Folded, Verdict};
use std::collections::BTreeMap;

/// Unreadable entries listed by name; beyond this many, only counted.
const SKIPS_LISTED: usize = 50;

/// The judge's input side for a log: entries in, facts out.
pub struct Feed {
    pub folded: Folded,
    pub keys: Keys,
    /// How the platform's refusals read: the codes the contract names.
    dialect: Dialect,
    /// How its requests name their test cards.
    cards: CardReading,
    /// Ends of exchanges still open, by time then arrival, each with the answer read
    /// at the contract's level for the wire facts.
    open: BTreeMap<(Millis, u64), (Event, Option<ObservedAnswer>)>,
    seq: u64,
    /// Milliseconds since the epoch of the first entry: the log's time 0.
    base: Option<i64>,
    last: Millis,
    pub entries: u64,
    pub judged: u64,
    pub ignored: u64,
    pub skipped: u64,
    pub skips: Vec<(Label, String)>,
    pub bodiless: u64,
    /// The entry read last, and when it started (milliseconds since the epoch).
    previous: Option<(Label, i64)>,
    /// The first entry that starts before the entry above it: why the log is out of order.
    pub disorder: Option<(Label, String)>,
}

/// Why `entry` is out of the log's order after the entry read before it (`previous`, with
/// its start in milliseconds since the epoch), if it is.
pub fn out_of_order(previous: Option<(Label, i64)>, entry: &Entry) -> Option<String> {
    let (above, at) = previous?;
    (entry.started_ms < at).then(|| {
        format!(
            "starts {} ms before {above}, which the log has above it: the log is not in the order its requests started, and its order is evidence: refused, not re-ordered",
            at - entry.started_ms
        )
    })
}

/// The exchange id of an entry: its label's number, so that a witness names it back.
pub fn id_of(label: Label) -> RequestId {
    match label {
        Label::HarEntry(n) | Label::Line(n) | Label::Exchange(n) => RequestId(n as u32),
    }
}

impl Feed {
    /// A feed reading the platform through `profile` (the model's dialect by default).
    pub fn new(keys: Keys, profile: Option<&LogProfile>) -> Feed {
        Feed {
            // Entries are ordered by their stamps alone: within a millisecond, which
            // came first is unknown.
            folded: Folded::new(keys.wire_facts().ties_unordered()),
            keys,
            dialect: profile.map(|p| p.dialect.clone()).unwrap_or_default(),
            cards: profile.map(|p| p.cards.clone()).unwrap_or_default(),
            open: BTreeMap::new(),
            seq: 0,
            base: None,
            last: Millis::ZERO,
            entries: 0,
            judged: 0,
            ignored: 0,
            skipped: 0,
            skips: Vec::new(),
            bodiless: 0,
            previous: None,
            disorder: None,
        }
    }

    /// An entry that could not be read at all.
    pub fn unreadable(&mut self, label: Label, why: String) {
        self.entries += 1;
        self.skipped += 1;
        if self.skips.len() < SKIPS_LISTED {
            self.skips.push((label, why));
        }
    }

    pub fn push(&mut self, entry: Entry) {
        if let Some(why) = out_of_order(self.previous, &entry) {
            self.disorder.get_or_insert((entry.label, why));
        }
        self.previous = Some((entry.label, entry.started_ms));
        if !entry.is_api() {
            self.entries += 1;
            self.ignored += 1;
            return;
        }
        let (key, owner) = self.keys.resolve_owner(entry.api_key.as_deref());
        let base = *self.base.get_or_insert(entry.started_ms);
        self.push_as(entry, key, owner, base);
    }

    /// Folds a request to the API ([`Entry::is_api`]) whose key was resolved, as `key`
    /// of `owner`, the log's time 0 at `base` (milliseconds since the epoch): a
    /// partition's feed is told them by the reader of the whole log.
    pub fn push_as(
        &mut self,
        entry: Entry,
        key: payhub_model::ApiKeyId,
        owner: (payhub_model::MerchantId, payhub_model::Environment),
        base: i64,
    ) {
        let (mut request, other_fields) =
            match entry.request(&mut self.folded.side.wire.ids, &self.cards) {
                Ok(r) => (r.request, r.other_fields),
                Err(why) => return self.unreadable(entry.label, why),
            };
        self.entries += 1;
        self.judged += 1;
        request.api_key = key;
        self.folded.side.wire.own(key, owner);
        let start = Millis(entry.started_ms.saturating_sub(base).max(0) as u64).max(self.last);
        self.last = start;
        self.flush_until(start);
        let id = id_of(entry.label);
        if let Some(fingerprint) = other_fields {
            self.folded.side.wire.names_other_fields(id, fingerprint);
        }
        let from = 0;
        let shape = Shape::of(&request.endpoint);
        self.folded
            .observe(&Event::new(start, What::Sent { id, from, request }));
        let end = start.after(Millis(entry.duration_ms));
        let answer = entry.answer(shape, &self.dialect, &mut self.folded.side.wire.ids);
        let what = match &entry.outcome {
            Reply::Answered {
                status,
                retry_after_s,
                ..
            } => {
                if answer.is_none() {
                    self.bodiless += 1;
                }
                What::DeliveredStatus {
                    id,
                    to: from,
                    status: *status,
                    retry_after_s: *retry_after_s,
                }
            }
            Reply::NoAnswer => What::Lost {
                message: Message::Response { id, to: from },
            },
        };
        self.seq += 1;
        let event = Event::new(end, what);
        self.open.insert((end, self.seq), (event, answer));
    }

    /// A feed for one partition of a log (a merchant's requests): `wire` knows the
    /// anonymous owner; keys come resolved ([`Feed::push_as`]).
    pub fn part(
        wire: payhub_properties::facts::wire::WireFacts,
        profile: Option<&LogProfile>,
    ) -> Feed {
        let mut feed = Feed::new(Keys::default(), profile);
        feed.folded = Folded::new(wire.ties_unordered());
        feed
    }

    fn flush_until(&mut self, t: Millis) {
        while let Some(end) = self.open.first_entry().filter(|e| e.key().0 <= t) {
            match end.remove() {
                (
                    e @ Event {
                        what: What::DeliveredStatus { id, .. },
                        ..
                    },
                    Some(answer),
                ) => {
                    self.folded.observe_answered(&e, id, &answer);
                }
                (e, _) => self.folded.observe(&e),
            }
        }
    }

    /// Every property's verdict over what was fed (after [`Feed::finish`]), then
    /// liveness's: the judge of `payhub-verify judge`, each exchange of a witness named by
    /// `name`.
    pub fn verdicts(
        &self,
        name: &dyn Fn(&payhub_properties::facts::wire::Seen) -> String,
    ) -> Vec<Verdict> {
        self.folded.verdicts_naming(name)
    }

    /// The log has ended: every exchange closed, and what the log lacked said.
    pub fn finish(&mut self) {
        let (bodiless, judged) = (self.bodiless, self.judged);
        self.flush_until(Millis(u64::MAX));
        self.folded.close();
        let s = &mut self.folded.side.supply;
        if bodiless > 0 {
            let why = format!("{bodiless} of {judged} answers have no JSON body recorded");
            if bodiless < judged {
                // Part of the answers only: a witness among those with a body stands.
                s.lack_part(Evidence::ResponseBodies, why);
            } else {
                s.lack(Evidence::ResponseBodies, why);
            }
        }
        s.lack(
            Evidence::Platform,
            "a log holds no record of what each request executed, nor the platform's store",
        );
        s.lack(Evidence::Ledger, "the acquirer's ledger is not in a log");
        s.lack(
            Evidence::ClientProcess,
            "a log holds no timeout, retry or submission of the client's process",
        );
        s.lack(
            Evidence::MerchantDb,
            "the merchant's database is not in a log",
        );
        s.lack(
            Evidence::HangUps,
            "a log records an exchange without an answer, never whether the client gave up on it or the connection failed",
        );
    }
}
