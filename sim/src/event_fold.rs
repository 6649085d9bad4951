//! What the world folds its events into: the one thing it asks of whoever reads them.
//!
//! The world emits an event for everything that happens ([`crate::sink`]) and keeps the
//! fold of those events in its state, so that the checker hashes it with the rest and
//! every verdict is a function of a state. What the fold records, and what the records
//! mean, is not the world's business: the properties' facts (crate `payhub-properties`)
//! are one [`EventFold`], and `()` folds nothing (a world run only for its choices or its
//! trace). The world asks a fold only what it needs to emit cheaply: whether an event
//! would change it (so events nobody reads are never built), and, for the checker's
//! canonical form, the request ids it holds and their renaming.

use crate::Narrowing;
use payhub_model::client::Decision;
use payhub_model::event::{Handling, Owner, What};
use payhub_model::{ApiRequest, ApiResponse, Millis, RequestId, Shared};
use std::fmt::Debug;
use std::hash::Hash;

/// A fold of the world's events, kept in its hashed state (see the module doc).
pub trait EventFold:
    Clone + Debug + Default + Eq + Hash + serde::Serialize + Send + Sync + 'static
{
    /// The fold a world starts with: empty, with `narrowing` planted if there is one.
    fn planted(narrowing: Option<Narrowing>) -> Self;

    /// Folds what happened at `at`. A fold that `what` does not change must not be copied
    /// (the checker shares it between states).
    fn observe_at(fold: &mut Shared<Self>, at: Millis, what: &What);

    /// Whether `what` would change the fold.
    fn changed_by(&self, what: &What) -> bool;

    /// Whether the fold reads this kind of event at all (the world notes the others only
    /// for a trace).
    fn reads(what: &What) -> bool;

    /// Whether the fold reads a client's `decision` (the world notes the others).
    fn reads_decision(decision: &Decision) -> bool;

    /// Whether a handled request may change the fold, asked before the world copies its
    /// `answer` into the event's `handling`.
    fn handling_changes(
        &self,
        request: &ApiRequest,
        owner: Owner,
        answer: Option<&ApiResponse>,
        handling: &Handling,
    ) -> bool;

    /// Every request id the fold holds, each at least once.
    fn request_ids(&self, out: &mut dyn FnMut(&RequestId));

    /// Replaces every request id the fold holds by `rank(id)` (copying only what holds
    /// one).
    fn rename_requests(fold: &mut Shared<Self>, rank: &impl Fn(RequestId) -> RequestId);
}

/// Folds nothing: a world run for its choices or its trace alone.
impl EventFold for () {
    fn planted(_: Option<Narrowing>) {}

    fn observe_at(_: &mut Shared<()>, _: Millis, _: &What) {}

    fn changed_by(&self, _: &What) -> bool {
        false
    }

    fn reads(_: &What) -> bool {
        false
    }

    fn reads_decision(_: &Decision) -> bool {
        false
    }

    fn handling_changes(
        &self,
        _: &ApiRequest,
        _: Owner,
        _: Option<&ApiResponse>,
        _: &Handling,
    ) -> bool {
        false
    }

    fn request_ids(&self, _: &mut dyn FnMut(&RequestId)) {}

    fn rename_requests(_: &mut Shared<()>, _: &impl Fn(RequestId) -> RequestId) {}
}
