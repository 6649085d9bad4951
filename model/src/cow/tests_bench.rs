//! `CowMap` against the crate it falls back on (`imbl::OrdMap`) and `std`'s `BTreeMap`,
//! side by side, for the "Copy-on-write state" paragraph of docs/performance.md. Figures,
//! never assertions (wall-clock time on a shared machine):
//!
//! ```sh
//! cargo test -p payhub-model --release --lib cow::tests_bench -- --ignored --nocapture
//! ```
//!
//! Each operation is the pattern of one user: "clone+insert" the checker (a generated
//! state clones its parent's collection and changes one entry), "get" everyone,
//! "pop+insert" the sandbox's timer set (fire the earliest timer, arm a later one, on a
//! collection nobody else shares), "iterate" hashing and printing.

use super::CowMap;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

/// The operations on one kind of map.
trait Bench: Clone {
    const NAME: &'static str;
    fn build(n: u64) -> Self;
    fn put(&mut self, k: u64, v: [u64; 4]);
    fn lookup(&self, k: u64) -> Option<&[u64; 4]>;
    fn pop(&mut self) -> Option<(u64, [u64; 4])>;
    fn walk(&self) -> u64;
}

macro_rules! bench_map {
    ($ty:ty, $name:literal, $pop:expr, $walk:expr) => {
        impl Bench for $ty {
            const NAME: &'static str = $name;
            fn build(n: u64) -> Self {
                let mut m = <$ty>::default();
                for k in 0..n {
                    m.insert(k * 2, [k; 4]);
                }
                m
            }
            fn put(&mut self, k: u64, v: [u64; 4]) {
                self.insert(k, v);
            }
            fn lookup(&self, k: u64) -> Option<&[u64; 4]> {
                self.get(&k)
            }
            fn pop(&mut self) -> Option<(u64, [u64; 4])> {
                ($pop)(self)
            }
            fn walk(&self) -> u64 {
                ($walk)(self)
            }
        }
    };
}

bench_map!(
    CowMap<u64, [u64; 4]>,
    "CowMap",
    |m: &mut CowMap<u64, [u64; 4]>| m.pop_first(),
    |m: &CowMap<u64, [u64; 4]>| m.iter().map(|(k, v)| k ^ v[0]).sum()
);
bench_map!(
    imbl::OrdMap<u64, [u64; 4]>,
    "imbl::OrdMap",
    |m: &mut imbl::OrdMap<u64, [u64; 4]>| {
        let k = m.get_min()?.0;
        m.remove_with_key(&k)
    },
    |m: &imbl::OrdMap<u64, [u64; 4]>| m.iter().map(|(k, v)| k ^ v[0]).sum()
);
bench_map!(
    BTreeMap<u64, [u64; 4]>,
    "BTreeMap",
    |m: &mut BTreeMap<u64, [u64; 4]>| m.pop_first(),
    |m: &BTreeMap<u64, [u64; 4]>| m.iter().map(|(k, v)| k ^ v[0]).sum()
);

/// Nanoseconds per call of `op`, over enough calls to take about 50 ms.
fn per_op(mut op: impl FnMut(u64)) -> f64 {
    let mut calls = 1u64;
    loop {
        let start = Instant::now();
        for i in 0..calls {
            op(i);
        }
        let took = start.elapsed();
        if took.as_millis() >= 50 || calls >= 1 << 24 {
            return took.as_nanos() as f64 / calls as f64;
        }
        calls *= 4;
    }
}

/// ns per operation of map `M` holding `n` entries: clone+insert, get, pop+insert, iterate.
fn measure<M: Bench>(n: u64) -> [f64; 4] {
    let base = M::build(n);
    let clone_insert = per_op(|i| {
        let mut m = base.clone();
        m.put((i % (n + 1)) * 2 + 1, [i; 4]);
        black_box(&m);
    });
    let get = per_op(|i| {
        black_box(base.lookup((i % n.max(1)) * 2));
    });
    let mut timers = base.clone();
    let mut next = n * 2;
    let pop_insert = per_op(|_| {
        black_box(timers.pop());
        timers.put(next, [next; 4]);
        next += 2;
    });
    let iterate = per_op(|_| {
        black_box(base.walk());
    }) / n.max(1) as f64;
    [clone_insert, get, pop_insert, iterate]
}

#[test]
#[ignore = "a benchmark: prints figures (cargo test -p payhub-model --release --lib cow::tests_bench -- --ignored --nocapture)"]
fn cow_map_against_crates() {
    println!(
        "{:>8} {:>13} {:>14} {:>9} {:>12} {:>14}",
        "entries", "map", "clone+insert", "get", "pop+insert", "iterate/entry"
    );
    for n in [4u64, 16, 48, 1_000, 100_000] {
        let rows = [
            (CowMap::NAME, measure::<CowMap<u64, [u64; 4]>>(n)),
            (
                imbl::OrdMap::<u64, [u64; 4]>::NAME,
                measure::<imbl::OrdMap<u64, [u64; 4]>>(n),
            ),
            (
                BTreeMap::<u64, [u64; 4]>::NAME,
                measure::<BTreeMap<u64, [u64; 4]>>(n),
            ),
        ];
        for (name, [a, b, c, d]) in rows {
            println!("{n:>8} {name:>13} {a:>11.1} ns {b:>6.1} ns {c:>9.1} ns {d:>11.2} ns");
        }
        let (cow, imbl) = (rows[0].1, rows[1].1);
        println!(
            "{n:>8} {:>13} {:>13.2} {:>9.2} {:>12.2} {:>14.2}",
            "CowMap/imbl",
            cow[0] / imbl[0],
            cow[1] / imbl[1],
            cow[2] / imbl[2],
            cow[3] / imbl[3]
        );
    }
}
