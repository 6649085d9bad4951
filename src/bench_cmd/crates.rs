//! `bench --crates`: the hand-written parts against the kept crates they stand in for,
//! side by side in one process: `Text` (model/src/text/mod.rs) against compact_str's
//! `CompactString` and smol_str's `SmolStr`, and the allocator shim (src/alloc.rs)
//! against the `mimalloc` crate's allocator over the same pinned libmimalloc-sys.
//!
//! Each workload is the checker's in miniature: the world's strings (order numbers,
//! currencies, idempotency keys, webhook kinds, paths) built once and cloned, compared
//! and hashed many times; blocks of the checker's sizes (not powers of two) allocated
//! and freed with a window of live ones, so that pages run out and refill. Measured,
//! never asserted; the median of `--runs`. The checker itself with each alternative is
//! a build with a feature (`--features text-compact-str`, `text-smol-str`,
//! `crate-mimalloc`), compared with `bench` or callgrind (docs/performance.md).

use super::BenchArgs;
use crate::Format;
use compact_str::CompactString;
use payhub_model::Text;
use serde::Serialize;
use smol_str::SmolStr;
use std::alloc::{GlobalAlloc, Layout};
use std::hash::Hash;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

/// Strings of the kinds the world holds, short and long (a UUID key is 36 bytes, past
/// every inline capacity: compact_str copies it on clone, smol_str and `Text` share it).
const STRINGS: &[&str] = &[
    "ORDER-1",
    "USD",
    "payment.succeeded",
    "payment.create:ORDER-1:1",
    "0f8fad5b-d9cb-469f-a165-70867728950e",
    "/v1/payments/pay_demo_001/confirm",
    "REFUND-2",
    "K",
];

/// Rounds of the string workload: each clones every string 8 times, compares and
/// hashes the clones, and drops them.
const STRING_ROUNDS: usize = 200_000;

/// The string workload over one string type.
fn strings<T>(from: impl Fn(&str) -> T) -> f64
where
    T: Clone + Eq + Ord + Hash,
{
    let hasher =
        ahash::RandomState::with_seeds(123_456_789_987_654_321, 98_765_432_123_456_789, 0, 0);
    let built: Vec<T> = STRINGS.iter().map(|s| from(s)).collect();
    let started = Instant::now();
    let mut acc = 0u64;
    for round in 0..STRING_ROUNDS {
        let clones: Vec<T> = (0..8)
            .map(|k| built[(round + k) % built.len()].clone())
            .collect();
        for pair in clones.windows(2) {
            acc = acc.wrapping_add(u64::from(pair[0] == pair[1]));
            acc = acc.wrapping_add(pair[0].cmp(&pair[1]) as u64);
            acc = acc.wrapping_add(hasher.hash_one(&pair[0]));
        }
        // A fresh one now and then, as a step builds a key or an order number.
        if round % 16 == 0 {
            acc = acc.wrapping_add(hasher.hash_one(from(STRINGS[round % STRINGS.len()])));
        }
        black_box(&clones);
    }
    black_box(acc);
    started.elapsed().as_secs_f64()
}

/// Block sizes of the checker's allocations (vectors of records, shared boxes, `Arc`
/// headers): mostly not powers of two.
const SIZES: &[usize] = &[24, 40, 48, 56, 72, 96, 120, 136, 200, 328, 16, 32, 64];

/// Allocations of the allocator workload, and how many stay alive at once.
const ALLOCATIONS: usize = 3_000_000;
const LIVE: usize = 20_000;

/// The allocator workload over one allocator: allocate, write, free the oldest.
fn allocations(a: &dyn GlobalAlloc) -> f64 {
    let mut live: std::collections::VecDeque<(*mut u8, Layout)> =
        std::collections::VecDeque::with_capacity(LIVE + 1);
    let started = Instant::now();
    for i in 0..ALLOCATIONS {
        let size = SIZES[(i * 7 + i / 13) % SIZES.len()];
        let layout = Layout::from_size_align(size, 8).expect("a layout");
        // SAFETY: a non-zero size; every block is freed below with its layout.
        let p = unsafe { a.alloc(layout) };
        assert!(!p.is_null(), "out of memory");
        // SAFETY: `p` is a fresh block of at least one byte.
        unsafe { p.write(i as u8) };
        live.push_back((p, layout));
        if live.len() > LIVE {
            let (old, layout) = live.pop_front().expect("a block");
            // SAFETY: `old` came from `a` with `layout`.
            unsafe { a.dealloc(black_box(old), layout) };
        }
    }
    for (p, layout) in live {
        // SAFETY: as above.
        unsafe { a.dealloc(p, layout) };
    }
    started.elapsed().as_secs_f64()
}

#[derive(Debug, Serialize)]
struct Pair {
    workload: &'static str,
    ours: &'static str,
    theirs: &'static str,
    ours_seconds: f64,
    theirs_seconds: f64,
    /// The kept crate's time over ours: above 1, ours is faster.
    ratio: f64,
}

fn median(mut runs: Vec<f64>) -> f64 {
    payhub_properties::zoo::median(&mut runs)
}

pub(super) fn compare(args: &BenchArgs) -> Result<ExitCode, String> {
    let runs = args.runs.max(1) as usize;
    let mut times = [const { Vec::new() }; 5];
    for _ in 0..runs {
        // Interleaved, so that a burst of load on this shared machine hits them alike.
        times[0].push(strings(|s| Text::from(s)));
        times[1].push(strings(|s| CompactString::new(s)));
        times[2].push(strings(|s| SmolStr::new(s)));
        times[3].push(allocations(&crate::alloc::MiMalloc));
        times[4].push(allocations(&mimalloc::MiMalloc));
    }
    let [text, compact, smol, shim, crate_mi] = times.map(median);
    let pair = |workload, ours, theirs, a: f64, b: f64| Pair {
        workload,
        ours,
        theirs,
        ours_seconds: a,
        theirs_seconds: b,
        ratio: b / a,
    };
    let pairs = vec![
        pair("strings", "Text", "compact_str 0.9", text, compact),
        pair("strings", "Text", "smol_str 0.3", text, smol),
        pair(
            "allocations",
            "src/alloc.rs",
            "mimalloc 0.1",
            shim,
            crate_mi,
        ),
    ];
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&pairs).map_err(|e| e.to_string())?
        ),
        Format::Text => {
            println!(
                "hand-written against kept crates (median of {runs} runs, interleaved; ratio = theirs / ours, above 1 ours is faster):"
            );
            for p in &pairs {
                println!(
                    "    {:<12} {:<13} {:>7.3}s   {:<16} {:>7.3}s   ratio {:.2}",
                    p.workload, p.ours, p.ours_seconds, p.theirs, p.theirs_seconds, p.ratio
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
