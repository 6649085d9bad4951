//! Cancel (CANCEL-01, A-CANCEL): a Payment with nothing unfinished is canceled at once;
//! one with an unfinished attempt only on the upstream's word.

use super::respond;
use crate::acquirer::UpstreamCall;
use crate::api::{PaymentStatus, ResolutionStatus};
use crate::ids::{PaymentId, RequestId, ResourceId};
use crate::platform::Hook;
use crate::platform::Out;
use crate::platform::state::*;
use crate::platform::variant::CancelAnswer;
use crate::platform::{Platform, PlatformOutput};
use crate::rules::Rule;
use crate::time::Millis;

impl Platform {
    /// Executes a cancel admitted for `payment` (not succeeded, expired or canceled).
    pub(super) fn execute_cancel(
        &mut self,
        now: Millis,
        id: RequestId,
        claim: Claim,
        payment: PaymentId,
        out: &mut Out,
    ) {
        if !self.payments[&payment].status.is_in_progress() {
            self.cancel_now(now, id, claim, payment, out);
            return;
        }
        match self.variant.cancel_answer() {
            CancelAnswer::AfterUpstream => self.cancel_upstream(now, id, claim, payment, out),
            CancelAnswer::CanceledAtOnce => {
                let at_once = Hook::CancelAtOnce { id, claim, payment };
                self.hook(now, at_once, out);
            }
        }
    }

    /// CANCEL-01: only the upstream can say the charge is safely canceled (A-CANCEL: 200
    /// canceled or succeeded on its answer, else 202).
    fn cancel_upstream(
        &mut self,
        now: Millis,
        id: RequestId,
        claim: Claim,
        payment: PaymentId,
        out: &mut Out,
    ) {
        let p = self.payments.get_mut(&payment).expect("admitted");
        // A-CANCEL-PENDING-STATUS: status, resolution_status and next_action stay as they
        // were; nothing the merchant reads says a cancel is being verified.
        p.cancel_requested = true;
        let attempt = p.latest_attempt().expect("in progress has an attempt");
        let in_flight = RecordState::InFlight { executor: id };
        self.bind(now, claim.clone(), in_flight);
        out.push(PlatformOutput::Upstream {
            call: UpstreamCall::CancelCharge { attempt },
            rule: Rule::Cancel202KeepsStatus,
        });
        self.await_upstream(now, id, claim.scope, WaitsOn::Cancel { payment });
    }

    /// No unfinished attempt: nothing can be captured, cancel at once, 200 (A-CANCEL,
    /// A-STATUS-CODES).
    fn cancel_now(
        &mut self,
        now: Millis,
        id: RequestId,
        claim: Claim,
        payment: PaymentId,
        out: &mut Out,
    ) {
        let p = self.payments.get_mut(&payment).expect("admitted");
        p.status = PaymentStatus::Canceled;
        p.resolution = ResolutionStatus::Known;
        self.bump_payment(now, payment, Rule::TerminalStatuses, out);
        let resource = ResourceId::Payment(payment);
        self.bind(now, claim, RecordState::Done { resource });
        let response = self.resource_response(200, resource);
        respond(out, id, response, Rule::TerminalStatuses);
    }
}
