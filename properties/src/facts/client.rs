//! Merchant clients: the keys and parameters they sent, per submission, order and
//! endpoint, what they were answered, and the versions their databases apply (GEN-04,
//! GEN-05, UNKNOWN-03, UNKNOWN-04, ATTEMPT-07, WEBHOOK-02). The orders they hold closed
//! (CANCEL-02) are the effects family's.

use super::money::{SafeParams, safety_parameters};
use super::note_first;
use payhub_model::event::{Owner, Route, ScopeKey, StoredOrder, SubmissionRef, What};
use payhub_model::{
    ApiRequest, ApiResponse, CowMap, Endpoint, Environment, ErrorCode, Json, MerchantId, Method,
    RequestId, Text,
};
use serde::Serialize;

/// The client family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Clients {
    /// The key each business submission (database, order, sequence) was first sent with.
    pub submission_keys: CowMap<(u8, Text, u32), Text>,
    /// The first business submission sent under a second key.
    pub second_key: Option<SubmissionRef>,
    /// The first order whose applied version of the same Payment went down.
    pub version_regressed: Option<(u8, Text)>,
    /// The endpoint (method and path) each client key was first sent on, per merchant
    /// and environment.
    pub key_endpoints: CowMap<(MerchantId, Environment, Text), (Method, Text)>,
    /// The first client key sent on a second endpoint.
    pub key_on_two_endpoints: Option<Box<KeyOnTwoEndpoints>>,
    /// The safety-relevant parameters each client scope was first sent with.
    pub client_params: CowMap<ScopeKey, SafeParams>,
    /// The first client scope re-sent with other parameters.
    pub params_changed_under_key: Option<Box<ParamsChanged>>,
    /// The key of the first client create of each (merchant, environment, order number),
    /// forgotten when a create under it is rejected with 400, 401, 403 or 422 (REJECT-01).
    pub create_keys: CowMap<(MerchantId, Environment, Text), Text>,
    /// The first order a client created under a second key.
    pub order_rekeyed: Option<Box<OrderRekeyed>>,
    /// The first request a client waited for that was answered 409 payment_in_progress.
    pub card_retry_in_progress: Option<RequestId>,
}

/// Key `key`, first sent on `first`, then on `then` (method and path).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct KeyOnTwoEndpoints {
    pub key: Text,
    pub first: (Method, Text),
    pub then: (Method, Text),
}

/// Scope `scope` first sent with `first`, then with `then`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ParamsChanged {
    pub scope: ScopeKey,
    pub first: SafeParams,
    pub then: SafeParams,
}

/// Order `order` created under `first`, then under `then`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct OrderRekeyed {
    pub order: Text,
    pub first: Text,
    pub then: Text,
}

/// The value first recorded under `key`, recording `value()` if there is none. A key
/// already there leaves the map as it is: not copied, its digest kept (most sends repeat
/// what the facts hold).
fn first_or_insert<K: Ord + Clone, V: Clone>(
    map: &mut CowMap<K, V>,
    key: K,
    value: impl FnOnce() -> V,
) -> &V {
    if !map.contains_key(&key) {
        map.insert(key.clone(), value());
    }
    &map[&key]
}

/// The same Payment, at a lower version than the one applied before.
fn went_back(was: &StoredOrder, now: &StoredOrder) -> bool {
    was.payment_id == now.payment_id && now.version < was.version
}

impl Clients {
    /// Whether `what` may change this family (asked before the shared facts are copied).
    pub(super) fn changes(&self, what: &What) -> bool {
        match what {
            // Without a key a send records nothing here (no submission key, no scope),
            // unless it is a submission already sent under a key (GEN-04: sent keyless).
            What::ClientSends {
                request,
                submission,
                held: false,
                ..
            } => {
                request.idempotency_key.is_some()
                    || submission.as_ref().is_some_and(|s| {
                        self.second_key.is_none()
                            && self
                                .submission_keys
                                .contains_key(&(s.db, s.order.clone(), s.seq))
                    })
            }
            What::Answered {
                response,
                route: Some(route),
                ..
            } => {
                (route.awaited
                    && !route.edge_500
                    && self.card_retry_in_progress.is_none()
                    && response.error_code() == Some(ErrorCode::PaymentInProgress))
                    || self.frees_create_key(response, route).is_some()
            }
            What::OrderStored { was, stored, .. } => {
                let regressed = was.as_ref().is_some_and(|w| went_back(w, stored));
                regressed && self.version_regressed.is_none()
            }
            _ => false,
        }
    }

    pub(super) fn observe(&mut self, what: &What) {
        match what {
            What::ClientSends {
                request,
                owner,
                submission,
                held: false,
                ..
            } => {
                if let Some(s) = submission {
                    self.on_submission_key(s, request.idempotency_key.as_ref());
                }
                self.on_client_send(request, *owner);
            }
            What::Answered {
                id,
                response,
                route: Some(route),
                ..
            } => {
                if let Some(scope) = self.frees_create_key(response, route) {
                    // REJECT-01: the rejected create used up no key; the corrected one
                    // goes under a new key (A-CLIENT-CORRECTED-KEY).
                    self.create_keys.retain(|(m, e, _), k| {
                        (*m, *e, &*k) != (scope.merchant, scope.environment, &scope.key)
                    });
                }
                let in_progress = response.error_code() == Some(ErrorCode::PaymentInProgress);
                let awaited = route.awaited && !route.edge_500;
                note_first(
                    &mut self.card_retry_in_progress,
                    awaited && in_progress,
                    || *id,
                );
            }
            What::OrderStored {
                db,
                order_no,
                was,
                stored,
            } => self.on_order_stored(*db, order_no, was.as_ref(), stored),
            _ => {}
        }
    }

    /// The scope of a create that `response` rejects with 400, 401, 403 or 422, if a
    /// client's order was created under its key: that key was not used up (REJECT-01).
    fn frees_create_key<'a>(
        &self,
        response: &ApiResponse,
        route: &'a Route,
    ) -> Option<&'a ScopeKey> {
        let rejected = response
            .error_code()
            .is_some_and(|c| matches!(c.http_status(), 400 | 401 | 403 | 422));
        let scope = route.scope.as_ref()?;
        let create = scope.method == Method::Post && scope.path == "/v1/payments";
        let known = self
            .create_keys
            .iter()
            .any(|((m, e, _), k)| (*m, *e, k) == (scope.merchant, scope.environment, &scope.key));
        (rejected && create && known).then_some(scope)
    }

    /// A client sends business submission `s` under `key` (`None`: keyless, which is no
    /// key of a submission already sent under one).
    fn on_submission_key(&mut self, s: &SubmissionRef, key: Option<&Text>) {
        let id = (s.db, s.order.clone(), s.seq);
        let first = self.submission_keys.get(&id);
        let second = first.is_some_and(|first| key.is_none_or(|key| first != key));
        note_first(&mut self.second_key, second, || s.clone());
        if let (None, Some(key)) = (first, key) {
            self.submission_keys.insert(id, key.clone());
        }
    }

    /// WEBHOOK-02: versions are per object; an order re-pointed to another Payment
    /// starts over.
    fn on_order_stored(
        &mut self,
        db: u8,
        order_no: &Text,
        was: Option<&StoredOrder>,
        stored: &StoredOrder,
    ) {
        let regressed = was.is_some_and(|was| went_back(was, stored));
        note_first(&mut self.version_regressed, regressed, || {
            (db, order_no.clone())
        });
    }

    /// GEN-05, UNKNOWN-03, UNKNOWN-04 for a request a client sends.
    fn on_client_send(&mut self, request: &ApiRequest, owner: Owner) {
        let Some((merchant, environment)) = owner else {
            return;
        };
        let Some(scope) = ScopeKey::of(owner, request) else {
            return;
        };
        let key = scope.key.clone();
        let (method, path) = (scope.method, scope.path.clone());
        let first = first_or_insert(
            &mut self.key_endpoints,
            (merchant, environment, key.clone()),
            || (method, path.clone()),
        );
        let moved = first.0 != method || first.1 != path;
        note_first(&mut self.key_on_two_endpoints, moved, || {
            let (key, first, then) = (key.clone(), first.clone(), (method, path));
            Box::new(KeyOnTwoEndpoints { key, first, then })
        });
        let params = safety_parameters(&request.endpoint);
        let first = first_or_insert(&mut self.client_params, scope.clone(), || params.clone());
        note_first(&mut self.params_changed_under_key, *first != params, || {
            let (first, then) = (first.clone(), params);
            Box::new(ParamsChanged { scope, first, then })
        });
        if let Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } = &request.endpoint
        {
            if let Some(order) = &b.merchant_order_no {
                let first = first_or_insert(
                    &mut self.create_keys,
                    (merchant, environment, order.clone()),
                    || key.clone(),
                );
                note_first(&mut self.order_rekeyed, *first != key, || {
                    let (order, first, then) = (order.clone(), first.clone(), key);
                    Box::new(OrderRekeyed { order, first, then })
                });
            }
        }
    }
}
