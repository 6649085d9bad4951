//! A request whose idempotency scope has a record: conflict, replay, or a wait for the
//! same-key execution in flight.

use super::{Admission, Fork, NewOp, reject};
use crate::api::ErrorCode;
use crate::ids::ResourceId;
use crate::platform::Platform;
use crate::platform::state::{Claim, IdempotencyRecord, RecordState};
use crate::rules::Rule;
use crate::time::Millis;

impl Platform {
    /// What a request gets from the `record` of its scope.
    pub(super) fn admit_recorded(
        &self,
        now: Millis,
        record: &IdempotencyRecord,
        claim: Claim,
        op: NewOp,
    ) -> Admission {
        if record.fingerprint != claim.fingerprint && self.variant.compares_first(&record.state) {
            // CONFLICT-01; card data is not in the fingerprint (CARD-01). The 409 binds
            // nothing (A-409-NOBIND). Compared before the in-flight wait of CONC-02: a
            // conflicting request never waits (A-CONFLICT-IN-FLIGHT).
            return reject(ErrorCode::IdempotencyConflict, Rule::IdempotencyConflict);
        }
        match &record.state {
            // CONC-01: the executor holds the right to execute until its execution ends.
            // A-S5-BRANCH: wait for the executor, or 409 operation_in_progress at once.
            RecordState::InFlight { .. } if self.variant.lock_held(record, now, &self.params) => {
                Admission::Fork(Fork::Concurrent { scope: claim.scope })
            }
            RecordState::Done { resource } if self.variant.replay_returns_object(*resource) => {
                // REPLAY-01, REPLAY-02, CARD-03: the original object, latest state, 200:
                // S6's "相同" and S7's "原操作的结果" read as the same object, not a frozen
                // first answer (A-REPLAY-SAME-OR-LATEST); 200 also when the first answer was
                // a 202 and the result is still unknown (A-REPLAY-AFTER-202).
                // REFUND-02: a refund retried with its key is the same refund.
                let rule = match resource {
                    ResourceId::Refund(_) => Rule::RefundReplaySameRefund,
                    _ => Rule::ReplayLatestStatus200,
                };
                Admission::Answer(self.resource_response(200, *resource), rule)
            }
            // The reference never gets here: under its variant the record no longer holds
            // the scope, and the request executes as if it had none.
            _ => Admission::Execute { claim, op },
        }
    }
}
