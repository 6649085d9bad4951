//! The sandbox's sans-IO core: the simulated world as the session's state, stepped by a
//! live driver.
//!
//! An HTTP request becomes a scripted send of the world (`Choice::Send` from the node
//! of its API key) and a `Choice::Deliver`, with the branch the `--branches` setting
//! picks where the platform reaches one of the contract's "A or B" points. The upstream
//! is then driven by the request's test card ([`super::cards`]): every call on the link
//! is decided, every reply delivered, and, while the platform holds the exchange
//! waiting for time to pass (the ~15 s synchronous wait that turns into a 202, a
//! concurrent same-key wait), the clock jumps to the next deadline (`Choice::Tick`).
//! Once the exchange's answer is in flight it is delivered (or lost, for a fault) and
//! rendered. Every step is a choice of the world, recorded in the session's tape and
//! trace: the events, the verdict and the script all come from them.
//!
//! Time: `handle(now, …)` first moves the world to `now` (firing every timer due on the
//! way, the upstream driven after each); a jump to a deadline moves the session's clock
//! ahead of `now`, and it never goes back, so under `--clock real` the session runs
//! ahead of the wall clock by the waits it jumped until the wall clock catches up.
//! Under `--clock manual` the edge passes the session's own time, and only
//! [`Sandbox::advance`] moves it.
//!
//! No clock, no I/O: errors of the world (none are expected) are answered 500 and kept
//! for the edge to print ([`Sandbox::take_errors`]).

use super::business::Orders;
use super::cards;
use super::faults::{Action, Faults, Plan};
use super::http_map::{self, HttpReply, HttpRequest};
use payhub_model::harness::{default_api_keys, rotated_key_spec};
use payhub_model::{
    ApiKeyId, ApiRequest, ApiResponse, AttemptId, Branch, Control, Environment, MerchantId, Millis,
    PaymentId, PlatformParams, RequestId,
};
use payhub_sim::network::{MsgId, Payload, UpstreamMsg};
use payhub_sim::{Budget, Choice, Trace, World, WorldConfig};
use std::sync::Arc;

/// Steps one driving loop may take before the sandbox calls it a bug.
const STEPS_MAX: usize = 100_000;

/// Which alternative the sandbox takes where the contract allows two (S4, S5, S8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Branches {
    /// The first alternative, the one the contract's example shows (409 for S4 and S8, wait for S5).
    A,
    /// The second alternative (return the existing object, 409 at once, the original status).
    B,
    /// Each point draws its branch from the seed.
    Seeded,
}

/// What a session starts with.
#[derive(Clone, Debug)]
pub struct Settings {
    pub seed: u64,
    pub branches: Branches,
    pub plan: Plan,
}

/// One sandbox session.
pub struct Sandbox {
    settings: Settings,
    config: WorldConfig,
    world: World,
    trace: Trace,
    tape: Vec<Choice>,
    /// The edge time at which this session's world time 0 began (the last reset).
    epoch: Millis,
    faults: Faults,
    orders: Orders,
    draws: u64,
    errors: Vec<String>,
}

/// The world of a sandbox: the default API keys and the rotated pair, no client models
/// (every node is a scripted sender: the merchant's own integration is the client),
/// every fault affordable, no webhooks, responses travelling so that one can be lost.
pub fn world_config(plan: &Plan) -> WorldConfig {
    let mut params = PlatformParams::default();
    if let Some(s) = plan.retry_after_s {
        params.retry_after_s = s;
    }
    WorldConfig {
        name: "sandbox".into(),
        params,
        api_keys: default_api_keys(),
        spare_keys: vec![rotated_key_spec()],
        budget: Budget::UNLIMITED,
        webhooks: Vec::new(),
        immediate_inbox: false,
        ..WorldConfig::default()
    }
}

/// The node that sends a key's requests: `merchant-N` for `ak_N` (N ≤ 5), node 0 for
/// any other key.
pub fn node_of(key: ApiKeyId) -> u8 {
    if (1..=5).contains(&key.0) {
        key.0 as u8
    } else {
        0
    }
}

impl Sandbox {
    pub fn new(settings: Settings) -> Sandbox {
        let config = world_config(&settings.plan);
        Sandbox {
            world: World::new(&config),
            config,
            trace: Trace::new(),
            tape: Vec::new(),
            epoch: Millis::ZERO,
            faults: Faults::new(settings.plan.clone()),
            orders: Orders::default(),
            draws: 0,
            errors: Vec::new(),
            settings,
        }
    }

    /// Starts a new session at edge time `now`: a new world, tape, fault counters.
    pub fn reset(&mut self, now: Millis) {
        let settings = self.settings.clone();
        *self = Sandbox::new(settings);
        self.epoch = now;
    }

    /// Replaces the fault plan (its counters start at 0; `retry_after_s` applies from
    /// the next reset, since the platform's parameters are fixed for a session).
    pub fn set_plan(&mut self, plan: Plan) {
        self.faults = Faults::new(plan.clone());
        self.settings.plan = plan;
    }

    pub fn plan(&self) -> &Plan {
        self.faults.plan()
    }

    /// The session's time in edge time (what `--clock manual` reads).
    pub fn now(&self) -> Millis {
        self.epoch.after(self.world.now)
    }

    /// The session's world time.
    pub fn world_now(&self) -> Millis {
        self.world.now
    }

    pub fn world(&self) -> &World {
        &self.world
    }

    pub fn config(&self) -> &WorldConfig {
        &self.config
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The choices applied so far.
    pub fn tape(&self) -> &[Choice] {
        &self.tape
    }

    /// Errors of the world since the last call (each answered 500).
    pub fn take_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.errors)
    }

    /// Answers one HTTP request at edge time `now`.
    pub fn handle(&mut self, now: Millis, http: &HttpRequest) -> HttpReply {
        match self.exchange(now, http) {
            Ok(reply) => reply,
            Err(e) => {
                if self.errors.len() < 100 {
                    self.errors.push(e);
                }
                HttpReply::from_response(&payhub_sim::world::internal_error())
            }
        }
    }

    /// Moves the session's clock forward by `by`, firing every timer due on the way
    /// (the upstream driven after each); returns the session's new world time.
    pub fn advance(&mut self, by: Millis) -> Result<Millis, String> {
        let target = self.world.now.after(by);
        self.move_world_to(target)?;
        Ok(self.world.now)
    }

    /// The payer completes (or fails) the authentication of `payment`'s `requires_action`
    /// charge; the platform learns of it by querying (RES-05), as time passes.
    pub fn authenticate(&mut self, payment: PaymentId, ok: bool) -> Result<AttemptId, String> {
        let attempt = self
            .world
            .acquirer
            .awaiting_payer()
            .find(|a| {
                self.world
                    .acquirer
                    .charges
                    .get(a)
                    .is_some_and(|c| c.payment == payment)
            })
            .ok_or_else(|| format!("{payment} has no charge waiting for authentication"))?;
        self.apply(Choice::Authenticate { attempt, ok })?;
        self.drive_link(false)?;
        Ok(attempt)
    }

    fn exchange(&mut self, now: Millis, http: &HttpRequest) -> Result<HttpReply, String> {
        self.move_world_to(now.since(self.epoch))?;
        let request = match http_map::to_api_request(http) {
            Ok(r) => r,
            Err(edge_answer) => return Ok(edge_answer),
        };
        let owner = self.config.key_owner(request.api_key);
        let action = self.faults.next(&request);
        let control = match (action, owner) {
            (Some(Action::RateLimited), Some((merchant, _))) => {
                Some(Control::SetRateLimited { merchant, on: true })
            }
            (Some(Action::Unavailable), _) => Some(Control::SetChannelPaused { on: true }),
            _ => None,
        };
        if let Some(c) = &control {
            self.apply(Choice::Control(c.clone()))?;
        }
        let reply = self.in_world(owner, request, action);
        if let Some(c) = control {
            self.apply(Choice::Control(switched_off(c)))?;
        }
        reply
    }

    /// The exchange in the world: sent, delivered (or faulted), its answer awaited,
    /// delivered (or lost).
    fn in_world(
        &mut self,
        owner: Option<(MerchantId, Environment)>,
        request: ApiRequest,
        action: Option<Action>,
    ) -> Result<HttpReply, String> {
        let b = &self.world.budget;
        if b.drops < 16 || b.fail_500 < 16 {
            self.world.budget = Budget::UNLIMITED;
        }
        let business = self.orders.business_of(owner, &request);
        self.apply(Choice::Send {
            merchant: node_of(request.api_key),
            request: Arc::new(request.clone()),
        })?;
        let (msg, id) = self
            .newest_request()
            .ok_or("the sent request is not in flight")?;
        if let (Some(b), Some(origin)) = (business, self.world.origins.get_mut(&id)) {
            origin.business = Some(b);
        }
        match action {
            Some(Action::ResetBefore) => {
                self.apply(Choice::Drop { msg })?;
                self.orders.observe(owner, &request, None);
                return Ok(HttpReply::reset());
            }
            Some(Action::Fail500Before) => self.apply(Choice::Fail500Before { msg })?,
            Some(Action::Fail500After) => {
                let branch = self.branch_for(&request);
                self.apply(Choice::Fail500After { msg, branch })?
            }
            _ => {
                let branch = self.branch_for(&request);
                self.apply(Choice::Deliver { msg, branch })?
            }
        }
        let (answer, response) = self.await_answer(id)?;
        self.drive_link(false)?;
        if action == Some(Action::ResetAfter) {
            self.apply(Choice::Drop { msg: answer })?;
            self.orders.observe(owner, &request, None);
            return Ok(HttpReply::reset());
        }
        self.apply(Choice::Deliver {
            msg: answer,
            branch: None,
        })?;
        self.orders.observe(owner, &request, Some(&response));
        Ok(HttpReply::from_response(&response))
    }

    /// Applies one choice, recording it in the tape and the trace.
    fn apply(&mut self, choice: Choice) -> Result<(), String> {
        self.trace.begin_step(self.tape.len() as u32);
        self.world
            .apply(&self.config, &choice, Some(&mut self.trace))
            .map_err(|e| format!("{choice}: {e}"))?;
        self.tape.push(choice);
        Ok(())
    }

    /// The request put in flight last (message ids only grow).
    fn newest_request(&self) -> Option<(MsgId, RequestId)> {
        self.world
            .net
            .iter()
            .filter_map(|(msg, p)| match p {
                Payload::Request { id, .. } => Some((msg, *id)),
                _ => None,
            })
            .last()
    }

    fn answer_in_flight(&self, id: RequestId) -> Option<(MsgId, ApiResponse)> {
        self.world.net.iter().find_map(|(msg, p)| match p {
            Payload::Response {
                id: to, response, ..
            } if *to == id => Some((msg, response.clone())),
            _ => None,
        })
    }

    /// Drives the world until the answer to exchange `id` is in flight: the upstream
    /// first, then, with nothing left to decide, the clock to the next deadline.
    fn await_answer(&mut self, id: RequestId) -> Result<(MsgId, ApiResponse), String> {
        for _ in 0..STEPS_MAX {
            if let Some(found) = self.answer_in_flight(id) {
                return Ok(found);
            }
            if self.drive_link(true)? {
                continue;
            }
            if self.world.next_deadline().is_none() {
                return Err(format!("{id}: unanswered, and nothing is due"));
            }
            self.apply(Choice::Tick)?;
        }
        Err(format!("{id}: unanswered after {STEPS_MAX} steps"))
    }

    /// Decides every call on the upstream link by its test card and delivers every
    /// reply; `waiting`: a slow card's charge is held. Returns whether anything moved.
    fn drive_link(&mut self, waiting: bool) -> Result<bool, String> {
        let mut moved = false;
        for _ in 0..STEPS_MAX {
            let acquirer = &self.world.acquirer;
            let card_of = |a: AttemptId| acquirer.charges.get(&a).map(|c| c.card);
            let next = self.world.link.iter().find_map(|(msg, m)| match m {
                UpstreamMsg::Call(call) => cards::decision(call, waiting, card_of)
                    .map(|decision| Choice::Acquire { msg, decision }),
                UpstreamMsg::Reply(_) => Some(Choice::DeliverUpstream { msg }),
            });
            let Some(choice) = next else {
                return Ok(moved);
            };
            self.apply(choice)?;
            moved = true;
        }
        Err(format!(
            "the upstream link still moves after {STEPS_MAX} steps"
        ))
    }

    /// Moves the world's clock to `target`: every deadline on the way by `Tick` (the
    /// upstream driven after each), then the rest by `Advance`.
    fn move_world_to(&mut self, target: Millis) -> Result<(), String> {
        for _ in 0..STEPS_MAX {
            self.drive_link(false)?;
            match self.world.next_deadline() {
                Some(at) if at <= target => self.apply(Choice::Tick)?,
                _ => break,
            }
        }
        if self.world.now < target {
            self.apply(Choice::Advance(target.since(self.world.now)))?;
        }
        Ok(())
    }

    /// The branch the settings take where `request` reaches a branch point now.
    fn branch_for(&mut self, request: &ApiRequest) -> Option<Branch> {
        let point = self.world.platform.branch_point(self.world.now, request)?;
        let [a, b] = point.alternatives();
        Some(match self.settings.branches {
            Branches::A => a,
            Branches::B => b,
            Branches::Seeded => {
                self.draws += 1;
                if splitmix64(self.settings.seed ^ self.draws.rotate_left(32)) & 1 == 0 {
                    a
                } else {
                    b
                }
            }
        })
    }

    /// The session's event stream as JSON Lines (what `payhub-verify judge` reads).
    pub fn events_jsonl(&self) -> String {
        self.trace.to_events_jsonl()
    }
}

fn switched_off(control: Control) -> Control {
    match control {
        Control::SetRateLimited { merchant, .. } => Control::SetRateLimited {
            merchant,
            on: false,
        },
        Control::SetChannelPaused { .. } => Control::SetChannelPaused { on: false },
        other => other,
    }
}

/// SplitMix64: the seeded branch draws (no RNG crate for one bit per branch point).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
