//! Verdicts: every property's judgement over what a source supplied, in one library
//! that `judge`, `check-log`, the sandbox and the report share.
//!
//! A source's events are folded into facts (`crate::Facts`), wire facts
//! ([`WireFacts`]) and the evidence they supplied ([`Supply`]); [`judge_all`] judges
//! every property of the registry over them, in one loop. Each verdict is
//! `holds`, `violated` (always properties), `reached`, `unreached` (sometimes
//! properties) or `cannot_judge`: the source lacked evidence the property needs
//! ([`crate::evidence`]), named with the reason. A witness found in the part of a
//! source that has the evidence stands whatever the rest lacks (verdicts are monotone).

use crate::cadence::AtEnd;
use crate::evidence::{self, Assumed, Evidence, Missing, Supply};
use crate::exercise::Exercised;
use crate::facts::resolution::Resolution;
use crate::facts::wire::{Seen, WireFacts, Witness};
use crate::wire::Side;
use crate::{Facts, Kind, Named, PROPERTIES, Property};
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::event::{Event, What};
use payhub_model::observed::ObservedAnswer;
use payhub_model::{RequestId, Shared};
use serde::Serialize;

payhub_model::named! {
    fn as_str;
    /// What a verdict says.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Status {
        /// An always property held over what was judged.
        Holds = "holds",
        /// An always property was violated.
        Violated = "violated",
        /// A sometimes property was reached.
        Reached = "reached",
        /// A sometimes property was not reached.
        Unreached = "unreached",
        /// The source lacked evidence the property needs (`missing` says which and why).
        CannotJudge = "cannot_judge",
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One property's verdict over the file (or over a sandbox session's facts).
#[derive(Debug, Serialize)]
pub struct Verdict {
    pub name: &'static str,
    pub kind: Kind,
    pub rules: Vec<&'static str>,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// For `holds` over a recorded source with none of the requests the property judges
    /// ([`crate::exercise`]): it held over nothing; `detail` names what was missing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub vacuous: bool,
    /// For `cannot_judge`: the evidence missing and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<Missing>,
    /// For a property judged at its level over the wire: which side it judges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// For a property violated at its level over the wire: the exchanges that witness it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Witness>,
    /// For a violated property over a run's facts: the identifiers its witness names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named: Option<Named>,
}

impl Verdict {
    /// `cannot_judge (needs the acquirer's ledger: the acquirer's ledger is not in a log)`.
    pub fn status_text(&self) -> String {
        if self.missing.is_empty() {
            return self.status.to_string();
        }
        let needs: Vec<String> = self
            .missing
            .iter()
            .map(|m| format!("{}: {}", m.evidence, m.why))
            .collect();
        format!("cannot judge (needs {})", needs.join("; "))
    }

    /// Whether it judges the platform (else the merchant's requests): the side its wire
    /// level judges, or else whether a rule it checks is the platform's.
    pub fn judges_platform(&self) -> bool {
        use payhub_model::rules::{Enforcer, Rule};
        match self.side {
            Some(side) => side == Side::Platform,
            None => self
                .rules
                .iter()
                .filter_map(|id| Rule::from_id(id))
                .any(|r| r.enforcer() == Enforcer::Platform),
        }
    }
}

/// Everything a stream of events gives the judges: the facts, and beside them its wire
/// side (the wire facts, the evidence it supplied, what became of each submission).
pub struct Folded {
    pub facts: Shared<Facts>,
    pub side: WireSide,
    pub events: usize,
}

/// What the sandbox's verdict, its tapes' (`judge`) and its scripts' assume: the same
/// purchase read from amounts, as the sandbox's verdict says it reads it.
pub const HARNESS_ASSUMES: Assumed = Assumed {
    complete_log: false,
    same_purchase_by_amount: true,
};

/// The owners of the API keys of the harness's worlds (and of the sandbox).
pub fn harness_owners() -> WireFacts {
    let keys = default_api_keys().into_iter().chain([rotated_key_spec()]);
    WireFacts::new(keys.map(|k| (k.id, (k.merchant, k.environment))))
        .keeping(crate::wire::RECORDS_KEPT)
}

impl Folded {
    pub fn new(wire: WireFacts) -> Folded {
        Folded {
            facts: Shared::new(Facts::default()),
            side: WireSide::of(wire),
            events: 0,
        }
    }

    /// The fold of a harness's stream (a world's, the sandbox's tape): its API keys, and
    /// its reading of "the same purchase" ([`HARNESS_ASSUMES`]).
    pub fn harness() -> Folded {
        Folded {
            facts: Shared::new(Facts::default()),
            side: WireSide::default(),
            events: 0,
        }
    }

    pub fn observe(&mut self, e: &Event) {
        Facts::observe(&mut self.facts, e);
        self.side.observe(e);
        self.events += 1;
    }

    /// [`Folded::observe`] of the end of exchange `id` with the answer read at the
    /// contract's level: the facts take `e` (the status), the wire facts the whole answer.
    pub fn observe_answered(&mut self, e: &Event, id: RequestId, answer: &ObservedAnswer) {
        Facts::observe(&mut self.facts, e);
        self.side.wire.answered(e.at, id, answer);
        self.side.supply.saw(&e.what);
        self.events += 1;
    }

    /// The stream has ended: what its wire facts lacked. A stream without a request
    /// judges nothing: every rule is about requests and what they did, so every property
    /// would hold over nothing.
    pub fn close(&mut self) {
        self.side.close();
        if !self.side.requests {
            for e in evidence::Evidence::ALL {
                self.side.supply.lack(
                    *e,
                    "no request in the stream (sent on the wire or decided by a client)",
                );
            }
        }
    }

    /// Every verdict, exchanges named `exchange #N`, then liveness's.
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.side.verdicts(&self.facts)
    }

    /// Every verdict, each exchange of a witness named by `name`, then liveness's.
    pub fn verdicts_naming(&self, name: &dyn Fn(&Seen) -> String) -> Vec<Verdict> {
        self.side.verdicts_naming(&self.facts, name)
    }
}

/// What a recorded source's end and its requests say of the verdicts that hold: a
/// window still open where it ends is not judged yet, one that ran out is a violation
/// ([`crate::cadence::at_end`]); a property none of whose requests the source held holds
/// vacuously ([`crate::exercise`]).
fn at_the_end(all: &mut [Verdict], facts: &Facts, resolution: &Resolution, exercised: Exercised) {
    for v in all
        .iter_mut()
        .filter(|v| v.status == Status::Holds && v.detail.is_none())
    {
        let Some(p) = crate::property(v.name) else {
            continue;
        };
        match crate::cadence::at_end(p, facts, resolution) {
            Some(AtEnd::Open(why)) => {
                v.status = Status::CannotJudge;
                v.detail = Some(format!("not judged yet: {why}"));
            }
            Some(AtEnd::Overdue(w)) => {
                v.status = Status::Violated;
                (v.detail, v.named) = (Some(w.detail), Some(w.named));
            }
            None => {
                v.detail = exercised.vacuous(p.exercised_by);
                v.vacuous = v.detail.is_some();
            }
        }
    }
}

/// A stream that has ended lacks the scope of requests whose key names no merchant and
/// that were not refused for authentication (those belong to no scope: the platform
/// looked no further than the key). The lack covers those requests only: what the
/// others witness stands.
fn lack_ownerless(wire: &WireFacts, supply: &mut Supply) {
    let unscoped = wire.unscoped();
    if unscoped > 0 {
        supply.lack_part(
            evidence::Evidence::ApiKeys,
            format!(
                "{unscoped} request(s) with an API key that names no known merchant and no answer refusing it (401): their scope is unknown, so a pass is not claimed"
            ),
        );
    }
}

/// The requests refused for authentication, listed as belonging to no scope.
pub fn unscoped_json(
    wire: &WireFacts,
    name: &dyn Fn(payhub_model::RequestId) -> String,
) -> serde_json::Value {
    serde_json::json!({
        "refused_for_authentication": wire.refused_auth,
        "listed": wire.refused_auth_ids.iter().map(|id| name(*id)).collect::<Vec<_>>(),
        "scope_unknown": wire.unscoped(),
        "note": "requests answered 401 belong to no idempotency scope (SCOPE-01 starts with the key's merchant) and are judged by nothing that needs one",
    })
}

/// The wire facts of a stream and what it supplied: what the judges need beside the
/// world's facts. The sandbox keeps one, folded from every event as it is recorded, so
/// that its verdict judges the whole session even after its record dropped old events.
#[derive(Clone, Debug)]
pub struct WireSide {
    pub wire: WireFacts,
    pub supply: Supply,
    /// What became of each submission, for the liveness verdict.
    pub resolution: Resolution,
    /// The kinds of request sent on the wire or decided by a client.
    exercised: Exercised,
    /// Whether a request was sent on the wire or decided by a client.
    requests: bool,
}

impl Default for WireSide {
    /// The sandbox's and its scripts' side: the model's API keys, and the sandbox's
    /// reading of "the same purchase" ([`HARNESS_ASSUMES`]).
    fn default() -> WireSide {
        let mut side = WireSide::of(harness_owners());
        side.supply.assume(HARNESS_ASSUMES);
        side
    }
}

impl WireSide {
    /// The wire side of a stream whose API keys `wire` knows.
    pub fn of(wire: WireFacts) -> WireSide {
        WireSide {
            wire,
            supply: Supply::empty(),
            resolution: crate::liveness::learning(),
            exercised: Exercised::default(),
            requests: false,
        }
    }

    pub fn observe(&mut self, e: &Event) {
        if let What::Sent { request, .. } | What::ClientSends { request, .. } = &e.what {
            self.exercised.saw(&request.endpoint);
            self.requests = true;
        }
        self.wire.observe(e.at, &e.what);
        self.supply.saw(&e.what);
        self.resolution.observe(e);
    }

    /// The stream has ended (so far): what its wire facts lacked.
    pub fn close(&mut self) {
        lack_ownerless(&self.wire, &mut self.supply);
    }

    /// Every verdict over `facts` and this wire side, exchanges named `exchange #N`,
    /// then liveness's.
    pub fn verdicts(&self, facts: &Facts) -> Vec<Verdict> {
        self.verdicts_naming(facts, &|s: &Seen| {
            format!("exchange {} at {}", s.id, s.sent)
        })
    }

    /// Every verdict over `facts` and this wire side, each exchange of a witness named by
    /// `name`, then liveness's.
    pub fn verdicts_naming(&self, facts: &Facts, name: &dyn Fn(&Seen) -> String) -> Vec<Verdict> {
        let mut all = judge_all(facts, &self.wire, &self.supply, name);
        at_the_end(&mut all, facts, &self.resolution, self.exercised);
        all.push(crate::liveness::stream_verdict(
            &self.resolution,
            &self.supply,
        ));
        all
    }
}

/// The verdicts over facts whose source saw everything (the world's own) and holds no
/// wire facts: the properties over the wire are not listed.
pub fn verdicts(facts: &Facts) -> Vec<Verdict> {
    let supply = Supply::complete();
    PROPERTIES
        .iter()
        .filter(|p| p.over_facts())
        .filter_map(|p| verdict(p, facts, None, &supply, &|_: &Seen| String::new()))
        .collect()
}

/// Every property's verdict, in the registry's order, each exchange of a wire witness
/// named by `name`.
pub fn judge_all(
    facts: &Facts,
    wire: &WireFacts,
    supply: &Supply,
    name: &dyn Fn(&Seen) -> String,
) -> Vec<Verdict> {
    PROPERTIES
        .iter()
        .filter_map(|p| verdict(p, facts, Some(wire), supply, name))
        .collect()
}

/// One property's verdict, judged at every level the source supplies the evidence of
/// (a level whose evidence is missing in part is judged over the part that has it: a
/// witness found there stands whatever the rest lacks). `None` for a property over the
/// wire alone that assumes a complete log the source is not assumed to be (it is not
/// listed).
fn verdict(
    p: &'static Property,
    facts: &Facts,
    wire: Option<&WireFacts>,
    supply: &Supply,
    name: &dyn Fn(&Seen) -> String,
) -> Option<Verdict> {
    let patterns = p.patterns();
    let assumed = supply.assumed();
    let unassumed = patterns.is_some_and(|w| w.assumes_complete_log && !assumed.complete_log);
    if unassumed && p.wire_only() {
        return None;
    }
    let wire_level = patterns.filter(|_| !unassumed).zip(wire);
    // Each level judged: the evidence it lacks, and whether it is judged (over the part
    // of the source that has the evidence).
    let facts_missing = (!p.wire_only()).then(|| supply.missing(p.needs));
    let wire_missing = wire_level.map(|(w, _)| supply.missing(w.needs));
    let judged = |m: &Option<Vec<Missing>>| m.as_ref().is_some_and(|m| m.iter().all(|m| m.partial));
    // The strongest level first: what a run's facts found, else the wire's witness.
    let found = judged(&facts_missing).then(|| p.witnessed(facts)).flatten();
    let wire_found = |purchases| {
        wire_level
            .filter(|_| found.is_none() && judged(&wire_missing))
            .and_then(|(w, wire)| w.witness(wire, purchases))
    };
    let witness = wire_found(assumed.same_purchase_by_amount);
    // A renumbering read from amounts alone, where the source is not read so and no
    // level judged the merchant's purchases: the merchant's database is to tell.
    let facts_whole = facts_missing.as_ref().is_some_and(Vec::is_empty);
    let purchases_untold = (witness.is_none() && !facts_whole)
        .then(|| wire_found(true))
        .flatten()
        .map(|w| untold_purchase(&w, name));
    let (detail, named) = match (found, &witness) {
        (Some(f), _) => (Some(f.detail), Some(f.named)),
        (None, Some(w)) => (Some(crate::wire::explain(w, name)), None),
        (None, None) => (None, None),
    };
    let reached = judged(&facts_missing) && p.kind() == Kind::Sometimes && p.holds_in(facts);
    // Judged whole at some level; else what the weakest level (the wire's, where it has
    // one) lacks.
    let whole = [&facts_missing, &wire_missing]
        .into_iter()
        .any(|m| m.as_ref().is_some_and(Vec::is_empty));
    let mut missing = if whole {
        Vec::new()
    } else {
        wire_missing.or(facts_missing).unwrap_or_default()
    };
    let status = match (p.kind(), &detail) {
        (Kind::Always, Some(_)) => Status::Violated,
        (Kind::Sometimes, _) if reached => Status::Reached,
        _ if !whole => Status::CannotJudge,
        (Kind::Always, None) => Status::Holds,
        (Kind::Sometimes, _) => Status::Unreached,
    };
    if matches!(status, Status::Violated | Status::Reached) {
        missing.clear();
    }
    let status = match purchases_untold {
        Some(m) if status == Status::Holds => {
            missing.push(m);
            Status::CannotJudge
        }
        _ => status,
    };
    Some(Verdict {
        name: p.name,
        kind: p.kind(),
        rules: p.rules.iter().map(|r| r.id()).collect(),
        status,
        detail,
        vacuous: false,
        missing,
        side: wire_level.map(|(w, _)| w.side),
        witness: witness.map(std::borrow::Cow::into_owned),
        named,
    })
}

/// What a renumbering read from amounts alone leaves untold (A-SAME-PURCHASE-BY-AMOUNT).
fn untold_purchase(w: &Witness, name: &dyn Fn(&Seen) -> String) -> Missing {
    let [first, then] =
        [w.entries.first(), w.entries.last()].map(|e| e.map_or_else(String::new, name));
    Missing {
        evidence: Evidence::MerchantDb,
        why: format!(
            "which orders are one purchase: {then} sent the amount of {first} under another number while {first} had an unknown outcome, a new purchase or the same one renumbered, which the wire cannot tell; --same-purchase-by-amount reads it as the same"
        ),
        partial: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Evidence;
    use payhub_model::event::What;
    use payhub_model::{ApiKeyId, ApiRequest, CreatePaymentBody, Endpoint, Json, Millis};

    /// GEN-05 is one property with two levels: a log (the wire, no client process) judges
    /// it on the wire, the world's own facts without it, and a source with neither says
    /// what the wire level lacks.
    #[test]
    fn a_property_with_both_levels_is_judged_at_the_levels_the_source_supplies() {
        let p = crate::property("client-uses-a-key-on-one-endpoint").unwrap();
        assert!(p.over_facts() && !p.wire_only() && p.patterns().is_some());
        let facts = Facts::default();
        let mut wire = harness_owners();
        let sent = What::Sent {
            id: RequestId(1),
            from: 0,
            request: ApiRequest {
                api_key: ApiKeyId(1),
                idempotency_key: Some("k".into()),
                endpoint: Endpoint::CreatePayment {
                    body: Json::Parsed(CreatePaymentBody::default()),
                },
            },
        };
        wire.observe(Millis(0), &sent);
        let named = |_: &Seen| String::new();
        let log = Supply::of_events([&sent]);
        let v = verdict(p, &facts, Some(&wire), &log, &named).unwrap();
        assert_eq!(v.status, Status::Holds, "{v:?}");
        assert_eq!(v.side, Some(Side::Client));
        let v = verdict(p, &facts, Some(&wire), &Supply::empty(), &named).unwrap();
        assert_eq!(v.status, Status::CannotJudge);
        let lacked: Vec<Evidence> = v.missing.iter().map(|m| m.evidence).collect();
        assert_eq!(lacked, [Evidence::Wire, Evidence::ApiKeys]);
        let world = verdicts(&facts);
        let v = world.iter().find(|v| v.name == p.name).unwrap();
        assert_eq!((v.status, v.side), (Status::Holds, None));
    }
}
