#![allow(clippy::result_large_err)] // `Err` carries an early answer, not a failure; it is built once per request.
//! Admission: the pure first half of handling a request.
//!
//! [`Platform::admit`] reads the state and decides what a request gets: an answer that
//! executes nothing, a fork where the contract allows two behaviours, or a new
//! execution. It never changes anything, so [`Platform::branch_point`] can call it, and
//! every rejection it returns leaves no idempotency record behind (REJECT-01 for 400,
//! 401, 403 and 422; A-409-NOBIND for 404, 405 and 409).
//!
//! The checks run in the order of the platform's module doc: here the edge
//! (authentication, rate limit, queries, routes, the key), then `validate` (the body
//! and the object it names), `lookup` (the idempotency scope) and `business` (channel
//! pause, order and refund numbers, attempt rules). `query` answers the GETs.
//!
//! Inside admission `Err` is an early answer, not a failure: [`Platform::admit`] takes
//! `Ok` and `Err` alike.

mod business;
mod lookup;
mod query;
mod validate;

use super::Platform;
use super::state::*;
use crate::api::{ApiError, ApiRequest, ApiResponse, Endpoint, ErrorCode, Field, Method};
use crate::branch::BranchPoint;
use crate::ids::{Card, Environment, MerchantId, PaymentId, RefundId, ResourceId};
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;

/// A validated new business operation. The card lives here only until the upstream
/// call that uses it is sent (CARD-02, A-CARD-NOT-STORED).
#[derive(Clone, Debug)]
pub(super) enum NewOp {
    CreatePayment {
        merchant_order_no: Text,
        amount: u64,
        currency: Text,
        card: Option<Card>,
    },
    Confirm {
        payment: PaymentId,
        card: Card,
    },
    Cancel {
        payment: PaymentId,
    },
    CheckoutSession {
        merchant_order_no: Text,
        amount: u64,
        currency: Text,
        /// The order already has this Payment: a new session for it (CKO-01).
        existing: Option<PaymentId>,
    },
    Refund {
        payment: PaymentId,
        merchant_refund_no: Text,
        amount: u64,
    },
}

/// A point where the contract allows two behaviours, with what each branch needs.
#[derive(Clone, Debug)]
pub(super) enum Fork {
    /// S4: a new key for an existing order number with the same amount and currency.
    OrderNoReuse { claim: Claim, existing: PaymentId },
    /// S5: the same key is executing.
    Concurrent { scope: Scope },
    /// S8: confirm with a new key while the Payment is processing.
    ConfirmWhileProcessing { payment: PaymentId },
    /// A new key for a used refund number with the same Payment and amount.
    RefundNoReuse { claim: Claim, existing: RefundId },
    /// CKO-01 / EXPIRY-01: a new key for the order of an expired Payment, the same
    /// amount and currency.
    SessionOfExpired {
        claim: Claim,
        order: (Text, u64, Text),
        existing: PaymentId,
    },
    /// RET-01 / A-CONFIRM-RETENTION: a confirm under a key past its retention that would
    /// start a new attempt.
    ConfirmPastRetention { claim: Claim, op: NewOp },
}

impl Fork {
    pub(super) fn point(&self) -> BranchPoint {
        match self {
            Fork::OrderNoReuse { .. } => BranchPoint::OrderNoReuse,
            Fork::Concurrent { .. } => BranchPoint::ConcurrentSameKey,
            Fork::ConfirmWhileProcessing { .. } => BranchPoint::ConfirmWhileProcessing,
            Fork::RefundNoReuse { .. } => BranchPoint::RefundNoReuse,
            Fork::SessionOfExpired { .. } => BranchPoint::SessionOfExpired,
            Fork::ConfirmPastRetention { .. } => BranchPoint::ConfirmPastRetention,
        }
    }
}

/// What a request gets.
pub(super) enum Admission {
    /// Answered without executing anything new (errors, queries, replays).
    Answer(ApiResponse, Rule),
    /// A branch point (see [`Fork`]).
    Fork(Fork),
    /// A new execution under a fresh idempotency record.
    Execute { claim: Claim, op: NewOp },
}

/// An answer that executes nothing. Codes the contract does not name (`invalid_request`,
/// `resource_missing`, `payment_not_confirmable`, …) are assumption A-ERROR-CODES.
fn reject_with(code: ErrorCode, field: Option<Field>, rule: Rule) -> Admission {
    let mut error = ApiError::new(code);
    error.field = field;
    Admission::Answer(ApiResponse::error(error), rule)
}

/// [`reject_with`] naming no field.
fn reject(code: ErrorCode, rule: Rule) -> Admission {
    reject_with(code, None, rule)
}

/// `400 invalid_request` naming `field`.
fn invalid(field: Field, rule: Rule) -> Admission {
    reject_with(ErrorCode::InvalidRequest, Some(field), rule)
}

impl Platform {
    /// Reads the state and decides; changes nothing.
    pub(super) fn admit(&self, now: Millis, req: &ApiRequest) -> Admission {
        match self.admit_inner(now, req) {
            Ok(a) | Err(a) => a,
        }
    }

    fn admit_inner(&self, now: Millis, req: &ApiRequest) -> Result<Admission, Admission> {
        let (merchant, environment) = self.authenticate(req)?;
        self.check_rate_limit(merchant)?;
        // Queries: no key needed (KEY-06); they read known state only (QUERY-04).
        if let Some(answer) = self.answer_query(merchant, environment, &req.endpoint) {
            return Err(answer);
        }
        if let Endpoint::Other { path, .. } = &req.endpoint {
            return Err(unknown_route(path));
        }
        let key = idempotency_key(req, self.params.key_len_max, self.variant)?;

        // Body, then the object in the path or body (404 for another merchant's object too).
        let (route, fingerprint, op) = self.validate(merchant, environment, &req.endpoint)?;
        // SAFE-01, CARD-01: the fingerprint holds the safety-relevant parameters only.
        let fingerprint = self.variant.fingerprint(fingerprint, req.endpoint.card());
        let scope = Scope {
            merchant,
            environment,
            route,
            key,
        };
        let claim = Claim { scope, fingerprint };

        // The idempotency scope (SCOPE-01): conflict, replay or concurrent execution. The
        // scope carries the merchant and environment of the API key, never the key itself:
        // test and live never meet (SCOPE-02), a rotated key finds the same records (SCOPE-03).
        if let Some(record) = self.variant.find_record(&self.records, &claim.scope) {
            return Ok(self.admit_recorded(now, record, claim, op));
        }
        self.admit_new(now, claim, op)
    }

    /// Authentication: the API key names merchant and environment, never the scope
    /// (SCOPE-03). 401 for an unknown key, 403 for a POST with a read-only one.
    fn authenticate(&self, req: &ApiRequest) -> Result<(MerchantId, Environment), Admission> {
        let Some(key) = self.api_keys.get(&req.api_key) else {
            return Err(reject(
                ErrorCode::AuthenticationFailed,
                Rule::RejectionsDoNotOccupyKey,
            ));
        };
        if key.read_only && req.endpoint.method() != Method::Get {
            return Err(reject(
                ErrorCode::PermissionDenied,
                Rule::RejectionsDoNotOccupyKey,
            ));
        }
        Ok((key.merchant, key.environment))
    }

    /// RATE-01, RATE-02: the limit is the merchant's, whatever key is used; nothing executes.
    /// A-RATE-SCOPE: over every API key, environment, idempotency key and endpoint,
    /// checked right after authentication (A-REFUSAL-ORDER: before the request's own
    /// refusals but 401 and 403). A-RETRY-AFTER-429: Retry-After is a parameter, its
    /// absence a reading.
    fn check_rate_limit(&self, merchant: MerchantId) -> Result<(), Admission> {
        if self.rate_limited.contains(&merchant) {
            let mut response = ApiResponse::error(ApiError::new(ErrorCode::RateLimited));
            response.retry_after_s = self.params.retry_after_s;
            return Err(Admission::Answer(response, Rule::RateLimited));
        }
        Ok(())
    }
}

/// 404 or 405 (A-ERROR-CODES), binding nothing (A-409-NOBIND).
fn unknown_route(path: &Text) -> Admission {
    let known = ["/v1/payments", "/v1/refunds", "/v1/checkout/sessions"]
        .iter()
        .any(|p| path == p || path.starts_with(&format!("{p}/")));
    let code = if known {
        ErrorCode::MethodNotAllowed
    } else {
        ErrorCode::ResourceMissing
    };
    reject(code, Rule::RejectionsDoNotOccupyKey)
}

/// KEY-01..KEY-05, KEY-07: a POST carries a key of 1–`key_len_max` characters.
fn idempotency_key(
    req: &ApiRequest,
    key_len_max: usize,
    variant: super::Variant,
) -> Result<Text, Admission> {
    let key_rule = match &req.endpoint {
        Endpoint::CreatePayment { .. } => Rule::KeyRequiredCreatePayment,
        Endpoint::ConfirmPayment { .. } => Rule::KeyRequiredConfirm,
        Endpoint::CancelPayment { .. } => Rule::KeyRequiredCancel,
        Endpoint::CreateCheckoutSession { .. } => Rule::KeyRequiredCheckoutSession,
        _ => Rule::KeyRequiredRefund,
    };
    match &req.idempotency_key {
        None => Err(invalid(Field::IdempotencyKey, key_rule)),
        // A-KEY-LENGTH: characters are Unicode scalar values; an empty or too long key
        // gets the same 400 as a missing one.
        Some(k) if k.is_empty() || variant.key_too_long(k, key_len_max) => {
            Err(invalid(Field::IdempotencyKey, Rule::KeyLength))
        }
        Some(k) => Ok(k.clone()),
    }
}

/// The answer of a used order number: `409 order_no_conflict` naming its Payment (ORDER-01).
pub(super) fn order_no_conflict_response(existing: PaymentId) -> ApiResponse {
    ApiResponse::error(
        ApiError::new(ErrorCode::OrderNoConflict).related(ResourceId::Payment(existing)),
    )
}

/// The answer of a used refund number: `409 refund_no_conflict` naming its Refund
/// (UNIQ-04). The code is A-ERROR-CODES; the 409 binds nothing (A-409-NOBIND).
pub(super) fn refund_no_conflict_response(existing: RefundId) -> ApiResponse {
    ApiResponse::error(
        ApiError::new(ErrorCode::RefundNoConflict).related(ResourceId::Refund(existing)),
    )
}

/// UNIQ-01 / ORDER-01: `409 order_no_conflict` naming the existing Payment.
fn order_no_conflict(existing: PaymentId) -> Admission {
    Admission::Answer(order_no_conflict_response(existing), Rule::UniqueOrderNo)
}
