#![allow(clippy::result_large_err)] // `Err` carries an early answer, not a failure; it is built once per request.
//! Admission: the pure first half of handling a request.
//!
//! [`Platform::admit`] reads the state and decides what a request gets: an answer that
//! executes nothing, a fork where the contract allows two behaviours, or a new
//! execution. It never changes anything, so [`Platform::branch_point`] can call it, and
//! every rejection it returns leaves no idempotency record behind (REJECT-01 for 400,
//! 401, 403 and 422; A-409-NOBIND for 404, 405 and 409).

use super::state::*;
use super::{Platform, PlatformOutput, StepError, Timer};
use crate::api::{
    ApiError, ApiRequest, ApiResponse, Endpoint, ErrorCode, Field, Json, Method, PaymentStatus,
    ResponseBody,
};
use crate::branch::{Branch, BranchPoint};
use crate::ids::{Card, Environment, MerchantId, PaymentId, RequestId, ResourceId};
use crate::mutants::Mutant;
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;

/// A validated new business operation. The card lives here only until the upstream
/// call that uses it is sent (CARD-02).
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
    OrderNoReuse {
        scope: Scope,
        fingerprint: Fingerprint,
        existing: PaymentId,
    },
    /// S5: the same key is executing.
    Concurrent { scope: Scope },
    /// S8: confirm with a new key while an attempt is unfinished.
    ConfirmWhileProcessing { payment: PaymentId },
}

impl Fork {
    pub(super) fn point(&self) -> BranchPoint {
        match self {
            Fork::OrderNoReuse { .. } => BranchPoint::OrderNoReuse,
            Fork::Concurrent { .. } => BranchPoint::ConcurrentSameKey,
            Fork::ConfirmWhileProcessing { .. } => BranchPoint::ConfirmWhileProcessing,
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
    Execute {
        scope: Scope,
        fingerprint: Fingerprint,
        op: NewOp,
    },
}

/// An answer that executes nothing. Codes the contract does not name (`invalid_request`,
/// `resource_missing`, `payment_not_confirmable`, …) are assumption A-ERROR-CODES.
fn reject(code: ErrorCode, field: Option<Field>, rule: Rule) -> Admission {
    let mut error = ApiError::new(code);
    error.field = field;
    Admission::Answer(ApiResponse::error(error), rule)
}

/// Validates an amount: present and positive (400 `amount` otherwise).
fn amount_of(amount: Option<i64>) -> Result<u64, Admission> {
    match amount {
        Some(a) if a > 0 => Ok(a as u64),
        _ => Err(reject(
            ErrorCode::InvalidRequest,
            Some(Field::Amount),
            Rule::SafeParameters,
        )),
    }
}

/// Validates a non-empty string field (400 with `field` otherwise).
fn text_of(value: &Option<Text>, field: Field) -> Result<Text, Admission> {
    match value {
        Some(v) if !v.is_empty() => Ok(v.clone()),
        _ => Err(reject(
            ErrorCode::InvalidRequest,
            Some(field),
            Rule::SafeParameters,
        )),
    }
}

impl Platform {
    /// Validates a currency: three upper-case letters (400), and one we accept (422).
    fn currency_of(&self, value: &Option<Text>) -> Result<Text, Admission> {
        let c = text_of(value, Field::Currency)?;
        if c.len() != 3 || !c.chars().all(|ch| ch.is_ascii_uppercase()) {
            return Err(reject(
                ErrorCode::InvalidRequest,
                Some(Field::Currency),
                Rule::SafeParameters,
            ));
        }
        if !self.params.currencies.contains(&c.as_str()) {
            return Err(reject(
                ErrorCode::UnsupportedCurrency,
                Some(Field::Currency),
                Rule::RejectionsDoNotOccupyKey,
            ));
        }
        Ok(c)
    }

    /// Reads the state and decides; changes nothing.
    pub(super) fn admit(&self, now: Millis, req: &ApiRequest) -> Admission {
        match self.admit_inner(now, req) {
            Ok(a) | Err(a) => a,
        }
    }

    fn admit_inner(&self, now: Millis, req: &ApiRequest) -> Result<Admission, Admission> {
        // Authentication: the API key names merchant and environment, never the scope (SCOPE-03).
        let Some(key) = self.api_keys.get(&req.api_key) else {
            return Err(reject(
                ErrorCode::AuthenticationFailed,
                None,
                Rule::RejectionsDoNotOccupyKey,
            ));
        };
        let (merchant, environment) = (key.merchant, key.environment);
        if key.read_only && req.endpoint.method() != Method::Get {
            return Err(reject(
                ErrorCode::PermissionDenied,
                None,
                Rule::RejectionsDoNotOccupyKey,
            ));
        }

        // RATE-01, RATE-02: the limit is the merchant's, whatever key is used; nothing executes.
        // A-RATE-SCOPE: over every API key, environment, idempotency key and endpoint,
        // checked right after authentication. A-RETRY-AFTER: Retry-After is a parameter.
        if self.rate_limited.contains(&merchant) {
            let mut response = ApiResponse::error(ApiError::new(ErrorCode::RateLimited));
            response.retry_after_s = Some(self.params.retry_after_s);
            return Err(Admission::Answer(response, Rule::RateLimited));
        }

        // Queries: no key needed (KEY-06); they read known state only (QUERY-04).
        if let Some(answer) = self.answer_query(merchant, environment, &req.endpoint) {
            return Err(answer);
        }
        // 404 or 405 (A-ERROR-CODES), binding nothing (A-409-NOBIND).
        if let Endpoint::Other { path, .. } = &req.endpoint {
            let known = ["/v1/payments", "/v1/refunds", "/v1/checkout/sessions"]
                .iter()
                .any(|p| path == p || path.starts_with(&format!("{p}/")));
            let code = if known {
                ErrorCode::MethodNotAllowed
            } else {
                ErrorCode::ResourceMissing
            };
            return Err(reject(code, None, Rule::RejectionsDoNotOccupyKey));
        }

        // KEY-01..KEY-05, KEY-07: a key of 1–255 characters.
        let key_rule = match &req.endpoint {
            Endpoint::CreatePayment { .. } => Rule::KeyRequiredCreatePayment,
            Endpoint::ConfirmPayment { .. } => Rule::KeyRequiredConfirm,
            Endpoint::CancelPayment { .. } => Rule::KeyRequiredCancel,
            Endpoint::CreateCheckoutSession { .. } => Rule::KeyRequiredCheckoutSession,
            _ => Rule::KeyRequiredRefund,
        };
        let idem_key = match &req.idempotency_key {
            None => {
                return Err(reject(
                    ErrorCode::InvalidRequest,
                    Some(Field::IdempotencyKey),
                    key_rule,
                ));
            }
            // A-KEY-LENGTH: characters are Unicode scalar values; an empty or too long key
            // gets the same 400 as a missing one.
            Some(k) if k.is_empty() || k.chars().count() > self.params.key_len_max => {
                return Err(reject(
                    ErrorCode::InvalidRequest,
                    Some(Field::IdempotencyKey),
                    Rule::KeyLength,
                ));
            }
            Some(k) => k.clone(),
        };

        // Body, then the object in the path or body (404 for another merchant's object too).
        let (route, fingerprint, op) = self.validate(now, merchant, environment, &req.endpoint)?;
        // MUTANT card_in_fingerprint / amount_not_in_fingerprint / currency_not_in_fingerprint
        // (CARD-01, SAFE-01, CONFLICT-01): the fingerprint is computed over the wrong fields.
        let fingerprint = match self.params.mutant {
            Some(m) => m.fingerprint(fingerprint, req.endpoint.card()),
            None => fingerprint,
        };
        let scope = Scope {
            merchant,
            environment,
            route,
            key: idem_key,
        };

        // The idempotency scope (SCOPE-01): conflict, replay or concurrent execution. The
        // scope carries the merchant and environment of the API key, never the key itself:
        // test and live never meet (SCOPE-02), a rotated key finds the same records (SCOPE-03).
        let found = match self.params.mutant {
            // MUTANT scope_without_merchant / _environment / _route / _payment_in_path
            // (SCOPE-01, SCOPE-02): the record lookup drops one component of the scope.
            Some(m) if m.same_scope(&scope, &scope).is_some() => self
                .records
                .iter()
                .find(|(s, _)| m.same_scope(s, &scope) == Some(true))
                .map(|(_, r)| r),
            _ => self.records.get(&scope),
        };
        if let Some(record) = found {
            if record.fingerprint != fingerprint {
                // CONFLICT-01; card data is not in the fingerprint (CARD-01). The 409 binds
                // nothing (A-409-NOBIND).
                return Ok(reject(
                    ErrorCode::IdempotencyConflict,
                    None,
                    Rule::IdempotencyConflict,
                ));
            }
            return Ok(match &record.state {
                // MUTANT lock_expires_before_upstream (CONC-01, EFFECT-01): the in-flight lock
                // lapses after the concurrent wait, before the upstream answers; the request
                // takes the executor for dead and runs the operation again.
                RecordState::InFlight { .. }
                    if self.params.mutant == Some(Mutant::LockExpiresBeforeUpstream)
                        && now >= record.created_at.after(self.params.concurrent_wait_timeout) =>
                {
                    Admission::Execute {
                        scope,
                        fingerprint,
                        op,
                    }
                }
                // A-S5-BRANCH: wait for the executor, or 409 operation_in_progress at once.
                RecordState::InFlight { .. } => Admission::Fork(Fork::Concurrent { scope }),
                // MUTANT session_replay_new_session (REPLAY-01, CKO-01): a session replay is
                // taken for "a new session for the same Payment".
                RecordState::Done {
                    resource: ResourceId::Session(_),
                } if self.params.mutant == Some(Mutant::SessionReplayNewSession) => {
                    Admission::Execute {
                        scope,
                        fingerprint,
                        op,
                    }
                }
                RecordState::Done { resource } => {
                    // REPLAY-01, REPLAY-02, CARD-03: the original object, latest state, 200.
                    // REFUND-02: a refund retried with its key is the same refund.
                    let rule = match resource {
                        ResourceId::Refund(_) => Rule::RefundReplaySameRefund,
                        _ => Rule::ReplayLatestStatus200,
                    };
                    Admission::Answer(self.resource_response(200, *resource), rule)
                }
            });
        }

        self.admit_new(now, scope, fingerprint, op)
    }

    /// A request with a fresh scope: channel pause, then the business checks.
    fn admit_new(
        &self,
        now: Millis,
        scope: Scope,
        fingerprint: Fingerprint,
        op: NewOp,
    ) -> Result<Admission, Admission> {
        let new_transaction = matches!(
            op,
            NewOp::CreatePayment { .. } | NewOp::Confirm { .. } | NewOp::CheckoutSession { .. }
        );
        // A-PAUSE-SCOPE: create, confirm and checkout session with a key that has no record
        // yet, before the business checks (S4 and S8 requests get 503 too); cancel, refunds,
        // queries and keys with a record were answered or go on.
        if new_transaction && self.channel_paused {
            // RATE-04: not accepted, no Payment, no reason given. RATE-05: the platform's
            // only 5xx, answered before any record or execution exists, so it alone means
            // "not accepted"; any other 5xx a merchant sees comes after acceptance may have
            // happened (UNKNOWN-01).
            return Err(reject(
                ErrorCode::TemporarilyUnavailable,
                None,
                Rule::ChannelPaused,
            ));
        }
        let business = |number: &Text| BusinessKey {
            merchant: scope.merchant,
            environment: scope.environment,
            number: number.clone(),
        };
        match &op {
            NewOp::CreatePayment {
                merchant_order_no,
                amount,
                currency,
                ..
            } => {
                if let Some(&existing) = self.order_nos.get(&business(merchant_order_no)) {
                    let p = &self.payments[&existing];
                    if p.amount == *amount && p.currency == *currency {
                        // ORDER-01 / S4: "the existing object identifier or a conflict"
                        // (A-S4-BRANCH: both are explored).
                        return Ok(Admission::Fork(Fork::OrderNoReuse {
                            scope,
                            fingerprint,
                            existing,
                        }));
                    }
                    // UNIQ-01: a different amount or currency under a used order number is
                    // always a conflict, never a branch (A-S4-PARAMS).
                    return Err(order_no_conflict(existing));
                }
            }
            NewOp::Confirm { payment, .. } => {
                let p = &self.payments[payment];
                // MUTANT second_unfinished_attempt (UNIQ-02, ATTEMPT-01): no in-progress check.
                let in_progress_checked =
                    self.params.mutant != Some(Mutant::SecondUnfinishedAttempt);
                if p.status.is_in_progress() && in_progress_checked {
                    // ATTEMPT-01 / S8 (UNIQ-02: never a second unfinished attempt);
                    // A-S8-BRANCH: 409 payment_in_progress or the original status.
                    return Ok(Admission::Fork(Fork::ConfirmWhileProcessing {
                        payment: *payment,
                    }));
                }
                match p.status {
                    // A-STATUS-RPM: the first confirm of a Payment without an attempt.
                    PaymentStatus::Failed | PaymentStatus::RequiresPaymentMethod => {}
                    PaymentStatus::Processing | PaymentStatus::RequiresAction
                        if !in_progress_checked => {}
                    // MUTANT attempt_after_expiry (ATTEMPT-04): expiry is not checked.
                    PaymentStatus::Expired
                        if self.params.mutant == Some(Mutant::AttemptAfterExpiry) => {}
                    PaymentStatus::Expired => {
                        return Err(reject(
                            ErrorCode::PaymentExpired,
                            None,
                            Rule::CardRetryBeforeExpiry,
                        ));
                    }
                    _ => {
                        return Err(reject(
                            ErrorCode::PaymentNotConfirmable,
                            None,
                            Rule::CardRetryAfterFailure,
                        ));
                    }
                }
                // A-FAILED-AFTER-EXPIRY: a Payment that failed after expires_at stays
                // failed, never expired; a confirm of it is still past expires_at.
                // MUTANT attempt_after_expiry (ATTEMPT-04): expires_at is not checked.
                if now >= p.expires_at && self.params.mutant != Some(Mutant::AttemptAfterExpiry) {
                    return Err(reject(
                        ErrorCode::PaymentExpired,
                        None,
                        Rule::CardRetryBeforeExpiry,
                    ));
                }
                // MUTANT fourth_attempt (ATTEMPT-05): the limit is off by one.
                let limit = match self.params.mutant {
                    Some(Mutant::FourthAttempt) => self.params.attempts_max as usize + 1,
                    _ => self.params.attempts_max as usize,
                };
                if p.attempts.len() >= limit {
                    return Err(reject(
                        ErrorCode::AttemptsExhausted,
                        None,
                        Rule::AttemptsMax,
                    ));
                }
            }
            NewOp::Cancel { payment } => {
                // A-CANCEL: succeeded or expired get 422; canceled is returned (200) without
                // binding the key; the rest execute.
                let p = &self.payments[payment];
                match p.status {
                    PaymentStatus::Succeeded | PaymentStatus::Expired => {
                        return Err(reject(
                            ErrorCode::PaymentNotCancelable,
                            None,
                            Rule::RejectionsDoNotOccupyKey,
                        ));
                    }
                    PaymentStatus::Canceled => {
                        return Err(Admission::Answer(
                            self.resource_response(200, ResourceId::Payment(*payment)),
                            Rule::Cancel202KeepsStatus,
                        ));
                    }
                    _ => {}
                }
            }
            NewOp::CheckoutSession {
                merchant_order_no, ..
            } => {
                // Sessions of an existing order were resolved in `validate` (CKO-01); here
                // only an order whose Payment can no longer be paid conflicts. A-CKO-CONFLICT:
                // "payable" is requires_payment_method or failed, whatever its attempts or
                // expires_at; another amount or currency conflicts too.
                if let Some(&existing) = self.order_nos.get(&business(merchant_order_no)) {
                    let p = &self.payments[&existing];
                    let payable = matches!(
                        p.status,
                        PaymentStatus::RequiresPaymentMethod | PaymentStatus::Failed
                    );
                    let same = matches!(&op, NewOp::CheckoutSession { amount, currency, .. }
                        if p.amount == *amount && p.currency == *currency);
                    if !payable || !same {
                        return Err(order_no_conflict(existing));
                    }
                }
            }
            NewOp::Refund {
                payment,
                merchant_refund_no,
                amount,
            } => {
                // MUTANT refund_no_not_unique (UNIQ-04): the refund number is not looked up.
                let refund_no_checked = self.params.mutant != Some(Mutant::RefundNoNotUnique);
                if let Some(&existing) = self
                    .refund_nos
                    .get(&business(merchant_refund_no))
                    .filter(|_| refund_no_checked)
                {
                    // UNIQ-04, RET-03: the refund number outlives the key. The code
                    // refund_no_conflict is A-ERROR-CODES; the 409 binds nothing (A-409-NOBIND).
                    let error = ApiError::new(ErrorCode::RefundNoConflict)
                        .related(ResourceId::Refund(existing));
                    return Err(Admission::Answer(
                        ApiResponse::error(error),
                        Rule::UniqueRefundNo,
                    ));
                }
                let p = &self.payments[payment];
                if p.status != PaymentStatus::Succeeded {
                    return Err(reject(
                        ErrorCode::PaymentNotRefundable,
                        None,
                        Rule::RejectionsDoNotOccupyKey,
                    ));
                }
                // A-REFUND-LIMIT: processing and succeeded refunds together (`amount_refunded`)
                // never exceed the Payment's amount.
                // MUTANT refund_beyond_captured (REFUND-03): no limit.
                if p.amount_refunded + amount > p.amount
                    && self.params.mutant != Some(Mutant::RefundBeyondCaptured)
                {
                    return Err(reject(
                        ErrorCode::RefundAmountExceeded,
                        Some(Field::Amount),
                        Rule::RefundNotBeyondCaptured,
                    ));
                }
            }
        }
        Ok(Admission::Execute {
            scope,
            fingerprint,
            op,
        })
    }

    /// Validates the body and looks up the object: (route, fingerprint, operation).
    fn validate(
        &self,
        _now: Millis,
        merchant: MerchantId,
        environment: Environment,
        endpoint: &Endpoint,
    ) -> Result<(Route, Fingerprint, NewOp), Admission> {
        let malformed = || {
            reject(
                ErrorCode::InvalidRequest,
                Some(Field::Body),
                Rule::RejectionsDoNotOccupyKey,
            )
        };
        let owned_payment = |id: PaymentId, field: Option<Field>| -> Result<PaymentId, Admission> {
            match self.payments.get(&id) {
                Some(p) if p.merchant == merchant && p.environment == environment => Ok(id),
                _ => Err(reject(
                    ErrorCode::ResourceMissing,
                    field,
                    Rule::RejectionsDoNotOccupyKey,
                )),
            }
        };
        Ok(match endpoint {
            Endpoint::CreatePayment { body } => {
                let Json::Parsed(b) = body else {
                    return Err(malformed());
                };
                let merchant_order_no = text_of(&b.merchant_order_no, Field::MerchantOrderNo)?;
                let amount = amount_of(b.amount)?;
                let currency = self.currency_of(&b.currency)?;
                (
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
                )
            }
            Endpoint::ConfirmPayment { payment_id, body } => {
                let payment = owned_payment(*payment_id, None)?;
                let Json::Parsed(b) = body else {
                    return Err(malformed());
                };
                let Some(card) = b.card else {
                    return Err(reject(
                        ErrorCode::InvalidRequest,
                        Some(Field::Card),
                        Rule::CardRetryNewKey,
                    ));
                };
                (
                    Route::Confirm(payment),
                    Fingerprint::Confirm,
                    NewOp::Confirm { payment, card },
                )
            }
            Endpoint::CancelPayment { payment_id } => {
                let payment = owned_payment(*payment_id, None)?;
                (
                    Route::Cancel(payment),
                    Fingerprint::Cancel,
                    NewOp::Cancel { payment },
                )
            }
            Endpoint::CreateCheckoutSession { body } => {
                let Json::Parsed(b) = body else {
                    return Err(malformed());
                };
                let merchant_order_no = text_of(&b.merchant_order_no, Field::MerchantOrderNo)?;
                let amount = amount_of(b.amount)?;
                let currency = self.currency_of(&b.currency)?;
                let existing = self
                    .order_nos
                    .get(&BusinessKey {
                        merchant,
                        environment,
                        number: merchant_order_no.clone(),
                    })
                    .copied();
                (
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
                )
            }
            Endpoint::CreateRefund { body } => {
                let Json::Parsed(b) = body else {
                    return Err(malformed());
                };
                let Some(payment_id) = b.payment_id else {
                    return Err(reject(
                        ErrorCode::InvalidRequest,
                        Some(Field::PaymentId),
                        Rule::SafeParameters,
                    ));
                };
                let merchant_refund_no = text_of(&b.merchant_refund_no, Field::MerchantRefundNo)?;
                let amount = amount_of(b.amount)?;
                let payment = owned_payment(payment_id, Some(Field::PaymentId))?;
                (
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
                )
            }
            _ => unreachable!("queries and unknown routes are answered before validation"),
        })
    }

    /// Answers a query endpoint from known state (QUERY-01..QUERY-05); `None` for POSTs.
    fn answer_query(
        &self,
        merchant: MerchantId,
        environment: Environment,
        endpoint: &Endpoint,
    ) -> Option<Admission> {
        let mine = |m: MerchantId, e: Environment| m == merchant && e == environment;
        let missing = || reject(ErrorCode::ResourceMissing, None, Rule::QueryById);
        Some(match endpoint {
            Endpoint::GetPayment { payment_id } => match self.payments.get(payment_id) {
                Some(p) if mine(p.merchant, p.environment) => Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Payment(p.view(*payment_id))),
                    Rule::QueryReadsKnownState,
                ),
                _ => missing(),
            },
            Endpoint::ListPayments { merchant_order_no } => {
                // QUERY-02: exact, case-sensitive; at most one (UNIQ-01). QUERY-05: empty
                // means never created.
                let data = self
                    .order_nos
                    .get(&BusinessKey {
                        merchant,
                        environment,
                        number: merchant_order_no.clone(),
                    })
                    .map(|id| self.payments[id].view(*id))
                    .into_iter()
                    .collect();
                Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Payments { data }),
                    Rule::QueryByOrderNo,
                )
            }
            Endpoint::GetRefund { refund_id } => match self.refunds.get(refund_id) {
                Some(r) if mine(r.merchant, r.environment) => Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Refund(r.view(*refund_id))),
                    Rule::QueryRefunds,
                ),
                _ => missing(),
            },
            Endpoint::ListRefundsByNo { merchant_refund_no } => {
                let data = self
                    .refund_nos
                    .get(&BusinessKey {
                        merchant,
                        environment,
                        number: merchant_refund_no.clone(),
                    })
                    .map(|id| self.refunds[id].view(*id))
                    .into_iter()
                    .collect();
                Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Refunds { data }),
                    Rule::QueryRefunds,
                )
            }
            Endpoint::ListRefundsProcessing => {
                let data = self
                    .refunds
                    .iter()
                    .filter(|(_, r)| {
                        mine(r.merchant, r.environment)
                            && r.status == crate::api::RefundStatus::Processing
                    })
                    .map(|(id, r)| r.view(*id))
                    .collect();
                Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Refunds { data }),
                    Rule::QueryRefunds,
                )
            }
            _ => return None,
        })
    }

    /// `status` with the latest view of a resource.
    pub(super) fn resource_response(&self, status: u16, resource: ResourceId) -> ApiResponse {
        let body = match resource {
            ResourceId::Payment(id) => ResponseBody::Payment(self.payments[&id].view(id)),
            ResourceId::Refund(id) => ResponseBody::Refund(self.refunds[&id].view(id)),
            ResourceId::Session(id) => ResponseBody::Session(self.sessions[&id].view(id)),
        };
        ApiResponse::ok(status, body)
    }

    /// Handles a request: admission, then the branch or the execution.
    pub(super) fn handle_request(
        &mut self,
        now: Millis,
        id: RequestId,
        req: &ApiRequest,
        branch: Option<Branch>,
        out: &mut Vec<PlatformOutput>,
    ) -> Result<(), StepError> {
        if self.pending.contains_key(&id) {
            return Err(StepError::DuplicateRequestId(id));
        }
        match self.admit(now, req) {
            Admission::Answer(response, rule) => {
                if let Some(m) = self.params.mutant {
                    self.mutant_after_answer(now, m, id, req, &response, out);
                }
                out.push(PlatformOutput::Response {
                    to: id,
                    response,
                    rule,
                });
                Ok(())
            }
            Admission::Fork(fork) => {
                let point = fork.point();
                let branch = branch.ok_or(StepError::BranchRequired(point))?;
                if branch.point() != point {
                    return Err(StepError::WrongBranch {
                        point,
                        given: branch,
                    });
                }
                self.take_branch(now, id, fork, branch, out);
                Ok(())
            }
            Admission::Execute {
                scope,
                fingerprint,
                op,
            } => {
                self.execute(now, id, scope, fingerprint, op, out);
                Ok(())
            }
        }
    }

    fn take_branch(
        &mut self,
        now: Millis,
        id: RequestId,
        fork: Fork,
        branch: Branch,
        out: &mut Vec<PlatformOutput>,
    ) {
        let (response, rule) = match (fork, branch) {
            (Fork::OrderNoReuse { existing, .. }, Branch::S4Conflict) => {
                // A-409-NOBIND: the conflict binds nothing.
                (order_no_conflict_response(existing), Rule::OrderNoNewKey)
            }
            (
                Fork::OrderNoReuse {
                    scope,
                    fingerprint,
                    existing,
                },
                _,
            ) => {
                // A-S4-BIND: the new key is bound to the existing Payment, so its replays agree.
                let resource = ResourceId::Payment(existing);
                self.bind(now, scope, fingerprint, RecordState::Done { resource });
                (self.resource_response(200, resource), Rule::OrderNoNewKey)
            }
            (Fork::Concurrent { scope }, Branch::S5Wait) => {
                // CONC-02: wait for the executor, at most `concurrent_wait_timeout` (CONC-03;
                // A-WAIT-TIMEOUT: 10 s).
                self.pending.insert(id, Pending::Waiter { scope });
                let at = now.after(self.params.concurrent_wait_timeout);
                self.set_timer(at, Timer::WaitTimeout(id));
                return;
            }
            (Fork::Concurrent { .. }, _) => (
                ApiResponse::error(ApiError::new(ErrorCode::OperationInProgress)),
                Rule::ConcurrentWaitTimeout,
            ),
            (Fork::ConfirmWhileProcessing { payment }, Branch::S8PaymentInProgress) => {
                // A-S8-NOBIND: the key is left free.
                let error = ApiError::new(ErrorCode::PaymentInProgress)
                    .related(ResourceId::Payment(payment));
                (ApiResponse::error(error), Rule::ConfirmWhileProcessing)
            }
            (Fork::ConfirmWhileProcessing { payment }, _) => {
                // A-S8-NOBIND: the original status, nothing executed, the key left free.
                (
                    self.resource_response(200, ResourceId::Payment(payment)),
                    Rule::ConfirmWhileProcessing,
                )
            }
        };
        out.push(PlatformOutput::Response {
            to: id,
            response,
            rule,
        });
    }

    /// Writes an idempotency record and its retention timer (RET-01).
    pub(super) fn bind(
        &mut self,
        now: Millis,
        scope: Scope,
        fingerprint: Fingerprint,
        state: RecordState,
    ) {
        // MUTANT retention_expires_early (RET-01): a day instead of 7.
        let retention = match self.params.mutant {
            Some(Mutant::RetentionExpiresEarly) => Mutant::EARLY_RETENTION,
            _ => self.params.retention,
        };
        self.set_timer(now.after(retention), Timer::Retention(scope.clone()));
        self.records.insert(
            scope,
            IdempotencyRecord {
                fingerprint,
                created_at: now,
                state,
            },
        );
    }
}

fn order_no_conflict_response(existing: PaymentId) -> ApiResponse {
    ApiResponse::error(
        ApiError::new(ErrorCode::OrderNoConflict).related(ResourceId::Payment(existing)),
    )
}

/// UNIQ-01 / ORDER-01: `409 order_no_conflict` naming the existing Payment.
fn order_no_conflict(existing: PaymentId) -> Admission {
    Admission::Answer(order_no_conflict_response(existing), Rule::UniqueOrderNo)
}
