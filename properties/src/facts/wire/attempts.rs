//! What the wire shows of a Payment's attempts, its refunds and the keys refused: the
//! records the attempt, refund and key properties read (see the parent module's doc).
//!
//! - ATTEMPT-05: the sighting with the most attempts (`attempt_count`, S9's
//!   `"attempt_count":2`); the maximum is the property's to apply.
//! - CARD-03, ATTEMPT-02: a new attempt starts only with a confirm ("To change card, you
//!   must wait until the original attempt has definitively failed, then confirm with a
//!   new key"); a replay never charges newly supplied card information.
//! - ATTEMPT-01, ATTEMPT-02: each Payment's latest attempt a logged create or confirm
//!   started, with the test card it carried, and the first sighting per card of a newer
//!   attempt after it; whether that card could have failed is the property's to judge.
//! - REFUND-03 (A-REFUND-LIMIT): the refunds of a Payment shown succeeded.
//! - KEY-07: the shortest printable key refused 400 about the `Idempotency-Key`; whether
//!   it had 1–255 characters is the property's to judge.

use super::{Breach, Rec, WireFacts};
use payhub_model::observed::{IdKind, ObservedAnswer, ObservedObject};
use payhub_model::{Contract, Endpoint, Json, Method, Millis, PaymentId, RefundId, RequestId};

/// A Payment's confirms: how many are open, the last one closed (when, which) and when
/// the one before it closed.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Confirms {
    open: u32,
    last_closed: Option<(Millis, RequestId)>,
    before_last: Option<Millis>,
}

impl Confirms {
    /// Whether a confirm other than `earlier` itself (whose answer already shows its
    /// own attempt) was open after `earlier` was sent: it may have started an attempt.
    fn may_explain(&self, earlier: &Rec) -> bool {
        let after = |t: Millis| t >= earlier.sent;
        self.open > 0
            || match self.last_closed {
                Some((t, id)) if id != earlier.id => after(t),
                Some(_) => self.before_last.is_some_and(after),
                None => false,
            }
    }
}

impl WireFacts {
    /// A confirm of a Payment sent: it may start an attempt until it closes.
    pub(super) fn confirm_sent(&mut self, endpoint: &Endpoint) {
        if let Endpoint::ConfirmPayment { payment_id, .. } = endpoint {
            self.confirms.entry(*payment_id).or_default().open += 1;
        }
    }

    /// Confirm `id` of a Payment closed (answered or not).
    pub(super) fn confirm_closed(&mut self, at: Millis, id: RequestId, endpoint: &Endpoint) {
        if let Endpoint::ConfirmPayment { payment_id, .. } = endpoint {
            let c = self.confirms.entry(*payment_id).or_default();
            c.open = c.open.saturating_sub(1);
            c.before_last = c.last_closed.map(|(t, _)| t);
            c.last_closed = Some((at, id));
        }
    }

    /// ATTEMPT-05, CARD-03, ATTEMPT-01, ATTEMPT-02: a Payment's attempts as `seen`, the
    /// answer to a request of `endpoint`, shows them.
    pub(super) fn note_attempts(
        &mut self,
        seen: &Rec,
        p: &ObservedObject,
        r: &ObservedAnswer,
        endpoint: &Endpoint,
    ) {
        let Some(n) = p.attempt_count else { return };
        self.note_attempt_card(seen, p, n, r, endpoint);
        if self
            .most_attempts
            .as_deref()
            .is_none_or(|(most, _)| n > *most)
        {
            self.most_attempts = Some(Box::new((n, seen.seen())));
        }
        let id = PaymentId(p.id);
        // Only a Payment created through the API: a checkout session's payer starts
        // attempts on the hosted page, which no API log holds.
        let created = seen.method == Method::Post && seen.path_is("/v1/payments");
        match self.payments.get(&id).and_then(|x| x.attempts()) {
            None if created => {
                self.payments.at(id).set_attempts(n, seen.clone());
            }
            None => {}
            Some((before, earlier)) if n > before => {
                let c = self.confirms.get(&id).copied().unwrap_or_default();
                if !c.may_explain(earlier) {
                    let earlier = earlier.clone();
                    self.note(Breach::AttemptWithoutConfirm, vec![earlier, seen.clone()]);
                }
                self.payments.at(id).set_attempts(n, seen.clone());
            }
            Some(_) => {}
        }
    }

    /// ATTEMPT-01, ATTEMPT-02: the attempt `n` a create or confirm of this Payment
    /// started (its answer 2xx showing more attempts than known), with its card; a newer
    /// attempt shown after one, kept per card.
    fn note_attempt_card(
        &mut self,
        seen: &Rec,
        p: &ObservedObject,
        n: u32,
        r: &ObservedAnswer,
        endpoint: &Endpoint,
    ) {
        let id = PaymentId(p.id);
        let held = self.payments.get(&id).and_then(|x| x.attempt_card());
        let known = held.map(|(k, ..)| k);
        if let Some((k, card, started)) = held {
            if n > k && !self.renewed_attempts.contains_key(&card) {
                let w = super::Witness::of(
                    Breach::NewAttemptBeforeFailure,
                    vec![started.seen(), seen.seen()],
                );
                self.renewed_attempts.insert(card, w);
            }
        }
        let starts = match endpoint {
            Endpoint::CreatePayment { .. } => true,
            Endpoint::ConfirmPayment { payment_id, .. } => *payment_id == id,
            _ => false,
        };
        let started = starts && r.is_success() && n > known.unwrap_or(0);
        if let Some(card) = endpoint.card().filter(|_| started) {
            self.payments.at(id).set_attempt_card(n, card, seen.clone());
        }
    }

    /// REFUND-03: a refund accepted beyond its Payment's amount, counting the refunds of
    /// that Payment already shown succeeded; every refund shown succeeded is kept.
    pub(super) fn judge_refunds(&mut self, seen: &Rec, r: &ObservedAnswer, endpoint: &Endpoint) {
        let refunds = r.objects.iter().filter(|o| o.kind == IdKind::Refund);
        for x in refunds.clone() {
            if let (Some(p), Some(a), Some("succeeded")) =
                (x.payment, x.amount, x.status.as_deref())
            {
                self.refunds_succeeded
                    .entry(PaymentId(p))
                    .or_default()
                    .insert(RefundId(x.id), a);
            }
        }
        let Endpoint::CreateRefund { body } = endpoint else {
            return;
        };
        let Some(x) = refunds.clone().next().filter(|_| r.is_success()) else {
            return;
        };
        let asked = match body {
            Json::Parsed(b) => Some(b),
            _ => None,
        };
        let payment = x
            .payment
            .map(PaymentId)
            .or_else(|| asked.and_then(|b| b.payment_id));
        let amount = x.amount.or_else(|| asked.and_then(|b| b.amount));
        let (Some(payment), Some(amount)) = (payment, amount) else {
            return;
        };
        let first = self.payments.get(&payment).and_then(|x| x.first());
        let Some((Some(paid), _, first)) = first else {
            return;
        };
        let others: i64 = self
            .refunds_succeeded
            .get(&payment)
            .into_iter()
            .flatten()
            .filter(|(id, _)| id.0 != x.id)
            .map(|(_, a)| *a)
            .sum();
        if others.saturating_add(amount) > paid {
            let first = first.clone();
            self.note(Breach::RefundBeyondAmount, vec![first, seen.clone()]);
        }
    }

    /// KEY-01..KEY-06: an endpoint that needs a key answered 2xx to a request without a
    /// valid one (missing, empty, or printable ASCII over 255 characters: every reading of
    /// "character" counts those alike, A-KEY-LENGTH).
    pub(super) fn judge_key_needed(&mut self, seen: &Rec, r: &ObservedAnswer, endpoint: &Endpoint) {
        let invalid = match seen.key() {
            None | Some("") => true,
            Some(k) => {
                k.len() > Contract::KEY_LEN_MAX && k.bytes().all(|b| (0x20..0x7f).contains(&b))
            }
        };
        if invalid && endpoint.requires_key() && (200..300).contains(&r.status) {
            self.note(Breach::InvalidKeyAccepted, vec![seen.clone()]);
        }
    }

    /// KEY-07: a printable key (no control character, no surrounding white space: of
    /// those the contract says nothing) refused 400 about the `Idempotency-Key`, kept
    /// apart when it is not printable ASCII (A-KEY-LENGTH: the contract gives no
    /// character set), and whether such a key was ever accepted.
    pub(super) fn note_refused_key(&mut self, seen: &Rec, r: &ObservedAnswer) {
        let Some(key) = seen.key() else {
            return;
        };
        let ascii = key.bytes().all(|b| (0x20..0x7f).contains(&b));
        if !ascii && (200..300).contains(&r.status) {
            self.other_key_accepted = true;
        }
        // Most answers are no key's refusal: they are read no further.
        if r.status != 400 || !r.about_key {
            return;
        }
        if key.chars().any(char::is_control) || key.trim() != key {
            return;
        }
        // The most characters it has in any reading of "character" (A-KEY-LENGTH):
        // UTF-16 code units are never fewer than scalar values or graphemes.
        let units = key.encode_utf16().count();
        let slot = if ascii {
            &mut self.shortest_refused_key
        } else {
            &mut self.shortest_refused_other_key
        };
        if slot.as_deref().is_none_or(|(n, _)| units < *n) {
            *slot = Some(Box::new((units, seen.seen())));
        }
    }
}
