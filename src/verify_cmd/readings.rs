//! The contract's contradictions on what a client reads from a round of refusals, each
//! reading judged: S13's 503 "not accepted" against the reference code's RESULT_UNKNOWN
//! after five 503s (A-S13-REFERENCE-CODE), and the same for 429 (A-429-REFERENCE-CODE).
//! Each reading runs in its own preset and its own sweep; a row per reading says what
//! each found.

use crate::simulate_cmd::SweepSummary;
use payhub_model::client::After503;
use payhub_properties::checker::PresetReport;
use payhub_properties::presets::{OUTAGE_OTHER_READINGS_PRESET, OUTAGE_PRESET};
use payhub_sim::{Readings, reading_name};
use serde::Serialize;

/// One reading of one contradiction, with the checker's and the sweep's verdicts.
#[derive(Clone, Debug, Serialize)]
pub struct ReadingRow {
    /// The assumption that records the contradiction.
    pub assumption: &'static str,
    /// The client parameter: `after_503` or `after_429`.
    pub parameter: &'static str,
    /// `not_accepted` or `result_unknown`.
    pub reading: &'static str,
    /// Whether it is the reference client's reading (the model's default).
    pub reference: bool,
    /// The preset that runs the clients with it.
    pub preset: &'static str,
    pub checker: String,
    /// The sweep's settings (`--after-503 … --after-429 …`, or the default) and verdict.
    pub sweep: String,
}

/// The reading of one contradiction among a client's readings.
type ReadingOf = fn(Readings) -> After503;

/// The rows: each contradiction, each reading, the reference client's first.
pub fn readings(
    presets: &[PresetReport],
    reference: &SweepSummary,
    other: Option<&SweepSummary>,
) -> Vec<ReadingRow> {
    let sides = [
        (Readings::default(), OUTAGE_PRESET, Some(reference), true),
        (
            Readings::other(),
            OUTAGE_OTHER_READINGS_PRESET,
            other,
            false,
        ),
    ];
    let contradictions: [(&str, &str, ReadingOf); 2] = [
        ("A-S13-REFERENCE-CODE", "after_503", |r| r.after_503),
        ("A-429-REFERENCE-CODE", "after_429", |r| r.after_429),
    ];
    let mut rows = Vec::new();
    for (assumption, parameter, of) in contradictions {
        for (readings, preset, sweep, is_reference) in sides {
            rows.push(ReadingRow {
                assumption,
                parameter,
                reading: reading_name(of(readings)),
                reference: is_reference,
                preset,
                checker: checker_verdict(presets.iter().find(|p| p.name == preset)),
                sweep: format!(
                    "{}: {}",
                    readings.notation(),
                    sweep.map_or_else(|| "not run".to_owned(), sweep_verdict)
                ),
            });
        }
    }
    rows
}

fn checker_verdict(preset: Option<&PresetReport>) -> String {
    let Some(p) = preset else {
        return "not run".into();
    };
    let bad: Vec<&str> = super::report::failing(p).map(|q| q.name).collect();
    match (bad.is_empty(), p.complete) {
        (false, _) => format!("FAILED: {}", bad.join(", ")),
        (true, false) => format!("not judged (incomplete after {} states)", p.unique_states),
        (true, true) => format!("all hold ({} states)", p.unique_states),
    }
}

fn sweep_verdict(s: &SweepSummary) -> String {
    if s.seeds == 0 {
        return "not run".into();
    }
    let verdict = match s.exit_code() {
        1 => "FAILED",
        3 => "not judged (incomplete)",
        _ => "all hold",
    };
    format!(
        "{verdict}: {} seeds, {} violations, {} left a submission unresolved",
        s.seeds, s.violations, s.liveness_failures
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row per reading of each contradiction; each side's verdict is its own run's: a
    /// sweep with a violation fails its reading's rows only, a preset not run is said so.
    #[test]
    fn rate_04_rate_01_each_reading_gets_its_own_verdicts() {
        let reference = SweepSummary {
            seeds: 10,
            seeds_asked: 10,
            ..SweepSummary::default()
        };
        let other = SweepSummary {
            violations: 1,
            ..reference.clone()
        };
        let rows = readings(&[], &reference, Some(&other));
        let cells: Vec<(&str, &str, bool)> = rows
            .iter()
            .map(|r| (r.parameter, r.reading, r.reference))
            .collect();
        assert_eq!(
            cells,
            [
                ("after_503", "not_accepted", true),
                ("after_503", "result_unknown", false),
                ("after_429", "result_unknown", true),
                ("after_429", "not_accepted", false),
            ]
        );
        for r in &rows {
            assert_eq!(r.checker, "not run");
            assert_eq!(r.sweep.contains("FAILED"), !r.reference, "{}", r.sweep);
        }
        let rows = readings(&[], &reference, None);
        assert!(rows[1].sweep.ends_with("not run"), "{}", rows[1].sweep);
        let md = crate::outcome::doc::markdown(&crate::report::page::readings(&rows));
        assert!(
            md.contains("| `A-S13-REFERENCE-CODE` | `after_503=not_accepted` (reference) |"),
            "{md}"
        );
    }
}
