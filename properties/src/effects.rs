//! Merchant effects: what a client does to an order (fulfil, close) and shows its payer,
//! judged against the platform's store (`properties/src/facts/effects.rs`). Captures are judged
//! by `client-never-charges-an-order-twice` and `client-never-closes-a-captured-order`.

use crate::evidence::{CLIENT_DB, DB_PLATFORM};
use crate::facts::effects::{Closing, Fulfilment};
use crate::property::{Predicate, Property};
use crate::witnessed::Witnessed;
use payhub_model::Rule;

fn closing(c: &Closing, what: &str) -> Witnessed {
    let status = c.status.map_or("unknown", |s| s.as_str());
    Witnessed::new(format!(
        "order {} (db {}) {what} at {}; the platform holds {} as {status}",
        c.order, c.db, c.at, c.payment
    ))
    .order(&c.order)
    .payment(c.payment)
}

fn fulfilment(f: &Fulfilment, what: &str) -> Witnessed {
    Witnessed::new(format!(
        "merchant-{} fulfilled order {} for {} at {} {what} (the platform holds it as {})",
        f.node,
        f.order,
        f.payment,
        f.at,
        f.status.as_str()
    ))
    .order(&f.order)
    .payment(f.payment)
}

/// RES-07: fulfil idempotently by Payment id, and only what succeeded.
pub const FULFILS_ONCE_WHEN_SUCCEEDED: Property = Property {
    name: "client-fulfils-an-order-once-when-succeeded",
    rules: &[Rule::FulfilByPaymentId],
    about: "A client fulfils each order at most once, and only for a Payment the platform holds as succeeded.",
    needs: DB_PLATFORM,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        let e = &f.effects;
        if let Some(u) = &e.fulfilled_unpaid {
            return Some(fulfilment(u, "before it succeeded"));
        }
        e.fulfilled_twice.as_ref().map(|t| {
            let first = t.first.map_or_else(String::new, |p| format!(" after {p}"));
            fulfilment(t, &format!("a second time{first}")).payment_if(t.first)
        })
    }),
};

/// CANCEL-02, RES-06, RES-07: close an order once, on a closed Payment, never one that
/// was fulfilled (an order is fulfilled or closed, never both).
pub const CLOSES_ONCE_ON_A_CLOSED_PAYMENT: Property = Property {
    name: "client-closes-an-order-once-on-a-closed-payment",
    rules: &[
        Rule::Cancel202NotCanceled,
        Rule::TerminalStatuses,
        Rule::FulfilByPaymentId,
    ],
    about: "A client database holds an order as closed (canceled or expired) at most once, only when the platform holds its Payment as canceled or expired, and never an order the client fulfilled (nor fulfils one it closed).",
    needs: DB_PLATFORM,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        let e = &f.effects;
        if let Some(c) = &e.closed_open {
            return Some(closing(c, "was closed"));
        }
        if let Some(c) = &e.closed_twice {
            return Some(closing(c, "was closed a second time"));
        }
        e.fulfilled_and_closed
            .as_ref()
            .map(|c| closing(c, "is both fulfilled and closed"))
    }),
};

/// RES-04 ("keep the order pending confirmation"), RES-06 (succeeded and failed are
/// known statuses), UNKNOWN-02 (a 202 means the result is unknown): an order is shown
/// paid or failed only on a Payment that is.
pub const PENDING_UNTIL_FINAL: Property = Property {
    name: "client-keeps-an-order-pending-until-its-payment-is-final",
    rules: &[
        Rule::ManualReviewClient,
        Rule::TerminalStatuses,
        Rule::UnknownResult,
    ],
    about: "A client database never holds an order as paid or failed while the platform holds its Payment processing or requires_action (manual_review among them): it keeps the order pending confirmation until the Payment is succeeded or failed.",
    needs: DB_PLATFORM,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        (f.effects.final_on_open.as_ref()).map(|c| closing(c, "was held paid or failed"))
    }),
};

/// WORDING-01, WORDING-02, RES-04: the payer message of the status table.
pub const MESSAGE_MATCHES_STATUS: Property = Property {
    name: "client-shows-the-status-table-message",
    rules: &[
        Rule::PausedMessage,
        Rule::ConfirmingMessage,
        Rule::ManualReviewClient,
    ],
    about: "A client shows \"temporarily unavailable\" on a 503 (and first), \"confirming\" only while the result is unknown, and keeps an order pending confirmation only for a manual_review Payment.",
    needs: CLIENT_DB,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        f.effects.wrong_message.as_ref().map(|m| {
            Witnessed::new(format!(
                "merchant-{} showed \"{}\" for {} at {}: {}",
                m.node, m.shown, m.subject, m.at, m.why
            ))
            .subject(&m.subject)
        })
    }),
};
