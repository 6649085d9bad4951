//! The sandbox's sans-IO core: the simulated world as the session's state, stepped by a
//! live driver.
//!
//! An HTTP request becomes a `Choice::Send` from the node of its API key and a
//! `Choice::Deliver`, with the branch `--branches` picks at the contract's "A or B" points.
//! The upstream is driven by the request's test card, and while the platform waits for
//! time (the ~15 s synchronous wait, a concurrent same-key wait) the clock jumps to the next
//! deadline (`Choice::Tick`). Every step is a choice of the world, recorded in the tape and
//! trace: the events, the verdict and the script come from them.
//!
//! Time never goes back: under `--clock real` the session runs ahead of the wall clock by
//! the waits it jumped; under `--clock manual` only [`Sandbox::advance`] moves it. While a
//! call is held until a time (`slow_upstream`) the clock does not jump: the exchange is
//! [`Step::Pending`] and the edge polls it, so a concurrent request (S5) meets it in
//! flight. Errors of the world are answered 500 and kept for the edge to print.

use super::business::Orders;
use super::faults::{Action, Faults, Plan, WebhookAction};
use super::record::Record;
use super::webhooks::{Outbox, Outgoing};
use crate::http_map::{self, HttpReply, HttpRequest};
use crate::serve::seam::EdgeSeam;
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::{
    ApiRequest, ApiResponse, AttemptId, Branch, Control, Environment, MerchantId, Millis,
    PaymentId, RequestId,
};
use payhub_properties::World;
use payhub_sim::network::{MsgId, Payload};
use payhub_sim::{Choice, Trace, WorldConfig};
use std::collections::BTreeMap;
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
    /// Whether webhooks go out (`--webhooks URL`): each (merchant, environment) to the
    /// node of its key; without it the platform emits them to nobody.
    pub webhooks: bool,
    /// A planted bug of the zoo (`serve --mutant NAME`): a platform mutant through
    /// `WorldConfig::variant`, or a wrong contract number through the parameters.
    pub planted: Planted,
    /// The edge's decision points: the reference, or a defect of the edge zoo planted
    /// in the HTTP mapping or the fault plan (`crate::edges`).
    pub seam: EdgeSeam,
}

/// The platform a session runs: the reference, or one planted bug of the zoo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Planted {
    #[default]
    Reference,
    Mutant(payhub_model::Mutant),
    Parameter(payhub_model::ParameterMutant),
}

/// The latest time a session's clock reaches: 1000 years (far from `u64::MAX`, where
/// timers would saturate at one instant).
pub const CLOCK_MAX: Millis = Millis(365_000 * 86_400_000);

/// Merchant 2's session numbers its ids after this (`pay_demo_500001`, `att_500001`,
/// `evt_500001`, …); merchant 1's from 1, as the contract's examples do.
pub const MERCHANT_2_IDS_FROM: u32 = 500_000;

/// The events export's index once the journal's events are written: nothing follows.
const JOURNAL_EXPORTED: usize = usize::MAX;

pub struct Sandbox {
    settings: Settings,
    config: WorldConfig,
    world: World,
    /// The trace and the tape, bounded ([`super::record`]).
    record: Record,
    /// The edge time at which this world's clock reads 0 (set at the last reset).
    epoch: Millis,
    /// The Unix time (ms) of edge time 0: the wall clock when the edge started under
    /// `--clock real`, 0 (1970-01-01T00:00:00Z) under `--clock manual`.
    edge_zero_ms: i64,
    faults: Faults,
    orders: Orders,
    /// What the merchant told of its database ([`super::journal`]).
    journal: super::journal::Journal,
    draws: u64,
    /// Exchanges waiting for their answer, in arrival order.
    pending: Vec<Exchange>,
    /// Upstream calls the acquirer does not decide yet, and until when.
    held: BTreeMap<MsgId, Release>,
    /// The exchange being stepped, and how long its upstream takes (`slow_upstream`).
    current: Option<(RequestId, Option<Millis>)>,
    /// The upstream link's messages seen so far (ids only grow).
    link_seen: Option<MsgId>,
    outbox: Outbox,
    errors: Vec<String>,
    /// Objects the API may create (`serve --objects-max`).
    bound: bound::ObjectBound,
}

/// What one HTTP request came to.
#[derive(Debug)]
pub enum Step {
    Answered(HttpReply),
    /// The platform holds the exchange while an upstream call is held on the wire
    /// (`slow_upstream`): ask again with [`Sandbox::poll`] as time passes.
    Pending(RequestId),
}

/// An exchange in the world, from its send to its answer.
#[derive(Clone, Debug)]
struct Exchange {
    id: RequestId,
    owner: Option<(MerchantId, Environment)>,
    request: ApiRequest,
    action: Option<Action>,
    /// A control switched on for this exchange alone (429, 503), switched off after it.
    control: Option<Control>,
    /// How long its upstream calls take (`slow_upstream`).
    slow: Option<Millis>,
    /// How long its answer is held (`hold`), and, once the answer is in flight, until when.
    hold: Option<Millis>,
    held_until: Option<Millis>,
    /// Nobody waits for the answer any more (the client went away): it is lost.
    abandoned: bool,
}

/// When a held upstream call may be decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Release {
    /// At this world time (`slow_upstream`).
    At(Millis),
    /// Once this exchange has its answer (the slow test card: the 202 comes first).
    AfterAnswer(RequestId),
}

impl Sandbox {
    pub fn new(settings: Settings) -> Sandbox {
        // The live edge's world with the plan's `Retry-After`.
        let mut params = payhub_model::PlatformParams::default();
        params.retry_after_s = settings.plan.retry_after_s.or(params.retry_after_s);
        let mut config = payhub_sim::worlds::edge(params, settings.webhooks);
        match settings.planted {
            Planted::Reference => {}
            Planted::Mutant(m) => config.variant = payhub_model::Variant::planted(m),
            Planted::Parameter(m) => config.params = m.apply(config.params),
        }
        // What the text and drawings call each key's sender (`merchant 2 (ak_3)`, as
        // `?merchant=` names it); node numbers stay in events, tapes and scripts.
        let keys = default_api_keys().into_iter().chain([rotated_key_spec()]);
        let node_names = keys.map(|k| {
            let name = format!("merchant {} ({})", k.merchant.0, k.id);
            (payhub_sim::network::Node::Merchant(node_of(k.id)), name)
        });
        Sandbox {
            world: World::new(&config),
            config,
            record: Record::named(node_names),
            epoch: Millis::ZERO,
            edge_zero_ms: 0,
            faults: Faults::new(settings.plan.clone(), settings.seed),
            orders: Orders::default(),
            journal: Default::default(),
            draws: 0,
            pending: Vec::new(),
            held: BTreeMap::new(),
            current: None,
            link_seen: None,
            outbox: Outbox::default(),
            errors: Vec::new(),
            settings,
            bound: bound::ObjectBound::default(),
        }
    }

    /// The session with its identifiers numbered after `n` (`pay_demo_500001` for
    /// 500000): merchant 2's session ([`MERCHANT_2_IDS_FROM`]), so that no id of one
    /// merchant's session is also the other's. Kept across resets; an exported script
    /// carries it (`use ids_from=N`).
    pub fn with_ids_from(mut self, n: u32) -> Sandbox {
        self.config.params.ids_from = n;
        self.world = World::new(&self.config);
        self
    }

    /// The session with edge time 0 at Unix time `ms` (`--clock real`: when the edge
    /// started). Kept across resets.
    pub fn with_edge_zero(mut self, ms: i64) -> Sandbox {
        self.edge_zero_ms = ms;
        self
    }

    /// The Unix time (ms) at which this world's clock reads 0: what the sandbox's bodies
    /// add to the model's times to write them as dates (RFC 3339 UTC).
    pub fn clock_origin_ms(&self) -> i64 {
        self.edge_zero_ms
            .saturating_add(i64::try_from(self.epoch.0).unwrap_or(i64::MAX))
    }

    /// Starts a new session at edge time `now`: a new world, tape, fault counters.
    /// Exchanges still pending are answered by nothing (their clients see the reset).
    pub fn reset(&mut self, now: Millis) {
        let settings = self.settings.clone();
        let ids_from = self.config.params.ids_from;
        let (edge_zero, max) = (self.edge_zero_ms, self.bound.max);
        *self = Sandbox::new(settings)
            .with_ids_from(ids_from)
            .with_edge_zero(edge_zero)
            .with_objects_max(max);
        self.epoch = now;
    }

    /// Replaces the fault plan (its counters start at 0; `retry_after_s` applies from
    /// the next reset, since the platform's parameters are fixed for a session).
    pub fn set_plan(&mut self, plan: Plan) {
        self.faults = Faults::new(plan.clone(), self.settings.seed);
        self.settings.plan = plan;
    }

    pub fn plan(&self) -> &Plan {
        self.faults.plan()
    }

    /// The session's time in edge time (what `--clock manual` reads).
    pub fn now(&self) -> Millis {
        self.epoch.after(self.world.now)
    }

    pub fn world(&self) -> &World {
        &self.world
    }

    pub fn config(&self) -> &WorldConfig {
        &self.config
    }

    /// The current segment of the session's trace (the record holds the one before too).
    pub fn trace(&self) -> &Trace {
        self.record.segments()[1]
    }

    /// The session's trace and tape.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// Hands the events recorded since the last call to `f` (`--tape FILE`), and lets the
    /// record rotate its trace: the edge calls it after every call into the core.
    pub fn hand_out_events(&mut self, f: impl FnMut(&payhub_model::event::Event)) {
        self.record.hand_out(f);
    }

    /// At most `n` of the session's events from the `from`-th as the events export
    /// writes them (JSON Lines, [`Record::events_jsonl_from`]), and the index after them;
    /// past the last, the merchant journal's events once ([`Sandbox::journal_jsonl`]),
    /// then nothing.
    pub fn events_export_from(&self, from: usize, n: usize) -> Result<(String, usize), String> {
        if from == JOURNAL_EXPORTED {
            return Ok((String::new(), from));
        }
        let seam = self.settings.seam;
        self.record.events_jsonl_from(from, n).map(|(text, next)| {
            if text.is_empty() {
                return (self.journal_jsonl(), JOURNAL_EXPORTED);
            }
            let kept: String = text
                .split_inclusive('\n')
                .filter(|line| seam.exports_event(line))
                .collect();
            (kept, next)
        })
    }

    /// Errors of the world since the last call (each answered 500).
    pub fn take_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.errors)
    }

    fn failed(&mut self, e: String) -> HttpReply {
        if self.errors.len() < 100 {
            self.errors.push(e);
        }
        HttpReply::from_response(&payhub_sim::world::internal_error())
    }

    /// Answers one HTTP request at edge time `now`, or leaves it pending.
    pub fn handle(&mut self, now: Millis, http: &HttpRequest) -> Step {
        match self.exchange(now, http) {
            Ok(step) => step,
            Err(e) => Step::Answered(self.failed(e)),
        }
    }

    /// A pending exchange at edge time `now`: its answer, or `None` while it waits.
    pub fn poll(&mut self, now: Millis, id: RequestId) -> Option<HttpReply> {
        // Time moves only when something comes due: a poll every few milliseconds would
        // otherwise put an `advance` on the tape each time.
        let moved = if self.due_by(now) {
            self.move_world_to(now.since(self.epoch))
        } else {
            Ok(())
        };
        let polled = moved.and_then(|()| {
            self.reap();
            self.progress(id)
        });
        match polled {
            Ok(reply) => reply,
            Err(e) => {
                self.pending.retain(|x| x.id != id);
                Some(self.failed(e))
            }
        }
    }

    /// The world times at which something comes due: a held call's release, the end of
    /// a held answer, the world's next deadline.
    fn due(&self) -> impl Iterator<Item = Millis> + '_ {
        let holds = self.pending.iter().filter_map(|x| x.held_until);
        let release = self.next_release().into_iter();
        release.chain(holds).chain(self.world.next_deadline())
    }

    /// Whether something comes due by edge time `now`.
    fn due_by(&self, now: Millis) -> bool {
        self.due().any(|t| self.epoch.after(t) <= now)
    }

    /// When, in edge time, something is next due for a pending exchange.
    pub fn wake_at(&self) -> Option<Millis> {
        let next = self.due().min().filter(|_| !self.pending.is_empty());
        next.map(|t| self.epoch.after(t))
    }

    /// Under the real clock, fires what has come due by edge time `now` (re-deliveries,
    /// the platform's own queries, a held call of an abandoned exchange) even when no
    /// request arrives; nothing if nothing is due or an exchange is waited for.
    pub fn catch_up(&mut self, now: Millis) {
        if self.due_by(now) && self.pending.iter().all(|x| x.abandoned) {
            if let Err(e) = self.move_world_to(now.since(self.epoch)) {
                self.errors.push(e);
            }
            self.reap();
        }
    }

    /// Moves the session's clock forward by `by`, firing every timer due on the way
    /// (the upstream driven after each); returns the session's new world time.
    pub fn advance(&mut self, by: Millis) -> Result<Millis, String> {
        if by > payhub_sim::script::DURATION_MAX {
            return Err(format!(
                "a move of the clock is at most 36500d (the bound of one advance), not {by}"
            ));
        }
        if self.world.now.0.saturating_add(by.0) > CLOCK_MAX.0 {
            return Err(format!(
                "the session's clock stops at {CLOCK_MAX} (the bound of a session's time): reset the session to go on"
            ));
        }
        let target = self.world.now.after(by);
        self.move_world_to(target)?;
        Ok(self.world.now)
    }

    /// Switches one of the platform's own inputs at edge time `now` until switched back
    /// (`POST /__sandbox/controls`): the merchant's rate limit (429 with `Retry-After`)
    /// or the paused channel (503 `temporarily_unavailable`). The platform answers them
    /// itself, so a planted bug in how it does shows.
    pub fn control(&mut self, now: Millis, control: Control) -> Result<(), String> {
        self.move_world_to(now.since(self.epoch))?;
        self.reap();
        self.apply(Choice::Control(control))?;
        self.drive_link().map(|_| ())
    }

    /// The payer completes (or fails) the authentication of `payment`'s `requires_action`
    /// charge; the platform learns of it by querying (RES-05), as time passes.
    pub fn authenticate(&mut self, payment: PaymentId, ok: bool) -> Result<AttemptId, String> {
        let acquirer = &self.world.acquirer;
        let charged = |a: &AttemptId| {
            acquirer
                .charges
                .get(a)
                .is_some_and(|c| c.payment == payment)
        };
        let attempt = (acquirer.awaiting_payer().find(charged))
            .ok_or_else(|| format!("{payment} has no charge waiting for authentication"))?;
        self.apply(Choice::Authenticate { attempt, ok })?;
        self.drive_link().map(|_| attempt)
    }

    fn exchange(&mut self, now: Millis, http: &HttpRequest) -> Result<Step, String> {
        self.move_world_to(now.since(self.epoch))?;
        self.reap();
        let idempotency_key = self
            .settings
            .seam
            .idempotency_key(http.idempotency_key.clone());
        let http = &HttpRequest {
            idempotency_key,
            ..http.clone()
        };
        let request = match http_map::to_api_request(http) {
            Ok(r) => r,
            Err(edge_answer) => return Ok(Step::Answered(edge_answer)),
        };
        let owner = self.config.key_owner(request.api_key);
        let rule = self.faults.next(&request).cloned();
        let action = rule.as_ref().map(|r| self.settings.seam.fault(r.action));
        let ms = rule.as_ref().and_then(|r| r.ms).map(Millis);
        let slow = ms.filter(|_| action == Some(Action::SlowUpstream));
        let hold = ms.filter(|_| action == Some(Action::Hold));
        let control = match (action, owner) {
            (Some(Action::RateLimited), Some((merchant, _))) => {
                Some(Control::SetRateLimited { merchant, on: true })
            }
            (Some(Action::Unavailable), _) => Some(Control::SetChannelPaused { on: true }),
            _ => self.past_bound(&request, owner),
        };
        if let Some(c) = &control {
            self.apply(Choice::Control(c.clone()))?;
        }
        upstream::top_up(&mut self.world);
        let business = self.orders.business_of(owner, &request);
        self.apply(Choice::Send {
            merchant: node_of(request.api_key),
            request: Arc::new(request.clone()),
        })?;
        let (msg, id) =
            upstream::newest_request(&self.world).ok_or("the sent request is not in flight")?;
        if let (Some(b), Some(origin)) = (business, self.world.origins.get_mut(&id)) {
            origin.business = Some(b);
        }
        self.pending.push(Exchange {
            id,
            owner,
            request: request.clone(),
            action,
            control,
            slow,
            hold,
            held_until: None,
            abandoned: false,
        });
        self.current = Some((id, slow));
        let delivered = match action {
            Some(Action::ResetBefore) => self.apply(Choice::Drop { msg }),
            Some(Action::Fail500Before) => self.apply(Choice::Fail500Before { msg }),
            Some(Action::Fail500After) => {
                let branch = self.branch_for(&request);
                self.apply(Choice::Fail500After { msg, branch })
            }
            _ => {
                let branch = self.branch_for(&request);
                self.apply(Choice::Deliver { msg, branch })
            }
        };
        self.current = None;
        delivered?;
        if action == Some(Action::ResetBefore) {
            let x = self.take_pending(id);
            self.orders.observe(x.owner, &x.request, None);
            self.switch_off(x.control)?;
            return Ok(Step::Answered(HttpReply::reset()));
        }
        Ok(match self.progress(id)? {
            Some(reply) => Step::Answered(reply),
            None => Step::Pending(id),
        })
    }

    fn take_pending(&mut self, id: RequestId) -> Exchange {
        let i = self
            .pending
            .iter()
            .position(|x| x.id == id)
            .expect("a pending exchange");
        self.pending.remove(i)
    }

    fn switch_off(&mut self, control: Option<Control>) -> Result<(), String> {
        let off = match control {
            Some(Control::SetRateLimited { merchant, .. }) => Control::SetRateLimited {
                merchant,
                on: false,
            },
            Some(Control::SetChannelPaused { .. }) => Control::SetChannelPaused { on: false },
            Some(other) => other,
            None => return Ok(()),
        };
        self.apply(Choice::Control(off))
    }

    /// Steps pending exchange `id` towards its answer: the upstream first, then, with
    /// nothing left to decide and no call held on the wire, the clock to the next
    /// deadline. Its answer once it is in flight (delivered, or lost for a fault), or
    /// `None` while a held call makes it wait for time to pass.
    fn progress(&mut self, id: RequestId) -> Result<Option<HttpReply>, String> {
        let Some(slow) = self.pending.iter().find(|x| x.id == id).map(|x| x.slow) else {
            return Err(format!("{id} is not pending"));
        };
        for _ in 0..STEPS_MAX {
            if let Some((answer, response)) = upstream::answer_in_flight(&self.world, id) {
                // Its answer is held (`hold`) until a later time, from when it is first seen.
                let now = self.world.now;
                let x = self.pending.iter_mut().find(|x| x.id == id);
                let held = x.and_then(|x| {
                    let until = *x.held_until.get_or_insert(now.after(x.hold?));
                    Some(now < until && !x.abandoned)
                });
                if held == Some(true) {
                    return Ok(None);
                }
                return self.finish(id, answer, response).map(Some);
            }
            self.current = Some((id, slow));
            let moved = self.drive_link();
            self.current = None;
            if moved? {
                continue;
            }
            if self.next_release().is_some() {
                return Ok(None);
            }
            if self.world.next_deadline().is_none() {
                return Err(format!("{id}: unanswered, and nothing is due"));
            }
            self.apply(Choice::Tick)?;
        }
        Err(format!("{id}: unanswered after {STEPS_MAX} steps"))
    }

    /// The next time a call held until a time is released, if one is still held.
    fn next_release(&self) -> Option<Millis> {
        self.held
            .values()
            .filter_map(|r| match r {
                Release::At(t) if *t > self.world.now => Some(*t),
                _ => None,
            })
            .min()
    }

    /// The exchange's answer is in flight: lost (reset after executing, an abandoned
    /// client) or delivered; its control switched off.
    fn finish(
        &mut self,
        id: RequestId,
        answer: MsgId,
        response: ApiResponse,
    ) -> Result<HttpReply, String> {
        let x = self.take_pending(id);
        self.drive_link()?;
        let lost = x.action == Some(Action::ResetAfter) || x.abandoned;
        let reply = if lost {
            self.apply(Choice::Drop { msg: answer })?;
            self.orders.observe(x.owner, &x.request, None);
            HttpReply::reset()
        } else {
            self.apply(Choice::Deliver {
                msg: answer,
                branch: None,
            })?;
            self.orders.observe(x.owner, &x.request, Some(&response));
            let seam = self.settings.seam;
            let reply = HttpReply::from_response_at(&response, self.clock_origin_ms());
            HttpReply {
                status: seam.status(reply.status),
                retry_after_s: seam.retry_after(reply.retry_after_s),
                ..reply
            }
        };
        self.switch_off(x.control)?;
        Ok(reply)
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
                let draw =
                    super::faults::splitmix64(self.settings.seed ^ self.draws.rotate_left(32));
                if draw & 1 == 0 { a } else { b }
            }
        })
    }
}

pub use payhub_sim::worlds::node_of;

mod abandon;
mod bound;
mod fill;
mod journal;
pub(crate) mod upstream;
mod webhooks;
pub use bound::OBJECTS_MAX;
#[cfg(test)]
pub(crate) mod tests;
