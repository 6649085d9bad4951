//! A hand-driven test bench: the test plays the network and decides for the upstream.
//!
//! It composes one [`Platform`] and one [`Acquirer`] with no network faults of its own:
//! a request is delivered at once, the platform's upstream calls queue until the test
//! decides them ([`Bench::upstream`]) or loses them ([`Bench::drop_upstream`]), and
//! [`Bench::advance`] moves simulated time, firing every platform timer on the way.
//! Request builders in [`req`] read like the contract's request lines.
//!
//! The simulated world (crate `payhub-sim`) does all this with faults and choices; the
//! bench exists so that unit tests can walk through S1–S13 at the request level.

use crate::acquirer::{Acquirer, AcquirerDecision, UpstreamCall, UpstreamReply};
use crate::api::ApiResponse;
use crate::branch::Branch;
use crate::ids::{ApiKeyId, Environment, MerchantId, RequestId};
use crate::params::PlatformParams;
use crate::platform::{
    ApiKeySpec, Control, Platform, PlatformInput, PlatformOutput, StepError, WebhookEvent,
};
use crate::rules::Rule;
use crate::time::Millis;
use std::collections::{BTreeMap, VecDeque};

/// `ak_1`: merchant 1, test.
pub const M1_TEST: ApiKeyId = ApiKeyId(1);
/// `ak_2`: merchant 1, live.
pub const M1_LIVE: ApiKeyId = ApiKeyId(2);
/// `ak_3`: merchant 2, test.
pub const M2_TEST: ApiKeyId = ApiKeyId(3);
/// `ak_4`: merchant 1, test, read-only (403 on POST).
pub const M1_TEST_READ_ONLY: ApiKeyId = ApiKeyId(4);
/// `ak_5`: merchant 1, test: not issued until a test rotates to it.
pub const M1_TEST_ROTATED: ApiKeyId = ApiKeyId(5);

/// The API keys every bench starts with.
pub fn default_api_keys() -> Vec<ApiKeySpec> {
    let key = |id, merchant, environment, read_only| ApiKeySpec {
        id,
        merchant: MerchantId(merchant),
        environment,
        read_only,
    };
    vec![
        key(M1_TEST, 1, Environment::Test, false),
        key(M1_LIVE, 1, Environment::Live, false),
        key(M2_TEST, 2, Environment::Test, false),
        key(M1_TEST_READ_ONLY, 1, Environment::Test, true),
    ]
}

/// The rotated key of [`M1_TEST_ROTATED`], for `Control::IssueApiKey`.
pub fn rotated_key_spec() -> ApiKeySpec {
    ApiKeySpec {
        id: M1_TEST_ROTATED,
        merchant: MerchantId(1),
        environment: Environment::Test,
        read_only: false,
    }
}

/// Platform + acquirer, driven by hand.
#[derive(Clone, Debug)]
pub struct Bench {
    pub now: Millis,
    pub platform: Platform,
    pub acquirer: Acquirer,
    /// Upstream calls sent and not yet decided, oldest first.
    pub upstream_queue: VecDeque<UpstreamCall>,
    /// Every response, by request, with the rule that decided it.
    pub responses: BTreeMap<RequestId, (ApiResponse, Rule)>,
    /// Every webhook emitted, in order.
    pub webhooks: Vec<WebhookEvent>,
    /// Every upstream call ever sent, in order (including dropped ones).
    pub upstream_sent: Vec<UpstreamCall>,
    next_request: u32,
}

impl Default for Bench {
    fn default() -> Self {
        Bench::new(PlatformParams::default())
    }
}

impl Bench {
    pub fn new(params: PlatformParams) -> Bench {
        Bench {
            now: Millis::ZERO,
            platform: Platform::new(params, default_api_keys()),
            acquirer: Acquirer::new(),
            upstream_queue: VecDeque::new(),
            responses: BTreeMap::new(),
            webhooks: Vec::new(),
            upstream_sent: Vec::new(),
            next_request: 0,
        }
    }

    /// Delivers a request now. Panics if it reaches a branch point: use [`Bench::send_with`].
    pub fn send(&mut self, request: crate::api::ApiRequest) -> RequestId {
        self.try_send(request, None)
            .unwrap_or_else(|e| panic!("send: {e}"))
    }

    /// Delivers a request now, taking `branch` if it reaches a branch point.
    pub fn send_with(&mut self, request: crate::api::ApiRequest, branch: Branch) -> RequestId {
        self.try_send(request, Some(branch))
            .unwrap_or_else(|e| panic!("send_with: {e}"))
    }

    /// Delivers a request now; the platform's refusal comes back unchanged.
    pub fn try_send(
        &mut self,
        request: crate::api::ApiRequest,
        branch: Option<Branch>,
    ) -> Result<RequestId, StepError> {
        self.next_request += 1;
        let id = RequestId(self.next_request);
        self.step(PlatformInput::Request {
            id,
            request,
            branch,
        })?;
        Ok(id)
    }

    /// The response to `id`, if it has been answered.
    pub fn response(&self, id: RequestId) -> Option<&ApiResponse> {
        self.responses.get(&id).map(|(r, _)| r)
    }

    /// The response to `id`; panics if it is still unanswered.
    pub fn answered(&self, id: RequestId) -> &ApiResponse {
        self.response(id)
            .unwrap_or_else(|| panic!("{id} is unanswered"))
    }

    /// The rule that decided the response to `id`.
    pub fn rule_of(&self, id: RequestId) -> Option<Rule> {
        self.responses.get(&id).map(|(_, r)| *r)
    }

    /// Decides the oldest queued upstream call and delivers the acquirer's reply, if any.
    /// Returns the call. Panics when nothing is queued.
    pub fn upstream(&mut self, decision: AcquirerDecision) -> UpstreamCall {
        let call = self
            .upstream_queue
            .pop_front()
            .expect("no upstream call is queued");
        let mut replies = Vec::new();
        self.acquirer
            .handle_call(self.now, &call, decision, &mut replies);
        for reply in replies {
            self.deliver_upstream(reply);
        }
        call
    }

    /// The acquirer decides the oldest queued call, but its reply is lost.
    pub fn upstream_reply_lost(&mut self, decision: AcquirerDecision) -> UpstreamCall {
        let call = self
            .upstream_queue
            .pop_front()
            .expect("no upstream call is queued");
        let mut replies = Vec::new();
        self.acquirer
            .handle_call(self.now, &call, decision, &mut replies);
        call
    }

    /// Loses the oldest queued upstream call before the acquirer sees it.
    pub fn drop_upstream(&mut self) -> UpstreamCall {
        self.upstream_queue
            .pop_front()
            .expect("no upstream call is queued")
    }

    /// Delivers an acquirer reply to the platform.
    pub fn deliver_upstream(&mut self, reply: UpstreamReply) {
        self.step(PlatformInput::Upstream(reply))
            .expect("upstream replies never fail");
    }

    /// Switches something in the environment.
    pub fn control(&mut self, control: Control) {
        self.step(PlatformInput::Control(control))
            .expect("controls never fail");
    }

    /// Moves time forward by `d`, firing every platform timer due on the way, in order.
    pub fn advance(&mut self, d: Millis) {
        let until = self.now.after(d);
        while let Some(at) = self.platform.next_timer() {
            if at > until {
                break;
            }
            self.now = self.now.max(at);
            self.step(PlatformInput::Timeout)
                .expect("timeouts never fail");
        }
        self.now = until;
    }

    fn step(&mut self, input: PlatformInput) -> Result<(), StepError> {
        let mut out = Vec::new();
        self.platform.step(self.now, input, &mut out)?;
        for output in out {
            match output {
                PlatformOutput::Response { to, response, rule } => {
                    let previous = self.responses.insert(to, (response, rule));
                    assert!(previous.is_none(), "{to} answered twice");
                }
                PlatformOutput::Upstream { call, .. } => {
                    self.upstream_sent.push(call.clone());
                    self.upstream_queue.push_back(call);
                }
                PlatformOutput::Webhook { event, .. } => self.webhooks.push(event),
            }
        }
        Ok(())
    }
}

/// Request builders that read like the contract's request lines.
pub mod req {
    use crate::api::*;
    use crate::ids::{ApiKeyId, Card, PaymentId, RefundId};

    use super::M1_TEST;

    fn key(k: &str) -> Option<String> {
        Some(k.to_owned())
    }

    /// `POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":…,"amount":…,"currency":…}` with a card.
    pub fn create(k: &str, order: &str, amount: i64, currency: &str, card: char) -> ApiRequest {
        create_as(M1_TEST, k, order, amount, currency, Some(card))
    }

    /// Create payment with any API key, optionally without a card.
    pub fn create_as(
        api_key: ApiKeyId,
        k: &str,
        order: &str,
        amount: i64,
        currency: &str,
        card: Option<char>,
    ) -> ApiRequest {
        ApiRequest {
            api_key,
            idempotency_key: key(k),
            endpoint: Endpoint::CreatePayment {
                body: Json::Parsed(CreatePaymentBody {
                    merchant_order_no: Some(order.to_owned()),
                    amount: Some(amount),
                    currency: Some(currency.to_owned()),
                    card: card.map(Card),
                }),
            },
        }
    }

    /// `POST /v1/payments/{id}/confirm  Idempotency-Key: K` with a card.
    pub fn confirm(k: &str, payment: PaymentId, card: char) -> ApiRequest {
        ApiRequest {
            api_key: M1_TEST,
            idempotency_key: key(k),
            endpoint: Endpoint::ConfirmPayment {
                payment_id: payment,
                body: Json::Parsed(ConfirmBody {
                    card: Some(Card(card)),
                }),
            },
        }
    }

    /// `POST /v1/payments/{id}/cancel  Idempotency-Key: K`.
    pub fn cancel(k: &str, payment: PaymentId) -> ApiRequest {
        ApiRequest {
            api_key: M1_TEST,
            idempotency_key: key(k),
            endpoint: Endpoint::CancelPayment {
                payment_id: payment,
            },
        }
    }

    /// `POST /v1/checkout/sessions  Idempotency-Key: K`.
    pub fn session(k: &str, order: &str, amount: i64, currency: &str) -> ApiRequest {
        ApiRequest {
            api_key: M1_TEST,
            idempotency_key: key(k),
            endpoint: Endpoint::CreateCheckoutSession {
                body: Json::Parsed(SessionBody {
                    merchant_order_no: Some(order.to_owned()),
                    amount: Some(amount),
                    currency: Some(currency.to_owned()),
                }),
            },
        }
    }

    /// `POST /v1/refunds  Idempotency-Key: K`.
    pub fn refund(k: &str, payment: PaymentId, refund_no: &str, amount: i64) -> ApiRequest {
        ApiRequest {
            api_key: M1_TEST,
            idempotency_key: key(k),
            endpoint: Endpoint::CreateRefund {
                body: Json::Parsed(RefundBody {
                    payment_id: Some(payment),
                    merchant_refund_no: Some(refund_no.to_owned()),
                    amount: Some(amount),
                }),
            },
        }
    }

    /// `GET /v1/payments/{id}`.
    pub fn get(payment: PaymentId) -> ApiRequest {
        query(Endpoint::GetPayment {
            payment_id: payment,
        })
    }

    /// `GET /v1/payments?merchant_order_no=…`.
    pub fn by_order(order: &str) -> ApiRequest {
        query(Endpoint::ListPayments {
            merchant_order_no: order.to_owned(),
        })
    }

    /// `GET /v1/refunds/{id}`.
    pub fn get_refund(refund: RefundId) -> ApiRequest {
        query(Endpoint::GetRefund { refund_id: refund })
    }

    /// `GET /v1/refunds?merchant_refund_no=…`.
    pub fn by_refund_no(refund_no: &str) -> ApiRequest {
        query(Endpoint::ListRefundsByNo {
            merchant_refund_no: refund_no.to_owned(),
        })
    }

    /// A GET with merchant 1's test key and no Idempotency-Key.
    pub fn query(endpoint: Endpoint) -> ApiRequest {
        ApiRequest {
            api_key: M1_TEST,
            idempotency_key: None,
            endpoint,
        }
    }

    /// The same request with another API key.
    pub fn with_api_key(mut r: ApiRequest, api_key: ApiKeyId) -> ApiRequest {
        r.api_key = api_key;
        r
    }

    /// The same request with another Idempotency-Key header (None: no header).
    pub fn with_key(mut r: ApiRequest, k: Option<&str>) -> ApiRequest {
        r.idempotency_key = k.map(str::to_owned);
        r
    }
}
