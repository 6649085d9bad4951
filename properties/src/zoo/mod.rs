//! The bug zoo and its kill matrix: every planted bug must be caught by a named property.
//!
//! A subject of the zoo is a platform [`Mutant`] (planted by `WorldConfig::variant`),
//! a [`ParameterMutant`] (the reference platform run with a number other than the
//! contract's), or a client [`AntiPattern`] (the merchant policy `reference-random + pattern`, as
//! `payhub-verify simulate --policy` reads it), or a [`Narrowing`] of the judge (the
//! reference world judged by a fact family read as it once was, narrower than its rule:
//! it is caught when a scope reaches the case the old reading got wrong, which shows the
//! scope is there). [`kill`] tries to catch one:
//!
//! 1. **exhaustive**: the checker presets, cheapest first, each explored breadth-first
//!    until the first `always` property fails (`HasDiscoveries::AnyFailures`). For a
//!    platform mutant these are the platform presets, the zoo's own small presets
//!    ([`zoo_platform_presets`], for bugs no general preset reaches) and the client
//!    presets with the reference client; for an anti-pattern the client presets and the
//!    zoo's client presets ([`zoo_client_presets`]) with that policy;
//! 2. **simulation**: if no preset catches it, a seeded sweep of the simulation world
//!    (`worlds::simulation`) with every `always` property checked after every step.
//!
//! The first counterexample is proved on the world, shrunk for the property that caught
//! it and proved again ([`payhub_sim::prove`]), and kept with its configuration, trace
//! and script (`mutants --show NAME`).
//!
//! The same methods run on the **reference configurations** (the unmutated platform
//! with the reference client, deterministic and random keys): nothing may be caught
//! there, or a property is wrong rather than the mutant caught.
//!
//! A property never looks at which mutant is on: each judges the world's observable
//! history against the contract, so a mutant is caught only by what it does.
//!
//! Files: this one the subjects; `presets` the presets in the order they are tried and
//! the zoo's own; `explore` one preset or sweep explored; `matrix` the kill matrix.

mod explore;
mod matrix;
mod presets;

/// What stops the zoo from deciding a row ([`run`], [`kill`], [`explore`], [`sweep`]).
#[derive(Debug, thiserror::Error)]
pub enum ZooError {
    /// A counterexample the search found does not replay, or its shrunk copy does not.
    #[error(transparent)]
    Unproved(#[from] payhub_sim::prove::ProveError),
    /// A run was stopped by a property the registry does not hold.
    #[error("unknown property {0}")]
    UnknownProperty(String),
}

pub use explore::{Explored, Found, explore, sweep};
pub use matrix::{
    KillMatrix, MutantRow, ReferenceRow, Tried, ZooControl, ZooOptions, kill, median, run,
};
pub use presets::{client_order, platform_order, zoo_client_presets, zoo_platform_presets};

use crate::presets::Preset;
use payhub_model::client::{AntiPattern, Policy};
use payhub_model::{Mutant, ParameterMutant, Rule, Variant};
use payhub_sim::{Narrowing, WorldConfig, worlds};
use serde::Serialize;

// ---- subjects ---------------------------------------------------------------------

/// Which side a planted bug is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    #[default]
    Platform,
    Client,
    /// A narrowing of the judge, planted in the reference world's facts.
    Judge,
}

/// A planted bug: a platform mutant, a wrong platform parameter or a client anti-pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    Platform(Mutant),
    Parameter(ParameterMutant),
    Client(AntiPattern),
    Judge(Narrowing),
}

impl Subject {
    /// Every subject: the platform mutants, the parameter mutants, the client
    /// anti-patterns, then the narrowings of the judge.
    pub fn all() -> Vec<Subject> {
        Mutant::ALL
            .iter()
            .map(|m| Subject::Platform(*m))
            .chain(ParameterMutant::ALL.iter().map(|m| Subject::Parameter(*m)))
            .chain(AntiPattern::ALL.iter().map(|p| Subject::Client(*p)))
            .chain(Narrowing::ALL.iter().map(|n| Subject::Judge(*n)))
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Subject::Platform(m) => m.name(),
            Subject::Parameter(m) => m.name(),
            Subject::Client(p) => p.name(),
            Subject::Judge(n) => n.name(),
        }
    }

    pub fn side(self) -> Side {
        match self {
            Subject::Platform(_) | Subject::Parameter(_) => Side::Platform,
            Subject::Client(_) => Side::Client,
            Subject::Judge(_) => Side::Judge,
        }
    }

    /// The contract rules it breaks.
    pub fn rules(self) -> Vec<Rule> {
        match self {
            Subject::Platform(m) => m.breaks().to_vec(),
            Subject::Parameter(m) => m.breaks().to_vec(),
            Subject::Client(p) => vec![p.breaks()],
            Subject::Judge(n) => n.breaks().to_vec(),
        }
    }

    /// What the bug does, in one line.
    pub fn about(self) -> &'static str {
        match self {
            Subject::Platform(m) => m.about(),
            Subject::Parameter(m) => m.about(),
            Subject::Client(p) => p.deviation(),
            Subject::Judge(n) => n.about(),
        }
    }

    /// Whether it is one of the detail mutants (cadence and merchant effects), the zoo's
    /// second section after the platform mutants and anti-patterns.
    pub fn is_detail(self) -> bool {
        match self {
            Subject::Platform(m) => {
                matches!(m, Mutant::VerificationStalls | Mutant::ManualReviewAtOnce)
            }
            Subject::Parameter(m) => matches!(
                m,
                ParameterMutant::ManualReviewRequery48h | ParameterMutant::SyncWait90s
            ),
            Subject::Client(p) => p.is_detail(),
            Subject::Judge(_) => true,
        }
    }

    /// The kill matrix's section the subject is listed under.
    pub fn section(self) -> &'static str {
        if self.is_detail() {
            "detail mutants: cadence and effects"
        } else {
            "bug zoo"
        }
    }

    /// Looks a subject up by name (`card_in_fingerprint`, `poll_too_fast`).
    pub fn from_name(name: &str) -> Option<Subject> {
        Subject::all().into_iter().find(|s| s.name() == name)
    }

    /// The client policy under test: the reference (deterministic keys) for platform
    /// mutants and narrowings; `reference-random + pattern` for an anti-pattern (as
    /// `--policy` reads it; two patterns act only on random keys).
    pub fn policy(self) -> Policy {
        match self {
            Subject::Platform(_) | Subject::Parameter(_) | Subject::Judge(_) => Policy::reference(),
            Subject::Client(p) => Policy::reference_random().with(p),
        }
    }

    /// The presets tried, in order (cheapest first), with the bug switched on: for a
    /// narrowing of a client rule, the client presets only.
    pub fn presets(self) -> Vec<Preset> {
        let mut presets = match self {
            Subject::Platform(_) | Subject::Parameter(_) => platform_order(),
            Subject::Client(_) | Subject::Judge(_) => client_order(&self.policy()),
        };
        for p in &mut presets {
            self.plant(&mut p.config);
        }
        presets
    }

    /// Switches the bug on in `config` (an anti-pattern is in the policy already).
    fn plant(self, config: &mut WorldConfig) {
        match self {
            Subject::Platform(m) => config.variant = Variant::planted(m),
            Subject::Parameter(m) => config.params = m.apply(config.params.clone()),
            Subject::Judge(n) => config.narrowing = Some(n),
            Subject::Client(_) => {}
        }
    }

    /// The world a kill-matrix method (`exhaustive:PRESET`, `simulation`) explores with
    /// the bug switched on: what a zoo tape names (`payhub_sim::tape::ZooWorld`).
    pub fn world_of(self, method: &str) -> Option<WorldConfig> {
        self.start_of(method).map(|(config, _)| config)
    }

    /// [`Subject::world_of`], with the setup its runs start with (a preset's; a
    /// counterexample's choices begin with it, and the setup may apply choices the world
    /// does not list, such as an acquirer decision outside the preset's own).
    pub fn start_of(self, method: &str) -> Option<(WorldConfig, Vec<payhub_sim::Choice>)> {
        if method == "simulation" {
            return Some((self.simulation(), Vec::new()));
        }
        let name = method.strip_prefix("exhaustive:")?;
        self.presets()
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| (p.config, p.setup))
    }

    /// The simulation world with the bug switched on.
    pub fn simulation(self) -> WorldConfig {
        let mut config = worlds::simulation(&self.policy(), 2);
        self.plant(&mut config);
        let planted = match self {
            Subject::Platform(m) => format!(" mutant={}", m.name()),
            Subject::Parameter(m) => format!(" {}", m.name()),
            Subject::Judge(n) => format!(" narrowing={}", n.name()),
            Subject::Client(_) => String::new(),
        };
        config.name += &planted;
        config
    }
}
