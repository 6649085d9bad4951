//! The report's silent points: per point of `readings.rs`, the readings the target's
//! answers showed, each with its first exchange and its cases, or "not exercised";
//! ordered as [`Point::all`], no wall time.

use super::readings::{Pins, Point, Reading};
use serde::Serialize;
use std::fmt::Write as _;

/// A reading a target showed.
#[derive(Clone, Debug, Serialize)]
pub struct Shown {
    #[serde(skip)]
    pub reading: Reading,
    pub name: &'static str,
    pub what: &'static str,
    /// Whether it is the model's own reading.
    pub model: bool,
    /// The seed of the first case that showed it, and its exchange.
    pub seed: u64,
    pub first: String,
    pub cases: usize,
}

/// One silent point.
#[derive(Clone, Debug, Serialize)]
pub struct PointRow {
    #[serde(skip)]
    pub point: Point,
    pub name: &'static str,
    pub assumption: &'static str,
    /// The model's own reading.
    pub model: &'static str,
    /// The reading the profile pins, if any.
    pub pinned: Option<&'static str>,
    /// Empty: not exercised.
    pub shown: Vec<Shown>,
}

pub fn rows(pins: &Pins) -> Vec<PointRow> {
    let row = |p: Point| PointRow {
        point: p,
        name: p.name(),
        assumption: p.assumption(),
        model: p.readings()[0].name(),
        pinned: pins.get(&p).map(|r| r.name()),
        shown: Vec::new(),
    };
    Point::all().map(row).collect()
}

/// Adds the readings one conforming case showed.
pub fn add(rows: &mut [PointRow], seed: u64, readings: &[(Reading, String)]) {
    for (r, first) in readings {
        let Some(row) = rows.iter_mut().find(|row| row.point == r.point()) else {
            continue;
        };
        match row.shown.iter_mut().find(|s| s.reading == *r) {
            Some(s) => s.cases += 1,
            None => row.shown.push(Shown {
                reading: *r,
                name: r.name(),
                what: r.text(),
                model: r.is_model(),
                seed,
                first: first.clone(),
                cases: 1,
            }),
        }
    }
}

/// `label` for the point's readings: `posts_only (3 cases)`, or "not exercised".
pub(super) fn taken(row: &PointRow) -> String {
    if row.shown.is_empty() {
        return "not exercised".into();
    }
    let shown = |s: &Shown| {
        let own = if s.model { ", the model's" } else { "" };
        format!("{} ({} cases{own})", s.name, s.cases)
    };
    row.shown.iter().map(shown).collect::<Vec<_>>().join(", ")
}

pub fn text(rows: &[PointRow]) -> String {
    let mut s = String::from("silent points (the reading the target's answers showed):\n");
    for row in rows {
        let pin = (row.pinned).map_or(String::new(), |p| format!(", pinned {p}"));
        let _ = writeln!(
            s,
            "  {} ({}{pin}): {}",
            row.name,
            row.assumption,
            taken(row)
        );
        for shown in &row.shown {
            let _ = writeln!(
                s,
                "    {}: {}; first: seed {}, {}",
                shown.name, shown.what, shown.seed, shown.first
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_shows_its_readings_or_not_exercised() {
        let pins: Pins = [(Point::PauseScope, Reading::PauseCreatesOnly)]
            .into_iter()
            .collect();
        let mut rows = rows(&pins);
        let shown = vec![(Reading::LimitPostsOnly, "round 2: GET … → 200".to_owned())];
        add(&mut rows, 7, &shown);
        add(&mut rows, 9, &shown);
        let t = text(&rows);
        assert!(
            t.contains("rate_limit_scope (A-RATE-SCOPE): posts_only (2 cases)"),
            "{t}"
        );
        assert!(t.contains("first: seed 7, round 2"), "{t}");
        assert!(
            t.contains("pause_scope (A-PAUSE-SCOPE, pinned creates_only): not exercised"),
            "{t}"
        );
        let mut blocks = Vec::new();
        super::super::page::silent(&mut blocks, &rows);
        let m = crate::outcome::doc::markdown(&blocks);
        assert!(
            m.contains("| `key_charset` | `A-KEY-LENGTH` | `any_character` | not exercised |"),
            "{m}"
        );
    }
}
