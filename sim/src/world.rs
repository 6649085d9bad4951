//! The world: platform, acquirer and merchants, with everything between them simulated.
//!
//! [`World::enabled`] lists the [`Choice`]s a state allows; [`World::apply`] applies one.
//! Both drivers use exactly these two functions: the seeded simulator picks a choice with
//! its RNG, the exhaustive checker tries every one. The world itself never draws a random
//! number or reads a clock.
//!
//! `apply` runs in a fixed order: take the message or event the choice names, step the
//! actor it goes to, route that actor's outputs into flight, record facts for the
//! properties, and (when recording) append trace events.

use crate::choice::Choice;
use crate::config::{Budget, WorldConfig};
use crate::facts::Facts;
use crate::network::{InFlight, MsgId, Node, Payload, UpstreamMsg};
use crate::trace::{Trace, What};
use payhub_model::{
    Acquirer, ApiError, ApiRequest, ApiResponse, Branch, ErrorCode, Millis, Platform,
    PlatformInput, PlatformOutput, RequestId, StepError,
};
use payhub_model::{CowMap, Shared};
use serde::Serialize;
use smallvec::SmallVec;

/// Why a choice could not be applied. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyError {
    /// The choice is not enabled in this state.
    NotEnabled(String),
    /// The platform refused the input (a request at a branch point without its branch).
    Platform(StepError),
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::NotEnabled(c) => write!(f, "choice '{c}' is not enabled here"),
            ApplyError::Platform(e) => write!(f, "the platform refused: {e}"),
        }
    }
}

impl std::error::Error for ApplyError {}

/// Where an unanswered request came from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Origin {
    pub merchant: u8,
    /// The request's idempotency scope, as the merchant computes it.
    pub scope: Option<crate::facts::ScopeKey>,
    /// The merchant and environment its API key names.
    pub owner: Option<(payhub_model::MerchantId, payhub_model::Environment)>,
    /// The platform's answer is to be replaced by a 500 (a fault after execution).
    pub fail_500: bool,
    /// The business order (database, order number) a client's submission is for.
    pub business: Option<(u8, payhub_model::Text)>,
}

/// A client's request waiting for its response.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Awaiting {
    pub node: u8,
    pub handle: payhub_model::client::Handle,
    /// When the client's timeout fires (TIMEOUT-01).
    pub deadline: Millis,
}

/// The whole simulated state. Ordered collections only, no trace inside: this is what
/// the exhaustive checker hashes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct World {
    pub now: Millis,
    pub platform: Shared<Platform>,
    pub acquirer: Shared<Acquirer>,
    /// Merchants ⇄ platform.
    pub net: InFlight<Payload>,
    /// Platform ⇄ acquirer.
    pub link: InFlight<UpstreamMsg>,
    /// Requests sent and not yet answered, by exchange.
    pub origins: CowMap<RequestId, Origin>,
    /// Faults and sends still allowed.
    pub budget: Budget,
    /// Compact history the properties judge.
    pub facts: Shared<Facts>,
    /// Client models by node (`None`: a scripted sender).
    pub servers: Shared<Vec<Option<payhub_model::client::MerchantServer>>>,
    /// Merchant databases, shared by the servers configured with the same `db`.
    pub dbs: Shared<Vec<payhub_model::client::MerchantDb>>,
    /// Client requests waiting for a response, by exchange.
    pub awaiting: CowMap<RequestId, Awaiting>,
    /// How often each workload item was given.
    pub workload_used: SmallVec<[u8; 4]>,
    /// Draws handed to each client node so far: the source of its jitter and random
    /// keys. Per node, so that interleaving two nodes' steps does not change either's draws.
    pub draws: SmallVec<[u32; 4]>,
    pub(crate) next_request: u32,
}

impl World {
    /// The initial state of a world with this configuration.
    pub fn new(config: &WorldConfig) -> World {
        World {
            now: Millis::ZERO,
            platform: Shared::new(Platform::with_variant(
                config.params.clone(),
                config.api_keys.iter().copied(),
                config.variant,
            )),
            acquirer: Shared::new(Acquirer::new()),
            net: InFlight::default(),
            link: InFlight::default(),
            origins: CowMap::new(),
            budget: config.budget,
            facts: Shared::default(),
            servers: Shared::new(crate::merchants::servers(config)),
            dbs: Shared::new(crate::merchants::databases(config)),
            awaiting: CowMap::new(),
            workload_used: smallvec::smallvec![0; config.workload.len()],
            draws: smallvec::smallvec![
                0;
                config
                    .clients
                    .iter()
                    .map(|c| c.node as usize + 1)
                    .max()
                    .unwrap_or(0)
            ],
            next_request: 0,
        }
    }

    /// The next time something is due: a platform timer, a client timer or a client's
    /// request timeout.
    pub fn next_deadline(&self) -> Option<Millis> {
        let clients = self
            .servers
            .iter()
            .flatten()
            .filter_map(|s| s.poll_timeout());
        let timeouts = self.awaiting.values().map(|a| a.deadline);
        self.platform
            .next_timer()
            .into_iter()
            .chain(clients)
            .chain(timeouts)
            .min()
    }

    /// Whether nothing can happen any more without a new request or a fault: no message
    /// in flight, no timer, no payer action.
    pub fn is_quiet(&self) -> bool {
        self.net.is_empty() && self.link.is_empty() && self.next_deadline().is_none()
    }

    /// Every choice enabled in this state, in a deterministic order.
    pub fn enabled(&self, config: &WorldConfig, out: &mut Vec<Choice>) {
        out.clear();
        let b = &self.budget;
        for (msg, payload) in self.net.iter() {
            match payload {
                Payload::Request { request, .. } => {
                    let branches = self.branches_for(request);
                    for branch in branches.clone() {
                        out.push(Choice::Deliver { msg, branch });
                    }
                    if b.fail_500 > 0 {
                        out.push(Choice::Fail500Before { msg });
                        for branch in branches {
                            out.push(Choice::Fail500After { msg, branch });
                        }
                    }
                }
                Payload::Response { .. } | Payload::Webhook { .. } => {
                    out.push(Choice::Deliver { msg, branch: None });
                }
            }
            if b.drops > 0 {
                out.push(Choice::Drop { msg });
            }
            if b.duplicates > 0 {
                out.push(Choice::Duplicate { msg });
            }
        }
        for (msg, m) in self.link.iter() {
            match m {
                UpstreamMsg::Call(call) => {
                    for &decision in Acquirer::decisions_for(call) {
                        if config.decisions.contains(&decision) {
                            out.push(Choice::Acquire { msg, decision });
                        }
                    }
                }
                UpstreamMsg::Reply(_) => out.push(Choice::DeliverUpstream { msg }),
            }
            if b.upstream_drops > 0 {
                out.push(Choice::DropUpstream { msg });
            }
        }
        if config.payer {
            for attempt in self.acquirer.awaiting_payer() {
                out.push(Choice::Authenticate { attempt, ok: true });
                out.push(Choice::Authenticate { attempt, ok: false });
            }
        }
        if b.controls > 0 {
            for control in &config.controls {
                out.push(Choice::Control(control.clone()));
            }
        }
        if b.sends > 0 {
            for (merchant, request) in &config.alphabet {
                out.push(Choice::Send {
                    merchant: *merchant,
                    request: request.clone(),
                });
            }
        }
        self.enabled_merchants(config, out);
        if b.waits > 0 {
            for d in &config.waits {
                out.push(Choice::Advance(*d));
            }
        }
        let time_may_pass =
            !config.time_waits_for_messages || (self.net.is_empty() && self.link.is_empty());
        if config.tick && time_may_pass && self.next_deadline().is_some() {
            out.push(Choice::Tick);
        }
    }

    /// `[None]`, or both alternatives if `request` would reach a branch point now (no
    /// allocation: this runs for every request in flight in every state).
    fn branches_for(&self, request: &ApiRequest) -> impl Iterator<Item = Option<Branch>> + Clone {
        let (alternatives, n) = match self.platform.branch_point(self.now, request) {
            Some(point) => (point.alternatives().map(Some), 2),
            None => ([None, None], 1),
        };
        alternatives.into_iter().take(n)
    }

    /// Applies one choice. On error nothing changed.
    pub fn apply(
        &mut self,
        config: &WorldConfig,
        choice: &Choice,
        mut trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        let not_enabled = || ApplyError::NotEnabled(choice.to_string());
        match choice {
            Choice::Deliver { msg, branch } => {
                let payload = self.net.get_shared(*msg).ok_or_else(not_enabled)?;
                match *payload {
                    Payload::Request {
                        from,
                        id,
                        ref request,
                    } => {
                        self.deliver_request(
                            config, *msg, from, id, request, *branch, false, trace,
                        )?;
                    }
                    Payload::Response {
                        to,
                        id,
                        ref response,
                    } => {
                        self.net.take(*msg);
                        if let Some(t) = trace.as_deref_mut() {
                            t.push(
                                self.now,
                                Node::Platform,
                                Node::Merchant(to),
                                What::Response {
                                    id,
                                    response: response.clone(),
                                },
                                None,
                            );
                        }
                        self.response_to_client(config, to, id, response.clone(), trace)?;
                    }
                    Payload::Webhook { to, ref event } => {
                        self.net.take(*msg);
                        if let Some(t) = trace.as_deref_mut() {
                            t.push(
                                self.now,
                                Node::Platform,
                                Node::Merchant(to),
                                What::Webhook {
                                    event: event.clone(),
                                },
                                None,
                            );
                        }
                        if self.server(to).is_some() {
                            self.webhook_to_client(config, to, event.clone(), trace)?;
                        } else {
                            // A scripted merchant acknowledges every webhook it receives.
                            self.step_platform(
                                config,
                                PlatformInput::WebhookAcked(event.id),
                                trace,
                            )?;
                        }
                    }
                }
            }
            Choice::Drop { msg } => {
                if self.budget.drops == 0 {
                    return Err(not_enabled());
                }
                let payload = self.net.take(*msg).ok_or_else(not_enabled)?;
                self.budget.drops -= 1;
                if let Some(t) = trace {
                    let (from, to) = (payload.source(), payload.destination());
                    let what = match &*payload {
                        &Payload::Request {
                            id, ref request, ..
                        } => {
                            t.note_request(id, request);
                            What::Lost {
                                id,
                                response: false,
                            }
                        }
                        &Payload::Response { id, .. } => What::Lost { id, response: true },
                        Payload::Webhook { event, .. } => What::WebhookLost {
                            event: event.clone(),
                        },
                    };
                    t.push(self.now, from, to, what, None);
                }
            }
            Choice::Duplicate { msg } => {
                let mut trace = trace;
                if self.budget.duplicates == 0 {
                    return Err(not_enabled());
                }
                let payload = self.net.get_shared(*msg).ok_or_else(not_enabled)?;
                self.budget.duplicates -= 1;
                match &*payload {
                    // A duplicated request is a second HTTP exchange: same bytes, new id.
                    // Its answer reaches the merchant, which is not waiting for it.
                    &Payload::Request {
                        from,
                        id,
                        ref request,
                    } => {
                        self.next_request += 1;
                        let copy = RequestId(self.next_request);
                        if let Some(origin) = self.origins.get(&id).cloned() {
                            self.origins.insert(copy, origin);
                        }
                        if let Some(t) = trace.as_deref_mut() {
                            t.note_request(copy, request);
                        }
                        self.net.send(Payload::Request {
                            from,
                            id: copy,
                            request: request.clone(),
                        });
                    }
                    _ => {
                        self.net.duplicate(*msg);
                    }
                }
                if let Some(t) = trace {
                    let payload = self.net.get(*msg).expect("just duplicated");
                    let what = match payload {
                        Payload::Request { id, request, .. } => {
                            t.note_request(*id, request);
                            What::Duplicated { id: *id }
                        }
                        Payload::Response { id, .. } => What::Duplicated { id: *id },
                        Payload::Webhook { event, .. } => What::Decision {
                            text: format!("{event} (duplicated)"),
                        },
                    };
                    t.push(
                        self.now,
                        payload.source(),
                        payload.destination(),
                        what,
                        None,
                    );
                }
            }
            Choice::Fail500Before { msg } => {
                let Some(&Payload::Request { from, id, .. }) = self.net.get(*msg) else {
                    return Err(not_enabled());
                };
                if self.budget.fail_500 == 0 {
                    return Err(not_enabled());
                }
                self.budget.fail_500 -= 1;
                let taken = self.net.take(*msg);
                if let (Some(t), Some(Payload::Request { request, .. })) = (trace, taken.as_deref())
                {
                    t.note_request(id, request);
                    t.push(
                        self.now,
                        Node::Merchant(from),
                        Node::Platform,
                        What::Fail500 {
                            id,
                            executed: false,
                        },
                        Some(payhub_model::Rule::UnknownResult),
                    );
                }
                self.origins.remove(&id);
                self.send_to_merchant(
                    config,
                    Payload::Response {
                        to: from,
                        id,
                        response: internal_error(),
                    },
                    None,
                );
            }
            Choice::Fail500After { msg, branch } => {
                let Some(payload) = self.net.get_shared(*msg) else {
                    return Err(not_enabled());
                };
                let Payload::Request { from, id, request } = &*payload else {
                    return Err(not_enabled());
                };
                if self.budget.fail_500 == 0 {
                    return Err(not_enabled());
                }
                self.deliver_request(config, *msg, *from, *id, request, *branch, true, trace)?;
                self.budget.fail_500 -= 1;
            }
            Choice::Acquire { msg, decision } => {
                let Some(m) = self.link.get_shared(*msg) else {
                    return Err(not_enabled());
                };
                let UpstreamMsg::Call(call) = &*m else {
                    return Err(not_enabled());
                };
                self.link.take(*msg);
                let mut replies = Vec::new();
                self.acquirer
                    .handle_call(self.now, call, *decision, &mut replies);
                if let Some(t) = trace {
                    let d = serde_json::to_string(decision).unwrap_or_default();
                    let what = What::Decision {
                        text: format!("{call}: {}", d.trim_matches('"')),
                    };
                    t.push(self.now, Node::Acquirer, Node::Acquirer, what, None);
                }
                for reply in replies {
                    self.link.send(UpstreamMsg::Reply(reply));
                }
            }
            Choice::DeliverUpstream { msg } => {
                let Some(&UpstreamMsg::Reply(reply)) = self.link.get(*msg) else {
                    return Err(not_enabled());
                };
                self.link.take(*msg);
                if let Some(t) = trace.as_deref_mut() {
                    t.push(
                        self.now,
                        Node::Acquirer,
                        Node::Platform,
                        What::UpstreamReply { reply },
                        None,
                    );
                }
                self.step_platform(config, PlatformInput::Upstream(reply), trace)?;
            }
            Choice::DropUpstream { msg } => {
                if self.budget.upstream_drops == 0 {
                    return Err(not_enabled());
                }
                let m = self.link.take(*msg).ok_or_else(not_enabled)?;
                self.budget.upstream_drops -= 1;
                if let Some(t) = trace {
                    let (from, to, text) = match &*m {
                        UpstreamMsg::Call(c) => (Node::Platform, Node::Acquirer, c.to_string()),
                        UpstreamMsg::Reply(r) => (Node::Acquirer, Node::Platform, r.to_string()),
                    };
                    t.push(self.now, from, to, What::UpstreamLost { text }, None);
                }
            }
            Choice::Authenticate { attempt, ok } => {
                if !self.acquirer.awaiting_payer().any(|a| a == *attempt) {
                    return Err(not_enabled());
                }
                self.acquirer.handle_payer(self.now, *attempt, *ok);
                if let Some(t) = trace {
                    let text = format!(
                        "{attempt}: payer authentication {}",
                        if *ok { "succeeded" } else { "failed" }
                    );
                    t.push(
                        self.now,
                        Node::Payer,
                        Node::Acquirer,
                        What::Authenticated { text },
                        None,
                    );
                }
            }
            Choice::Crash { merchant } => self.crash(config, *merchant, trace)?,
            Choice::Restart { merchant } => self.restart(config, *merchant, trace)?,
            Choice::Command { item, crash_after } => {
                self.command(config, *item as usize, *crash_after, trace)?
            }
            Choice::Control(control) => {
                // Controls of the configuration spend the budget; scripted ones are free.
                if config.controls.contains(control) {
                    if self.budget.controls == 0 {
                        return Err(not_enabled());
                    }
                    self.budget.controls -= 1;
                }
                if let Some(t) = trace.as_deref_mut() {
                    t.push(
                        self.now,
                        Node::Env,
                        Node::Platform,
                        What::Control {
                            control: control.clone(),
                        },
                        None,
                    );
                }
                self.step_platform(config, PlatformInput::Control(control.clone()), trace)?;
            }
            Choice::Send { merchant, request } => {
                let scripted = config
                    .alphabet
                    .iter()
                    .any(|(m, r)| m == merchant && r == request);
                if scripted {
                    if self.budget.sends == 0 {
                        return Err(not_enabled());
                    }
                    self.budget.sends -= 1;
                }
                self.send_request(config, *merchant, ApiRequest::clone(request), trace);
            }
            Choice::Tick => {
                let Some(at) = self.next_deadline() else {
                    return Err(not_enabled());
                };
                self.advance_to(config, at, trace)?;
            }
            Choice::Advance(d) => {
                if config.waits.contains(d) {
                    if self.budget.waits == 0 {
                        return Err(not_enabled());
                    }
                    self.budget.waits -= 1;
                }
                let until = self.now.after(*d);
                while let Some(at) = self.next_deadline() {
                    if at > until {
                        break;
                    }
                    self.advance_to(config, at, trace.as_deref_mut())?;
                }
                self.now = until;
                if let Some(t) = trace {
                    t.push(
                        self.now,
                        Node::Env,
                        Node::Env,
                        What::Clock { to: until },
                        None,
                    );
                }
            }
        }
        Ok(())
    }

    /// The node a webhook of (merchant, environment) goes to: the configured one, or, if
    /// that is a crashed client, the first running client server of the same merchant and
    /// environment (the merchant's webhook endpoint is behind a load balancer).
    fn webhook_node(
        &self,
        config: &WorldConfig,
        merchant: payhub_model::MerchantId,
        environment: payhub_model::Environment,
    ) -> Option<u8> {
        let target = config.webhook_target(merchant, environment)?;
        // A scripted node (no server) always listens.
        let up = |node: u8| self.server(node).is_none_or(|s| s.is_up());
        if up(target) {
            return Some(target);
        }
        config
            .clients
            .iter()
            .filter(|c| config.key_owner(c.api_key) == Some((merchant, environment)))
            .map(|c| c.node)
            .find(|n| up(*n))
            .or(Some(target))
    }

    /// Puts a new request from `merchant` in flight and returns its exchange id.
    pub fn send_request(
        &mut self,
        config: &WorldConfig,
        merchant: u8,
        request: ApiRequest,
        trace: Option<&mut Trace>,
    ) -> RequestId {
        self.next_request += 1;
        let id = RequestId(self.next_request);
        if let Some(t) = trace {
            t.note_request(id, &request);
        }
        let origin = Origin {
            merchant,
            scope: crate::facts::ScopeKey::of(config, &request),
            owner: config.key_owner(request.api_key),
            fail_500: false,
            business: None,
        };
        self.origins.insert(id, origin);
        self.net.send(Payload::Request {
            from: merchant,
            id,
            request,
        });
        id
    }

    fn advance_to(
        &mut self,
        config: &WorldConfig,
        at: Millis,
        mut trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        self.now = self.now.max(at);
        if self.platform.next_timer().is_some_and(|t| t <= self.now) {
            self.step_platform(config, PlatformInput::Timeout, trace.as_deref_mut())?;
        }
        self.fire_client_deadlines(config, trace)
    }

    #[allow(clippy::too_many_arguments)]
    fn deliver_request(
        &mut self,
        config: &WorldConfig,
        msg: MsgId,
        from: u8,
        id: RequestId,
        request: &ApiRequest,
        branch: Option<Branch>,
        fail_500: bool,
        mut trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        // Check first, so that a refused delivery changes nothing.
        if let Some(point) = self.platform.branch_point(self.now, request) {
            match branch {
                Some(b) if b.point() == point => {}
                Some(b) => {
                    return Err(ApplyError::Platform(StepError::WrongBranch {
                        point,
                        given: b,
                    }));
                }
                None => return Err(ApplyError::Platform(StepError::BranchRequired(point))),
            }
        }
        self.net.take(msg);
        if fail_500 {
            if let Some(o) = self.origins.get_mut(&id) {
                o.fail_500 = true;
            }
        }
        if let Some(t) = trace.as_deref_mut() {
            t.push(
                self.now,
                Node::Merchant(from),
                Node::Platform,
                What::Request {
                    id,
                    request: request.clone(),
                },
                None,
            );
        }
        let before = self.facts.snapshot(&self.platform);
        let mut out = Vec::new();
        self.platform
            .step_request(self.now, id, request, branch, &mut out)
            .map_err(ApplyError::Platform)?;
        self.facts
            .on_request_handled(self.now, config, id, request, &before, &self.platform, &out);
        if let Some(business) = self.origins.get(&id).and_then(|o| o.business.clone()) {
            self.facts.on_business_charges(&business, &out);
        }
        self.route_platform_outputs(config, out, trace)
    }

    /// Steps the platform with an input other than a request and routes its outputs.
    pub(crate) fn step_platform(
        &mut self,
        config: &WorldConfig,
        input: PlatformInput,
        trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        let mut out = Vec::new();
        self.platform
            .step(self.now, input, &mut out)
            .map_err(ApplyError::Platform)?;
        self.facts.on_platform_step(&out);
        self.route_platform_outputs(config, out, trace)
    }

    /// Routes what one platform step produced: responses to their merchants (or a 500 in
    /// their place), upstream calls onto the link, webhooks to the merchant's endpoint.
    fn route_platform_outputs(
        &mut self,
        config: &WorldConfig,
        out: Vec<PlatformOutput>,
        mut trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        let mut acks = Vec::new();
        for output in out {
            match output {
                PlatformOutput::Response { to, response, rule } => {
                    let Some(origin) = self.origins.remove(&to) else {
                        continue;
                    };
                    self.facts.on_response(
                        self.now,
                        payhub_model::Contract::RETENTION,
                        to,
                        origin.scope.as_ref(),
                        origin.owner,
                        &response,
                        &self.platform,
                    );
                    let response = if origin.fail_500 {
                        internal_error()
                    } else {
                        response
                    };
                    // The bug zoo's client facts: what the client gets (RATE-03, ATTEMPT-07).
                    self.facts.on_answer(
                        self.now,
                        origin.merchant,
                        self.awaiting.contains_key(&to),
                        to,
                        origin.scope.as_ref(),
                        &response,
                    );
                    if let Some(t) = trace.as_deref_mut() {
                        if origin.fail_500 {
                            t.push(
                                self.now,
                                Node::Platform,
                                Node::Merchant(origin.merchant),
                                What::Fail500 {
                                    id: to,
                                    executed: true,
                                },
                                Some(payhub_model::Rule::FiveXxMayHaveExecuted),
                            );
                        } else {
                            t.push(
                                self.now,
                                Node::Platform,
                                Node::Platform,
                                What::Decision {
                                    text: format!("answers {to}: {}", response.status),
                                },
                                Some(rule),
                            );
                        }
                    }
                    let payload = Payload::Response {
                        to: origin.merchant,
                        id: to,
                        response,
                    };
                    self.send_to_merchant(config, payload, trace.as_deref_mut());
                }
                PlatformOutput::Upstream { call, rule } => {
                    if let Some(t) = trace.as_deref_mut() {
                        t.push(
                            self.now,
                            Node::Platform,
                            Node::Acquirer,
                            What::UpstreamCall { call: call.clone() },
                            Some(rule),
                        );
                    }
                    self.link.send(UpstreamMsg::Call(call));
                }
                PlatformOutput::Webhook { event, rule } => {
                    if let Some(to) = self.webhook_node(config, event.merchant, event.environment) {
                        if let Some(t) = trace.as_deref_mut() {
                            t.push(
                                self.now,
                                Node::Platform,
                                Node::Platform,
                                What::Decision {
                                    text: format!("emits {event}"),
                                },
                                Some(rule),
                            );
                        }
                        let id = event.id;
                        if self.send_to_merchant(
                            config,
                            Payload::Webhook { to, event },
                            trace.as_deref_mut(),
                        ) {
                            acks.push(id);
                        }
                    }
                }
            }
        }
        for event in acks {
            let mut none = Vec::new();
            self.platform
                .step(self.now, PlatformInput::WebhookAcked(event), &mut none)
                .map_err(ApplyError::Platform)?;
        }
        Ok(())
    }

    /// Sends a response or webhook to a merchant: in flight, or (with an immediate inbox)
    /// delivered at once. Returns whether a webhook was delivered at once (to be acked).
    fn send_to_merchant(
        &mut self,
        config: &WorldConfig,
        payload: Payload,
        trace: Option<&mut Trace>,
    ) -> bool {
        if !config.immediate_inbox || crate::merchants::for_client(self, &payload) {
            self.net.send(payload);
            return false;
        }
        match payload {
            Payload::Response { to, id, response } => {
                if let Some(t) = trace {
                    t.push(
                        self.now,
                        Node::Platform,
                        Node::Merchant(to),
                        What::Response { id, response },
                        None,
                    );
                }
                false
            }
            Payload::Webhook { to, event } => {
                if let Some(t) = trace {
                    t.push(
                        self.now,
                        Node::Platform,
                        Node::Merchant(to),
                        What::Webhook { event },
                        None,
                    );
                }
                true
            }
            Payload::Request { .. } => {
                self.net.send(payload);
                false
            }
        }
    }
}

/// `500 {"error":{"code":"internal_error","retryable":true}}` (UNKNOWN-01).
pub fn internal_error() -> ApiResponse {
    ApiResponse::error(ApiError::new(ErrorCode::InternalError))
}

impl World {
    /// What a choice does, without the run-specific ids it names (`m7`, `u3`, `att_002`):
    /// the shrinker uses it to find "the same" choice after an earlier one was removed
    /// and the ids shifted.
    pub fn signature(&self, choice: &Choice) -> String {
        let payload = |msg: &MsgId| match self.net.get(*msg) {
            // Without the Idempotency-Key: random keys change when earlier draws are removed.
            Some(Payload::Request { from, request, .. }) => format!(
                "request from merchant-{from}: {} {} {}",
                request.endpoint.method(),
                request.endpoint.path(),
                serde_json::to_string(&request.endpoint).unwrap_or_default()
            ),
            Some(Payload::Response { to, response, .. }) => {
                format!(
                    "response to merchant-{to}: {} {:?}",
                    response.status,
                    response.error_code()
                )
            }
            Some(Payload::Webhook { to, event }) => {
                format!(
                    "webhook to merchant-{to}: {} v{}",
                    event.kind,
                    event.object.version()
                )
            }
            None => "gone".to_owned(),
        };
        let link = |msg: &MsgId| match self.link.get(*msg) {
            Some(UpstreamMsg::Call(call)) => match call {
                payhub_model::UpstreamCall::Charge {
                    amount,
                    currency,
                    card,
                    ..
                } => {
                    format!("charge {amount} {currency} {card}")
                }
                payhub_model::UpstreamCall::QueryCharge { .. } => "query charge".into(),
                payhub_model::UpstreamCall::CancelCharge { .. } => "cancel charge".into(),
                payhub_model::UpstreamCall::Refund { amount, .. } => format!("refund {amount}"),
                payhub_model::UpstreamCall::QueryRefund { .. } => "query refund".into(),
            },
            Some(UpstreamMsg::Reply(reply)) => match reply {
                payhub_model::UpstreamReply::Charge { state, .. } => {
                    format!("charge reply {state:?}")
                }
                payhub_model::UpstreamReply::Refund { state, .. } => {
                    format!("refund reply {state:?}")
                }
            },
            None => "gone".to_owned(),
        };
        match choice {
            Choice::Deliver { msg, branch } => format!("deliver {} {branch:?}", payload(msg)),
            Choice::Drop { msg } => format!("drop {}", payload(msg)),
            Choice::Duplicate { msg } => format!("duplicate {}", payload(msg)),
            Choice::Fail500Before { msg } => format!("500-before {}", payload(msg)),
            Choice::Fail500After { msg, branch } => {
                format!("500-after {} {branch:?}", payload(msg))
            }
            Choice::Acquire { msg, decision } => format!("acquire {} {decision:?}", link(msg)),
            Choice::DeliverUpstream { msg } => format!("deliver {}", link(msg)),
            Choice::DropUpstream { msg } => format!("drop {}", link(msg)),
            Choice::Authenticate { ok, .. } => format!("authenticate {ok}"),
            other => other.to_string(),
        }
    }
}
