//! # payhub-properties
//!
//! Owns every judgement: the properties, their rules, evidence and witnesses; the presets,
//! the exhaustive checker and the bug zoo. Never changes what a run does: it drives sim's
//! world and judges what the facts recorded (liveness: the resolution facts of its events).
//!
//! The invariants of the PayHub contract, each a named predicate over the simulated
//! world with the rules it checks ([`property`]): safety properties judged against the
//! acquirer's ledger and the facts the world observed ([`safety`]), reachability
//! properties that prove the model is not vacuous ([`reach`]), small-scope presets
//! ([`presets`]) and the exhaustive stateright checker ([`checker`]).
//!
//! The same predicates run in the checker, after every step of the seeded simulator
//! ([`property::AlwaysCheck`]) and in the proptest suites.

pub mod cadence;
pub mod checker;
pub mod client;
pub mod effects;
pub mod engine;
pub mod evidence;
pub mod judging;
pub mod liveness;
pub mod presets;
pub mod property;
pub mod reach;
pub mod responses;
pub mod safety;
pub mod scope_answers;
pub mod traffic;
pub mod verdict;
pub mod wire;
pub mod witnessed;
pub mod zoo;

pub use checker::{CheckStatus, Limits, PresetReport, check};
pub use judging::JUDGING;
pub use presets::{Preset, preset, presets};
pub use property::{AlwaysCheck, Kind, PROPERTIES, Property, property};
pub use witnessed::{Named, Witnessed};
