//! SCOPE-01, SCOPE-02: what a merchant is shown belongs to it. An answer's single object
//! is judged by the money family against the owner the world saw
//! (`Money::foreign_object`); here, against the store's mirror, what that leaves out: the
//! Payments and refunds of a list answer, and the object of a webhook, each shown to a
//! merchant and environment other than the one the store holds it for.

use crate::facts::responses::{Misanswer, Shown, Slot, Store};
use payhub_model::event::Owner;
use payhub_model::{
    ApiResponse, PaymentId, RefundId, RequestId, ResponseBody, WebhookEvent, WebhookObject,
};

/// The store holds Payment `id` for another owner than `to`.
fn foreign_payment(store: &Store<'_>, to: Owner, id: PaymentId) -> bool {
    store
        .attempts
        .payments
        .get(&id)
        .is_some_and(|p| Some((p.merchant, p.environment)) != to)
}

/// The store holds refund `id` for another owner than `to`.
fn foreign_refund(store: &Store<'_>, to: Owner, id: RefundId) -> bool {
    store
        .refunds
        .refunds
        .get(&id)
        .is_some_and(|r| Some((r.merchant, r.environment)) != to)
}

/// A list answer to a request of `to` shows another owner's Payment or refund.
pub(super) fn judge_foreign_list(
    id: RequestId,
    response: &ApiResponse,
    to: Owner,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    if to.is_none() {
        return;
    }
    let miss = || Misanswer::of(Some(id), response);
    match &response.body {
        ResponseBody::Payments { data } => {
            if let Some(p) = data.iter().find(|p| foreign_payment(store, to, p.id)) {
                let stored = store.attempts.payments.get(&p.id).map(Shown::of_store);
                found(
                    Slot::Foreign,
                    miss().about(p.id, Some(Shown::of_view(p)), stored),
                );
            }
        }
        ResponseBody::Refunds { data } => {
            if let Some(r) = data.iter().find(|r| foreign_refund(store, to, r.id)) {
                let stored = store.refunds.refunds.get(&r.id);
                let m = miss().showing_refund(Some((r.id, r.status, r.version)), stored);
                found(Slot::Foreign, m);
            }
        }
        _ => {}
    }
}

/// A webhook sent to one merchant and environment shows another's object.
pub(super) fn judge_foreign_webhook(
    event: &WebhookEvent,
    store: &Store<'_>,
    found: &mut dyn FnMut(Slot, Misanswer),
) {
    let to = Some((event.merchant, event.environment));
    let m = Misanswer::default();
    match &event.object {
        WebhookObject::Payment(p) if foreign_payment(store, to, p.id) => {
            let stored = store.attempts.payments.get(&p.id).map(Shown::of_store);
            found(
                Slot::Foreign,
                m.about(p.id, Some(Shown::of_view(p)), stored),
            );
        }
        WebhookObject::Refund(r) if foreign_refund(store, to, r.id) => {
            let stored = store.refunds.refunds.get(&r.id);
            found(
                Slot::Foreign,
                m.showing_refund(Some((r.id, r.status, r.version)), stored),
            );
        }
        _ => {}
    }
}
