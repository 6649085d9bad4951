//! The session's record in memory, bounded, so that a session of days holds a bounded
//! amount. The verdict does not need it: the world folds every event into its facts.
//!
//! - **Trace**: two segments; once handed out ([`Record::hand_out`]) a full current segment
//!   ([`SEGMENT_EVENTS_MAX`]) becomes the earlier one and the one before is dropped and
//!   counted. The events and HAR exports then refuse (a partial stream judged alone would
//!   not give the session's verdict), pointing at `--tape FILE`.
//! - **Tape**: at most [`TAPE_CHOICES_MAX`] choices; past it the script export refuses.
//!
//! The first request of a segment answered in the previous one renders by its id (`req_N`).

use payhub_model::event::Event;
use payhub_properties::verdict::WireSide;
use payhub_sim::network::Node;
use payhub_sim::{Choice, Trace};
use std::sync::Arc;

/// Events a trace segment holds before it is rotated (two are held: at most twice this).
pub const SEGMENT_EVENTS_MAX: usize = 20_000;
/// Choices the tape holds; one more and the session's script can no longer be exported.
pub const TAPE_CHOICES_MAX: usize = 100_000;

/// The verdict's wire side as the session held it ([`Record::wire_snapshot`]).
pub struct WireSnapshot {
    folded: Arc<WireSide>,
    tail: Vec<Event>,
}

impl WireSnapshot {
    /// The wire side of the whole session when the snapshot was taken: every event
    /// folded, and closed (what its wire lacked).
    pub fn side(self) -> WireSide {
        let mut side = WireSide::clone(&self.folded);
        // The record folds again once no snapshot shares its wire side.
        drop(self.folded);
        for e in &self.tail {
            side.observe(e);
        }
        side.close();
        side
    }
}

/// The session's trace and tape, bounded.
#[derive(Default)]
pub struct Record {
    /// The wire facts and the evidence of every event recorded, folded as each segment
    /// is handed out (dropped segments included): the verdict's wire side. Shared with a
    /// verdict that copies it off the session's lock ([`Record::wire_snapshot`]); while
    /// it is, events are not folded (copying it here would stop the session meanwhile):
    /// they wait in `backlog` and `current`.
    wire: Arc<WireSide>,
    /// Events of rotated segments not yet folded into `wire`, in order.
    backlog: Vec<Event>,
    /// Events of `current` folded into `wire` (or moved to `backlog`) so far.
    folded: usize,
    earlier: Trace,
    current: Trace,
    /// Events of `current` handed out so far.
    handed: usize,
    events_dropped: usize,
    tape: Vec<Choice>,
    /// Choices applied, including those dropped (the trace's step numbers).
    steps: u64,
    choices_dropped: u64,
}

impl Record {
    /// A record whose text and drawings call each node what `names` says.
    pub fn named(names: impl IntoIterator<Item = (Node, String)>) -> Record {
        let mut r = Record::default();
        for (node, name) in names {
            r.earlier.name_node(node, name.clone());
            r.current.name_node(node, name);
        }
        r
    }

    /// The trace the next choice records into, its step number set.
    pub fn trace_for_next_step(&mut self) -> &mut Trace {
        self.current
            .begin_step(u32::try_from(self.steps).unwrap_or(u32::MAX));
        &mut self.current
    }

    /// Records an applied choice on the tape (or counts it, once the tape is dropped).
    pub fn push_choice(&mut self, choice: Choice) {
        self.steps += 1;
        if self.choices_dropped > 0 {
            self.choices_dropped += 1;
        } else if self.tape.len() >= TAPE_CHOICES_MAX {
            self.choices_dropped = self.tape.len() as u64 + 1;
            self.tape = Vec::new();
        } else {
            self.tape.push(choice);
        }
    }

    /// Hands every event recorded since the last call to `f`, in order, then rotates the
    /// trace if its current segment is full.
    pub fn hand_out(&mut self, mut f: impl FnMut(&Event)) {
        for e in &self.current.stream[self.handed..] {
            f(e);
        }
        self.handed = self.current.stream.len();
        // Past a segment's worth of events waiting, the wire side is copied here rather
        // than let the backlog (and every snapshot's copy of it) grow without bound.
        let wire = if self.backlog.len() >= SEGMENT_EVENTS_MAX {
            Some(Arc::make_mut(&mut self.wire))
        } else {
            Arc::get_mut(&mut self.wire)
        };
        if let Some(wire) = wire {
            for e in self.backlog.drain(..) {
                wire.observe(&e);
            }
            for e in &self.current.stream[self.folded..] {
                wire.observe(e);
            }
            self.folded = self.current.stream.len();
        }
        if self.current.stream.len() >= SEGMENT_EVENTS_MAX {
            self.backlog
                .extend_from_slice(&self.current.stream[self.folded..]);
            self.events_dropped += self.earlier.stream.len();
            let next = self.current.named_alike();
            self.earlier = std::mem::replace(&mut self.current, next);
            self.handed = 0;
            self.folded = 0;
        }
    }

    /// The wire side of the whole session so far: every event folded, the ones not yet
    /// handed out included, and closed (what its wire lacked).
    pub fn wire_side(&self) -> WireSide {
        self.wire_snapshot().side()
    }

    /// What [`Record::wire_side`] is made of, taken in the time it takes to copy the
    /// events not yet folded (those since the last hand-out, and those that waited for
    /// an earlier snapshot): the folded part is shared, not copied, and copied by
    /// [`WireSnapshot::side`] after the session's lock is released.
    pub fn wire_snapshot(&self) -> WireSnapshot {
        let mut tail = self.backlog.clone();
        tail.extend_from_slice(&self.current.stream[self.folded..]);
        WireSnapshot {
            folded: Arc::clone(&self.wire),
            tail,
        }
    }

    /// When the session's last event happened (0 before any).
    pub fn last_at(&self) -> payhub_model::Millis {
        self.current
            .stream
            .last()
            .or(self.earlier.stream.last())
            .map_or(payhub_model::Millis::ZERO, |e| e.at)
    }

    /// Every event of the session, held or dropped.
    pub fn events_total(&self) -> usize {
        self.events_dropped + self.earlier.stream.len() + self.current.stream.len()
    }

    /// Events no longer held.
    pub fn events_dropped(&self) -> usize {
        self.events_dropped
    }

    /// The segments held, oldest first.
    pub fn segments(&self) -> [&Trace; 2] {
        [&self.earlier, &self.current]
    }

    /// The events held, in order.
    pub fn events_held(&self) -> impl Iterator<Item = &Event> {
        self.earlier.stream.iter().chain(&self.current.stream)
    }

    /// The trace held, as text (one line per trace event).
    pub fn text(&self) -> String {
        self.earlier.to_text() + &self.current.to_text()
    }

    /// Every event of the session, or why not: some were dropped. An export is of the
    /// whole session or refused, never of what is still held passed off as the session.
    pub fn events_whole(&self) -> Result<impl Iterator<Item = &Event>, String> {
        if self.events_dropped > 0 {
            return Err(format!(
                "the session's first {} of {} events are no longer held (a trace segment holds {SEGMENT_EVENTS_MAX}); \
                 `serve --tape FILE` records every event as it happens",
                self.events_dropped,
                self.events_total()
            ));
        }
        Ok(self.events_held())
    }

    /// At most `n` of the session's events from the `from`-th, as JSON Lines, and the
    /// index after them (the streamed export's chunks); why not when some were dropped.
    pub fn events_jsonl_from(&self, from: usize, n: usize) -> Result<(String, usize), String> {
        let mut s = String::new();
        let mut at = from;
        for e in self.events_whole()?.skip(from).take(n) {
            push_line(&mut s, e);
            at += 1;
        }
        Ok((s, at))
    }

    /// The whole session's tape, or why not: it was dropped.
    pub fn tape(&self) -> Result<&[Choice], String> {
        if self.choices_dropped > 0 {
            return Err(format!(
                "the session applied {} choices, more than the {TAPE_CHOICES_MAX} a script is exported for; \
                 POST /__sandbox/reset starts a new session",
                self.choices_dropped
            ));
        }
        Ok(&self.tape)
    }

    /// What the record no longer holds, for the verdict: `None` when it holds it all.
    pub fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.events_dropped > 0 {
            parts.push(format!(
                "the first {} of {} events are no longer held in memory: the events and HAR exports are refused, \
                 and the diagrams show only the events held (--tape FILE has every event)",
                self.events_dropped,
                self.events_total()
            ));
        }
        if self.choices_dropped > 0 {
            parts.push(format!(
                "the tape of {} choices was dropped: the script export is refused",
                self.choices_dropped
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// `e` as one line of JSON Lines (an event that cannot be written: an `error` line).
pub fn push_line(s: &mut String, e: &Event) {
    match serde_json::to_string(e) {
        Ok(line) => s.push_str(&line),
        Err(err) => s.push_str(&serde_json::json!({"error": err.to_string()}).to_string()),
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::Millis;
    use payhub_model::event::What;

    fn event(i: u64) -> Event {
        Event {
            at: Millis(i),
            what: What::Clock { to: Millis(i) },
        }
    }

    #[test]
    fn a_full_segment_rotates_and_the_one_before_is_dropped_and_counted() {
        let mut r = Record::default();
        let mut written = 0;
        for i in 0..(2 * SEGMENT_EVENTS_MAX + 5) as u64 {
            r.current.stream.push(event(i));
            r.hand_out(|_| written += 1);
        }
        assert_eq!(
            written,
            2 * SEGMENT_EVENTS_MAX + 5,
            "every event handed out once"
        );
        assert_eq!(r.events_total(), 2 * SEGMENT_EVENTS_MAX + 5);
        assert_eq!(r.events_dropped(), SEGMENT_EVENTS_MAX);
        assert_eq!(r.events_held().count(), SEGMENT_EVENTS_MAX + 5);
        assert_eq!(
            r.events_held().next().map(|e| e.at),
            Some(Millis(SEGMENT_EVENTS_MAX as u64))
        );
        let refused = r.events_jsonl_from(0, usize::MAX).unwrap_err();
        assert!(refused.contains("--tape FILE"), "{refused}");
        assert_eq!(r.events_whole().err(), Some(refused));
        assert!(r.note().unwrap().contains("no longer held"));
    }

    #[test]
    fn events_not_handed_out_are_never_rotated_away() {
        let mut r = Record::default();
        for i in 0..(3 * SEGMENT_EVENTS_MAX) as u64 {
            r.current.stream.push(event(i));
        }
        assert_eq!((r.events_dropped(), r.note()), (0, None));
        let mut written = 0;
        r.hand_out(|_| written += 1);
        assert_eq!((written, r.events_dropped()), (3 * SEGMENT_EVENTS_MAX, 0));
        let (jsonl, _) = r.events_jsonl_from(0, usize::MAX).unwrap();
        assert_eq!(jsonl.lines().count(), 3 * SEGMENT_EVENTS_MAX);
    }

    #[test]
    fn a_tape_past_its_cap_is_dropped_and_the_script_refused() {
        let mut r = Record::default();
        for _ in 0..TAPE_CHOICES_MAX {
            r.push_choice(Choice::Tick);
        }
        assert_eq!(r.tape().map(<[_]>::len), Ok(TAPE_CHOICES_MAX));
        r.push_choice(Choice::Tick);
        r.push_choice(Choice::Tick);
        let refused = r.tape().unwrap_err();
        assert!(
            refused.contains(&format!("{} choices", TAPE_CHOICES_MAX + 2)),
            "{refused}"
        );
        assert!(r.note().unwrap().contains("script export is refused"));
    }
}
