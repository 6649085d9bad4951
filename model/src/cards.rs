//! The test cards: which acquirer outcome each label selects.
//!
//! A request's `card` is a test label, never a card number: the sandbox accepts only the
//! labels of [`CARDS`] and answers any other value `400 invalid_request` (field `card`)
//! at its edge, before the request reaches the model or the session's events, so a real
//! card number is never stored, logged or recorded. The sandbox, `conform`'s oracle
//! and `check-log` read the same table.

use crate::{AcquirerDecision, Card, UpstreamCall};

/// One test card: its label, the acquirer's behaviour, and what the merchant sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestCard {
    pub label: char,
    pub outcome: Outcome,
    /// One line for `serve`'s banner and `--help`.
    pub about: &'static str,
}

/// What the acquirer does with a charge on a test card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Captures and answers at once.
    Approve,
    /// Declines (`card_declined`).
    Decline,
    /// Asks for authentication (3-D Secure): `POST /__sandbox/authenticate`.
    RequireAction,
    /// Answers only after the platform's synchronous wait (~15 s), so the create or
    /// confirm answers 202 `processing`; the charge is captured right after.
    Slow,
    /// Captures and never answers; its status queries fail too: the Payment goes to
    /// `needs_query`, then `manual_review` when the automatic query window ends.
    Silent,
    /// Fails (5xx) without charging.
    Fail,
    /// Captures and never answers, as [`Outcome::Silent`]; a cancel of its charge is
    /// answered only after the platform's synchronous wait, so the cancel answers 202
    /// (the cancel is accepted; the status stays until the acquirer's answer).
    SlowCancel,
}

impl Outcome {
    /// Whether a charge on this card can end `failed`: a decline, an authentication
    /// that fails, an acquirer 5xx. The others are captured (at once, after the wait, or
    /// silently: "will not automatically judge it failed"), so no attempt on them ever
    /// definitively fails (ATTEMPT-02: only then may a new attempt start).
    pub fn can_fail(self) -> bool {
        matches!(
            self,
            Outcome::Decline | Outcome::RequireAction | Outcome::Fail
        )
    }
}

/// Whether an attempt charged on `card` can end `failed` ([`Outcome::can_fail`]); a
/// label that is no test card may.
pub fn can_fail(card: Card) -> bool {
    CARDS
        .iter()
        .find(|t| t.label == card.0)
        .is_none_or(|t| t.outcome.can_fail())
}

/// The test card table.
pub const CARDS: &[TestCard] = &[
    TestCard {
        label: 'A',
        outcome: Outcome::Approve,
        about: "approved at once: 200/201 succeeded",
    },
    TestCard {
        label: 'B',
        outcome: Outcome::Decline,
        about: "declined: failed, failure.code card_declined",
    },
    TestCard {
        label: 'C',
        outcome: Outcome::RequireAction,
        about: "requires_action: POST /__sandbox/authenticate {\"payment_id\":\"pay_demo_001\",\"ok\":true}",
    },
    TestCard {
        label: 'D',
        outcome: Outcome::Slow,
        about: "slow acquirer: answered after the ~15 s wait, so 202 processing; captured right after",
    },
    TestCard {
        label: 'E',
        outcome: Outcome::Silent,
        about: "silent acquirer: captured, never answered: needs_query, then manual_review after 1 h",
    },
    TestCard {
        label: 'F',
        outcome: Outcome::Fail,
        about: "acquirer 5xx before charging: the platform verifies, the Payment fails",
    },
    TestCard {
        label: 'G',
        outcome: Outcome::SlowCancel,
        about: "silent acquirer (as E) whose cancel is answered only after the ~15 s wait: a cancel answers 202",
    },
];

/// The test card of a label, if it is one.
pub fn test_card(label: &str) -> Option<&'static TestCard> {
    let mut chars = label.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    CARDS.iter().find(|t| t.label == c)
}

fn outcome_of(card: Card) -> Outcome {
    CARDS
        .iter()
        .find(|t| t.label == card.0)
        .map_or(Outcome::Approve, |t| t.outcome)
}

/// Whether `call` is answered only after the synchronous wait: a charge on the slow
/// card (D), a cancel of a charge on card G. The sandbox holds it on the link until the
/// exchange that sent it has its answer (the 202 after the synchronous wait). `card_of`
/// names the card an attempt was charged on.
pub fn is_slow(call: &UpstreamCall, card_of: impl Fn(crate::AttemptId) -> Option<Card>) -> bool {
    match call {
        UpstreamCall::Charge { card, .. } => outcome_of(*card) == Outcome::Slow,
        UpstreamCall::CancelCharge { attempt } => {
            card_of(*attempt).map(outcome_of) == Some(Outcome::SlowCancel)
        }
        _ => false,
    }
}

/// How the acquirer decides `call`. `card_of` names the card an attempt was charged
/// on, for the calls that carry no card.
pub fn decision(
    call: &UpstreamCall,
    card_of: impl Fn(crate::AttemptId) -> Option<Card>,
) -> AcquirerDecision {
    use AcquirerDecision::*;
    match call {
        UpstreamCall::Charge { card, .. } => match outcome_of(*card) {
            Outcome::Approve | Outcome::Slow => Approve,
            Outcome::Decline => Decline,
            Outcome::RequireAction => RequireAction,
            Outcome::Silent | Outcome::SlowCancel => ApproveSilently,
            Outcome::Fail => Fail,
        },
        UpstreamCall::QueryCharge { attempt } => match card_of(*attempt).map(outcome_of) {
            Some(Outcome::Silent | Outcome::SlowCancel) => Fail,
            _ => Approve,
        },
        UpstreamCall::CancelCharge { .. }
        | UpstreamCall::Refund { .. }
        | UpstreamCall::QueryRefund { .. } => Approve,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttemptId, Environment, MerchantId, PaymentId};

    fn charge(label: char) -> UpstreamCall {
        UpstreamCall::Charge {
            attempt: AttemptId(1),
            payment: PaymentId(1),
            merchant: MerchantId(1),
            environment: Environment::Test,
            amount: 100,
            currency: "USD".into(),
            card: Card(label),
        }
    }

    #[test]
    fn every_card_selects_its_decision() {
        let none = |_| None;
        let want = [
            ('A', AcquirerDecision::Approve),
            ('B', AcquirerDecision::Decline),
            ('C', AcquirerDecision::RequireAction),
            ('D', AcquirerDecision::Approve),
            ('E', AcquirerDecision::ApproveSilently),
            ('F', AcquirerDecision::Fail),
            ('G', AcquirerDecision::ApproveSilently),
        ];
        for (label, decision) in want {
            assert_eq!(super::decision(&charge(label), none), decision, "{label}");
            assert_eq!(is_slow(&charge(label), none), label == 'D', "{label}");
        }
    }

    #[test]
    fn only_a_card_g_charge_is_canceled_late() {
        let cancel = UpstreamCall::CancelCharge {
            attempt: AttemptId(1),
        };
        for label in ['A', 'D', 'E', 'G'] {
            let slow = is_slow(&cancel, |_| Some(Card(label)));
            assert_eq!(slow, label == 'G', "{label}");
        }
        assert!(!is_slow(&cancel, |_| None));
    }

    #[test]
    fn a_silent_cards_queries_fail_and_others_are_answered() {
        let query = UpstreamCall::QueryCharge {
            attempt: AttemptId(1),
        };
        let silent = super::decision(&query, |_| Some(Card('E')));
        let known = super::decision(&query, |_| Some(Card('A')));
        let unseen = super::decision(&query, |_| None);
        assert_eq!(silent, AcquirerDecision::Fail);
        assert_eq!(known, AcquirerDecision::Approve);
        assert_eq!(unseen, AcquirerDecision::Approve);
    }

    #[test]
    fn only_the_table_labels_are_test_cards() {
        assert_eq!(test_card("A").map(|c| c.outcome), Some(Outcome::Approve));
        for bad in ["", "H", "AB", "4242424242424242", "a"] {
            assert!(test_card(bad).is_none(), "{bad}");
        }
    }
}
