//! What a choice does, in words that survive the shrinker removing earlier choices.

use crate::choice::Choice;
use crate::event_fold::EventFold;
use crate::network::{MsgId, Payload, UpstreamMsg};
use crate::world::World;

impl<F: EventFold> World<F> {
    /// What a choice does, without the run-specific ids it names (`m7`, `u3`, `att_002`):
    /// the shrinker uses it to find "the same" choice after an earlier one was removed
    /// and the ids shifted.
    pub fn signature(&self, choice: &Choice) -> String {
        let payload = |msg: &MsgId| match self.net.get(*msg) {
            // Without the Idempotency-Key: random keys change when earlier draws are removed.
            Some(Payload::Request { from, request, .. }) => format!(
                "request from merchant-{from}: {} {} {}",
                request.endpoint.method(),
                request.endpoint.path(),
                serde_json::to_string(&request.endpoint).unwrap_or_default()
            ),
            Some(Payload::Response { to, response, .. }) => {
                format!(
                    "response to merchant-{to}: {} {:?}",
                    response.status,
                    response.error_code()
                )
            }
            Some(Payload::Webhook { to, event }) => {
                format!(
                    "webhook to merchant-{to}: {} v{}",
                    event.kind,
                    event.object.version()
                )
            }
            None => "gone".to_owned(),
        };
        let link = |msg: &MsgId| match self.link.get(*msg) {
            Some(UpstreamMsg::Call(call)) => match call {
                payhub_model::UpstreamCall::Charge {
                    amount,
                    currency,
                    card,
                    ..
                } => {
                    format!("charge {amount} {currency} {card}")
                }
                payhub_model::UpstreamCall::QueryCharge { .. } => "query charge".into(),
                payhub_model::UpstreamCall::CancelCharge { .. } => "cancel charge".into(),
                payhub_model::UpstreamCall::Refund { amount, .. } => format!("refund {amount}"),
                payhub_model::UpstreamCall::QueryRefund { .. } => "query refund".into(),
            },
            Some(UpstreamMsg::Reply(reply)) => match reply {
                payhub_model::UpstreamReply::Charge { state, .. } => {
                    format!("charge reply {state:?}")
                }
                payhub_model::UpstreamReply::Refund { state, .. } => {
                    format!("refund reply {state:?}")
                }
            },
            None => "gone".to_owned(),
        };
        match choice {
            Choice::Deliver { msg, branch } => format!("deliver {} {branch:?}", payload(msg)),
            Choice::Drop { msg } => format!("drop {}", payload(msg)),
            Choice::Duplicate { msg } => format!("duplicate {}", payload(msg)),
            Choice::Fail500Before { msg } => format!("500-before {}", payload(msg)),
            Choice::Fail500After { msg, branch } => {
                format!("500-after {} {branch:?}", payload(msg))
            }
            Choice::Acquire { msg, decision } => format!("acquire {} {decision:?}", link(msg)),
            Choice::DeliverUpstream { msg } => format!("deliver {}", link(msg)),
            Choice::DropUpstream { msg } => format!("drop {}", link(msg)),
            Choice::Authenticate { ok, .. } => format!("authenticate {ok}"),
            other => other.to_string(),
        }
    }
}
