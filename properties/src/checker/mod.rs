//! The exhaustive checker: a stateright `Model` over the world of a preset.
//!
//! `check` explores it with the level-synchronous search of [`crate::engine`] (the same
//! counts as stateright's BFS, which a test compares on every preset, at a fraction of
//! its bookkeeping); the shortest-counterexample search, the depth-first fallback, the
//! bug zoo and the Explorer use stateright's own checkers.
//!
//! Traps of stateright 0.31 closed here rather than inherited:
//! - a run stopped by a state-count or time limit is reported **incomplete**, never as
//!   passing;
//! - a counterexample is replayed on the world to prove it reaches the violation
//!   ([`payhub_sim::prove`]), and shrunk with the tape shrinker when it is not a shortest
//!   path, so the printed one is short;
//! - no symmetry reduction is used, so counts do not depend on thread scheduling;
//! - the hashed state (the world) is canonical: ordered maps, no trace inside.

use crate::World;
use crate::engine::{self, Bounds, Flow};
use crate::presets::Preset;
use crate::property::{Kind, OneCheck};
use crate::registry::PROPERTIES;
pub use error::CheckError;
use payhub_sim::Choice;
use payhub_sim::prove::{Shrink, prove};
use stateright::{Checker, Model};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

mod error;

/// A preset as a stateright model.
pub struct PresetModel {
    pub preset: Preset,
    init: World,
    /// Every rule that decided something in some visited state: a bitset over the
    /// catalogue, gathered as states are generated (cheaper than visiting paths).
    exercised: [AtomicU64; 2],
    registration: Registration,
    /// The registry indices of this preset's properties: every `always`, and the
    /// `sometimes` it means to reach.
    active: Vec<usize>,
    /// Bitsets over the registry: `always` properties some visited state violates,
    /// `sometimes` properties some visited state reaches ([`Registration::Combined`]).
    /// A union over the visited states, so independent of thread scheduling.
    violated: [AtomicU64; 2],
    reached: [AtomicU64; 2],
    /// [`Registration::Only`]: the first violating state was reported.
    first_reported: std::sync::atomic::AtomicBool,
    /// [`Registration::Combined`]: the digests of the facts judged so far.
    judged: engine::visited::Exact,
    /// `--reduce por`: a state where this names a message offers only its delivery (a
    /// persistent set of one; for [`INERT_FIRST`] the argument is `payhub_sim`'s
    /// `inert` module doc).
    pub partial_order: Option<FirstDelivery>,
}

/// The message a partial-order reduction delivers first in a state, if any.
pub type FirstDelivery = fn(&World) -> Option<payhub_sim::MsgId>;

/// `--reduce por`: the first inert message (an answer nobody awaits any more).
pub const INERT_FIRST: FirstDelivery = World::inert_message;

/// How the preset's properties are handed to stateright.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Registration {
    /// One stateright property per registry property: the Explorer shows each.
    Each,
    /// Only this registry property, failing at the first violating state the search
    /// visits and never again: stateright keeps the *last* failing path it saw for a
    /// property, so without the latch a single-threaded BFS could report a path longer
    /// than the shortest (the shortest-counterexample search). Meant for an `always`
    /// property: a `sometimes` one never fails.
    Only(usize),
    /// One stateright `always` property that evaluates them all and records the
    /// verdicts in bitsets. stateright hashes each property's name with SipHash for
    /// every visited state; with forty properties that was a fifth of the checker's
    /// instructions. With `stop_at_violation` it fails (and the search can end) at the
    /// first violating state; without it, it never fails, so the search is exhaustive.
    Combined { stop_at_violation: bool },
}

/// The name of the [`Registration::Combined`] property.
pub const COMBINED: &str = "every-property-of-the-preset";

impl PresetModel {
    /// A model whose properties are registered one by one (the Explorer's view).
    pub fn new(preset: Preset) -> Result<PresetModel, CheckError> {
        PresetModel::with_registration(preset, Registration::Each)
    }

    pub fn with_registration(
        preset: Preset,
        registration: Registration,
    ) -> Result<PresetModel, CheckError> {
        let init = initial_state(&preset)?;
        let active = match registration {
            Registration::Only(i) => vec![i],
            _ => PROPERTIES
                .iter()
                .enumerate()
                .filter(|(_, p)| p.over_facts())
                .filter(|(_, p)| p.kind() == Kind::Always || preset.reaches.contains(&p.name))
                .map(|(i, _)| i)
                .collect(),
        };
        Ok(PresetModel {
            preset,
            init,
            exercised: Default::default(),
            registration,
            active,
            violated: Default::default(),
            reached: Default::default(),
            first_reported: Default::default(),
            judged: Default::default(),
            partial_order: None,
        })
    }

    /// Registry indices of the `always` properties some visited state violated.
    pub fn violated(&self) -> u128 {
        load(&self.violated)
    }

    /// Registry indices of the `sometimes` properties some visited state reached.
    pub fn reached(&self) -> u128 {
        load(&self.reached)
    }
}

/// A 128-bit set over the registry as two atomic words (no stable `AtomicU128`).
fn load(bits: &[AtomicU64; 2]) -> u128 {
    (bits[0].load(Relaxed) as u128) | ((bits[1].load(Relaxed) as u128) << 64)
}

/// Adds registry index `i` to `bits`.
fn set(bits: &[AtomicU64; 2], i: usize) {
    bits[i / 64].fetch_or(1u64 << (i % 64), Relaxed);
}

/// Whether `bits` holds registry index `i`.
fn has(bits: &[AtomicU64; 2], i: usize) -> bool {
    bits[i / 64].load(Relaxed) & (1u64 << (i % 64)) != 0
}

/// Evaluates every property of the preset on `world` ([`Registration::Combined`]).
/// A `sometimes` property already reached is not evaluated again.
///
/// Every property is a function of the facts alone ([`Property::holds_in`]), so a state
/// whose facts an earlier judged state had (the same digest of `world.facts`, which the
/// fingerprint computed already) is not judged again: what it would set is set, and a
/// violation there stopped the search. Most states differ from another only in what is
/// in flight, the clock or a client's timers. Two different facts with one digest would
/// hide the second as two states with one fingerprint hide the second, with the same
/// odds (a 64-bit aHash).
fn combined(model: &PresetModel, world: &World) -> bool {
    if matches!(model.registration, Registration::Combined { .. })
        && !engine::visited::Visited::insert(&model.judged, world.facts.digest())
    {
        return true;
    }
    let mut ok = true;
    for &i in &model.active {
        let p = &PROPERTIES[i];
        match p.kind() {
            Kind::Always => {
                if !p.holds_in(&world.facts) {
                    set(&model.violated, i);
                    ok = false;
                }
            }
            Kind::Sometimes => {
                if !has(&model.reached, i) && p.holds_in(&world.facts) {
                    set(&model.reached, i);
                }
            }
        }
    }
    match model.registration {
        Registration::Combined {
            stop_at_violation: true,
        } => ok,
        Registration::Only(_) => ok || model.first_reported.swap(true, Relaxed),
        _ => true,
    }
}

/// Applies a preset's setup choices.
pub fn initial_state(preset: &Preset) -> Result<World, CheckError> {
    preset
        .initial_state()
        .map_err(|(step, error)| CheckError::Setup {
            preset: preset.name.to_string(),
            step,
            choice: preset.setup[step - 1].clone(),
            error,
        })
}

/// `fn(&PresetModel, &World) -> bool` for property `I` of the registry: stateright takes
/// plain function pointers, so each property gets one instance of this function.
fn condition<const I: usize>(_: &PresetModel, world: &World) -> bool {
    PROPERTIES[I].holds_in(&world.facts)
}

/// `&[f::<0>, …, f::<95>]`: one instance of a condition per registry slot (at most 96
/// properties; the bitsets hold 128).
macro_rules! slots {
    ($f:ident) => {
        slots!($f; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
            24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47
            48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71
            72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95
            96 97 98 99 100 101 102 103 104 105 106 107)
    };
    ($f:ident; $($i:literal)*) => { &[$($f::<$i>),*] };
}

static CONDITIONS: &[fn(&PresetModel, &World) -> bool] = slots!(condition);

// After `slots!`, which the Explorer's conditions use too.
mod explorer;
mod report;
pub mod shortcuts;

pub use explorer::{ExplorerModel, Shown, serve, state_text, step_text};
pub use report::{
    BitstateReport, CheckStatus, Counterexample, Limits, Order, PresetReport, PropertyReport,
    Search,
};

impl Model for PresetModel {
    type State = World;
    type Action = Choice;

    /// Built afresh at each call, not cloned from `init`: the depth-first engine
    /// rebuilds a state handed to another thread from it, and a clone would share its
    /// parts (and their reference counts) with every state of the other thread.
    fn init_states(&self) -> Vec<World> {
        vec![initial_state(&self.preset).expect("the setup ran when the model was made")]
    }

    fn actions(&self, state: &World, actions: &mut Vec<Choice>) {
        if let Some(first) = self.partial_order
            && let Some(msg) = first(state)
        {
            actions.clear();
            actions.push(Choice::Deliver { msg, branch: None });
            return;
        }
        state.enabled(&self.preset.config, actions);
    }

    fn next_state(&self, last: &World, action: Choice) -> Option<World> {
        // A clock move past the horizon leaves the boundary whatever it fires: not
        // stepped (a tick's target is known before it fires anything; on `create-lossy`
        // most ticks were such moves, a whole clock step each, then thrown away).
        if last
            .clock_after(&action)
            .is_some_and(|t| t > self.preset.horizon)
        {
            return None;
        }
        let mut next = last.clone();
        next.apply(&self.preset.config, &action, None).ok()?;
        let bits = next.facts.queries.rules_exercised.0 | next.facts.queries.client_rules.0.0;
        // Written only when a rule is new: a read-modify-write of this shared word on
        // every generated state kept the checker's threads waiting for each other.
        for (word, part) in self
            .exercised
            .iter()
            .zip([bits as u64, (bits >> 64) as u64])
        {
            if word.load(Relaxed) & part != part {
                word.fetch_or(part, Relaxed);
            }
        }
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
        let one = |i: usize| {
            let p = &PROPERTIES[i];
            match p.kind() {
                Kind::Always => stateright::Property::always(p.name, CONDITIONS[i]),
                Kind::Sometimes => stateright::Property::sometimes(p.name, CONDITIONS[i]),
            }
        };
        match self.registration {
            Registration::Each => self.active.iter().map(|&i| one(i)).collect(),
            // Named after the property, so its discovery is found by its name.
            Registration::Only(i) => {
                vec![stateright::Property::always(PROPERTIES[i].name, combined)]
            }
            Registration::Combined { .. } => {
                vec![stateright::Property::always(COMBINED, combined)]
            }
        }
    }

    fn within_boundary(&self, state: &World) -> bool {
        state.now <= self.preset.horizon
    }
}

/// Checks a preset exhaustively (BFS) within `limits`.
pub fn check(preset: &Preset, limits: Limits) -> Result<PresetReport, CheckError> {
    check_with(preset, limits, Search::default())
}

/// What a search of a preset found, before counterexamples are looked for.
#[derive(Clone, Copy, Debug)]
pub struct Searched {
    pub explored: engine::Explored,
    pub complete: bool,
    pub seconds: f64,
    /// Registry indices of the `always` properties some judged state violated.
    pub violated: u128,
    /// Registry indices of the `sometimes` properties some judged state reached.
    pub reached: u128,
    pub exercised: crate::RuleSet,
    pub bitstate: Option<BitstateReport>,
}

/// Searches a preset within `limits` as `search` says, judging every state (or, with
/// `stop_at_violation`, until the first violating one) and returning the verdicts' bits.
pub fn search(
    preset: &Preset,
    limits: Limits,
    search: Search,
    stop_at_violation: bool,
) -> Result<Searched, CheckError> {
    search_by(
        preset,
        limits,
        search,
        stop_at_violation,
        &search.fingerprint(),
    )
}

/// [`search`] with the states told apart by `fp` alone (whatever `search.canonical_ids`
/// says): the seam the reduction's soundness test plants an unsound canonical form in.
pub fn search_by(
    preset: &Preset,
    limits: Limits,
    search: Search,
    stop_at_violation: bool,
    fp: &(dyn Fn(&World) -> u64 + Sync),
) -> Result<Searched, CheckError> {
    let mut model = PresetModel::with_registration(
        preset.clone(),
        Registration::Combined { stop_at_violation },
    )?;
    model.partial_order = search.partial_order;
    // Level-synchronous (`engine`): a depth bound is exact with any number of threads.
    let bounds = Bounds {
        total_states: limits.max_states,
        timeout: limits.timeout,
        max_depth: limits.max_depth,
        interrupted: search.interrupted,
    };
    let started = Instant::now();
    let judge = |world: &World| {
        if combined(&model, world) {
            Flow::Continue
        } else {
            Flow::Stop
        }
    };
    let threads = limits.threads.max(1);
    let mut bitstate = None;
    let explored = match (search.bitstate, search.order) {
        (Some(log2), _) => {
            let bits = engine::visited::Bitstate::new(log2, engine::visited::BITSTATE_HASHES);
            let e = engine::dfs(&model, threads, bounds, &judge, fp, &bits);
            bitstate = Some(BitstateReport {
                bits: bits.bits(),
                hashes: bits.hashes(),
                fill: bits.fill(),
                expected_missed: bits.expected_missed(),
            });
            e
        }
        (None, Order::Breadth) => engine::bfs_over(
            &model,
            threads,
            bounds,
            &judge,
            fp,
            &engine::visited::Exact::default(),
        ),
        (None, Order::Depth) => engine::dfs(
            &model,
            threads,
            bounds,
            &judge,
            fp,
            &engine::visited::Exact::default(),
        ),
    };
    let seconds = started.elapsed().as_secs_f64();
    // Like stateright's target, the state bound counts generated states, repeats included.
    // A bitstate run may have taken new states for seen ones: never complete.
    let complete = !(bounds.reached(explored.total_states, started)
        || limits.max_depth.is_some_and(|d| explored.max_depth >= d)
        || explored.cut
        || explored.stopped
        || bitstate.is_some());
    let init = &model.init.facts.queries;
    let exercised =
        crate::RuleSet(load(&model.exercised) | init.rules_exercised.0 | init.client_rules.0.0);
    Ok(Searched {
        explored,
        complete,
        seconds,
        violated: model.violated(),
        reached: model.reached(),
        exercised,
        bitstate,
    })
}

/// Checks a preset within `limits`, searching as `search` says.
pub fn check_with(
    preset: &Preset,
    limits: Limits,
    how: Search,
) -> Result<PresetReport, CheckError> {
    let Searched {
        explored,
        complete,
        seconds,
        violated,
        reached,
        exercised,
        bitstate,
    } = search(preset, limits, how, false)?;
    let unique_states = explored.unique_states;
    let mut properties = Vec::new();
    for (i, p) in PROPERTIES.iter().enumerate() {
        // A world holds no wire facts: a property over the wire is not judged here.
        if !p.over_facts() || p.kind() == Kind::Sometimes && !preset.reaches.contains(&p.name) {
            continue;
        }
        let bit = 1u128 << i;
        let (status, counterexample) = match p.kind() {
            Kind::Always if violated & bit != 0 => {
                (CheckStatus::Violated, counterexample(preset, i)?)
            }
            Kind::Always if complete => (CheckStatus::Holds, None),
            Kind::Sometimes if reached & bit != 0 => (CheckStatus::Reached, None),
            Kind::Sometimes if complete => (CheckStatus::Unreached, None),
            _ => (CheckStatus::Unknown, None),
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
        total_states: explored.total_states,
        max_depth: explored.max_depth,
        seconds,
        properties,
        rules_exercised: exercised.iter().map(|r| r.id()).collect(),
        exercises: preset.exercises.iter().map(|r| r.id()).collect(),
        scope: preset.scope_text(),
        reductions: how.reductions(),
        bitstate,
    })
}

/// The counterexample of an `always` property the exhaustive search found violated: the
/// shortest path to a violating state (a second, single-threaded BFS that registers only
/// this property and stops at its first violation), proved on the world (after the
/// preset's setup). Should that search exceed its state limit, a path found depth-first
/// is proved and shrunk instead (then `minimal` is false); `None` if that search too
/// exceeds its limit.
fn counterexample(preset: &Preset, index: usize) -> Result<Option<Counterexample>, CheckError> {
    let property = &PROPERTIES[index];
    let (path, shrink) = match violation_path(preset, index, SHORTEST_SEARCH_STATES, true) {
        Some(path) => (path, Shrink::No),
        None => match violation_path(preset, index, ANY_SEARCH_STATES, false) {
            Some(path) => (path, Shrink::Yes),
            None => return Ok(None),
        },
    };
    let mut tape: Vec<Choice> = preset.setup.clone();
    tape.extend_from_slice(&path);
    let mut check = OneCheck {
        property,
        config: &preset.config,
    };
    let proof =
        prove(&preset.config, &tape, &mut check, shrink).map_err(|error| CheckError::Unproved {
            preset: preset.name.to_string(),
            property: property.name,
            error,
        })?;
    Ok(Some(Counterexample {
        detail: proof.detail.clone(),
        tape: proof.labels(),
        bfs_length: path.len(),
        minimal: shrink == Shrink::No,
        proof,
    }))
}

/// States the shortest-counterexample search may visit before giving up.
const SHORTEST_SEARCH_STATES: usize = 5_000_000;

/// States the depth-first fallback may visit before giving up (it keeps only a path).
const ANY_SEARCH_STATES: usize = 50_000_000;

/// A path to a state violating the `always` property `index`, `None` if none is found
/// within `max_states`: with `shortest`, a single-threaded breadth-first search
/// (stateright's BFS with one thread visits states in depth order) that stops at the
/// first violation; otherwise depth-first, the fallback when that one gives up.
pub fn violation_path(
    preset: &Preset,
    index: usize,
    max_states: usize,
    shortest: bool,
) -> Option<Vec<Choice>> {
    let model = PresetModel::with_registration(preset.clone(), Registration::Only(index)).ok()?;
    let builder = model
        .checker()
        .target_state_count(max_states)
        .finish_when(stateright::HasDiscoveries::AnyFailures);
    let name = PROPERTIES[index].name;
    let found = match shortest {
        true => builder.threads(1).spawn_bfs().join().discovery(name),
        false => builder.spawn_dfs().join().discovery(name),
    };
    found.map(|path| path.into_actions())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every property has a condition slot (the Explorer's registration) and a bit in
    /// the verdict bitsets; a 65th property would otherwise be credited to the 1st.
    #[test]
    fn the_registry_fits_the_conditions_and_the_bitsets() {
        assert!(PROPERTIES.len() <= CONDITIONS.len());
        assert!(PROPERTIES.len() <= CONDITIONS.len() && CONDITIONS.len() <= u128::BITS as usize);
    }
}
