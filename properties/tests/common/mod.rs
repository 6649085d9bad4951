//! Shared by the proptest suites: a deterministic, env-scalable proptest configuration,
//! the always-properties as a `Result`, tape rendering for failure reports, a shrinking
//! strategy for operation sequences, and ([`requests`]) the request alphabet of the
//! chaos and state-machine suites.
#![allow(dead_code)] // each suite uses its own subset

pub mod requests;

use payhub_properties::{AlwaysCheck, World};
use payhub_sim::driver::Check;
use payhub_sim::{Choice, WorldConfig};
use proptest::strategy::{NewTree, Strategy, ValueTree};
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, RngSeed, TestRng, TestRunner,
    contextualize_config,
};

/// The seed of every CI run: a run is a pure function of the code and this number
/// (`PROPTEST_RNG_SEED` overrides it for a different soak).
pub const CI_SEED: u64 = 0x5041_5948_5542; // "PAYHUB"

/// A proptest configuration for a CI suite: `ci_cases` cases from a fixed seed, failures
/// persisted in `properties/proptest-regressions/<file>` (paths are relative to the
/// crate root, where cargo runs integration tests). Every `PROPTEST_*` variable set in
/// the environment overrides these defaults, so `PROPTEST_CASES=100000` scales a run up
/// for a soak (proptest's `Config::with_cases` alone would ignore it).
pub fn ci_config(ci_cases: u32, regressions: &'static str) -> Config {
    contextualize_config(Config {
        cases: ci_cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(CI_SEED),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        // Shrinking a long run must not stall CI.
        max_shrink_iters: 20_000,
        ..Config::default()
    })
}

/// A runner for a test that asserts something about the run itself (that a planted bug
/// or an anti-pattern is found and shrunk, or what a run covers): deterministic, nothing
/// persisted (a failure found there is the point, not a regression), and deaf to
/// `PROPTEST_CASES` (a soak must not change what such a test asserts).
pub fn fixed_runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 50_000,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// Every always-property on `world`: `Err("property: detail")` for the first violated one.
pub fn always(config: &WorldConfig, world: &World) -> Result<(), String> {
    match (AlwaysCheck { config }).check(world) {
        None => Ok(()),
        Some(v) => Err(format!("{}: {}", v.property, v.detail)),
    }
}

/// A tape as numbered labels, one a line (what `payhub-verify replay` reads, one label a line).
pub fn render_tape(tape: &[Choice]) -> String {
    tape.iter()
        .enumerate()
        .map(|(i, c)| format!("  {:>3}. {c}\n", i + 1))
        .collect()
}

/// A strategy for operation sequences that shrinks like delta debugging: proptest's own
/// `Vec` shrinking deletes each element once and then shrinks elements, so a failure that
/// moves earlier while elements shrink leaves a tail of dead operations behind. This tree
/// instead restarts from the smallest failing sequence after every success: remove
/// chunks (halves, quarters, …, single operations; the tail first), then pairs of
/// operations, then simplify single operations with `simpler` (each candidate in turn).
/// Every accepted candidate is shorter or simpler, so shrinking ends, with a sequence
/// from which no operation or pair of operations can be removed and no operation
/// simplified.
pub fn op_sequence<T, S>(element: S, max_len: usize, simpler: fn(&T) -> Vec<T>) -> OpSequence<S, T>
where
    S: Strategy<Value = T>,
    T: Clone + std::fmt::Debug,
{
    OpSequence {
        element,
        max_len,
        simpler,
    }
}

pub struct OpSequence<S, T> {
    element: S,
    max_len: usize,
    simpler: fn(&T) -> Vec<T>,
}

impl<S: std::fmt::Debug, T> std::fmt::Debug for OpSequence<S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpSequence")
            .field("element", &self.element)
            .field("max_len", &self.max_len)
            .finish()
    }
}

impl<S, T> Strategy for OpSequence<S, T>
where
    S: Strategy<Value = T>,
    T: Clone + std::fmt::Debug,
{
    type Tree = OpSequenceTree<T>;
    type Value = Vec<T>;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let len = (0..=self.max_len).new_tree(runner)?.current();
        let mut ops = Vec::with_capacity(len);
        for _ in 0..len {
            ops.push(self.element.new_tree(runner)?.current());
        }
        Ok(OpSequenceTree {
            best: ops.clone(),
            current: ops,
            next: 0,
            simpler: self.simpler,
        })
    }
}

pub struct OpSequenceTree<T> {
    /// The smallest sequence known to fail.
    best: Vec<T>,
    /// What the runner tests now: `best`, or a candidate derived from it.
    current: Vec<T>,
    /// The next candidate to derive from `best`.
    next: usize,
    simpler: fn(&T) -> Vec<T>,
}

impl<T: Clone> OpSequenceTree<T> {
    /// Candidate `i` derived from `best`, or `None` when there are no more: chunk
    /// removals first (sizes n/2, n/4, …, 1, from the tail), then every pair of
    /// operations removed together (a crash and its restart, a send and its delivery),
    /// then single operations simplified.
    fn candidate(&self, mut i: usize) -> Option<Vec<T>> {
        let n = self.best.len();
        let mut chunk = n.div_ceil(2);
        while chunk >= 1 && n > 0 {
            let starts = n.div_ceil(chunk);
            if i < starts {
                let start = (starts - 1 - i) * chunk;
                let end = (start + chunk).min(n);
                let mut v = self.best[..start].to_vec();
                v.extend_from_slice(&self.best[end..]);
                return Some(v);
            }
            i -= starts;
            if chunk == 1 {
                break;
            }
            chunk = chunk.div_ceil(2);
        }
        let pairs = n * n.saturating_sub(1) / 2;
        if i < pairs {
            // Pair number i, in the order (0,1), (0,2), (1,2), (0,3), …: the later one is
            // the largest j with j(j-1)/2 ≤ i.
            let mut j = 1;
            while (j + 1) * j / 2 <= i {
                j += 1;
            }
            let first = i - j * (j - 1) / 2;
            let (first, second) = (n - 1 - j, n - 1 - first);
            let v = self
                .best
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != first && *k != second)
                .map(|(_, op)| op.clone())
                .collect();
            return Some(v);
        }
        i -= pairs;
        for (at, op) in self.best.iter().enumerate() {
            let options = (self.simpler)(op);
            if i < options.len() {
                let mut v = self.best.clone();
                v[at] = options[i].clone();
                return Some(v);
            }
            i -= options.len();
        }
        None
    }

    /// Moves to the next candidate; `false` (and back to `best`) when there is none.
    fn advance(&mut self) -> bool {
        match self.candidate(self.next) {
            Some(v) => {
                self.next += 1;
                self.current = v;
                true
            }
            None => {
                self.current = self.best.clone();
                false
            }
        }
    }
}

impl<T: Clone + std::fmt::Debug> ValueTree for OpSequenceTree<T> {
    type Value = Vec<T>;

    fn current(&self) -> Vec<T> {
        self.current.clone()
    }

    /// Called first, and after every failing candidate: the candidate becomes the best
    /// and the search restarts from it.
    fn simplify(&mut self) -> bool {
        if self.next > 0 {
            self.best = self.current.clone();
        }
        self.next = 0;
        self.advance()
    }

    /// Called after a passing candidate: try the next one.
    fn complicate(&mut self) -> bool {
        self.advance()
    }
}
