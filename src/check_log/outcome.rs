//! What `check-log` found, as the outcome document (its JUnit).

use crate::outcome::{Item, ItemResult, Outcome, Part, verdicts};

/// Every file judged as the outcome document: a part per file, an item per property;
/// unreadable entries make one skipped item (the file's run is incomplete).
pub fn outcome(all: &[super::Judged]) -> Outcome {
    let suites: Vec<Part> = all
        .iter()
        .map(|j| {
            let unread = (j.skipped > 0)
                .then(|| format!("{} of {} entries unreadable", j.skipped, j.entries));
            let cut = j.stopped.clone().or(unread);
            let mut cases = verdicts("check-log", &j.verdicts, cut.as_deref());
            if j.skipped > 0 {
                cases.push(Item::new(
                    "check-log",
                    "entries read",
                    ItemResult::Skipped {
                        message: format!(
                            "not judged: {} of {} entries unreadable",
                            j.skipped, j.entries
                        ),
                    },
                ));
            }
            Part::new(format!("check-log {}", j.file.display()), cases)
        })
        .collect();
    Outcome::new("payhub-verify check-log", suites)
}
