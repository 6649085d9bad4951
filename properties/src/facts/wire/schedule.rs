//! The client's timeouts and query schedule, as the wire shows them.
//!
//! - TIMEOUT-01 ("at least 20 seconds for create and confirm and at least 10 seconds for
//!   queries"): a client that gave up on an exchange (`TimedOut`: it hung up before the
//!   answer) sooner than that after sending it ([`Breach::GaveUpTooSoon`]).
//! - SCHED-01 ("stopping at a terminal status"): a query of a Payment sent after an
//!   answer to an earlier query of it showed it `succeeded`, `failed`, `canceled` or
//!   `expired` ([`Breach::QueryAfterFinal`]): the schedule went on past the end. A first
//!   query after a create or confirm answer showed the status (a reconciliation) is not
//!   one.
//!
//! Memory: one record per Payment a query showed final.

use super::{Breach, Rec, Seen, WireFacts};
use payhub_model::observed::{IdKind, ObservedAnswer};
use payhub_model::{
    Contract, Endpoint, Environment, Json, MerchantId, Method, Millis, PaymentId, RequestId,
};
use std::sync::Arc;

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
            .get(&(m, e, merchant_order_no.clone()))
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
            let mut s = Seen::clone(seen);
            s.closed = at;
            s.open = false;
            self.note(Breach::GaveUpTooSoon, vec![Arc::new(s)]);
        }
    }

    /// At a send: a query of a Payment an earlier query showed final; new business for
    /// a Payment opens its queries again.
    pub(super) fn judge_query_after_final(
        &mut self,
        seen: &Rec,
        owner: (MerchantId, Environment),
        ep: &Endpoint,
    ) {
        let (m, e) = owner;
        let business = match ep {
            Endpoint::CreatePayment {
                body: Json::Parsed(b),
            } => b
                .merchant_order_no
                .as_ref()
                .and_then(|o| self.order_payments.get(&(m, e, o.clone())).map(|(p, _)| *p)),
            Endpoint::ConfirmPayment { payment_id, .. }
            | Endpoint::CancelPayment { payment_id } => Some(*payment_id),
            Endpoint::CreateRefund {
                body: Json::Parsed(b),
            } => b.payment_id,
            _ => None,
        };
        if let Some(p) = business {
            self.final_by_query.remove(&(m, e, p));
            return;
        }
        let Some(p) = queried(self, owner, ep) else {
            return;
        };
        if let Some(f) = self.final_by_query.get(&(owner.0, owner.1, p)) {
            let f = f.clone();
            self.note(Breach::QueryAfterFinal, vec![f, seen.clone()]);
        }
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
        if let Some(p) = r
            .first(IdKind::Payment)
            .filter(|p| is_final(p.status.as_deref()))
        {
            self.final_by_query
                .entry((m, e, PaymentId(p.id)))
                .or_insert_with(|| seen.clone());
        }
    }
}
