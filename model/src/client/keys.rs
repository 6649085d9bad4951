//! Idempotency keys: derived from the business (GEN-01) or random and persisted (GEN-04).
//! A key belongs to its business submission, never to the API key the request goes under:
//! during API key rotation a retry keeps it (SCOPE-04; this client holds one API key).
//!
//! The model draws no random number: a random key is made from the `entropy` the driver
//! supplies with an input ([`super::Draw`]), so that a seeded world or an exhaustive
//! checker chooses it.

use crate::text::Text;
use serde::{Deserialize, Serialize};

/// How a merchant server makes the idempotency key of a business submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keys {
    /// `payment.create:ORDER-001:1`, recomputed by every server and every restarted
    /// process (GEN-01, the contract's recommendation).
    Deterministic,
    /// A random UUID, written to the database with the order before the request is sent
    /// and read back on every retry, never regenerated (GEN-04).
    RandomPersisted,
}

crate::named! {
    fn prefix;
    /// The endpoint a key is for. A key is used for one endpoint only (GEN-05).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum KeyPurpose {
        /// `POST /v1/payments`
        CreatePayment = "payment.create",
        /// `POST /v1/payments/{id}/confirm`
        ConfirmPayment = "payment.confirm",
        /// `POST /v1/payments/{id}/cancel`
        CancelPayment = "payment.cancel",
        /// `POST /v1/refunds`
        CreateRefund = "refund.create",
    }
}

/// `payment.create:ORDER-001:1` (GEN-01). Made of the endpoint, the merchant's business
/// number and the submission's sequence number only: never an e-mail, a name or card
/// data (GEN-03, `Rule::NoSensitiveDataInKeys`).
pub fn derived(purpose: KeyPurpose, number: &str, seq: u32) -> Text {
    Text::format(format_args!("{}:{number}:{seq}", purpose.prefix()))
}

/// Whether a business number looks like it carries personal data (an e-mail address)
/// that a derived key would repeat (GEN-03, `Rule::NoSensitiveDataInKeys`). Card numbers
/// cannot reach a key: the model's cards are opaque labels and keys never include them.
pub fn looks_personal(number: &str) -> bool {
    number.contains('@')
}

/// The longest derived key for a business number (sequence numbers up to `u32::MAX`).
pub fn derived_len_max(number: &str) -> usize {
    derived(KeyPurpose::ConfirmPayment, number, u32::MAX)
        .chars()
        .count()
}

/// What the driver drew for one step: several keys can be drawn from one `entropy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Dice {
    state: u64,
}

impl Dice {
    pub(crate) fn new(entropy: u64) -> Dice {
        Dice { state: entropy }
    }

    /// splitmix64: a fixed mixing function of the driver's entropy, not a generator of
    /// the model's own.
    fn next_u64(&mut self) -> u64 {
        let out = crate::splitmix::splitmix64(self.state);
        self.state = self.state.wrapping_add(crate::splitmix::GOLDEN);
        out
    }

    /// A random UUID in the version-4 layout (`crypto.randomUUID()` in the contract).
    pub(crate) fn uuid(&mut self) -> Text {
        let (a, b) = (self.next_u64(), self.next_u64());
        Text::format(format_args!(
            "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            8 | ((b >> 62) & 0x3),
            (b >> 48) & 0xfff,
            b & 0xffff_ffff_ffff
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gen_01_derived_keys_follow_the_contract_examples() {
        assert_eq!(
            derived(KeyPurpose::CreatePayment, "ORDER-DEMO-001", 1),
            "payment.create:ORDER-DEMO-001:1"
        );
        assert_eq!(
            derived(KeyPurpose::ConfirmPayment, "ORDER-DEMO-001", 2),
            "payment.confirm:ORDER-DEMO-001:2"
        );
        assert_eq!(
            derived(KeyPurpose::CreateRefund, "REFUND-DEMO-001", 1),
            "refund.create:REFUND-DEMO-001:1"
        );
        assert_eq!(derived_len_max("O"), "payment.confirm:O:4294967295".len());
    }

    #[test]
    fn gen_04_random_keys_are_uuids_fixed_by_the_entropy() {
        let a = Dice::new(7).uuid();
        assert_eq!(a.len(), 36);
        assert_eq!(a.matches('-').count(), 4);
        assert_eq!(&a[14..15], "4");
        assert_eq!(a, Dice::new(7).uuid(), "same entropy, same key");
        let mut dice = Dice::new(7);
        let first = dice.uuid();
        assert_ne!(first, dice.uuid(), "two draws in one step differ");
        assert_ne!(a, Dice::new(8).uuid());
    }
}
