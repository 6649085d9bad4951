//! The upstream link under a script: `upstream` statements find the call they mean and
//! decide it; `until quiet` runs the world until nothing but housekeeping is due.

use super::{Runner, Stop};
use crate::choice::Choice;
use crate::event_fold::EventFold;
use crate::network::{MsgId, UpstreamMsg};
use crate::script::ast::*;
use payhub_model::{Acquirer, AcquirerDecision, AttemptId, Timer, UpstreamCall};

/// Most steps `until quiet` may take.
const QUIET_MAX: usize = 5_000;

impl<F: EventFold> Runner<'_, F> {
    pub(super) fn find_call(&self, i: usize, kind: CallKind) -> Result<MsgId, Stop> {
        let link = &self.world.link;
        let found = link.iter().find(|(m, msg)| {
            let UpstreamMsg::Call(call) = msg else {
                return false;
            };
            match kind {
                CallKind::Any => true,
                CallKind::Charge => matches!(call, UpstreamCall::Charge { .. }),
                CallKind::Query => matches!(call, UpstreamCall::QueryCharge { .. }),
                CallKind::Cancel => matches!(call, UpstreamCall::CancelCharge { .. }),
                CallKind::Refund => matches!(call, UpstreamCall::Refund { .. }),
                CallKind::QueryRefund => matches!(call, UpstreamCall::QueryRefund { .. }),
                CallKind::Id(n) => m.0 == n,
            }
        });
        found.map(|(m, _)| m).ok_or_else(|| {
            let in_flight = |(m, msg): (MsgId, &UpstreamMsg)| match msg {
                UpstreamMsg::Call(c) => format!("u{}: {c}", m.0),
                UpstreamMsg::Reply(r) => format!("u{}: reply {r}", m.0),
            };
            let in_flight: Vec<String> = link.iter().map(in_flight).collect();
            let what = if in_flight.is_empty() {
                "nothing".to_owned()
            } else {
                in_flight.join("; ")
            };
            self.fail(
                i,
                format!("no matching upstream call is in flight (in flight: {what})"),
            )
        })
    }

    pub(super) fn upstream(
        &mut self,
        i: usize,
        kind: CallKind,
        decision: AcquirerDecision,
        reply: ReplyFate,
    ) -> Result<(), Stop> {
        let msg = self.find_call(i, kind)?;
        if let Some(UpstreamMsg::Call(call)) = self.world.link.get(msg) {
            let allowed = Acquirer::decisions_for(call);
            if !allowed.contains(&decision) {
                let names: Vec<&str> = allowed.iter().map(|d| d.as_str()).collect();
                return Err(self.fail(i, format!("'{call}' takes {} only", names.join(", "))));
            }
        }
        let last = self.world.link.iter().last().map_or(0, |(m, _)| m.0);
        self.apply(Choice::Acquire { msg, decision }, i)?;
        let new_reply =
            |(m, msg): &(MsgId, &UpstreamMsg)| m.0 > last && matches!(msg, UpstreamMsg::Reply(_));
        let link = self.world.link.iter();
        let replies: Vec<MsgId> = link.filter(new_reply).map(|(m, _)| m).collect();
        for msg in replies {
            match reply {
                ReplyFate::Deliver => self.apply(Choice::DeliverUpstream { msg }, i)?,
                ReplyFate::Lost => self.apply(Choice::DropUpstream { msg }, i)?,
                ReplyFate::Held => {}
            }
        }
        Ok(())
    }

    /// `upstream reply [deliver|lost]`: the oldest acquirer reply in flight.
    pub(super) fn upstream_reply(&mut self, i: usize, deliver: bool) -> Result<(), Stop> {
        let reply = |(_, m): &(MsgId, &UpstreamMsg)| matches!(m, UpstreamMsg::Reply(_));
        let msg = self.world.link.iter().find(reply).map(|(m, _)| m);
        let msg = msg.ok_or_else(|| self.fail(i, "no acquirer reply is in flight"))?;
        let choice = if deliver {
            Choice::DeliverUpstream { msg }
        } else {
            Choice::DropUpstream { msg }
        };
        self.apply(choice, i)
    }

    /// `payer: authenticate`: the named charge, or the first one waiting for the payer.
    pub(super) fn payer(
        &mut self,
        i: usize,
        attempt: Option<AttemptId>,
        ok: bool,
    ) -> Result<(), Stop> {
        let attempt = match attempt {
            Some(a) => a,
            None => {
                let waiting = self.world.acquirer.awaiting_payer().next();
                waiting.ok_or_else(|| self.fail(i, "no charge is waiting for the payer"))?
            }
        };
        self.apply(Choice::Authenticate { attempt, ok }, i)
    }

    pub(super) fn until_quiet(&mut self, i: usize, decision: AcquirerDecision) -> Result<(), Stop> {
        for _ in 0..QUIET_MAX {
            self.settle(i)?;
            let link = &self.world.link;
            let next = link.iter().next().map(|(m, msg)| (m, msg.clone()));
            match next {
                Some((msg, UpstreamMsg::Call(call))) => {
                    let d = if Acquirer::decisions_for(&call).contains(&decision) {
                        decision
                    } else {
                        AcquirerDecision::Approve
                    };
                    self.apply(Choice::Acquire { msg, decision: d }, i)?;
                }
                Some((msg, UpstreamMsg::Reply(_))) => {
                    self.apply(Choice::DeliverUpstream { msg }, i)?;
                }
                None => {
                    if !self.busy() {
                        return Ok(());
                    }
                    self.apply(Choice::Tick, i)?;
                }
            }
        }
        Err(self.fail(i, format!("not quiet after {QUIET_MAX} steps")))
    }

    /// Whether something is still due besides housekeeping: a platform timer other than
    /// a key's retention or a Payment's expiry, a client timer, a client's timeout.
    fn busy(&self) -> bool {
        let housekeeping = |t: &Timer| matches!(t, Timer::Retention(_) | Timer::PaymentExpiry(_));
        let platform = self.world.platform.timers().any(|(_, t)| !housekeeping(t));
        let mut servers = self.world.servers.iter().flatten();
        let clients = servers.any(|s| s.poll_timeout().is_some());
        platform || clients || !self.world.awaiting.is_empty()
    }
}
