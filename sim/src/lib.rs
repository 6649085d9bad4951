//! # payhub-sim
//!
//! One world in which the platform, the upstream acquirer and the merchants run against
//! lossy, duplicating, reordering networks, crashes, concurrency and simulated time.
//!
//! Every nondeterministic decision is an explicit [`Choice`]: [`World::enabled`] lists
//! them, [`World::apply`] applies one. The seeded driver ([`driver`]) picks with a ChaCha
//! RNG; the exhaustive checker (crate `payhub-properties`) tries every one; a saved tape
//! of choice labels replays a run exactly. The world never reads a clock or draws a
//! random number itself.
//!
//! One file per concept: [`network`] (messages in flight), [`choice`], [`config`]
//! (budgets and what a world contains), [`facts`] (compact history for properties),
//! [`trace`] (text, JSON, Mermaid), [`world`] (enabled + apply), [`prove`] (a failing
//! tape proved, shrunk and proved again), [`tape`] (a saved run).

pub mod choice;
pub mod config;
pub mod driver;
pub mod facts;
mod merchants;
pub mod network;
pub mod prove;
pub mod script;
pub mod shrink;
pub mod tape;
pub mod trace;
pub mod world;
pub mod worlds;

pub use choice::Choice;
pub use config::{Budget, ClientSpec, WorkItem, WorldConfig};
pub use facts::{Facts, RuleSet, ScopeKey};
pub use network::{MsgId, Node, Payload};
pub use trace::{Event, Trace, What};
pub use world::{ApplyError, World};
