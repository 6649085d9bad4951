//! Swarm verification (`check --swarm --shard I/N`, `engine/swarm.rs`): a shard's report
//! is a function of the preset, the shard and the budget; a planted bug of the zoo is
//! found by some shard of four within a budget far below the preset's exhaustive size,
//! and the reference world, searched the same way, shows no violation (so the finding
//! is the mutant's).

use payhub_properties::checker::Search;
use payhub_properties::engine::swarm::{Budget, Shard, check_shard};
use payhub_properties::zoo::Subject;
use payhub_properties::{Preset, presets};

/// `create-lossy` has 147,172 unique states; each shard generates at most this many.
const BUDGET: Budget = Budget {
    max_depth: 64,
    max_states: 15_000,
};

fn shard(index: u32) -> Shard {
    Shard { index, count: 4 }
}

fn mutated(subject: &str, preset: &str) -> Preset {
    Subject::from_name(subject)
        .expect("a zoo subject")
        .presets()
        .into_iter()
        .find(|p| p.name == preset)
        .expect("the subject's preset")
}

#[test]
fn the_same_shard_twice_gives_the_same_report() {
    let preset = presets::preset("create-lossy").expect("a preset");
    let a = check_shard(&preset, shard(2), BUDGET, Search::default()).expect("shard");
    let b = check_shard(&preset, shard(2), BUDGET, Search::default()).expect("shard");
    let text = |r| serde_json::to_string(r).expect("json");
    assert_eq!(text(&a), text(&b));
    assert!(a.budget_spent && a.unique_states < 149_758, "{a:?}");
    let other = check_shard(&preset, shard(3), BUDGET, Search::default()).expect("shard");
    assert_ne!(
        (a.seed, a.unique_states),
        (other.seed, other.unique_states),
        "another shard walks another way"
    );
}

#[test]
fn a_zoo_mutant_is_found_by_some_shard_of_four() {
    let (subject, preset, property) = (
        "webhook_ignores_version",
        "create-lossy",
        "client-never-applies-an-older-version",
    );
    let buggy = mutated(subject, preset);
    // As it is and with `--reduce requests,por` (the shards honour `check`'s reductions).
    let reduced = Search {
        canonical_requests: true,
        partial_order: Some(payhub_properties::checker::INERT_FIRST),
        ..Search::default()
    };
    for reduce in [Search::default(), reduced] {
        let reports: Vec<_> = (0..4)
            .map(|i| check_shard(&buggy, shard(i), BUDGET, reduce).expect("shard"))
            .collect();
        let found: Vec<_> = reports
            .iter()
            .flat_map(|r| &r.violations)
            .filter(|v| v.property == property)
            .collect();
        assert!(
            !found.is_empty(),
            "{subject} ({reduce:?}): no shard of 4 found it"
        );
        for v in &found {
            assert!(!v.tape.is_empty() && v.path_length > 0, "{v:?}");
        }
    }
    let reference = presets::preset(preset).expect("a preset");
    for i in 0..4 {
        let r = check_shard(&reference, shard(i), BUDGET, Search::default()).expect("shard");
        assert!(r.violations.is_empty(), "the reference world: {r:?}");
    }
}
