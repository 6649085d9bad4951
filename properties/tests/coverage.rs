//! The rule-coverage table's ground: every rule a preset says it exercises
//! (`Preset::exercises`) is exercised there, searched exhaustively: it decided some
//! answer, call or client step in a state the preset visits (an event cites it), a
//! witness of it was reached, or it is an invariant (`Rule::invariant`) that a property
//! judges in every state. And an invariant is never cited by an event: a rule that
//! decides something is not one, and the table would count it by the list alone.

use payhub_model::Rule;
use payhub_properties::PROPERTIES;
use payhub_properties::checker::{self, Limits, Order, Search};
use payhub_properties::presets;
use payhub_properties::property::Kind;

/// Depth first with the request-id renaming and the partial order: the reductions
/// `properties/tests/reduction.rs` shows give every preset's verdicts; a delivery they
/// put first or rename cites no rule.
const REDUCED: Search = Search {
    order: Order::Depth,
    canonical_ids: true,
    canonical_requests: true,
    partial_order: Some(checker::INERT_FIRST),
    bitstate: None,
    interrupted: None,
};

#[test]
fn every_preset_exercises_the_rules_it_says_it_does() {
    let limits = Limits {
        threads: 2,
        ..Limits::default()
    };
    let mut declared = 0;
    let mut problems = Vec::new();
    for preset in presets::presets() {
        let searched = checker::search(&preset, limits, REDUCED, false).expect("the preset builds");
        assert!(searched.complete, "{} searched to the end", preset.name);
        let reached = |rule: Rule| {
            PROPERTIES.iter().enumerate().any(|(i, p)| {
                p.kind() == Kind::Sometimes
                    && searched.reached & (1 << i) != 0
                    && p.rules.contains(&rule)
            })
        };
        let judged = |rule: Rule| {
            PROPERTIES
                .iter()
                .any(|p| p.kind() == Kind::Always && p.rules.contains(&rule))
        };
        for &rule in preset.exercises {
            declared += 1;
            let exercised = searched.exercised.contains(rule)
                || reached(rule)
                || (rule.invariant() && judged(rule));
            if !exercised {
                problems.push(format!(
                    "{}: {} is listed but {}",
                    preset.name,
                    rule.id(),
                    if rule.invariant() {
                        "no always property judges it"
                    } else {
                        "decided nothing and no witness of it was reached"
                    }
                ));
            }
        }
        for rule in searched.exercised.iter().filter(|r| r.invariant()) {
            problems.push(format!(
                "{}: the invariant {} decided something (an event cites it): it is not an invariant",
                preset.name,
                rule.id()
            ));
        }
    }
    assert!(declared >= 40, "{declared} rules listed by the presets");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scope_rules_are_counted_where_the_scope_preset_exercises_them() {
    let scope = presets::preset("scope").expect("the scope preset");
    for id in ["SCOPE-01", "SCOPE-02", "SCOPE-03"] {
        let rule = Rule::from_id(id).expect("a rule");
        assert!(rule.invariant(), "{id}");
        assert!(scope.exercises.contains(&rule), "{id}");
    }
}
