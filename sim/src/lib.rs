//! # payhub-sim
//!
//! Owns the simulated world: networks, crashes, time and every choice, its seeded driver,
//! tapes, traces and shrinking. Never reads a clock or an unseeded random number, never
//! judges, never names a property or the contract's numbers, and never words a verdict:
//! the world only emits events, and keeps whatever its [`EventFold`] makes of them.
//!
//! One world in which the platform, the upstream acquirer and the merchants run against
//! lossy, duplicating, reordering networks, crashes, concurrency and simulated time.
//!
//! Every nondeterministic decision is an explicit [`Choice`]: [`World::enabled`] lists
//! them, [`World::apply`] applies one. The seeded driver ([`driver`]) picks with a ChaCha
//! RNG; the exhaustive checker (crate `payhub-properties`) tries every one; a saved tape
//! of choice labels replays a run exactly.
//!
//! The world emits one typed event (`payhub_model::event`) for each thing that happens;
//! the [`sink`] hands each to the world's [`event_fold`] (the properties' facts, in crate
//! `payhub-properties`, which keeps them in the world's hashed state) and, when recording,
//! to the [`trace`]. The flow is one way: world → events → facts → properties → report.
//!
//! One file per concept: [`world`] (state, enabled choices, the `apply` dispatcher) and
//! one file per fault domain it dispatches to — `merchant_link.rs` (the merchants' network and
//! the platform edge's 500s), `upstream.rs` (link and acquirer), `merchants.rs` (client
//! servers, crashes, restarts), `clock.rs` (time) — with `platform_io.rs` (stepping the
//! platform and routing its outputs); [`network`] (messages in flight), [`choice`],
//! [`config`] (budgets and what a world contains), [`trace`] (text, JSON, Mermaid, JSON
//! Lines), [`prove`] (a failing tape proved, shrunk and proved again), [`tape`] (a saved
//! run).

mod canonical;
pub mod choice;
mod clock;
pub mod config;
pub mod diagram;
pub mod driver;
pub mod error;
pub mod event_fold;
mod inert;
mod merchant_link;
mod merchants;
pub mod narrowing;
pub mod network;
mod platform_io;
pub mod prove;
pub mod script;
pub mod shrink;
mod signature;
pub mod sink;
pub mod sweep;
pub mod tape;
pub mod trace;
mod trace_lines;
mod upstream;
pub mod world;
pub mod worlds;

pub use canonical::CanonicalRequests;
pub use choice::Choice;
pub use config::{
    Budget, ClientSpec, Readings, WorkItem, WorldConfig, reading_name, reading_named,
};
pub use diagram::Diagram;
pub use event_fold::EventFold;
pub use narrowing::Narrowing;
pub use network::{MsgId, Node, Payload};
pub use trace::{Trace, TraceLine, TraceWhat};
pub use world::{ApplyError, Canonical, World};
