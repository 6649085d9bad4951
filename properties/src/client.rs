//! Safety properties of merchant integrations: what a client following the contract
//! never does, whatever faults the contract allows. Anti-pattern clients break them.

use crate::property::{Predicate, Property};
use payhub_model::{LedgerEntry, Rule};
use std::collections::BTreeMap;

/// EFFECT-01, UNKNOWN-03, RES-04: one business order is captured at most once, however
/// the client retried, re-keyed, renumbered or re-charged it.
pub const ORDER_CHARGED_ONCE: Property = Property {
    name: "client-never-charges-an-order-twice",
    rules: &[
        Rule::OneBusinessEffect,
        Rule::NeverSwitchKeyOnUnknown,
        Rule::ManualReviewClient,
        Rule::PersistBeforeSend,
    ],
    about: "The ledger captures each business order of a client at most once (across every Payment its submissions created).",
    predicate: Predicate::Always(|_, w| {
        let mut captured: BTreeMap<&(u8, String), u32> = BTreeMap::new();
        for e in &w.acquirer.ledger.entries {
            if let LedgerEntry::Capture { payment, .. } = e {
                if let Some(business) = w.facts.payment_business.get(payment) {
                    let n = captured.entry(business).or_default();
                    *n += 1;
                    if *n > 1 {
                        return Some(format!("order {} was captured {n} times", business.1));
                    }
                }
            }
        }
        None
    }),
};

/// GEN-04, GEN-05, GEN-06, UNKNOWN-03: one business submission, one key.
pub const ONE_KEY_PER_SUBMISSION: Property = Property {
    name: "client-sends-one-key-per-submission",
    rules: &[
        Rule::OneKeyPerSubmission,
        Rule::RandomKeyPersistedFirst,
        Rule::PersistBeforeSend,
        Rule::NeverSwitchKeyOnUnknown,
        Rule::RetrySameKey,
    ],
    about: "Every request of one business submission (order, sequence) carries the same Idempotency-Key.",
    predicate: Predicate::Always(|_, w| {
        w.facts.second_key.as_ref().map(|(_, order, seq)| {
            format!("submission {seq} of {order} was sent under a second key")
        })
    }),
};

/// WEBHOOK-02: a client never applies an older version over a newer one.
pub const VERSIONS_NEVER_GO_BACK: Property = Property {
    name: "client-never-applies-an-older-version",
    rules: &[Rule::LatestVersionWins],
    about: "The Payment version a client has applied to an order never decreases.",
    predicate: Predicate::Always(|_, w| {
        w.facts
            .version_regressed
            .as_ref()
            .map(|(_, order)| format!("order {order} went back to an older version"))
    }),
};
