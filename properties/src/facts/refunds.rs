//! Refunds: how often each reached the upstream, and what the platform's store holds of
//! them (UNIQ-04, REFUND-01, REFUND-03, RET-03).

use super::note_first;
use payhub_model::event::{StoredRefund, What};
use payhub_model::{CowMap, CowSet, RefundId, RefundStatus, UpstreamCall};
use serde::Serialize;

/// The refunds family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Refunds {
    /// Upstream refund calls, per refund.
    pub refund_calls: CowMap<RefundId, u8>,
    /// Every refund the platform's store holds.
    pub refunds: CowMap<RefundId, StoredRefund>,
    /// Refunds whose review rejected them: stored failed straight from pending_review
    /// (A-REFUND-REVIEW).
    pub rejected: CowSet<RefundId>,
    /// The first refund both rejected in review and sent upstream.
    pub rejected_but_sent: Option<RefundId>,
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
                self.judge_rejected(*refund);
            }
            What::RefundStored { refund, stored } => {
                let was = self.refunds.get(refund).map(|r| r.status);
                if was == Some(RefundStatus::PendingReview) && stored.status == RefundStatus::Failed
                {
                    self.rejected.insert(*refund);
                    self.judge_rejected(*refund);
                }
                self.refunds.insert(*refund, stored.clone());
            }
            _ => {}
        }
    }

    /// A-REFUND-REVIEW: a refund its review rejected is never sent upstream.
    fn judge_rejected(&mut self, refund: RefundId) {
        let sent = self.rejected.contains(&refund) && self.refund_calls.contains_key(&refund);
        note_first(&mut self.rejected_but_sent, sent, || refund);
    }
}
