//! Business orders and refund requests, as the wire witnesses them: the wire's reading of
//! "the same purchase" (UNKNOWN-03, S11), since the client's database is not seen.
//!
//! An order is *unresolved* after a create, confirm or cancel with no answer or a 5xx other
//! than 503 (a 503 executes nothing, RATE-04), or an answer showing the Payment
//! `processing` or `requires_action` (CANCEL-02) or `resolution_status` other than `known`
//! (RES-04). A later create of the same merchant, environment, amount and currency under
//! another `merchant_order_no`, sent while that order is unresolved, is filed under the
//! first order (`client-never-charges-an-order-twice`, EFFECT-01); a confirm under its
//! Payment's order. Refunds alike (S11: "do not change the refund number and apply
//! again"): one of the same Payment and amount under another `merchant_refund_no` while a
//! refund is unresolved (no answer, 5xx other than 503, a 202 showing it `processing` or
//! `pending_review`, `resolution_status` other than `known`) is
//! filed under the first number (`client-never-refunds-a-request-twice`). A request still
//! in flight leaves nothing unresolved. False positive: two purchases of one amount by one
//! merchant, the second created while the first was unresolved, read as one. The filing
//! goes into the exchange's origin (`Origin::business`), as a client model's does.

use payhub_model::event::BusinessOrder;
use payhub_model::{
    ApiRequest, ApiResponse, Endpoint, Environment, Json, MerchantId, PaymentId, PaymentStatus,
    ResolutionStatus, Text,
};
use std::collections::BTreeMap;

type Owner = (MerchantId, Environment);

/// The reading of "the same purchase" the verdict says it used.
pub const READING: &str = "the same purchase read from the wire: same merchant and environment, same amount and currency, created while an earlier order was unresolved to the merchant (no answer, a 5xx other than 503, processing, requires_action or manual_review when last seen); two purchases of one amount, the second created while the first was unresolved, are read as one";

/// What makes two creates the same purchase: (owner, amount, currency).
type Purchase = (Owner, u64, Text);

/// What makes two refund creates the same refund request: (owner, Payment, amount).
type RefundOf = (Owner, PaymentId, u64);

/// The filings the wire shows, and what is unresolved to the merchant.
#[derive(Clone, Debug, Default)]
pub struct Orders {
    /// Unresolved orders, by purchase, under the order number they are filed as.
    unknown: Vec<(Purchase, Text)>,
    /// Each order number sent to the order it is filed under.
    filed: BTreeMap<(Owner, Text), Text>,
    /// Each Payment seen: its purchase and the order it is filed under.
    payments: BTreeMap<PaymentId, (Purchase, Text)>,
    /// Unresolved refund requests, under the refund number they are filed as.
    unknown_refunds: Vec<(RefundOf, Text)>,
    /// Each refund number sent to the refund number it is filed under.
    refunds_filed: BTreeMap<(Owner, Text), Text>,
}

fn amount(a: Option<i64>) -> Option<u64> {
    a.and_then(|a| u64::try_from(a).ok())
}

fn purchase(owner: Owner, request: &ApiRequest) -> Option<(Purchase, Text)> {
    let Endpoint::CreatePayment {
        body: Json::Parsed(b),
    } = &request.endpoint
    else {
        return None;
    };
    let order = b.merchant_order_no.clone()?;
    Some(((owner, amount(b.amount)?, b.currency.clone()?), order))
}

fn refund_of(owner: Owner, request: &ApiRequest) -> Option<(RefundOf, Text)> {
    let Endpoint::CreateRefund {
        body: Json::Parsed(b),
    } = &request.endpoint
    else {
        return None;
    };
    let number = b.merchant_refund_no.clone()?;
    Some(((owner, b.payment_id?, amount(b.amount)?), number))
}

/// The database number of an owner: one per (merchant, environment).
pub(super) fn db(owner: Owner) -> u8 {
    let env = match owner.1 {
        Environment::Test => 0,
        Environment::Live => 1,
    };
    (owner.0.0 as u8).wrapping_mul(2).wrapping_add(env)
}

/// Whether an answer leaves the merchant not knowing what its request did: none, or a
/// 5xx other than 503 (a 503 executed nothing).
fn unanswered(answer: Option<&ApiResponse>) -> bool {
    answer.is_none_or(|a| a.status >= 500 && a.status != 503)
}

impl Orders {
    /// Whether `owner` sent a create of order number `order`.
    pub fn sent(&self, owner: Owner, order: &Text) -> bool {
        self.filed.contains_key(&(owner, order.clone()))
    }

    /// The business a request is for: a create's order (an unresolved order of the same
    /// purchase under another number, or its own), a confirm's Payment's order, a refund
    /// create's request (an unresolved one of the same Payment and amount, or its own
    /// number).
    pub fn business_of(&self, owner: Option<Owner>, request: &ApiRequest) -> Option<BusinessOrder> {
        let owner = owner?;
        let order = match &request.endpoint {
            Endpoint::CreatePayment { .. } => self.order_of(owner, request)?,
            Endpoint::ConfirmPayment { payment_id, .. } => self.payments.get(payment_id)?.1.clone(),
            Endpoint::CreateRefund { .. } => self.refund_filed(owner, request)?,
            _ => return None,
        };
        Some(BusinessOrder {
            db: db(owner),
            order,
        })
    }

    fn order_of(&self, owner: Owner, request: &ApiRequest) -> Option<Text> {
        let (p, order) = purchase(owner, request)?;
        if let Some(o) = self.filed.get(&(owner, order.clone())) {
            return Some(o.clone());
        }
        let earlier = self.unknown.iter().find(|(q, o)| *q == p && *o != order);
        Some(earlier.map_or(order, |(_, o)| o.clone()))
    }

    fn refund_filed(&self, owner: Owner, request: &ApiRequest) -> Option<Text> {
        let (r, number) = refund_of(owner, request)?;
        if let Some(n) = self.refunds_filed.get(&(owner, number.clone())) {
            return Some(n.clone());
        }
        let earlier = self
            .unknown_refunds
            .iter()
            .find(|(q, n)| *q == r && *n != number);
        Some(earlier.map_or(number, |(_, n)| n.clone()))
    }

    /// What the client learned from one exchange: `None` if it got no answer.
    pub fn observe(
        &mut self,
        owner: Option<Owner>,
        request: &ApiRequest,
        answer: Option<&ApiResponse>,
    ) {
        let Some(owner) = owner else { return };
        if let Some((_, number)) = purchase(owner, request)
            && let Some(order) = self.order_of(owner, request)
        {
            self.filed.entry((owner, number)).or_insert(order);
        }
        if let Some((_, number)) = refund_of(owner, request)
            && let Some(filed) = self.refund_filed(owner, request)
        {
            self.refunds_filed.entry((owner, number)).or_insert(filed);
        }
        if let Some(p) = answer.and_then(ApiResponse::payment) {
            let order = self
                .filed
                .get(&(owner, p.merchant_order_no.clone()))
                .cloned()
                .unwrap_or_else(|| p.merchant_order_no.clone());
            let purchase = (owner, p.amount, p.currency.clone());
            self.payments
                .insert(p.id, (purchase.clone(), order.clone()));
            self.unknown.retain(|(_, o)| *o != order);
            let unresolved = matches!(
                p.status,
                PaymentStatus::Processing | PaymentStatus::RequiresAction
            ) || p.resolution_status != ResolutionStatus::Known;
            if unresolved {
                self.unknown.push((purchase, order));
            }
        }
        if let Some(r) = answer.and_then(ApiResponse::refund) {
            let number = self
                .refunds_filed
                .get(&(owner, r.merchant_refund_no.clone()))
                .cloned()
                .unwrap_or_else(|| r.merchant_refund_no.clone());
            self.unknown_refunds.retain(|(_, n)| *n != number);
            // A refund shown processing is known to exist (it stays so for as long as
            // the acquirer takes); a 202 leaves it unknown (UNKNOWN-02).
            let accepted = answer.is_some_and(|a| a.status == 202);
            if (accepted && !r.status.is_final()) || r.resolution_status != ResolutionStatus::Known
            {
                self.unknown_refunds
                    .push(((owner, r.payment_id, r.amount), number));
            }
        }
        if !unanswered(answer) {
            return;
        }
        let unresolved = match &request.endpoint {
            Endpoint::CreatePayment { .. } => purchase(owner, request)
                .and_then(|(p, _)| Some((p, self.order_of(owner, request)?))),
            Endpoint::ConfirmPayment { payment_id, .. }
            | Endpoint::CancelPayment { payment_id } => self.payments.get(payment_id).cloned(),
            _ => None,
        };
        if let Some((p, order)) = unresolved
            && !self.unknown.iter().any(|(_, o)| *o == order)
        {
            self.unknown.push((p, order));
        }
        if let Some((r, _)) = refund_of(owner, request)
            && let Some(number) = self.refund_filed(owner, request)
            && !self.unknown_refunds.iter().any(|(_, n)| *n == number)
        {
            self.unknown_refunds.push((r, number));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::api::req;

    const OWNER: Option<(MerchantId, Environment)> = Some((MerchantId(1), Environment::Test));

    #[test]
    fn a_new_number_for_an_unknown_order_is_the_same_order() {
        let mut orders = Orders::default();
        let first = req::create("K1", "ORDER-1", 100, "USD", 'A');
        let again = req::create("K2", "ORDER-1-retry", 100, "USD", 'A');
        let other = req::create("K3", "ORDER-2", 250, "USD", 'A');
        assert_eq!(
            orders.business_of(OWNER, &first).unwrap().order,
            Text::from("ORDER-1")
        );
        orders.observe(OWNER, &first, None);
        assert_eq!(
            orders.business_of(OWNER, &again).unwrap().order,
            Text::from("ORDER-1")
        );
        assert_eq!(
            orders.business_of(OWNER, &other).unwrap().order,
            Text::from("ORDER-2")
        );
    }

    #[test]
    fn an_order_whose_result_was_seen_is_known() {
        let mut orders = Orders::default();
        let first = req::create("K1", "ORDER-1", 100, "USD", 'A');
        let again = req::create("K2", "ORDER-1-retry", 100, "USD", 'A');
        let answer = ApiResponse::ok(
            200,
            payhub_model::ResponseBody::Payments { data: Vec::new() },
        );
        orders.observe(OWNER, &first, Some(&answer));
        assert_eq!(
            orders.business_of(OWNER, &again).unwrap().order,
            Text::from("ORDER-1-retry")
        );
    }
}
