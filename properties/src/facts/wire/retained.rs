//! What the wire facts hold at a moment, counted (`check-log --stats`): the memory a
//! judge of a long log needs grows with these, not with the requests.

use super::WireFacts;

/// The records the wire facts hold now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retained {
    /// Idempotency scopes within RET-01's retention (their first request and
    /// parameters; older ones are forgotten).
    pub keys: usize,
    /// Order and refund numbers (UNIQ-01 and UNIQ-04 have no window).
    pub numbers: usize,
    /// Objects: Payments seen, objects queried, Payments and refund requests unresolved.
    pub objects: usize,
}

impl WireFacts {
    /// What these facts hold now.
    pub fn retained(&self) -> Retained {
        Retained {
            keys: self.first_params.len(),
            numbers: self.order_payments.len()
                + self.refund_numbers.len()
                + self.unknown_orders.len()
                + self.refused_numbers.len(),
            objects: self.payments.len()
                + self.last_query.len()
                + self.unresolved_payments.len()
                + self.unresolved_refunds.len(),
        }
    }
}
