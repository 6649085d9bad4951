//! Properties: named predicates over the facts, each tied to the contract rules it checks.
//!
//! A predicate reads only facts folded from the event stream, at the levels its rule can
//! be read at: a run's [`Facts`] (the compact history of the platform, the ledger, the
//! clients and the merchants' databases) and the [`WireFacts`] of its requests and
//! answers. A rule both can witness is judged by one property with both levels
//! ([`Predicate::Levels`]); a source is judged at the levels it supplies the evidence
//! of. It never looks at the world, the platform or the acquirer, so the same properties
//! judge a simulated run, a recorded event stream (`payhub-verify judge`), a recorded log
//! (`check-log`) and the sandbox's session. Every verdict and its explanation is decided
//! here, not in `sim`.
//!
//! One registry ([`crate::registry::PROPERTIES`]) serves every driver. `judge`,
//! `check-log` and the sandbox hold both kinds of facts and judge every property at every
//! level they supply ([`crate::verdict::judge_all`]); the stateright checker, the seeded
//! simulator (after every step, through [`crate::AlwaysCheck`]), the proptest suites and
//! the zoo hold a world's [`Facts`] alone and judge every property with a level over them
//! ([`Property::over_facts`]).

use crate::evidence::{Evidence, EvidenceSet};
use crate::exercise::Exercise;
use crate::wire::Patterns;
use crate::witnessed::Witnessed;
use crate::{Facts, World};
use payhub_model::Rule;
use payhub_sim::WorldConfig;
use payhub_sim::driver::{Check, Violation};
use serde::Serialize;

/// What kind of claim a property makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Safety: holds in every reachable state.
    Always,
    /// Reachability: holds in some reachable state of the presets meant to reach it;
    /// proves the model is not vacuous.
    Sometimes,
}

/// The predicate of a property, over the facts it reads.
#[derive(Clone, Copy)]
pub enum Predicate {
    /// Over a run's [`Facts`]: what it found when violated (its words and witness).
    Always(fn(&Facts) -> Option<Witnessed>),
    /// Over a run's [`Facts`]: `true` when reached.
    Sometimes(fn(&Facts) -> bool),
    /// Over the requests and answers on the wire ([`WireFacts`]) alone: violated by the
    /// first witness of its patterns ([`Patterns::witness`]). Its needs are its
    /// patterns' and name [`Evidence::Wire`].
    Wire(Patterns),
    /// One rule read at two levels: over a run's [`Facts`] (needing
    /// [`Property::needs`]) and over the wire (needing its patterns' needs). A source is
    /// judged at every level it supplies: violated if either witnesses a breach, holding
    /// if one was judged whole and none did.
    Levels {
        facts: fn(&Facts) -> Option<Witnessed>,
        wire: Patterns,
    },
}

/// A named property.
#[derive(Clone, Copy)]
pub struct Property {
    pub name: &'static str,
    pub rules: &'static [Rule],
    /// One sentence: what it claims.
    pub about: &'static str,
    /// The evidence its facts are folded from (for [`Predicate::Levels`], its level over
    /// a run's facts; the wire level's are its patterns'): a source that lacks any of it
    /// at every level leaves the property *cannot judge* ([`crate::evidence`]).
    pub needs: EvidenceSet,
    /// The requests it judges: over a recorded source with none of them its "holds" is
    /// vacuous, and says so ([`crate::exercise`]); empty where it reads every request.
    pub exercised_by: &'static [Exercise],
    pub predicate: Predicate,
}

impl Property {
    pub fn kind(&self) -> Kind {
        match self.predicate {
            Predicate::Always(_) | Predicate::Wire(_) | Predicate::Levels { .. } => Kind::Always,
            Predicate::Sometimes(_) => Kind::Sometimes,
        }
    }

    /// Whether a run's [`Facts`] alone judge it: it has a level over them, whose needs
    /// name no evidence of the wire. A driver that holds a world and no wire facts (the
    /// checker, the simulator, the proptest suites, the zoo) judges these and skips the
    /// others.
    pub fn over_facts(&self) -> bool {
        !self.needs.contains(Evidence::Wire)
    }

    /// Whether it reads the wire alone (no level over a run's facts).
    pub fn wire_only(&self) -> bool {
        matches!(self.predicate, Predicate::Wire(_))
    }

    /// For `always`: `None` if it holds over a run's facts, else what it found (its words
    /// and witness). For `sometimes`: never a violation. A property over the wire alone
    /// reads no [`Facts`]: never a violation here (its [`Patterns`] judge it).
    pub fn witnessed(&self, facts: &Facts) -> Option<Witnessed> {
        match self.predicate {
            Predicate::Always(f) | Predicate::Levels { facts: f, .. } => f(facts),
            Predicate::Sometimes(_) | Predicate::Wire(_) => None,
        }
    }

    /// The words of [`Property::witnessed`]: `None` if it holds.
    pub fn judge(&self, facts: &Facts) -> Option<String> {
        self.witnessed(facts).map(|f| f.detail)
    }

    /// [`Property::judge`] as the simulator's [`Violation`].
    pub fn violation(&self, facts: &Facts) -> Option<Violation> {
        let detail = self.judge(facts)?;
        let property = self.name.to_owned();
        Some(Violation { property, detail })
    }

    /// For `sometimes`: whether these facts reach it. For `always`: whether it holds
    /// (a property over the wire alone reads no [`Facts`]: it holds here).
    pub fn holds_in(&self, facts: &Facts) -> bool {
        match self.predicate {
            Predicate::Always(f) | Predicate::Levels { facts: f, .. } => f(facts).is_none(),
            Predicate::Sometimes(f) => f(facts),
            Predicate::Wire(_) => true,
        }
    }

    /// For a property with a level over the wire: what it looks for there. `None` for the
    /// others.
    pub fn patterns(&self) -> Option<&Patterns> {
        match &self.predicate {
            Predicate::Wire(patterns) | Predicate::Levels { wire: patterns, .. } => Some(patterns),
            Predicate::Always(_) | Predicate::Sometimes(_) => None,
        }
    }
}

impl std::fmt::Debug for Property {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Property")
            .field("name", &self.name)
            .field("kind", &self.kind())
            .finish()
    }
}

/// One `always` property as a [`Check`]: replaying and shrinking its counterexample (a
/// `sometimes` property never fails).
#[derive(Clone, Copy, Debug)]
pub struct OneCheck<'a> {
    pub property: &'static Property,
    pub config: &'a WorldConfig,
}

impl Check<Facts> for OneCheck<'_> {
    fn check(&mut self, world: &World) -> Option<Violation> {
        self.property.violation(&world.facts)
    }
}
