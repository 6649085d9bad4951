//! Refunds: how often each reached the upstream, and what the platform's store holds of
//! them (UNIQ-04, REFUND-01, REFUND-03, RET-03).

use payhub_model::event::{StoredRefund, What};
use payhub_model::{CowMap, RefundId, UpstreamCall};
use serde::Serialize;

/// The refunds family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Refunds {
    /// Upstream refund calls, per refund.
    pub refund_calls: CowMap<RefundId, u8>,
    /// Every refund the platform's store holds.
    pub refunds: CowMap<RefundId, StoredRefund>,
}

impl Refunds {
    /// Whether `what` changes this family.
    pub(super) fn changes(&self, what: &What) -> bool {
        matches!(
            what,
            What::UpstreamCalled {
                call: UpstreamCall::Refund { .. },
                ..
            } | What::RefundStored { .. }
        )
    }

    pub(super) fn observe(&mut self, what: &What) {
        match what {
            What::UpstreamCalled {
                call: UpstreamCall::Refund { refund, .. },
                ..
            } => {
                let n = self.refund_calls.entry(*refund).or_insert(0);
                *n = n.saturating_add(1);
            }
            What::RefundStored { refund, stored } => {
                self.refunds.insert(*refund, stored.clone());
            }
            _ => {}
        }
    }
}
