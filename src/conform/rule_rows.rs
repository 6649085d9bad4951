//! The report's rules: per rule the platform keeps, what the registry's properties
//! judging the target made of it (verified, violated, blind with the evidence the wire
//! lacked), or not judged over the wire (the oracle's comparison its only check).

use super::registry::{Judges, PropertyRow, Registry};
use payhub_model::rules::{Enforcer, Rule};
use payhub_properties::verdict::Status;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleVerdict {
    Verified,
    Violated,
    Blind,
    NotJudgedOverTheWire,
}

#[derive(Clone, Debug, Serialize)]
pub struct RuleRow {
    pub rule: &'static str,
    pub verdict: RuleVerdict,
    /// The registry's properties that judge it.
    pub properties: Vec<&'static str>,
    /// Cases whose exchanges judged it (held or reached), or violated it.
    pub cases: usize,
    /// Blind: why the wire could not show it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

pub fn rows(registry: &Registry) -> Vec<RuleRow> {
    Rule::ALL
        .iter()
        .filter(|r| r.enforcer() == Enforcer::Platform)
        .map(|rule| {
            let judges =
                |p: &&PropertyRow| p.judges == Judges::Target && p.rules.contains(&rule.id());
            let props: Vec<&PropertyRow> = registry.properties.iter().filter(judges).collect();
            let violated =
                (props.iter()).any(|p| p.status == Status::Violated && p.suppressed.is_none());
            let c = |p: &&PropertyRow| {
                p.cases.holds + p.cases.reached + p.cases.unreached + p.cases.violated
            };
            let judged: usize = props.iter().map(c).max().unwrap_or(0);
            let verdict = if violated {
                RuleVerdict::Violated
            } else if judged > 0 {
                RuleVerdict::Verified
            } else if props.is_empty() {
                RuleVerdict::NotJudgedOverTheWire
            } else {
                RuleVerdict::Blind
            };
            let missing = props.iter().flat_map(|p| p.missing.iter()).next().cloned();
            let why = missing.filter(|_| verdict == RuleVerdict::Blind);
            RuleRow {
                rule: rule.id(),
                verdict,
                properties: props.iter().map(|p| p.name).collect(),
                cases: judged,
                why,
            }
        })
        .collect()
}

/// One line: how many rules each verdict.
pub fn summary(rows: &[RuleRow]) -> String {
    let n = |v| rows.iter().filter(|r| r.verdict == v).count();
    format!(
        "rules the platform keeps, by the registry: {} verified, {} violated, {} blind over the wire, {} judged by the oracle only ({} in all; per rule in --format json or markdown)\n",
        n(RuleVerdict::Verified),
        n(RuleVerdict::Violated),
        n(RuleVerdict::Blind),
        n(RuleVerdict::NotJudgedOverTheWire),
        rows.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conform::registry::Counts;

    fn row(status: Status, judges: Judges, missing: &[&str]) -> PropertyRow {
        PropertyRow {
            name: "invalid-key-answered-400-idempotency-key",
            kind: payhub_properties::Kind::Always,
            rules: vec!["KEY-07"],
            judges,
            status,
            cases: Counts {
                holds: usize::from(status == Status::Holds) * 5,
                ..Counts::default()
            },
            missing: missing.iter().map(|m| (*m).to_owned()).collect(),
            witness: None,
            suppressed: None,
        }
    }

    fn key07(r: &Registry) -> RuleRow {
        rows(r).into_iter().find(|r| r.rule == "KEY-07").unwrap()
    }

    #[test]
    fn a_rule_is_verified_blind_or_judged_by_the_oracle_only() {
        let mut r = Registry::default();
        assert_eq!(key07(&r).verdict, RuleVerdict::NotJudgedOverTheWire);
        r.properties = vec![row(Status::Holds, Judges::Target, &[])];
        let k = key07(&r);
        assert_eq!((k.verdict, k.cases), (RuleVerdict::Verified, 5));
        r.properties = vec![row(Status::CannotJudge, Judges::Target, &["wire: no key"])];
        assert_eq!(key07(&r).why.as_deref(), Some("wire: no key"));
        // A property judging the merchant's requests says nothing of the target.
        r.properties = vec![row(Status::Violated, Judges::Merchant, &[])];
        assert_eq!(key07(&r).verdict, RuleVerdict::NotJudgedOverTheWire);
    }
}
