//! Shrinking a failing run: delta debugging over its choice tape.
//!
//! A candidate tape is replayed leniently (a choice that is not enabled any more is
//! skipped) and kept if the same property still fails; what was actually applied, up to
//! the violation, becomes the new tape. The result is 1-minimal: removing any single
//! choice makes the failure go away. It replays strictly with [`crate::driver::replay`].

use crate::choice::Choice;
use crate::config::WorldConfig;
use crate::driver::{Check, Violation};
use crate::world::World;

/// Replays `tape` skipping choices that do not apply; returns the applied prefix up to
/// and including the step that violated `property`, if it does.
pub fn replay_lenient(
    config: &WorldConfig,
    tape: &[Choice],
    property: &str,
    check: &mut dyn Check,
) -> Option<(Vec<Choice>, Violation)> {
    let mut world = World::new(config);
    let mut applied = Vec::new();
    if let Some(v) = check.check(&world) {
        return (v.property == property).then_some((applied, v));
    }
    for choice in tape {
        if world.apply(config, choice, None).is_err() {
            continue;
        }
        applied.push(choice.clone());
        if let Some(v) = check.check(&world) {
            return (v.property == property).then_some((applied, v));
        }
    }
    None
}

/// Shrinks a tape that violates `property` to a 1-minimal one that still does.
/// Returns the input unchanged (truncated at the violation) if it does not fail.
pub fn shrink(
    config: &WorldConfig,
    tape: &[Choice],
    property: &str,
    check: &mut dyn Check,
) -> Vec<Choice> {
    let Some((mut current, _)) = replay_lenient(config, tape, property, check) else {
        return tape.to_vec();
    };
    let mut n = 2usize;
    while current.len() >= 2 {
        let len = current.len();
        let chunk = len.div_ceil(n);
        let mut reduced = false;
        let parts = n;
        for i in 0..parts {
            let (start, end) = (i * chunk, ((i + 1) * chunk).min(len));
            if start >= end {
                continue;
            }
            let candidate: Vec<Choice> = current[..start]
                .iter()
                .chain(&current[end..])
                .cloned()
                .collect();
            if let Some((applied, _)) = replay_lenient(config, &candidate, property, check) {
                if applied.len() < len {
                    current = applied;
                    n = (n - 1).max(2);
                    reduced = true;
                    break;
                }
            }
        }
        if !reduced {
            if n >= len {
                break;
            }
            n = (n * 2).min(len);
        }
    }
    current
}
