//! What the wire showed of one Payment: the records several rules keep per Payment, its
//! numbers beside them, not in a tuple each (72 bytes where tuples took 88).

use super::Rec;
use payhub_model::{Card, Environment, MerchantId};

#[derive(Clone, Debug, Default)]
pub(super) struct PaymentShown {
    /// ATTEMPT-06, SCOPE-02: its first sighting, with `amount` and `owner`.
    first: Option<Rec>,
    /// WEBHOOK-02: the sighting at the highest version, with `status` (its fingerprint).
    version: Option<Rec>,
    /// CARD-03, ATTEMPT-02: created through the API, the sighting with the most
    /// attempts, `attempts` of them.
    attempts: Option<Rec>,
    /// ATTEMPT-01, ATTEMPT-02: the logged create or confirm with a test card, `card`,
    /// that started its latest attempt, number `card_attempt`.
    attempt_card: Option<Rec>,
    amount: i64,
    status: u64,
    owner: Option<(MerchantId, Environment)>,
    attempts_shown: u32,
    card_attempt: u32,
    card: Option<Card>,
    /// Whether the first sighting showed an amount, the highest version a status.
    has_amount: bool,
    has_status: bool,
}

const _: () = assert!(size_of::<PaymentShown>() == 72);

impl PaymentShown {
    pub(super) fn first(&self) -> Option<(Option<i64>, (MerchantId, Environment), &Rec)> {
        let (rec, owner) = (self.first.as_ref()?, self.owner?);
        Some((self.has_amount.then_some(self.amount), owner, rec))
    }

    pub(super) fn set_first(
        &mut self,
        amount: Option<i64>,
        owner: (MerchantId, Environment),
        rec: Rec,
    ) {
        (self.first, self.owner) = (Some(rec), Some(owner));
        (self.amount, self.has_amount) = (amount.unwrap_or_default(), amount.is_some());
    }

    pub(super) fn version(&self) -> Option<(&Rec, Option<u64>)> {
        let rec = self.version.as_ref()?;
        Some((rec, self.has_status.then_some(self.status)))
    }

    pub(super) fn set_version(&mut self, rec: Rec, status: Option<u64>) {
        self.version = Some(rec);
        (self.status, self.has_status) = (status.unwrap_or_default(), status.is_some());
    }

    pub(super) fn attempts(&self) -> Option<(u32, &Rec)> {
        Some((self.attempts_shown, self.attempts.as_ref()?))
    }

    pub(super) fn set_attempts(&mut self, n: u32, rec: Rec) {
        (self.attempts_shown, self.attempts) = (n, Some(rec));
    }

    pub(super) fn attempt_card(&self) -> Option<(u32, Card, &Rec)> {
        Some((self.card_attempt, self.card?, self.attempt_card.as_ref()?))
    }

    pub(super) fn set_attempt_card(&mut self, n: u32, card: Card, rec: Rec) {
        (self.card_attempt, self.card, self.attempt_card) = (n, Some(card), Some(rec));
    }
}
