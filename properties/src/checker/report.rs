//! What a check is asked (its limits and the way it searches) and what it reports:
//! per preset, per property, with the counterexample and the bitstate estimate.

use crate::property::Kind;
use serde::Serialize;
use std::time::Duration;

/// Limits of one check run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub threads: usize,
    /// Stop (and report incomplete) after this many generated states, repeats included.
    pub max_states: Option<usize>,
    /// Stop (and report incomplete) after this long.
    pub timeout: Option<Duration>,
    /// Stop expanding below this depth (reported incomplete if states were cut).
    pub max_depth: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            threads: 1,
            max_states: None,
            timeout: None,
            max_depth: None,
        }
    }
}

/// How the search goes, beyond its limits: the order, the visited set, the reduction.
/// The default is the breadth-first search over every state as it is (the counts
/// `check` has always reported).
#[derive(Clone, Copy, Debug, Default)]
pub struct Search {
    pub order: Order,
    /// Canonical states: message ids do not tell states apart (`World::hash_canonical`).
    pub canonical_ids: bool,
    /// Canonical request ids too: request ids renumbered by rank, on top of the message
    /// multiset (`World::hash_canonical_requests`; implies `canonical_ids`).
    pub canonical_requests: bool,
    /// Partial-order reduction: the message this names (an inert one,
    /// [`super::INERT_FIRST`]) is delivered before anything else, in one order only. A
    /// seam: the soundness test plants one that is not inert.
    pub partial_order: Option<super::FirstDelivery>,
    /// SPIN's supertrace: a visited set of `2^n` bits instead of every fingerprint, in a
    /// depth-first search; the run is incomplete (exit 3) with the states it may have
    /// missed estimated, never a pass.
    pub bitstate: Option<u32>,
    /// Asked now and then: `true` ends the search, incomplete (Ctrl-C).
    pub interrupted: Option<fn() -> bool>,
}

impl Search {
    /// The reductions on, by their `--reduce` names.
    pub fn reductions(&self) -> Vec<&'static str> {
        let mut on = Vec::new();
        if self.canonical_ids || self.canonical_requests {
            on.push("ids");
        }
        if self.canonical_requests {
            on.push("requests");
        }
        if self.partial_order.is_some() {
            on.push("por");
        }
        on
    }

    /// How its states are told apart: as they are, or in the canonical form it names.
    pub fn fingerprint(&self) -> fn(&crate::World) -> u64 {
        use crate::engine::fingerprint;
        if self.canonical_requests {
            |w| fingerprint(&payhub_sim::CanonicalRequests(w))
        } else if self.canonical_ids {
            |w| fingerprint(&payhub_sim::Canonical(w))
        } else {
            |w| fingerprint(w)
        }
    }
}

/// The order of the search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Level by level: a depth bound is exact, the depth reported is a shortest one.
    #[default]
    Breadth,
    /// One path at a time: memory is the visited set and a path, not a level; the same
    /// states and counts, the depth reported is the longest path followed.
    Depth,
}

/// What a bitstate run covered and may have missed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BitstateReport {
    pub bits: u64,
    pub hashes: u32,
    /// The share of bits set at the end.
    pub fill: f64,
    /// The expected number of new states taken for seen ones (and not explored).
    pub expected_missed: f64,
}

/// The verdict on one property in one preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Holds,
    Violated,
    Reached,
    Unreached,
    /// The run was incomplete: nothing can be claimed.
    Unknown,
}

/// A counterexample: the path the search found, proved on the world ([`payhub_sim::prove`]), shrunk
/// unless it is a shortest one.
#[derive(Clone, Debug, Serialize)]
pub struct Counterexample {
    pub detail: String,
    /// The choices' labels, from the world's initial state (the preset's setup included),
    /// so the tape replays as printed.
    pub tape: Vec<String>,
    /// Length of the path the search found after the preset's setup, before any
    /// shrinking (the tape's length less the setup when `minimal`).
    pub bfs_length: usize,
    /// Whether `tape` is a shortest path to a violating state (breadth-first search);
    /// otherwise it is 1-minimal (shrunk).
    pub minimal: bool,
    /// The proof: the choices `tape` names (replayable on the preset's initial world),
    /// the world at the violation, the trace, the what-if script.
    #[serde(skip)]
    pub proof: crate::Counterexample,
}

/// One property's line in a preset report.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyReport {
    pub name: &'static str,
    pub kind: Kind,
    pub rules: Vec<&'static str>,
    pub status: CheckStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
}

/// What checking one preset found.
#[derive(Clone, Debug, Serialize)]
pub struct PresetReport {
    pub name: &'static str,
    pub about: &'static str,
    pub complete: bool,
    pub unique_states: usize,
    pub total_states: usize,
    pub max_depth: usize,
    pub seconds: f64,
    pub properties: Vec<PropertyReport>,
    /// Rules that decided some response or call in some visited state.
    pub rules_exercised: Vec<&'static str>,
    /// The rules the preset is built to exercise ([`crate::presets::Preset::exercises`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exercises: Vec<&'static str>,
    /// The preset's scope (`drops=2; servers 1, orders 1`).
    pub scope: String,
    /// Reductions on (`ids`), empty if none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitstate: Option<BitstateReport>,
}

impl PresetReport {
    /// Every always holds and every sometimes is reached, in a complete run.
    pub fn passed(&self) -> bool {
        self.complete
            && self
                .properties
                .iter()
                .all(|p| matches!(p.status, CheckStatus::Holds | CheckStatus::Reached))
    }
}
