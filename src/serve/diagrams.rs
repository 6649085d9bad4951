//! The verdict's diagrams: for each violated property, a sequence diagram of the entries
//! that witness it ([`super::witness`]), with the property as a note at the end. A
//! violation naming nothing the record holds is said so.

use super::witness::{Session, WitnessEntries, exchange_of, widen};
use payhub_model::RequestId;
use payhub_properties::verdict::Verdict;
use payhub_sim::Trace;
use std::collections::BTreeSet;

/// Entries beyond which a witness diagram is cut (the earliest are kept).
const WITNESS_LINES_MAX: usize = 200;

impl Session<'_> {
    /// The witness of violated property `v` drawn, every item marked as the witness,
    /// with a line saying so if it was cut; `None` if the violation names no exchange held.
    pub fn witness_drawing(&self, v: &Verdict) -> Option<(payhub_sim::Diagram, String)> {
        let (trace, cut) = self.witness_trace(v)?;
        let rules = v.rules.join(", ");
        let note = format!(
            "{} [{rules}]: {}",
            v.name,
            v.detail.as_deref().unwrap_or_default()
        );
        Some((trace.to_diagram(Some(&note), |_| true), cut))
    }

    /// The entries that witness `v` as a trace of their own (the first
    /// [`WITNESS_LINES_MAX`]), with a line saying so if it was cut.
    fn witness_trace(&self, v: &Verdict) -> Option<(Trace, String)> {
        // A wire property names its witness exchanges; a property over the world's facts
        // names orders, Payments, attempts, keys and requests.
        let mut trace = match (&v.witness, &v.named) {
            (Some(w), _) => {
                let ids: BTreeSet<RequestId> = w.entries.iter().map(|s| s.id).collect();
                self.held(|_, e| exchange_of(e).is_some_and(|id| ids.contains(&id)))
            }
            (None, Some(named)) => {
                let witness = WitnessEntries::of(&widen(named, self.world), self.entries())?;
                self.held(|t, e| witness.keeps(t, e))
            }
            (None, None) => None,
        }?;
        let mut cut = String::new();
        if trace.events.len() > WITNESS_LINES_MAX {
            cut = format!(
                "The first {WITNESS_LINES_MAX} of {} witness entries are drawn.",
                trace.events.len()
            );
            trace.events.truncate(WITNESS_LINES_MAX);
        }
        Some((trace, cut))
    }
}
