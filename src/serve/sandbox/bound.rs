//! The bound on objects the API creates in a session (`serve --objects-max`): each
//! Payment, Refund and checkout session is held for the session (the contract keeps
//! them), a few KB each, so without a bound a client's creates would grow the sandbox
//! without limit. Once the session holds that many made through the API, a create is
//! answered as the contract refuses a request it does not execute: 429 `rate_limited`
//! with `Retry-After` (the merchant's rate limit switched on for that exchange alone, so
//! the model answers it and the events record it), until `POST /__sandbox/reset`.
//! Payments made by `POST /__sandbox/fill` are bounded by `--fill-max` instead.

use super::Sandbox;
use payhub_model::{ApiRequest, Control, Endpoint, Environment, MerchantId};

/// Objects the API may create in a session unless `serve --objects-max` says otherwise.
pub const OBJECTS_MAX: usize = 100_000;

/// The bound and what does not count against it.
#[derive(Clone, Copy, Debug)]
pub struct ObjectBound {
    pub max: usize,
    /// Payments made by `fill`.
    pub filled: usize,
}

impl Default for ObjectBound {
    fn default() -> ObjectBound {
        ObjectBound {
            max: OBJECTS_MAX,
            filled: 0,
        }
    }
}

impl Sandbox {
    /// The session with at most `max` objects created through the API (kept across resets).
    pub fn with_objects_max(mut self, max: usize) -> Sandbox {
        self.bound.max = max;
        self
    }

    /// The merchant's rate limit for this exchange alone, when `request` would create an
    /// object and the session already holds the most the API may create.
    pub(super) fn past_bound(
        &self,
        request: &ApiRequest,
        owner: Option<(MerchantId, Environment)>,
    ) -> Option<Control> {
        let creates = matches!(
            request.endpoint,
            Endpoint::CreatePayment { .. }
                | Endpoint::CreateRefund { .. }
                | Endpoint::CreateCheckoutSession { .. }
        );
        let (merchant, _) = owner?;
        // The objects the session holds that the API created.
        let p = &self.world.platform;
        let made = (p.payments().len() + p.refunds().len() + p.sessions().len())
            .saturating_sub(self.bound.filled);
        (creates && made >= self.bound.max)
            .then_some(Control::SetRateLimited { merchant, on: true })
    }
}
