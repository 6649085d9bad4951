//! The load benchmark's setup (`POST /__sandbox/fill`): many Payments created as HTTP
//! creates would create them.

use super::{HttpRequest, Sandbox, Step};
use payhub_model::Millis;

impl Sandbox {
    /// Creates `n` Payments (card A, keys `fill-N`, orders `FILL-N`, N counting on from
    /// the Payments already held), each as an HTTP create of merchant 1's test key would:
    /// the load benchmark's way to a session that holds many (`POST /__sandbox/fill`).
    /// How many Payments the session holds after.
    pub fn fill(&mut self, now: Millis, n: usize) -> Result<usize, String> {
        let from = self.world.platform.payments().len();
        for i in from..from + n {
            let http = HttpRequest {
                method: "POST".into(),
                target: "/v1/payments".into(),
                authorization: Some(b"Bearer ak_1".to_vec()),
                idempotency_key: Some(format!("fill-{i}").into_bytes()),
                body: format!(
                    r#"{{"merchant_order_no":"FILL-{i}","amount":100,"currency":"USD","card":"A"}}"#
                )
                .into_bytes(),
            };
            match self.handle(now, &http) {
                Step::Answered(reply) if reply.status == 201 => self.bound.filled += 1,
                Step::Answered(reply) => {
                    return Err(format!("fill-{i}: {} {}", reply.status, reply.body));
                }
                Step::Pending(id) => return Err(format!("fill-{i}: {id} pending")),
            }
        }
        Ok(self.world.platform.payments().len())
    }
}
