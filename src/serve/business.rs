//! Business orders, as the wire witnesses them.
//!
//! A client's business order is in its own database, which the sandbox cannot see. What
//! the wire shows is enough for the contract's UNKNOWN-03: a create whose result the
//! client never received (the connection was reset, or the answer was a 5xx) leaves its
//! order *unknown*; a later create of the same merchant and environment with the same
//! amount, currency and card and another `merchant_order_no`, sent while that order is
//! still unknown, is a resubmission of the same order under a new number, so the
//! sandbox files it under the first order. The ledger then judges it
//! (`client-never-charges-an-order-twice`, EFFECT-01 / UNKNOWN-03). An order stops
//! being unknown once the client receives an answer carrying its Payment (a replay of
//! the key, `GET /v1/payments/{id}`, or the query by order number).
//!
//! Every other create is filed under its own order number. The business order goes into
//! the exchange's origin in the world (`Origin::business`), as a client model's does.

use payhub_model::event::BusinessOrder;
use payhub_model::{ApiRequest, ApiResponse, Endpoint, Environment, Json, MerchantId, Text};

/// What makes two creates the same purchase: (merchant, environment, amount, currency, card).
type Purchase = (MerchantId, Environment, i64, Text, Option<char>);

/// Creates whose result their client does not know, by purchase.
#[derive(Clone, Debug, Default)]
pub struct Orders {
    unknown: Vec<(Purchase, Text)>,
}

fn purchase(owner: (MerchantId, Environment), request: &ApiRequest) -> Option<(Purchase, Text)> {
    let Endpoint::CreatePayment {
        body: Json::Parsed(b),
    } = &request.endpoint
    else {
        return None;
    };
    let order = b.merchant_order_no.clone()?;
    let p = (
        owner.0,
        owner.1,
        b.amount?,
        b.currency.clone()?,
        b.card.map(|c| c.0),
    );
    Some((p, order))
}

/// The database number of an owner: one per (merchant, environment).
fn db(owner: (MerchantId, Environment)) -> u8 {
    let env = match owner.1 {
        Environment::Test => 0,
        Environment::Live => 1,
    };
    (owner.0.0 as u8).wrapping_mul(2).wrapping_add(env)
}

impl Orders {
    /// The business order a create is for: an unknown order of the same purchase under
    /// another number, or its own.
    pub fn business_of(
        &self,
        owner: Option<(MerchantId, Environment)>,
        request: &ApiRequest,
    ) -> Option<BusinessOrder> {
        let owner = owner?;
        let (p, order) = purchase(owner, request)?;
        let earlier = self
            .unknown
            .iter()
            .find(|(q, o)| *q == p && *o != order)
            .map(|(_, o)| o.clone());
        Some(BusinessOrder {
            db: db(owner),
            order: earlier.unwrap_or(order),
        })
    }

    /// What the client learned from one exchange: `None` if it got no answer.
    pub fn observe(
        &mut self,
        owner: Option<(MerchantId, Environment)>,
        request: &ApiRequest,
        answer: Option<&ApiResponse>,
    ) {
        if let Some(payment) = answer.and_then(ApiResponse::payment) {
            let order = &payment.merchant_order_no;
            self.unknown.retain(|(_, o)| o != order);
        }
        let unknown = answer.is_none_or(|a| a.status >= 500);
        if let (true, Some(owner)) = (unknown, owner) {
            if let Some((p, order)) = purchase(owner, request) {
                let business = self.business_of(Some(owner), request);
                let order = business.map_or(order, |b| b.order);
                if !self.unknown.iter().any(|(_, o)| *o == order) {
                    self.unknown.push((p, order));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::harness::req;

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
