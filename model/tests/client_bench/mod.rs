//! A hand-driven bench: merchant servers and their shared database against the real
//! platform of [`payhub_model::harness::Bench`], over a network the test scripts.
//!
//! Each request a server sends meets the next [`Fate`] of [`ClientBench::fates`]
//! (delivered when none is scripted); the platform's upstream calls wait until the test
//! decides them ([`ClientBench::upstream`]); [`ClientBench::advance`] moves time, firing
//! platform timers, server timers and client timeouts in time order. Webhooks go to
//! [`ClientBench::webhook_target`] and are acknowledged unless
//! [`ClientBench::ack_webhooks`] is off. The simulated world of `payhub-sim` does the
//! same with seeded faults; this bench exists so that tests can walk through one run.

#![allow(dead_code)] // each test binary uses its own subset

use payhub_model::acquirer::{AcquirerDecision, UpstreamCall};
use payhub_model::api::{ApiRequest, ApiResponse};
use payhub_model::api_keys::M1_TEST;
use payhub_model::branch::{Branch, BranchPoint};
use payhub_model::client::{
    ClientInput, ClientOutput, Command, Decision, Draw, Handle, MerchantDb, MerchantServer, Policy,
    ServerConfig, Subject,
};
use payhub_model::harness::Bench;
use payhub_model::ids::RequestId;
use payhub_model::rules::Rule;
use payhub_model::time::Millis;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What happens to one request on the network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Delivered; the platform's answer comes back.
    Deliver,
    /// Lost before the platform saw it: the client times out.
    LoseRequest,
    /// Delivered and executed; the answer is lost: the client times out.
    LoseResponse,
    /// Fails at once, never reaching the platform (connection refused).
    NetworkError,
    /// Answered by an edge proxy with this response, never reaching the platform.
    Answer(ApiResponse),
}

/// A request a server sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sent {
    pub at: Millis,
    pub server: usize,
    pub handle: Handle,
    pub request: ApiRequest,
    pub timeout: Millis,
    pub rule: Rule,
}

#[derive(Clone, Debug)]
struct Exchange {
    server: usize,
    handle: Handle,
    lose_response: bool,
}

/// Servers, database, platform and acquirer, driven by hand.
#[derive(Clone, Debug)]
pub struct ClientBench {
    /// Platform and acquirer.
    pub bench: Bench,
    /// The merchant's database, shared by every server.
    pub db: MerchantDb,
    pub servers: Vec<MerchantServer>,
    /// Every server output, with its time and server index.
    pub trace: Vec<(Millis, usize, ClientOutput)>,
    /// Fates of the next requests, in order; `Deliver` when empty.
    pub fates: VecDeque<Fate>,
    /// The branch taken where the contract allows two behaviours (default: the
    /// contract's first example).
    pub branches: BTreeMap<BranchPoint, Branch>,
    /// The server webhooks go to; `None` holds them back.
    pub webhook_target: Option<usize>,
    /// Acknowledge delivered webhooks (else the platform re-delivers them).
    pub ack_webhooks: bool,
    /// The jitter supplied with every input.
    pub jitter: Millis,
    next_entropy: u64,
    outbox: VecDeque<Sent>,
    exchanges: BTreeMap<RequestId, Exchange>,
    deadlines: BTreeSet<(Millis, usize, Handle)>,
    webhooks_seen: usize,
}

impl ClientBench {
    /// One server per policy, all with merchant 1's test key, sharing one database.
    pub fn new(policies: impl IntoIterator<Item = Policy>) -> ClientBench {
        let servers = policies
            .into_iter()
            .map(|p| MerchantServer::new(ServerConfig::new(M1_TEST, p)))
            .collect();
        ClientBench {
            bench: Bench::default(),
            db: MerchantDb::new(),
            servers,
            trace: Vec::new(),
            fates: VecDeque::new(),
            branches: BTreeMap::new(),
            webhook_target: Some(0),
            ack_webhooks: true,
            jitter: Millis::ZERO,
            next_entropy: 1,
            outbox: VecDeque::new(),
            exchanges: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            webhooks_seen: 0,
        }
    }

    /// One server with `policy`.
    pub fn one(policy: Policy) -> ClientBench {
        ClientBench::new([policy])
    }

    pub fn now(&self) -> Millis {
        self.bench.now
    }

    /// The draw for the next input: the bench's jitter and a fresh entropy.
    pub fn draw(&mut self) -> Draw {
        self.next_entropy += 1;
        Draw::new(self.jitter, self.next_entropy)
    }

    // ---- inputs -------------------------------------------------------------------

    /// A command to server `server`, then everything it causes at this instant.
    pub fn command(&mut self, server: usize, command: Command) {
        let draw = self.draw();
        self.input(server, ClientInput::Command { command, draw });
    }

    /// Any input to server `server`, then everything it causes at this instant.
    /// Panics on a driver error (the bench never makes one unless a test asks).
    pub fn input(&mut self, server: usize, input: ClientInput) {
        self.step(server, input);
        self.pump();
    }

    /// A command to server `server`, after which the process dies at once: the step's
    /// database writes are committed, none of its requests leaves (a crash "between
    /// persisting the key and sending").
    pub fn command_then_crash(&mut self, server: usize, command: Command) {
        let draw = self.draw();
        self.step(server, ClientInput::Command { command, draw });
        self.crash(server);
    }

    /// Loses every upstream call the platform has sent and the acquirer not yet seen.
    pub fn lose_upstream_calls(&mut self) {
        while !self.bench.upstream_queue.is_empty() {
            self.bench.drop_upstream();
        }
    }

    /// Crashes server `server`: its memory, its unsent requests and its exchanges go.
    pub fn crash(&mut self, server: usize) {
        self.outbox.retain(|s| s.server != server);
        self.exchanges.retain(|_, e| e.server != server);
        self.deadlines.retain(|(_, s, _)| *s != server);
        self.step(server, ClientInput::Crash);
    }

    /// Restarts server `server` from the database.
    pub fn restart(&mut self, server: usize) {
        let draw = self.draw();
        self.input(server, ClientInput::Restart { draw });
    }

    /// Decides the oldest upstream call; the platform's reactions follow.
    pub fn upstream(&mut self, decision: AcquirerDecision) -> UpstreamCall {
        let call = self.bench.upstream(decision);
        self.pump();
        call
    }

    /// Decides every queued upstream call the same way.
    pub fn settle(&mut self, decision: AcquirerDecision) {
        while !self.bench.upstream_queue.is_empty() {
            self.upstream(decision);
        }
    }

    /// Moves time forward by `d`, firing platform timers, client timeouts and server
    /// timers in time order, and delivering everything they cause.
    pub fn advance(&mut self, d: Millis) {
        let until = self.now().after(d);
        loop {
            let servers = self
                .servers
                .iter()
                .filter(|s| s.is_up())
                .filter_map(MerchantServer::poll_timeout);
            let next = [
                self.bench.platform.next_timer(),
                self.deadlines.first().map(|(at, _, _)| *at),
            ]
            .into_iter()
            .flatten()
            .chain(servers)
            .min();
            let Some(at) = next.filter(|at| *at <= until) else {
                break;
            };
            let at = at.max(self.now());
            self.bench.advance(at.since(self.bench.now));
            self.pump();
            while let Some(&(due, server, handle)) = self.deadlines.first() {
                if due > at {
                    break;
                }
                self.deadlines.pop_first();
                self.exchanges
                    .retain(|_, e| !(e.server == server && e.handle == handle));
                let draw = self.draw();
                self.step(server, ClientInput::Timeout { handle, draw });
            }
            for server in 0..self.servers.len() {
                let due = self.servers[server].poll_timeout().is_some_and(|t| t <= at);
                if due && self.servers[server].is_up() {
                    self.step(server, ClientInput::Wake);
                }
            }
            self.pump();
        }
        self.bench.advance(until.since(self.bench.now));
        self.pump();
    }

    /// Delivers every webhook held back to server `server`.
    pub fn deliver_webhooks(&mut self, server: usize) {
        while self.webhooks_seen < self.bench.webhooks.len() {
            let event = self.bench.webhooks[self.webhooks_seen].clone();
            self.webhooks_seen += 1;
            let draw = self.draw();
            self.step(server, ClientInput::Webhook { event, draw });
        }
        self.pump();
    }

    // ---- what happened ------------------------------------------------------------

    /// Every request sent, in order.
    pub fn sent(&self) -> Vec<Sent> {
        self.trace
            .iter()
            .filter_map(|(at, server, o)| match o {
                ClientOutput::Send {
                    handle,
                    request,
                    timeout,
                    rule,
                } => Some(Sent {
                    at: *at,
                    server: *server,
                    handle: *handle,
                    request: request.clone(),
                    timeout: *timeout,
                    rule: *rule,
                }),
                _ => None,
            })
            .collect()
    }

    /// Every decision, in order: (time, server, subject, decision, rule).
    pub fn decisions(&self) -> Vec<(Millis, usize, Subject, Decision, Rule)> {
        self.trace
            .iter()
            .filter_map(|(at, server, o)| match o {
                ClientOutput::Decision {
                    subject,
                    decision,
                    rule,
                } => Some((*at, *server, subject.clone(), decision.clone(), *rule)),
                _ => None,
            })
            .collect()
    }

    /// The trace, one line per output: `12.000s merchant-0 send h0.1 POST …`.
    pub fn trace_lines(&self) -> Vec<String> {
        self.trace
            .iter()
            .map(|(at, server, o)| format!("{at} merchant-{server} {o}"))
            .collect()
    }

    // ---- plumbing -----------------------------------------------------------------

    fn step(&mut self, server: usize, input: ClientInput) {
        let mut out = Vec::new();
        let now = self.now();
        self.servers[server]
            .step(now, &mut self.db, input, &mut out)
            .unwrap_or_else(|e| panic!("merchant-{server}: {e}"));
        for o in out {
            match &o {
                ClientOutput::Send {
                    handle,
                    request,
                    timeout,
                    rule,
                } => self.outbox.push_back(Sent {
                    at: now,
                    server,
                    handle: *handle,
                    request: request.clone(),
                    timeout: *timeout,
                    rule: *rule,
                }),
                ClientOutput::AckWebhook { event, .. } if self.ack_webhooks => {
                    self.bench.ack(*event);
                }
                _ => {}
            }
            self.trace.push((now, server, o));
        }
    }

    /// Delivers everything that happens at this instant: requests, answers, webhooks.
    fn pump(&mut self) {
        loop {
            let mut progressed = false;
            while let Some(sent) = self.outbox.pop_front() {
                self.deliver(sent);
                progressed = true;
            }
            let answered: Vec<RequestId> = self
                .exchanges
                .keys()
                .copied()
                .filter(|id| self.bench.response(*id).is_some())
                .collect();
            for id in answered {
                let exchange = self.exchanges.remove(&id).expect("listed");
                if exchange.lose_response {
                    continue; // the deadline stays: the client times out
                }
                let response = self.bench.answered(id).clone();
                self.answer(exchange.server, exchange.handle, response);
                progressed = true;
            }
            if let Some(target) = self.webhook_target
                && self.servers[target].is_up()
                && self.webhooks_seen < self.bench.webhooks.len()
            {
                let event = self.bench.webhooks[self.webhooks_seen].clone();
                self.webhooks_seen += 1;
                let draw = self.draw();
                self.step(target, ClientInput::Webhook { event, draw });
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
    }

    fn deliver(&mut self, sent: Sent) {
        let Sent {
            server,
            handle,
            request,
            timeout,
            ..
        } = sent;
        self.deadlines
            .insert((self.now().after(timeout), server, handle));
        match self.fates.pop_front().unwrap_or(Fate::Deliver) {
            Fate::LoseRequest => {}
            Fate::NetworkError => {
                self.deadlines
                    .retain(|(_, s, h)| !(*s == server && *h == handle));
                let draw = self.draw();
                self.step(server, ClientInput::NetworkError { handle, draw });
            }
            Fate::Answer(response) => self.answer(server, handle, response),
            fate @ (Fate::Deliver | Fate::LoseResponse) => {
                let now = self.now();
                let branch = self.bench.platform.branch_point(now, &request).map(|p| {
                    self.branches
                        .get(&p)
                        .copied()
                        .unwrap_or(p.alternatives()[0])
                });
                let id = self
                    .bench
                    .try_send(request, branch)
                    .unwrap_or_else(|e| panic!("platform refused: {e}"));
                let lose_response = fate == Fate::LoseResponse;
                self.exchanges.insert(
                    id,
                    Exchange {
                        server,
                        handle,
                        lose_response,
                    },
                );
            }
        }
    }

    fn answer(&mut self, server: usize, handle: Handle, response: ApiResponse) {
        self.deadlines
            .retain(|(_, s, h)| !(*s == server && *h == handle));
        if !self.servers[server].is_up() {
            return;
        }
        let draw = self.draw();
        self.step(
            server,
            ClientInput::Response {
                handle,
                response,
                draw,
            },
        );
    }
}
