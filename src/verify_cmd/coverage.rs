//! The report's coverage table: every rule, the properties that judge it, the presets and
//! scenarios that exercised it, and why no property judges the others.

use super::report::ScenarioResult;
use payhub_model::{Enforcer, Rule};
use payhub_properties::checker::{CheckStatus, PresetReport};
use serde::Serialize;

/// A rule, who checks it, and where it was exercised.
#[derive(Clone, Debug, Serialize)]
pub struct CoverageRow {
    pub id: &'static str,
    pub enforcer: Enforcer,
    /// The rule's sentence in English.
    pub text: &'static str,
    /// The contract's words in the Chinese original (authoritative).
    pub zh: &'static str,
    /// The properties that judge it: predicates that can fail.
    pub properties: Vec<&'static str>,
    /// The reach checks that list it (counted apart: a reach check cannot fail a rule).
    pub reach: Vec<&'static str>,
    pub presets: Vec<&'static str>,
    pub scenarios: Vec<String>,
    /// Why no property checks it, if none does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How it is judged: whole, in part, by tests only, or not at all.
    pub judged: Judged,
    /// What its properties leave unjudged (a rule judged in part).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_part: Option<&'static str>,
}

payhub_model::named! {
    fn as_str;
    /// How a rule's sentence is judged, as `rules --coverage` and the report count it
    /// (each with the words a table shows).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Judged {
        /// By properties that can fail, the whole sentence.
        Whole = "judged whole by properties",
        /// By properties, but part of the sentence is not (the catalogue's
        /// [`Rule::judged_in_part`] says which).
        InPart = "judged in part",
        /// By reach checks, unit tests and scripts only, with the catalogue's reason
        /// ([`Rule::unjudged`]).
        TestOnly = "tests, scripts and reach checks only",
        /// By nothing the catalogue records (`tests/rule_catalogue.rs` fails on one).
        None = "none",
    }
}

/// How `rule` is judged.
pub fn judged(rule: Rule) -> Judged {
    let by_property = payhub_properties::judging(rule).next().is_some();
    match (by_property, rule.judged_in_part(), rule.unjudged()) {
        (true, None, _) => Judged::Whole,
        (true, Some(_), _) => Judged::InPart,
        (false, _, Some(_)) => Judged::TestOnly,
        (false, _, None) => Judged::None,
    }
}

/// Why no property judges a rule, and which tests and scripts check it instead (the
/// catalogue's [`Rule::unjudged`]); `None` for a rule a property judges. A rule no
/// property judges and the catalogue gives no reason for says so (and fails
/// `tests/rule_catalogue.rs`).
pub fn coverage_reason(rule: Rule) -> Option<String> {
    if payhub_properties::judging(rule).next().is_some() {
        return None;
    }
    Some(match rule.unjudged() {
        Some(u) => format!("{}; checked by {}", u.why, u.checked_by.join(", ")),
        None => match rule.enforcer() {
            Enforcer::Wording => "wording shown to a payer or operator: no reason recorded".into(),
            _ => "no property and no reason recorded in the catalogue (model/src/rules/mod.rs)"
                .into(),
        },
    })
}

/// The coverage table: every rule with the properties that check it, the presets and
/// scenarios that exercised it.
pub fn coverage(presets: &[PresetReport], scenarios: &[ScenarioResult]) -> Vec<CoverageRow> {
    Rule::ALL
        .iter()
        .map(|&rule| CoverageRow {
            id: rule.id(),
            enforcer: rule.enforcer(),
            text: rule.text(),
            zh: rule.zh(),
            properties: payhub_properties::judging(rule).map(|p| p.name).collect(),
            reach: payhub_properties::reaching(rule).map(|p| p.name).collect(),
            // A preset exercised a rule if the rule decided something in a state it visited,
            // or a witness of the rule (a *sometimes* property) was reached there, or the
            // rule is an invariant no event cites, the preset is built to exercise it and
            // its properties judged every state there (held or were violated).
            presets: presets
                .iter()
                .filter(|p| {
                    p.rules_exercised.contains(&rule.id())
                        || p.properties.iter().any(|q| {
                            q.status == CheckStatus::Reached && q.rules.contains(&rule.id())
                        })
                        || (rule.invariant()
                            && p.exercises.contains(&rule.id())
                            && p.properties.iter().any(|q| {
                                matches!(q.status, CheckStatus::Holds | CheckStatus::Violated)
                                    && q.rules.contains(&rule.id())
                            }))
                })
                .map(|p| p.name)
                .collect(),
            scenarios: scenarios
                .iter()
                .filter(|s| s.rules.contains(&rule.id()))
                .map(|s| s.name.clone())
                .collect(),
            reason: coverage_reason(rule),
            judged: judged(rule),
            in_part: rule
                .judged_in_part()
                .filter(|_| judged(rule) == Judged::InPart),
        })
        .collect()
}
