//! The platform's side of the world: stepping it with an input, observing what the step
//! did to its store, and routing its outputs (answers to their merchants, calls onto the
//! upstream link, webhooks to the merchant's endpoint).

use crate::config::WorldConfig;
use crate::network::{Payload, UpstreamMsg};
use crate::sink::Sink;
use crate::world::{ApplyError, World, internal_error};
use payhub_model::event::{Owner, Route, StoredAttempt, StoredPayment, StoredRefund, What};
use payhub_model::platform::state::{Attempt, Payment, Refund};
use payhub_model::{
    ApiResponse, Environment, MerchantId, Platform, PlatformInput, PlatformOutput, RequestId,
    ResponseBody,
};

impl World {
    /// Steps the platform with an input other than a request and routes its outputs.
    pub(crate) fn step_platform(
        &mut self,
        config: &WorldConfig,
        input: PlatformInput,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let before = self.platform.clone();
        let mut out = Vec::new();
        self.platform
            .step(self.now, input, &mut out)
            .map_err(ApplyError::Platform)?;
        self.observe_store(&before, sink);
        self.route_platform_outputs(config, out, None, sink)
    }

    /// Routes what one platform step produced (while handling request `during`, if any).
    pub(crate) fn route_platform_outputs(
        &mut self,
        config: &WorldConfig,
        out: Vec<PlatformOutput>,
        during: Option<RequestId>,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let mut acks = Vec::new();
        for output in out {
            match output {
                PlatformOutput::Response { to, response, rule } => {
                    self.route_answer(config, to, response, rule, sink)
                }
                PlatformOutput::Upstream { call, rule } => {
                    let what = What::UpstreamCalled {
                        call: call.clone(),
                        rule,
                        during,
                    };
                    self.emit(sink, what);
                    self.link.send(UpstreamMsg::Call(call));
                }
                PlatformOutput::Webhook { event, rule } => {
                    let to = self.webhook_node(config, event.merchant, event.environment);
                    let what = What::WebhookEmitted {
                        event: event.clone(),
                        rule,
                        to,
                    };
                    self.emit(sink, what);
                    if let Some(to) = to {
                        let id = event.id;
                        if self.send_to_merchant(config, Payload::Webhook { to, event }, sink) {
                            acks.push(id);
                        }
                    }
                }
            }
        }
        // Webhooks a scripted merchant received at once are acknowledged at once.
        for event in acks {
            let mut none = Vec::new();
            self.platform
                .step(self.now, PlatformInput::WebhookAcked(event), &mut none)
                .map_err(ApplyError::Platform)?;
        }
        Ok(())
    }

    /// An answer to exchange `to` leaves the platform: to its merchant, or a 500 in its
    /// place if the edge fails after executing.
    fn route_answer(
        &mut self,
        config: &WorldConfig,
        to: RequestId,
        response: ApiResponse,
        rule: payhub_model::Rule,
        sink: &mut Sink<'_>,
    ) {
        let origin = self.origins.remove(&to);
        let route = origin.as_ref().map(|o| Route {
            merchant: o.merchant,
            owner: o.owner,
            scope: o.scope.clone(),
            awaited: self.awaiting.contains_key(&to),
            edge_500: o.fail_500,
            object_owner: object_owner(&self.platform, &response),
        });
        let what = What::Answered {
            id: to,
            response: response.clone(),
            rule,
            route,
        };
        self.emit(sink, what);
        let Some(origin) = origin else { return };
        let response = if origin.fail_500 {
            internal_error()
        } else {
            response
        };
        let payload = Payload::Response {
            to: origin.merchant,
            id: to,
            response,
        };
        self.send_to_merchant(config, payload, sink);
    }

    /// The node a webhook of (merchant, environment) goes to: the configured one, or, if
    /// that is a crashed client, the first running client server of the same merchant and
    /// environment (the merchant's webhook endpoint is behind a load balancer).
    fn webhook_node(
        &self,
        config: &WorldConfig,
        merchant: MerchantId,
        environment: Environment,
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

    /// Emits what a step changed in the platform's store: each Payment, attempt and
    /// refund that is new or differs from `before`, in id order.
    pub(crate) fn observe_store(&mut self, before: &Platform, sink: &mut Sink<'_>) {
        let mut changed = Vec::new();
        let after = &*self.platform;
        if before.payments() != after.payments() {
            for (id, p) in after.payments().iter() {
                let was = before.payments().get(id);
                if was != Some(p) && was.map(stored_payment) != Some(stored_payment(p)) {
                    changed.push(What::PaymentStored {
                        payment: *id,
                        stored: stored_payment(p),
                    });
                }
            }
        }
        if before.attempts() != after.attempts() {
            for (id, a) in after.attempts().iter() {
                let was = before.attempts().get(id).map(stored_attempt);
                if was != Some(stored_attempt(a)) {
                    changed.push(What::AttemptStored {
                        attempt: *id,
                        payment: a.payment,
                        stored: stored_attempt(a),
                    });
                }
            }
        }
        if before.refunds() != after.refunds() {
            for (id, r) in after.refunds().iter() {
                let was = before.refunds().get(id);
                if was != Some(r) && was.map(stored_refund) != Some(stored_refund(r)) {
                    changed.push(What::RefundStored {
                        refund: *id,
                        stored: stored_refund(r),
                    });
                }
            }
        }
        for what in changed {
            self.emit(sink, what);
        }
    }
}

/// The merchant and environment whose object a 2xx answer returns, as the store says.
fn object_owner(platform: &Platform, response: &ApiResponse) -> Owner {
    if !response.is_success() {
        return None;
    }
    match &response.body {
        ResponseBody::Payment(p) => platform
            .payments()
            .get(&p.id)
            .map(|p| (p.merchant, p.environment)),
        ResponseBody::Refund(r) => platform
            .refunds()
            .get(&r.id)
            .map(|r| (r.merchant, r.environment)),
        ResponseBody::Session(s) => platform
            .sessions()
            .get(&s.id)
            .and_then(|s| platform.payments().get(&s.payment))
            .map(|p| (p.merchant, p.environment)),
        _ => None,
    }
}

fn stored_payment(p: &Payment) -> StoredPayment {
    StoredPayment {
        merchant: p.merchant,
        environment: p.environment,
        merchant_order_no: p.merchant_order_no.clone(),
        status: p.status,
        resolution: p.resolution,
        expires_at: p.expires_at,
        attempts: p.attempts.clone(),
        failure_attempt: p.failure.map(|f| f.attempt_id),
        version: p.version,
    }
}

fn stored_attempt(a: &Attempt) -> StoredAttempt {
    StoredAttempt {
        status: a.status,
        sent_at: a.sent_at,
    }
}

fn stored_refund(r: &Refund) -> StoredRefund {
    StoredRefund {
        merchant: r.merchant,
        environment: r.environment,
        merchant_refund_no: r.merchant_refund_no.clone(),
        status: r.status,
        version: r.version,
    }
}
