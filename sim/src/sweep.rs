//! The seeded sweep's fan-out, one for every sweep (`simulate`, `verify`'s chaos sweep,
//! `bench`'s simulator, the bug zoo's jobs): worker threads take the seeds in order, each
//! folds the runs it made into an accumulator of its own, and the accumulators are merged
//! at the end.
//!
//! A worker checks `stop` before it takes a seed, so the seeds run are always a prefix of
//! those asked, whatever the thread count. What a sweep reports does not depend on the
//! threads as long as its [`Fold::merge`] does not depend on the order (sums, and the
//! witness of the lowest seed).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What a sweep folds its runs into, per worker; the workers' folds merged make the sweep's.
pub trait Fold: Default + Send {
    /// Adds another worker's runs.
    fn merge(&mut self, other: Self);
}

/// How a sweep ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swept {
    /// Seeds run (a prefix of those asked).
    pub ran: u64,
    /// Whether `stop` ended it before every seed ran.
    pub stopped: bool,
}

/// Runs `run(seed, fold)` for the seeds `seed_at(0)`, `seed_at(1)`, … (until it answers
/// `None`) on `threads` workers, each checking `stop` before taking the next seed.
pub fn fan_out<A, S, R>(
    threads: usize,
    seed_at: S,
    stop: &(dyn Fn() -> bool + Sync),
    run: R,
) -> (A, Swept)
where
    A: Fold,
    S: Fn(u64) -> Option<u64> + Sync,
    R: Fn(u64, &mut A) + Sync,
{
    let next = AtomicU64::new(0);
    let ran = AtomicU64::new(0);
    let stopped = AtomicBool::new(false);
    let mut all = A::default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                let (next, ran, stopped, seed_at, run) = (&next, &ran, &stopped, &seed_at, &run);
                scope.spawn(move || {
                    let mut mine = A::default();
                    loop {
                        if stop() {
                            stopped.store(true, Ordering::SeqCst);
                            break;
                        }
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(seed) = seed_at(i) else { break };
                        run(seed, &mut mine);
                        ran.fetch_add(1, Ordering::SeqCst);
                    }
                    mine
                })
            })
            .collect();
        for worker in workers {
            all.merge(worker.join().expect("a sweep worker panicked"));
        }
    });
    let ran = ran.load(Ordering::SeqCst);
    let stopped = stopped.load(Ordering::SeqCst);
    (all, Swept { ran, stopped })
}

/// Never stops a sweep early.
pub fn never() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Sum {
        seeds: u64,
        total: u64,
        lowest_odd: Option<u64>,
    }

    impl Fold for Sum {
        fn merge(&mut self, other: Sum) {
            self.seeds += other.seeds;
            self.total += other.total;
            self.lowest_odd = match (self.lowest_odd, other.lowest_odd) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }

    fn add(seed: u64, sum: &mut Sum) {
        sum.seeds += 1;
        sum.total += seed;
        if seed % 2 == 1 && sum.lowest_odd.is_none_or(|s| seed < s) {
            sum.lowest_odd = Some(seed);
        }
    }

    #[test]
    fn every_seed_runs_once_whatever_the_threads() {
        for threads in [1, 2, 5] {
            let (sum, swept) = fan_out(threads, |i| (i < 100).then_some(i + 10), &never, add);
            assert_eq!(
                swept,
                Swept {
                    ran: 100,
                    stopped: false
                }
            );
            assert_eq!(sum.seeds, 100);
            assert_eq!(sum.total, (10..110).sum::<u64>());
            assert_eq!(sum.lowest_odd, Some(11));
        }
    }

    #[test]
    fn a_stop_leaves_a_prefix_run() {
        let (sum, swept): (Sum, _) = fan_out(2, |i| (i < 100).then_some(i), &|| true, add);
        assert_eq!(
            swept,
            Swept {
                ran: 0,
                stopped: true
            }
        );
        assert_eq!(sum.seeds, 0);
    }
}
