//! `check --swarm --shard I/N` at the command line: never a pass (exit 3 without a
//! violation), the same bytes twice, bad shards are one-line errors (exit 2).

mod common;

use common::*;

#[test]
fn a_shard_is_incomplete_and_prints_the_same_twice() {
    let args = [
        "check",
        "--swarm",
        "--shard",
        "1/4",
        "--preset",
        "replay-conflict",
        "--format",
        "json",
    ];
    let a = run(&args);
    assert_eq!(code(&a), 3, "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&run(&args)));
    assert!(stdout(&a).contains("\"violations\": []"), "{}", stdout(&a));
    let text = run(&[
        "check",
        "--swarm",
        "--shard",
        "0/2",
        "--preset",
        "replay-conflict",
    ]);
    assert_eq!(code(&text), 3);
    assert!(stdout(&text).contains("not judged"), "{}", stdout(&text));
}

#[test]
fn bad_shards_and_combinations_are_usage_errors() {
    for bad in [
        &["check", "--swarm", "--shard", "4/4"][..],
        &["check", "--swarm"],
        &["check", "--shard", "0/2"],
        &["check", "--swarm", "--shard", "0/2", "--search", "dfs"],
        &["check", "--swarm", "--shard", "0/2", "--timeout", "5"],
    ] {
        let o = run(bad);
        assert_eq!(code(&o), 2, "{bad:?}: {}", stderr(&o));
    }
}
