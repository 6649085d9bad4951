//! The depth-first search: memory is the visited set and one path (each state on it
//! with the actions still to try), not a level of whole states. Every state taken as
//! new is judged and expanded exactly once, so a search that ran to the end reports
//! the same unique and total counts as the breadth-first one; its `max_depth` is the
//! longest path it followed, not a shortest distance.
//!
//! With more than one thread each runs its own stack over the shared visited set; a
//! thread that runs dry asks for work, and a busy one hands it the next new state it
//! meets instead of following it itself.

use super::visited::Visited;
use super::{Bounds, Explored, Flow, lock};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// States handed between threads, with their depth.
struct Pool<S> {
    queue: Mutex<(Vec<(S, usize)>, usize)>,
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
{
    let started = Instant::now();
    let threads = threads.max(1);
    let mut total = 0usize;
    let mut roots = Vec::new();
    for state in model.init_states() {
        if !model.within_boundary(&state) {
            continue;
        }
        total += 1;
        if visited.insert(fp(&state)) {
            roots.push((state, 1));
        }
    }
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
    let out_of_bounds = || {
        bounds
            .total_states
            .is_some_and(|n| total.load(Relaxed) >= n)
            || bounds.timeout.is_some_and(|t| started.elapsed() >= t)
            || bounds.interrupted.is_some_and(|f| f())
    };
    let worker = || {
        loop {
            // Take a state, or wait until one is handed on or nobody works any more.
            let (root, depth) = {
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
                    root,
                    depth,
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
    pool: &'a Pool<M::State>,
    total: &'a AtomicUsize,
    stop: &'a AtomicBool,
    cut: &'a AtomicBool,
    deepest: &'a AtomicUsize,
    out_of_bounds: &'a (dyn Fn() -> bool + Sync),
    threads: usize,
}

/// How often (in generated states) a thread looks at the state and time bounds.
const CHECK_EVERY: usize = 1024;

/// Judges `root` (new, at `depth`) and explores what it leads to.
fn one_root<M>(model: &M, root: M::State, depth: usize, c: &Ctx<'_, M>)
where
    M: stateright::Model,
{
    // (state, its actions, the next one to try, its depth)
    let mut stack: Vec<(M::State, Vec<M::Action>, usize)> = Vec::new();
    let mut generated = 0usize;
    let enter = |state: M::State, depth: usize, stack: &mut Vec<_>| -> bool {
        c.deepest.fetch_max(depth, Relaxed);
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
        stack.push((state, actions, depth));
        true
    };
    if !enter(root, depth, &mut stack) {
        return;
    }
    while let Some((state, actions, depth)) = stack.last_mut() {
        let Some(action) = actions.pop() else {
            stack.pop();
            continue;
        };
        let depth = *depth;
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
                return;
            }
            if (c.out_of_bounds)() {
                c.cut.store(true, Relaxed);
                return;
            }
        }
        if !c.visited.insert((c.fp)(&next)) {
            continue;
        }
        // Hand the new state to a thread waiting for work rather than follow it here.
        if c.threads > 1 && c.pool.hungry.load(Relaxed) > 0 && stack.len() > 1 {
            lock(&c.pool.queue).0.push((next, depth + 1));
            c.pool.wake.notify_one();
            continue;
        }
        if !enter(next, depth + 1, &mut stack) {
            break;
        }
    }
    c.total.fetch_add(generated, Relaxed);
}
