//! # payhub-model
//!
//! Owns the contract: its rules and numbers, the platform, the acquirer and the reference
//! client as sans-IO state machines, and the event and observation vocabulary.
//! Never does I/O, reads a clock, draws a random number or judges a run.
//!
//! Pure, sans-IO state machines of the PayHub payment API's contract on idempotency,
//! retries and status queries: the [`Platform`], the upstream [`Acquirer`] (the ground
//! truth of money), and merchant integrations.
//!
//! Every input carries the simulated time `now`; every place where the contract allows
//! two behaviours takes a [`Branch`] as input; every place where it is silent reads a
//! named parameter of [`PlatformParams`] (see `model/ASSUMPTIONS.md`). Every decision
//! cites the [`Rule`] of the catalogue that makes it.

pub mod acquirer;
pub mod api;
pub mod assumptions;
pub mod branch;
pub mod cards;
pub mod client;
pub mod contract;
pub mod cow;
pub mod event;
/// A hand-driven bench for tests (the feature `harness`, on for the workspace's tests only):
/// a test rig, so its source lives with the tests.
#[cfg(any(test, feature = "harness"))]
#[path = "../tests/harness/mod.rs"]
pub mod harness;
pub mod ids;
pub mod mutants;
mod named;
pub mod observation;
pub mod observed;
pub mod params;
pub mod platform;
pub mod rules;
pub mod splitmix;
pub mod text;
pub mod time;

pub use acquirer::{Acquirer, AcquirerDecision, Ledger, LedgerEntry, UpstreamCall, UpstreamReply};
pub use api::*;
pub use assumptions::{Assumption, Gap};
pub use branch::{Branch, BranchPoint};
pub use contract::Contract;
pub use cow::{CowMap, CowSet, Shared};
pub use ids::*;
pub use mutants::{Mutant, ParameterMutant};
pub use params::PlatformParams;
pub use platform::api_keys;
pub use platform::{
    ApiKeySpec, Control, Platform, PlatformInput, PlatformOutput, StepError, Timer, Variant,
    WebhookEvent, WebhookObject,
};
pub use rules::{Enforcer, Rule, RuleEntry, Section, Unjudged};
pub use text::Text;
pub use time::Millis;
