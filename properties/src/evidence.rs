//! Evidence: what a property needs to be judged, and what a source supplied.
//!
//! A property reads facts, and facts are folded from events; a source that cannot see
//! some kind of event (a recorded log sees the wire only: no acquirer ledger, no
//! platform store, no merchant database) leaves the facts that kind feeds empty, and a
//! property over them would "hold" vacuously. So every property declares the
//! [`Evidence`] it needs (`Property::needs`), every source says what it supplied ([`Supply`]),
//! and a property whose needs are not all supplied is *cannot judge*, naming what was
//! missing and why, never *holds*.
//!
//! A stream says what it holds by the kinds of events in it ([`Supply::of_events`]): a
//! `Handled` event means the source observed the platform (and the model's acquirer
//! behind it), a `ClientSends` that it observed the client's process, and so on. A log
//! reader adds what it knows of its own gaps ([`Supply::lack`]: "no response bodies
//! recorded", "one API key unknown").

use payhub_model::client::Decision;
use payhub_model::event::What;
use serde::Serialize;
use std::collections::BTreeMap;

payhub_model::named! {
    fn about;
    /// One kind of evidence a property may need.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Evidence {
        /// Requests and whether and how they were answered, as the wire carried them.
        Wire = "the requests and answers on the wire",
        /// The API key of every request, resolved to its merchant and environment
        /// (SCOPE-01: the idempotency scope starts with them).
        ApiKeys = "every request's API key",
        /// The bodies of the answers (the object, its id, status and version; the error).
        ResponseBodies = "the answers' bodies",
        /// The platform's own record: what each request executed, the rule of each answer,
        /// its store of Payments, attempts and refunds, its upstream calls and webhooks.
        Platform = "the platform's own record",
        /// The acquirer's ledger: which charges and captures moved money.
        Ledger = "the acquirer's ledger",
        /// The client's own decisions: each send with its submission, timeout and rule,
        /// the retries it scheduled, what it showed its payer.
        ClientProcess = "the client's own decisions",
        /// The merchant's database: the orders it holds, the versions it applied and what it
        /// fulfilled (the sandbox's merchant journal supplies it).
        MerchantDb = "the merchant's database",
        /// The test card each create and confirm carried, read as the acquirer outcome it
        /// selects (the model's labels; a platform's own through `check-log --profile`).
        TestCards = "the test card of each create and confirm",
        /// Which exchanges the client gave up on, and when (TIMEOUT-01): the model's
        /// clients and the sandbox see every hang-up; a log records an exchange without
        /// an answer, never who ended it.
        HangUps = "when a client gave up on an answer",
    }
}

impl Evidence {
    fn bit(self) -> u16 {
        1 << (self as u8)
    }

    /// Why a stream that holds no event of this kind lacks it.
    fn absent_from_stream(self) -> &'static str {
        match self {
            Evidence::Wire => "no request on the wire in the stream",
            Evidence::ApiKeys | Evidence::ResponseBodies => "not in the stream",
            Evidence::Platform => {
                "no platform event (what a request executed, the store) in the stream"
            }
            Evidence::Ledger => "no acquirer event in the stream",
            Evidence::ClientProcess => {
                "no client decision in the stream (the requests came from outside the model)"
            }
            Evidence::MerchantDb => "no merchant database event in the stream",
            Evidence::TestCards => {
                "no create or confirm named a test card the reader knows (check-log --profile names the platform's)"
            }
            Evidence::HangUps => "no request on the wire in the stream",
        }
    }
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.about())
    }
}

/// A set of [`Evidence`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EvidenceSet(u16);

impl EvidenceSet {
    pub const NONE: EvidenceSet = EvidenceSet(0);

    pub const fn of(kinds: &[Evidence]) -> EvidenceSet {
        let mut bits = 0u16;
        let mut i = 0;
        while i < kinds.len() {
            bits |= 1 << (kinds[i] as u8);
            i += 1;
        }
        EvidenceSet(bits)
    }

    pub fn contains(self, e: Evidence) -> bool {
        self.0 & e.bit() != 0
    }

    pub fn insert(&mut self, e: Evidence) {
        self.0 |= e.bit();
    }

    pub fn remove(&mut self, e: Evidence) {
        self.0 &= !e.bit();
    }

    pub fn iter(self) -> impl Iterator<Item = Evidence> {
        Evidence::ALL
            .iter()
            .copied()
            .filter(move |&e| self.contains(e))
    }
}

impl Serialize for EvidenceSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// What a source supplied: the kinds of evidence present, and for each one missing,
/// why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Supply {
    present: EvidenceSet,
    /// Gaps the source itself reported (a log without bodies, an unknown key); they win
    /// over presence.
    lacks: BTreeMap<Evidence, String>,
    /// Of those, the ones that cover part of the source only (some answers without a
    /// body, some requests with a key of no known owner): a violation witnessed in the
    /// rest stands; only a pass cannot be claimed.
    partial: EvidenceSet,
    /// What the reader assumes of the source where the wire cannot show it.
    assumed: Assumed,
}

/// What a reader assumes of its source where the wire cannot show it, each printed as an
/// assumption with the verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Assumed {
    /// The source holds every request made to the platform under its API keys while it
    /// was recorded (`check-log --complete-log`): the properties whose wire level needs it
    /// are read on the wire ([`crate::wire::Patterns::assumes_complete_log`]).
    pub complete_log: bool,
    /// Two creates of one merchant, environment, amount and currency, the second under
    /// another order number while the first was unknown, are one purchase renumbered;
    /// refunds of one Payment and amount alike (A-SAME-PURCHASE-BY-AMOUNT,
    /// `check-log --same-purchase-by-amount`, the sandbox's reading). Without it such a
    /// pair is the merchant database's to tell ([`crate::facts::wire::Breach::reads_purchases`]).
    pub same_purchase_by_amount: bool,
}

/// One piece of evidence a property needed and did not get, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Missing {
    pub evidence: Evidence,
    pub why: String,
    /// The source lacks it for part of what it holds only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl Supply {
    /// A source that sees everything: the simulated world, whose facts are complete.
    pub fn complete() -> Supply {
        Supply {
            present: EvidenceSet::of(Evidence::ALL),
            lacks: BTreeMap::new(),
            partial: EvidenceSet::NONE,
            assumed: Assumed::default(),
        }
    }

    /// Nothing yet; [`Supply::saw`] adds what each event shows.
    pub fn empty() -> Supply {
        Supply::default()
    }

    /// What a stream of events shows: see the module doc.
    pub fn of_events<'a>(events: impl IntoIterator<Item = &'a What>) -> Supply {
        let mut s = Supply::empty();
        for w in events {
            s.saw(w);
        }
        s
    }

    /// Adds what one event shows the source could see.
    pub fn saw(&mut self, what: &What) {
        use Evidence as E;
        let kinds: &[Evidence] = match what {
            What::Sent { request, .. } if request.endpoint.card().is_some() => &[
                E::Wire,
                E::ApiKeys,
                E::ResponseBodies,
                E::TestCards,
                E::HangUps,
            ],
            What::Sent { .. } => &[E::Wire, E::ApiKeys, E::ResponseBodies, E::HangUps],
            // The model's platform, with the model's acquirer behind it.
            What::Handled { .. } | What::Answered { .. } => &[E::Platform, E::Ledger],
            What::Ledger { .. } | What::Charge { .. } | What::Acquired { .. } => &[E::Ledger],
            // A fulfilment is a row of the merchant's database (a journal reports it).
            What::ClientDecided {
                decision: Decision::Fulfil { .. },
                ..
            } => &[E::MerchantDb],
            What::ClientSends { .. } | What::ClientDecided { .. } => &[E::ClientProcess],
            What::OrderStored { .. } | What::OrderShown { .. } => &[E::MerchantDb],
            _ => &[],
        };
        for k in kinds {
            self.present.insert(*k);
        }
    }

    /// The source lacks `evidence`, for this reason (a reason already given is kept).
    pub fn lack(&mut self, evidence: Evidence, why: impl Into<String>) {
        self.lacks.entry(evidence).or_insert_with(|| why.into());
        self.partial.remove(evidence);
    }

    /// The source lacks `evidence` for part of what it holds (see [`Missing::partial`]);
    /// a whole lack already given wins.
    pub fn lack_part(&mut self, evidence: Evidence, why: impl Into<String>) {
        if let std::collections::btree_map::Entry::Vacant(e) = self.lacks.entry(evidence) {
            e.insert(why.into());
            self.partial.insert(evidence);
        }
    }

    /// Assumes what `assumed` names of the source ([`Assumed`]).
    pub fn assume(&mut self, assumed: Assumed) {
        self.assumed = assumed;
    }

    /// What the source is assumed to be.
    pub fn assumed(&self) -> Assumed {
        self.assumed
    }

    /// Whether `evidence` was supplied.
    pub fn has(&self, evidence: Evidence) -> bool {
        self.present.contains(evidence) && !self.lacks.contains_key(&evidence)
    }

    /// What of `needs` is missing, with the reasons: empty when it can be judged.
    pub fn missing(&self, needs: EvidenceSet) -> Vec<Missing> {
        needs
            .iter()
            .filter(|e| !self.has(*e))
            .map(|e| Missing {
                evidence: e,
                why: self
                    .lacks
                    .get(&e)
                    .cloned()
                    .unwrap_or_else(|| e.absent_from_stream().to_owned()),
                partial: self.lacks.contains_key(&e)
                    && self.partial.contains(e)
                    && self.present.contains(e),
            })
            .collect()
    }
}

use Evidence::{ClientProcess, Ledger, MerchantDb, Platform};

// What a property over each family of facts needs: the kinds of events that feed it
// (see `properties/src/facts/`: money and attempts read `Handled`, `Answered` and the ledger;
// client, queries and cadence the clients' sends and decisions; effects the merchants'
// databases).

/// The platform's own record.
pub const PLATFORM: EvidenceSet = EvidenceSet::of(&[Platform]);
/// The platform's record and the acquirer's ledger.
pub const PLATFORM_LEDGER: EvidenceSet = EvidenceSet::of(&[Platform, Ledger]);
/// The client's own decisions.
pub const CLIENT: EvidenceSet = EvidenceSet::of(&[ClientProcess]);
/// The client's decisions and the platform's record.
pub const CLIENT_PLATFORM: EvidenceSet = EvidenceSet::of(&[ClientProcess, Platform]);
/// The client's decisions and the merchant's database.
pub const CLIENT_DB: EvidenceSet = EvidenceSet::of(&[ClientProcess, MerchantDb]);
/// The merchant's database.
pub const DB: EvidenceSet = EvidenceSet::of(&[MerchantDb]);
/// The merchant's database and the platform's record.
pub const DB_PLATFORM: EvidenceSet = EvidenceSet::of(&[MerchantDb, Platform]);
/// The merchant's database, the platform's record and the ledger.
pub const DB_LEDGER: EvidenceSet = EvidenceSet::of(&[MerchantDb, Platform, Ledger]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PROPERTIES;

    #[test]
    fn every_property_needs_at_least_one_kind_of_evidence() {
        for p in PROPERTIES {
            assert!(p.needs.iter().next().is_some(), "{}", p.name);
        }
    }

    #[test]
    fn a_wire_only_stream_cannot_judge_the_ledger_and_says_why() {
        let mut s = Supply::empty();
        s.lack(Evidence::Ledger, "the acquirer's ledger is not in a log");
        let m = s.missing(crate::safety::ONE_CHARGE_PER_SCOPE.needs);
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].evidence, Evidence::Ledger);
        assert_eq!(m[1].why, "the acquirer's ledger is not in a log");
        assert!(
            Supply::complete()
                .missing(crate::safety::ONE_CHARGE_PER_SCOPE.needs)
                .is_empty()
        );
    }
}
