//! Exploring one configuration for a subject: a preset breadth-first until the first
//! `always` property fails, or a seeded sweep of the simulation world; what is found is
//! proved, shrunk for the property that caught it, and proved again
//! ([`payhub_sim::prove`]).

use super::ZooError;
use crate::Counterexample;
use crate::checker::{COMBINED, PresetModel, Registration};
use crate::presets::Preset;
use crate::property::{OneCheck, Property};
use crate::registry::AlwaysCheck;
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::prove::{Shrink, prove};
use payhub_sim::{Choice, WorldConfig};
use stateright::{Checker, HasDiscoveries, Model};
use std::time::Instant;

/// A counterexample and the property that caught it.
#[derive(Clone, Debug)]
pub struct Found {
    /// The first `always` property (in registry order) that fails along the path found.
    pub property: &'static Property,
    /// Shrunk for that property, from the initial world (a preset's setup included), with
    /// its world, trace and script.
    pub proof: Counterexample,
}

/// What exploring one configuration found.
#[derive(Clone, Debug)]
pub struct Explored {
    /// Unique states (exhaustive) or seeds (simulation) explored.
    pub states: u64,
    /// Whether the exploration ended by itself (not by its state budget).
    pub complete: bool,
    pub seconds: f64,
    pub found: Option<Found>,
    /// Why the configuration could not be explored (its setup does not apply), if so.
    pub skipped: Option<String>,
}

/// Explores `preset` breadth-first until the first `always` property fails, or all of it
/// (within `budget` states); a failure is proved and shrunk. Bounded by states, never by
/// the wall clock, so what it finds does not depend on the machine's load.
pub fn explore(preset: &Preset, budget: Option<usize>) -> Result<Explored, ZooError> {
    let started = Instant::now();
    // Every property in one stateright property that fails at a violating state: the
    // search ends at the first one (see `Registration::Combined`).
    let model = match PresetModel::with_registration(
        preset.clone(),
        Registration::Combined {
            stop_at_violation: true,
        },
    ) {
        Ok(m) => m,
        Err(e) => {
            return Ok(Explored {
                states: 0,
                complete: true,
                seconds: started.elapsed().as_secs_f64(),
                found: None,
                skipped: Some(e.to_string()),
            });
        }
    };
    let mut builder = model
        .checker()
        .threads(1)
        .finish_when(HasDiscoveries::AnyFailures);
    if let Some(n) = budget {
        builder = builder.target_state_count(n);
    }
    let checker = builder.spawn_bfs().join();
    let hit_budget = budget.is_some_and(|n| checker.state_count() >= n);
    let states = checker.unique_state_count() as u64;
    // The path to the first violating state (one thread, breadth-first: at minimal
    // depth; the search ends there) is replayed with every property, in registry order:
    // the property caught is the first one that fails along it.
    let path = checker.discovery(COMBINED).map(|path| path.into_actions());
    let found = match path {
        Some(path) => {
            let mut full = preset.setup.clone();
            full.extend(path);
            Some(first_violation(&preset.config, &full)?)
        }
        None => None,
    };
    Ok(Explored {
        states,
        complete: found.is_some() || !hit_budget,
        seconds: started.elapsed().as_secs_f64(),
        found,
        skipped: None,
    })
}

/// Proves that `tape` violates an `always` property, finds the first one that fails
/// along it, and proves and shrinks the tape for that property alone.
fn first_violation(config: &WorldConfig, tape: &[Choice]) -> Result<Found, ZooError> {
    let first = prove(config, tape, &mut AlwaysCheck { config }, Shrink::No)?;
    let property = crate::registry::property(&first.property)
        .ok_or_else(|| ZooError::UnknownProperty(first.property.clone()))?;
    let mut check = OneCheck { property, config };
    let proof = prove(config, &first.choices, &mut check, Shrink::Yes)?;
    Ok(Found { property, proof })
}

/// Runs seeds `0..seeds` of `config` (at most `steps` choices each, each under its swarm
/// profile, [`FaultProfile::for_seed`]) until one violates an `always` property; that run
/// is proved and shrunk.
pub fn sweep(config: &WorldConfig, seeds: u64, steps: usize) -> Result<Explored, ZooError> {
    let started = Instant::now();
    let mut check = AlwaysCheck { config };
    for seed in 0..seeds {
        let profile = FaultProfile::for_seed(seed);
        let (_, outcome) = driver::run_seed(config, seed, &profile, steps, &mut check, None);
        if outcome.violation.is_some() {
            let found = first_violation(config, &outcome.tape)?;
            return Ok(Explored {
                states: seed + 1,
                complete: true,
                seconds: started.elapsed().as_secs_f64(),
                found: Some(found),
                skipped: None,
            });
        }
    }
    Ok(Explored {
        states: seeds,
        complete: true,
        seconds: started.elapsed().as_secs_f64(),
        found: None,
        skipped: None,
    })
}
