//! The merchant side of the world: client models, their shared databases, their
//! requests' timeouts, crashes and restarts, and the business commands they are given.
//!
//! A client's `Send` becomes a request in flight with a deadline; the response, if it
//! arrives before the deadline, goes back as `Response`, otherwise the client gets
//! `Timeout` (TIMEOUT-01). A crash drops the process's open exchanges; late answers to
//! them are ignored by the world (the connection is gone). Draws (jitter, entropy for
//! random keys) come from a counter in the state, never from an RNG, so the checker and
//! a replay see the same values.

use crate::choice::Choice;
use crate::config::WorldConfig;
use crate::network::{Node, Payload};
use crate::trace::{Trace, What};
use crate::world::{ApplyError, Awaiting, World};
use payhub_model::client::{
    ClientInput, ClientOutput, Draw, MerchantDb, MerchantServer, Op, ServerConfig,
};
use payhub_model::{ApiResponse, Millis, PlatformInput, RequestId, WebhookEvent};

/// One server per client node, `None` for scripted nodes.
pub(crate) fn servers(config: &WorldConfig) -> Vec<Option<MerchantServer>> {
    let nodes = config
        .clients
        .iter()
        .map(|c| c.node as usize + 1)
        .chain(config.alphabet.iter().map(|(n, _)| *n as usize + 1))
        .max()
        .unwrap_or(0);
    (0..nodes)
        .map(|n| {
            config
                .client(n as u8)
                .map(|c| MerchantServer::new(ServerConfig::new(c.api_key, c.policy.clone())))
        })
        .collect()
}

/// One database per distinct `db` of the client specs.
pub(crate) fn databases(config: &WorldConfig) -> Vec<MerchantDb> {
    let n = config
        .clients
        .iter()
        .map(|c| c.db as usize + 1)
        .max()
        .unwrap_or(0);
    vec![MerchantDb::new(); n]
}

fn client_error(node: u8, e: payhub_model::client::ClientError) -> ApplyError {
    ApplyError::NotEnabled(format!("merchant-{node}: {e}"))
}

impl World {
    /// Commands, crashes and restarts the merchant side allows.
    pub(crate) fn enabled_merchants(&self, config: &WorldConfig, out: &mut Vec<Choice>) {
        for (i, item) in config.workload.iter().enumerate() {
            let up = self.server_up(item.node);
            if up && self.workload_used[i] < item.times {
                out.push(Choice::Command {
                    item: i as u16,
                    crash_after: false,
                });
                if self.budget.crashes > 0 {
                    out.push(Choice::Command {
                        item: i as u16,
                        crash_after: true,
                    });
                }
            }
        }
        for (node, server) in self.servers.iter().enumerate() {
            let Some(server) = server else { continue };
            if server.is_up() {
                if self.budget.crashes > 0 {
                    out.push(Choice::Crash {
                        merchant: node as u8,
                    });
                }
            } else {
                out.push(Choice::Restart {
                    merchant: node as u8,
                });
            }
        }
    }

    /// Client node `node`'s server (`None`: a scripted node or no such node).
    pub fn server(&self, node: u8) -> Option<&MerchantServer> {
        self.servers.get(node as usize).and_then(|s| s.as_ref())
    }

    /// Whether client node `node` has a server and it is running.
    pub fn server_up(&self, node: u8) -> bool {
        self.server(node).is_some_and(|s| s.is_up())
    }

    /// The next draw: jitter below 250 ms (or 0 without jitter) and fresh entropy.
    fn next_draw(&mut self, config: &WorldConfig, node: u8) -> Draw {
        let count = &mut self.draws[node as usize];
        *count += 1;
        let n = ((node as u64) << 32) | *count as u64;
        let jitter = if config.jitter {
            Millis((n.wrapping_mul(7_919)) % 250)
        } else {
            Millis::ZERO
        };
        Draw::new(jitter, n.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// Steps client `node` and routes its outputs. With `hold_sends`, what it would send
    /// is discarded (the process dies before it leaves).
    fn step_client(
        &mut self,
        config: &WorldConfig,
        node: u8,
        input: ClientInput,
        hold_sends: bool,
        mut trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        let spec = config
            .client(node)
            .ok_or_else(|| ApplyError::NotEnabled(format!("merchant-{node} runs no client")))?;
        let db = spec.db as usize;
        let mut out = Vec::new();
        let db_before = self.dbs[db].clone();
        let server = self.servers[node as usize].as_mut().expect("client node");
        server
            .step(self.now, &mut self.dbs[db], input, &mut out)
            .map_err(|e| client_error(node, e))?;
        if let Some(found) = self
            .facts
            .version_regression(spec.db, &db_before, &self.dbs[db])
        {
            self.facts.version_regressed = Some(found);
        }
        let mut acks = Vec::new();
        for output in out {
            match output {
                ClientOutput::Send {
                    handle,
                    request,
                    timeout,
                    rule,
                } => {
                    if hold_sends {
                        if let Some(t) = trace.as_deref_mut() {
                            let text = format!("{request} (never sent: the process died first)");
                            t.push(
                                self.now,
                                Node::Merchant(node),
                                Node::Merchant(node),
                                What::Decision { text },
                                Some(rule),
                            );
                        }
                        continue;
                    }
                    let op = self.server(node).and_then(|s| {
                        s.in_flight()
                            .find(|(h, _)| *h == handle)
                            .map(|(_, op)| op.clone())
                    });
                    let business = match &op {
                        Some(Op::Submit { order, seq }) => {
                            self.facts.on_submission_key(
                                spec.db,
                                order,
                                *seq,
                                request.idempotency_key.as_ref(),
                            );
                            Some((spec.db, order.clone()))
                        }
                        _ => None,
                    };
                    if let Some(t) = trace.as_deref_mut() {
                        let text = format!("sends {handle} (timeout {timeout})");
                        t.push(
                            self.now,
                            Node::Merchant(node),
                            Node::Merchant(node),
                            What::Decision { text },
                            Some(rule),
                        );
                    }
                    // The bug zoo's client facts (SCHED-02, RATE-03, GEN-05, UNKNOWN-03/04).
                    self.facts.on_client_send(self.now, config, node, &request);
                    let id = self.send_request(config, node, request, trace.as_deref_mut());
                    if let Some(o) = self.origins.get_mut(&id) {
                        o.business = business;
                    }
                    let deadline = self.now.after(timeout);
                    self.awaiting.insert(
                        id,
                        Awaiting {
                            node,
                            handle,
                            deadline,
                        },
                    );
                }
                ClientOutput::AckWebhook { event, .. } => acks.push(event),
                ClientOutput::Decision {
                    subject,
                    decision,
                    rule,
                } => {
                    if let Some(t) = trace.as_deref_mut() {
                        let text = format!("{subject}: {decision}");
                        t.push(
                            self.now,
                            Node::Merchant(node),
                            Node::Merchant(node),
                            What::Decision { text },
                            Some(rule),
                        );
                    }
                }
            }
        }
        if hold_sends {
            return Ok(());
        }
        for event in acks {
            self.step_platform(
                config,
                PlatformInput::WebhookAcked(event),
                trace.as_deref_mut(),
            )?;
        }
        Ok(())
    }

    /// A response reaches node `to`: a client gets it if it still waits for it.
    pub(crate) fn response_to_client(
        &mut self,
        config: &WorldConfig,
        to: u8,
        id: RequestId,
        response: ApiResponse,
        trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        let Some(awaiting) = self.awaiting.remove(&id) else {
            return Ok(()); // scripted sender, or a client that gave up or crashed
        };
        let draw = self.next_draw(config, to);
        let input = ClientInput::Response {
            handle: awaiting.handle,
            response,
            draw,
        };
        self.step_client(config, to, input, false, trace)
    }

    /// A webhook reaches client node `to` (it acknowledges it itself).
    pub(crate) fn webhook_to_client(
        &mut self,
        config: &WorldConfig,
        to: u8,
        event: WebhookEvent,
        trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        if !self.server(to).is_some_and(|s| s.is_up()) {
            return Ok(()); // nobody listens: the platform re-delivers if it does that
        }
        let draw = self.next_draw(config, to);
        self.step_client(
            config,
            to,
            ClientInput::Webhook { event, draw },
            false,
            trace,
        )
    }

    /// Workload item `item` is given to its node.
    pub(crate) fn command(
        &mut self,
        config: &WorldConfig,
        item: usize,
        crash_after: bool,
        mut trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        let work = config
            .workload
            .get(item)
            .ok_or_else(|| ApplyError::NotEnabled(format!("no workload item {item}")))?;
        if self.workload_used[item] >= work.times
            || !self.server(work.node).is_some_and(|s| s.is_up())
        {
            return Err(ApplyError::NotEnabled(format!("command {item}")));
        }
        if crash_after && self.budget.crashes == 0 {
            return Err(ApplyError::NotEnabled(format!("command {item} then crash")));
        }
        self.workload_used[item] += 1;
        if let Some(t) = trace.as_deref_mut() {
            let text = crate::trace::command_text(&work.command);
            t.push(
                self.now,
                Node::Env,
                Node::Merchant(work.node),
                What::Decision { text },
                None,
            );
        }
        let draw = self.next_draw(config, work.node);
        let input = ClientInput::Command {
            command: work.command.clone(),
            draw,
        };
        self.step_client(config, work.node, input, crash_after, trace.as_deref_mut())?;
        if crash_after {
            self.crash(config, work.node, trace)?;
        }
        Ok(())
    }

    /// Node `node` crashes: memory lost, open exchanges dropped, database kept.
    pub(crate) fn crash(
        &mut self,
        config: &WorldConfig,
        node: u8,
        trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        if self.budget.crashes == 0 || !self.server(node).is_some_and(|s| s.is_up()) {
            return Err(ApplyError::NotEnabled(format!("crash merchant-{node}")));
        }
        self.budget.crashes -= 1;
        let mut none = Vec::new();
        let spec = config.client(node).expect("a client node");
        let server = self.servers[node as usize].as_mut().expect("client node");
        server
            .step(
                self.now,
                &mut self.dbs[spec.db as usize],
                ClientInput::Crash,
                &mut none,
            )
            .map_err(|e| client_error(node, e))?;
        self.awaiting.retain(|_, a| a.node != node);
        self.facts.on_client_crash(node);
        if let Some(t) = trace {
            t.push(
                self.now,
                Node::Merchant(node),
                Node::Merchant(node),
                What::Crash,
                None,
            );
        }
        Ok(())
    }

    /// Node `node` restarts from its database.
    pub(crate) fn restart(
        &mut self,
        config: &WorldConfig,
        node: u8,
        mut trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        if self.server(node).is_none_or(|s| s.is_up()) {
            return Err(ApplyError::NotEnabled(format!("restart merchant-{node}")));
        }
        if let Some(t) = trace.as_deref_mut() {
            t.push(
                self.now,
                Node::Merchant(node),
                Node::Merchant(node),
                What::Restart,
                None,
            );
        }
        let draw = self.next_draw(config, node);
        self.step_client(config, node, ClientInput::Restart { draw }, false, trace)
    }

    /// Fires client request timeouts and client timers that are due, in a fixed order:
    /// timeouts by exchange, then wakes by node.
    pub(crate) fn fire_client_deadlines(
        &mut self,
        config: &WorldConfig,
        mut trace: Option<&mut Trace>,
    ) -> Result<(), ApplyError> {
        let due: Vec<(RequestId, Awaiting)> = self
            .awaiting
            .iter()
            .filter(|(_, a)| a.deadline <= self.now)
            .map(|(id, a)| (*id, a.clone()))
            .collect();
        for (id, a) in due {
            self.awaiting.remove(&id);
            if let Some(t) = trace.as_deref_mut() {
                t.push(
                    self.now,
                    Node::Merchant(a.node),
                    Node::Merchant(a.node),
                    What::Timeout { id },
                    Some(payhub_model::Rule::ClientTimeouts),
                );
            }
            let draw = self.next_draw(config, a.node);
            self.step_client(
                config,
                a.node,
                ClientInput::Timeout {
                    handle: a.handle,
                    draw,
                },
                false,
                trace.as_deref_mut(),
            )?;
        }
        for node in 0..self.servers.len() as u8 {
            let due = self
                .server(node)
                .and_then(|s| s.poll_timeout())
                .is_some_and(|t| t <= self.now);
            if due {
                self.step_client(config, node, ClientInput::Wake, false, trace.as_deref_mut())?;
            }
        }
        Ok(())
    }
}

/// Whether a payload is for a client node (used by the immediate inbox).
pub(crate) fn for_client(world: &World, payload: &Payload) -> bool {
    let to = match payload {
        Payload::Response { to, .. } | Payload::Webhook { to, .. } => *to,
        Payload::Request { .. } => return false,
    };
    world.server(to).is_some()
}
