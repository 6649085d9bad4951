//! The query endpoints (QUERY-01..QUERY-05): answered from the state the platform knows,
//! never by asking the upstream (QUERY-04), with no idempotency key (KEY-06).

use super::{Admission, reject};
use crate::api::{ApiResponse, Endpoint, ErrorCode, ResponseBody};
use crate::ids::{Environment, MerchantId, ResourceId};
use crate::platform::Platform;
use crate::platform::state::BusinessKey;
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
        let missing = || reject(ErrorCode::ResourceMissing, None, Rule::QueryById);
        Some(match endpoint {
            Endpoint::GetPayment { payment_id } => match self.payments.get(payment_id) {
                Some(p) if mine(p.merchant, p.environment) => Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Payment(p.view(*payment_id))),
                    Rule::QueryReadsKnownState,
                ),
                _ => missing(),
            },
            Endpoint::ListPayments { merchant_order_no } => {
                // QUERY-02: exact, case-sensitive; at most one (UNIQ-01). QUERY-05: empty
                // means never created.
                let data = self
                    .order_nos
                    .get(&BusinessKey {
                        merchant,
                        environment,
                        number: merchant_order_no.clone(),
                    })
                    .map(|id| self.payments[id].view(*id))
                    .into_iter()
                    .collect();
                Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Payments { data }),
                    Rule::QueryByOrderNo,
                )
            }
            Endpoint::GetRefund { refund_id } => match self.refunds.get(refund_id) {
                Some(r) if mine(r.merchant, r.environment) => Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Refund(r.view(*refund_id))),
                    Rule::QueryRefunds,
                ),
                _ => missing(),
            },
            Endpoint::ListRefundsByNo { merchant_refund_no } => {
                let data = self
                    .refund_nos
                    .get(&BusinessKey {
                        merchant,
                        environment,
                        number: merchant_refund_no.clone(),
                    })
                    .map(|id| self.refunds[id].view(*id))
                    .into_iter()
                    .collect();
                Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Refunds { data }),
                    Rule::QueryRefunds,
                )
            }
            Endpoint::ListRefundsProcessing => {
                // SCHED-03's reconciliation query lists processing refunds only: never a
                // pending_review one (A-REFUND-RECONCILE).
                let data = self
                    .refunds
                    .iter()
                    .filter(|(_, r)| {
                        mine(r.merchant, r.environment)
                            && r.status == crate::api::RefundStatus::Processing
                    })
                    .map(|(id, r)| r.view(*id))
                    .collect();
                Admission::Answer(
                    ApiResponse::ok(200, ResponseBody::Refunds { data }),
                    Rule::QueryRefunds,
                )
            }
            _ => return None,
        })
    }

    /// `status` with the latest view of a resource.
    pub(in crate::platform) fn resource_response(
        &self,
        status: u16,
        resource: ResourceId,
    ) -> ApiResponse {
        let body = match resource {
            ResourceId::Payment(id) => ResponseBody::Payment(self.payments[&id].view(id)),
            ResourceId::Refund(id) => ResponseBody::Refund(self.refunds[&id].view(id)),
            ResourceId::Session(id) => ResponseBody::Session(self.sessions[&id].view(id)),
        };
        ApiResponse::ok(status, body)
    }
}
