//! The world: platform, acquirer and merchants, with everything between them simulated.
//!
//! [`World::enabled`] lists the [`Choice`]s a state allows; [`World::apply`] applies one.
//! Both drivers use exactly these two functions: the seeded simulator picks a choice with
//! its RNG, the exhaustive checker tries every one. The world itself never draws a random
//! number or reads a clock.
//!
//! `apply` runs in a fixed order: take the message or event the choice names, step the
//! actor it goes to, route that actor's outputs into flight, and emit an event for each
//! thing that happens. The facts and the trace are consumers of those events
//! ([`crate::sink`]); the world never writes into either.

use crate::choice::Choice;
use crate::config::{Budget, WorldConfig};
use crate::event_fold::EventFold;
use crate::merchants::Then;
use crate::network::{InFlight, Payload, UpstreamMsg};
use crate::sink::Sink;
use crate::trace::Trace;
use payhub_model::event::{ScopeKey, What};
use payhub_model::{
    Acquirer, ApiError, ApiRequest, ApiResponse, Branch, Control, ErrorCode, Millis, Platform,
    PlatformInput, RequestId, StepError,
};
use payhub_model::{CowMap, Shared};
use serde::Serialize;
use smallvec::SmallVec;
use std::sync::Arc;

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

impl ApplyError {
    /// The choice being applied is not enabled here (named by [`World::apply`]).
    pub(crate) fn not_enabled() -> ApplyError {
        ApplyError::NotEnabled(String::new())
    }

    /// Names the choice in a "not enabled" error that does not say what it refused.
    fn naming(self, choice: &Choice) -> ApplyError {
        match self {
            ApplyError::NotEnabled(what) if what.is_empty() => {
                ApplyError::NotEnabled(choice.to_string())
            }
            e => e,
        }
    }
}

/// Where an unanswered request came from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Origin {
    pub merchant: u8,
    /// The request's idempotency scope, as the merchant computes it.
    pub scope: Option<ScopeKey>,
    /// The merchant and environment its API key names.
    pub owner: Option<(payhub_model::MerchantId, payhub_model::Environment)>,
    /// The platform's answer is to be replaced by a 500 (a fault after execution).
    pub fail_500: bool,
    /// The business order (database, order number) a client's submission is for.
    pub business: Option<payhub_model::event::BusinessOrder>,
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
#[derive(Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(bound = "")]
pub struct World<F: EventFold> {
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
    /// What the world's events fold into ([`EventFold`]): the properties' facts.
    pub facts: Shared<F>,
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

/// The checker clones the world for every state it generates: the parts are reference
/// counts, and the two small vectors are copied as bytes (`SmallVec`'s own `clone`
/// pushes them one by one; `from_slice` copies `Copy` items at once).
impl<F: EventFold> Clone for World<F> {
    fn clone(&self) -> World<F> {
        World {
            now: self.now,
            platform: self.platform.clone(),
            acquirer: self.acquirer.clone(),
            net: self.net.clone(),
            link: self.link.clone(),
            origins: self.origins.clone(),
            budget: self.budget,
            facts: self.facts.clone(),
            servers: self.servers.clone(),
            dbs: self.dbs.clone(),
            awaiting: self.awaiting.clone(),
            workload_used: SmallVec::from_slice(&self.workload_used),
            draws: SmallVec::from_slice(&self.draws),
            next_request: self.next_request,
        }
    }
}

/// A world hashed in its canonical form ([`World::hash_canonical`]): what the
/// exhaustive checker fingerprints when it reduces (`check --reduce ids`).
pub struct Canonical<'a, F: EventFold>(pub &'a World<F>);

impl<F: EventFold> std::hash::Hash for Canonical<'_, F> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash_canonical(state);
    }
}

impl<F: EventFold> World<F> {
    /// Hashes the world as its derived `Hash` does, except that the messages in flight
    /// (both networks) are a multiset without ids ([`InFlight::hash_unnamed`]): states
    /// that differ only in the message ids the order of sending gave them hash alike.
    /// Only hashing changes: what traces and tapes print keeps the ids.
    pub fn hash_canonical<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        // Every field by name: a field added to `World` must be placed here too.
        let World {
            now,
            platform,
            acquirer,
            net,
            link,
            origins,
            budget,
            facts,
            servers,
            dbs,
            awaiting,
            workload_used,
            draws,
            next_request,
        } = self;
        now.hash(state);
        platform.hash(state);
        acquirer.hash(state);
        net.hash_unnamed(state);
        link.hash_unnamed(state);
        origins.hash(state);
        budget.hash(state);
        facts.hash(state);
        servers.hash(state);
        dbs.hash(state);
        awaiting.hash(state);
        workload_used.hash(state);
        draws.hash(state);
        next_request.hash(state);
    }

    /// The initial state of a world with this configuration.
    pub fn new(config: &WorldConfig) -> World<F> {
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
            facts: Shared::new(F::planted(config.narrowing)),
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
    ///
    /// A dispatcher: each choice names one fault domain, whose helper takes the message
    /// or event the choice names, steps the actor it goes to and routes that actor's
    /// outputs, emitting an event for each thing that happens (into the facts, and into
    /// `trace` when recording). Domains: the merchants' network (`merchant_link.rs`), the upstream
    /// link and the acquirer (`upstream.rs`), the merchant servers (`merchants.rs`), the
    /// clock (`clock.rs`), the environment's controls and scripted sends (below).
    pub fn apply(
        &mut self,
        config: &WorldConfig,
        choice: &Choice,
        trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        self.apply_in(config, choice, &mut Sink::new(trace))
    }

    /// [`World::apply`], emitting into a sink a driver keeps for a whole run.
    pub fn apply_in(
        &mut self,
        config: &WorldConfig,
        choice: &Choice,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let result = match choice {
            Choice::Deliver { msg, branch } => self.deliver(config, *msg, *branch, sink),
            Choice::Drop { msg } => self.drop_message(*msg, sink),
            Choice::Duplicate { msg } => self.duplicate(*msg, sink),
            Choice::Fail500Before { msg } => self.fail_500_before(config, *msg, sink),
            Choice::Fail500After { msg, branch } => {
                self.fail_500_after(config, *msg, *branch, sink)
            }
            Choice::Acquire { msg, decision } => self.acquire(*msg, *decision, sink),
            Choice::DeliverUpstream { msg } => self.deliver_upstream(config, *msg, sink),
            Choice::DropUpstream { msg } => self.drop_upstream(*msg, sink),
            Choice::Authenticate { attempt, ok } => self.authenticate(*attempt, *ok, sink),
            Choice::Crash { merchant } => self.crash(config, *merchant, sink),
            Choice::Restart { merchant } => self.restart(config, *merchant, sink),
            Choice::Command { item, crash_after } => {
                let then = if *crash_after { Then::Crash } else { Then::Run };
                self.command(config, *item as usize, then, sink)
            }
            Choice::Control(control) => self.control(config, control, sink),
            Choice::Send { merchant, request } => {
                self.scripted_send(config, *merchant, request, sink)
            }
            Choice::Tick => self.tick(config, sink),
            Choice::Advance(d) => self.advance(config, *d, sink),
        };
        result.map_err(|e| e.naming(choice))
    }

    /// The environment throws a control: those of the configuration spend the budget,
    /// scripted ones are free.
    fn control(
        &mut self,
        config: &WorldConfig,
        control: &Control,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        if config.controls.contains(control) {
            if self.budget.controls == 0 {
                return Err(ApplyError::not_enabled());
            }
            self.budget.controls -= 1;
        }
        let control = control.clone();
        self.note(sink, || What::Controlled {
            control: control.clone(),
        });
        self.step_platform(config, PlatformInput::Control(control), sink)
    }

    /// A scripted sender sends `request`: those of the alphabet spend the budget.
    fn scripted_send(
        &mut self,
        config: &WorldConfig,
        merchant: u8,
        request: &Arc<ApiRequest>,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let scripted = config
            .alphabet
            .iter()
            .any(|(m, r)| *m == merchant && r == request);
        if scripted {
            if self.budget.sends == 0 {
                return Err(ApplyError::not_enabled());
            }
            self.budget.sends -= 1;
        }
        self.open_exchange(config, merchant, ApiRequest::clone(request), sink);
        Ok(())
    }

    /// Puts a new request from `merchant` in flight and returns its exchange id.
    pub fn send_request(
        &mut self,
        config: &WorldConfig,
        merchant: u8,
        request: ApiRequest,
        trace: Option<&mut Trace>,
    ) -> RequestId {
        self.open_exchange(config, merchant, request, &mut Sink::new(trace))
    }
}

/// `500 {"error":{"code":"internal_error","retryable":true}}` (UNKNOWN-01).
pub fn internal_error() -> ApiResponse {
    ApiResponse::error(ApiError::new(ErrorCode::InternalError))
}
