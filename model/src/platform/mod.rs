//! The PayHub platform as a sans-IO state machine.
//!
//! # Inputs, outputs, time
//! [`Platform::step`] takes one [`PlatformInput`] with the simulated time `now` and
//! pushes [`PlatformOutput`]s: responses to merchant requests, calls to the upstream
//! acquirer, and webhook events. [`Platform::next_timer`] says when the platform next
//! wants [`PlatformInput::Timeout`]; the driver jumps the clock there and steps again.
//!
//! Where the contract allows two behaviours a request needs a [`Branch`]:
//! [`Platform::branch_point`] tells, without changing anything, which point a request
//! would reach; `step` refuses such a request without its branch and changes nothing.
//!
//! # Order of checks for a request (each cites its rule where it is decided)
//! authentication (401/403) → rate limit (429, RATE-01, A-RATE-SCOPE) → route (404/405)
//! → Idempotency-Key header (400, KEY-07, A-KEY-LENGTH) → body (400/422) → object lookup
//! (404) → idempotency scope (conflict, replay, concurrent wait) → channel pause (503,
//! RATE-04, A-PAUSE-SCOPE) → business checks (order/refund number uniqueness, attempt
//! rules) → execution. Everything before "execution" leaves no record behind (REJECT-01,
//! A-409-NOBIND), except the S4 "existing object" branch (A-S4-BIND).
//!
//! Every output carries the [`Rule`] that decided it, so a trace can say why.
//!
//! # Variants
//! The bug zoo plants bugs without a copy of this code: admission and execution ask the
//! platform's [`Variant`] at each decision point a planted bug changes (`variant.rs`), and
//! call one seam where a planted bug does something the contract never does
//! (`mutant_hooks.rs`). [`Platform::new`] is the reference platform.

mod admission;
pub mod api_keys;
mod canonical;
mod execute;
mod mutant_hooks;
pub mod state;
mod variant;
mod written;

use crate::acquirer::{UpstreamCall, UpstreamReply};
use crate::api::{ApiRequest, ApiResponse, PaymentView, RefundView};
use crate::branch::{Branch, BranchPoint};
use crate::cow::{CowMap, CowSet, Journaled};
use crate::ids::{
    ApiKeyId, AttemptId, Environment, EventId, MerchantId, PaymentId, RefundId, RequestId,
    SessionId,
};
use crate::params::PlatformParams;
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;
use serde::Serialize;
use state::*;

pub use state::{ApiKeySpec, Fingerprint, IdempotencyRecord, RecordState, Route, Scope};
pub use variant::Variant;
pub use written::Written;

use mutant_hooks::Hook;

/// Something the environment switches (not a merchant request).
///
/// Serialized adjacently tagged (`{"control":"revoke_api_key","with":"ak_1"}`): an
/// internally tagged enum cannot hold a newtype of a string-like id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(tag = "control", content = "with", rename_all = "snake_case")]
pub enum Control {
    /// A new API key (rotation: issue the new one, then revoke the old; SCOPE-03).
    IssueApiKey(ApiKeySpec),
    /// Revoke an API key: it gets 401 from now on.
    RevokeApiKey(ApiKeyId),
    /// Rate-limit a merchant as a whole (429 for every key, RATE-01, RATE-02).
    SetRateLimited { merchant: MerchantId, on: bool },
    /// Pause or resume new transactions on the channel (503, RATE-04).
    SetChannelPaused { on: bool },
    /// Change the fee rate that new Payments snapshot (ATTEMPT-06, A-FEE-SNAPSHOT).
    SetFeeRate { bps: u32 },
}

/// One input to the platform. Adjacently tagged like [`Control`] (`WebhookAcked` holds an id).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "input", content = "with", rename_all = "snake_case")]
pub enum PlatformInput {
    /// A merchant request arrives as HTTP exchange `id`, with the branch to take if it
    /// reaches a point where the contract allows two behaviours.
    Request {
        id: RequestId,
        request: ApiRequest,
        branch: Option<Branch>,
    },
    /// The acquirer answers.
    Upstream(UpstreamReply),
    /// The merchant acknowledged a webhook event (2xx); it is not re-delivered.
    WebhookAcked(EventId),
    /// Fire every timer due at or before `now`.
    Timeout,
    /// The environment switches something.
    Control(Control),
}

/// The object a webhook event carries: a Payment or a refund. The page's settlement and
/// payout events (SETTLE-01, "依赖 settlement.* 事件") are outside the model.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum WebhookObject {
    Payment(PaymentView),
    Refund(RefundView),
}

impl WebhookObject {
    /// The object's `version` (WEBHOOK-02: the latest version prevails).
    pub fn version(&self) -> u32 {
        match self {
            WebhookObject::Payment(p) => p.version,
            WebhookObject::Refund(r) => r.version,
        }
    }
}

/// A webhook event: `payment.succeeded`, `refund.failed`, … with the object's snapshot.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
pub struct WebhookEvent {
    pub id: EventId,
    pub merchant: MerchantId,
    pub environment: Environment,
    /// `payment.<status>` or `refund.<status>`.
    pub kind: Text,
    pub object: WebhookObject,
    /// 0 for the first delivery, then 1, 2, … for re-deliveries (A-WEBHOOK-REDELIVERY).
    pub delivery: u8,
}

impl std::fmt::Display for WebhookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (id, status) = match &self.object {
            WebhookObject::Payment(p) => (p.id.to_string(), p.status.as_str()),
            WebhookObject::Refund(r) => (r.id.to_string(), r.status.as_str()),
        };
        write!(
            f,
            "webhook {} {} {{\"id\":\"{id}\",\"status\":\"{status}\",\"version\":{}}}",
            self.id,
            self.kind,
            self.object.version()
        )?;
        if self.delivery > 0 {
            write!(f, " (re-delivery {})", self.delivery)?;
        }
        Ok(())
    }
}

/// One output of the platform, with the rule that caused it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "output", rename_all = "snake_case")]
pub enum PlatformOutput {
    Response {
        to: RequestId,
        response: ApiResponse,
        rule: Rule,
    },
    Upstream {
        call: UpstreamCall,
        rule: Rule,
    },
    Webhook {
        event: WebhookEvent,
        rule: Rule,
    },
}

/// The outputs of one step, in the order they leave.
type Out = Vec<PlatformOutput>;

/// Misuse of the platform by its driver: nothing was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// The request reaches a branch point and no branch was given.
    #[error("request reaches branch point {0:?}: a branch is required")]
    BranchRequired(BranchPoint),
    /// The given branch belongs to another point.
    #[error("branch {} does not belong to point {point:?}", .given.as_str())]
    WrongBranch { point: BranchPoint, given: Branch },
    /// A request with this id is still unanswered.
    #[error("request id {0} is already in flight")]
    DuplicateRequestId(RequestId),
}

/// A platform timer. Closed set; ordered so that firing order is deterministic.
/// Adjacently tagged (`{"timer":"sync_wait","on":"req_1"}`): most variants hold an id
/// that serializes as a string, which an internally tagged enum cannot hold.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "timer", content = "on", rename_all = "snake_case")]
pub enum Timer {
    /// The executor's synchronous wait for the upstream ends (UPSTREAM-01): answer 202.
    SyncWait(RequestId),
    /// A concurrent same-key request stops waiting (CONC-03, A-WAIT-TIMEOUT).
    WaitTimeout(RequestId),
    /// Query the upstream about an unknown or unfinished attempt (RES-01, RES-03;
    /// A-VERIFY-INTERVAL, A-AUTO-WINDOW).
    Verify(AttemptId),
    /// Query the upstream about an unknown refund (REFUND-01, A-REFUND-ASYNC).
    VerifyRefund(RefundId),
    /// An idempotency record's retention ends (RET-01).
    Retention(Scope),
    /// A Payment reaches `expires_at` (EXPIRY-01).
    PaymentExpiry(PaymentId),
    /// Re-deliver an unacknowledged webhook event (A-WEBHOOK-REDELIVERY).
    WebhookRedeliver(EventId),
    /// A refund's review ends: it is sent upstream (A-REFUND-REVIEW).
    RefundReview(RefundId),
}

/// The last identifiers handed out (from `PlatformParams::ids_from`, 0 by default).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
struct Counters {
    payment: u32,
    attempt: u32,
    refund: u32,
    session: u32,
    event: u32,
}

/// A webhook event that may be re-delivered.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
struct UnackedWebhook {
    event: WebhookEvent,
}

/// A map whose keys are structs, serialized as a list of `[key, value]` pairs in key
/// order: JSON object keys must be strings, and the whole state must serialize (to
/// compare two runs byte for byte, and to show that no card data is kept, CARD-02).
fn as_pairs<K: Ord + Serialize, V: Serialize, S: serde::Serializer>(
    map: &CowMap<K, V>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(map.iter())
}

/// The platform's whole state. Ordered maps only; no card data (CARD-02).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Platform {
    /// Fixed for the platform's life; shared between states (cheap clone, cached hash).
    params: crate::cow::Shared<PlatformParams>,
    /// The reference, or a planted bug; fixed for the platform's life.
    #[serde(skip_serializing_if = "Variant::is_reference")]
    variant: Variant,
    api_keys: CowMap<ApiKeyId, ApiKeySpec>,
    rate_limited: CowSet<MerchantId>,
    channel_paused: bool,
    fee_rate_bps: u32,
    payments: Journaled<PaymentId, Payment>,
    attempts: Journaled<AttemptId, Attempt>,
    refunds: Journaled<RefundId, Refund>,
    sessions: CowMap<SessionId, Session>,
    /// (merchant, environment, merchant_order_no) → Payment (UNIQ-01).
    #[serde(serialize_with = "as_pairs")]
    order_nos: CowMap<BusinessKey, PaymentId>,
    /// (merchant, environment, merchant_refund_no) → Refund (UNIQ-04).
    #[serde(serialize_with = "as_pairs")]
    refund_nos: CowMap<BusinessKey, RefundId>,
    #[serde(serialize_with = "as_pairs")]
    records: CowMap<Scope, IdempotencyRecord>,
    /// Confirm scopes whose record's retention has passed (RET-01): a confirm under one
    /// that would start a new attempt is a branch point (A-CONFIRM-RETENTION).
    #[serde(skip_serializing_if = "CowSet::is_empty")]
    retired_confirms: CowSet<Scope>,
    pending: CowMap<RequestId, Pending>,
    unacked: CowMap<EventId, UnackedWebhook>,
    timers: crate::cow::Schedule<Timer>,
    next: Counters,
    /// Cards kept after their upstream call, only under a variant that charges again
    /// later (`mutant_hooks.rs`; breaks CARD-02). Always empty for the reference platform.
    #[serde(skip_serializing_if = "CowMap::is_empty")]
    kept_cards: CowMap<AttemptId, crate::ids::Card>,
}

impl Platform {
    /// The reference platform with these parameters and API keys.
    pub fn new(params: PlatformParams, api_keys: impl IntoIterator<Item = ApiKeySpec>) -> Self {
        Platform::with_variant(params, api_keys, Variant::REFERENCE)
    }

    /// The platform of `variant` (the reference, or a planted bug) with these parameters
    /// and API keys.
    pub fn with_variant(
        params: PlatformParams,
        api_keys: impl IntoIterator<Item = ApiKeySpec>,
        variant: Variant,
    ) -> Self {
        let fee_rate_bps = params.fee_rate_bps;
        let n = params.ids_from;
        let next = Counters {
            payment: n,
            attempt: n,
            refund: n,
            session: n,
            event: n,
        };
        Platform {
            params: crate::cow::Shared::new(params),
            variant,
            api_keys: api_keys.into_iter().map(|k| (k.id, k)).collect(),
            fee_rate_bps,
            next,
            ..Platform::default()
        }
    }

    // ---- getters ------------------------------------------------------------------

    pub fn params(&self) -> &PlatformParams {
        &self.params
    }
    pub fn variant(&self) -> Variant {
        self.variant
    }
    pub fn payments(&self) -> &CowMap<PaymentId, Payment> {
        &self.payments
    }
    pub fn attempts(&self) -> &CowMap<AttemptId, Attempt> {
        &self.attempts
    }
    pub fn refunds(&self) -> &CowMap<RefundId, Refund> {
        &self.refunds
    }
    pub fn sessions(&self) -> &CowMap<SessionId, Session> {
        &self.sessions
    }
    pub fn records(&self) -> &CowMap<Scope, IdempotencyRecord> {
        &self.records
    }
    pub fn payment_view(&self, id: PaymentId) -> Option<PaymentView> {
        self.payments.get(&id).map(|p| p.view(id))
    }
    pub fn refund_view(&self, id: RefundId) -> Option<RefundView> {
        self.refunds.get(&id).map(|r| r.view(id))
    }
    /// The Payment of an order number, if one was ever created (UNIQ-01).
    pub fn payment_for_order(
        &self,
        merchant: MerchantId,
        environment: Environment,
        merchant_order_no: &str,
    ) -> Option<PaymentId> {
        self.order_nos
            .get(&BusinessKey::new(merchant, environment, merchant_order_no))
            .copied()
    }
    /// Requests not yet answered.
    pub fn unanswered(&self) -> impl Iterator<Item = RequestId> + '_ {
        self.pending.keys().copied()
    }
    pub fn channel_paused(&self) -> bool {
        self.channel_paused
    }
    pub fn is_rate_limited(&self, merchant: MerchantId) -> bool {
        self.rate_limited.contains(&merchant)
    }

    /// When the platform next wants [`PlatformInput::Timeout`].
    pub fn next_timer(&self) -> Option<Millis> {
        self.timers.first().map(|(at, _)| *at)
    }

    /// The timers, in firing order.
    pub fn timers(&self) -> impl DoubleEndedIterator<Item = &(Millis, Timer)> {
        self.timers.iter()
    }

    /// Which branch point `request` would reach if it arrived at `now`, without changing
    /// anything. The world offers both alternatives of that point as choices.
    pub fn branch_point(&self, now: Millis, request: &ApiRequest) -> Option<BranchPoint> {
        match self.admit(now, request) {
            admission::Admission::Fork(fork) => Some(fork.point()),
            _ => None,
        }
    }

    // ---- the step function ------------------------------------------------------------

    /// [`PlatformInput::Request`] by reference: the world hands over a request it keeps
    /// shared with the states before it, without cloning it. On error nothing changed.
    pub fn step_request(
        &mut self,
        now: Millis,
        id: RequestId,
        request: &ApiRequest,
        branch: Option<Branch>,
        out: &mut Vec<PlatformOutput>,
    ) -> Result<(), StepError> {
        self.begin_step();
        let start = out.len();
        let result = self.handle_request(now, id, request, branch, out);
        self.variant.finish_answers(&mut out[start..]);
        result
    }

    /// Handles one input at `now`, pushing outputs to `out`. On error nothing changed.
    pub fn step(
        &mut self,
        now: Millis,
        input: PlatformInput,
        out: &mut Vec<PlatformOutput>,
    ) -> Result<(), StepError> {
        self.begin_step();
        match input {
            PlatformInput::Request {
                id,
                request,
                branch,
            } => self.step_request(now, id, &request, branch, out),
            PlatformInput::Upstream(reply) => {
                let start = out.len();
                self.handle_upstream(now, reply, out);
                self.variant.finish_answers(&mut out[start..]);
                Ok(())
            }
            PlatformInput::WebhookAcked(event) => {
                self.unacked.remove(&event);
                self.cancel_timer(&Timer::WebhookRedeliver(event));
                Ok(())
            }
            PlatformInput::Timeout => {
                let start = out.len();
                self.handle_timeout(now, out);
                self.variant.finish_answers(&mut out[start..]);
                Ok(())
            }
            PlatformInput::Control(control) => {
                self.handle_control(control);
                Ok(())
            }
        }
    }

    fn handle_control(&mut self, control: Control) {
        match control {
            Control::IssueApiKey(spec) => {
                self.api_keys.insert(spec.id, spec);
            }
            Control::RevokeApiKey(id) => {
                self.api_keys.remove(&id);
            }
            Control::SetRateLimited { merchant, on } => {
                if on {
                    self.rate_limited.insert(merchant);
                } else {
                    self.rate_limited.remove(&merchant);
                }
            }
            Control::SetChannelPaused { on } => self.channel_paused = on,
            Control::SetFeeRate { bps } => self.fee_rate_bps = bps,
        }
    }

    fn handle_timeout(&mut self, now: Millis, out: &mut Out) {
        while let Some((at, _)) = self.timers.first() {
            if *at > now {
                break;
            }
            let (_, timer) = self.timers.pop_first().expect("checked non-empty");
            self.fire(now, timer, out);
        }
    }

    // ---- timers -------------------------------------------------------------------

    fn set_timer(&mut self, at: Millis, timer: Timer) {
        self.timers.insert(at, timer);
    }

    fn cancel_timer(&mut self, timer: &Timer) {
        self.timers.cancel(timer);
    }

    /// Sets `timer` for `at` unless it is set already (for any time).
    fn set_timer_unless_set(&mut self, at: Millis, timer: Timer) {
        if !self.timers.contains_timer(&timer) {
            self.timers.insert(at, timer);
        }
    }
}

#[cfg(test)]
mod tests;
