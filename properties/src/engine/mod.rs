//! The exhaustive search behind `check`: a level-synchronous, multi-threaded
//! breadth-first search over any [`stateright::Model`], in the manner of TLC.
//!
//! stateright's own BFS keeps, for every generated state, a copy of the path of action
//! indices that led to it (an allocation and a copy per generated state, duplicates
//! included), an `eventually` bitset, and a `DashMap` entry with the parent's
//! fingerprint; a third of its per-state overhead is bookkeeping `check` never reads,
//! since counterexamples come from a second, single-threaded search
//! ([`crate::checker::violation_path`]). This engine keeps only what `check` needs:
//! a set of 64-bit fingerprints and the current and next levels.
//!
//! It reports exactly what stateright's BFS reports for the same model (the test
//! `properties/tests/engine.rs` compares both on every preset; the two largest against
//! stateright's counts recorded there):
//! - fingerprints are stateright's own (aHash with stateright's fixed keys), so two
//!   states that collide collide in both;
//! - `unique_states` counts distinct fingerprints of states within the boundary,
//!   initial states included; `total_states` counts every generated state within the
//!   boundary, repeats included, plus the initial ones;
//! - `max_depth` is the depth (initial states: 1) of the deepest state taken from the
//!   queue; with a depth target, states at that depth are taken but neither judged nor
//!   expanded.
//!
//! Levels make the result independent of thread scheduling: every state of depth `d` is
//! judged and expanded before any of depth `d + 1`, so a depth bound is exact with any
//! number of threads and the counts of a search that ran to the end (not cut by a state
//! or time bound, not stopped by its judge) never depend on which thread reached a state
//! first.
//!
//! A panic in one thread (a bug in the model) ends the search and is raised again by
//! `bfs_over` after every thread left: the others never wait for it at the barrier.

mod dfs;
pub mod swarm;
pub mod visited;

pub use dfs::dfs;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// What to do after judging a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// End the search (a violation was found and the caller wants no more).
    Stop,
}

/// When to give up. A search that gives up is incomplete.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bounds {
    /// Stop once this many states (repeats included) were generated.
    pub total_states: Option<usize>,
    pub timeout: Option<Duration>,
    /// Take states of this depth without judging or expanding them.
    pub max_depth: Option<usize>,
    /// Asked now and then: `true` stops the search as if a bound cut it (Ctrl-C).
    pub interrupted: Option<fn() -> bool>,
}

impl Bounds {
    /// Whether a search that generated `total` states since `started` must stop now.
    pub fn reached(&self, total: usize, started: Instant) -> bool {
        self.total_states.is_some_and(|n| total >= n)
            || self.timeout.is_some_and(|t| started.elapsed() >= t)
            || self.interrupted.is_some_and(|f| f())
    }
}

/// What a search covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explored {
    pub unique_states: usize,
    pub total_states: usize,
    pub max_depth: usize,
    /// A judge asked to stop.
    pub stopped: bool,
    /// The state or time bound cut the search short.
    pub cut: bool,
}

/// stateright's fingerprint of a state: aHash with its fixed keys (`stateright::stable`).
pub fn fingerprint<T: Hash>(value: &T) -> u64 {
    ahash::RandomState::with_seeds(123_456_789_987_654_321, 98_765_432_123_456_789, 0, 0)
        .hash_one(value)
}

/// States in one unit of work: a thread takes a chunk of the current level (and owns
/// it: the states it expands are freed by the thread that expanded them) and hands on
/// its successors in chunks of the same size.
const CHUNK: usize = 64;

/// Explores `model` breadth-first, level by level, with `threads` threads, its states
/// fingerprinted by `fp` (stateright's [`fingerprint`], or of a canonical form) into
/// `seen`. `judge` sees every state taken from the queue (not those past the depth
/// bound) and may stop the search.
pub fn bfs_over<M>(
    model: &M,
    threads: usize,
    bounds: Bounds,
    judge: &(dyn Fn(&M::State) -> Flow + Sync),
    fp: &(dyn Fn(&M::State) -> u64 + Sync),
    seen: &dyn visited::Visited,
) -> Explored
where
    M: stateright::Model + Sync,
    M::State: Send + Sync,
{
    let started = Instant::now();
    let mut initial: Vec<M::State> = Vec::new();
    let mut total = 0usize;
    for state in model.init_states() {
        if !model.within_boundary(&state) {
            continue;
        }
        total += 1;
        if seen.insert(fp(&state)) {
            initial.push(state);
        }
    }
    let threads = threads.max(1);
    // The current level and the next, each in one list of chunks per thread: a thread
    // takes the chunks it generated itself first (their memory is its own and still in
    // its cache) and steals from the others only when its own list is empty.
    let current: Vec<Mutex<Vec<Vec<M::State>>>> = (0..threads).map(|_| Mutex::default()).collect();
    let next: Vec<Mutex<Vec<Vec<M::State>>>> = (0..threads).map(|_| Mutex::default()).collect();
    if !initial.is_empty() {
        lock(&current[0]).push(initial);
    }
    let total = AtomicUsize::new(total);
    let stop = AtomicBool::new(false);
    let cut = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let max_depth = AtomicUsize::new(0);
    let panicked: Mutex<Option<Box<dyn std::any::Any + Send>>> = Mutex::default();
    let out_of_bounds = || bounds.reached(total.load(Relaxed), started);
    let barrier = Barrier::new(threads);
    // The threads live for the whole search (each with its allocator's thread-local
    // heap), meeting at the barrier between levels.
    let worker = |me: usize| {
        let mut out = Vec::with_capacity(CHUNK);
        let mut actions = Vec::new();
        loop {
            if barrier.wait().is_leader() {
                let any = current.iter().any(|q| !lock(q).is_empty());
                if !any || stop.load(Relaxed) || cut.load(Relaxed) {
                    done.store(true, Relaxed);
                } else {
                    let depth = max_depth.fetch_add(1, Relaxed) + 1;
                    if bounds.max_depth.is_some_and(|d| depth >= d) {
                        done.store(true, Relaxed);
                    }
                }
            }
            barrier.wait();
            if done.load(Relaxed) {
                break;
            }
            let level = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                'level: loop {
                    if stop.load(Relaxed) {
                        break;
                    }
                    if out_of_bounds() {
                        cut.store(true, Relaxed);
                        break;
                    }
                    let own = lock(&current[me]).pop();
                    let Some(chunk) = own.or_else(|| {
                        (1..threads).find_map(|k| lock(&current[(me + k) % threads]).pop())
                    }) else {
                        break;
                    };
                    let mut generated = 0;
                    for state in chunk {
                        if judge(&state) == Flow::Stop {
                            stop.store(true, Relaxed);
                            total.fetch_add(generated, Relaxed);
                            break 'level;
                        }
                        model.actions(&state, &mut actions);
                        for action in actions.drain(..) {
                            let Some(successor) = model.next_state(&state, action) else {
                                continue;
                            };
                            if !model.within_boundary(&successor) {
                                continue;
                            }
                            generated += 1;
                            if seen.insert(fp(&successor)) {
                                out.push(successor);
                                if out.len() == CHUNK {
                                    let full =
                                        std::mem::replace(&mut out, Vec::with_capacity(CHUNK));
                                    lock(&next[me]).push(full);
                                }
                            }
                        }
                    }
                    total.fetch_add(generated, Relaxed);
                }
            }));
            if let Err(payload) = level {
                stop.store(true, Relaxed);
                lock(&panicked).get_or_insert(payload);
            }
            if !out.is_empty() {
                lock(&next[me]).push(std::mem::replace(&mut out, Vec::with_capacity(CHUNK)));
            }
            if barrier.wait().is_leader() {
                for (now, then) in current.iter().zip(&next) {
                    std::mem::swap(&mut *lock(now), &mut *lock(then));
                }
            }
        }
    };
    if threads == 1 {
        worker(0);
    } else {
        std::thread::scope(|scope| {
            for me in 0..threads {
                let worker = &worker;
                scope.spawn(move || worker(me));
            }
        });
    }
    if let Some(payload) = panicked.into_inner().unwrap_or_else(|e| e.into_inner()) {
        std::panic::resume_unwind(payload);
    }
    let max_depth = max_depth.load(Relaxed);
    Explored {
        unique_states: seen.len(),
        total_states: total.load(Relaxed),
        max_depth,
        stopped: stop.load(Relaxed),
        cut: cut.load(Relaxed),
    }
}

/// A lock whose holder cannot leave the data half-changed: poisoning is ignored.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hasher};

    /// [`bfs_over`] over stateright's fingerprints, every one kept.
    fn bfs<M>(
        model: &M,
        threads: usize,
        bounds: Bounds,
        judge: &(dyn Fn(&M::State) -> Flow + Sync),
    ) -> Explored
    where
        M: stateright::Model + Sync,
        M::State: Hash + Send + Sync,
    {
        bfs_over(
            model,
            threads,
            bounds,
            judge,
            &|s| fingerprint(s),
            &visited::Exact::default(),
        )
    }

    /// `fingerprint` is the digest stateright 0.31 computes in its private `fingerprint`
    /// (`stable::hasher()`: aHash with the seeds copied here, fed the value, finished);
    /// this pins the one-call form to those three steps. Re-check the seeds on a
    /// stateright upgrade.
    #[test]
    #[allow(clippy::manual_hash_one)] // deliberately stateright's own three steps
    fn fingerprints_are_staterights() {
        let value = ("ORDER-1", 7u32, vec![1u8, 2, 3]);
        let mut hasher =
            ahash::RandomState::with_seeds(123_456_789_987_654_321, 98_765_432_123_456_789, 0, 0)
                .build_hasher();
        value.hash(&mut hasher);
        assert_eq!(fingerprint(&value), hasher.finish());
    }

    /// Counts up by 1 or 2 from 0 to `limit`; panics past `panic_at`.
    struct Counter {
        limit: u32,
        panic_at: u32,
        boundary: u32,
    }

    impl stateright::Model for Counter {
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
            assert!(*state < self.panic_at, "a planted model bug at {state}");
            Some(state + step)
        }
        fn within_boundary(&self, state: &u32) -> bool {
            *state <= self.boundary
        }
    }

    #[test]
    fn a_small_model_is_covered_level_by_level() {
        let model = Counter {
            limit: 10,
            panic_at: u32::MAX,
            boundary: u32::MAX,
        };
        for threads in [1, 2] {
            let e = bfs(&model, threads, Bounds::default(), &|_| Flow::Continue);
            // 0..=11 are reached; 0 is initial; every state below 10 generates two.
            assert_eq!((e.unique_states, e.total_states), (12, 21));
            assert_eq!(e.max_depth, 7, "11 is 6 steps from 0 at best (depth 7)");
            assert!(!e.cut && !e.stopped);
        }
    }

    /// A bug in the model fails the search in every thread count; two threads never wait
    /// at the barrier for one that panicked.
    #[test]
    fn a_panic_in_the_model_is_raised_not_hung() {
        let model = Counter {
            limit: 1_000_000,
            panic_at: 5_000,
            boundary: u32::MAX,
        };
        for threads in [1, 2] {
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                bfs(&model, threads, Bounds::default(), &|_| Flow::Continue)
            }));
            assert!(run.is_err(), "{threads} threads");
        }
    }

    /// Successors outside the boundary are neither counted nor expanded; with no initial
    /// state within it, nothing is covered and no level is counted (as in stateright).
    #[test]
    fn the_boundary_bounds_the_search() {
        let only_initial = Counter {
            limit: 10,
            panic_at: u32::MAX,
            boundary: 0,
        };
        let e = bfs(&only_initial, 2, Bounds::default(), &|s| {
            assert_eq!(*s, 0);
            Flow::Continue
        });
        assert_eq!((e.unique_states, e.total_states, e.max_depth), (1, 1, 1));
        struct Outside;
        impl stateright::Model for Outside {
            type State = u8;
            type Action = u8;
            fn init_states(&self) -> Vec<u8> {
                vec![1]
            }
            fn actions(&self, _: &u8, _: &mut Vec<u8>) {}
            fn next_state(&self, _: &u8, _: u8) -> Option<u8> {
                None
            }
            fn within_boundary(&self, _: &u8) -> bool {
                false
            }
        }
        let e = bfs(&Outside, 2, Bounds::default(), &|_| Flow::Continue);
        assert_eq!((e.unique_states, e.total_states, e.max_depth), (0, 0, 0));
    }

    /// The depth-first search covers what the breadth-first one covers, with any number
    /// of threads; a bitstate array too small for the states takes some for seen ones.
    #[test]
    fn depth_first_covers_the_same_states_and_a_full_bitstate_misses_some() {
        let model = Counter {
            limit: 3_000,
            panic_at: u32::MAX,
            boundary: u32::MAX,
        };
        let fp = |s: &u32| fingerprint(s);
        let b = bfs(&model, 1, Bounds::default(), &|_| Flow::Continue);
        for threads in [1, 2, 3] {
            let d = dfs(
                &model,
                threads,
                Bounds::default(),
                &|_| Flow::Continue,
                &fp,
                &visited::Exact::default(),
            );
            assert_eq!(
                (d.unique_states, d.total_states),
                (b.unique_states, b.total_states)
            );
            assert!(!d.cut && !d.stopped);
        }
        let judged = AtomicUsize::new(0);
        let tight = visited::Bitstate::new(16, 3);
        let many = Counter {
            limit: 200_000,
            panic_at: u32::MAX,
            boundary: u32::MAX,
        };
        let e = dfs(
            &many,
            2,
            Bounds::default(),
            &|_| {
                judged.fetch_add(1, Relaxed);
                Flow::Continue
            },
            &fp,
            &tight,
        );
        assert!(e.unique_states < 200_002, "{e:?}");
        assert_eq!(judged.load(Relaxed), e.unique_states);
        assert!(tight.expected_missed() > 1.0);
    }

    /// Counts up like [`Counter`], but the state reached depends on how often the model
    /// was asked for its initial states: a step that is not a function of the state
    /// and the action.
    struct Drifting {
        inits: AtomicUsize,
    }

    /// Slows each step by a millisecond until a third `init_states` call, the first
    /// rebuild of a handed-on state: the first thread keeps going, slowly, until the
    /// second has asked for work and been handed a state, so that the test does not
    /// depend on which thread the machine runs first.
    fn until_handed_on(inits: &AtomicUsize) {
        if inits.load(Relaxed) < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    impl stateright::Model for Drifting {
        type State = u32;
        type Action = u32;
        fn init_states(&self) -> Vec<u32> {
            self.inits.fetch_add(1, Relaxed);
            vec![0]
        }
        fn actions(&self, state: &u32, actions: &mut Vec<u32>) {
            if *state < 100_000 {
                actions.extend([1, 2]);
            }
        }
        fn next_state(&self, state: &u32, step: u32) -> Option<u32> {
            // One more once a handed-on state was rebuilt (the roots and the first
            // root's rebuild are the first two calls).
            let drift = u32::from(self.inits.load(Relaxed) > 2);
            if *state > 10 {
                until_handed_on(&self.inits);
            }
            Some(state + step + drift)
        }
    }

    /// A state handed to another thread is rebuilt by replaying its path; a model that
    /// replays to another state is reported, not searched on as if it were the same.
    #[test]
    fn depth_first_replays_handed_on_states_and_a_drifting_model_is_caught() {
        let fp = |s: &u32| fingerprint(s);
        let rebuilt = AtomicUsize::new(0);
        struct Inits<'a>(Counter, &'a AtomicUsize);
        impl stateright::Model for Inits<'_> {
            type State = u32;
            type Action = u32;
            fn init_states(&self) -> Vec<u32> {
                self.1.fetch_add(1, Relaxed);
                self.0.init_states()
            }
            fn actions(&self, state: &u32, actions: &mut Vec<u32>) {
                self.0.actions(state, actions)
            }
            fn next_state(&self, state: &u32, step: u32) -> Option<u32> {
                if *state > 10 {
                    until_handed_on(self.1);
                }
                self.0.next_state(state, step)
            }
        }
        let model = Inits(
            Counter {
                limit: 200_000,
                panic_at: u32::MAX,
                boundary: u32::MAX,
            },
            &rebuilt,
        );
        let e = dfs(
            &model,
            2,
            Bounds::default(),
            &|_| Flow::Continue,
            &fp,
            &visited::Exact::default(),
        );
        assert_eq!((e.unique_states, e.total_states), (200_002, 400_001));
        // Once for the roots, once to rebuild the root, once for each state handed on
        // (the first thread waits for one, `until_handed_on`).
        assert!(rebuilt.load(Relaxed) >= 3, "{}", rebuilt.load(Relaxed));
        let drifting = Drifting {
            inits: AtomicUsize::new(0),
        };
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            dfs(
                &drifting,
                2,
                Bounds::default(),
                &|_| Flow::Continue,
                &fp,
                &visited::Exact::default(),
            )
        }));
        let message = run.expect_err("a drifting model must fail the search");
        let message = message
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert!(message.contains("gave another state"), "{message}");
    }

    #[test]
    fn depth_first_stops_when_judged_so_and_panics_are_raised() {
        let model = Counter {
            limit: 1_000_000,
            panic_at: 5_000,
            boundary: u32::MAX,
        };
        let fp = |s: &u32| fingerprint(s);
        for threads in [1, 2] {
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                dfs(
                    &model,
                    threads,
                    Bounds::default(),
                    &|_| Flow::Continue,
                    &fp,
                    &visited::Exact::default(),
                )
            }));
            assert!(run.is_err(), "{threads} threads");
            let e = dfs(
                &model,
                threads,
                Bounds::default(),
                &|s| if *s == 40 { Flow::Stop } else { Flow::Continue },
                &fp,
                &visited::Exact::default(),
            );
            assert!(e.stopped && e.unique_states < 5_000, "{e:?}");
        }
    }
}
