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
use crate::event_fold::EventFold;
use crate::network::Payload;
use crate::sink::{Sink, shares};
use crate::world::{ApplyError, Awaiting, World};
use payhub_model::client::{
    ClientInput, ClientOutput, Draw, Handle, MerchantDb, MerchantServer, Op, OrderRecord,
    ServerConfig,
};
use payhub_model::event::{BusinessOrder, ShownOrder, StoredOrder, SubmissionRef, What};
use payhub_model::{ApiRequest, ApiResponse, Millis, PlatformInput, RequestId, Rule, WebhookEvent};

/// What happens after a command: the server goes on, or dies before anything it sends
/// leaves (a crash between persisting and sending).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Then {
    Run,
    Crash,
}

/// Whether what a client step sends leaves the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outbox {
    Send,
    /// The process dies first: nothing leaves.
    Hold,
}

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
            config.client(n as u8).map(|c| {
                let mut server = ServerConfig::new(c.api_key, c.policy.clone());
                server.params.after_503 = c.readings.after_503;
                server.params.after_429 = c.readings.after_429;
                MerchantServer::new(server)
            })
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

impl<F: EventFold> World<F> {
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

    /// Steps client `node`, emits what changed in its database, and routes its outputs.
    fn step_client(
        &mut self,
        config: &WorldConfig,
        node: u8,
        input: ClientInput,
        outbox: Outbox,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let spec = config
            .client(node)
            .ok_or_else(|| ApplyError::NotEnabled(format!("merchant-{node} runs no client")))?;
        let db = spec.db;
        let mut out = Vec::new();
        let db_before = self.dbs[db as usize].clone();
        let server = self.servers[node as usize].as_mut().expect("client node");
        server
            .step(self.now, &mut self.dbs[db as usize], input, &mut out)
            .map_err(|e| client_error(node, e))?;
        self.observe_db(node, db, &db_before, sink);
        let mut acks = Vec::new();
        for output in out {
            match output {
                ClientOutput::Send {
                    handle,
                    request,
                    timeout,
                    rule,
                } => self.client_send(config, node, handle, request, timeout, rule, outbox, sink),
                ClientOutput::AckWebhook { event, .. } => acks.push(event),
                ClientOutput::Decision {
                    subject,
                    decision,
                    rule,
                } => {
                    let read = F::reads_decision(&decision);
                    let what = What::ClientDecided {
                        node,
                        subject,
                        decision,
                        rule,
                    };
                    if read {
                        self.emit(sink, what);
                    } else {
                        self.note(sink, || what);
                    }
                }
            }
        }
        if outbox == Outbox::Hold {
            return Ok(());
        }
        for event in acks {
            self.step_platform(config, PlatformInput::WebhookAcked(event), sink)?;
        }
        Ok(())
    }

    /// Client `node` sends `request` as `handle`: an exchange with a deadline, unless the
    /// process dies before it leaves.
    #[allow(clippy::too_many_arguments)]
    fn client_send(
        &mut self,
        config: &WorldConfig,
        node: u8,
        handle: Handle,
        request: ApiRequest,
        timeout: Millis,
        rule: Rule,
        outbox: Outbox,
        sink: &mut Sink<'_>,
    ) {
        let owner = config.key_owner(request.api_key);
        if outbox == Outbox::Hold {
            let held = What::ClientSends {
                node,
                handle,
                request,
                owner,
                timeout,
                rule,
                submission: None,
                held: true,
            };
            match held.is_held_confirm() {
                true => self.emit(sink, held),
                false => self.note(sink, || held),
            }
            return;
        }
        let db = config.client(node).map_or(0, |c| c.db);
        let submission = self.server(node).and_then(|s| {
            s.in_flight()
                .find(|(h, _)| *h == handle)
                .and_then(|(_, op)| match op {
                    Op::Submit { order, seq } => Some(SubmissionRef {
                        db,
                        order: order.clone(),
                        seq: *seq,
                    }),
                    _ => None,
                })
        });
        let business = submission.as_ref().map(|s| BusinessOrder {
            db: s.db,
            order: s.order.clone(),
        });
        let sends = What::ClientSends {
            node,
            handle,
            request,
            owner,
            timeout,
            rule,
            submission,
            held: false,
        };
        self.emit_ref(sink, &sends);
        let What::ClientSends { request, .. } = sends else {
            unreachable!("built above")
        };
        let id = self.open_exchange(config, node, request, sink);
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

    /// Emits each order of database `db` that a step added or changed, as the stream sees
    /// it (payment, version, status): only that projection is compared; a recording also
    /// gets what each order says of its result ([`ShownOrder`], read by the liveness
    /// facts, with the schedule of node `node`, whose step it was). Orders are never
    /// removed, so with as many orders as `before` the i-th order is the same one on both
    /// sides; otherwise a new one was inserted and is looked up. A step that wrote no
    /// order still shares its records with `before` (copy-on-write): nothing to walk.
    fn observe_db(&mut self, node: u8, db: u8, before: &MerchantDb, sink: &mut Sink<'_>) {
        let stored = |o: &OrderRecord| StoredOrder {
            payment_id: o.payment_id,
            version: o.version(),
            status: o.status(),
        };
        // A copy (two reference counts) to emit while reading it.
        let after = self.dbs[db as usize].clone();
        if shares(before.orders().next(), after.orders().next()) {
            return;
        }
        // The liveness facts' view, built only for a recording (nobody else reads it).
        let params = (sink.recording())
            .then(|| self.server(node).map(|s| s.config().params.clone()))
            .flatten();
        let same_orders = before.orders().count() == after.orders().count();
        let mut was_orders = before.orders().peekable();
        for o in after.orders() {
            let was = if same_orders {
                was_orders.next()
            } else {
                match was_orders.peek() {
                    Some(w) if w.order_no == o.order_no => was_orders.next(),
                    _ => before.order(&o.order_no),
                }
            };
            debug_assert!(was.is_none_or(|w| w.order_no == o.order_no));
            if let Some(params) = &params {
                let shown = ShownOrder::of(o, params);
                if was.is_none_or(|w| ShownOrder::of(w, params) != shown) {
                    self.note(sink, || What::OrderShown {
                        db,
                        order_no: o.order_no.clone(),
                        shown,
                    });
                }
            }
            let (was, now) = (was.map(stored), stored(o));
            if was.as_ref() != Some(&now) {
                let what = What::OrderStored {
                    db,
                    order_no: o.order_no.clone(),
                    was,
                    stored: now,
                };
                self.emit(sink, what);
            }
        }
    }

    /// A response reaches node `to`: a client gets it if it still waits for it.
    pub(crate) fn response_to_client(
        &mut self,
        config: &WorldConfig,
        to: u8,
        id: RequestId,
        response: ApiResponse,
        sink: &mut Sink<'_>,
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
        self.step_client(config, to, input, Outbox::Send, sink)
    }

    /// A webhook reaches client node `to` (it acknowledges it itself).
    pub(crate) fn webhook_to_client(
        &mut self,
        config: &WorldConfig,
        to: u8,
        event: WebhookEvent,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        if !self.server(to).is_some_and(|s| s.is_up()) {
            return Ok(()); // nobody listens: the platform re-delivers if it does that
        }
        let draw = self.next_draw(config, to);
        let input = ClientInput::Webhook { event, draw };
        self.step_client(config, to, input, Outbox::Send, sink)
    }

    /// Workload item `item` is given to its node; with [`Then::Crash`] the node dies
    /// right after handling it, before anything it sends leaves.
    pub(crate) fn command(
        &mut self,
        config: &WorldConfig,
        item: usize,
        then: Then,
        sink: &mut Sink<'_>,
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
        if then == Then::Crash && self.budget.crashes == 0 {
            return Err(ApplyError::NotEnabled(format!("command {item} then crash")));
        }
        self.workload_used[item] += 1;
        let (node, command) = (work.node, work.command.clone());
        // Read by the traffic facts: a command opens a round (properties/src/facts/traffic.rs).
        self.emit_if(sink, false, || What::Commanded {
            node,
            command: command.clone(),
        });
        let draw = self.next_draw(config, node);
        let input = ClientInput::Command { command, draw };
        let outbox = match then {
            Then::Run => Outbox::Send,
            Then::Crash => Outbox::Hold,
        };
        self.step_client(config, node, input, outbox, sink)?;
        if then == Then::Crash {
            self.crash(config, node, sink)?;
        }
        Ok(())
    }

    /// Node `node` crashes: memory lost, open exchanges dropped, database kept.
    pub(crate) fn crash(
        &mut self,
        config: &WorldConfig,
        node: u8,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        if self.budget.crashes == 0 || !self.server(node).is_some_and(|s| s.is_up()) {
            return Err(ApplyError::NotEnabled(format!("crash merchant-{node}")));
        }
        self.budget.crashes -= 1;
        let mut none = Vec::new();
        let db = config.client(node).expect("a client node").db;
        let db_before = self.dbs[db as usize].clone();
        let server = self.servers[node as usize].as_mut().expect("client node");
        server
            .step(
                self.now,
                &mut self.dbs[db as usize],
                ClientInput::Crash,
                &mut none,
            )
            .map_err(|e| client_error(node, e))?;
        self.awaiting.retain(|_, a| a.node != node);
        self.observe_db(node, db, &db_before, sink);
        self.emit(sink, What::Crashed { node });
        Ok(())
    }

    /// Node `node` restarts from its database.
    pub(crate) fn restart(
        &mut self,
        config: &WorldConfig,
        node: u8,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        if self.server(node).is_none_or(|s| s.is_up()) {
            return Err(ApplyError::NotEnabled(format!("restart merchant-{node}")));
        }
        self.note(sink, || What::Restarted { node });
        let draw = self.next_draw(config, node);
        self.step_client(
            config,
            node,
            ClientInput::Restart { draw },
            Outbox::Send,
            sink,
        )
    }

    /// Fires client request timeouts and client timers that are due, in a fixed order:
    /// timeouts by exchange, then wakes by node.
    pub(crate) fn fire_client_deadlines(
        &mut self,
        config: &WorldConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let due: Vec<(RequestId, Awaiting)> = self
            .awaiting
            .iter()
            .filter(|(_, a)| a.deadline <= self.now)
            .map(|(id, a)| (*id, a.clone()))
            .collect();
        for (id, a) in due {
            self.awaiting.remove(&id);
            let node = a.node;
            self.emit(sink, What::TimedOut { node, id });
            let draw = self.next_draw(config, node);
            let input = ClientInput::Timeout {
                handle: a.handle,
                draw,
            };
            self.step_client(config, node, input, Outbox::Send, sink)?;
        }
        for node in 0..self.servers.len() as u8 {
            let due = self
                .server(node)
                .and_then(|s| s.poll_timeout())
                .is_some_and(|t| t <= self.now);
            if due {
                self.step_client(config, node, ClientInput::Wake, Outbox::Send, sink)?;
            }
        }
        Ok(())
    }
}

/// Whether a payload is for a client node (used by the immediate inbox).
pub(crate) fn for_client<F: EventFold>(world: &World<F>, payload: &Payload) -> bool {
    let to = match payload {
        Payload::Response { to, .. } | Payload::Webhook { to, .. } => *to,
        Payload::Request { .. } => return false,
    };
    world.server(to).is_some()
}
