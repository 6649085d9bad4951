//! Compact history for the properties: facts, not a log.
//!
//! The checker hashes the world, facts included, so they are small counters and sticky
//! flags keyed by ordered maps. They are observed by the world around each platform
//! step, never reported by the platform itself: a buggy platform cannot hide from them.

use crate::config::WorldConfig;
use payhub_model::{
    ApiRequest, ApiResponse, Endpoint, Environment, ErrorCode, Json, MerchantId, Method, Millis,
    PaymentId, Platform, PlatformOutput, RefundId, RequestId, ResourceId, ResponseBody, Rule,
    UpstreamCall,
};
use payhub_model::{CowMap, CowSet, Text};
use serde::Serialize;

/// An idempotency scope as the merchant sees it: merchant + environment + method + path
/// + key (SCOPE-01), computed from the request, not from the platform.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ScopeKey {
    pub merchant: MerchantId,
    pub environment: Environment,
    pub method: Method,
    pub path: Text,
    pub key: Text,
}

impl ScopeKey {
    /// The scope of a keyed request, if its API key is known and it carries a key.
    pub fn of(config: &WorldConfig, request: &ApiRequest) -> Option<ScopeKey> {
        let key = request.idempotency_key.clone()?;
        let (merchant, environment) = config.key_owner(request.api_key)?;
        Some(ScopeKey {
            merchant,
            environment,
            method: request.endpoint.method(),
            path: request.endpoint.path(),
            key,
        })
    }
}

/// Counts of the platform's records, before and after a request (REJECT-01, RATE-01).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    payments: usize,
    attempts: usize,
    refunds: usize,
    sessions: usize,
    records: usize,
}

/// The facts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Facts {
    /// Upstream charge calls caused by requests, per idempotency scope, within the
    /// scope's retention window (RET-01).
    pub charges_per_scope: CowMap<ScopeKey, u8>,
    /// When the current retention window of each scope's charges began.
    pub first_charge_at: CowMap<ScopeKey, Millis>,
    /// Charge calls the platform sent on its own (on a timer or a reply): never allowed.
    pub unsolicited_charges: u8,
    /// Upstream refund calls, per refund.
    pub refund_calls: CowMap<RefundId, u8>,
    /// The first request answered 400/401/403/422/429/503 that nevertheless created or
    /// bound something (sticky).
    pub rejected_but_executed: Option<RequestId>,
    /// The object each scope's 2xx answers referred to, and when it was first seen.
    pub objects_per_scope: CowMap<ScopeKey, (ResourceId, Millis)>,
    /// The first 2xx answer, within retention, that referred to another object than an
    /// earlier 2xx answer under the same scope (sticky).
    pub replay_mismatch: Option<RequestId>,
    /// The first 2xx answer that referred to an object of another merchant or
    /// environment than the request's (sticky).
    pub foreign_object: Option<RequestId>,
    /// The first charge, sent while handling a request, with another card than the
    /// request's own (sticky): a replayed card must never be charged.
    pub charged_other_card: Option<RequestId>,
    /// Every rule that decided a response or an upstream call (a bitset over the
    /// catalogue): the "sometimes" properties and rule coverage read it.
    pub rules_exercised: RuleSet,
    /// A scope was answered again after its first answer's retention had passed.
    pub replay_after_retention: bool,
    /// The business order (database, order number) each Payment was charged for, as
    /// seen when a client's submission made the platform charge.
    pub payment_business: CowMap<payhub_model::PaymentId, (u8, Text)>,
    /// The key each business submission (database, order, sequence) was first sent with.
    pub submission_keys: CowMap<(u8, Text, u32), Text>,
    /// The first business submission sent under a second key (sticky): GEN-05, UNKNOWN-03.
    pub second_key: Option<(u8, Text, u32)>,
    /// The first order whose applied version went down (sticky): WEBHOOK-02.
    pub version_regressed: Option<(u8, Text)>,
    /// Every (status, error code) answered, as a small sorted set.
    pub answers: CowSet<(u16, Option<ErrorCode>)>,

    // ---- Facts added with the bug zoo (properties/src/zoo.rs). ----
    /// Each scope's current execution: when a request under it first executed (an
    /// upstream call or a new idempotency record in its own step), and the safety-relevant
    /// parameters that request carried, as the merchant sent them. Replaced once the
    /// retention has passed (RET-01).
    pub executions: CowMap<ScopeKey, (Millis, SafeParams)>,
    /// The first request whose conflict verdict contradicts its scope's execution within
    /// retention (sticky): 409 idempotency_conflict with the same parameters or with no
    /// execution under its scope, or a 2xx with other parameters (CONFLICT-01, CARD-01).
    pub conflict_misjudged: Option<RequestId>,
    /// The first request under a scope that executed within retention answered as new
    /// business: 409 order_no_conflict, payment_in_progress or refund_no_conflict (sticky).
    pub replay_as_new_business: Option<RequestId>,
    /// The first 2xx answer about another Payment than the one the request names in its
    /// path or body (sticky).
    pub answered_other_payment: Option<RequestId>,
    /// When clients last sent a query of one object: (merchant, environment, path).
    pub last_query: CowMap<(MerchantId, Environment, Text), Millis>,
    /// The first client query sent less than 10 s after the previous one of the same
    /// object (sticky): SCHED-02.
    pub query_too_soon: Option<String>,
    /// (client node, scope) → no retry of that scope before this time: a 429's
    /// Retry-After, from when the client got it (RATE-03). Cleared when the node crashes.
    pub retry_not_before: CowMap<(u8, ScopeKey), Millis>,
    /// The first client request sent before its scope's Retry-After (sticky).
    pub retry_after_ignored: Option<String>,
    /// The endpoint (method and path) each client key was first sent on, per merchant
    /// and environment.
    pub key_endpoints: CowMap<(MerchantId, Environment, Text), (Method, Text)>,
    /// The first client key sent on a second endpoint (sticky): GEN-05.
    pub key_on_two_endpoints: Option<String>,
    /// The safety-relevant parameters each client scope was first sent with.
    pub client_params: CowMap<ScopeKey, SafeParams>,
    /// The first client scope re-sent with other parameters (sticky): UNKNOWN-04.
    pub params_changed_under_key: Option<String>,
    /// The key of the first client create of each (merchant, environment, order number).
    pub create_keys: CowMap<(MerchantId, Environment, Text), Text>,
    /// The first order a client created under a second key (sticky): UNKNOWN-03, GEN-02.
    pub order_rekeyed: Option<String>,
    /// The first client request the client was waiting for that was answered 409
    /// payment_in_progress: a card retry while the payment was in progress (sticky).
    pub card_retry_in_progress: Option<RequestId>,
}

/// A set of rules as a bitset over the catalogue order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RuleSet(pub u128);

impl RuleSet {
    fn index(rule: Rule) -> u32 {
        Rule::ALL
            .iter()
            .position(|r| *r == rule)
            .expect("in the catalogue") as u32
    }
    pub fn insert(&mut self, rule: Rule) {
        self.0 |= 1u128 << Self::index(rule);
    }
    pub fn contains(&self, rule: Rule) -> bool {
        self.0 & (1u128 << Self::index(rule)) != 0
    }
    pub fn iter(&self) -> impl Iterator<Item = Rule> + '_ {
        Rule::ALL.iter().copied().filter(|r| self.contains(*r))
    }
}

impl Facts {
    pub fn snapshot(&self, platform: &Platform) -> Snapshot {
        Snapshot {
            payments: platform.payments().len(),
            attempts: platform.attempts().len(),
            refunds: platform.refunds().len(),
            sessions: platform.sessions().len(),
            records: platform.records().len(),
        }
    }

    /// After the platform handled request `id`.
    #[allow(clippy::too_many_arguments)]
    pub fn on_request_handled(
        &mut self,
        now: Millis,
        config: &WorldConfig,
        id: RequestId,
        request: &ApiRequest,
        before: &Snapshot,
        platform: &Platform,
        out: &[PlatformOutput],
    ) {
        let charges = out
            .iter()
            .filter(|o| {
                matches!(
                    o,
                    PlatformOutput::Upstream {
                        call: UpstreamCall::Charge { .. },
                        ..
                    }
                )
            })
            .count() as u8;
        if charges > 0 {
            match ScopeKey::of(config, request) {
                Some(scope) => {
                    // RET-01: a key is protected for the retention period; a charge under
                    // it after that starts a new window (a contract finding, not a bug).
                    let window_over = self
                        .first_charge_at
                        .get(&scope)
                        .is_some_and(|at| now >= at.after(payhub_model::Contract::RETENTION));
                    if window_over || !self.first_charge_at.contains_key(&scope) {
                        self.first_charge_at.insert(scope.clone(), now);
                        self.charges_per_scope.insert(scope.clone(), 0);
                    }
                    let n = self.charges_per_scope.entry(scope).or_insert(0);
                    *n = n.saturating_add(charges);
                }
                None => self.unsolicited_charges = self.unsolicited_charges.saturating_add(charges),
            }
        }
        self.count_refund_calls(out);
        self.note_rules(out);
        let card = request.endpoint.card();
        let other_card = out.iter().any(|o| matches!(o,
            PlatformOutput::Upstream { call: UpstreamCall::Charge { card: c, .. }, .. } if Some(*c) != card));
        if other_card && self.charged_other_card.is_none() {
            self.charged_other_card = Some(id);
        }
        let rejected = out.iter().any(|o| {
            matches!(o,
            PlatformOutput::Response { to, response, .. }
                if *to == id && matches!(response.status, 400 | 401 | 403 | 409 | 422 | 429 | 503))
        });
        self.judge_scope_answer(now, config, id, request, before, platform, out);
        if rejected && self.rejected_but_executed.is_none() {
            let after = self.snapshot(platform);
            let executed = after != *before
                || out
                    .iter()
                    .any(|o| matches!(o, PlatformOutput::Upstream { .. }));
            if executed {
                self.rejected_but_executed = Some(id);
            }
        }
    }

    /// After the platform handled anything but a request.
    pub fn on_platform_step(&mut self, out: &[PlatformOutput]) {
        let charges = out
            .iter()
            .filter(|o| {
                matches!(
                    o,
                    PlatformOutput::Upstream {
                        call: UpstreamCall::Charge { .. },
                        ..
                    }
                )
            })
            .count() as u8;
        self.unsolicited_charges = self.unsolicited_charges.saturating_add(charges);
        self.count_refund_calls(out);
        self.note_rules(out);
    }

    fn note_rules(&mut self, out: &[PlatformOutput]) {
        for o in out {
            match o {
                PlatformOutput::Response { rule, .. }
                | PlatformOutput::Upstream { rule, .. }
                | PlatformOutput::Webhook { rule, .. } => self.rules_exercised.insert(*rule),
            }
        }
    }

    /// A response leaves the platform for the merchant that sent request `id`, whose
    /// scope was `scope` and credentials `owner`.
    #[allow(clippy::too_many_arguments)]
    pub fn on_response(
        &mut self,
        now: Millis,
        retention: Millis,
        id: RequestId,
        scope: Option<&ScopeKey>,
        owner: Option<(MerchantId, Environment)>,
        response: &ApiResponse,
        platform: &Platform,
    ) {
        self.answers
            .insert((response.status, response.error_code()));
        if !response.is_success() {
            return;
        }
        let resource = match &response.body {
            ResponseBody::Payment(p) => Some(ResourceId::Payment(p.id)),
            ResponseBody::Refund(r) => Some(ResourceId::Refund(r.id)),
            ResponseBody::Session(s) => Some(ResourceId::Session(s.id)),
            _ => None,
        };
        if let (Some((merchant, environment)), Some(resource)) = (owner, resource) {
            let owned_by = match resource {
                ResourceId::Payment(p) => platform
                    .payments()
                    .get(&p)
                    .map(|p| (p.merchant, p.environment)),
                ResourceId::Refund(r) => platform
                    .refunds()
                    .get(&r)
                    .map(|r| (r.merchant, r.environment)),
                ResourceId::Session(s) => platform
                    .sessions()
                    .get(&s)
                    .and_then(|s| platform.payments().get(&s.payment))
                    .map(|p| (p.merchant, p.environment)),
            };
            if owned_by != Some((merchant, environment)) && self.foreign_object.is_none() {
                self.foreign_object = Some(id);
            }
        }
        if let (Some(scope), Some(resource)) = (scope, resource) {
            match self.objects_per_scope.get(scope) {
                Some((seen, since)) if now < since.after(retention) => {
                    if *seen != resource && self.replay_mismatch.is_none() {
                        self.replay_mismatch = Some(id);
                    }
                }
                Some(_) => {
                    self.replay_after_retention = true;
                    self.objects_per_scope
                        .insert(scope.clone(), (resource, now));
                }
                None => {
                    self.objects_per_scope
                        .insert(scope.clone(), (resource, now));
                }
            }
        }
    }

    /// The charges a client's submission for `business` caused.
    pub fn on_business_charges(&mut self, business: &(u8, Text), out: &[PlatformOutput]) {
        for o in out {
            if let PlatformOutput::Upstream {
                call: UpstreamCall::Charge { payment, .. },
                ..
            } = o
            {
                self.payment_business
                    .entry(*payment)
                    .or_insert_with(|| business.clone());
            }
        }
    }

    /// A client sends business submission (`db`, `order`, `seq`) under `key`.
    pub fn on_submission_key(&mut self, db: u8, order: &Text, seq: u32, key: Option<&Text>) {
        let Some(key) = key else { return };
        let id = (db, order.clone(), seq);
        match self.submission_keys.get(&id) {
            Some(first) if first != key => {
                if self.second_key.is_none() {
                    self.second_key = Some(id);
                }
            }
            Some(_) => {}
            None => {
                self.submission_keys.insert(id, key.clone());
            }
        }
    }

    /// After a client step: the first order whose applied version of its Payment went
    /// down (WEBHOOK-02), if any, comparing the database `before` the step (a clone: two
    /// reference counts) with the one after it. A question, not a change: most client
    /// steps change no fact, and asking does not copy the shared facts. Versions are per
    /// object: an order re-pointed to another Payment starts over.
    pub fn version_regression(
        &self,
        db_index: u8,
        before: &payhub_model::client::MerchantDb,
        after: &payhub_model::client::MerchantDb,
    ) -> Option<(u8, Text)> {
        if self.version_regressed.is_some() {
            return None;
        }
        before.orders().find_map(|was| {
            after
                .order(&was.order_no)
                .is_some_and(|o| o.payment_id == was.payment_id && o.version() < was.version())
                .then(|| (db_index, was.order_no.clone()))
        })
    }

    fn count_refund_calls(&mut self, out: &[PlatformOutput]) {
        for o in out {
            if let PlatformOutput::Upstream {
                call: UpstreamCall::Refund { refund, .. },
                ..
            } = o
            {
                let n = self.refund_calls.entry(*refund).or_insert(0);
                *n = n.saturating_add(1);
            }
        }
    }
}

/// The safety-relevant parameters of a request as the merchant sent them (SAFE-01): order
/// number, amount and currency; refund number, amount and payment; nothing for confirm and
/// cancel (the payment is in the path). Card data is never part of it (CARD-01).
///
/// Kept as values, not text: the checker records them for every executed request, and
/// formatting them was a tenth of its instructions. Displayed as before, only in findings.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum SafeParams {
    /// Confirm, cancel, GET: nothing beyond the path.
    #[default]
    None,
    /// Create Payment or checkout session.
    Order {
        merchant_order_no: Option<Text>,
        amount: Option<i64>,
        currency: Option<Text>,
    },
    Refund {
        payment_id: Option<PaymentId>,
        merchant_refund_no: Option<Text>,
        amount: Option<i64>,
    },
}

impl std::fmt::Display for SafeParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SafeParams::None => Ok(()),
            SafeParams::Order {
                merchant_order_no,
                amount,
                currency,
            } => write!(f, "{merchant_order_no:?} {amount:?} {currency:?}"),
            SafeParams::Refund {
                payment_id,
                merchant_refund_no,
                amount,
            } => write!(f, "{payment_id:?} {merchant_refund_no:?} {amount:?}"),
        }
    }
}

pub fn safety_parameters(endpoint: &Endpoint) -> SafeParams {
    match endpoint {
        Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } => SafeParams::Order {
            merchant_order_no: b.merchant_order_no.clone(),
            amount: b.amount,
            currency: b.currency.clone(),
        },
        Endpoint::CreateCheckoutSession {
            body: Json::Parsed(b),
        } => SafeParams::Order {
            merchant_order_no: b.merchant_order_no.clone(),
            amount: b.amount,
            currency: b.currency.clone(),
        },
        Endpoint::CreateRefund {
            body: Json::Parsed(b),
        } => SafeParams::Refund {
            payment_id: b.payment_id,
            merchant_refund_no: b.merchant_refund_no.clone(),
            amount: b.amount,
        },
        _ => SafeParams::None,
    }
}

/// The Payment a request names in its path (confirm, cancel, GET) or body (refund).
fn named_payment(endpoint: &Endpoint) -> Option<PaymentId> {
    match endpoint {
        Endpoint::ConfirmPayment { payment_id, .. }
        | Endpoint::CancelPayment { payment_id }
        | Endpoint::GetPayment { payment_id } => Some(*payment_id),
        Endpoint::CreateRefund {
            body: Json::Parsed(b),
        } => b.payment_id,
        _ => None,
    }
}

/// SCHED-02: at least this long between two queries of one object.
const QUERY_SPACING: Millis = payhub_model::Contract::QUERY_SPACING_MIN;

impl Facts {
    /// The bug zoo's judgement of a request's own answer against its scope's execution
    /// (CONFLICT-01, REPLAY-01, SCOPE-01), then the execution it makes, if any.
    #[allow(clippy::too_many_arguments)]
    fn judge_scope_answer(
        &mut self,
        now: Millis,
        config: &WorldConfig,
        id: RequestId,
        request: &ApiRequest,
        before: &Snapshot,
        platform: &Platform,
        out: &[PlatformOutput],
    ) {
        let answer = out.iter().find_map(|o| match o {
            PlatformOutput::Response { to, response, .. } if *to == id => Some(response),
            _ => None,
        });
        if let (Some(named), Some(answer)) = (named_payment(&request.endpoint), answer) {
            let about = match &answer.body {
                ResponseBody::Payment(p) if answer.is_success() => Some(p.id),
                ResponseBody::Refund(r) if answer.is_success() => Some(r.payment_id),
                _ => None,
            };
            if about.is_some_and(|p| p != named) && self.answered_other_payment.is_none() {
                self.answered_other_payment = Some(id);
            }
        }
        let Some(scope) = ScopeKey::of(config, request) else {
            return;
        };
        let params = safety_parameters(&request.endpoint);
        let retention = payhub_model::Contract::RETENTION;
        let execution = self
            .executions
            .get(&scope)
            .filter(|(at, _)| now < at.after(retention))
            .map(|(_, p)| p.clone());
        if let Some(answer) = answer {
            let misjudged = match answer.error_code() {
                Some(ErrorCode::IdempotencyConflict) => {
                    execution.as_ref().is_none_or(|p| *p == params)
                }
                None if answer.is_success() => execution.as_ref().is_some_and(|p| *p != params),
                _ => false,
            };
            if misjudged && self.conflict_misjudged.is_none() {
                self.conflict_misjudged = Some(id);
            }
            let as_new = matches!(
                answer.error_code(),
                Some(
                    ErrorCode::OrderNoConflict
                        | ErrorCode::PaymentInProgress
                        | ErrorCode::RefundNoConflict
                )
            );
            if as_new && execution.is_some() && self.replay_as_new_business.is_none() {
                self.replay_as_new_business = Some(id);
            }
        }
        let executed = platform.records().len() > before.records
            || out
                .iter()
                .any(|o| matches!(o, PlatformOutput::Upstream { .. }));
        if executed && execution.is_none() {
            self.executions.insert(scope, (now, params));
        }
    }

    /// An answer leaves the platform for `node` (after any 500 replacement): `awaited`
    /// when a client waits for it.
    pub fn on_answer(
        &mut self,
        now: Millis,
        node: u8,
        awaited: bool,
        id: RequestId,
        scope: Option<&ScopeKey>,
        response: &ApiResponse,
    ) {
        if !awaited {
            return;
        }
        if let (Some(scope), Some(seconds)) = (scope, response.retry_after_s) {
            if response.status == 429 {
                let until = now.after(Millis::secs(seconds as u64));
                self.retry_not_before.insert((node, scope.clone()), until);
            }
        }
        if response.error_code() == Some(ErrorCode::PaymentInProgress)
            && self.card_retry_in_progress.is_none()
        {
            self.card_retry_in_progress = Some(id);
        }
    }

    /// Client `node` crashed: what its memory held (a pending Retry-After) is gone.
    pub fn on_client_crash(&mut self, node: u8) {
        self.retry_not_before.retain(|(n, _), _| *n != node);
    }

    /// Client `node` sends `request` (SCHED-02, RATE-03, GEN-05, UNKNOWN-03, UNKNOWN-04).
    pub fn on_client_send(
        &mut self,
        now: Millis,
        config: &WorldConfig,
        node: u8,
        request: &ApiRequest,
    ) {
        let Some((merchant, environment)) = config.key_owner(request.api_key) else {
            return;
        };
        // `POST /v1/payments`, formatted only for a finding (this runs on every send).
        let (method, path) = (request.endpoint.method(), request.endpoint.path());
        let endpoint = || format!("{method} {path}");
        if method == Method::Get {
            let object = (merchant, environment, path.clone());
            if let Some(last) = self.last_query.get(&object) {
                if now < last.after(QUERY_SPACING) && self.query_too_soon.is_none() {
                    self.query_too_soon = Some(format!("{} at {now} after {last}", endpoint()));
                }
            }
            self.last_query.insert(object, now);
        }
        let Some(scope) = ScopeKey::of(config, request) else {
            return;
        };
        let key = scope.key.clone();
        if let Some(until) = self.retry_not_before.get(&(node, scope.clone())) {
            if now < *until && self.retry_after_ignored.is_none() {
                self.retry_after_ignored = Some(format!(
                    "merchant-{node} sent {} Idempotency-Key: {key} at {now}, Retry-After ends at {until}",
                    endpoint()
                ));
            }
        }
        let first = self
            .key_endpoints
            .entry((merchant, environment, key.clone()))
            .or_insert_with(|| (method, path.clone()));
        if (first.0 != method || first.1 != path) && self.key_on_two_endpoints.is_none() {
            self.key_on_two_endpoints = Some(format!(
                "{key} on {} {} and {}",
                first.0,
                first.1,
                endpoint()
            ));
        }
        let params = safety_parameters(&request.endpoint);
        let first = self
            .client_params
            .entry(scope.clone())
            .or_insert_with(|| params.clone());
        if *first != params && self.params_changed_under_key.is_none() {
            self.params_changed_under_key = Some(format!(
                "{} Idempotency-Key: {key}: {first} then {params}",
                endpoint()
            ));
        }
        if let Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } = &request.endpoint
        {
            if let Some(order) = &b.merchant_order_no {
                let first = self
                    .create_keys
                    .entry((merchant, environment, order.clone()))
                    .or_insert_with(|| key.clone());
                if *first != key && self.order_rekeyed.is_none() {
                    self.order_rekeyed = Some(format!("{order} under {first} and {key}"));
                }
            }
        }
    }
}
