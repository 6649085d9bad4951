//! Sending: keyed POSTs under their stored key, queries without one, and the
//! timeouts of each (TIMEOUT-01).

use super::{ClientTimer, Cx, Flight, MerchantServer, Op};
use crate::api::{ApiRequest, ConfirmBody, CreatePaymentBody, Endpoint, Json, Method, RefundBody};
use crate::client::db::{MerchantDb, OrderOutcome, SubmissionKind};
use crate::client::decision::Decision;
use crate::client::io::{ClientOutput, Handle};
use crate::client::policy::AntiPattern;
use crate::rules::Rule;
use crate::text::Text;

impl MerchantServer {
    /// Whether this process is sending `op` or will retry it.
    pub(in crate::client) fn busy(&self, op: &Op) -> bool {
        self.memory.in_flight.values().any(|f| f.op == *op)
            || self
                .memory
                .timers
                .iter()
                .any(|(_, t)| matches!(t, ClientTimer::Retry { op: o, .. } if o == op))
    }

    /// Whether a keyed op is still waiting for an answer (no other server or channel has
    /// answered it, and no newer submission replaced it).
    pub(in crate::client) fn op_current(&self, db: &MerchantDb, op: &Op) -> bool {
        match op {
            Op::Submit { order, seq } => db.order(order).is_some_and(|o| {
                o.submission.seq == *seq && o.submission.outcome == OrderOutcome::Sending
            }),
            Op::Cancel { order } => db
                .order(order)
                .and_then(|o| o.cancel.as_ref())
                .is_some_and(|c| c.outcome == OrderOutcome::Sending),
            Op::Refund { refund } => db
                .refund(refund)
                .is_some_and(|r| r.outcome == OrderOutcome::Sending),
            _ => true,
        }
    }

    /// Sends try `try_no` of a keyed POST under its stored key (RETRY-01: the same key
    /// on every try). Only a random key kept in memory can be missing, after a crash: the
    /// naive process then makes a new one (`KeyNotPersisted`).
    pub(in crate::client) fn send_keyed(&mut self, cx: &mut Cx, op: Op, try_no: u32, rule: Rule) {
        if try_no == 1 {
            // A new round: what the earlier one may have executed is settled (an answer,
            // a "not found", or a restart that looked it up).
            self.memory.uncertain.remove(&op);
        }
        if let Some(until) = self.memory.held_back.get(&op).copied() {
            if cx.now < until {
                // RATE-03: a Retry-After outlasting the tries still holds: send then.
                let rule = Rule::RetryAfterHonoured;
                let timer = ClientTimer::Retry {
                    op: op.clone(),
                    try_no,
                    rule,
                };
                self.memory.timers.insert((until, timer));
                let decision = Decision::RetryScheduled { try_no, at: until };
                return cx.decide(op.subject(), decision, rule);
            }
            self.memory.held_back.remove(&op);
        }
        let (key, rule) = match self.stored_key(cx.db, &op) {
            Some(key) => (key, rule),
            None => {
                let pattern = AntiPattern::KeyNotPersisted;
                let key = cx.dice.uuid();
                self.memory.unpersisted.insert(op.clone(), key.clone());
                cx.decide(
                    op.subject(),
                    Decision::Deviate { pattern },
                    pattern.breaks(),
                );
                (key, pattern.breaks())
            }
        };
        if let Some(request) = self.keyed_request(cx.db, &op, key) {
            self.send(cx, op, try_no, request, rule);
        }
    }

    /// The request of a keyed op, built from the database.
    fn keyed_request(&self, db: &MerchantDb, op: &Op, key: Text) -> Option<ApiRequest> {
        let endpoint = match op {
            Op::Submit { order, .. } => {
                let rec = db.order(order)?;
                let card = Some(rec.submission.card);
                match rec.submission.kind {
                    SubmissionKind::Create => Endpoint::CreatePayment {
                        body: Json::Parsed(CreatePaymentBody {
                            merchant_order_no: Some(rec.submission.merchant_order_no.clone()),
                            amount: Some(rec.amount as i64),
                            currency: Some(rec.currency.clone()),
                            card,
                        }),
                    },
                    SubmissionKind::Confirm => Endpoint::ConfirmPayment {
                        payment_id: rec.payment_id?,
                        body: Json::Parsed(ConfirmBody { card }),
                    },
                }
            }
            Op::Cancel { order } => Endpoint::CancelPayment {
                payment_id: db.order(order)?.payment_id?,
            },
            Op::Refund { refund } => {
                let rec = db.refund(refund)?;
                Endpoint::CreateRefund {
                    body: Json::Parsed(RefundBody {
                        payment_id: Some(rec.payment_id),
                        merchant_refund_no: Some(rec.refund_no.clone()),
                        amount: Some(rec.amount as i64),
                    }),
                }
            }
            _ => return None,
        };
        Some(ApiRequest {
            api_key: self.config.api_key,
            idempotency_key: Some(key),
            endpoint,
        })
    }

    /// A GET: no Idempotency-Key (KEY-06).
    pub(in crate::client) fn query_request(&self, endpoint: Endpoint) -> ApiRequest {
        ApiRequest {
            api_key: self.config.api_key,
            idempotency_key: None,
            endpoint,
        }
    }

    /// TIMEOUT-01: 10 s for a GET, 20 s for a POST; 5 s for a GET under `QueryTimeout5s`
    /// and for a create or confirm under `PostTimeout5s`.
    fn timeout_of(&self, cx: &mut Cx, op: &Op, request: &ApiRequest) -> crate::time::Millis {
        let params = &self.config.params;
        let (query, normal) = match &request.endpoint {
            e if e.method() == Method::Get => (true, params.query_timeout),
            Endpoint::CreatePayment { .. } | Endpoint::ConfirmPayment { .. } => {
                (false, params.post_timeout)
            }
            _ => return params.post_timeout,
        };
        let Some(pattern) = self.config.policy.short_timeout(query) else {
            return normal;
        };
        cx.depart(op.subject(), pattern);
        params.short_timeout
    }

    /// Hands a request to the network. TIMEOUT-01: at least 20 s for POSTs, 10 s for GETs;
    /// A-CLIENT-POST-TIMEOUT: cancel and refund wait 20 s like create and confirm.
    pub(in crate::client) fn send(
        &mut self,
        cx: &mut Cx,
        op: Op,
        try_no: u32,
        request: ApiRequest,
        rule: Rule,
    ) {
        self.memory.next_handle += 1;
        let handle = Handle {
            boot: self.boot,
            n: self.memory.next_handle,
        };
        let timeout = self.timeout_of(cx, &op, &request);
        self.memory.in_flight.insert(handle, Flight { op, try_no });
        cx.out.push(ClientOutput::Send {
            handle,
            request,
            timeout,
            rule,
        });
    }
}
