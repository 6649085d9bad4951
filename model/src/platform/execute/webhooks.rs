//! Versions and webhooks: every change a merchant could see is a new version of its
//! object and an event (WEBHOOK-01, A-VERSION), re-delivered until acknowledged
//! (A-WEBHOOK-REDELIVERY).

use crate::ids::{Environment, EventId, MerchantId, PaymentId, RefundId};
use crate::platform::Out;
use crate::platform::{
    Platform, PlatformOutput, Timer, UnackedWebhook, WebhookEvent, WebhookObject,
};
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;

impl Platform {
    /// A Payment changed: new version, and a webhook (WEBHOOK-01, A-VERSION).
    pub(crate) fn bump_payment(
        &mut self,
        now: Millis,
        payment: PaymentId,
        rule: Rule,
        out: &mut Out,
    ) {
        if !self.variant.bumps_version(rule) {
            return;
        }
        let p = self.payments.get_mut(&payment).expect("exists");
        p.version += 1;
        let (owner, object) = ((p.merchant, p.environment), p.view(payment));
        self.emit(now, owner, WebhookObject::Payment(object), rule, out);
    }

    pub(super) fn bump_refund(&mut self, now: Millis, refund: RefundId, rule: Rule, out: &mut Out) {
        let r = self.refunds.get_mut(&refund).expect("exists");
        r.version += 1;
        let (owner, object) = ((r.merchant, r.environment), r.view(refund));
        self.emit(now, owner, WebhookObject::Refund(object), rule, out);
    }

    /// The event of `object`'s new version: `payment.<status>` or `refund.<status>`.
    fn emit(
        &mut self,
        now: Millis,
        (merchant, environment): (MerchantId, Environment),
        object: WebhookObject,
        rule: Rule,
        out: &mut Out,
    ) {
        let kind = match &object {
            WebhookObject::Payment(p) => {
                Text::format(format_args!("payment.{}", p.status.as_str()))
            }
            WebhookObject::Refund(r) => Text::format(format_args!("refund.{}", r.status.as_str())),
        };
        self.next.event += 1;
        let event = WebhookEvent {
            id: EventId(self.next.event),
            merchant,
            environment,
            kind,
            object,
            delivery: 0,
        };
        // A-WEBHOOK-REDELIVERY: kept until acknowledged, re-delivered with doubling delays.
        if self.params.webhook_redeliveries_max > 0 {
            self.unacked.insert(
                event.id,
                UnackedWebhook {
                    event: event.clone(),
                },
            );
            self.set_timer(
                now.after(self.params.webhook_redelivery_delay),
                Timer::WebhookRedeliver(event.id),
            );
        }
        out.push(PlatformOutput::Webhook { event, rule });
    }

    /// A-WEBHOOK-REDELIVERY: re-send an unacknowledged event with doubling delays.
    pub(super) fn redeliver(&mut self, now: Millis, event: EventId, out: &mut Out) {
        let Some(unacked) = self.unacked.get_mut(&event) else {
            return;
        };
        unacked.event.delivery += 1;
        let copy = unacked.event.clone();
        let delivery = copy.delivery;
        if delivery >= self.params.webhook_redeliveries_max {
            self.unacked.remove(&event);
        } else {
            let delay = Millis(self.params.webhook_redelivery_delay.0 << delivery);
            self.set_timer(now.after(delay), Timer::WebhookRedeliver(event));
        }
        out.push(PlatformOutput::Webhook {
            event: copy,
            rule: Rule::WebhookPrimary,
        });
    }
}
