//! The merchants' network as a fault domain: delivering, losing, duplicating a message,
//! and the platform edge's 500s, before or after executing (UNKNOWN-01).
//!
//! A request that reaches the platform is handled by [`World::deliver_request`]; what
//! the platform sends back goes out through [`World::send_to_merchant`].

use crate::config::WorldConfig;
use crate::event_fold::EventFold;
use crate::network::{MsgId, Payload};
use crate::sink::Sink;
use crate::world::{ApplyError, Origin, World, internal_error};
use payhub_model::event::{BusinessOrder, Handling, Message, ScopeKey, What};
use payhub_model::{ApiRequest, Branch, Platform, PlatformInput, PlatformOutput, RequestId};
use payhub_model::{StepError, WebhookEvent};

/// What the platform's edge does with a request it lets through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge {
    /// Passes the platform's answer on.
    Pass,
    /// Replaces the answer with a 500 once the platform has executed (UNKNOWN-01).
    Fail500After,
}

impl<F: EventFold> World<F> {
    /// A message in flight reaches its destination.
    pub(crate) fn deliver(
        &mut self,
        config: &WorldConfig,
        msg: MsgId,
        branch: Option<Branch>,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let payload = self
            .net
            .get_shared(msg)
            .ok_or_else(ApplyError::not_enabled)?;
        match &*payload {
            Payload::Request { from, id, request } => {
                self.deliver_request(config, msg, *from, *id, request, branch, Edge::Pass, sink)
            }
            Payload::Response { to, id, response } => {
                self.net.take(msg);
                let (to, id) = (*to, *id);
                // A client node's answers are read by the facts (what it is handling),
                // but only one it awaits reaches its code: the answer to a duplicated
                // request, or to one it gave up on or lost in a crash, is not read
                // (`response_to_client`) and is no input (`crate::inert`).
                if self.server(to).is_some() && self.awaits(id) {
                    let response = response.clone();
                    self.emit(sink, What::Delivered { id, to, response });
                } else if self.server(to).is_some() {
                    self.note(sink, || What::DeliveredUnread {
                        id,
                        to,
                        response: response.clone(),
                    });
                } else {
                    self.note(sink, || What::Delivered {
                        id,
                        to,
                        response: response.clone(),
                    });
                }
                self.response_to_client(config, to, id, response.clone(), sink)
            }
            Payload::Webhook { to, event } => {
                self.net.take(msg);
                self.deliver_webhook(config, *to, event, sink)
            }
        }
    }

    /// A webhook reaches node `to`: its client handles it; a scripted merchant
    /// acknowledges every webhook it receives.
    fn deliver_webhook(
        &mut self,
        config: &WorldConfig,
        to: u8,
        event: &WebhookEvent,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        self.note(sink, || What::WebhookDelivered {
            to,
            event: event.clone(),
        });
        if self.server(to).is_some() {
            self.webhook_to_client(config, to, event.clone(), sink)
        } else {
            self.step_platform(config, PlatformInput::WebhookAcked(event.id), sink)
        }
    }

    /// A message in flight is lost.
    pub(crate) fn drop_message(
        &mut self,
        msg: MsgId,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        if self.budget.drops == 0 {
            return Err(ApplyError::not_enabled());
        }
        let payload = self.net.take(msg).ok_or_else(ApplyError::not_enabled)?;
        self.budget.drops -= 1;
        self.note(sink, || What::Lost {
            message: message_of(&payload),
        });
        Ok(())
    }

    /// A message in flight is duplicated. A duplicated request is a second HTTP exchange:
    /// same bytes, new id; its answer reaches the merchant, which is not waiting for it.
    pub(crate) fn duplicate(&mut self, msg: MsgId, sink: &mut Sink<'_>) -> Result<(), ApplyError> {
        if self.budget.duplicates == 0 {
            return Err(ApplyError::not_enabled());
        }
        let payload = self
            .net
            .get_shared(msg)
            .ok_or_else(ApplyError::not_enabled)?;
        self.budget.duplicates -= 1;
        let copy = match &*payload {
            Payload::Request { from, id, request } => {
                self.next_request += 1;
                let copy = RequestId(self.next_request);
                if let Some(origin) = self.origins.get(id).cloned() {
                    self.origins.insert(copy, origin);
                }
                self.net.send(Payload::Request {
                    from: *from,
                    id: copy,
                    request: request.clone(),
                });
                Some(copy)
            }
            _ => {
                self.net.duplicate(msg);
                None
            }
        };
        self.note(sink, || What::Duplicated {
            message: message_of(&payload),
            copy,
        });
        Ok(())
    }

    /// The platform's edge answers a request 500 without letting it through.
    pub(crate) fn fail_500_before(
        &mut self,
        config: &WorldConfig,
        msg: MsgId,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let Some(&Payload::Request { from, id, .. }) = self.net.get(msg) else {
            return Err(ApplyError::not_enabled());
        };
        if self.budget.fail_500 == 0 {
            return Err(ApplyError::not_enabled());
        }
        self.budget.fail_500 -= 1;
        let taken = self.net.take(msg);
        if let Some(Payload::Request { request, .. }) = taken.as_deref() {
            self.note(sink, || What::Refused500 {
                id,
                from,
                request: request.clone(),
            });
        }
        self.origins.remove(&id);
        let response = internal_error();
        self.send_to_merchant(
            config,
            Payload::Response {
                to: from,
                id,
                response,
            },
            sink,
        );
        Ok(())
    }

    /// The platform executes a request, and its edge then answers 500.
    pub(crate) fn fail_500_after(
        &mut self,
        config: &WorldConfig,
        msg: MsgId,
        branch: Option<Branch>,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let payload = self
            .net
            .get_shared(msg)
            .ok_or_else(ApplyError::not_enabled)?;
        let Payload::Request { from, id, request } = &*payload else {
            return Err(ApplyError::not_enabled());
        };
        if self.budget.fail_500 == 0 {
            return Err(ApplyError::not_enabled());
        }
        self.deliver_request(
            config,
            msg,
            *from,
            *id,
            request,
            branch,
            Edge::Fail500After,
            sink,
        )?;
        self.budget.fail_500 -= 1;
        Ok(())
    }

    /// A request reaches the platform: the platform handles it, the world observes what
    /// the step did to its store, and routes its outputs.
    #[allow(clippy::too_many_arguments)]
    fn deliver_request(
        &mut self,
        config: &WorldConfig,
        msg: MsgId,
        from: u8,
        id: RequestId,
        request: &ApiRequest,
        branch: Option<Branch>,
        edge: Edge,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        // Check first, so that a refused delivery changes nothing.
        if let Some(point) = self.platform.branch_point(self.now, request) {
            let refused = match branch {
                Some(b) if b.point() == point => None,
                Some(b) => Some(StepError::WrongBranch { point, given: b }),
                None => Some(StepError::BranchRequired(point)),
            };
            if let Some(e) = refused {
                return Err(ApplyError::Platform(e));
            }
        }
        self.net.take(msg);
        if edge == Edge::Fail500After {
            if let Some(o) = self.origins.get_mut(&id) {
                o.fail_500 = true;
            }
        }
        self.note(sink, || What::Arrived {
            id,
            from,
            request: request.clone(),
        });
        let before = StoreCounts::of(&self.platform);
        let mut out = Vec::new();
        self.platform
            .step_request(self.now, id, request, branch, &mut out)
            .map_err(ApplyError::Platform)?;
        self.observe_store(sink);
        let owner = config.key_owner(request.api_key);
        let answer = out.iter().find_map(|o| match o {
            PlatformOutput::Response { to, response, .. } if *to == id => Some(response),
            _ => None,
        });
        // The answer is copied into the event only if someone reads it.
        let handling = handling(before, StoreCounts::of(&self.platform), &out);
        // Asked of the fold before the answer is copied into the event.
        let changes = self
            .facts
            .handling_changes(request, owner, answer, &handling);
        let business = self.origins.get(&id).and_then(|o| o.business.clone());
        self.emit_if(sink, changes, || What::Handled {
            id,
            request: request.clone(),
            owner,
            business,
            handling: Handling {
                answer: answer.cloned(),
                ..handling
            },
        });
        self.route_platform_outputs(config, out, Some(id), sink)
    }

    /// Opens HTTP exchange for `request` from `merchant`: a new request in flight.
    pub(crate) fn open_exchange(
        &mut self,
        config: &WorldConfig,
        merchant: u8,
        request: ApiRequest,
        sink: &mut Sink<'_>,
    ) -> RequestId {
        self.next_request += 1;
        let id = RequestId(self.next_request);
        self.note(sink, || What::Sent {
            id,
            from: merchant,
            request: request.clone(),
        });
        let owner = config.key_owner(request.api_key);
        let origin = Origin {
            merchant,
            scope: ScopeKey::of(owner, &request),
            owner,
            fail_500: false,
            business: None::<BusinessOrder>,
        };
        self.origins.insert(id, origin);
        self.net.send(Payload::Request {
            from: merchant,
            id,
            request,
        });
        id
    }

    /// Sends a response or webhook to a merchant: in flight, or (with an immediate inbox)
    /// delivered at once. Returns whether a webhook was delivered at once (to be acked).
    pub(crate) fn send_to_merchant(
        &mut self,
        config: &WorldConfig,
        payload: Payload,
        sink: &mut Sink<'_>,
    ) -> bool {
        if !config.immediate_inbox || crate::merchants::for_client(self, &payload) {
            self.net.send(payload);
            return false;
        }
        match payload {
            Payload::Response { to, id, response } => {
                self.note(sink, || What::Delivered { id, to, response });
                false
            }
            Payload::Webhook { to, event } => {
                self.note(sink, || What::WebhookDelivered { to, event });
                true
            }
            Payload::Request { .. } => {
                self.net.send(payload);
                false
            }
        }
    }
}

/// How many Payments, attempts, refunds, sessions and idempotency records the store
/// holds: read around a request's step to say how the store moved.
#[derive(Clone, Copy, PartialEq, Eq)]
struct StoreCounts {
    payments: usize,
    attempts: usize,
    refunds: usize,
    sessions: usize,
    records: usize,
}

impl StoreCounts {
    fn of(p: &Platform) -> Self {
        StoreCounts {
            payments: p.payments().len(),
            attempts: p.attempts().len(),
            refunds: p.refunds().len(),
            sessions: p.sessions().len(),
            records: p.records().len(),
        }
    }
}

/// What one request's step did, but its own answer (filled in by the caller): the calls
/// it sent, and how the store's counts moved (observed around the step, never reported
/// by the platform).
fn handling(before: StoreCounts, after: StoreCounts, out: &[PlatformOutput]) -> Handling {
    Handling {
        answer: None,
        calls: out
            .iter()
            .filter_map(|o| match o {
                PlatformOutput::Upstream { call, .. } => Some(call.clone()),
                _ => None,
            })
            .collect(),
        new_record: after.records > before.records,
        store_changed: after != before,
    }
}

/// A payload as the event stream names it.
fn message_of(payload: &Payload) -> Message {
    match payload {
        Payload::Request { from, id, request } => Message::Request {
            id: *id,
            from: *from,
            request: request.clone(),
        },
        Payload::Response { to, id, .. } => Message::Response { id: *id, to: *to },
        Payload::Webhook { to, event } => Message::Webhook {
            to: *to,
            event: event.clone(),
        },
    }
}
