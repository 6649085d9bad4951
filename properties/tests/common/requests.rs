//! The request alphabet of the chaos suite (`chaos.rs`) and the state-machine suite
//! (`state_machine.rs`): amounts, currencies, order numbers, what a request does, and the
//! concrete endpoint of it. Each suite has its own API keys, Idempotency-Keys and
//! strategies (how often each value comes up); the chaos suite uses every variant here,
//! the state-machine suite the ones its reference predicts.

use payhub_model::{
    Card, ConfirmBody, CreatePaymentBody, Endpoint, Json, Method, PaymentId, Platform, RefundBody,
    RefundId, SessionBody,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    Small,
    Large,
    Zero,
    Negative,
}

impl Amount {
    pub fn value(self) -> i64 {
        match self {
            Amount::Small => 1_000,
            Amount::Large => 2_500,
            Amount::Zero => 0,
            Amount::Negative => -1,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Currency {
    Usd,
    Eur,
    /// Well formed, not accepted: 422.
    Gbp,
    /// Malformed: 400.
    Lower,
}

impl Currency {
    pub fn code(self) -> &'static str {
        match self {
            Currency::Usd => "USD",
            Currency::Eur => "EUR",
            Currency::Gbp => "GBP",
            Currency::Lower => "usd",
        }
    }
}

/// Order number `i` of a suite with `orders` of them: `ORDER-1`…, or the empty one for
/// `i >= orders`.
pub fn order_no(i: u8, orders: u8) -> String {
    if i >= orders {
        String::new()
    } else {
        format!("ORDER-{}", i + 1)
    }
}

/// Refund number `i`: `R-1`, `R-2`, …
pub fn refund_no(i: u8) -> String {
    format!("R-{}", i + 1)
}

/// The `k`-th of `n` objects in id order (modulo `n`), or `None` for an id nobody has
/// (`k = 3`, or no object yet). The platform and a reference resolve a request's
/// "k-th Payment" with it, each against its own objects.
pub fn nth(k: u8, n: usize) -> Option<usize> {
    match (k, n) {
        (3, _) | (_, 0) => None,
        (k, n) => Some(k as usize % n),
    }
}

/// The `k`-th Payment of `platform` ([`nth`]); 999 when it names an id nobody has.
pub fn nth_payment(platform: &Platform, k: u8) -> PaymentId {
    let ids: Vec<PaymentId> = platform.payments().keys().copied().collect();
    nth(k, ids.len()).map_or(PaymentId(999), |i| ids[i])
}

/// The `k`-th Refund of `platform`, like [`nth_payment`].
pub fn nth_refund(platform: &Platform, k: u8) -> RefundId {
    let ids: Vec<RefundId> = platform.refunds().keys().copied().collect();
    nth(k, ids.len()).map_or(RefundId(999), |i| ids[i])
}

/// What a request does; `payment` and `refund` name the k-th object ([`nth`]) when it is
/// sent, `order` the order number ([`order_no`]), `refund_no` the refund number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ep {
    Create {
        order: u8,
        amount: Amount,
        currency: Currency,
        card: Option<char>,
    },
    CreateMalformed,
    Confirm {
        payment: u8,
        card: Option<char>,
    },
    ConfirmMalformed {
        payment: u8,
    },
    Cancel {
        payment: u8,
    },
    Session {
        order: u8,
        amount: Amount,
        currency: Currency,
    },
    Refund {
        payment: u8,
        refund_no: u8,
        amount: Amount,
    },
    RefundWithoutPayment,
    RefundMalformed,
    Get {
        payment: u8,
    },
    ListByOrder {
        order: u8,
    },
    GetRefund {
        refund: u8,
    },
    ListRefundsByNo {
        refund_no: u8,
    },
    ListRefundsProcessing,
    WrongMethod,
    UnknownPath,
}

impl Ep {
    /// The concrete endpoint on `platform`, in a suite with `orders` order numbers.
    pub fn endpoint(&self, platform: &Platform, orders: u8) -> Endpoint {
        let payment = |k: u8| nth_payment(platform, k);
        match self {
            Ep::Create {
                order,
                amount,
                currency,
                card,
            } => Endpoint::CreatePayment {
                body: Json::Parsed(CreatePaymentBody {
                    merchant_order_no: Some(order_no(*order, orders).into()),
                    amount: Some(amount.value()),
                    currency: Some(currency.code().into()),
                    card: card.map(Card),
                }),
            },
            Ep::CreateMalformed => Endpoint::CreatePayment {
                body: Json::Malformed("{\"amount\":".into()),
            },
            Ep::Confirm { payment: k, card } => Endpoint::ConfirmPayment {
                payment_id: payment(*k),
                body: Json::Parsed(ConfirmBody {
                    card: card.map(Card),
                }),
            },
            Ep::ConfirmMalformed { payment: k } => Endpoint::ConfirmPayment {
                payment_id: payment(*k),
                body: Json::Malformed("not json".into()),
            },
            Ep::Cancel { payment: k } => Endpoint::CancelPayment {
                payment_id: payment(*k),
            },
            Ep::Session {
                order,
                amount,
                currency,
            } => Endpoint::CreateCheckoutSession {
                body: Json::Parsed(SessionBody {
                    merchant_order_no: Some(order_no(*order, orders).into()),
                    amount: Some(amount.value()),
                    currency: Some(currency.code().into()),
                }),
            },
            Ep::Refund {
                payment: k,
                refund_no: r,
                amount,
            } => Endpoint::CreateRefund {
                body: Json::Parsed(RefundBody {
                    payment_id: Some(payment(*k)),
                    merchant_refund_no: Some(refund_no(*r).into()),
                    amount: Some(amount.value()),
                }),
            },
            Ep::RefundWithoutPayment => Endpoint::CreateRefund {
                body: Json::Parsed(RefundBody {
                    payment_id: None,
                    merchant_refund_no: Some(refund_no(0).into()),
                    amount: Some(500),
                }),
            },
            Ep::RefundMalformed => Endpoint::CreateRefund {
                body: Json::Malformed("[".into()),
            },
            Ep::Get { payment: k } => Endpoint::GetPayment {
                payment_id: payment(*k),
            },
            Ep::ListByOrder { order } => Endpoint::ListPayments {
                merchant_order_no: order_no(*order, orders).into(),
            },
            Ep::GetRefund { refund } => Endpoint::GetRefund {
                refund_id: nth_refund(platform, *refund),
            },
            Ep::ListRefundsByNo { refund_no: r } => Endpoint::ListRefundsByNo {
                merchant_refund_no: refund_no(*r).into(),
            },
            Ep::ListRefundsProcessing => Endpoint::ListRefundsProcessing,
            Ep::WrongMethod => Endpoint::Other {
                method: Method::Delete,
                path: "/v1/payments".into(),
            },
            Ep::UnknownPath => Endpoint::Other {
                method: Method::Get,
                path: "/v1/unknown".into(),
            },
        }
    }
}
