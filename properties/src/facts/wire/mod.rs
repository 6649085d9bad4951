//! The wire family: what any source that sees HTTP exchanges can witness (a recorded
//! log, a proxy capture, the sandbox, the simulated world), folded from the wire events
//! alone (`Sent`, `Delivered`, `Lost`, `TimedOut`).
//!
//! Not a field of [`super::Facts`]: the checker hashes those, and per-exchange history
//! would multiply its states. [`WireFacts`] is folded beside them by the judges of
//! recorded streams (`judge`, `check-log`, the sandbox's verdict).
//!
//! An exchange is *known* once its answer reached the client with a status below 500
//! (or the one 5xx that means "not accepted", 503 temporarily_unavailable, RATE-05);
//! a request with no answer (reset, lost, timed out) or another 5xx is an *unknown outcome*
//! (UNKNOWN-01, UNKNOWN-02; Jepsen's `:info`), never judged as executed or not. The
//! scope of a request is its API key's merchant and environment, its method, path and
//! `Idempotency-Key` (SCOPE-01); a request whose key names no known owner is counted in
//! [`WireFacts::ownerless`] and judged by nothing that needs a scope.
//!
//! Memory: the open exchanges (bounded by the concurrency of the source), and, per distinct
//! idempotency scope, key, order number, payment and object queried in the last 10 s, one
//! small record (packed, [`record`]; scopes, keys and numbers by their fingerprint, [`fp`]);
//! the first witness of each pattern only. Nothing grows with the number of requests that
//! repeat what is held.
//!
//! The facts record; the properties' wire level (`properties/src/wire/mod.rs`) decides.
//! Where a contract number decides, the facts keep the extreme instead of a witness: the two
//! consecutive queries of one object sent closest together (SCHED-02's spacing), the
//! replay of each pattern sent soonest after its scope's execution (RET-01's window).
//! How long a scope is kept at all is the judge's to say ([`WireFacts::keeping`]).
//! Answers are read at the contract's level ([`ObservedAnswer`]: any platform's ids,
//! partial bodies, refusals the contract does not name), the model's own as anyone's.

mod attempts;
mod by_id;
mod patterns;
mod record;
mod refusals;
mod renumbered;
mod retained;
mod schedule;
mod scopes;
mod seen;
mod shown;
mod unresolved;

pub use retained::Retained;
pub use seen::{Answer, Breach, Delivered, Seen, WireParams, Witness};

use super::money::safety_parameters;
use super::query_object::QueryObject;
use payhub_model::event::{Message, Owner, ScopeKey, What};
use payhub_model::observed::{IdKind, Interner, ObservedAnswer};
use payhub_model::{
    ApiKeyId, ApiRequest, Card, Endpoint, Environment, ErrorCode, Json, MerchantId, Method, Millis,
    PaymentId, RefundId, RequestId, Text,
};
use std::collections::{BTreeMap, BTreeSet, btree_map::Entry};
use std::sync::Arc;

/// What reached the client: the answer as the contract sees it, or only its status and
/// Retry-After (no body recorded, or none that reads).
#[derive(Clone, Copy)]
enum Reply<'a> {
    Full(&'a ObservedAnswer),
    Status(u16, Option<u32>),
}

impl Reply<'_> {
    /// Whether the client knows the outcome: any answer below 500, and the one 5xx that
    /// means "not accepted", 503 temporarily_unavailable (RATE-05: "treat other 5xx as
    /// result unknown"); a bare 503 without that body is unknown too.
    fn known(&self) -> bool {
        match self {
            Reply::Full(r) => r.status < 500 || r.code == Some(ErrorCode::TemporarilyUnavailable),
            Reply::Status(s, _) => *s < 500,
        }
    }
}

type Owned<T> = (MerchantId, Environment, T);

/// One exchange's record, shared by every map that holds it (one allocation per
/// exchange seen, not one per map), packed ([`record`]).
type Rec = Arc<record::Record>;

/// Closes between two prunings of the windowed records.
const PRUNE_EVERY: u64 = 4096;

/// The wire family. See the module doc.
#[derive(Clone, Debug, Default)]
pub struct WireFacts {
    owners: BTreeMap<ApiKeyId, (MerchantId, Environment)>,
    /// Sends and closes folded so far: each one's place in the fold.
    seq: u64,
    /// Whether the fold's order tells apart events that share a millisecond (an event
    /// stream written as it happened); not for a log whose entries are ordered by their
    /// stamps alone ([`WireFacts::ties_unordered`]).
    ties_unordered: bool,
    open: BTreeMap<RequestId, (Rec, Owner, Endpoint)>,
    /// Maps by idempotency scope, key or number are keyed by its fingerprint ([`fp`]):
    /// what each scope showed ([`scopes`]), each key's first request.
    scopes: BTreeMap<u64, scopes::Scope>,
    key_endpoints: BTreeMap<u64, Rec>,
    order_payments: BTreeMap<u64, (PaymentId, Rec)>,
    /// The creates whose outcome their client does not know, by order number and purchase.
    unknown_orders: renumbered::Unresolved<Purchase, Rec>,
    /// Each Payment's records ([`shown::PaymentShown`]).
    payments: by_id::ById<shown::PaymentShown>,
    /// UNIQ-04: the Refund each refund number was first shown with.
    refund_numbers: BTreeMap<Owned<Text>, (RefundId, Rec)>,
    /// SCHED-02: the last query of each object ([`super::query_object`]; 10 s at most,
    /// [`WireFacts::prune`]), of each number no answer tied yet, and the id answers tied
    /// each number to, by their fingerprint with their owner ([`query_key`]).
    last_query: BTreeMap<u64, Rec>,
    last_by_number: BTreeMap<u64, Rec>,
    query_aliases: BTreeMap<u64, u64>,
    /// CARD-03, ATTEMPT-02: the confirms of each Payment.
    confirms: BTreeMap<PaymentId, attempts::Confirms>,
    /// Per card, the first Payment shown with a newer attempt after one charged on it:
    /// the exchange that started that attempt, the one that showed the newer.
    pub renewed_attempts: BTreeMap<Card, Witness>,
    /// UNKNOWN-03, S8, S11 ([`unresolved`]): confirm keys (those with no 2xx answer yet
    /// unbound), unresolved and failed Payments, unresolved refund requests.
    confirm_keys: BTreeMap<Owned<PaymentId>, Text>,
    confirm_unbound: BTreeSet<Owned<PaymentId>>,
    unresolved_payments: BTreeMap<Owned<PaymentId>, Rec>,
    failed_payments: BTreeMap<Owned<PaymentId>, Rec>,
    /// SCHED-01 ([`schedule`]): the Payments whose query schedule started (a 202, a
    /// timeout or a 5xx) and no answer or webhook has shown final since; each Payment a
    /// query answer or an acknowledged webhook showed final in its schedule, and which
    /// (put aside per request while new business for the Payment is in flight).
    scheduled: BTreeSet<Owned<PaymentId>>,
    final_shown: BTreeMap<Owned<PaymentId>, schedule::ShownFinal>,
    final_suspended: BTreeMap<RequestId, (Owned<PaymentId>, schedule::ShownFinal)>,
    unresolved_refunds: renumbered::Unresolved<unresolved::RefundOf, Rec>,
    refused_numbers: BTreeMap<Owned<Text>, Rec>,
    /// REFUND-03: per Payment, the refunds shown succeeded and their amounts.
    refunds_succeeded: BTreeMap<PaymentId, BTreeMap<RefundId, i64>>,
    /// ATTEMPT-05: the Payment sighting with the most attempts (the first such).
    pub most_attempts: Option<Box<(u32, Seen)>>,
    /// KEY-07: the printable ASCII key refused 400 about the `Idempotency-Key` with the
    /// fewest characters (the first such), and its exchange.
    pub shortest_refused_key: Option<Box<(usize, Seen)>>,
    /// KEY-07 gives "1–255 个字符" and no character set (A-KEY-LENGTH): a platform may
    /// refuse every key outside printable ASCII. The other key refused with the fewest
    /// UTF-16 code units, and whether the log shows such a key accepted (2xx): only
    /// then is its refusal a breach.
    pub shortest_refused_other_key: Option<Box<(usize, Seen)>>,
    pub other_key_accepted: bool,
    /// Copies the network made of a request: not the client's.
    copies: BTreeSet<RequestId>,
    /// Open requests whose body named fields the contract does not: their fingerprint.
    other_fields: BTreeMap<RequestId, u64>,
    /// The first witness of each pattern.
    pub witnesses: BTreeMap<Breach, Witness>,
    /// REPLAY-01/02, CONFLICT-01 against a scope's execution: per pattern, the replay
    /// sent soonest after the execution's answer (the first such: a later one replaces
    /// it only when sooner). RET-01's window is the property's to apply.
    pub soonest_replays: BTreeMap<Breach, Witness>,
    /// How long a scope, a key and its parameters are kept after their send (the judge
    /// sets RET-01's retention; by default nothing is forgotten).
    keep_for: Millis,
    /// SCHED-02: the two consecutive queries of one object, earlier first, sent closest
    /// together (the first such pair: a later one replaces it only when closer).
    pub closest_queries: Option<Box<[Seen; 2]>>,
    /// Exchanges closed: known, unknown.
    pub known: u64,
    pub unknown: u64,
    /// Requests whose API key names no known owner.
    pub ownerless: u64,
    /// Of those, the ones answered 401 (refused for authentication, AUTH: the platform
    /// looked no further): they belong to no scope and lack nothing.
    pub refused_auth: u64,
    /// The first [`LISTED`] of them, by exchange id.
    pub refused_auth_ids: Vec<RequestId>,
    /// The source's ids, interned per kind: a reader of foreign traffic binds them here,
    /// and witnesses show them as the source wrote them.
    pub ids: Interner,
}

/// Exchanges refused for authentication listed by id; beyond this many, only counted.
pub const LISTED: usize = 50;

fn order_no(endpoint: &Endpoint) -> Option<&Text> {
    match endpoint {
        Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } => b.merchant_order_no.as_ref(),
        _ => None,
    }
}

impl WireFacts {
    /// Facts whose owners are resolved by this table of API keys.
    pub fn new(owners: impl IntoIterator<Item = (ApiKeyId, (MerchantId, Environment))>) -> Self {
        WireFacts {
            owners: owners.into_iter().collect(),
            keep_for: Millis(u64::MAX),
            ..WireFacts::default()
        }
    }

    /// Facts of a source whose order within one millisecond is unknown (a HAR or an
    /// access log, ordered by their stamps): a request sent in the millisecond an answer
    /// came is not known to be sent after it.
    pub fn ties_unordered(mut self) -> Self {
        self.ties_unordered = true;
        self
    }

    /// Whether `later` was sent after `earlier`'s answer came: a later millisecond, or
    /// the same one later in the fold where the source keeps the order.
    fn after(&self, later: &Rec, earlier: &Rec) -> bool {
        later.sent > earlier.closed
            || (later.sent == earlier.closed
                && !self.ties_unordered
                && later.seqs().0 > earlier.seqs().1)
    }

    /// Requests whose key names no owner and that were not refused for authentication
    /// (still open, unanswered, or answered otherwise): the part of the source whose
    /// scope is unknown.
    pub fn unscoped(&self) -> u64 {
        self.ownerless.saturating_sub(self.refused_auth)
    }

    /// Exchanges sent and not closed yet.
    pub fn open(&self) -> usize {
        self.open.len()
    }

    /// Resolves `key` to `owner` from now on (a log reader learns keys as it reads).
    pub fn own(&mut self, key: ApiKeyId, owner: (MerchantId, Environment)) {
        self.owners.insert(key, owner);
    }

    /// The request `id`, about to be sent, names body fields the contract does not (a
    /// platform's `description`), of this `fingerprint`: SAFE-01 lists the compared
    /// fields with an "etc." (A-SAFE-FIELDS), so its platform may compare them too.
    pub fn names_other_fields(&mut self, id: RequestId, fingerprint: u64) {
        self.other_fields.insert(id, fingerprint);
    }

    /// Folds one event (only the wire's are read).
    pub fn observe(&mut self, at: Millis, what: &What) {
        match what {
            What::Sent { id, request, .. } => self.sent(at, *id, request),
            What::Duplicated {
                copy: Some(copy), ..
            } => {
                self.copies.insert(*copy);
            }
            // The wire's view: an answer the client no longer reads still closes the
            // exchange with that answer.
            What::Delivered { id, response, .. } | What::DeliveredUnread { id, response, .. } => {
                let answer = ObservedAnswer::of_response(response);
                self.closed(at, *id, Some(Reply::Full(&answer)));
            }
            What::DeliveredStatus {
                id,
                status,
                retry_after_s,
                ..
            } => self.closed(at, *id, Some(Reply::Status(*status, *retry_after_s))),
            What::Lost {
                message: Message::Response { id, .. } | Message::Request { id, .. },
            } => self.closed(at, *id, None),
            What::TimedOut { id, .. } => self.gave_up(at, *id),
            What::WebhookDelivered { event, .. } => self.webhook_delivered(at, event),
            _ => {}
        }
    }

    /// Closes exchange `id` with an answer read at the contract's level (a recorded log's:
    /// `check-log` reads its bodies through [`ObservedAnswer::read`]).
    pub fn answered(&mut self, at: Millis, id: RequestId, answer: &ObservedAnswer) {
        self.closed(at, id, Some(Reply::Full(answer)));
    }

    fn sent(&mut self, at: Millis, id: RequestId, request: &ApiRequest) {
        let owner = self.owners.get(&request.api_key).copied();
        if owner.is_none() {
            self.ownerless += 1;
        }
        self.seq += 1;
        let seen = Arc::new(record::Record::of(
            &Seen {
                id,
                sent: at,
                closed: at,
                method: request.endpoint.method(),
                path: self.ids.path(&request.endpoint),
                key: request.idempotency_key.clone(),
                params: WireParams::of(safety_parameters(&request.endpoint), &self.ids),
                answer: None,
                open: true,
            },
            (self.seq, self.seq),
        ));
        if let Some(scope) = ScopeKey::of(owner, request) {
            self.expire(&scope, at);
            self.on_keyed_send(&seen, &scope);
        }
        if let Some((m, e)) = owner {
            self.on_owned_send(&seen, (m, e), &request.endpoint);
            self.judge_while_unresolved(&seen, (m, e), &request.endpoint);
            self.judge_query_after_final(&seen, (m, e), &request.endpoint);
        }
        self.confirm_sent(&request.endpoint);
        self.open
            .insert(id, (seen, owner, request.endpoint.clone()));
    }

    /// Keeps `[first, then]` as the pattern's soonest replay if none held is as soon
    /// after its execution's answer.
    fn note_soonest(&mut self, breach: Breach, first: &Rec, then: &Rec) {
        let gap = then.sent.since(first.closed);
        let sooner = self
            .soonest_replays
            .get(&breach)
            .is_none_or(|w| match &w.entries[..] {
                [a, b] => gap < b.sent.since(a.closed),
                _ => true,
            });
        if sooner {
            let entries = vec![first.seen(), then.seen()];
            self.soonest_replays
                .insert(breach, Witness::of(breach, entries));
        }
    }

    fn note(&mut self, breach: Breach, entries: Vec<Rec>) {
        let entries = || entries.iter().map(|e| e.seen()).collect();
        self.witnesses
            .entry(breach)
            .or_insert_with(|| Witness::of(breach, entries()));
    }

    /// GEN-05 (one endpoint per key, the parameters bound to it) and RATE-03.
    fn on_keyed_send(&mut self, seen: &Rec, scope: &ScopeKey) {
        let k = fp(&(scope.merchant, scope.environment, &scope.key));
        let endpoint = |first: &Rec| first.method != seen.method || !first.same_path(seen);
        if let Some(first) = first_differing(&mut self.key_endpoints, k, seen.clone(), endpoint) {
            self.note(Breach::KeyOnTwoEndpoints, vec![first, seen.clone()]);
        }
        let params = |first: &Rec| {
            !first.same_params(seen) && first.params().compare(&seen.params()) == Some(false)
        };
        let held = self.scopes.entry(fp(scope)).or_default();
        let first = match &held.first {
            Some(first) => params(first).then(|| first.clone()),
            None => held.first.replace(seen.clone()),
        };
        let limited = held.rare.as_mut().and_then(|r| r.retry_after.take());
        if let Some(first) = first {
            self.note(Breach::ParamsChangedUnderKey, vec![first, seen.clone()]);
        }
        if let Some((until, limited)) = limited {
            if seen.sent < until {
                self.note(Breach::RetryAfterIgnored, vec![limited, seen.clone()]);
            }
        }
    }

    /// UNKNOWN-03 (a new key or order number after an unknown result) and SCHED-02.
    fn on_owned_send(&mut self, seen: &Rec, (m, e): (MerchantId, Environment), ep: &Endpoint) {
        if let Some(order) = order_no(ep) {
            if let Some((_, u)) = self.unknown_orders.get((m, e), order) {
                if u.key() != seen.key() {
                    let u = u.clone();
                    self.note(Breach::NewKeyAfterUnknown, vec![u, seen.clone()]);
                }
            }
            let purchase = purchase(&seen.params());
            let renumbered = self
                .unknown_orders
                .same_under_other((m, e), &purchase, order);
            if let Some(u) = renumbered.cloned() {
                self.note(Breach::NewOrderNoAfterUnknown, vec![u, seen.clone()]);
            }
        }
        if let Some(object) = QueryObject::named_by(ep) {
            let k = query_key((m, e), &object);
            let id = self.query_aliases.get(&k).copied();
            let [mut held, by_number] = [&mut self.last_query, &mut self.last_by_number];
            if id.is_none() && object.is_number() {
                held = by_number;
            }
            if let Some(last) = held.insert(id.unwrap_or(k), seen.clone()) {
                self.note_queries(&last, seen);
            }
        }
    }

    fn closed(&mut self, at: Millis, id: RequestId, reply: Option<Reply<'_>>) {
        if self.copies.remove(&id) {
            return;
        }
        let Some((sent, owner, endpoint)) = self.open.remove(&id) else {
            return;
        };
        let status = match reply {
            Some(Reply::Full(r)) => Some(r.status),
            Some(Reply::Status(s, _)) => Some(s),
            None => None,
        };
        if owner.is_none() && status == Some(401) {
            self.refused_auth += 1;
            if self.refused_auth_ids.len() < LISTED {
                self.refused_auth_ids.push(id);
            }
        }
        self.confirm_closed(at, id, &endpoint);
        self.business_closed(id, owner, &endpoint, reply);
        self.seq += 1;
        if (self.known + self.unknown) % PRUNE_EVERY == 0 {
            self.prune(at);
        }
        let answer = reply.map(|r| match r {
            Reply::Full(r) => Answer::of(r),
            Reply::Status(status, retry_after_s) => Answer::status_only(status, retry_after_s),
        });
        let seen = Arc::new(sent.closed(at, self.seq, answer.as_ref()));
        self.fill_witnesses(&seen);
        let scope = owner.and_then(|o| self.scope_of(&seen, o));
        if let Some(scope) = &scope {
            let read = match reply.filter(Reply::known) {
                Some(Reply::Full(r)) => Some(r),
                _ => None,
            };
            self.judge_refusals(scope, &seen, read);
        }
        if let Some((m, e)) = owner {
            self.close_last_query(&seen, (m, e), &endpoint);
            self.close_first_sightings(&seen, scope.as_ref());
        }
        match reply.filter(Reply::known) {
            None => {
                self.unknown += 1;
                self.on_unknown(seen, owner, &endpoint);
            }
            Some(Reply::Full(r)) => {
                self.known += 1;
                self.on_known(seen, owner, scope.as_ref(), r, &endpoint);
            }
            Some(Reply::Status(..)) => {
                self.known += 1;
                self.note_retry_after(&seen, scope.as_ref());
            }
        }
        self.other_fields.remove(&id);
    }

    /// A witness taken at an exchange's send shows its answer once it has one.
    fn fill_witnesses(&mut self, closed: &Rec) {
        let pair = self.closest_queries.iter_mut().flat_map(|p| p.iter_mut());
        let entries = self
            .witnesses
            .values_mut()
            .flat_map(|w| w.entries.iter_mut());
        for e in entries.chain(pair).filter(|e| e.open && e.id == closed.id) {
            *e = closed.seen();
        }
    }

    /// The records taken at an exchange's send (its key's first endpoint, its scope's
    /// first parameters) show its answer from its close on: a witness noted later with
    /// them shows what came back, not "no answer recorded".
    fn close_first_sightings(&mut self, seen: &Rec, scope: Option<&ScopeKey>) {
        let Some(scope) = scope else {
            return;
        };
        let k = fp(&(scope.merchant, scope.environment, &scope.key));
        let firsts = [
            self.key_endpoints.get_mut(&k),
            (self.scopes.get_mut(&fp(scope))).and_then(|s| s.first.as_mut()),
        ];
        for first in firsts.into_iter().flatten().filter(|f| f.id == seen.id) {
            *first = seen.clone();
        }
    }

    /// RATE-03: a 429 with Retry-After holds its scope until then ("Wait Retry-After
    /// seconds, then retry with the original idempotency key"; a 503 says "retry later").
    fn note_retry_after(&mut self, seen: &Rec, scope: Option<&ScopeKey>) {
        let (Some(scope), Some(a)) = (scope, seen.answer()) else {
            return;
        };
        if let (Some(s), 429) = (a.retry_after_s, a.status) {
            let until = seen.closed.after(Millis::secs(u64::from(s)));
            let held = self.scopes.entry(fp(scope)).or_default();
            held.rare_mut().retry_after = Some((until, seen.clone()));
        }
    }

    fn on_unknown(&mut self, seen: Rec, owner: Owner, endpoint: &Endpoint) {
        if let Some((m, e)) = owner {
            self.note_unresolved(&seen, (m, e), endpoint);
            self.schedule_started((m, e), endpoint, None);
        }
        let (Some((m, e)), Some(order)) = (owner, order_no(endpoint)) else {
            return;
        };
        let purchase = purchase(&seen.params());
        self.unknown_orders
            .hold_first((m, e), order.clone(), purchase, || seen);
    }

    fn on_known(
        &mut self,
        seen: Rec,
        owner: Owner,
        scope: Option<&ScopeKey>,
        r: &ObservedAnswer,
        endpoint: &Endpoint,
    ) {
        self.judge_related(&seen, r);
        self.judge_lookup(&seen, r, endpoint);
        self.note_refused_key(&seen, r);
        self.judge_key_needed(&seen, r, endpoint);
        let payment = r.first(IdKind::Payment);
        if let Some(p) = payment {
            self.judge_version(&seen, p);
            self.note_attempts(&seen, p, r, endpoint);
            let canceled = p.status.as_deref() == Some("canceled");
            if r.status == 202 && canceled && matches!(endpoint, Endpoint::CancelPayment { .. }) {
                self.note(Breach::Cancel202ShowsCanceled, vec![seen.clone()]);
            }
        }
        let Some((m, e)) = owner else { return };
        self.judge_related_order(&seen, (m, e), r, endpoint);
        self.judge_no_record(&seen, (m, e), r, endpoint);
        if let Some(p) = payment {
            self.judge_payment_sighting(&seen, (m, e), p);
        }
        self.judge_refunds(&seen, r, endpoint);
        self.resolve_shown(&seen, (m, e), r, endpoint);
        if r.status == 202 {
            self.schedule_started((m, e), endpoint, payment.map(|p| PaymentId(p.id)));
        }
        self.note_final_by_query(&seen, (m, e), r, endpoint);
        self.tie_numbers((m, e), r);
        // A partial body without its order number: a create's answer shows the order
        // the request named.
        let order =
            payment.and_then(|p| p.number.clone().or_else(|| created(&seen, "/v1/payments")));
        if let (Some(p), Some(order)) = (payment, order) {
            if r.status == 202 && matches!(endpoint, Endpoint::CreatePayment { .. }) {
                // UNKNOWN-03: a 202 names the Payment, not its result ("with a timeout,
                // a 5xx or a 202, the charge may already have been made").
                let purchase = purchase(&seen.params());
                let held = seen.clone();
                self.unknown_orders
                    .hold_first((m, e), order.clone(), purchase, || held);
            } else {
                // The client learned this order's Payment: its result is known again.
                if self.unknown_orders.get((m, e), &order).is_some() {
                    self.scheduled.insert((m, e, PaymentId(p.id)));
                }
                self.unknown_orders.forget((m, e), &order);
            }
            self.judge_order(&seen, (m, e, order), PaymentId(p.id));
        }
        // CKO-01: a checkout session names its order's one Payment ("the platform
        // generates a new checkout session for the same Payment").
        let session = r.first(IdKind::Session).and_then(|s| s.payment);
        if let (Some(p), Some(order)) = (session, created(&seen, "/v1/checkout/sessions")) {
            self.judge_order(&seen, (m, e, order), PaymentId(p));
        }
        // UNIQ-04, RET-03: one Refund per (merchant, environment, refund number).
        if let Some(x) = r.first(IdKind::Refund) {
            let number = x.number.clone().or_else(|| created(&seen, "/v1/refunds"));
            if let Some(k) = number.map(|number| (m, e, number)) {
                let id = RefundId(x.id);
                let other = |(first, _): &(RefundId, Rec)| *first != id;
                let first = first_differing(&mut self.refund_numbers, k, (id, seen.clone()), other);
                if let Some((_, first)) = first {
                    self.note(Breach::TwoRefundsForRefundNo, vec![first, seen.clone()]);
                }
            }
        }
        self.note_retry_after(&seen, scope);
        if let Some(scope) = scope {
            // Confirm and cancel compare nothing but their path (A-SAFE-FIELDS): every
            // request of their scope has the same parameters.
            let path_only = matches!(
                endpoint,
                Endpoint::ConfirmPayment { .. } | Endpoint::CancelPayment { .. }
            );
            if seen.method == Method::Post && (path_only || seen.has_params()) {
                self.judge_replay(scope, seen, r, path_only);
            }
        }
    }

    fn scope_of(&self, seen: &Rec, (m, e): (MerchantId, Environment)) -> Option<ScopeKey> {
        Some(ScopeKey {
            merchant: m,
            environment: e,
            method: seen.method,
            path: seen.path(),
            key: Text::from(seen.key()?),
        })
    }
}

/// The fingerprint of a scope, a key or a number with its owner: 8 bytes where the text
/// would take 72 (stable within a run; never printed, never iterated in order).
fn fp<T: std::hash::Hash>(x: &T) -> u64 {
    crate::engine::fingerprint(x)
}

/// The fingerprint of an object of SCHED-02 ([`QueryObject`]) with its owner.
fn query_key((m, e): (MerchantId, Environment), object: &QueryObject) -> u64 {
    fp(&(m, e, object))
}

/// The record `map` holds under `k` if `differs` from the one being seen; `seen` becomes
/// the record if none is held (the first stays).
fn first_differing<K: Ord, V: Clone>(
    map: &mut BTreeMap<K, V>,
    k: K,
    seen: V,
    differs: impl FnOnce(&V) -> bool,
) -> Option<V> {
    match map.entry(k) {
        Entry::Occupied(held) => differs(held.get()).then(|| held.get().clone()),
        Entry::Vacant(slot) => {
            slot.insert(seen);
            None
        }
    }
}

type Purchase = (Option<i64>, Option<Text>);

/// What makes two creates the same purchase while one is unknown: amount and currency
/// (the log cannot tell a renumbered order from a new one of the same amount; see
/// docs/check-log.md).
fn purchase(params: &WireParams) -> Purchase {
    match params {
        WireParams::Order {
            amount, currency, ..
        } => (*amount, currency.clone()),
        _ => (None, None),
    }
}

/// The number a create at `path` named: a Payment's or a checkout session's order
/// number, a Refund's refund number.
fn created(seen: &Rec, path: &str) -> Option<Text> {
    if !seen.path_is(path) {
        return None;
    }
    match seen.params() {
        WireParams::Order {
            merchant_order_no: n,
            ..
        }
        | WireParams::Refund {
            merchant_refund_no: n,
            ..
        } => n,
        _ => None,
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_client;
#[cfg(test)]
mod tests_scopes;
