//! Swarm verification (Holzmann, "Swarm Verification", ASE 2008): instead of one
//! exhaustive search, many small, independent, differently seeded bounded depth-first
//! searches, one per shard (`check --swarm --shard I/N`), so that a CI matrix or any
//! job scheduler covers a scope one machine cannot.
//!
//! Shard `I` walks depth first from the initial states, trying each state's successors
//! in an order drawn from a ChaCha generator seeded from `I` alone, within a depth bound
//! and a budget of generated states. It runs on one thread, so its report (states,
//! violations, their paths) is a function of the preset, `I` and the budget: the same
//! shard twice prints the same bytes, and so does the union of shards. Shard `I` does
//! not depend on `N` (so shards `0..N` are a prefix of shards `0..2N`); `N` only says
//! how many there are.
//!
//! A shard is never complete: a swarm run passes nothing. It finds violations (exit 1)
//! or reports what it covered (exit 3).
//!
//! The visited set keeps, for each fingerprint, the shallowest depth it was reached at:
//! a state reached again by a shorter path is explored again (a bounded depth-first
//! search would otherwise leave states within the bound unexplored), and a violation
//! reached by a shorter path replaces the one recorded.

use crate::World;
use crate::checker::CheckError;
use crate::checker::{PresetModel, Registration};
use crate::presets::Preset;
use crate::property::{Kind, OneCheck};
use crate::registry::PROPERTIES;
use payhub_sim::Choice;
use payhub_sim::prove::{Shrink, prove};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use stateright::Model;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// One shard of a swarm: `index` of `count` (`I/N`, `I < N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("'{s}' is not a shard (I/N with I < N, e.g. 0/4)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The seed of shard `index` (splitmix64 of it: neighbouring shards draw unrelated
    /// orders).
    pub fn seed(self) -> u64 {
        payhub_model::splitmix::splitmix64(u64::from(self.index))
    }
}

/// The bounds of one shard's search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Budget {
    /// States of this depth (the initial states are at 1) are neither judged nor
    /// expanded.
    pub max_depth: usize,
    /// Stop after generating this many states, repeats included.
    pub max_states: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            max_depth: 64,
            max_states: 1_000_000,
        }
    }
}

/// The walk's stack: each state on the path, the actions still to try from it, its
/// depth.
type Stack<M> = Vec<(<M as Model>::State, Vec<<M as Model>::Action>, usize)>;

/// What one bounded random walk covered and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walk<A> {
    /// Distinct fingerprints reached (within the depth bound).
    pub unique_states: usize,
    /// States generated, repeats included, the initial ones too.
    pub total_states: usize,
    /// The deepest state taken.
    pub max_depth: usize,
    /// The state budget ended the walk.
    pub budget_spent: bool,
    /// For each property index (of `judge`'s bits) some state violated: the shortest
    /// path (actions from an initial state) found to a violating state, by index.
    pub violations: Vec<(usize, Vec<A>)>,
}

/// A bounded depth-first search of `model`, successors in an order drawn from `seed`.
/// `judge` returns the indices (bits) of the properties a state violates; a violating
/// state is not expanded.
pub fn walk<M>(
    model: &M,
    seed: u64,
    budget: Budget,
    fp: &dyn Fn(&M::State) -> u64,
    judge: &dyn Fn(&M::State) -> u128,
) -> Walk<M::Action>
where
    M: Model,
    M::Action: Clone,
{
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Fingerprint -> the shallowest depth reached at. Never iterated: its order does
    // not matter.
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut found: Vec<Option<Vec<M::Action>>> = (0..u128::BITS).map(|_| None).collect();
    let mut total = 0usize;
    let mut deepest = 0usize;
    let mut spent = false;
    // `path[k]` leads to `stack[k + 1]`.
    let mut stack: Stack<M> = Vec::new();
    let mut path: Vec<M::Action> = Vec::new();
    // Takes `state` at `depth` if it is new or reached shallower than before: judges it
    // and, unless it violates something or sits at the bound, pushes it to expand.
    let mut enter = |state: M::State,
                     depth: usize,
                     stack: &mut Stack<M>,
                     path: &[M::Action],
                     rng: &mut ChaCha8Rng|
     -> bool {
        match seen.entry(fp(&state)) {
            Entry::Occupied(mut e) if *e.get() > depth => {
                e.insert(depth);
            }
            Entry::Occupied(_) => return false,
            Entry::Vacant(e) => {
                e.insert(depth);
            }
        }
        deepest = deepest.max(depth);
        if depth >= budget.max_depth {
            return false;
        }
        let bad = judge(&state);
        if bad != 0 {
            for (i, slot) in found.iter_mut().enumerate() {
                if bad & (1u128 << i) != 0 && slot.as_ref().is_none_or(|p| p.len() > path.len()) {
                    *slot = Some(path.to_vec());
                }
            }
            return false;
        }
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        actions.shuffle(rng);
        stack.push((state, actions, depth));
        true
    };
    let mut roots: Vec<M::State> = model
        .init_states()
        .into_iter()
        .filter(|s| model.within_boundary(s))
        .collect();
    roots.shuffle(&mut rng);
    for root in roots {
        total += 1;
        if !enter(root, 1, &mut stack, &path, &mut rng) {
            continue;
        }
        while let Some((state, actions, depth)) = stack.last_mut() {
            let Some(action) = actions.pop() else {
                stack.pop();
                path.pop();
                continue;
            };
            let depth = *depth;
            let Some(next) = model.next_state(state, action.clone()) else {
                continue;
            };
            if !model.within_boundary(&next) {
                continue;
            }
            total += 1;
            if total >= budget.max_states {
                spent = true;
                break;
            }
            path.push(action);
            if !enter(next, depth + 1, &mut stack, &path, &mut rng) {
                path.pop();
            }
        }
        if spent {
            break;
        }
        path.clear();
    }
    Walk {
        unique_states: seen.len(),
        total_states: total,
        max_depth: deepest,
        budget_spent: spent,
        violations: found
            .into_iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|p| (i, p)))
            .collect(),
    }
}

/// A violation one shard found.
#[derive(Clone, Debug, Serialize)]
pub struct SwarmViolation {
    pub property: &'static str,
    pub rules: Vec<&'static str>,
    pub detail: String,
    /// Steps after the preset's setup of the shortest path this shard found.
    pub path_length: usize,
    /// That path, proved on the world and shrunk (1-minimal), setup included: replays
    /// as printed.
    pub tape: Vec<String>,
}

/// What one shard of a preset covered and found. Never a pass.
#[derive(Clone, Debug, Serialize)]
pub struct ShardReport {
    pub preset: &'static str,
    pub scope: String,
    pub shard: Shard,
    pub seed: u64,
    pub budget: Budget,
    pub unique_states: usize,
    pub total_states: usize,
    pub max_depth: usize,
    pub budget_spent: bool,
    pub violations: Vec<SwarmViolation>,
}

/// Runs shard `shard` of a swarm over `preset`: every `always` property judged in every
/// state taken; each violation's path proved on the world and shrunk. The reductions
/// of `reduce` apply as in `check` (`--reduce ids,requests,por`); its order and
/// bitstate do not (a shard walks depth first over every fingerprint it saw).
pub fn check_shard(
    preset: &Preset,
    shard: Shard,
    budget: Budget,
    reduce: crate::checker::Search,
) -> Result<ShardReport, CheckError> {
    let mut model = PresetModel::with_registration(
        preset.clone(),
        Registration::Combined {
            stop_at_violation: false,
        },
    )?;
    model.partial_order = reduce.partial_order;
    let always: Vec<usize> = (0..PROPERTIES.len())
        .filter(|&i| PROPERTIES[i].kind() == Kind::Always)
        .collect();
    let judge = |w: &World| {
        always
            .iter()
            .filter(|&&i| !PROPERTIES[i].holds_in(&w.facts))
            .fold(0u128, |bits, &i| bits | (1u128 << i))
    };
    let fp = &reduce.fingerprint();
    let config = &preset.config;
    let seed = shard.seed();
    let walked = walk(&model, seed, budget, fp, &judge);
    let mut violations = Vec::new();
    for (i, path) in walked.violations {
        let property = &PROPERTIES[i];
        let mut tape: Vec<Choice> = preset.setup.clone();
        tape.extend_from_slice(&path);
        let mut check = OneCheck { property, config };
        let proof = prove(config, &tape, &mut check, Shrink::Yes).map_err(|error| {
            CheckError::Unproved {
                preset: preset.name.to_string(),
                property: property.name,
                error,
            }
        })?;
        violations.push(SwarmViolation {
            property: property.name,
            rules: property.rules.iter().map(|r| r.id()).collect(),
            detail: proof.detail.clone(),
            path_length: path.len(),
            tape: proof.labels(),
        });
    }
    Ok(ShardReport {
        preset: preset.name,
        scope: preset.scope_text(),
        shard,
        seed,
        budget,
        unique_states: walked.unique_states,
        total_states: walked.total_states,
        max_depth: walked.max_depth,
        budget_spent: walked.budget_spent,
        violations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fingerprint;

    /// A counter from 0 by +1 or +2 up to `limit`; "violates" property 0 at `bad`.
    struct Counter {
        limit: u32,
    }

    impl Model for Counter {
        type State = u32;
        type Action = u32;
        fn init_states(&self) -> Vec<u32> {
            vec![0]
        }
        fn actions(&self, state: &u32, actions: &mut Vec<u32>) {
            if *state < self.limit {
                actions.extend([1, 2]);
            }
        }
        fn next_state(&self, state: &u32, step: u32) -> Option<u32> {
            Some(state + step)
        }
    }

    #[test]
    fn shards_parse_as_i_of_n() {
        assert_eq!("3/8".parse(), Ok(Shard { index: 3, count: 8 }));
        for bad in ["8/8", "1", "a/2", "0/0", "-1/4"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_ne!(
            Shard { index: 0, count: 2 }.seed(),
            Shard { index: 1, count: 2 }.seed()
        );
    }

    /// The walk covers a small model whole, finds the planted violation with a shortest
    /// path, is the same twice, and its order depends on the seed.
    #[test]
    fn a_walk_is_deterministic_and_finds_a_short_path() {
        let model = Counter { limit: 40 };
        let fp = |s: &u32| fingerprint(s);
        let judge = |s: &u32| u128::from(*s == 30);
        let budget = Budget {
            max_depth: 100,
            max_states: 10_000,
        };
        let a = walk(&model, 7, budget, &fp, &judge);
        assert_eq!(a, walk(&model, 7, budget, &fp, &judge));
        assert_eq!(a.unique_states, 42, "0..=41");
        assert!(!a.budget_spent);
        let (i, path) = &a.violations[0];
        assert_eq!(*i, 0);
        assert_eq!(path.iter().sum::<u32>(), 30);
        assert_eq!(
            path.len(),
            15,
            "revisits at a smaller depth find the shortest"
        );
        let orders: std::collections::BTreeSet<usize> = (0..8)
            .map(|seed| walk(&model, seed, budget, &fp, &judge).total_states)
            .collect();
        assert!(orders.len() > 1, "the seed changes the order: {orders:?}");
        // A budget or depth bound ends it short of the state.
        let short = Budget {
            max_depth: 10,
            max_states: 10_000,
        };
        assert!(walk(&model, 7, short, &fp, &judge).violations.is_empty());
        let few = Budget {
            max_depth: 100,
            max_states: 5,
        };
        assert!(walk(&model, 7, few, &fp, &judge).budget_spent);
    }
}
