//! # payhub-properties
//!
//! Owns every judgement: the facts folded from the world's events ([`facts`]), the
//! properties, their rules, evidence and witnesses; the presets, the exhaustive checker
//! and the bug zoo. Never does I/O, never lets a clock or an unseeded random number decide
//! a fact or a verdict (the checker and the zoo read a clock only to time and bound their
//! searches), and never changes what a run does: it drives sim's world, whose events its
//! facts fold ([`World`] keeps them in its hashed state), and judges what the facts
//! recorded (liveness: the resolution facts of its events).
//!
//! The invariants of the PayHub contract, each a named predicate with the rules it
//! checks ([`property`]), read over a run's facts, the wire's or both, and listed in one
//! registry ([`registry`]): safety properties judged against the
//! acquirer's ledger and the facts the world observed ([`safety`]), reachability
//! properties that prove the model is not vacuous ([`reach`]), small-scope presets
//! ([`presets`]) and the exhaustive stateright checker ([`checker`]).
//!
//! The same predicates run in the checker, after every step of the seeded simulator
//! ([`registry::AlwaysCheck`]) and in the proptest suites.

pub mod cadence;
pub mod checker;
pub mod client;
pub mod effects;
pub mod engine;
pub mod evidence;
pub mod exercise;
pub mod facts;
pub mod liveness;
pub mod presets;
pub mod property;
pub mod reach;
pub mod registry;
pub mod responses;
pub mod safety;
pub mod scope_answers;
pub mod traffic;
pub mod verdict;
pub mod wire;
pub mod witnessed;
pub mod zoo;

pub use checker::{CheckStatus, Limits, PresetReport, check};
pub use facts::{Facts, RuleSet, ScopeKey};
pub use presets::{Preset, preset, presets};
pub use property::{Kind, Property};
pub use registry::{AlwaysCheck, PROPERTIES, judging, property, reaching, rules_of};
pub use witnessed::{Named, Witnessed};

/// Sim's world, its events folded into the [`Facts`].
pub type World = payhub_sim::World<Facts>;

/// A counterexample proved in a [`World`].
pub type Counterexample = payhub_sim::prove::Counterexample<Facts>;

/// A script run in a [`World`].
pub type ScriptReport = payhub_sim::script::Report<Facts>;
