//! The client's timeouts and query schedule, as the wire shows them.
//!
//! - TIMEOUT-01 ("at least 20 seconds for create and confirm and at least 10 seconds for
//!   queries"): a client that gave up on an exchange (`TimedOut`: it hung up before the
//!   answer) sooner than that after sending it ([`Breach::GaveUpTooSoon`]).
//! - SCHED-01 ("stopping at a terminal status or on its webhook"): a query of a Payment
//!   whose schedule started ("after receiving a 202, a timeout or a 5xx" of its create,
//!   confirm or cancel), sent after an answer to an earlier query of it showed it
//!   `succeeded`, `failed`, `canceled` or `expired`, or after the webhook of such a
//!   status reached the merchant (its endpoint answered 2xx: a `webhook_delivered`
//!   event) ([`Breach::QueryAfterFinal`]): the schedule went on past the end. The
//!   contract names no end for queries outside a schedule (a reconciliation, an order
//!   page read again), so those are not judged; a first query after a create or confirm
//!   answer showed the status (a reconciliation) is not one either. A
//!   webhook counts only where the wire shows nothing newer of its Payment: no answer
//!   showed a later version, no confirm of it is in flight or left without an answer
//!   (a card retry's attempt may be newer than a `failed` webhook, re-delivered).
//!
//! New business for a Payment (a create of its order, a confirm, a cancel, a refund)
//! opens its queries again until its answer; one refused (a 4xx) changed nothing.
//!
//! Memory: one entry per Payment in its schedule, one record per Payment a query or a
//! webhook showed final in it (and per request of new business in flight for one).

use super::{Breach, Delivered, Rec, WireFacts, Witness};
use crate::facts::query_object::{self, QueryObject};
use payhub_model::observation::VersionMark;
use payhub_model::observed::{IdKind, ObservedAnswer};
use payhub_model::{
    Contract, Endpoint, Environment, ErrorCode, Json, MerchantId, Method, Millis, PaymentId,
    RefundId, RequestId, Text, WebhookEvent, WebhookObject,
};
use std::sync::Arc;

/// What showed a Payment final to its merchant: a query's answer, or a webhook.
#[derive(Clone, Debug)]
pub(super) enum ShownFinal {
    Query(Rec),
    Webhook(Box<Delivered>),
}

fn is_final(status: Option<&str>) -> bool {
    matches!(
        status,
        Some("succeeded" | "failed" | "canceled" | "expired")
    )
}

/// The Payment a query asks for: by id, or by its order number once an answer tied it.
fn queried(
    facts: &WireFacts,
    (m, e): (MerchantId, Environment),
    ep: &Endpoint,
) -> Option<PaymentId> {
    match ep {
        Endpoint::GetPayment { payment_id } => Some(*payment_id),
        Endpoint::ListPayments { merchant_order_no } => facts
            .order_payments
            .get(&super::fp(&(m, e, merchant_order_no.clone())))
            .map(|(p, _)| *p),
        _ => None,
    }
}

impl WireFacts {
    /// At a client's timeout: a create or confirm given up on before 20 s, a query
    /// before 10 s; the exchange closes with no answer.
    pub(super) fn gave_up(&mut self, at: Millis, id: RequestId) {
        self.judge_gave_up(at, id);
        self.closed(at, id, None);
    }

    fn judge_gave_up(&mut self, at: Millis, id: RequestId) {
        let Some((seen, _, ep)) = self.open.get(&id) else {
            return;
        };
        let least = match ep {
            Endpoint::CreatePayment { .. } | Endpoint::ConfirmPayment { .. } => {
                Contract::POST_TIMEOUT_MIN
            }
            _ if seen.method == Method::Get => Contract::QUERY_TIMEOUT_MIN,
            _ => return,
        };
        if at.since(seen.sent) < least {
            let mut s = super::record::Record::clone(seen);
            s.closed = at;
            s.open = false;
            self.note(Breach::GaveUpTooSoon, vec![Arc::new(s)]);
        }
    }

    /// The Payment a request of new business is for (a create of a known order, a
    /// confirm, a cancel, a refund).
    fn business_for(&self, (m, e): (MerchantId, Environment), ep: &Endpoint) -> Option<PaymentId> {
        match ep {
            Endpoint::CreatePayment {
                body: Json::Parsed(b),
            } => b
                .merchant_order_no
                .as_ref()
                .and_then(|o| self.order_payments.get(&super::fp(&(m, e, o.clone()))))
                .map(|(p, _)| *p),
            Endpoint::ConfirmPayment { payment_id, .. }
            | Endpoint::CancelPayment { payment_id } => Some(*payment_id),
            Endpoint::CreateRefund {
                body: Json::Parsed(b),
            } => b.payment_id,
            _ => None,
        }
    }

    /// At a send: a query of a Payment an earlier query or webhook showed final; new
    /// business for a Payment opens its queries again.
    pub(super) fn judge_query_after_final(
        &mut self,
        seen: &Rec,
        owner: (MerchantId, Environment),
        ep: &Endpoint,
    ) {
        let (m, e) = owner;
        if let Some(p) = self.business_for(owner, ep) {
            if let Some(f) = self.final_shown.remove(&(m, e, p)) {
                self.final_suspended.insert(seen.id, ((m, e, p), f));
            }
            return;
        }
        let Some(p) = queried(self, owner, ep) else {
            return;
        };
        match self.final_shown.get(&(m, e, p)) {
            Some(ShownFinal::Query(f)) => {
                let f = f.clone();
                self.note(Breach::QueryAfterFinal, vec![f, seen.clone()]);
            }
            Some(ShownFinal::Webhook(d))
                if !self.witnesses.contains_key(&Breach::QueryAfterFinal) =>
            {
                let w = Witness {
                    webhook: Some(Delivered::clone(d)),
                    ..Witness::of(Breach::QueryAfterFinal, vec![seen.seen()])
                };
                self.witnesses.insert(Breach::QueryAfterFinal, w);
            }
            _ => {}
        }
    }

    /// At the answer to new business for a Payment. A refusal after which the contract
    /// asks for no query (a 4xx but 429, "retry … if there is still no result, switch to
    /// querying", and 409 `order_no_conflict`, `operation_in_progress` or
    /// `payment_in_progress`, "query the existing Payment", "wait for the result, or
    /// query") changed nothing: what showed the Payment final before the request stands
    /// again, unless other business for it is in flight. Any other answer ends every such
    /// suspension of the Payment: something may have changed it.
    pub(super) fn business_closed(
        &mut self,
        id: RequestId,
        owner: Option<(MerchantId, Environment)>,
        ep: &Endpoint,
        reply: Option<super::Reply<'_>>,
    ) {
        let code = reply.map(|r| match r {
            super::Reply::Full(r) => (r.status, r.code),
            super::Reply::Status(s, _) => (s, None),
        });
        let asks_query = |c| {
            use ErrorCode::*;
            matches!(c, OrderNoConflict | OperationInProgress | PaymentInProgress)
        };
        let quiet = match code {
            Some((409, c)) => c.is_some_and(|c| !asks_query(c)),
            Some((s, _)) => (400..500).contains(&s) && s != 429,
            None => false,
        };
        let suspended = self.final_suspended.remove(&id);
        if !quiet {
            if let Some((m, e)) = owner
                && let Some(p) = self.business_for((m, e), ep)
            {
                self.final_suspended.retain(|_, (k, _)| *k != (m, e, p));
            }
            return;
        }
        let Some((k, f)) = suspended else {
            return;
        };
        let in_flight = (self.open.values())
            .any(|(_, o, ep)| o.and_then(|o| self.business_for(o, ep)) == Some(k.2));
        if !in_flight {
            self.final_shown.entry(k).or_insert(f);
        }
    }

    /// SCHED-01's "when to start": a 202, a timeout or a 5xx of a create, confirm or
    /// cancel of the Payment (`shown` by the answer, or named by the path); a create's
    /// without an answer naming it is its order's, in `unknown_orders` until an answer
    /// ties them.
    pub(super) fn schedule_started(
        &mut self,
        (m, e): (MerchantId, Environment),
        ep: &Endpoint,
        shown: Option<PaymentId>,
    ) {
        let named = match ep {
            Endpoint::ConfirmPayment { payment_id, .. }
            | Endpoint::CancelPayment { payment_id } => Some(*payment_id),
            Endpoint::CreatePayment { .. } => shown,
            _ => None,
        };
        // A new schedule starts: what showed the Payment final before ends nothing.
        if let Some(p) = named {
            self.final_shown.remove(&(m, e, p));
            self.scheduled.insert((m, e, p));
        }
    }

    /// Whether the Payment's schedule started: by its id, or by its order's unknown create.
    fn in_schedule(&self, k: &(MerchantId, Environment, PaymentId), order: Option<&Text>) -> bool {
        self.scheduled.contains(k)
            || order.is_some_and(|o| self.unknown_orders.get((k.0, k.1), o).is_some())
    }

    /// At a webhook the merchant's endpoint acknowledged: the Payment it shows final,
    /// unless the wire shows something newer of it (see the module doc).
    pub(super) fn webhook_delivered(&mut self, at: Millis, event: &WebhookEvent) {
        let WebhookObject::Payment(p) = &event.object else {
            return;
        };
        if !is_final(Some(p.status.as_str())) {
            return;
        }
        let k = (event.merchant, event.environment, p.id);
        let high = self.payments.get(&p.id).and_then(|x| x.version());
        let newer_shown = high.is_some_and(|(h, _)| {
            matches!(
                h.answer().and_then(|a| a.version),
                Some(VersionMark::Number(v)) if v > i128::from(p.version)
            )
        });
        let confirm_open = self
            .open
            .values()
            .any(|(_, _, ep)| matches!(ep, Endpoint::ConfirmPayment { payment_id, .. } if *payment_id == p.id));
        let confirm_unknown = self.unresolved_payments.get(&k).is_some_and(|u| {
            u.method == Method::Post && u.answer().is_none_or(|a| a.status >= 500)
        });
        if newer_shown
            || confirm_open
            || confirm_unknown
            || !self.in_schedule(&k, Some(&p.merchant_order_no))
        {
            return;
        }
        self.scheduled.remove(&k);
        let delivered = Delivered {
            at,
            event: payhub_model::Text::format(format_args!("{}", event.id)),
            kind: event.kind.clone(),
            object: self.ids.name(IdKind::Payment, p.id.0),
            version: p.version,
        };
        self.final_shown
            .entry(k)
            .or_insert_with(|| ShownFinal::Webhook(Box::new(delivered)));
    }

    /// At a known answer to a query: the Payment it shows final.
    pub(super) fn note_final_by_query(
        &mut self,
        seen: &Rec,
        (m, e): (MerchantId, Environment),
        r: &ObservedAnswer,
        ep: &Endpoint,
    ) {
        if !matches!(
            ep,
            Endpoint::GetPayment { .. } | Endpoint::ListPayments { .. }
        ) {
            return;
        }
        let Some(p) = r
            .first(IdKind::Payment)
            .filter(|p| is_final(p.status.as_deref()))
        else {
            return;
        };
        let k = (m, e, PaymentId(p.id));
        let order = match ep {
            Endpoint::ListPayments { merchant_order_no } => Some(merchant_order_no),
            _ => p.number.as_ref(),
        };
        if self.in_schedule(&k, order) {
            self.scheduled.remove(&k);
            self.final_shown
                .entry(k)
                .or_insert_with(|| ShownFinal::Query(seen.clone()));
        }
    }
}

/// SCHED-02 ("leave at least 10 seconds between two queries of the same object"): the
/// closest pair of queries of one object, by id or by its number once an answer tied them.
impl WireFacts {
    /// Keeps two consecutive queries of one object if no pair held is as close.
    pub(super) fn note_queries(&mut self, earlier: &Rec, later: &Rec) {
        // A-QUERY-RETRY-AFTER: a query refused 429 "was not executed"; one sent once its
        // Retry-After passed does what RATE-03 asks, whatever the spacing.
        let refused = earlier.answer().filter(|a| a.status == 429);
        if let Some(s) = refused.and_then(|a| a.retry_after_s) {
            if later.sent >= earlier.closed.after(Millis::secs(u64::from(s))) {
                return;
            }
        }
        let gap = later.sent.since(earlier.sent);
        let closer = self
            .closest_queries
            .as_deref()
            .is_none_or(|[a, b]| gap < b.sent.since(a.sent));
        if closer {
            self.closest_queries = Some(Box::new([earlier.seen(), later.seen()]));
        }
    }

    /// SCHED-02: a query's record, once answered, is the one a later query too soon is
    /// shown against (not the record taken when it was sent, which has no answer yet).
    pub(super) fn close_last_query(
        &mut self,
        seen: &Rec,
        (m, e): (MerchantId, Environment),
        ep: &Endpoint,
    ) {
        let Some(object) = QueryObject::named_by(ep) else {
            return;
        };
        let k = super::query_key((m, e), &object);
        let resolved = self.query_aliases.get(&k).copied();
        for k in [Some(k), resolved].into_iter().flatten() {
            let held = [self.last_query.get_mut(&k), self.last_by_number.get_mut(&k)];
            for last in held.into_iter().flatten().filter(|l| l.id == seen.id) {
                *last = seen.clone();
            }
        }
    }

    /// SCHED-02: an answer ties numbers to ids; the queries already sent by a number
    /// were queries of the id's object ([`query_object::merge`]; the first id shown for
    /// a number is kept).
    pub(super) fn tie_numbers(&mut self, owner: (MerchantId, Environment), r: &ObservedAnswer) {
        for o in &r.objects {
            let (number, id) = match (o.kind, o.number.clone()) {
                (IdKind::Payment, Some(n)) => (
                    QueryObject::PaymentNo(n),
                    QueryObject::Payment(PaymentId(o.id)),
                ),
                (IdKind::Refund, Some(n)) => (
                    QueryObject::RefundNo(n),
                    QueryObject::Refund(RefundId(o.id)),
                ),
                _ => continue,
            };
            let (alias, by_id) = (
                super::query_key(owner, &number),
                super::query_key(owner, &id),
            );
            if self.query_aliases.contains_key(&alias) {
                continue;
            }
            let by_number = self.last_by_number.remove(&alias);
            let held = self.last_query.get(&by_id);
            let merged = query_object::merge(by_number.as_ref(), held, |q| q.sent);
            if let Some(q) = merged.last {
                self.last_query.insert(by_id, q);
            }
            if let Some((earlier, later)) = merged.pair {
                self.note_queries(&earlier, &later);
            }
            self.query_aliases.insert(alias, by_id);
        }
    }
}
