//! Vacuity over a recorded source: the requests a property judges. A property that holds
//! over a source with none of them holds over nothing, and its verdict says so ("holds
//! vacuously, no refund (POST /v1/refunds) in the source"), as a checker reports an
//! operation it never saw as not checked rather than as a pass earned.

use payhub_model::Endpoint;

payhub_model::named! {
    fn what;
    /// A kind of request the contract names, as a property's verdict lists it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Exercise {
        Create = "create (POST /v1/payments)",
        Confirm = "confirm (POST /v1/payments/{id}/confirm)",
        Cancel = "cancel (POST /v1/payments/{id}/cancel)",
        Session = "checkout session (POST /v1/checkout/sessions)",
        Refund = "refund (POST /v1/refunds)",
        Query = "query (GET /v1/payments, /v1/refunds)",
    }
}

/// The requests that carry an idempotency key (KEY-01): what a property of keys reads.
pub const KEYED: &[Exercise] = &[
    Exercise::Create,
    Exercise::Confirm,
    Exercise::Cancel,
    Exercise::Session,
    Exercise::Refund,
];

/// A charge is sent upstream by a create with a card or a confirm.
pub const CHARGES: &[Exercise] = &[Exercise::Create, Exercise::Confirm];

impl Exercise {
    /// The kind of `endpoint`, if the contract names it.
    pub fn of(endpoint: &Endpoint) -> Option<Exercise> {
        Some(match endpoint {
            Endpoint::CreatePayment { .. } => Exercise::Create,
            Endpoint::ConfirmPayment { .. } => Exercise::Confirm,
            Endpoint::CancelPayment { .. } => Exercise::Cancel,
            Endpoint::CreateCheckoutSession { .. } => Exercise::Session,
            Endpoint::CreateRefund { .. } => Exercise::Refund,
            Endpoint::GetPayment { .. }
            | Endpoint::ListPayments { .. }
            | Endpoint::GetRefund { .. }
            | Endpoint::ListRefundsByNo { .. }
            | Endpoint::ListRefundsProcessing => Exercise::Query,
            Endpoint::Other { .. } => return None,
        })
    }
}

/// The kinds of request a source held (sent on the wire or decided by a client).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exercised(u8);

impl Exercised {
    pub fn saw(&mut self, endpoint: &Endpoint) {
        if let Some(e) = Exercise::of(endpoint) {
            self.0 |= 1 << e as u8;
        }
    }

    /// Why a property judged over `by` holds vacuously here: none of them was in the
    /// source. `None` where one was, or where it reads every request (`by` empty).
    pub fn vacuous(self, by: &[Exercise]) -> Option<String> {
        if by.is_empty() || by.iter().any(|e| self.0 & (1 << *e as u8) != 0) {
            return None;
        }
        let names: Vec<&str> = by.iter().map(|e| e.what()).collect();
        let missing = match by == KEYED {
            true => "POST of the API (create, confirm, cancel, checkout session, refund)".into(),
            false => names.join(" or "),
        };
        Some(format!("vacuously: no {missing} in the source"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::{Json, RefundBody};

    #[test]
    fn a_property_is_vacuous_only_without_every_request_it_reads() {
        let mut seen = Exercised::default();
        assert_eq!(
            seen.vacuous(&[Exercise::Refund]).as_deref(),
            Some("vacuously: no refund (POST /v1/refunds) in the source")
        );
        assert_eq!(seen.vacuous(&[]), None);
        seen.saw(&Endpoint::CreateRefund {
            body: Json::Parsed(RefundBody::default()),
        });
        assert_eq!(seen.vacuous(&[Exercise::Refund]), None);
        assert!(seen.vacuous(&[Exercise::Cancel]).is_some());
        assert_eq!(seen.vacuous(KEYED), None);
        assert_eq!(
            Exercised::default().vacuous(KEYED).as_deref(),
            Some(
                "vacuously: no POST of the API (create, confirm, cancel, checkout session, refund) in the source"
            )
        );
        assert_eq!(
            Exercised::default()
                .vacuous(&[Exercise::Session])
                .as_deref(),
            Some("vacuously: no checkout session (POST /v1/checkout/sessions) in the source")
        );
    }
}
