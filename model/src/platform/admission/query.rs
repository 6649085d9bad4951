//! The query endpoints (QUERY-01..QUERY-05): answered from the state the platform knows,
//! never by asking the upstream (QUERY-04), with no idempotency key (KEY-06).

use super::{Admission, reject};
use crate::api::{ApiResponse, Endpoint, ErrorCode, RefundStatus, ResponseBody};
use crate::ids::{Environment, MerchantId, ResourceId};
use crate::platform::Platform;
use crate::platform::state::{BusinessKey, Refund};
use crate::rules::Rule;

impl Platform {
    /// Answers a query endpoint from known state (QUERY-01..QUERY-05); `None` for POSTs.
    pub(super) fn answer_query(
        &self,
        merchant: MerchantId,
        environment: Environment,
        endpoint: &Endpoint,
    ) -> Option<Admission> {
        let mine = |m: MerchantId, e: Environment| m == merchant && e == environment;
        let missing = || reject(ErrorCode::ResourceMissing, Rule::QueryById);
        let ok = |body, rule| Admission::Answer(ApiResponse::ok(200, body), rule);
        Some(match endpoint {
            Endpoint::GetPayment { payment_id } => match self.payments.get(payment_id) {
                Some(p) if mine(p.merchant, p.environment) => ok(
                    ResponseBody::Payment(p.view(*payment_id)),
                    Rule::QueryReadsKnownState,
                ),
                _ => missing(),
            },
            Endpoint::ListPayments { merchant_order_no } => {
                // QUERY-02: exact, case-sensitive; at most one (UNIQ-01). QUERY-05: empty
                // means never created.
                let key = BusinessKey::new(merchant, environment, merchant_order_no.clone());
                let found = self.order_nos.get(&key);
                let data = found.map(|id| self.payments[id].view(*id)).into_iter();
                ok(
                    ResponseBody::Payments {
                        data: data.collect(),
                    },
                    Rule::QueryByOrderNo,
                )
            }
            Endpoint::GetRefund { refund_id } => match self.refunds.get(refund_id) {
                Some(r) if mine(r.merchant, r.environment) => {
                    ok(ResponseBody::Refund(r.view(*refund_id)), Rule::QueryRefunds)
                }
                _ => missing(),
            },
            Endpoint::ListRefundsByNo { merchant_refund_no } => {
                let key = BusinessKey::new(merchant, environment, merchant_refund_no.clone());
                let found = self.refund_nos.get(&key);
                let data = found.map(|id| self.refunds[id].view(*id)).into_iter();
                ok(
                    ResponseBody::Refunds {
                        data: data.collect(),
                    },
                    Rule::QueryRefunds,
                )
            }
            Endpoint::ListRefundsProcessing => {
                // SCHED-03's reconciliation query lists processing refunds only: never a
                // pending_review one (A-REFUND-RECONCILE).
                let processing = |r: &Refund| {
                    mine(r.merchant, r.environment) && r.status == RefundStatus::Processing
                };
                let data = self.refunds.iter().filter(|(_, r)| processing(r));
                let data = data.map(|(id, r)| r.view(*id)).collect();
                ok(ResponseBody::Refunds { data }, Rule::QueryRefunds)
            }
            _ => return None,
        })
    }

    /// `status` with the latest view of a resource.
    pub(crate) fn resource_response(&self, status: u16, resource: ResourceId) -> ApiResponse {
        let body = match resource {
            ResourceId::Payment(id) => ResponseBody::Payment(self.payments[&id].view(id)),
            ResourceId::Refund(id) => ResponseBody::Refund(self.refunds[&id].view(id)),
            ResourceId::Session(id) => ResponseBody::Session(self.sessions[&id].view(id)),
        };
        ApiResponse::ok(status, body)
    }
}
