//! Identifiers: small copyable newtypes, rendered the way the contract writes them
//! (`pay_demo_001`, `ref_demo_001`), and read back only from exactly that rendering.

use serde::de::{self, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $fmt:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, $fmt, self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str(IdVisitor($name))
            }
        }
    };
}

/// Reads an id back from its rendering: the number is the trailing digits, and the
/// string must be exactly what the id renders as (`pay_demo_001`, not `pay_demo_1` nor
/// `ref_demo_001`), so that every id has one serialized form and the untagged
/// [`ResourceId`] cannot take one kind of id for another.
struct IdVisitor<T>(fn(u32) -> T);

impl<T: fmt::Display> Visitor<'_> for IdVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an id like {}", (self.0)(1))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        let digits = s.len() - s.bytes().rev().take_while(u8::is_ascii_digit).count();
        s[digits..]
            .parse()
            .ok()
            .map(self.0)
            .filter(|id| id.to_string() == s)
            .ok_or_else(|| E::invalid_value(Unexpected::Str(s), &self))
    }
}

id_type!(
    /// A Payment (`pay_demo_001`).
    PaymentId, "pay_demo_{:03}"
);
id_type!(
    /// An attempt of a Payment: one charge sent to the upstream (`att_001`).
    AttemptId, "att_{:03}"
);
id_type!(
    /// A Refund (`ref_demo_001`).
    RefundId, "ref_demo_{:03}"
);
id_type!(
    /// A checkout session (`cs_demo_001`).
    SessionId, "cs_demo_{:03}"
);
id_type!(
    /// One HTTP exchange between a merchant server and the platform, numbered by the world.
    RequestId, "req_{}"
);
id_type!(
    /// A webhook event (`evt_001`).
    EventId, "evt_{:03}"
);
id_type!(
    /// A merchant (`merchant_1`).
    MerchantId, "merchant_{}"
);
id_type!(
    /// An API key (`ak_1`): authenticates a merchant in one environment. Rotating it keeps the scope.
    ApiKeyId, "ak_{}"
);

crate::named! {
    fn as_str, Display;
    /// Test or live: two independent idempotency worlds (SCOPE-02).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Environment {
        Test = "test",
        Live = "live",
    }
}

/// The card a payer typed, as an opaque label (`A`, `B`). The model never sees a card
/// number; even so, the platform must not keep this label after the upstream call that
/// used it (CARD-02), and the acquirer's ledger is the only place that records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card(pub char);

impl std::fmt::Display for Card {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "card {}", self.0)
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// From its label alone: a string of exactly one character (`"A"`).
impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Label;
        impl Visitor<'_> for Label {
            type Value = Card;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a card label of one character, like \"A\"")
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Card, E> {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(Card(c)),
                    _ => Err(E::invalid_value(Unexpected::Str(s), &self)),
                }
            }
        }
        d.deserialize_str(Label)
    }
}

/// Either kind of business object a response or webhook refers to. Untagged: the id's
/// own prefix (`pay_demo_`, `ref_demo_`, `cs_demo_`) tells which.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceId {
    Payment(PaymentId),
    Refund(RefundId),
    Session(SessionId),
}

impl std::fmt::Display for ResourceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResourceId::Payment(id) => id.fmt(f),
            ResourceId::Refund(id) => id.fmt(f),
            ResourceId::Session(id) => id.fmt(f),
        }
    }
}
