//! The body of a POST and the object it names: 400 for a malformed or incomplete body,
//! 422 for a currency we do not accept, 404 for an object that is not the merchant's.
//! Every rejection here leaves the key free (REJECT-01, A-409-NOBIND).

use super::{Admission, NewOp, invalid, reject_with};
use crate::api::{
    ConfirmBody, CreatePaymentBody, Endpoint, ErrorCode, Field, Json, RefundBody, SessionBody,
};
use crate::ids::{Environment, MerchantId, PaymentId};
use crate::platform::Platform;
use crate::platform::state::{BusinessKey, Fingerprint, Route};
use crate::rules::Rule;
use crate::text::Text;

/// What validation yields: the route of the scope, the fingerprint and the operation.
type Validated = (Route, Fingerprint, NewOp);

/// Validates an amount: present and positive (400 `amount` otherwise).
fn amount_of(amount: Option<i64>) -> Result<u64, Admission> {
    match amount {
        Some(a) if a > 0 => Ok(a as u64),
        _ => Err(invalid(Field::Amount, Rule::SafeParameters)),
    }
}

/// Validates a non-empty string field (400 with `field` otherwise).
fn text_of(value: &Option<Text>, field: Field) -> Result<Text, Admission> {
    match value {
        Some(v) if !v.is_empty() => Ok(v.clone()),
        _ => Err(invalid(field, Rule::SafeParameters)),
    }
}

/// The parsed body, or 400 with field `body`.
fn parsed<T>(body: &Json<T>) -> Result<&T, Admission> {
    match body {
        Json::Parsed(b) => Ok(b),
        Json::Malformed(_) => Err(invalid(Field::Body, Rule::RejectionsDoNotOccupyKey)),
    }
}

impl Platform {
    /// Validates the body and looks up the object: (route, fingerprint, operation).
    pub(super) fn validate(
        &self,
        merchant: MerchantId,
        environment: Environment,
        endpoint: &Endpoint,
    ) -> Result<Validated, Admission> {
        let mine = (merchant, environment);
        match endpoint {
            Endpoint::CreatePayment { body } => self.validate_create(parsed(body)?),
            Endpoint::ConfirmPayment { payment_id, body } => {
                let payment = self.owned_payment(mine, *payment_id, None)?;
                validate_confirm(payment, parsed(body)?)
            }
            Endpoint::CancelPayment { payment_id } => {
                let payment = self.owned_payment(mine, *payment_id, None)?;
                Ok((
                    Route::Cancel(payment),
                    Fingerprint::Cancel,
                    NewOp::Cancel { payment },
                ))
            }
            Endpoint::CreateCheckoutSession { body } => self.validate_session(mine, parsed(body)?),
            Endpoint::CreateRefund { body } => self.validate_refund(mine, parsed(body)?),
            _ => unreachable!("queries and unknown routes are answered before validation"),
        }
    }

    /// A Payment of this merchant and environment; 404 (with `field`) for any other
    /// (A-NOT-FOUND-POST).
    fn owned_payment(
        &self,
        (merchant, environment): (MerchantId, Environment),
        id: PaymentId,
        field: Option<Field>,
    ) -> Result<PaymentId, Admission> {
        match self.payments.get(&id) {
            Some(p) if p.merchant == merchant && p.environment == environment => Ok(id),
            _ => Err(reject_with(
                ErrorCode::ResourceMissing,
                field,
                Rule::RejectionsDoNotOccupyKey,
            )),
        }
    }

    /// Validates a currency: three upper-case letters (400), and one we accept (422).
    fn currency_of(&self, value: &Option<Text>) -> Result<Text, Admission> {
        let c = text_of(value, Field::Currency)?;
        if c.len() != 3 || !c.chars().all(|ch| ch.is_ascii_uppercase()) {
            return Err(invalid(Field::Currency, Rule::SafeParameters));
        }
        if !self.params.currencies.contains(&c.as_str()) {
            return Err(reject_with(
                ErrorCode::UnsupportedCurrency,
                Some(Field::Currency),
                Rule::RejectionsDoNotOccupyKey,
            ));
        }
        Ok(c)
    }

    fn validate_create(&self, b: &CreatePaymentBody) -> Result<Validated, Admission> {
        let merchant_order_no = text_of(&b.merchant_order_no, Field::MerchantOrderNo)?;
        let amount = amount_of(b.amount)?;
        let currency = self.currency_of(&b.currency)?;
        Ok((
            Route::CreatePayment,
            Fingerprint::CreatePayment {
                merchant_order_no: merchant_order_no.clone(),
                amount,
                currency: currency.clone(),
            },
            NewOp::CreatePayment {
                merchant_order_no,
                amount,
                currency,
                card: b.card,
            },
        ))
    }

    /// CKO-01: a session for an order that already has a Payment is a new session for it.
    fn validate_session(
        &self,
        (merchant, environment): (MerchantId, Environment),
        b: &SessionBody,
    ) -> Result<Validated, Admission> {
        let merchant_order_no = text_of(&b.merchant_order_no, Field::MerchantOrderNo)?;
        let amount = amount_of(b.amount)?;
        let currency = self.currency_of(&b.currency)?;
        let existing = self
            .order_nos
            .get(&BusinessKey::new(
                merchant,
                environment,
                merchant_order_no.clone(),
            ))
            .copied();
        Ok((
            Route::CheckoutSession,
            Fingerprint::CheckoutSession {
                merchant_order_no: merchant_order_no.clone(),
                amount,
                currency: currency.clone(),
            },
            NewOp::CheckoutSession {
                merchant_order_no,
                amount,
                currency,
                existing,
            },
        ))
    }

    fn validate_refund(
        &self,
        mine: (MerchantId, Environment),
        b: &RefundBody,
    ) -> Result<Validated, Admission> {
        let Some(payment_id) = b.payment_id else {
            return Err(invalid(Field::PaymentId, Rule::SafeParameters));
        };
        let merchant_refund_no = text_of(&b.merchant_refund_no, Field::MerchantRefundNo)?;
        let amount = amount_of(b.amount)?;
        let payment = self.owned_payment(mine, payment_id, Some(Field::PaymentId))?;
        Ok((
            Route::Refund,
            Fingerprint::Refund {
                payment_id: payment,
                merchant_refund_no: merchant_refund_no.clone(),
                amount,
            },
            NewOp::Refund {
                payment,
                merchant_refund_no,
                amount,
            },
        ))
    }
}

/// ATTEMPT-03: a confirm carries the card (400 `card` otherwise).
fn validate_confirm(payment: PaymentId, b: &ConfirmBody) -> Result<Validated, Admission> {
    let Some(card) = b.card else {
        return Err(invalid(Field::Card, Rule::CardRetryNewKey));
    };
    Ok((
        Route::Confirm(payment),
        Fingerprint::Confirm,
        NewOp::Confirm { payment, card },
    ))
}
