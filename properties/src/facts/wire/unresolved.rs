//! Confirms and refunds whose outcome the client does not know (UNKNOWN-02: no answer, a
//! 5xx other than 503, a 202), and what the client sends meanwhile.
//!
//! - UNKNOWN-03, ATTEMPT-01 (S8), RETRY-03: a Payment is *unresolved* once a confirm of
//!   it had an unknown outcome, or once an answer showed it `processing` or
//!   `requires_action`; until an answer shows it in another status, a confirm of it
//!   under a key other than the unresolved confirm's is new business for the same
//!   Payment ([`Breach::NewConfirmKeyWhileUnresolved`]).
//! - UNKNOWN-03, REFUND-02 (S11: "retry with K, or query by merchant_refund_no; do not
//!   change the refund number and apply again"): a refund create with an unknown outcome,
//!   or a 202 showing the refund `processing` or `pending_review`, leaves its refund
//!   request unresolved; until another answer shows that refund, a refund of the same Payment
//!   and amount under another refund number is the same request renumbered
//!   ([`Breach::NewRefundNoWhileUnresolved`]); the same refund number under another key
//!   is a new request too ([`Breach::NewRefundKeyWhileUnresolved`]).
//!
//! - ATTEMPT-02, GEN-04 ("payment.confirm:ORDER-DEMO-001:2": a card retry is a new
//!   submission under a new key): a confirm under the key of the Payment's previous
//!   confirm, sent after an answer showed the Payment `failed`, is a card retry the
//!   platform answers with the stored failure, never charging the new card
//!   ([`Breach::CardRetryUnderFailedKey`]); a key whose confirm had no 2xx answer (in
//!   flight, refused, unknown) bound nothing yet, so a failure shown meanwhile is an
//!   earlier attempt's, and sending it again is the retry RATE-03 and S2 ask for.
//!
//! - RATE-03 ("retry with the original idempotency key"), RETRY-01, S13 ("retry later
//!   with K"): a create of an order, or a refund of a refund number, answered 429 or 503
//!   (not executed) and sent again under another key before any answer executed it
//!   ([`Breach::NewKeyAfterRefusal`]).
//!
//! Memory: per order or refund number refused, that exchange; per Payment confirmed, its last confirm key; one record per unresolved or
//! failed Payment and per unresolved refund number.

use super::{Breach, Rec, WireFacts, created};
use payhub_model::observed::{IdKind, ObservedAnswer};
use payhub_model::{Endpoint, Environment, Json, MerchantId, PaymentId, Text};

/// A refund request: its Payment and amount.
pub(super) type RefundOf = (Option<PaymentId>, Option<i64>);

fn refund_of(ep: &Endpoint) -> Option<(RefundOf, Text)> {
    match ep {
        Endpoint::CreateRefund {
            body: Json::Parsed(b),
        } => Some(((b.payment_id, b.amount), b.merchant_refund_no.clone()?)),
        _ => None,
    }
}

/// The number a create names: a Payment's order number, a refund's refund number.
fn number_of(ep: &Endpoint) -> Option<Text> {
    match ep {
        Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } => b.merchant_order_no.clone(),
        Endpoint::CreateRefund {
            body: Json::Parsed(b),
        } => b.merchant_refund_no.clone(),
        _ => None,
    }
}

fn unresolved_payment(status: Option<&str>) -> bool {
    matches!(status, Some("processing" | "requires_action"))
}

fn unresolved_refund(status: Option<&str>) -> bool {
    matches!(status, Some("processing" | "pending_review"))
}

impl WireFacts {
    /// At a send: a confirm under another key of an unresolved Payment, a refund of an
    /// unresolved request under another number.
    pub(super) fn judge_while_unresolved(
        &mut self,
        seen: &Rec,
        (m, e): (MerchantId, Environment),
        ep: &Endpoint,
    ) {
        if let (Endpoint::ConfirmPayment { payment_id, .. }, Some(key)) = (ep, seen.key()) {
            let k = (m, e, *payment_id);
            let same_key = self.confirm_keys.get(&k).map(Text::as_str) == Some(key);
            if let (Some(u), false) = (self.unresolved_payments.get(&k), same_key) {
                let u = u.clone();
                self.note(Breach::NewConfirmKeyWhileUnresolved, vec![u, seen.clone()]);
            }
            if let (Some(f), true) = (self.failed_payments.remove(&k), same_key) {
                self.note(Breach::CardRetryUnderFailedKey, vec![f, seen.clone()]);
            }
            self.confirm_keys.insert(k, Text::from(key));
            self.confirm_unbound.insert(k);
        }
        if let Some(number) = number_of(ep) {
            let k = (m, e, number);
            if let Some(refused) = self.refused_numbers.get(&k) {
                if refused.key() != seen.key() && seen.key().is_some() {
                    let refused = refused.clone();
                    self.note(Breach::NewKeyAfterRefusal, vec![refused, seen.clone()]);
                }
            }
        }
        if let Some((of, number)) = refund_of(ep) {
            if let Some((_, u)) = self.unresolved_refunds.get((m, e), &number) {
                if u.key() != seen.key() {
                    let u = u.clone();
                    self.note(Breach::NewRefundKeyWhileUnresolved, vec![u, seen.clone()]);
                }
            }
            let renumbered = self
                .unresolved_refunds
                .same_under_other((m, e), &of, &number);
            if let Some(u) = renumbered.cloned() {
                self.note(Breach::NewRefundNoWhileUnresolved, vec![u, seen.clone()]);
            }
        }
    }

    /// At a close with an unknown outcome: the confirm's Payment, the refund's request.
    pub(super) fn note_unresolved(
        &mut self,
        seen: &Rec,
        (m, e): (MerchantId, Environment),
        ep: &Endpoint,
    ) {
        if let Endpoint::ConfirmPayment { payment_id, .. } = ep {
            self.unresolved_payments
                .entry((m, e, *payment_id))
                .or_insert_with(|| seen.clone());
        }
        if let Some((of, number)) = refund_of(ep) {
            self.unresolved_refunds
                .hold_first((m, e), number, of, || seen.clone());
        }
    }

    /// At a known answer: the Payment and refund it shows, resolved or not; a create
    /// refused (429, 503) or executed.
    pub(super) fn resolve_shown(
        &mut self,
        seen: &Rec,
        (m, e): (MerchantId, Environment),
        r: &ObservedAnswer,
        ep: &Endpoint,
    ) {
        if let Some(number) = number_of(ep) {
            let k = (m, e, number);
            if matches!(r.status, 429 | 503) {
                self.refused_numbers
                    .entry(k)
                    .or_insert_with(|| seen.clone());
            } else {
                self.refused_numbers.remove(&k);
            }
        }
        if let Some(p) = r.first(IdKind::Payment) {
            let k = (m, e, PaymentId(p.id));
            if unresolved_payment(p.status.as_deref()) {
                self.unresolved_payments
                    .entry(k)
                    .or_insert_with(|| seen.clone());
            } else if p.status.is_some() {
                self.unresolved_payments.remove(&k);
            }
            // The key binds its execution's outcome only once answered 2xx: until then,
            // a failure shown is an earlier attempt's, and the key is retried as sent.
            let confirmed =
                matches!(ep, Endpoint::ConfirmPayment { payment_id, .. } if *payment_id == k.2);
            if confirmed && (200..300).contains(&r.status) {
                self.confirm_unbound.remove(&k);
            }
            if p.status.as_deref() == Some("failed") && !self.confirm_unbound.contains(&k) {
                self.failed_payments.insert(k, seen.clone());
            }
        }
        if let Some(x) = r.first(IdKind::Refund) {
            let Some(number) = x.number.clone().or_else(|| created(seen, "/v1/refunds")) else {
                return;
            };
            // UNKNOWN-02: a 202 leaves the result unknown; any other answer showing the
            // refund tells the client it exists, whatever its status (a refund stays
            // processing for as long as the acquirer takes).
            if r.status == 202 && unresolved_refund(x.status.as_deref()) {
                let of = refund_of(ep).map_or((x.payment.map(PaymentId), x.amount), |r| r.0);
                self.unresolved_refunds
                    .hold_first((m, e), number, of, || seen.clone());
            } else {
                self.unresolved_refunds.forget((m, e), &number);
            }
        }
    }
}
