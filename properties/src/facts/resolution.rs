//! What became of each business submission of the reference client, for the liveness
//! check: what its merchant database shows of the order's result and since when, the
//! Payment versions that reached the merchant side (answers a client awaited, webhooks
//! that found a running server) and the deliveries it missed, the platform's own
//! Payments, and when each client server was down. Folded from events only, from any
//! source; nothing here says whether a result came soon enough (the property does,
//! `payhub_properties::liveness`).
//!
//! Not a family of [`super::Facts`]: its history (every delivery, every state an order
//! passed through) would split the checker's states, and only the end of a stream is
//! judged. A source folds it beside the facts: the simulated run from its recorded
//! events, `judge` from the file's.

use payhub_model::client::OrderState;
use payhub_model::event::{Event, Message, Owner, ShownOrder, StoredPayment, What};
use payhub_model::{Millis, PaymentId, Text, WebhookEvent, WebhookObject};
use std::collections::{BTreeMap, BTreeSet};

/// A client node: the database it shares with the other servers of its merchant, and
/// the owner of its API key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub db: u8,
    pub owner: Owner,
}

/// A Payment version a response or webhook brought to a running client server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub node: u8,
    pub payment: PaymentId,
    pub version: u32,
}

/// One delivery of a Payment webhook event to a client node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WebhookDelivery {
    pub node: u8,
    pub payment: PaymentId,
    pub version: u32,
    /// 0 for the first delivery, then 1, 2, … (A-WEBHOOK-REDELIVERY).
    pub delivery: u8,
    /// Whether some server sharing the node's database was running (it hears nothing when
    /// the node is down); `false` for a node of no known database.
    pub db_up: bool,
    /// Whether the node it was sent to was running (the world routes an event to a
    /// running server of the merchant when it is sent; that server may crash before it
    /// arrives).
    pub node_up: bool,
    /// Lost in the network: it never reached the node.
    pub lost: bool,
}

impl WebhookDelivery {
    /// Whether the merchant missed it: lost, or the server it was sent to was down.
    pub fn missed(&self) -> bool {
        self.lost || !self.node_up
    }
}

/// From `at`, database `db` has a server running (`up`) or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DbUptime {
    pub at: Millis,
    pub db: u8,
    pub up: bool,
}

/// One order of a merchant database as the stream showed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderSeen {
    /// What its record says now.
    pub shown: ShownOrder,
    /// When it first appeared.
    pub since: Millis,
    /// Each state it entered, with when, oldest first (the first is its state when it
    /// appeared).
    pub states: Vec<(Millis, OrderState)>,
}

/// A Payment as the platform's store holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentSeen {
    pub stored: StoredPayment,
    /// When its status became what it is.
    pub status_since: Millis,
}

/// The resolution facts of one stream.
#[derive(Clone, Debug, Default)]
pub struct Resolution {
    /// Each client node's placement: given by the source that knows its merchants (the
    /// simulated world's configuration), or learned from the submissions a node sent
    /// ([`Resolution::learning`]).
    pub nodes: BTreeMap<u8, Placement>,
    /// Whether `nodes` is learned from the stream (a node may be of no known database).
    pub learned: bool,
    /// How many times the platform re-delivers an unacknowledged webhook event
    /// (A-WEBHOOK-REDELIVERY), as the source configured it.
    pub redeliveries: u8,
    /// Every order, by database and order number.
    pub orders: BTreeMap<(u8, Text), OrderSeen>,
    /// Every Payment the platform's store held, and the time its status became what it is.
    pub payments: BTreeMap<PaymentId, PaymentSeen>,
    /// Every Payment version handed to a running client server (in an answer it was
    /// waiting for, or in a webhook), in order.
    pub received: Vec<Received>,
    /// Every delivery of a Payment webhook to a client node (or its loss), in order.
    pub webhooks: Vec<WebhookDelivery>,
    /// Every (Payment, version) the platform sent a webhook event of to a merchant node.
    pub emitted: BTreeSet<(PaymentId, u32)>,
    /// When each client database went down (no server of it running) or up again, in
    /// order; a database with no entry was up from the start.
    pub uptime: Vec<DbUptime>,
    /// The client nodes down now.
    pub down: BTreeSet<u8>,
    /// Whether the stream held any observation of a merchant database ([`What::OrderShown`]).
    pub saw_orders: bool,
    /// The time of the last event.
    pub end: Millis,
}

impl Resolution {
    /// Empty facts of a source that knows its client nodes and the platform's
    /// re-deliveries.
    pub fn placed(nodes: BTreeMap<u8, Placement>, redeliveries: u8) -> Resolution {
        Resolution {
            nodes,
            redeliveries,
            ..Resolution::default()
        }
    }

    /// Empty facts of a recorded stream: each node's database is learned from the first
    /// submission it sends; what reaches a node before that (or a node that never
    /// submits) counts for no database.
    pub fn learning(redeliveries: u8) -> Resolution {
        Resolution {
            learned: true,
            redeliveries,
            ..Resolution::default()
        }
    }

    /// Folds a whole stream.
    pub fn fold<'a>(mut self, events: impl IntoIterator<Item = &'a Event>) -> Resolution {
        for e in events {
            self.observe(e);
        }
        self
    }

    /// Whether client node `node` is running.
    pub fn node_up(&self, node: u8) -> bool {
        !self.down.contains(&node)
    }

    /// Whether some server of database `db` is running.
    pub fn db_up(&self, db: u8) -> bool {
        self.nodes
            .iter()
            .any(|(node, p)| p.db == db && self.node_up(*node))
    }

    /// The database of client node `node`, if known.
    pub fn db_of(&self, node: u8) -> Option<u8> {
        self.nodes.get(&node).map(|p| p.db)
    }

    /// Whether database `db` had a server running all through instant `t`: up before it
    /// and not going down or coming up at it (a server restarted at `t` skips a query
    /// due at `t`; one crashing at `t` may not have made it).
    pub fn db_up_through(&self, db: u8, t: Millis) -> bool {
        let mut of_db = self.uptime.iter().rev().filter(|u| u.db == db);
        if of_db.clone().any(|u| u.at == t) {
            return false;
        }
        of_db.find(|u| u.at < t).is_none_or(|u| u.up)
    }

    /// Reads one event.
    pub fn observe(&mut self, event: &Event) {
        let at = event.at;
        self.end = self.end.max(at);
        match &event.what {
            What::ClientSends {
                node,
                owner,
                submission: Some(s),
                ..
            } if self.learned => {
                self.nodes.entry(*node).or_insert(Placement {
                    db: s.db,
                    owner: *owner,
                });
            }
            What::OrderShown {
                db,
                order_no,
                shown,
            } => {
                self.saw_orders = true;
                let seen = self
                    .orders
                    .entry((*db, order_no.clone()))
                    .or_insert_with(|| OrderSeen {
                        shown: shown.clone(),
                        since: at,
                        states: vec![(at, shown.state)],
                    });
                if seen.states.last().is_none_or(|(_, s)| *s != shown.state) {
                    seen.states.push((at, shown.state));
                }
                seen.shown = shown.clone();
            }
            What::PaymentStored { payment, stored } => {
                let since = match self.payments.get(payment) {
                    Some(p) if p.stored.status == stored.status => p.status_since,
                    _ => at,
                };
                self.payments.insert(
                    *payment,
                    PaymentSeen {
                        stored: stored.clone(),
                        status_since: since,
                    },
                );
            }
            What::WebhookEmitted {
                event, to: Some(_), ..
            } => {
                if let WebhookObject::Payment(p) = &event.object {
                    self.emitted.insert((p.id, p.version));
                }
            }
            What::Delivered {
                id: _,
                to,
                response,
            } if self.nodes.contains_key(to) => {
                // `Delivered` to a client node is an answer it awaited (`DeliveredUnread`
                // otherwise).
                if let Some(p) = response.payment()
                    && self.node_up(*to)
                {
                    self.received.push(Received {
                        node: *to,
                        payment: p.id,
                        version: p.version,
                    });
                }
            }
            What::WebhookDelivered { to, event } => self.webhook(*to, event, false),
            What::Lost {
                message: Message::Webhook { to, event },
            } => self.webhook(*to, event, true),
            What::Crashed { node } => self.node_turns(at, *node, false),
            What::Restarted { node } => self.node_turns(at, *node, true),
            _ => {}
        }
    }

    fn webhook(&mut self, node: u8, event: &WebhookEvent, lost: bool) {
        let WebhookObject::Payment(p) = &event.object else {
            return;
        };
        let Some(db) = self.db_of(node) else {
            return;
        };
        let node_up = self.node_up(node);
        self.webhooks.push(WebhookDelivery {
            node,
            payment: p.id,
            version: p.version,
            delivery: event.delivery,
            db_up: self.db_up(db),
            node_up,
            lost,
        });
        if !lost && node_up {
            self.received.push(Received {
                node,
                payment: p.id,
                version: p.version,
            });
        }
    }

    fn node_turns(&mut self, at: Millis, node: u8, up: bool) {
        // A node of no known database: remembered, counted for none.
        let was = self.db_of(node).map(|db| (db, self.db_up(db)));
        if up {
            self.down.remove(&node);
        } else {
            self.down.insert(node);
        }
        if let Some((db, was)) = was
            && self.db_up(db) != was
        {
            self.uptime.push(DbUptime { at, db, up: !was });
        }
    }
}
