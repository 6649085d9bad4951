//! SCHED-02's "the same object": what a query reads, whichever way it names it.
//!
//! 「同一对象两次查询间隔不少于 10 秒」: "Leave at least 10 seconds between two queries of
//! the same object". A Payment is queried by id (`GET /v1/payments/{id}`) or, without its
//! id, by its order number (`GET /v1/payments?merchant_order_no=...`); a Refund by id or
//! by `merchant_refund_no`. Two such queries of one Payment are two queries of the same
//! object, whatever their paths.
//!
//! Which Payment an order number names is the platform's to say: the facts learn it from
//! an answer that shows the Payment (any answer: the create's, a confirm's, a query's),
//! per merchant and environment, and from then on a query by that number is a query of
//! that Payment. A number no answer has tied to an id yet is an object of its own; when an
//! answer ties it, the queries already sent by the number count as queries of the id's
//! object ([`merge`]): the tie shows the two as consecutive queries of one object, and
//! `client-spaces-queries` judges their spacing. Assumption: an order number names one Payment (UNIQ-01), so the
//! first id shown for it is kept; a query by a number that found nothing yet counts as
//! a query of the Payment the number later names.
//!
//! Only Payment and Refund bodies tie: a checkout session's answer and a 409
//! `order_no_conflict`'s `related_resource_id` name a Payment too, but not with its
//! order number in the answer itself; a client that learned the id that way and queries
//! by id and by number is judged only once some answer showed the Payment.

use payhub_model::{
    CowMap, Endpoint, Environment, MerchantId, Method, Millis, PaymentId, RefundId, ResponseBody,
    Text,
};
use serde::Serialize;

/// An object of one merchant's environment.
pub type Owned = (MerchantId, Environment, QueryObject);

/// What a query reads.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum QueryObject {
    Payment(PaymentId),
    /// A Payment by its `merchant_order_no`, while no answer has named its id.
    PaymentNo(Text),
    Refund(RefundId),
    /// A Refund by its `merchant_refund_no`, while no answer has named its id.
    RefundNo(Text),
    /// Any other query (the processing-refunds list, an unknown route): its path.
    Path(Text),
}

impl QueryObject {
    /// The object a query endpoint reads, as it names it (`None` for a non-query).
    pub fn named_by(endpoint: &Endpoint) -> Option<QueryObject> {
        Some(match endpoint {
            Endpoint::GetPayment { payment_id } => QueryObject::Payment(*payment_id),
            Endpoint::ListPayments { merchant_order_no } => {
                QueryObject::PaymentNo(merchant_order_no.clone())
            }
            Endpoint::GetRefund { refund_id } => QueryObject::Refund(*refund_id),
            Endpoint::ListRefundsByNo { merchant_refund_no } => {
                QueryObject::RefundNo(merchant_refund_no.clone())
            }
            Endpoint::ListRefundsProcessing => QueryObject::Path(endpoint.path()),
            Endpoint::Other { method, path } if *method == Method::Get => {
                QueryObject::Path(path.clone())
            }
            _ => return None,
        })
    }

    /// A number's object (`PaymentNo`, `RefundNo`) is an alias an answer may resolve.
    pub fn is_number(&self) -> bool {
        matches!(self, QueryObject::PaymentNo(_) | QueryObject::RefundNo(_))
    }
}

/// Every (number, id) an answer's body ties together: each Payment's order number and
/// each Refund's refund number it shows.
pub fn ties(body: &ResponseBody) -> impl Iterator<Item = (QueryObject, QueryObject)> + '_ {
    let (payments, refunds) = match body {
        ResponseBody::Payment(p) => (std::slice::from_ref(p), &[][..]),
        ResponseBody::Payments { data } => (&data[..], &[][..]),
        ResponseBody::Refund(r) => (&[][..], std::slice::from_ref(r)),
        ResponseBody::Refunds { data } => (&[][..], &data[..]),
        _ => (&[][..], &[][..]),
    };
    let payments = payments.iter().map(|p| {
        (
            QueryObject::PaymentNo(p.merchant_order_no.clone()),
            QueryObject::Payment(p.id),
        )
    });
    let refunds = refunds.iter().map(|r| {
        (
            QueryObject::RefundNo(r.merchant_refund_no.clone()),
            QueryObject::Refund(r.id),
        )
    });
    payments.chain(refunds)
}

/// The object `object` names for (`m`, `e`): a number resolved to the id an answer tied
/// it to in `aliases`.
pub fn resolve(
    aliases: &CowMap<Owned, QueryObject>,
    (m, e): (MerchantId, Environment),
    object: QueryObject,
) -> QueryObject {
    if object.is_number() {
        if let Some(id) = aliases.get(&(m, e, object.clone())) {
            return id.clone();
        }
    }
    object
}

/// Ties each (number, id) an answer shows (`shown`: [`ties`] of a body) for (`m`, `e`)
/// that `aliases` does not hold yet: the last query by the number moves to the id's
/// object ([`merge`]). Returns the pairs of queries of one object, earlier first, the
/// tie shows followed each other (the properties judge their spacing). `at` is when a
/// query was sent.
pub fn tie<V: Clone>(
    last: &mut CowMap<Owned, V>,
    aliases: &mut CowMap<Owned, QueryObject>,
    (m, e): (MerchantId, Environment),
    shown: impl IntoIterator<Item = (QueryObject, QueryObject)>,
    at: impl Fn(&V) -> Millis,
) -> Vec<(V, V)> {
    let mut pairs = Vec::new();
    for (number, id) in shown {
        let alias = (m, e, number);
        if aliases.contains_key(&alias) {
            continue;
        }
        let by_id = (m, e, id.clone());
        let merged = merge(last.get(&alias), last.get(&by_id), &at);
        pairs.extend(merged.pair);
        last.remove(&alias);
        if let Some(query) = merged.last {
            last.insert(by_id, query);
        }
        aliases.insert(alias, id);
    }
    pairs
}

/// What an answer that ties a number to an id makes of the last queries by each: the
/// later one stands for the object (the queries sent by the number were queries of the
/// id's object), and the two, earlier first: two consecutive queries of one object,
/// which only the tie shows.
pub(crate) struct Merged<T> {
    pub(crate) last: Option<T>,
    pub(crate) pair: Option<(T, T)>,
}

/// [`Merged`] of the last query by the number and the last by the id, `at` the time a
/// query was sent.
pub(crate) fn merge<T: Clone>(
    by_number: Option<&T>,
    by_id: Option<&T>,
    at: impl Fn(&T) -> Millis,
) -> Merged<T> {
    match (by_number, by_id) {
        (Some(n), Some(i)) => {
            let (earlier, later) = if at(n) > at(i) { (i, n) } else { (n, i) };
            Merged {
                last: Some(later.clone()),
                pair: Some((earlier.clone(), later.clone())),
            }
        }
        (n, i) => Merged {
            last: n.or(i).cloned(),
            pair: None,
        },
    }
}
