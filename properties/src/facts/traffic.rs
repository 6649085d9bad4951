//! Traffic: how many requests a client's database sends for one business submission, and
//! what the contract's schedules allow it (RETRY-03, SCHED-01, QUERY-06).
//!
//! A record per order of a client database: the submission it is on (GEN-02's sequence
//! number), the requests sent for it (its creates or confirms, and the queries of the
//! order's Payment by id or by order number), and its *openings*: the events after which
//! the contract allows a client a fresh round of tries and a fresh query schedule. The
//! facts only count and keep the densest submission (the most requests per opening);
//! `client-traffic-within-the-schedules` judges it against the contract's schedules.
//!
//! An opening is the submission's first request, and every event that may leave a
//! client's result unknown or asks it for a new request: a timeout or a 202 answered to a
//! server of the database, a 5xx other than 503 (UNKNOWN-02), a command, and a crash
//! (the restart that follows it included). They are counted per database, not per order (a timeout is not tied to an
//! order here), so the allowance is generous; a 503 or a "not found" opens nothing: they
//! are definite answers.

use payhub_model::event::What;
use payhub_model::{CowMap, Endpoint, ErrorCode, PaymentId, Shared, Text};
use serde::Serialize;

/// One order's count.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct OrderTraffic {
    /// The submission counted (GEN-02's sequence number).
    pub seq: u32,
    /// Requests sent for it: creates or confirms, and queries of the order's Payment.
    pub sent: u32,
    /// Its database's openings when the submission began.
    pub openings_at_start: u32,
}

/// A submission's count: its database had sent `sent` requests for it, with `openings`
/// since it began. No time: when a count was reached is history that would tell apart
/// states the count alone does not (the checker hashes the facts).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Density {
    pub db: u8,
    pub order: Text,
    pub seq: u32,
    pub sent: u32,
    pub openings: u32,
}

impl Density {
    /// Whether this count has more requests per opening than `other` (an opening at
    /// least: the submission's first request is one).
    fn denser_than(&self, other: &Density) -> bool {
        u64::from(self.sent) * u64::from(other.openings.max(1))
            > u64::from(other.sent) * u64::from(self.openings.max(1))
    }
}

/// The database each client node writes, as its submissions name it (the cadence
/// family's history).
type NodeDb = CowMap<u8, u8>;

/// The traffic family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Traffic {
    /// Openings per database (see the module doc).
    pub openings: CowMap<u8, u32>,
    /// The Payment each database holds for an order.
    pub payment_order: CowMap<(u8, PaymentId), Text>,
    /// Per (database, order): the current submission's count.
    pub orders: CowMap<(u8, Text), OrderTraffic>,
    /// The densest count any submission reached (the first such: a later one replaces
    /// it only when denser).
    pub densest: Option<Shared<Density>>,
}

impl Traffic {
    /// Whether `what` changes this family.
    pub(super) fn changes(&self, what: &What, node_db: &NodeDb) -> bool {
        match what {
            What::ClientSends { held: false, .. } => true,
            What::OrderStored { stored, .. } => stored.payment_id.is_some(),
            What::Delivered { to, response, .. } => {
                node_db.contains_key(to) && opens(response.status, response.error_code())
            }
            What::TimedOut { node, .. } | What::Commanded { node, .. } | What::Crashed { node } => {
                node_db.contains_key(node)
            }
            _ => false,
        }
    }

    /// `node_db` as the event left it.
    pub(super) fn observe(&mut self, what: &What, node_db: &NodeDb) {
        match what {
            What::ClientSends {
                node,
                request,
                submission,
                held: false,
                ..
            } => {
                if let Some(s) = submission {
                    let openings = self.openings_of(s.db);
                    let key = (s.db, s.order.clone());
                    let rec = self.orders.get(&key).cloned().unwrap_or_default();
                    let rec = if rec.seq == s.seq && rec.sent > 0 {
                        rec
                    } else {
                        // A new submission: its first request is an opening.
                        *self.openings.entry(s.db).or_default() += 1;
                        OrderTraffic {
                            seq: s.seq,
                            sent: 0,
                            openings_at_start: openings,
                        }
                    };
                    self.count(key, rec);
                    return;
                }
                let Some(db) = node_db.get(node).copied() else {
                    return;
                };
                let order = match &request.endpoint {
                    Endpoint::ListPayments { merchant_order_no } => Some(merchant_order_no.clone()),
                    Endpoint::GetPayment { payment_id } => {
                        self.payment_order.get(&(db, *payment_id)).cloned()
                    }
                    _ => None,
                };
                if let Some(order) = order {
                    let key = (db, order);
                    if let Some(rec) = self.orders.get(&key).cloned() {
                        self.count(key, rec);
                    }
                }
            }
            What::OrderStored {
                db,
                order_no,
                stored,
                ..
            } => {
                if let Some(p) = stored.payment_id
                    && self.payment_order.get(&(*db, p)) != Some(order_no)
                {
                    self.payment_order.insert((*db, p), order_no.clone());
                }
            }
            What::Delivered { to, response, .. } => {
                let db = node_db.get(to).copied();
                if let (Some(db), true) = (db, opens(response.status, response.error_code())) {
                    *self.openings.entry(db).or_default() += 1;
                }
            }
            What::TimedOut { node: to, .. }
            | What::Commanded { node: to, .. }
            | What::Crashed { node: to } => {
                if let Some(db) = node_db.get(to).copied() {
                    *self.openings.entry(db).or_default() += 1;
                }
            }
            _ => {}
        }
    }

    fn openings_of(&self, db: u8) -> u32 {
        self.openings.get(&db).copied().unwrap_or(0)
    }

    /// One more request of the submission `rec` of `key`, kept as the densest count when
    /// it is.
    fn count(&mut self, key: (u8, Text), mut rec: OrderTraffic) {
        rec.sent += 1;
        let density = Density {
            db: key.0,
            order: key.1.clone(),
            seq: rec.seq,
            sent: rec.sent,
            openings: self.openings_of(key.0) - rec.openings_at_start,
        };
        if self.densest.as_ref().is_none_or(|d| density.denser_than(d)) {
            self.densest = Some(Shared::new(density));
        }
        self.orders.insert(key, rec);
    }
}

/// UNKNOWN-02: an answer that may leave the result unknown (a 202, a 5xx other than the
/// 503 that says "not accepted").
fn opens(status: u16, code: Option<ErrorCode>) -> bool {
    status == 202 || (status >= 500 && code != Some(ErrorCode::TemporarilyUnavailable))
}
