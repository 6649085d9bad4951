//! The merchant journal: what only the merchant's database knows, told to the sandbox
//! (`POST /__sandbox/journal`, JSON Lines):
//!
//! - `{"order":"ORDER-1","state":"paid","payment":"pay_demo_001","version":3}`: the state
//!   shown to the payer (`paid`, `failed`, `canceled`, `pending`) from that Payment version;
//! - `{"order":"ORDER-1","fulfilled":"pay_demo_001"}`: fulfilled for that Payment;
//! - `{"order":"ORDER-1-retry","cart":"CART-7"}`: the order belongs to that purchase.
//!
//! The verdict folds states and fulfilments, in the order posted, after the session's
//! events as the merchant database's (`OrderStored`, a `Fulfil` decision), so the
//! properties over the database judge them as a client model's. Carts replace the wire's
//! reading of "the same purchase" ([`super::business`]) for that merchant
//! (`OrderInPurchase`). The events export ends with the same events. A post is all or
//! nothing: a bad line refuses it, naming the line and the field.

use super::business::{Orders, db};
use payhub_model::client::{Decision, Subject};
use payhub_model::event::{BusinessOrder, Event, StoredOrder, What};
use payhub_model::{Environment, MerchantId, Millis, PaymentId, PaymentStatus, Rule, Text};
use payhub_properties::Facts;
use payhub_properties::verdict::WireSide;
use std::collections::BTreeMap;

type Owner = (MerchantId, Environment);

/// What a line tells.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Told {
    Shown {
        state: Option<PaymentStatus>,
        payment: Option<PaymentId>,
        version: u32,
    },
    Fulfilled(PaymentId),
    Cart(Text),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    at: Millis,
    owner: Owner,
    order: Text,
    told: Told,
}

/// The journal posted so far.
#[derive(Clone, Debug, Default)]
pub struct Journal {
    lines: Vec<Line>,
}

/// A refused post: the line (from 1), the field, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "journal line {}: field `{}`: {}",
            self.line, self.field, self.message
        )
    }
}

const FIELDS: [&str; 6] = ["order", "state", "payment", "version", "fulfilled", "cart"];

impl Journal {
    /// Reads and keeps a post of `owner`'s journal at `at`, or refuses all of it.
    /// `orders` says which order numbers were sent, `facts` which order each Payment is of.
    pub fn post(
        &mut self,
        at: Millis,
        owner: Owner,
        body: &str,
        orders: &Orders,
        facts: &Facts,
    ) -> Result<usize, Refused> {
        let mut read = Vec::new();
        for (i, text) in body.lines().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            let line = i + 1;
            let refuse = |field: &str, message: &dyn std::fmt::Display| Refused {
                line,
                field: field.to_owned(),
                message: message.to_string(),
            };
            let value: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| refuse("(line)", &format_args!("not a JSON object: {e}")))?;
            let Some(object) = value.as_object() else {
                return Err(refuse("(line)", &"not a JSON object"));
            };
            if let Some(k) = object.keys().find(|k| !FIELDS.contains(&k.as_str())) {
                let fields = FIELDS.join(", ");
                let why = format!("unknown field `{k}` (the fields are {fields})");
                return Err(refuse(k, &why));
            }
            let given = |field: &str| object.get(field).filter(|v| !v.is_null());
            let text_of = |field: &'static str| -> Result<Option<&str>, Refused> {
                match given(field) {
                    None => Ok(None),
                    Some(serde_json::Value::String(s)) if !s.is_empty() => Ok(Some(s)),
                    Some(_) => Err(refuse(field, &"must be a non-empty string")),
                }
            };
            let payment_of = |field: &'static str| -> Result<Option<PaymentId>, Refused> {
                let Some(s) = text_of(field)? else {
                    return Ok(None);
                };
                let why = format!("'{s}' is not a Payment id (pay_demo_001)");
                let id = serde_json::from_value(serde_json::Value::String(s.to_owned()));
                id.map(Some).map_err(|_| refuse(field, &why))
            };
            let order: Text = text_of("order")?
                .ok_or_else(|| refuse("order", &"missing: every line names its order"))?
                .into();
            if !orders.sent(owner, &order) {
                let why = format!(
                    "order {order} was never sent to the sandbox by merchant {} ({}): post the journal after the order's create",
                    owner.0.0, owner.1
                );
                return Err(refuse("order", &why));
            }
            let kinds: Vec<&str> = ["state", "fulfilled", "cart"]
                .into_iter()
                .filter(|k| given(k).is_some())
                .collect();
            let told = match kinds[..] {
                ["state"] => {
                    let name = text_of("state")?.unwrap_or_default();
                    // What the database then holds of the Payment.
                    let state = match name {
                        "paid" => Some(PaymentStatus::Succeeded),
                        "failed" => Some(PaymentStatus::Failed),
                        "canceled" => Some(PaymentStatus::Canceled),
                        "pending" => None,
                        _ => {
                            let why = format!("'{name}' is not paid, failed, canceled or pending");
                            return Err(refuse("state", &why));
                        }
                    };
                    let payment = payment_of("payment")?;
                    let whole = "must be the Payment's version, a whole number";
                    let version = given("version")
                        .map(|v| v.as_u64().and_then(|v| u32::try_from(v).ok()))
                        .map(|v| v.ok_or_else(|| refuse("version", &whole)))
                        .transpose()?;
                    if state.is_some() && payment.is_none() {
                        let why =
                            format!("missing: a {name} order names the Payment it was shown from");
                        return Err(refuse("payment", &why));
                    }
                    if payment.is_some() && version.is_none() {
                        let why = "missing: the Payment's version the order was shown from";
                        return Err(refuse("version", &why));
                    }
                    let version = version.unwrap_or(0);
                    Told::Shown {
                        state,
                        payment,
                        version,
                    }
                }
                ["fulfilled"] => Told::Fulfilled(payment_of("fulfilled")?.unwrap_or(PaymentId(0))),
                ["cart"] => Told::Cart(text_of("cart")?.unwrap_or_default().into()),
                _ => {
                    let why = "a line has exactly one of `state`, `fulfilled` and `cart`";
                    return Err(refuse("state", &why));
                }
            };
            let named = match &told {
                Told::Shown { payment, .. } => payment.map(|p| ("payment", p)),
                Told::Fulfilled(p) => Some(("fulfilled", *p)),
                Told::Cart(_) => None,
            };
            if let Some((field, p)) = named {
                let of = facts.attempts.payments.get(&p);
                let theirs = of.is_some_and(|s| {
                    (s.merchant, s.environment) == owner && s.merchant_order_no == order
                });
                if !theirs {
                    let why = format!("{p} is not a Payment of order {order} in this sandbox");
                    return Err(refuse(field, &why));
                }
            }
            read.push(Line {
                at,
                owner,
                order,
                told,
            });
        }
        let n = read.len();
        self.lines.extend(read);
        Ok(n)
    }

    /// The owners whose journal names carts: their purchases are read from the carts.
    fn carts(&self) -> BTreeMap<(Owner, Text), Text> {
        let mut carts = BTreeMap::new();
        for l in &self.lines {
            if let Told::Cart(cart) = &l.told {
                carts.insert((l.owner, l.order.clone()), cart.clone());
            }
        }
        carts
    }

    /// The reading of "the same purchase" the verdict uses for the session.
    pub fn reading(&self) -> String {
        if self.carts().is_empty() {
            super::business::READING.to_owned()
        } else {
            "the cart ids of the merchant journal (POST /__sandbox/journal): orders of one cart are one purchase, an order named in no cart is a purchase of its own".to_owned()
        }
    }

    /// The journal as the merchant database's events, each at its post's time but not
    /// before `end` (the session's last event: the journal is judged after the session,
    /// each line against the store as the verdict finds it): its states as
    /// `OrderStored`, its fulfilments as `Fulfil` decisions, then, for an owner whose
    /// journal names carts, each order of its Payments in `facts` filed under its cart
    /// or alone (`OrderInPurchase`). The verdict folds them; the events export ends
    /// with them, so `judge` of it folds the same.
    pub fn events(&self, end: Millis, facts: &Facts) -> Vec<Event> {
        let at = |l: &Line| l.at.max(end);
        let mut events = Vec::new();
        let mut held: BTreeMap<(u8, Text), StoredOrder> = BTreeMap::new();
        for l in &self.lines {
            let what = match &l.told {
                Told::Shown {
                    state,
                    payment,
                    version,
                } => {
                    let key = (db(l.owner), l.order.clone());
                    let stored = StoredOrder {
                        payment_id: *payment,
                        version: *version,
                        status: state.or_else(|| payment.map(|_| PaymentStatus::Processing)),
                    };
                    let was = held.insert(key, stored.clone());
                    What::OrderStored {
                        db: db(l.owner),
                        order_no: l.order.clone(),
                        was,
                        stored,
                    }
                }
                Told::Fulfilled(payment) => What::ClientDecided {
                    node: node_of(l.owner),
                    subject: Subject::Order(l.order.clone()),
                    decision: Decision::Fulfil { payment: *payment },
                    rule: Rule::FulfilByPaymentId,
                },
                Told::Cart(_) => continue,
            };
            events.push(Event { at: at(l), what });
        }
        let carts = self.carts();
        let Some(last) = self.lines.iter().map(at).max() else {
            return events;
        };
        // One pass over the Payments: each order of an owner whose journal names carts,
        // with its Payments.
        let owners: std::collections::BTreeSet<Owner> = carts.keys().map(|(o, _)| *o).collect();
        let mut orders: BTreeMap<(Owner, Text), Vec<PaymentId>> = BTreeMap::new();
        for (p, s) in facts.attempts.payments.iter() {
            let owner = (s.merchant, s.environment);
            if owners.contains(&owner) {
                let key = (owner, s.merchant_order_no.clone());
                orders.entry(key).or_default().push(*p);
            }
        }
        for ((owner, order), payments) in orders {
            let cart = carts.get(&(owner, order.clone())).cloned();
            let business = BusinessOrder {
                db: db(owner),
                order: cart.map_or(order.clone(), |c| Text::format(format_args!("cart {c}"))),
            };
            let what = What::OrderInPurchase {
                merchant: owner.0,
                environment: owner.1,
                order_no: order,
                payments,
                business,
            };
            events.push(Event { at: last, what });
        }
        events
    }
}

/// The facts and the wire side with `events` (a journal's [`Journal::events`]) folded in.
pub fn fold(events: &[Event], facts: &Facts, mut side: WireSide) -> (Facts, WireSide) {
    let mut folded = payhub_model::Shared::new(facts.clone());
    for event in events {
        Facts::observe(&mut folded, event);
        side.observe(event);
    }
    (Facts::clone(&folded), side)
}

/// The merchant node that stands for an owner's process (its first key's sender).
fn node_of(owner: Owner) -> u8 {
    payhub_model::api_keys::default_api_keys()
        .into_iter()
        .find(|k| (k.merchant, k.environment) == owner)
        .map_or(0, |k| payhub_sim::worlds::node_of(k.id))
}
