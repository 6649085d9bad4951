//! Merchant effects: what a client does to its orders and shows its payer, judged
//! against the platform's store (RES-07, CANCEL-02, RES-06, WORDING-01, WORDING-02,
//! RES-04).
//!
//! An order is fulfilled (`Decision::Fulfil`) at most once and only for a succeeded
//! Payment; it is closed (its database holds it canceled or expired) at most once and
//! only on a Payment the platform holds canceled or expired; never both; and the payer
//! message follows the status table. As in [`super::cadence`], the first witnesses and
//! the history behind them are part of a state's identity.

use super::attempts::Attempts;
use super::cadence::{ClientInputs, Input};
use super::note_first;
use payhub_model::client::{Decision, ObjectState, PayerMessage, Subject};
use payhub_model::event::{StoredOrder, What};
use payhub_model::{CowMap, Shared};
use payhub_model::{
    Environment, MerchantId, Millis, PaymentId, PaymentStatus, ResolutionStatus, Text,
};
use serde::Serialize;

/// A business order as the platform scopes it: merchant, environment, order number
/// (`merchant_order_no`'s scope).
pub type OrderKey = (MerchantId, Environment, Text);

/// History the effect properties need (see [`super::cadence`]'s module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct EffectHistory {
    /// The Payment each order was fulfilled for.
    pub fulfilled: CowMap<OrderKey, PaymentId>,
    /// The orders client databases hold as closed (canceled or expired), with their
    /// Payment (a mirror).
    pub closed: CowMap<(u8, Text), PaymentId>,
    /// Every order a client database ever held as closed, with the Payment of its
    /// latest closing: an order the database reopened was closed all the same.
    pub ever_closed: CowMap<(u8, Text), PaymentId>,
}

/// The effects family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Effects {
    /// Each in its own copy-on-write box, as the cadence family's history; `inputs` is
    /// read by the cadence family too.
    pub inputs: Shared<ClientInputs>,
    pub history: Shared<EffectHistory>,
    /// The first order fulfilled a second time.
    pub fulfilled_twice: Option<Box<Fulfilment>>,
    /// The first order fulfilled for a Payment the platform does not hold as succeeded.
    pub fulfilled_unpaid: Option<Box<Fulfilment>>,
    /// The first order closed a second time.
    pub closed_twice: Option<Box<Closing>>,
    /// The first order closed while the platform's Payment was not closed.
    pub closed_open: Option<Box<Closing>>,
    /// The first order both fulfilled and closed.
    pub fulfilled_and_closed: Option<Box<Closing>>,
    /// The first order held paid or failed while the platform held its Payment
    /// processing or requires_action (manual_review among them).
    pub final_on_open: Option<Box<Closing>>,
    /// The first payer message off the status table.
    pub wrong_message: Option<Box<WrongMessage>>,
}

/// Order `order` fulfilled for `payment` (held `status` by the platform), after `first`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Fulfilment {
    pub node: u8,
    pub order: Text,
    pub payment: PaymentId,
    pub status: PaymentStatus,
    pub first: Option<PaymentId>,
    pub at: Millis,
}

/// Order `order` of database `db` closed on `payment`, which the platform holds `status`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Closing {
    pub db: u8,
    pub order: Text,
    pub payment: PaymentId,
    pub status: Option<PaymentStatus>,
    pub at: Millis,
}

impl Closing {
    /// Order `order` of database `db` closed on `payment` at `at`, as the store holds it.
    fn boxed(
        db: u8,
        order: &Text,
        payment: PaymentId,
        attempts: &Attempts,
        at: Millis,
    ) -> Box<Self> {
        let status = attempts.payments.get(&payment).map(|p| p.status);
        let order = order.clone();
        Box::new(Closing {
            db,
            order,
            payment,
            status,
            at,
        })
    }
}

/// Merchant-`node` showed `message` about `subject` while handling `input`: `why` it is
/// off the table.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct WrongMessage {
    pub node: u8,
    pub subject: Text,
    pub shown: Text,
    pub why: &'static str,
    pub at: Millis,
}

/// The Payment of an order its database holds as closed: canceled or expired (an
/// expired order is closed as surely as a canceled one, and as wrongly if captured).
fn closed(order: &StoredOrder) -> Option<PaymentId> {
    matches!(
        order.status,
        Some(PaymentStatus::Canceled | PaymentStatus::Expired)
    )
    .then_some(order.payment_id)
    .flatten()
}

/// Whether the platform's store holds a Payment of `subject`'s order `processing`.
fn processing(attempts: &Attempts, subject: &Subject) -> bool {
    let Subject::Order(order) = subject else {
        return false;
    };
    attempts
        .payments
        .values()
        .any(|p| &p.merchant_order_no == order && p.status == PaymentStatus::Processing)
}

/// The merchant, environment and order number of `payment` in the platform's store.
fn order_key(attempts: &Attempts, payment: PaymentId, order: &Text) -> Option<OrderKey> {
    let p = attempts.payments.get(&payment)?;
    Some((p.merchant, p.environment, order.clone()))
}

impl Effects {
    /// Whether `what` may change this family.
    pub(super) fn changes(&self, what: &What) -> bool {
        match what {
            What::Delivered { .. } | What::TimedOut { .. } => self.inputs.changed_by(what),
            What::ClientDecided { decision, .. } => super::reads_decision(decision),
            What::OrderStored {
                db,
                order_no,
                stored,
                ..
            } => {
                let key = (*db, order_no.clone());
                let settled = matches!(
                    stored.status,
                    Some(PaymentStatus::Succeeded | PaymentStatus::Failed)
                );
                (settled && self.final_on_open.is_none())
                    || closed(stored) != self.history.closed.get(&key).copied()
            }
            _ => false,
        }
    }

    pub(super) fn observe(&mut self, at: Millis, what: &What, attempts: &Attempts) {
        match what {
            What::Delivered { .. } | What::TimedOut { .. } => self.inputs.observe(what),
            What::ClientDecided {
                node,
                subject,
                decision,
                ..
            } => match decision {
                Decision::Fulfil { payment } => {
                    if let Subject::Order(order) = subject {
                        self.on_fulfil(at, *node, order, *payment, attempts);
                    }
                }
                Decision::ShowPayer { message } => {
                    self.on_message(at, *node, subject, *message, attempts);
                }
                Decision::Applied {
                    object:
                        ObjectState::Payment {
                            resolution: ResolutionStatus::ManualReview,
                            ..
                        },
                    ..
                } => {
                    if let Subject::Order(order) = subject {
                        let applied = &mut self.inputs.applied_manual_review;
                        applied.insert(*node, order.clone());
                    }
                }
                Decision::PendingConfirmation => {
                    let applied = match subject {
                        Subject::Order(o) => self.inputs.applied_manual_review.get(node) == Some(o),
                        _ => false,
                    };
                    if !applied {
                        let why = "pending confirmation without a manual_review Payment applied";
                        self.wrong(at, *node, subject, "pending confirmation", why);
                    }
                }
                _ => {}
            },
            What::OrderStored {
                db,
                order_no,
                stored,
                ..
            } => self.on_order(at, *db, order_no, stored, attempts),
            _ => {}
        }
    }

    /// RES-07: fulfil once per order, by Payment id, and only a succeeded Payment.
    fn on_fulfil(
        &mut self,
        at: Millis,
        node: u8,
        order: &Text,
        payment: PaymentId,
        attempts: &Attempts,
    ) {
        let Some(key) = order_key(attempts, payment, order) else {
            return; // the platform's store is not observed: not judged
        };
        let status = attempts.payments[&payment].status;
        let first = self.history.fulfilled.get(&key).copied();
        let fulfilment = || {
            Box::new(Fulfilment {
                node,
                order: order.clone(),
                payment,
                status,
                first,
                at,
            })
        };
        let unpaid = status != PaymentStatus::Succeeded;
        note_first(&mut self.fulfilled_unpaid, unpaid, fulfilment);
        note_first(&mut self.fulfilled_twice, first.is_some(), fulfilment);
        self.history.fulfilled.entry(key.clone()).or_insert(payment);
        // Ever closed, not only closed now: a closing the database undid still closed it.
        let closing = self
            .history
            .ever_closed
            .iter()
            .find(|((_, o), p)| order_key(attempts, **p, o).as_ref() == Some(&key));
        if let Some(((db, _), p)) = closing {
            (self.fulfilled_and_closed)
                .get_or_insert_with(|| Closing::boxed(*db, order, *p, attempts, at));
        }
    }

    /// CANCEL-02, RES-06: an order is closed once, on a Payment the platform holds
    /// canceled or expired, and never after it was fulfilled. RES-04, RES-06: it is held
    /// paid or failed only once its Payment is.
    fn on_order(
        &mut self,
        at: Millis,
        db: u8,
        order: &Text,
        stored: &StoredOrder,
        attempts: &Attempts,
    ) {
        if let (Some(PaymentStatus::Succeeded | PaymentStatus::Failed), Some(payment)) =
            (stored.status, stored.payment_id)
        {
            let status = attempts.payments.get(&payment).map(|p| p.status);
            let open = matches!(
                status,
                Some(PaymentStatus::Processing | PaymentStatus::RequiresAction)
            );
            let closing = || Closing::boxed(db, order, payment, attempts, at);
            note_first(&mut self.final_on_open, open, closing);
        }
        let key = (db, order.clone());
        let Some(payment) = closed(stored) else {
            self.history.closed.remove(&key);
            return;
        };
        if self.history.closed.insert(key.clone(), payment).is_some() {
            return; // still closed
        }
        let status = attempts.payments.get(&payment).map(|p| p.status);
        let closing = || Closing::boxed(db, order, payment, attempts, at);
        let before = self.history.ever_closed.insert(key, payment);
        note_first(&mut self.closed_twice, before.is_some(), closing);
        let platform_closed = matches!(
            status,
            Some(PaymentStatus::Canceled | PaymentStatus::Expired)
        );
        let open = status.is_some() && !platform_closed;
        note_first(&mut self.closed_open, open, closing);
        let fulfilled = order_key(attempts, payment, order)
            .is_some_and(|k| self.history.fulfilled.contains_key(&k));
        note_first(&mut self.fulfilled_and_closed, fulfilled, closing);
    }

    /// WORDING-01, WORDING-02: "temporarily unavailable" only on a 503, and first on it;
    /// "confirming" only while the result is unknown (never on a definite 200 or 201), or
    /// while the platform's store holds the order's Payment `processing` (the status
    /// table: `processing` | `known` | "Submitted, being processed" | "Same as above").
    fn on_message(
        &mut self,
        at: Millis,
        node: u8,
        subject: &Subject,
        message: PayerMessage,
        attempts: &Attempts,
    ) {
        let input = self.inputs.of(node);
        let on_503 = matches!(input, Some(Input::Answer { status: 503, .. }));
        let shown = match message {
            PayerMessage::TemporarilyUnavailable => {
                self.inputs.showed_unavailable.insert(node);
                if on_503 {
                    return;
                }
                "temporarily unavailable without a 503"
            }
            PayerMessage::Confirming => match input {
                _ if on_503 && !self.inputs.showed_unavailable.contains(&node) => {
                    "confirming on a 503, before temporarily unavailable"
                }
                Some(Input::Answer { status, .. })
                    if (200..300).contains(&status)
                        && status != 202
                        && !processing(attempts, subject) =>
                {
                    "confirming on a definite 2xx answer"
                }
                _ => return,
            },
        };
        self.wrong(at, node, subject, message_text(message), shown);
    }

    fn wrong(&mut self, at: Millis, node: u8, subject: &Subject, shown: &str, why: &'static str) {
        self.wrong_message.get_or_insert_with(|| {
            let (subject, shown) = (Text::format(format_args!("{subject}")), shown.into());
            Box::new(WrongMessage {
                node,
                subject,
                shown,
                why,
                at,
            })
        });
    }
}

fn message_text(message: PayerMessage) -> &'static str {
    match message {
        PayerMessage::TemporarilyUnavailable => "temporarily unavailable",
        PayerMessage::Confirming => "confirming",
    }
}
