//! The registry's verdicts over a sweep, gathered per property from each case's record
//! ([`super::record`]): only properties judging the target count (the others judge
//! conform's own requests); over the cases the worst status wins.

use super::record::CaseVerdicts;
use payhub_properties::Kind;
use payhub_properties::facts::wire::Seen as WireSeen;
use payhub_properties::verdict::{Status, Verdict};
use serde::Serialize;
use std::fmt::Write as _;

/// Unreadable exchanges listed by name; beyond this many, only counted.
const UNREADABLE_LISTED: usize = 20;

/// Whose behaviour a property judges here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judges {
    /// The target's answers.
    Target,
    /// The merchant's requests: conform's own, not the target's.
    Merchant,
}

/// How many cases gave each status.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    pub holds: usize,
    pub violated: usize,
    pub reached: usize,
    pub unreached: usize,
    pub cannot_judge: usize,
}

impl Counts {
    /// Every case counted.
    pub fn total(&self) -> usize {
        self.holds + self.violated + self.reached + self.unreached + self.cannot_judge
    }
}

/// The first case that violated a property, with what witnesses it.
#[derive(Clone, Debug, Serialize)]
pub struct CaseWitness {
    pub seed: u64,
    /// The property's explanation, naming its exchanges (`exchange N at +T`).
    pub detail: String,
    /// The exchanges of the witness, `exchange N: …` in the contract's notation.
    pub exchanges: Vec<String>,
}

/// One property over the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyRow {
    pub name: &'static str,
    pub kind: Kind,
    pub rules: Vec<&'static str>,
    pub judges: Judges,
    pub status: Status,
    pub cases: Counts,
    /// The evidence missing and why in the first case that could not judge it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<CaseWitness>,
    /// The profile's reason, when it suppresses this property: a violation is then
    /// printed with the reason and not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppressed: Option<String>,
}

/// The registry's verdicts over every case of a sweep.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Registry {
    /// Cases with an exchange judged, and their exchanges.
    pub cases: usize,
    pub exchanges: u64,
    /// Exchanges the reader could not read as the contract's: counted, the first listed.
    pub unreadable: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable_listed: Vec<String>,
    pub properties: Vec<PropertyRow>,
}

/// Which status of a property over cases wins: a violation, then a reach, then a case
/// that judged it, then a case that could not.
fn weight(s: Status) -> u8 {
    match s {
        Status::Violated => 3,
        Status::Reached => 2,
        Status::Holds | Status::Unreached => 1,
        Status::CannotJudge => 0,
    }
}

impl Registry {
    /// Adds case `seed`'s verdicts.
    pub fn add(&mut self, seed: u64, case: CaseVerdicts) {
        let room = UNREADABLE_LISTED.saturating_sub(self.unreadable_listed.len());
        let listed = case.unreadable.iter().take(room);
        (self.unreadable_listed).extend(listed.map(|why| format!("seed {seed} {why}")));
        self.unreadable += case.unreadable.len() as u64;
        if case.judged == 0 {
            return;
        }
        self.cases += 1;
        self.exchanges += case.judged;
        if self.properties.is_empty() {
            let judges =
                |v: &Verdict| [Judges::Merchant, Judges::Target][usize::from(v.judges_platform())];
            let row = |v: &Verdict| PropertyRow {
                name: v.name,
                kind: v.kind,
                rules: v.rules.clone(),
                judges: judges(v),
                status: Status::CannotJudge,
                cases: Counts::default(),
                missing: Vec::new(),
                witness: None,
                suppressed: None,
            };
            self.properties = case.verdicts.iter().map(row).collect();
        }
        for v in &case.verdicts {
            let Some(row) = self.properties.iter_mut().find(|r| r.name == v.name) else {
                continue;
            };
            let c = &mut row.cases;
            *match v.status {
                Status::Holds => &mut c.holds,
                Status::Violated => &mut c.violated,
                Status::Reached => &mut c.reached,
                Status::Unreached => &mut c.unreached,
                Status::CannotJudge => &mut c.cannot_judge,
            } += 1;
            if v.status == Status::CannotJudge && row.missing.is_empty() {
                let missing = v
                    .missing
                    .iter()
                    .map(|m| format!("{}: {}", m.evidence, m.why));
                row.missing = missing.collect();
            }
            if v.status == Status::Violated && row.witness.is_none() {
                let entries = v.witness.as_ref().map_or(&[][..], |w| &w.entries[..]);
                let exchange = |s: &WireSeen| {
                    let line = case.lines.get(s.id.0 as usize - 1);
                    format!("exchange {}: {}", s.id.0, line.map_or("?", |l| l))
                };
                row.witness = Some(CaseWitness {
                    seed,
                    detail: v.detail.clone().unwrap_or_default(),
                    exchanges: entries.iter().map(exchange).collect(),
                });
            }
            if weight(v.status) > weight(row.status) {
                row.status = v.status;
            }
        }
    }

    fn target(&self) -> impl Iterator<Item = &PropertyRow> {
        (self.properties.iter()).filter(|r| r.judges == Judges::Target)
    }

    /// The properties judging the target that a case violated.
    pub fn violated(&self) -> Vec<&PropertyRow> {
        let counted = |r: &&PropertyRow| r.status == Status::Violated && r.suppressed.is_none();
        self.target().filter(counted).collect()
    }

    /// Marks the properties the profile suppresses; one line per suppression, with what
    /// it hides over this run.
    pub fn suppress(&mut self, suppress: &[super::profile::Suppress]) -> Vec<String> {
        let line = |s: &super::profile::Suppress| {
            let row = self.properties.iter_mut().find(|r| r.name == s.property);
            let hides = match row {
                Some(row) => {
                    row.suppressed = Some(s.reason.clone());
                    match &row.witness {
                        Some(w) => format!(
                            "hides {} violating cases; first: seed {}: {}",
                            row.cases.violated, w.seed, w.detail
                        ),
                        None => "hides nothing in this run".to_owned(),
                    }
                }
                None => "hides nothing in this run (not judged)".to_owned(),
            };
            format!("suppressed: {} ({}): {hides}", s.property, s.reason)
        };
        suppress.iter().map(line).collect()
    }

    /// Whether a property judging the target held or was reached.
    fn judged_something(&self) -> bool {
        (self.target()).any(|r| matches!(r.status, Status::Holds | Status::Reached))
    }

    /// The registry's part of the exit code after `cases_run` cases (module doc).
    pub fn exit_code(&self, cases_run: usize) -> u8 {
        if !self.violated().is_empty() {
            1
        } else if cases_run > 0 && (self.unreadable > 0 || !self.judged_something()) {
            3
        } else {
            0
        }
    }

    /// Why the registry's part is incomplete, if it is.
    pub fn incomplete(&self, cases_run: usize) -> Option<String> {
        if self.exit_code(cases_run) != 3 {
            None
        } else if self.unreadable > 0 {
            Some(format!(
                "{} exchanges could not be read as the contract's",
                self.unreadable
            ))
        } else {
            Some("no property judging the target could be judged over the exchanges".into())
        }
    }

    fn count(&self, status: Status) -> usize {
        self.target().filter(|r| r.status == status).count()
    }

    /// One line: how many properties judging the target hold, are violated, cannot be
    /// judged.
    pub fn summary(&self) -> String {
        format!(
            "registry over {} exchanges of {} cases: {} hold, {} violated, {} reached, {} cannot be judged over the wire; {} judge the merchant (conform's requests), not counted",
            self.exchanges,
            self.cases,
            self.count(Status::Holds),
            self.count(Status::Violated),
            self.count(Status::Reached),
            self.count(Status::CannotJudge),
            self.properties.len() - self.target().count()
        )
    }

    /// The summary, each violation with its witness, and the properties that hold.
    pub fn text(&self) -> String {
        let mut s = format!("{}\n", self.summary());
        for why in &self.unreadable_listed {
            let _ = writeln!(s, "  unreadable: {why}");
        }
        for r in self.violated() {
            s.push_str(&r.violation_text());
        }
        let held = self
            .target()
            .filter(|r| matches!(r.status, Status::Holds | Status::Reached));
        let held: Vec<&str> = held.map(|r| r.name).collect();
        if !held.is_empty() {
            let _ = writeln!(s, "  hold over the wire: {}", held.join(", "));
        }
        s
    }
}

impl PropertyRow {
    /// `registry violation of NAME (RULES): seed S: detail`, then each witness exchange.
    pub fn violation_text(&self) -> String {
        let mut s = String::new();
        if let Some(w) = &self.witness {
            let _ = writeln!(
                s,
                "registry violation of {} ({}) in {} of {} cases; first: seed {}: {}",
                self.name,
                self.rules.join(", "),
                self.cases.violated,
                self.cases.total(),
                w.seed,
                w.detail
            );
            for e in &w.exchanges {
                let _ = writeln!(s, "    {e}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conform::profile::Suppress;

    fn row(name: &'static str, status: Status) -> PropertyRow {
        PropertyRow {
            name,
            kind: Kind::Always,
            rules: vec!["KEY-07"],
            judges: Judges::Target,
            status,
            cases: Counts {
                violated: usize::from(status == Status::Violated) * 2,
                ..Counts::default()
            },
            missing: Vec::new(),
            witness: (status == Status::Violated).then(|| CaseWitness {
                seed: 168,
                detail: "exchange 2 refused".into(),
                exchanges: Vec::new(),
            }),
            suppressed: None,
        }
    }

    /// A suppression names one property: its violation is no longer counted, and the
    /// line printed says what it hid; the other property's violation still counts.
    #[test]
    fn a_suppressed_property_is_printed_with_what_it_hides_and_only_it_is_hidden() {
        let mut r = Registry {
            properties: vec![
                row("invalid-key-answered-400-idempotency-key", Status::Violated),
                row("versions-rise-with-every-visible-change", Status::Violated),
                row("at-most-one-payment-per-order", Status::Holds),
            ],
            ..Registry::default()
        };
        let s = |p: &str| Suppress {
            property: p.into(),
            reason: "our keys are ASCII".into(),
        };
        let lines = r.suppress(&[
            s("invalid-key-answered-400-idempotency-key"),
            s("at-most-one-payment-per-order"),
        ]);
        assert_eq!(
            lines[0],
            "suppressed: invalid-key-answered-400-idempotency-key (our keys are ASCII): hides 2 violating cases; first: seed 168: exchange 2 refused"
        );
        assert!(lines[1].ends_with("hides nothing in this run"), "{lines:?}");
        let names: Vec<&str> = r.violated().iter().map(|r| r.name).collect();
        assert_eq!(names, ["versions-rise-with-every-visible-change"]);
    }
}
