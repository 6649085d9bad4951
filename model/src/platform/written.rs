//! What the last step wrote to the stores the world observes: each Payment, attempt and
//! refund written, with the value it had before (taken from the stores' journals).
//!
//! The world compares these entries with the store after the step to emit what changed,
//! at a cost of what the step touched rather than of what the platform holds.

use super::Platform;
use super::state::{Attempt, Payment, Refund};
use crate::ids::{AttemptId, PaymentId, RefundId};

/// Each key the last step wrote, once, with its value before the step (`None`: new).
/// Keys come in the order first written; a written entry may end up unchanged.
#[derive(Debug, Default)]
pub struct Written {
    pub payments: Vec<(PaymentId, Option<Payment>)>,
    pub attempts: Vec<(AttemptId, Option<Attempt>)>,
    pub refunds: Vec<(RefundId, Option<Refund>)>,
}

impl Platform {
    /// Starts a step: the journals forget what earlier steps wrote.
    pub(super) fn begin_step(&mut self) {
        self.payments.begin();
        self.attempts.begin();
        self.refunds.begin();
    }

    /// What the last step wrote (and empties the journals, so that a state kept after
    /// the step carries none of it).
    pub fn take_written(&mut self) -> Written {
        Written {
            payments: self.payments.take_journal(),
            attempts: self.attempts.take_journal(),
            refunds: self.refunds.take_journal(),
        }
    }
}
