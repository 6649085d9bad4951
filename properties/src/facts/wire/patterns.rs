//! The platform-side patterns of the wire family: each answer known to the client
//! judged against what earlier answers showed (see the parent module's doc).

use super::{Breach, Rec, WireFacts, first_differing, fp};
use payhub_model::event::ScopeKey;
use payhub_model::observation::VersionMark;
use payhub_model::observed::{IdKind, ObservedAnswer, ObservedObject};
use payhub_model::{Endpoint, Environment, ErrorCode, MerchantId, PaymentId, Text};

impl WireFacts {
    /// ORDER-01, ATTEMPT-01, UNIQ-04: the conflicts that point at an object name it.
    pub(super) fn judge_related(&mut self, seen: &Rec, r: &ObservedAnswer) {
        let needs = matches!(
            r.code,
            Some(
                ErrorCode::OrderNoConflict
                    | ErrorCode::PaymentInProgress
                    | ErrorCode::RefundNoConflict
            )
        );
        if needs && seen.answer().is_some_and(|a| !a.related) {
            self.note(Breach::RelatedResourceMissing, vec![seen.clone()]);
        }
    }

    /// UNIQ-01: one Payment per (merchant, environment, order number).
    pub(super) fn judge_order(
        &mut self,
        seen: &Rec,
        k: (MerchantId, Environment, Text),
        id: PaymentId,
    ) {
        let other = |(first, _): &(PaymentId, Rec)| *first != id;
        let k = fp(&k);
        let first = first_differing(&mut self.order_payments, k, (id, seen.clone()), other);
        if let Some((_, first)) = first {
            self.note(Breach::TwoPaymentsForOrder, vec![first, seen.clone()]);
        }
    }

    /// ORDER-01: a 409 order_no_conflict to a create names the Payment earlier answers
    /// showed for its order number (a name the source writes another way is another
    /// Payment: ids are compared as written).
    pub(super) fn judge_related_order(
        &mut self,
        seen: &Rec,
        (m, e): (MerchantId, Environment),
        r: &ObservedAnswer,
        endpoint: &Endpoint,
    ) {
        let (Some(ErrorCode::OrderNoConflict), Some(named)) = (r.code, &r.related_id) else {
            return;
        };
        let order = super::order_no(endpoint).map(|o| super::fp(&(m, e, o.clone())));
        let Some((p, first)) = order.and_then(|k| self.order_payments.get(&k)) else {
            return;
        };
        if self.ids.name(IdKind::Payment, p.0) != *named {
            let first = first.clone();
            self.note(Breach::RelatedResourceOther, vec![first, seen.clone()]);
        }
    }

    /// A version shown by an answer to a request sent after the highest version seen
    /// was received never goes back (concurrent requests are not ordered).
    /// Versions are compared only as numbers, between sightings of one Payment (a text
    /// version, or none, is not ordered: A-VERSION). A request sent after the highest
    /// version seen was received is never answered with a lower one, nor with the same
    /// one and another status (WEBHOOK-02: it rises with every visible change).
    pub(super) fn judge_version(&mut self, seen: &Rec, p: &ObservedObject) {
        let Some(VersionMark::Number(version)) = p.version else {
            return;
        };
        let payment = PaymentId(p.id);
        let high = self.payments.get(&payment).and_then(|x| x.version());
        let v = high.and_then(|(h, _)| match h.answer().and_then(|a| a.version) {
            Some(VersionMark::Number(v)) => Some(v),
            _ => None,
        });
        match (high, v) {
            (Some((high, _)), Some(v)) if version < v && self.after(seen, high) => {
                let high = high.clone();
                self.note(Breach::VersionWentBack, vec![high, seen.clone()]);
            }
            (Some((high, status)), Some(v))
                if version == v
                    && self.after(seen, high)
                    && status.is_some()
                    && p.status.is_some()
                    && status != p.status.as_ref().map(super::fp) =>
            {
                let high = high.clone();
                self.note(Breach::VersionStayedOnChange, vec![high, seen.clone()]);
            }
            (Some(_), Some(v)) if version <= v => {}
            _ => {
                let status = p.status.as_ref().map(super::fp);
                self.payments.at(payment).set_version(seen.clone(), status);
            }
        }
    }

    /// QUERY-01, QUERY-02, QUERY-03: a query shows the object it asked for: by id, that
    /// id; by number, only objects of exactly that number, and at most one Payment of an
    /// order ("order numbers are unique within one environment; at most one entry").
    pub(super) fn judge_lookup(&mut self, seen: &Rec, r: &ObservedAnswer, endpoint: &Endpoint) {
        let objects = |kind: IdKind| r.objects.iter().filter(move |o| o.kind == kind);
        let other = match endpoint {
            Endpoint::GetPayment { payment_id } => {
                objects(IdKind::Payment).any(|o| o.id != payment_id.0)
            }
            Endpoint::GetRefund { refund_id } => {
                objects(IdKind::Refund).any(|o| o.id != refund_id.0)
            }
            Endpoint::ListPayments {
                merchant_order_no: asked,
            } => {
                objects(IdKind::Payment).count() > 1
                    || objects(IdKind::Payment)
                        .any(|o| o.number.as_ref().is_some_and(|n| n != asked))
            }
            Endpoint::ListRefundsByNo {
                merchant_refund_no: asked,
            } => objects(IdKind::Refund).any(|o| o.number.as_ref().is_some_and(|n| n != asked)),
            _ => false,
        };
        if other {
            self.note(Breach::LookupOtherNumber, vec![seen.clone()]);
        }
    }

    /// QUERY-05 ("no record: the platform has never created a Payment for this order
    /// number"), QUERY-01: a lookup of an order, or a query of a Payment's id, answered no
    /// record after an answer showed the merchant that Payment (one sent before that
    /// answer came may miss it: A-NOT-FOUND-IN-FLIGHT).
    pub(super) fn judge_no_record(
        &mut self,
        seen: &Rec,
        (m, e): (MerchantId, Environment),
        r: &ObservedAnswer,
        endpoint: &Endpoint,
    ) {
        let known = match endpoint {
            Endpoint::ListPayments { merchant_order_no }
                if r.status == 200 && r.first(IdKind::Payment).is_none() =>
            {
                let order = super::fp(&(m, e, merchant_order_no.clone()));
                self.order_payments.get(&order).map(|(_, first)| first)
            }
            Endpoint::GetPayment { payment_id } if r.status == 404 => {
                let first = self.payments.get(payment_id).and_then(|p| p.first());
                first.filter(|(_, owner, _)| *owner == (m, e)).map(|f| f.2)
            }
            _ => None,
        };
        if let Some(first) = known.filter(|first| self.after(seen, first)).cloned() {
            self.note(Breach::LookupMissesKnown, vec![first, seen.clone()]);
        }
    }

    /// REPLAY-01/02 and CONFLICT-01 against the scope's first execution: the facts keep
    /// the soonest breach after the execution's answer; whether it falls within the
    /// retention is the property's to judge (RET-01).
    ///
    /// A confirm's or a cancel's 2xx may execute nothing (S8's "original status", a
    /// cancel of a canceled Payment: A-S8-NOBIND, A-409-NOBIND), so a later request of
    /// its key may be judged afresh: of those (`path_only`) only what no reading allows
    /// is judged, a conflict with nothing to compare and another object.
    pub(super) fn judge_replay(
        &mut self,
        scope: &ScopeKey,
        seen: Rec,
        r: &ObservedAnswer,
        path_only: bool,
    ) {
        let id = super::fp(scope);
        let other_fields = self.other_fields.get(&seen.id).copied();
        let conflict = r.code == Some(ErrorCode::IdempotencyConflict);
        let held = self.scopes.get(&id).and_then(|s| s.execution());
        let Some((first, first_other_fields)) = held else {
            if r.is_success() {
                // CONC-02: a request of this key answered as new business, or 409
                // idempotency_conflict, before this execution's answer came, with its
                // parameters (and its other fields: A-SAFE-FIELDS).
                let s = self.scopes.entry(id).or_default();
                let early = s.rare.as_mut().and_then(|r| r.early.take());
                s.set_execution(seen.clone(), other_fields);
                if let Some(early) = early {
                    self.judge_early(early, &seen, other_fields);
                }
            } else if (as_new_business(r) || conflict) && !path_only {
                let rare = self.scopes.entry(id).or_default().rare_mut();
                rare.early.get_or_insert((seen, other_fields));
            }
            return;
        };
        // A-SAFE-FIELDS: "amount, currency, … etc.": a field the contract does not name
        // may be compared too, so a conflict where one differs is no breach.
        let same = first.params().compare(&seen.params());
        let unchanged = same == Some(true) && first_other_fields == other_fields;
        if !self.after(&seen, &first) {
            if !path_only {
                if conflict && unchanged {
                    self.note_soonest(Breach::ConflictWithoutChange, &first, &seen);
                }
                self.judge_in_flight(first, seen, r, same);
            }
            return;
        }
        let first_object = first.answer().and_then(|a| a.object);
        let object = seen.answer().and_then(|a| a.object);
        // An object not named (no id, or null) is not known: never another.
        let other_object = matches!((first_object, object), (Some(a), Some(b)) if a != b);
        let breach = match (same, conflict) {
            (Some(false), false) if r.is_success() => Some(Breach::ConflictMissing),
            (_, true) if unchanged => Some(Breach::ConflictWithoutChange),
            (_, false) if r.is_success() && other_object => Some(Breach::ReplayNotSameObject),
            _ if path_only => None,
            (Some(true), false) if r.status == 201 => Some(Breach::ReplayNotSameObject),
            // REPLAY-01: within the retention a replay is never new business; REPLAY-02:
            // nor judged again as a request (a 404 or a 422: "returns the object's
            // latest status (HTTP 200)"; a 400 may be about a header a log does not
            // keep; 401, 403, 429 and 503 refuse before the record is read).
            (Some(true), false) if as_new_business(r) || matches!(r.status, 404 | 422) => {
                Some(Breach::ReplayNotSameObject)
            }
            _ => None,
        };
        if let Some(b) = breach {
            self.note_soonest(b, &first, &seen);
        }
    }

    /// CONC-02: `early`, answered before the execution `seen` of its scope, as new
    /// business while `seen` executed (201: the same parameters executed twice), or 409
    /// idempotency_conflict (with nothing changed: never a conflict).
    fn judge_early(&mut self, early: (Rec, Option<u64>), seen: &Rec, other_fields: Option<u64>) {
        let (other, other_fields_early) = early;
        if other.params().compare(&seen.params()) != Some(true) {
            return;
        }
        if other.answer().and_then(|a| a.code) == Some(ErrorCode::IdempotencyConflict) {
            if other_fields_early == other_fields {
                self.note_soonest(Breach::ConflictWithoutChange, seen, &other);
            }
            return;
        }
        // A 200 may be S4's existing object, shown to a key that executed nothing (a
        // branch of "returns the existing object identifier or a conflict").
        if seen.answer().map(|a| a.status) != Some(201) {
            return;
        }
        let pair = if other.sent < seen.sent {
            vec![other, seen.clone()]
        } else {
            vec![seen.clone(), other]
        };
        self.note(Breach::SameKeyAsNewBusiness, pair);
    }

    /// A request of the scope sent while its execution (`first`, answered 2xx) was in
    /// flight: whichever the platform took first, it waits for the execution (CONC-02),
    /// so it is never new business; with the same parameters a 2xx shows the same
    /// object; with other parameters it is never answered 2xx (CONFLICT-01: the other
    /// parameters would be executed, or the execution's object returned for them). Its
    /// 409 `operation_in_progress` is not judged here: whether an in-flight request is
    /// compared first is read two ways (A-CONFLICT-IN-FLIGHT); its 409
    /// `idempotency_conflict` with the same parameters is judged by the caller. `same`:
    /// [`WireParams::compare`].
    fn judge_in_flight(&mut self, first: Rec, seen: Rec, r: &ObservedAnswer, same: Option<bool>) {
        if as_new_business(r) && same == Some(true) {
            self.note(Breach::SameKeyAsNewBusiness, vec![first, seen]);
            return;
        }
        if !r.is_success() {
            return;
        }
        let object = |e: &Rec| e.answer().and_then(|a| a.object);
        let breach = if same == Some(false) {
            Breach::ConflictMissing
        } else {
            match (object(&first), object(&seen)) {
                (Some(a), Some(b)) if a != b => Breach::ReplayNotSameObject,
                _ => return,
            }
        };
        // Kept as a replay of the execution, sent before its answer (RET-01 cannot have
        // passed).
        self.note_soonest(breach, &first, &seen);
    }

    /// ATTEMPT-06: a Payment keeps its amount ("the new attempt keeps the original
    /// Payment"); SCOPE-02: it belongs to one environment of its merchant (objects of
    /// merchants the source does not name apart are not compared).
    pub(super) fn judge_payment_sighting(
        &mut self,
        seen: &Rec,
        owner: (MerchantId, Environment),
        p: &ObservedObject,
    ) {
        let id = PaymentId(p.id);
        let held = (self.payments.get(&id)).and_then(|x| x.first());
        let Some((amount, first_owner, first)) = held.map(|(a, o, f)| (a, o, f.clone())) else {
            (self.payments.at(id)).set_first(p.amount, owner, seen.clone());
            return;
        };
        if let (Some(a), Some(b)) = (amount, p.amount) {
            if a != b {
                self.note(Breach::AmountChanged, vec![first.clone(), seen.clone()]);
            }
        }
        if first_owner.0 == owner.0 && first_owner.1 != owner.1 {
            self.note(Breach::ObjectInTwoEnvironments, vec![first, seen.clone()]);
        }
    }
}

/// The answers of new business to a used key: a conflict with another object of the
/// same order, refund number or Payment (REPLAY-01: never within the retention).
pub(super) fn as_new_business(r: &ObservedAnswer) -> bool {
    matches!(
        r.code,
        Some(
            ErrorCode::OrderNoConflict | ErrorCode::PaymentInProgress | ErrorCode::RefundNoConflict
        )
    )
}
