//! The exhaustive checker: a stateright `Model` over the world of a preset.
//!
//! Traps of stateright 0.31 closed here rather than inherited:
//! - a run stopped by a state-count or time limit is reported **incomplete**, never as
//!   passing;
//! - a counterexample is replayed on the world to prove it reaches the violation, then
//!   shrunk with the tape shrinker, so the printed one is short;
//! - no symmetry reduction is used, so counts do not depend on thread scheduling;
//! - the hashed state (the world) is canonical: ordered maps, no trace inside.

use crate::presets::Preset;
use crate::property::{Kind, PROPERTIES, Predicate, Property};
use payhub_model::Rule;
use payhub_sim::driver::{self, Check, Violation};
use payhub_sim::{Choice, World, WorldConfig};
use serde::Serialize;
use stateright::{Checker, Model};
use std::time::{Duration, Instant};

/// A preset as a stateright model.
pub struct PresetModel {
    pub preset: Preset,
    init: World,
    /// Every rule that decided something in some visited state: a bitset over the
    /// catalogue, gathered as states are generated (cheaper than visiting paths).
    exercised: [std::sync::atomic::AtomicU64; 2],
}

impl PresetModel {
    pub fn new(preset: Preset) -> Result<PresetModel, String> {
        let init = initial_state(&preset)?;
        Ok(PresetModel {
            preset,
            init,
            exercised: Default::default(),
        })
    }
}

/// Applies a preset's setup choices.
pub fn initial_state(preset: &Preset) -> Result<World, String> {
    let mut world = World::new(&preset.config);
    for (i, choice) in preset.setup.iter().enumerate() {
        world.apply(&preset.config, choice, None).map_err(|e| {
            format!(
                "preset {}: setup step {} ('{choice}'): {e}",
                preset.name,
                i + 1
            )
        })?;
    }
    Ok(world)
}

/// `fn(&PresetModel, &World) -> bool` for property `I` of the registry: stateright takes
/// plain function pointers, so each property gets one instance of this function.
fn condition<const I: usize>(model: &PresetModel, world: &World) -> bool {
    PROPERTIES[I].holds(&model.preset.config, world)
}

macro_rules! conditions {
    ($($i:literal)*) => { &[$(condition::<$i>),*] };
}

/// One condition per registry slot (at most 48 properties).
static CONDITIONS: &[fn(&PresetModel, &World) -> bool] = conditions!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
    24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47
);

impl Model for PresetModel {
    type State = World;
    type Action = Choice;

    fn init_states(&self) -> Vec<World> {
        vec![self.init.clone()]
    }

    fn actions(&self, state: &World, actions: &mut Vec<Choice>) {
        state.enabled(&self.preset.config, actions);
    }

    fn next_state(&self, last: &World, action: Choice) -> Option<World> {
        let mut next = last.clone();
        next.apply(&self.preset.config, &action, None).ok()?;
        let bits = next.facts.rules_exercised.0;
        use std::sync::atomic::Ordering::Relaxed;
        self.exercised[0].fetch_or(bits as u64, Relaxed);
        self.exercised[1].fetch_or((bits >> 64) as u64, Relaxed);
        Some(next)
    }

    fn format_action(&self, action: &Choice) -> String {
        action.to_string()
    }

    /// The step in the contract's notation: what the choice does to which message.
    fn format_step(&self, last: &World, action: Choice) -> Option<String> {
        Some(format!("{action}: {}", last.signature(&action)))
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        PROPERTIES
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind() == Kind::Always || self.preset.reaches.contains(&p.name))
            .map(|(i, p)| match p.kind() {
                Kind::Always => stateright::Property::always(p.name, CONDITIONS[i]),
                Kind::Sometimes => stateright::Property::sometimes(p.name, CONDITIONS[i]),
            })
            .collect()
    }

    fn within_boundary(&self, state: &World) -> bool {
        state.now <= self.preset.horizon
    }
}

/// Limits of one check run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub threads: usize,
    /// Stop (and report incomplete) after this many unique states.
    pub max_states: Option<usize>,
    /// Stop (and report incomplete) after this long.
    pub timeout: Option<Duration>,
    /// Stop expanding below this depth (reported incomplete if states were cut).
    pub max_depth: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            threads: 1,
            max_states: None,
            timeout: None,
            max_depth: None,
        }
    }
}

/// The verdict on one property in one preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Holds,
    Violated,
    Reached,
    Unreached,
    /// The run was incomplete: nothing can be claimed.
    Unknown,
}

/// A counterexample: replayed on the world, shrunk.
#[derive(Clone, Debug, Serialize)]
pub struct Counterexample {
    pub detail: String,
    /// The choices, shortest first found by BFS, then shrunk.
    pub tape: Vec<String>,
    /// Length of the path stateright reported.
    pub bfs_length: usize,
    /// Whether `tape` is a shortest path to a violating state (breadth-first search);
    /// otherwise it is 1-minimal (shrunk).
    pub minimal: bool,
    #[serde(skip)]
    pub choices: Vec<Choice>,
}

/// One property's line in a preset report.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyReport {
    pub name: &'static str,
    pub kind: Kind,
    pub rules: Vec<&'static str>,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
}

/// What checking one preset found.
#[derive(Clone, Debug, Serialize)]
pub struct PresetReport {
    pub name: &'static str,
    pub about: &'static str,
    pub complete: bool,
    pub unique_states: usize,
    pub total_states: usize,
    pub max_depth: usize,
    pub seconds: f64,
    pub properties: Vec<PropertyReport>,
    /// Rules that decided some response or call in some visited state.
    pub rules_exercised: Vec<&'static str>,
}

impl PresetReport {
    /// Every always holds and every sometimes is reached, in a complete run.
    pub fn passed(&self) -> bool {
        self.complete
            && self
                .properties
                .iter()
                .all(|p| matches!(p.status, Status::Holds | Status::Reached))
    }
}

/// Checks a preset exhaustively (BFS) within `limits`.
pub fn check(preset: &Preset, limits: Limits) -> Result<PresetReport, String> {
    let model = PresetModel::new(preset.clone())?;
    let mut builder = model.checker().threads(limits.threads.max(1));
    if let Some(n) = limits.max_states {
        builder = builder.target_state_count(n);
    }
    if let Some(t) = limits.timeout {
        builder = builder.timeout(t);
    }
    if let Some(d) = limits.max_depth {
        builder = builder.target_max_depth(d);
    }
    let started = Instant::now();
    let checker = builder.spawn_bfs().join();
    let seconds = started.elapsed().as_secs_f64();
    let unique_states = checker.unique_state_count();
    // stateright's target counts generated states, repeats included.
    let hit_states = limits
        .max_states
        .is_some_and(|n| unique_states >= n || checker.state_count() >= n);
    let hit_time = limits.timeout.is_some_and(|t| started.elapsed() >= t);
    let hit_depth = limits.max_depth.is_some_and(|d| checker.max_depth() >= d);
    let complete = !(hit_states || hit_time || hit_depth);

    let discoveries = checker.discoveries();
    let exercised = {
        use std::sync::atomic::Ordering::Relaxed;
        let m = checker.model();
        let bits =
            (m.exercised[0].load(Relaxed) as u128) | ((m.exercised[1].load(Relaxed) as u128) << 64);
        payhub_sim::RuleSet(bits | m.init.facts.rules_exercised.0)
    };
    let mut properties = Vec::new();
    for p in PROPERTIES {
        if p.kind() == Kind::Sometimes && !preset.reaches.contains(&p.name) {
            continue;
        }
        let found = discoveries.get(p.name);
        let (status, counterexample) = match (p.kind(), found) {
            (Kind::Always, Some(path)) => {
                let actions = path.clone().into_actions();
                (Status::Violated, Some(minimise(preset, p, &actions)?))
            }
            (Kind::Always, None) if complete => (Status::Holds, None),
            (Kind::Sometimes, Some(_)) => (Status::Reached, None),
            (Kind::Sometimes, None) if complete => (Status::Unreached, None),
            _ => (Status::Unknown, None),
        };
        properties.push(PropertyReport {
            name: p.name,
            kind: p.kind(),
            rules: p.rules.iter().map(|r| r.id()).collect(),
            status,
            counterexample,
        });
    }
    Ok(PresetReport {
        name: preset.name,
        about: preset.about,
        complete,
        unique_states,
        total_states: checker.state_count(),
        max_depth: checker.max_depth(),
        seconds,
        properties,
        rules_exercised: exercised.iter().map(|r| r.id()).collect(),
    })
}

/// One property as a [`Check`] for replay and shrinking.
struct One<'a> {
    property: &'static Property,
    config: &'a WorldConfig,
}

impl Check for One<'_> {
    fn check(&mut self, world: &World) -> Option<Violation> {
        match self.property.predicate {
            Predicate::Always(f) => f(self.config, world).map(|detail| Violation {
                property: self.property.name.to_owned(),
                detail,
            }),
            Predicate::Sometimes(_) => None,
        }
    }
}

/// Replays a BFS path on the world (after the preset's setup) to prove it violates the
/// property, then shrinks it.
fn minimise(
    preset: &Preset,
    property: &'static Property,
    path: &[Choice],
) -> Result<Counterexample, String> {
    let mut full: Vec<Choice> = preset.setup.clone();
    full.extend_from_slice(path);
    let mut check = One {
        property,
        config: &preset.config,
    };
    let (_, outcome) =
        driver::replay(&preset.config, &full, &mut check, None).map_err(|(i, e)| {
            format!(
                "counterexample of {} does not replay at step {}: {e}",
                property.name,
                i + 1
            )
        })?;
    let violation = outcome.violation.ok_or_else(|| {
        format!(
            "counterexample of {} replays without violating it",
            property.name
        )
    })?;
    // BFS from the initial state gives the shortest path to a violating state; stateright
    // may report a longer one (the last it found), so search again, single-threaded.
    if let Some(shortest) = shortest_violation(preset, property, SHORTEST_SEARCH_STATES) {
        let mut full: Vec<Choice> = preset.setup.clone();
        full.extend_from_slice(&shortest);
        let (_, replayed) =
            driver::replay(&preset.config, &full, &mut check, None).map_err(|(i, e)| {
                format!(
                    "shortest counterexample does not replay at step {}: {e}",
                    i + 1
                )
            })?;
        let detail = replayed
            .violation
            .map(|v| v.detail)
            .unwrap_or(violation.detail.clone());
        return Ok(Counterexample {
            detail,
            tape: shortest.iter().map(|c| c.to_string()).collect(),
            bfs_length: path.len(),
            minimal: true,
            choices: shortest,
        });
    }
    let shrunk =
        payhub_sim::shrink::shrink(&preset.config, &outcome.tape, property.name, &mut check);
    let choices = if shrunk.len() < outcome.tape.len() {
        shrunk
    } else {
        outcome.tape
    };
    Ok(Counterexample {
        detail: violation.detail,
        tape: choices.iter().map(|c| c.to_string()).collect(),
        bfs_length: path.len(),
        minimal: false,
        choices,
    })
}

/// States the shortest-counterexample search may visit before giving up.
const SHORTEST_SEARCH_STATES: usize = 5_000_000;

/// The shortest path to a state violating `property`: a single-threaded breadth-first
/// search (stateright's BFS with one thread visits states in depth order) that stops at
/// the first violation of that property. `None` if none is found within `max_states`.
pub fn shortest_violation(
    preset: &Preset,
    property: &'static Property,
    max_states: usize,
) -> Option<Vec<Choice>> {
    let model = PresetModel::new(preset.clone()).ok()?;
    let checker = model
        .checker()
        .threads(1)
        .target_state_count(max_states)
        .finish_when(stateright::HasDiscoveries::AnyOf(
            [property.name].into_iter().collect(),
        ))
        .spawn_bfs()
        .join();
    checker
        .discovery(property.name)
        .map(|path| path.into_actions())
}

/// Rules cited by the properties, for coverage.
pub fn rules_checked() -> Vec<(Rule, Vec<&'static str>)> {
    Rule::ALL
        .iter()
        .map(|r| {
            let by: Vec<&'static str> = PROPERTIES
                .iter()
                .filter(|p| p.rules.contains(r))
                .map(|p| p.name)
                .collect();
            (*r, by)
        })
        .collect()
}

/// Serves stateright's Explorer for `preset` on `addr` until the process stops.
pub fn serve(preset: Preset, addr: std::net::SocketAddr) -> Result<(), String> {
    let model = PresetModel::new(preset)?;
    let checker = model.checker().serve(addr);
    let _ = checker.unique_state_count();
    Ok(())
}
