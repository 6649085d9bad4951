//! A verdict's snapshot (`Sandbox::held`) while the session goes on: it judges what the
//! session held when it was taken, and the record folds the events that waited for it
//! once it is released, across a rotation of the trace.

use super::*;
use payhub_properties::verdict::WireSide;

/// A wire side folded from `events` alone, as text (the wire side has no equality).
fn folded(events: &[payhub_model::event::Event]) -> String {
    let mut side = WireSide::default();
    for e in events {
        side.observe(e);
    }
    side.close();
    format!("{side:?}")
}

#[test]
fn a_held_verdict_judges_its_moment_and_the_record_folds_after() {
    let mut sb = plain();
    let mut all = Vec::new();
    sb.fill(sb.now(), 50).unwrap();
    sb.hand_out_events(|e| all.push(e.clone()));
    let held = sb.held();
    let then = all.len();
    // While the snapshot shares the wire side, events wait; a segment's worth of them
    // rotates the trace, and the waiting ones move to the backlog.
    while all.len() < then + crate::serve::record::SEGMENT_EVENTS_MAX + 100 {
        sb.fill(sb.now(), 100).unwrap();
        sb.hand_out_events(|e| all.push(e.clone()));
    }
    assert!(!sb.record().segments()[0].stream.is_empty(), "no rotation");
    let (_, side) = held.judged();
    assert_eq!(format!("{side:?}"), folded(&all[..then]));
    // Released: the next hand-out folds what waited.
    sb.fill(sb.now(), 1).unwrap();
    sb.hand_out_events(|e| all.push(e.clone()));
    assert_eq!(format!("{:?}", sb.record().wire_side()), folded(&all));
}
