//! A hand-driven test bench: the test plays the network and decides for the upstream.
//!
//! It composes one [`Platform`] and one [`Acquirer`] with no network faults of its own:
//! a request is delivered at once, the platform's upstream calls queue until the test
//! decides them ([`Bench::upstream`]) or loses them ([`Bench::drop_upstream`]), and
//! [`Bench::advance`] moves simulated time, firing every platform timer on the way.
//! Request builders in [`req`] read like the contract's request lines.
//!
//! Three network faults on a merchant request are scripted by hand, because the contract's
//! scenarios need them: the answer is lost on its way back ([`Bench::send_response_lost`],
//! S1, S7, S11), a gateway between merchant and platform answers `500 internal_error`
//! after the platform has accepted the request ([`Bench::send_answered_500`], S2), or
//! before it ever reaches the platform ([`Bench::gateway_500`], S2's "executes once").
//!
//! The simulated world (crate `payhub-sim`) does all this with faults and choices; the
//! bench exists so that unit tests can walk through S1–S13 at the request level.

use crate::acquirer::LedgerEntry;
use crate::acquirer::{Acquirer, AcquirerDecision, UpstreamCall, UpstreamReply};
use crate::api::{ApiError, ApiResponse, ErrorCode};
use crate::api_keys::default_api_keys;
use crate::branch::Branch;
use crate::ids::{AttemptId, Card, EventId, PaymentId, RefundId, RequestId};
use crate::params::PlatformParams;
use crate::platform::{Control, Platform, PlatformInput, PlatformOutput, StepError, WebhookEvent};
use crate::rules::Rule;
use crate::time::Millis;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// What the network does to the platform's answer to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFault {
    /// The answer never reaches the merchant (a client timeout: S1, S7, S11).
    Lost,
    /// A gateway answers `500 internal_error` in its place (S2: "may already have been
    /// accepted").
    Replaced500,
}

/// Platform + acquirer, driven by hand. Serializable, so that two benches driven alike
/// can be compared byte for byte.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    pub now: Millis,
    pub platform: Platform,
    pub acquirer: Acquirer,
    /// Upstream calls sent and not yet decided, oldest first.
    pub upstream_queue: VecDeque<UpstreamCall>,
    /// Every response, by request, with the rule that decided it.
    pub responses: BTreeMap<RequestId, (ApiResponse, Rule)>,
    /// Every webhook emitted, in order.
    pub webhooks: Vec<WebhookEvent>,
    /// Every upstream call ever sent, in order (including dropped ones).
    pub upstream_sent: Vec<UpstreamCall>,
    /// Every platform output, in the order the platform produced it.
    pub trace: Vec<PlatformOutput>,
    /// Requests whose answer the network loses or replaces.
    pub faults: BTreeMap<RequestId, ResponseFault>,
    /// The platform's own answers that never reached the merchant, by request.
    pub undelivered: BTreeMap<RequestId, (ApiResponse, Rule)>,
    next_request: u32,
}

impl Default for Bench {
    fn default() -> Self {
        Bench::new(PlatformParams::default())
    }
}

impl Bench {
    pub fn new(params: PlatformParams) -> Bench {
        Bench {
            now: Millis::ZERO,
            platform: Platform::new(params, default_api_keys()),
            acquirer: Acquirer::new(),
            upstream_queue: VecDeque::new(),
            responses: BTreeMap::new(),
            webhooks: Vec::new(),
            upstream_sent: Vec::new(),
            trace: Vec::new(),
            faults: BTreeMap::new(),
            undelivered: BTreeMap::new(),
            next_request: 0,
        }
    }

    /// Delivers a request now. Panics if it reaches a branch point: use [`Bench::send_with`].
    pub fn send(&mut self, request: crate::api::ApiRequest) -> RequestId {
        self.try_send(request, None)
            .unwrap_or_else(|e| panic!("send: {e}"))
    }

    /// Delivers a request now, taking `branch` if it reaches a branch point.
    pub fn send_with(&mut self, request: crate::api::ApiRequest, branch: Branch) -> RequestId {
        self.try_send(request, Some(branch))
            .unwrap_or_else(|e| panic!("send_with: {e}"))
    }

    /// Delivers a request now; the platform's refusal comes back unchanged.
    pub fn try_send(
        &mut self,
        request: crate::api::ApiRequest,
        branch: Option<Branch>,
    ) -> Result<RequestId, StepError> {
        self.try_send_faulty(request, branch, None)
    }

    /// Delivers a request now; its answer, whenever the platform gives it, is lost on the
    /// way back: [`Bench::response`] stays `None` and the answer is kept in
    /// [`Bench::undelivered`]. This is a client timeout.
    pub fn send_response_lost(&mut self, request: crate::api::ApiRequest) -> RequestId {
        self.try_send_faulty(request, None, Some(ResponseFault::Lost))
            .unwrap_or_else(|e| panic!("send_response_lost: {e}"))
    }

    /// Delivers a request now; the merchant at once sees `500 internal_error` from a
    /// gateway instead of the platform's answer, which goes to [`Bench::undelivered`].
    pub fn send_answered_500(&mut self, request: crate::api::ApiRequest) -> RequestId {
        let id = self
            .try_send_faulty(request, None, Some(ResponseFault::Replaced500))
            .unwrap_or_else(|e| panic!("send_answered_500: {e}"));
        self.responses
            .insert(id, (internal_error(), Rule::FiveXxMayHaveExecuted));
        id
    }

    /// A gateway answers `500 internal_error` and the request never reaches the platform.
    pub fn gateway_500(&mut self, _request: crate::api::ApiRequest) -> RequestId {
        self.next_request += 1;
        let id = RequestId(self.next_request);
        self.responses
            .insert(id, (internal_error(), Rule::FiveXxMayHaveExecuted));
        id
    }

    fn try_send_faulty(
        &mut self,
        request: crate::api::ApiRequest,
        branch: Option<Branch>,
        fault: Option<ResponseFault>,
    ) -> Result<RequestId, StepError> {
        self.next_request += 1;
        let id = RequestId(self.next_request);
        if let Some(fault) = fault {
            self.faults.insert(id, fault);
        }
        let stepped = self.step(PlatformInput::Request {
            id,
            request,
            branch,
        });
        if stepped.is_err() {
            self.faults.remove(&id);
        }
        stepped.map(|()| id)
    }

    /// The response to `id`, if it has been answered.
    pub fn response(&self, id: RequestId) -> Option<&ApiResponse> {
        self.responses.get(&id).map(|(r, _)| r)
    }

    /// The response to `id`; panics if it is still unanswered.
    pub fn answered(&self, id: RequestId) -> &ApiResponse {
        self.response(id)
            .unwrap_or_else(|| panic!("{id} is unanswered"))
    }

    /// The rule that decided the response to `id`.
    pub fn rule_of(&self, id: RequestId) -> Option<Rule> {
        self.responses.get(&id).map(|(_, r)| *r)
    }

    /// Decides the oldest queued upstream call and delivers the acquirer's reply, if any.
    /// Returns the call. Panics when nothing is queued.
    pub fn upstream(&mut self, decision: AcquirerDecision) -> UpstreamCall {
        let call = self
            .upstream_queue
            .pop_front()
            .expect("no upstream call is queued");
        let mut replies = Vec::new();
        self.acquirer
            .handle_call(self.now, &call, decision, &mut replies);
        for reply in replies {
            self.deliver_upstream(reply);
        }
        call
    }

    /// The acquirer decides the oldest queued call, but its reply is lost.
    pub fn upstream_reply_lost(&mut self, decision: AcquirerDecision) -> UpstreamCall {
        let call = self
            .upstream_queue
            .pop_front()
            .expect("no upstream call is queued");
        let mut replies = Vec::new();
        self.acquirer
            .handle_call(self.now, &call, decision, &mut replies);
        call
    }

    /// Loses the oldest queued upstream call before the acquirer sees it.
    pub fn drop_upstream(&mut self) -> UpstreamCall {
        self.upstream_queue
            .pop_front()
            .expect("no upstream call is queued")
    }

    /// Delivers an acquirer reply to the platform.
    pub fn deliver_upstream(&mut self, reply: UpstreamReply) {
        self.step(PlatformInput::Upstream(reply))
            .expect("upstream replies never fail");
    }

    /// The payer completes (`true`) or fails authentication of a `requires_action` charge
    /// at the acquirer. The platform learns of it only by querying (RES-05).
    pub fn payer_authenticates(&mut self, attempt: AttemptId, authenticated: bool) {
        self.acquirer.handle_payer(self.now, attempt, authenticated);
    }

    /// The merchant acknowledges webhook event `event` (2xx): the platform stops
    /// re-delivering it (A-WEBHOOK-REDELIVERY).
    pub fn ack(&mut self, event: EventId) {
        self.step(PlatformInput::WebhookAcked(event))
            .expect("acks never fail");
    }

    /// Switches something in the environment.
    pub fn control(&mut self, control: Control) {
        self.step(PlatformInput::Control(control))
            .expect("controls never fail");
    }

    /// Moves time forward by `d`, firing every platform timer due on the way, in order.
    pub fn advance(&mut self, d: Millis) {
        let until = self.now.after(d);
        while let Some(at) = self.platform.next_timer() {
            if at > until {
                break;
            }
            self.now = self.now.max(at);
            self.step(PlatformInput::Timeout)
                .expect("timeouts never fail");
        }
        self.now = until;
    }

    fn step(&mut self, input: PlatformInput) -> Result<(), StepError> {
        let mut out = Vec::new();
        self.platform.step(self.now, input, &mut out)?;
        self.trace.extend(out.iter().cloned());
        for output in out {
            match output {
                PlatformOutput::Response { to, response, rule } => {
                    let previous = if self.faults.contains_key(&to) {
                        self.undelivered.insert(to, (response, rule))
                    } else {
                        self.responses.insert(to, (response, rule))
                    };
                    assert!(previous.is_none(), "{to} answered twice");
                }
                PlatformOutput::Upstream { call, .. } => {
                    self.upstream_sent.push(call.clone());
                    self.upstream_queue.push_back(call);
                }
                PlatformOutput::Webhook { event, .. } => self.webhooks.push(event),
            }
        }
        Ok(())
    }
}

/// What a gateway answers when it fails: `500 {"error":{"code":"internal_error","retryable":true}}`.
fn internal_error() -> ApiResponse {
    ApiResponse::error(ApiError::new(ErrorCode::InternalError))
}

/// Lookups only the tests make.
impl crate::acquirer::Ledger {
    /// Captures of a Payment.
    pub fn captures_of(&self, payment: PaymentId) -> impl Iterator<Item = &LedgerEntry> {
        self.entries
            .iter()
            .filter(move |e| matches!(e, LedgerEntry::Capture { payment: p, .. } if *p == payment))
    }

    /// Captures made on a card.
    pub fn captures_on(&self, card: Card) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, LedgerEntry::Capture { card: c, .. } if *c == card))
            .count()
    }

    /// Number of refunds paid out under one refund id.
    pub fn refunds_of(&self, refund: RefundId) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, LedgerEntry::Refund { refund: r, .. } if *r == refund))
            .count()
    }
}

impl ApiError {
    pub fn with_field(mut self, field: crate::api::Field) -> ApiError {
        self.field = Some(field);
        self
    }
}
