//! The upstream link and the acquirer as a fault domain: the acquirer deciding a call,
//! replies reaching the platform, calls and replies lost, the payer authenticating.
//! After each acquirer step the world emits what moved in its ledger and charges.

use crate::config::WorldConfig;
use crate::event_fold::EventFold;
use crate::network::{MsgId, UpstreamMsg};
use crate::sink::Sink;
use crate::world::{ApplyError, World};
use payhub_model::acquirer::ChargeRecord;
use payhub_model::event::What;
use payhub_model::{AcquirerDecision, AttemptId, CowMap, CowSet, PlatformInput};

/// What the acquirer held before a step, to emit what the step changed.
struct AcquirerBefore {
    charges: CowMap<AttemptId, ChargeRecord>,
    voided: CowSet<AttemptId>,
    entries: usize,
}

impl<F: EventFold> World<F> {
    /// The acquirer handles a call on the link with `decision`.
    pub(crate) fn acquire(
        &mut self,
        msg: MsgId,
        decision: AcquirerDecision,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let m = self
            .link
            .get_shared(msg)
            .ok_or_else(ApplyError::not_enabled)?;
        let UpstreamMsg::Call(call) = &*m else {
            return Err(ApplyError::not_enabled());
        };
        self.link.take(msg);
        let before = self.acquirer_before();
        let mut replies = Vec::new();
        self.acquirer
            .handle_call(self.now, call, decision, &mut replies);
        self.note(sink, || What::Acquired {
            call: call.clone(),
            decision,
        });
        self.observe_acquirer(before, sink);
        for reply in replies {
            self.link.send(UpstreamMsg::Reply(reply));
        }
        Ok(())
    }

    /// An acquirer reply reaches the platform.
    pub(crate) fn deliver_upstream(
        &mut self,
        config: &WorldConfig,
        msg: MsgId,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let Some(&UpstreamMsg::Reply(reply)) = self.link.get(msg) else {
            return Err(ApplyError::not_enabled());
        };
        self.link.take(msg);
        self.note(sink, || What::UpstreamReplied { reply });
        self.step_platform(config, PlatformInput::Upstream(reply), sink)
    }

    /// A call or reply on the link is lost.
    pub(crate) fn drop_upstream(
        &mut self,
        msg: MsgId,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        if self.budget.upstream_drops == 0 {
            return Err(ApplyError::not_enabled());
        }
        let m = self.link.take(msg).ok_or_else(ApplyError::not_enabled)?;
        self.budget.upstream_drops -= 1;
        self.note(sink, || match &*m {
            UpstreamMsg::Call(call) => What::UpstreamCallLost { call: call.clone() },
            UpstreamMsg::Reply(reply) => What::UpstreamReplyLost { reply: *reply },
        });
        Ok(())
    }

    /// The payer authenticates a `requires_action` charge, or fails to.
    pub(crate) fn authenticate(
        &mut self,
        attempt: AttemptId,
        ok: bool,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        if !self.acquirer.awaiting_payer().any(|a| a == attempt) {
            return Err(ApplyError::not_enabled());
        }
        let before = self.acquirer_before();
        self.acquirer.handle_payer(self.now, attempt, ok);
        self.note(sink, || What::Authenticated { attempt, ok });
        self.observe_acquirer(before, sink);
        Ok(())
    }

    fn acquirer_before(&self) -> AcquirerBefore {
        AcquirerBefore {
            charges: self.acquirer.charges.clone(),
            voided: self.acquirer.voided.clone(),
            entries: self.acquirer.ledger.entries.len(),
        }
    }

    /// Emits the ledger entries, charge states and voided references a step added.
    fn observe_acquirer(&mut self, before: AcquirerBefore, sink: &mut Sink<'_>) {
        // A copy (a reference count) to emit while reading it.
        let after = self.acquirer.clone();
        for entry in &after.ledger.entries[before.entries..] {
            let entry = entry.clone();
            self.emit(sink, What::Ledger { entry });
        }
        // Only what the step changed is walked (`changes_from`), not every charge held.
        for (attempt, c) in after.charges.changes_from(&before.charges) {
            if before.charges.get(attempt).map(|b| b.state) != Some(c.state) {
                let (attempt, state) = (*attempt, c.state);
                self.emit(sink, What::Charge { attempt, state });
            }
        }
        for attempt in after.voided.added_since(&before.voided) {
            self.emit(sink, What::Voided { attempt: *attempt });
        }
    }
}
