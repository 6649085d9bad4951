//! The exhaustive checker finds an anti-pattern client's double charge, prints a
//! counterexample that replays on the world, and that counterexample is minimal: its
//! length is the breadth-first depth of the first violating state.

use payhub_properties::checker::{CheckStatus, Limits};
use payhub_properties::presets::client_presets;
use payhub_properties::{AlwaysCheck, check};
use payhub_sim::{driver, worlds};

#[test]
fn unknown_03_checker_counterexample_replays_and_is_minimal() {
    let policy = worlds::parse_policy("new_key_after_timeout+new_order_no_after_timeout").unwrap();
    let preset = client_presets(&policy)
        .into_iter()
        .find(|p| p.name == "create-lossy")
        .unwrap();
    // The violation is found long before the anti-pattern's state space is exhausted.
    let report = check(
        &preset,
        Limits {
            max_states: Some(60_000),
            ..Limits::default()
        },
    )
    .unwrap();
    let p = report
        .properties
        .iter()
        .find(|p| p.name == "client-never-charges-an-order-twice")
        .unwrap();
    assert_eq!(p.status, CheckStatus::Violated);
    let cx = p.counterexample.as_ref().unwrap();
    assert!(cx.minimal);

    // It replays on the world (the preset has no setup) and violates the property.
    let mut check_all = AlwaysCheck {
        config: &preset.config,
    };
    let (_, outcome) =
        driver::replay(&preset.config, &cx.proof.choices, &mut check_all, None).unwrap();
    assert_eq!(
        outcome.violation.unwrap().property,
        "client-never-charges-an-order-twice"
    );

    // Its length is the depth of the first violating state: no depth bound below it
    // lets stateright find the violation, the bound at it does.
    let found_within = |depth: usize| {
        let limits = Limits {
            max_depth: Some(depth),
            ..Limits::default()
        };
        let r = check(&preset, limits).unwrap();
        r.properties.iter().any(|p| {
            p.name == "client-never-charges-an-order-twice" && p.status == CheckStatus::Violated
        })
    };
    // stateright counts the initial state as depth 1, so the violating state at the end
    // of the path has depth `len + 1`, and a search bounded by depth `d` evaluates states
    // of depth below `d` only. Minimal: bounded so that every state of depth `len` or
    // less is evaluated, nothing is found; one level deeper, the violation is.
    let violating_depth = cx.proof.choices.len() + 1;
    assert!(
        !found_within(violating_depth),
        "a shorter counterexample exists"
    );
    assert!(found_within(violating_depth + 1));
}
