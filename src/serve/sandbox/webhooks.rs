//! The session's webhooks on their way to the merchant: handed to the edge after the
//! plan's webhook faults, and reported back as acknowledged or lost.

use super::*;

impl Sandbox {
    /// Webhooks in flight not handed out yet, after the plan's webhook faults (lost,
    /// duplicated: both copies go out, delayed): the edge POSTs each and reports it with
    /// [`Sandbox::webhook_done`].
    pub fn take_webhooks(&mut self) -> Vec<Outgoing> {
        let mut out = Vec::new();
        for _ in 0..2 {
            let in_flight = self.world.net.iter().filter_map(|(msg, p)| match p {
                Payload::Webhook { event, .. } => Some((msg, event)),
                _ => None,
            });
            let fresh = self.outbox.fresh(in_flight);
            if fresh.is_empty() {
                break;
            }
            for (msg, event) in fresh {
                super::upstream::top_up(&mut self.world);
                let rule = self.faults.next_webhook(event.kind.as_str()).cloned();
                let action = rule.as_ref().map(|r| r.action);
                let step = match action {
                    Some(WebhookAction::Drop) => self.apply(Choice::Drop { msg }),
                    Some(WebhookAction::Duplicate) => self.apply(Choice::Duplicate { msg }),
                    _ => Ok(()),
                };
                if let Err(e) = step {
                    self.errors.push(e);
                }
                if action != Some(WebhookAction::Drop) {
                    let delay = rule.and_then(|r| r.ms).unwrap_or(0);
                    out.push(self.outbox.hand(msg, &event, delay, self.clock_origin_ms()));
                }
            }
        }
        out
    }

    /// How the POST of a webhook went: acknowledged (delivered) or lost.
    pub fn webhook_done(&mut self, msg: MsgId, acknowledged: bool) {
        if !self.outbox.done(msg) || self.world.net.get(msg).is_none() {
            return;
        }
        let choice = if acknowledged {
            Choice::Deliver { msg, branch: None }
        } else {
            Choice::Drop { msg }
        };
        if let Err(e) = self.apply(choice) {
            self.errors.push(e);
        }
    }

    /// Whether no webhook is in flight (every one handed out was reported).
    pub fn webhooks_settled(&self) -> bool {
        !self
            .world
            .net
            .iter()
            .any(|(_, p)| matches!(p, Payload::Webhook { .. }))
    }
}
