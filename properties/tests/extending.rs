//! Adding a property is one file: a `Property` value (its name, rules, one sentence and a
//! predicate over the facts) that every driver runs as it runs the registry's. This one
//! lives in this file and reads a fact the registry's `client-spaces-queries` reads too
//! (`Queries::closest_queries`, the closest two queries of one object): the fact records,
//! each property decides by its own number.

use payhub_model::client::Policy;
use payhub_model::{Millis, Rule};
use payhub_properties::property::{OneCheck, Predicate, Property, property};
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::worlds;

/// A stricter reading of SCHED-02 than the contract's, for the demonstration: an hour
/// between two queries of one object. The reference client's schedule (10 s, 30 s, …)
/// breaks it; it keeps the contract's 10 seconds.
static QUERIES_HOURLY: Property = Property {
    name: "client-queries-an-object-at-most-hourly",
    rules: &[Rule::QuerySpacing],
    about: "A client never sends two queries of the same object less than an hour apart.",
    predicate: Predicate::Always(|f| {
        let q = f.queries.closest_queries.as_ref()?;
        (q.gap() < Millis::hours(1)).then(|| {
            format!(
                "GET {} at {}, {} after GET {}",
                q.path,
                q.at,
                q.gap(),
                q.last_path
            )
        })
    }),
};

#[test]
fn a_property_defined_outside_the_registry_runs_as_the_registry_s_do() {
    let config = worlds::simulation(&Policy::reference(), 2);
    let spaced = property("client-spaces-queries").expect("in the registry");
    let mut caught = 0;
    for seed in 0..40 {
        let profile = FaultProfile::for_seed(seed);
        let mut check = OneCheck {
            property: &QUERIES_HOURLY,
            config: &config,
        };
        let (world, run) = driver::run_seed(&config, seed, &profile, 300, &mut check, None);
        // The registry's reading of the same fact holds on the reference client.
        assert_eq!(spaced.judge(&world.facts), None, "seed {seed}");
        if let Some(v) = run.violation {
            assert_eq!(v.property, QUERIES_HOURLY.name);
            assert!(v.detail.starts_with("GET /v1/payments"), "{}", v.detail);
            caught += 1;
        }
    }
    assert!(
        caught > 0,
        "no seed queried one object twice within an hour"
    );
}
