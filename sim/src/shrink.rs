//! Shrinking a failing run: delta debugging over its choice tape.
//!
//! A candidate tape (the original with some choices removed) is replayed leniently:
//! each choice is matched by its [`World::signature`] — what it does, not the ids it
//! names — so that removing an early choice, which shifts every later message id, does
//! not derail the rest; a choice with no match is skipped. A candidate is kept if the
//! same property still fails, and what was actually applied, up to the violation,
//! becomes the new tape. The result is 1-minimal under this replay and replays strictly
//! with [`crate::driver::replay`].

use crate::choice::Choice;
use crate::config::WorldConfig;
use crate::driver::{Check, Violation};
use crate::event_fold::EventFold;
use crate::world::World;

/// A choice with the signature it had when it was first applied.
#[derive(Clone, Debug)]
struct Step {
    choice: Choice,
    signature: String,
}

/// Replays `steps` leniently; returns the applied prefix up to and including the step
/// that violated `property`, if it does.
fn replay_lenient<F: EventFold>(
    config: &WorldConfig,
    steps: &[Step],
    property: &str,
    check: &mut dyn Check<F>,
) -> Option<(Vec<Step>, Violation)> {
    let mut world = World::<F>::new(config);
    let mut applied = Vec::new();
    let mut enabled = Vec::new();
    if let Some(v) = check.check(&world) {
        return (v.property == property).then_some((applied, v));
    }
    for step in steps {
        let exact = world.signature(&step.choice) == step.signature;
        let choice = if exact {
            Some(step.choice.clone())
        } else {
            world.enabled(config, &mut enabled);
            enabled
                .iter()
                .find(|c| world.signature(c) == step.signature)
                .cloned()
        };
        let Some(choice) = choice else { continue };
        let signature = world.signature(&choice);
        if world.apply(config, &choice, None).is_err() {
            continue;
        }
        applied.push(Step { choice, signature });
        if let Some(v) = check.check(&world) {
            return (v.property == property).then_some((applied, v));
        }
    }
    None
}

/// The signatures of a tape as it first ran (strictly); stops at the first choice that
/// does not apply.
fn sign(config: &WorldConfig, tape: &[Choice]) -> Vec<Step> {
    // A signature never reads the fold: this world folds nothing.
    let mut world = World::<()>::new(config);
    let mut steps = Vec::new();
    for choice in tape {
        let signature = world.signature(choice);
        if world.apply(config, choice, None).is_err() {
            break;
        }
        steps.push(Step {
            choice: choice.clone(),
            signature,
        });
    }
    steps
}

/// Shrinks a tape that violates `property` to a 1-minimal one that still does.
/// Returns the input unchanged if it does not fail.
pub fn shrink<F: EventFold>(
    config: &WorldConfig,
    tape: &[Choice],
    property: &str,
    check: &mut dyn Check<F>,
) -> Vec<Choice> {
    let steps = sign(config, tape);
    let Some((mut current, _)) = replay_lenient(config, &steps, property, check) else {
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
            let candidate: Vec<Step> = current[..start]
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
    current.into_iter().map(|s| s.choice).collect()
}
