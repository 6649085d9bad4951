//! What a violated property found: the words of its verdict and, typed, the identifiers
//! of its witness (as Elle cites the operations that show an anomaly). The renderers read
//! the identifiers, never the words: the sandbox draws the exchanges that name them.
//!
//! A predicate over a run's facts returns a [`Witnessed`]; the words are its detail, in the
//! contract's notation (`pay_demo_002 captured 2 times`), and the witness names the
//! order numbers, Payments, attempts, refunds, keys and requests the words name.

use payhub_model::{AttemptId, PaymentId, RefundId, RequestId, ResourceId};
use serde::Serialize;

/// The identifiers a witness names, each kind in the order named.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Named {
    /// Merchant order numbers (`merchant_order_no`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub orders: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub payments: Vec<PaymentId>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<AttemptId>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refunds: Vec<RefundId>,
    /// Idempotency-Keys.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// What a client's decision was about: an order or a refund, by the merchant's number.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestId>,
}

impl Named {
    /// Whether it names nothing.
    pub fn is_empty(&self) -> bool {
        self == &Named::default()
    }

    /// Every identifier as the contract writes it (`ORDER-1`, `pay_demo_001`, `req_3`).
    pub fn words(&self) -> impl Iterator<Item = String> + '_ {
        let ids = (self.payments.iter().map(ToString::to_string))
            .chain(self.attempts.iter().map(ToString::to_string))
            .chain(self.refunds.iter().map(ToString::to_string))
            .chain(self.requests.iter().map(ToString::to_string));
        (self.orders.iter().cloned())
            .chain(self.keys.iter().cloned())
            .chain(self.subjects.iter().cloned())
            .chain(ids)
    }
}

/// A violation: its words and its witness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Witnessed {
    pub detail: String,
    pub named: Named,
}

impl Witnessed {
    /// The breach one request shows, if any: `words` of it, naming it.
    pub fn of_request(id: Option<RequestId>, words: impl Fn(RequestId) -> String) -> Option<Self> {
        id.map(|id| Witnessed::new(words(id)).request(id))
    }

    /// The words; the witness is added by the builders below.
    pub fn new(detail: String) -> Witnessed {
        Witnessed {
            detail,
            named: Named::default(),
        }
    }

    pub fn order(mut self, order: &str) -> Witnessed {
        push(&mut self.named.orders, order.to_owned());
        self
    }

    pub fn payment(mut self, payment: PaymentId) -> Witnessed {
        push(&mut self.named.payments, payment);
        self
    }

    pub fn attempt(mut self, attempt: AttemptId) -> Witnessed {
        push(&mut self.named.attempts, attempt);
        self
    }

    pub fn refund(mut self, refund: RefundId) -> Witnessed {
        push(&mut self.named.refunds, refund);
        self
    }

    pub fn key(mut self, key: &str) -> Witnessed {
        push(&mut self.named.keys, key.to_owned());
        self
    }

    pub fn subject(mut self, subject: &str) -> Witnessed {
        push(&mut self.named.subjects, subject.to_owned());
        self
    }

    pub fn request(mut self, request: RequestId) -> Witnessed {
        push(&mut self.named.requests, request);
        self
    }

    /// The objects a path names (`/v1/payments/pay_demo_001/confirm`,
    /// `/v1/refunds/ref_demo_001`, `/v1/payments?merchant_order_no=ORDER-1`), each as the
    /// contract writes it.
    pub fn object_at(self, path: &str) -> Witnessed {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let order = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("merchant_order_no="));
        let found = match order {
            Some(order) => self.order(order),
            None => self,
        };
        path.split('/').fold(found, |found, segment| {
            match serde_json::from_value(serde_json::Value::String(segment.to_owned())) {
                Ok(ResourceId::Payment(p)) => found.payment(p),
                Ok(ResourceId::Refund(r)) => found.refund(r),
                _ => found,
            }
        })
    }

    /// Each of `payment` if some (an answer about no Payment names none).
    pub fn payment_if(self, payment: Option<PaymentId>) -> Witnessed {
        match payment {
            Some(p) => self.payment(p),
            None => self,
        }
    }

    /// Each of `request` if some (a webhook is no request).
    pub fn request_if(self, request: Option<RequestId>) -> Witnessed {
        match request {
            Some(r) => self.request(r),
            None => self,
        }
    }
}

/// Adds `id` once.
fn push<T: PartialEq>(ids: &mut Vec<T>, id: T) {
    if !ids.contains(&id) {
        ids.push(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_witness_names_each_identifier_once_in_the_contract_s_notation() {
        let f = Witnessed::new("pay_demo_002 captured 2 times".into())
            .order("ORDER-1")
            .payment(PaymentId(2))
            .payment(PaymentId(2))
            .request(RequestId(3));
        assert_eq!(f.named.payments, [PaymentId(2)]);
        let words: Vec<String> = f.named.words().collect();
        assert_eq!(
            words,
            ["ORDER-1", "pay_demo_002", &RequestId(3).to_string()]
        );
        assert!(Named::default().is_empty() && !f.named.is_empty());
        let at = |path: &str| Witnessed::new(String::new()).object_at(path).named;
        assert_eq!(at("/v1/payments/pay_demo_001").payments, [PaymentId(1)]);
        assert_eq!(
            at("/v1/payments/pay_demo_001/confirm").payments,
            [PaymentId(1)]
        );
        assert_eq!(at("/v1/refunds/ref_demo_002").refunds, [RefundId(2)]);
        assert_eq!(
            at("/v1/payments?merchant_order_no=ORDER-1").orders,
            ["ORDER-1"]
        );
        assert!(at("/v1/payments/pay_demo_1").is_empty());
    }
}
