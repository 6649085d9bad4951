//! The event sink: where everything the world emits goes. The facts always read it; the
//! trace records it when a run is recorded. This is the one place the world's events
//! fan out: no step writes into the facts or the trace directly.

use crate::event_fold::EventFold;
use crate::trace::Trace;
use crate::world::World;
use payhub_model::event::{Event, What};

/// The consumers of one `apply`: the trace, if recording (the facts live in the world).
pub struct Sink<'t> {
    trace: Option<&'t mut Trace>,
}

impl<'t> Sink<'t> {
    pub fn new(trace: Option<&'t mut Trace>) -> Sink<'t> {
        Sink { trace }
    }

    /// Numbers the trace lines of the next choice (its index in the run).
    pub fn begin_step(&mut self, step: u32) {
        if let Some(trace) = self.trace.as_deref_mut() {
            trace.begin_step(step);
        }
    }

    /// Whether a trace is recording.
    pub fn recording(&self) -> bool {
        self.trace.is_some()
    }
}

impl<F: EventFold> World<F> {
    /// Emits one event at the current time: into the facts, then to the trace. The
    /// [`Event`] is built only for a trace: the facts read what happened in place.
    pub(crate) fn emit(&mut self, sink: &mut Sink<'_>, what: What) {
        F::observe_at(&mut self.facts, self.now, &what);
        if let Some(trace) = sink.trace.as_deref_mut() {
            trace.record(Event::new(self.now, what));
        }
    }

    /// Emits an event built from values the caller still needs: moved in and taken back
    /// out of `what` afterwards instead of copied (only a recording trace gets a copy).
    pub(crate) fn emit_ref(&mut self, sink: &mut Sink<'_>, what: &What) {
        F::observe_at(&mut self.facts, self.now, what);
        if let Some(trace) = sink.trace.as_deref_mut() {
            trace.record(Event::new(self.now, what.clone()));
        }
    }

    /// Emits an event a fact reads only sometimes: at once when a trace records it or when
    /// `changes` (one family's cheap answer, asked on the event's parts) says the facts
    /// would change; otherwise built and asked of every family, and emitted only if one
    /// of them changes.
    pub(crate) fn emit_if(
        &mut self,
        sink: &mut Sink<'_>,
        changes: bool,
        what: impl FnOnce() -> What,
    ) {
        if changes || sink.recording() {
            self.emit(sink, what());
            return;
        }
        // The cheap question said no for its family; the others still judge the event.
        let what = what();
        if self.facts.changed_by(&what) {
            self.emit(sink, what);
        }
    }

    /// Emits an event no fact reads, built only when a trace records it (the checker
    /// does not pay for what nobody consumes).
    pub(crate) fn note(&mut self, sink: &mut Sink<'_>, what: impl FnOnce() -> What) {
        if sink.recording() {
            let what = what();
            debug_assert!(!F::reads(&what), "a fact reads {what:?}: emit it");
            self.emit(sink, what);
        }
    }
}

/// Whether two copy-on-write collections, seen through their first element, share their
/// storage: a step that did not write a collection leaves it shared with the copy taken
/// before the step, so nothing in it changed (both empty counts as shared). Compared by
/// address: two live collections never own the same element.
pub(crate) fn shares<T>(before: Option<&T>, after: Option<&T>) -> bool {
    before.map(std::ptr::from_ref) == after.map(std::ptr::from_ref)
}
