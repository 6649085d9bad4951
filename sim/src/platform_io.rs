//! The platform's side of the world: stepping it with an input, observing what the step
//! did to its store, and routing its outputs (answers to their merchants, calls onto the
//! upstream link, webhooks to the merchant's endpoint).

use crate::config::WorldConfig;
use crate::event_fold::EventFold;
use crate::network::{Payload, UpstreamMsg};
use crate::sink::Sink;
use crate::world::{ApplyError, World, internal_error};
use payhub_model::event::{Owner, Route, StoredAttempt, StoredPayment, StoredRefund, What};
use payhub_model::platform::state::{Attempt, Payment, Refund};
use payhub_model::{
    ApiResponse, AttemptId, CowMap, Environment, MerchantId, Millis, PaymentStatus, Platform,
    PlatformInput, PlatformOutput, RefundStatus, RequestId, ResolutionStatus, ResponseBody, Text,
};

impl<F: EventFold> World<F> {
    /// Steps the platform with an input other than a request and routes its outputs.
    pub(crate) fn step_platform(
        &mut self,
        config: &WorldConfig,
        input: PlatformInput,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let mut out = Vec::new();
        self.platform
            .step(self.now, input, &mut out)
            .map_err(ApplyError::Platform)?;
        self.observe_store(sink);
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
                    let emitted = What::WebhookEmitted { event, rule, to };
                    self.emit_ref(sink, &emitted);
                    let What::WebhookEmitted { event, .. } = emitted else {
                        unreachable!("built above")
                    };
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
        let answered = What::Answered {
            id: to,
            response,
            rule,
            route,
        };
        self.emit_ref(sink, &answered);
        let What::Answered { response, .. } = answered else {
            unreachable!("built above")
        };
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

    /// Emits what the last step changed in the platform's store: each Payment, attempt
    /// and refund that is new or differs from what it was before the step in what the
    /// stream says of it, in id order. Only the entries the step wrote are compared (the
    /// stores' journals): the cost is what the step touched, not what the platform holds.
    pub(crate) fn observe_store(&mut self, sink: &mut Sink<'_>) {
        let written = self.platform.take_written();
        // A copy (a reference count) to emit while reading it.
        let after = self.platform.clone();
        each_changed(
            written.payments,
            after.payments(),
            |a, b| payment_seen(a) == payment_seen(b),
            |id, p| {
                let stored = stored_payment(p);
                self.emit(
                    sink,
                    What::PaymentStored {
                        payment: id,
                        stored,
                    },
                );
            },
        );
        each_changed(
            written.attempts,
            after.attempts(),
            |a, b| stored_attempt(a) == stored_attempt(b),
            |id, a| {
                let (payment, stored) = (a.payment, stored_attempt(a));
                self.emit(
                    sink,
                    What::AttemptStored {
                        attempt: id,
                        payment,
                        stored,
                    },
                );
            },
        );
        each_changed(
            written.refunds,
            after.refunds(),
            |a, b| refund_seen(a) == refund_seen(b),
            |id, r| {
                let stored = stored_refund(r);
                self.emit(sink, What::RefundStored { refund: id, stored });
            },
        );
    }
}

/// Calls `changed`, in key order, with each entry of `now` that the step wrote (`was`:
/// each key written, with its value before) and that is new or differs from its value
/// before in what the stream says of it (`same`, comparing projections unbuilt). A key the step removed is
/// not reported, as an entry absent after the step.
fn each_changed<'a, K: Ord + Copy, V>(
    mut was: Vec<(K, Option<V>)>,
    now: &'a CowMap<K, V>,
    same: impl Fn(&V, &V) -> bool,
    mut changed: impl FnMut(K, &'a V),
) {
    was.sort_unstable_by_key(|(k, _)| *k);
    for (id, before) in &was {
        let Some(v) = now.get(id) else { continue };
        if before.as_ref().is_none_or(|w| !same(w, v)) {
            changed(*id, v);
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

/// What the stream says of a Payment ([`StoredPayment`]), borrowed from the store.
type PaymentSeen<'a> = (
    MerchantId,
    Environment,
    &'a Text,
    PaymentStatus,
    ResolutionStatus,
    Millis,
    &'a [AttemptId],
    Option<AttemptId>,
    u32,
    u32,
);

fn payment_seen(p: &Payment) -> PaymentSeen<'_> {
    (
        p.merchant,
        p.environment,
        &p.merchant_order_no,
        p.status,
        p.resolution,
        p.expires_at,
        &p.attempts,
        p.failure.map(|f| f.attempt_id),
        p.version,
        p.fee_rate_bps,
    )
}

fn stored_payment(p: &Payment) -> StoredPayment {
    let (
        merchant,
        environment,
        order_no,
        status,
        resolution,
        expires_at,
        attempts,
        failure,
        version,
        fee_rate_bps,
    ) = payment_seen(p);
    StoredPayment {
        merchant,
        environment,
        merchant_order_no: order_no.clone(),
        status,
        resolution,
        expires_at,
        attempts: attempts.to_vec(),
        failure_attempt: failure,
        version,
        fee_rate_bps,
    }
}

fn stored_attempt(a: &Attempt) -> StoredAttempt {
    StoredAttempt {
        status: a.status,
        sent_at: a.sent_at,
    }
}

/// What the stream says of a refund ([`StoredRefund`]), borrowed from the store.
fn refund_seen(r: &Refund) -> (MerchantId, Environment, &Text, RefundStatus, u32) {
    (
        r.merchant,
        r.environment,
        &r.merchant_refund_no,
        r.status,
        r.version,
    )
}

fn stored_refund(r: &Refund) -> StoredRefund {
    let (merchant, environment, refund_no, status, version) = refund_seen(r);
    StoredRefund {
        merchant,
        environment,
        merchant_refund_no: refund_no.clone(),
        status,
        version,
    }
}
