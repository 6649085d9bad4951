//! The facts and the verdicts come from the event stream alone: a recorded stream fed
//! into [`Facts`], without a world, gives the facts the run itself built, and every
//! property gives the same verdict on both.

use payhub_model::client::{AntiPattern, Policy};
use payhub_properties::{AlwaysCheck, Facts, PROPERTIES, World};
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::{Trace, WorldConfig, worlds};

/// Runs `seed`, recording, and returns the world and its trace.
fn recorded(config: &WorldConfig, seed: u64) -> (World, Trace) {
    let profile = FaultProfile::for_seed(seed);
    let mut trace = Trace::new();
    let mut check = AlwaysCheck { config };
    let (world, _) = driver::run_seed(config, seed, &profile, 300, &mut check, Some(&mut trace));
    (world, trace)
}

/// Every property's verdict over some facts: (name, violation, holds).
fn verdicts(facts: &Facts) -> Vec<(&'static str, Option<String>, bool)> {
    PROPERTIES
        .iter()
        .map(|p| (p.name, p.judge(facts), p.holds_in(facts)))
        .collect()
}

fn assert_stream_rebuilds(config: &WorldConfig, seed: u64) -> bool {
    let (world, trace) = recorded(config, seed);
    assert!(!trace.stream.is_empty(), "seed {seed}: no events");
    let rebuilt = Facts::from_events(&trace.stream);
    assert_eq!(rebuilt, *world.facts, "seed {seed}: facts differ");
    // Through its file form too: JSON Lines, read back.
    let read: Vec<payhub_model::event::Event> = trace
        .to_events_jsonl()
        .lines()
        .map(|l| serde_json::from_str(l).expect("an event"))
        .collect();
    assert_eq!(
        read, trace.stream,
        "seed {seed}: JSON Lines do not round-trip"
    );
    assert_eq!(verdicts(&rebuilt), verdicts(&world.facts), "seed {seed}");
    verdicts(&rebuilt).iter().any(|(_, v, _)| v.is_some())
}

#[test]
fn reference_runs_rebuild_from_their_events() {
    let config = worlds::simulation(&Policy::reference(), 2);
    for seed in 0..40 {
        assert!(
            !assert_stream_rebuilds(&config, seed),
            "seed {seed} violated"
        );
    }
}

/// Runs that violate something give the same violation from their events.
#[test]
fn violating_runs_rebuild_their_violation_from_their_events() {
    let mut violated = 0;
    for anti in [
        AntiPattern::NewOrderNoAfterTimeout,
        AntiPattern::KeyRegeneratedOnRetry,
        AntiPattern::PollTooFast,
        AntiPattern::ChangedParamsSameKey,
    ] {
        let config = worlds::simulation(&Policy::reference().with(anti), 2);
        for seed in 0..40 {
            if assert_stream_rebuilds(&config, seed) {
                violated += 1;
            }
        }
    }
    assert!(
        violated > 0,
        "no run violated anything: nothing was compared"
    );
}

/// The world only emits: what it does never depends on what folds its events. A run
/// replayed in a world that folds nothing (`()`, as `check_enabled`, the shrinker and a
/// script export use) applies the same choices and emits the same events as the world
/// that keeps the facts, faults included.
#[test]
fn a_world_that_folds_nothing_emits_the_same_events() {
    let config = worlds::simulation(&Policy::reference().with(AntiPattern::PollTooFast), 2);
    for seed in 0..10 {
        let mut trace = Trace::new();
        let mut check = AlwaysCheck { config: &config };
        let profile = FaultProfile::for_seed(seed);
        let (world, run) =
            driver::run_seed(&config, seed, &profile, 300, &mut check, Some(&mut trace));
        assert!(!trace.stream.is_empty(), "seed {seed}: no events");
        let mut bare = Trace::new();
        let mut nothing = |_: &payhub_sim::World<()>| None;
        let (unfolded, _) = driver::replay(&config, &run.tape, &mut nothing, Some(&mut bare))
            .expect("the tape replays");
        assert_eq!(bare.stream, trace.stream, "seed {seed}: events differ");
        assert_eq!(unfolded.now, world.now, "seed {seed}");
        assert_eq!(*unfolded.platform, *world.platform, "seed {seed}");
    }
}

/// Facts from an empty stream violate nothing and reach nothing: a property that
/// passes or is reached with no evidence would be vacuous.
#[test]
fn an_empty_stream_violates_and_reaches_nothing() {
    let facts = Facts::from_events(&[]);
    for p in PROPERTIES {
        assert_eq!(p.judge(&facts), None, "{}", p.name);
        if p.kind() == payhub_properties::Kind::Sometimes {
            assert!(!p.holds_in(&facts), "{} reached with no events", p.name);
        }
    }
}

/// Liveness from the events: over seeded runs of the reference client and of one that
/// ends its query schedule after an hour (SCHED-01's planted bug), the judgement of the
/// healed run's recorded events ([`liveness::replay_and_heal`], [`liveness::judge`])
/// agrees with the healed world's own databases ([`liveness::check`], the shortcut
/// `simulate` takes): every submission known there is resolved from the events, and a
/// submission unknown there is never resolved from them. The planted bug leaves some
/// submission unknown for good in some run, and the events judge that run violated.
#[test]
fn liveness_from_the_events_agrees_with_the_healed_worlds_databases() {
    use payhub_properties::liveness::{self, LivenessVerdict};
    for (policy, servers) in [
        (Policy::reference(), 2),
        (Policy::reference().with(AntiPattern::QueriesStopAt1h), 1),
    ] {
        let config = worlds::simulation(&policy, servers);
        let mut violated = 0;
        for seed in 0..400 {
            let profile = FaultProfile::for_seed(seed);
            let mut none = |_: &World| None;
            let (world, outcome) = driver::run_seed(&config, seed, &profile, 300, &mut none, None);
            let mut healed = world.clone();
            let known = liveness::check(&config, &mut healed).is_none();
            let (_, facts, end) =
                liveness::replay_and_heal(&config, &outcome.tape).expect("the tape replays");
            let judged = liveness::judge(&facts, end);
            assert_eq!(
                known,
                judged == LivenessVerdict::Resolved,
                "seed {seed}, {}: {judged:?}",
                config.name
            );
            assert_eq!(liveness::verdict(&config, world, &outcome.tape), judged);
            violated += usize::from(matches!(judged, LivenessVerdict::Unresolved(_)));
        }
        let planted = policy != Policy::reference();
        assert_eq!(
            violated > 0,
            planted,
            "{}: {violated} violated",
            config.name
        );
    }
}
