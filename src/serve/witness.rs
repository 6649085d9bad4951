//! The entries of a session that witness a violation: found from what the violation
//! names ([`Named`], as Elle explains an anomaly by the operations it cites), widened
//! through the session's state (an order to its Payments, a Payment to its attempts),
//! then every trace entry naming one as a whole word, with the rest of its HTTP
//! exchange. [`super::diagrams`] draws them.

use super::record::Record;
use payhub_model::RequestId;
use payhub_properties::{Named, World};
use payhub_sim::{Trace, TraceLine, TraceWhat};
use std::collections::BTreeSet;

/// What the verdict's diagrams are drawn from: the session's state and its record.
pub struct Session<'a> {
    pub world: &'a World,
    pub record: &'a Record,
    /// What the merchant told of its database ([`super::journal`]).
    pub journal: &'a super::journal::Journal,
}

impl<'a> Session<'a> {
    /// A sandbox's session as it stands.
    pub fn of(sandbox: &'a super::sandbox::Sandbox) -> Session<'a> {
        Session {
            world: sandbox.world(),
            record: sandbox.record(),
            journal: sandbox.journal(),
        }
    }

    /// Every entry held, with the segment it is in.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&Trace, &TraceLine)> {
        self.record
            .segments()
            .into_iter()
            .flat_map(|t| t.events.iter().map(move |e| (t, e)))
    }

    /// The entries held that `keep` keeps, as a trace of their own; `None` if none.
    pub(crate) fn held(&self, keep: impl Fn(&Trace, &TraceLine) -> bool) -> Option<Trace> {
        let events: Vec<TraceLine> = self
            .entries()
            .filter(|(t, e)| keep(t, e))
            .map(|(_, e)| e.clone())
            .collect();
        if events.is_empty() {
            return None;
        }
        let mut trace = self.record.segments()[1].clone();
        trace.events = events;
        Some(trace)
    }
}

/// `named`, with the Payments filed under a named business order and the acquirer's
/// attempts on a named Payment.
pub(crate) fn widen(named: &Named, world: &World) -> Named {
    let mut widened = named.clone();
    for (payment, business) in world.facts.money.payment_business.iter() {
        if named.orders.iter().any(|o| *o == business.order) && !widened.payments.contains(payment)
        {
            widened.payments.push(*payment);
        }
    }
    for (attempt, charge) in world.acquirer.charges.iter() {
        if widened.payments.contains(&charge.payment) && !widened.attempts.contains(attempt) {
            widened.attempts.push(*attempt);
        }
    }
    widened
}

/// The trace entries that witness what a violation names: those that name one of its
/// identifiers as a whole word, the exchanges of the requests it names, and the rest of
/// the exchanges of those entries.
pub(crate) struct WitnessEntries {
    words: BTreeSet<String>,
    exchanges: BTreeSet<RequestId>,
}

impl WitnessEntries {
    /// The witness of `named` among `entries` (each with its trace); `None` if it names
    /// nothing.
    pub(crate) fn of<'t>(
        named: &Named,
        entries: impl Iterator<Item = (&'t Trace, &'t TraceLine)>,
    ) -> Option<WitnessEntries> {
        let words: BTreeSet<String> = named.words().collect();
        if words.is_empty() {
            return None;
        }
        let mut exchanges: BTreeSet<RequestId> = named.requests.iter().copied().collect();
        exchanges.extend(
            entries
                .filter(|(t, e)| names_one(&t.describe(e), &words))
                .filter_map(|(_, e)| exchange_of(e)),
        );
        Some(WitnessEntries { words, exchanges })
    }

    /// Whether entry `e` of trace `t` is part of the witness.
    pub(crate) fn keeps(&self, t: &Trace, e: &TraceLine) -> bool {
        exchange_of(e).is_some_and(|id| self.exchanges.contains(&id))
            || names_one(&t.describe(e), &self.words)
    }
}

/// The HTTP exchange a trace entry belongs to.
pub(crate) fn exchange_of(e: &TraceLine) -> Option<RequestId> {
    match &e.what {
        TraceWhat::Request { id, .. }
        | TraceWhat::Response { id, .. }
        | TraceWhat::Lost { id, .. }
        | TraceWhat::Timeout { id }
        | TraceWhat::Duplicated { id }
        | TraceWhat::Fail500 { id, .. } => Some(*id),
        _ => None,
    }
}

/// Whether `text` has one of `names` as a whole word of an identifier's characters
/// (`ORDER-1` is not in `ORDER-1-retry`).
pub(crate) fn names_one(text: &str, names: &BTreeSet<String>) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .any(|w| names.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_whole_word() {
        let names: BTreeSet<String> = ["ORDER-1".to_owned()].into();
        assert!(names_one(
            r#"{"merchant_order_no":"ORDER-1","amount":1}"#,
            &names
        ));
        assert!(!names_one(
            r#"{"merchant_order_no":"ORDER-1-retry"}"#,
            &names
        ));
        assert!(!names_one("ORDER-10", &names));
    }
}
