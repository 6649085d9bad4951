//! The depth-first search: memory is the visited set and one path (each state on it
//! with the actions still to try), not a level of whole states. Every state taken as
//! new is judged and expanded exactly once, so a search that ran to the end reports
//! the same unique and total counts as the breadth-first one; its `max_depth` is the
//! longest path it followed, not a shortest distance.
//!
//! With more than one thread each runs its own stack over the shared visited set; a
//! thread that runs dry asks for work, and a busy one hands it the next new state it
//! meets instead of following it itself: as the path of actions that reaches it, from
//! which the taker rebuilds it, starting from a fresh initial state (`init_states`
//! again). The states the taker then makes share no reference-counted part of the world
//! with the giver's (only what both copy from the model's configuration). Handing on the
//! state itself had both threads' clones and drops count the same reference counts up
//! and down (those of every part unchanged since the initial state), which cost the two
//! threads a quarter more CPU time than one for the same states (docs/performance.md, "Why the
//! depth-first search scales"). A replay is one step per level of the path, a few
//! for every thousand states searched. It must give the state the giver fingerprinted:
//! a model whose step is not a function of the state and the action ends the search
//! with a panic.

use super::visited::Visited;
use super::{Bounds, Explored, Flow, lock};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// A state handed on to another thread: the path that reaches it.
struct Handed<A> {
    /// Which of the initial states the path starts from.
    root: usize,
    path: Vec<A>,
    /// The state's fingerprint, which the rebuilt state must have.
    fingerprint: u64,
}

/// States handed between threads.
struct Pool<A> {
    queue: Mutex<(Vec<Handed<A>>, usize)>,
    wake: Condvar,
    /// Threads waiting for work.
    hungry: AtomicUsize,
}

/// Explores `model` depth-first with `threads` threads over `visited`, fingerprinting
/// states with `fp`. `judge` sees every state taken as new (not those at the depth
/// bound, which are counted and left unexpanded: the search is then cut).
pub fn dfs<M>(
    model: &M,
    threads: usize,
    bounds: Bounds,
    judge: &(dyn Fn(&M::State) -> Flow + Sync),
    fp: &(dyn Fn(&M::State) -> u64 + Sync),
    visited: &dyn Visited,
) -> Explored
where
    M: stateright::Model + Sync,
    M::State: Send + Sync,
    M::Action: Clone + Send,
{
    let started = Instant::now();
    let threads = threads.max(1);
    let mut total = 0usize;
    let mut roots = Vec::new();
    for (root, state) in model.init_states().iter().enumerate() {
        if !model.within_boundary(state) {
            continue;
        }
        total += 1;
        let fingerprint = fp(state);
        if visited.insert(fingerprint) {
            roots.push(Handed {
                root,
                path: Vec::new(),
                fingerprint,
            });
        }
    }
    // The first in the list is taken first.
    roots.reverse();
    let pool = Pool {
        // (states to take, threads working)
        queue: Mutex::new((roots, 0)),
        wake: Condvar::new(),
        hungry: AtomicUsize::new(0),
    };
    let total = AtomicUsize::new(total);
    let stop = AtomicBool::new(false);
    let cut = AtomicBool::new(false);
    let deepest = AtomicUsize::new(0);
    let panicked: Mutex<Option<Box<dyn std::any::Any + Send>>> = Mutex::default();
    let out_of_bounds = || bounds.reached(total.load(Relaxed), started);
    let worker = || {
        loop {
            // Take a state, or wait until one is handed on or nobody works any more.
            let handed = {
                let mut q = lock(&pool.queue);
                loop {
                    if stop.load(Relaxed) || cut.load(Relaxed) {
                        pool.wake.notify_all();
                        return;
                    }
                    if let Some(item) = q.0.pop() {
                        q.1 += 1;
                        break item;
                    }
                    if q.1 == 0 {
                        pool.wake.notify_all();
                        return;
                    }
                    pool.hungry.fetch_add(1, Relaxed);
                    q = pool.wake.wait(q).unwrap_or_else(|e| e.into_inner());
                    pool.hungry.fetch_sub(1, Relaxed);
                }
            };
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                one_root(
                    model,
                    handed,
                    &Ctx {
                        bounds,
                        judge,
                        fp,
                        visited,
                        pool: &pool,
                        total: &total,
                        stop: &stop,
                        cut: &cut,
                        deepest: &deepest,
                        out_of_bounds: &out_of_bounds,
                        threads,
                    },
                )
            }));
            if let Err(payload) = run {
                stop.store(true, Relaxed);
                lock(&panicked).get_or_insert(payload);
            }
            let mut q = lock(&pool.queue);
            q.1 -= 1;
            pool.wake.notify_all();
        }
    };
    if threads == 1 {
        worker();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(worker);
            }
        });
    }
    if let Some(payload) = panicked.into_inner().unwrap_or_else(|e| e.into_inner()) {
        std::panic::resume_unwind(payload);
    }
    Explored {
        unique_states: visited.len(),
        total_states: total.load(Relaxed),
        max_depth: deepest.load(Relaxed),
        stopped: stop.load(Relaxed),
        cut: cut.load(Relaxed),
    }
}

struct Ctx<'a, M: stateright::Model> {
    bounds: Bounds,
    judge: &'a (dyn Fn(&M::State) -> Flow + Sync),
    fp: &'a (dyn Fn(&M::State) -> u64 + Sync),
    visited: &'a dyn Visited,
    pool: &'a Pool<M::Action>,
    total: &'a AtomicUsize,
    stop: &'a AtomicBool,
    cut: &'a AtomicBool,
    deepest: &'a AtomicUsize,
    out_of_bounds: &'a (dyn Fn() -> bool + Sync),
    threads: usize,
}

/// How often (in generated states) a thread looks at the state and time bounds.
const CHECK_EVERY: usize = 1024;

/// The state `handed` names, rebuilt from a fresh initial state.
fn rebuild<M: stateright::Model>(
    model: &M,
    handed: &Handed<M::Action>,
    fp: &(dyn Fn(&M::State) -> u64 + Sync),
) -> M::State
where
    M::Action: Clone,
{
    let mut state = model.init_states().swap_remove(handed.root);
    for (i, action) in handed.path.iter().enumerate() {
        state = model.next_state(&state, action.clone()).unwrap_or_else(|| {
            panic!(
                "replaying a handed-on path: step {} of {} is no longer enabled",
                i + 1,
                handed.path.len()
            )
        });
    }
    assert_eq!(
        fp(&state),
        handed.fingerprint,
        "replaying a handed-on path of {} steps gave another state: the model's steps \
         are not functions of the state and the action",
        handed.path.len()
    );
    state
}

/// Judges the state `handed` names (new) and explores what it leads to.
fn one_root<M>(model: &M, handed: Handed<M::Action>, c: &Ctx<'_, M>)
where
    M: stateright::Model,
    M::Action: Clone,
{
    let root = rebuild(model, &handed, c.fp);
    // The actions from the initial state to the top of the stack (kept only when
    // another thread may ask for work): `path[..base + i]` reaches `stack[i]`.
    let Handed {
        root: root_index,
        mut path,
        ..
    } = handed;
    let base = path.len();
    let keep_path = c.threads > 1;
    // (state, its actions still to try), at depth `base + 1 + index`
    let mut stack: Vec<(M::State, Vec<M::Action>)> = Vec::new();
    let mut generated = 0usize;
    let mut deepest = 0usize;
    let enter = |state: M::State, depth: usize, stack: &mut Vec<_>, deepest: &mut usize| -> bool {
        *deepest = (*deepest).max(depth);
        if c.bounds.max_depth.is_some_and(|d| depth >= d) {
            c.cut.store(true, Relaxed);
            return true;
        }
        if (c.judge)(&state) == Flow::Stop {
            c.stop.store(true, Relaxed);
            return false;
        }
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        actions.reverse();
        stack.push((state, actions));
        true
    };
    if enter(root, base + 1, &mut stack, &mut deepest) {
        while let Some(top) = stack.len().checked_sub(1) {
            let (state, actions) = &mut stack[top];
            let Some(action) = actions.pop() else {
                stack.pop();
                continue;
            };
            let copy = keep_path.then(|| action.clone());
            let Some(next) = model.next_state(state, action) else {
                continue;
            };
            if !model.within_boundary(&next) {
                continue;
            }
            generated += 1;
            if generated == CHECK_EVERY {
                c.total.fetch_add(generated, Relaxed);
                generated = 0;
                if c.stop.load(Relaxed) {
                    break;
                }
                if (c.out_of_bounds)() {
                    c.cut.store(true, Relaxed);
                    break;
                }
            }
            let fingerprint = (c.fp)(&next);
            if !c.visited.insert(fingerprint) {
                continue;
            }
            if let Some(action) = copy {
                path.truncate(base + top);
                path.push(action);
            }
            // Hand the new state to a thread waiting for work rather than follow it here.
            if keep_path && c.pool.hungry.load(Relaxed) > 0 && stack.len() > 1 {
                drop(next);
                lock(&c.pool.queue).0.push(Handed {
                    root: root_index,
                    path: path.clone(),
                    fingerprint,
                });
                c.pool.wake.notify_one();
                continue;
            }
            if !enter(next, base + top + 2, &mut stack, &mut deepest) {
                break;
            }
        }
    }
    c.total.fetch_add(generated, Relaxed);
    c.deepest.fetch_max(deepest, Relaxed);
}
