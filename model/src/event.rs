//! The event stream: one typed [`Event`] for each thing that happens, in the contract's
//! vocabulary, whoever produced it.
//!
//! Sources emit events: the simulated world today, a live sandbox, a recorded log or a
//! platform under test tomorrow. Consumers read them: the trace renders them, the facts
//! compact them into the history the properties judge. Nothing here decides whether
//! something is right; an event only says what was seen. The flow is one way:
//! source → events → facts → properties → verdicts → report.
//!
//! Two kinds of event:
//! - **on the wire** (requests, answers, webhooks, losses, timeouts, crashes, the clock,
//!   client decisions): any source can emit them;
//! - **observations of the ground truth** (the acquirer's ledger and charges, the
//!   platform's store, a merchant's database): emitted where the source can see them (the
//!   simulated world and the sandbox, whose platform is the model). Their absence makes a
//!   property unjudgeable, never a pass.
//!
//! No card data: a card is an opaque label (`card A`), as everywhere in the model.

use crate::acquirer::{AcquirerDecision, ChargeState, LedgerEntry, UpstreamCall, UpstreamReply};
use crate::client::{Command, Decision, Handle, OrderState, Subject};
use crate::platform::state::AttemptStatus;
use crate::{
    ApiRequest, ApiResponse, AttemptId, Control, Environment, MerchantId, Method, Millis,
    PaymentId, PaymentStatus, RefundId, RefundStatus, RequestId, ResolutionStatus, Rule, Text,
    WebhookEvent,
};
use serde::{Deserialize, Serialize};

/// Who sends or receives. Named like turmoil's hosts: `merchant-0`, `platform`, `acquirer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    /// Merchant server `i` (a client model, or a scripted sender).
    Merchant(u8),
    Platform,
    Acquirer,
    /// The payer, who authenticates `requires_action` charges.
    Payer,
    /// The environment: controls such as rate limits and channel pauses, crashes, time.
    Env,
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Node::Merchant(i) => write!(f, "merchant-{i}"),
            Node::Platform => f.write_str("platform"),
            Node::Acquirer => f.write_str("acquirer"),
            Node::Payer => f.write_str("payer"),
            Node::Env => f.write_str("env"),
        }
    }
}

/// The merchant and environment an API key names (SCOPE-01, SCOPE-02), as the source
/// resolved it (`None`: an unknown key).
pub type Owner = Option<(MerchantId, Environment)>;

/// An idempotency scope as the merchant sees it (SCOPE-01): merchant, environment,
/// method, path and key, computed from the request and its API key's owner, not from
/// the platform.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ScopeKey {
    pub merchant: MerchantId,
    pub environment: Environment,
    pub method: Method,
    pub path: Text,
    pub key: Text,
}

impl ScopeKey {
    /// The scope of a keyed request whose API key names `owner`.
    pub fn of(owner: Owner, request: &ApiRequest) -> Option<ScopeKey> {
        let key = request.idempotency_key.clone()?;
        let (merchant, environment) = owner?;
        Some(ScopeKey {
            merchant,
            environment,
            method: request.endpoint.method(),
            path: request.endpoint.path(),
            key,
        })
    }
}

/// A client's business order: order number `order` in merchant database `db`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BusinessOrder {
    pub db: u8,
    pub order: Text,
}

/// One business submission of a client (GEN-01): the order in database `db` and its
/// sequence number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SubmissionRef {
    pub db: u8,
    pub order: Text,
    pub seq: u32,
}

/// How a platform answer travels back to the merchant that asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// The node that sent the request.
    pub merchant: u8,
    /// The merchant and environment of the request's API key.
    pub owner: Owner,
    /// The request's idempotency scope, as the merchant computes it.
    pub scope: Option<ScopeKey>,
    /// A client is still waiting for this answer (it did not time out, crash or send a
    /// duplicate it does not wait for).
    pub awaited: bool,
    /// The platform's edge replaced the answer with a 500 after executing (UNKNOWN-01).
    pub edge_500: bool,
    /// The merchant and environment that own the object the answer returns, as the
    /// platform's store says (an observation; `None` when there is none or it is unseen).
    pub object_owner: Owner,
}

/// What one request did to the platform in the step that handled it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handling {
    /// The answer to this request in this step, if any (a waiter is answered later).
    pub answer: Option<ApiResponse>,
    /// The upstream calls the step sent.
    pub calls: Vec<UpstreamCall>,
    /// The step stored a new idempotency record.
    pub new_record: bool,
    /// The step changed how many Payments, attempts, refunds, sessions or idempotency
    /// records the platform's store holds.
    pub store_changed: bool,
}

/// A message on the merchants' network.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "message", rename_all = "snake_case")]
pub enum Message {
    Request {
        id: RequestId,
        from: u8,
        request: ApiRequest,
    },
    Response {
        id: RequestId,
        to: u8,
    },
    Webhook {
        to: u8,
        event: WebhookEvent,
    },
}

/// What the platform's store holds of a Payment, observed after a step that changed it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StoredPayment {
    pub merchant: MerchantId,
    pub environment: Environment,
    pub merchant_order_no: Text,
    pub status: PaymentStatus,
    pub resolution: ResolutionStatus,
    pub expires_at: Millis,
    /// Its attempts, oldest first.
    pub attempts: Vec<AttemptId>,
    /// `failure.attempt_id`.
    pub failure_attempt: Option<AttemptId>,
    /// `version`: raised by every change a merchant could see (A-VERSION).
    pub version: u32,
    /// `fee_rate_bps`: the fee-rate snapshot every attempt keeps (ATTEMPT-06,
    /// A-FEE-SNAPSHOT). Absent in streams recorded before it was observed: 0.
    #[serde(default)]
    pub fee_rate_bps: u32,
}

/// What the platform's store holds of an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StoredAttempt {
    pub status: AttemptStatus,
    /// When its charge was sent upstream.
    pub sent_at: Millis,
}

/// What the platform's store holds of a refund.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StoredRefund {
    pub merchant: MerchantId,
    pub environment: Environment,
    pub merchant_refund_no: Text,
    pub status: RefundStatus,
    /// `version` (A-VERSION).
    pub version: u32,
}

/// What a merchant's database holds of an order, observed after a client step changed it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StoredOrder {
    pub payment_id: Option<PaymentId>,
    /// The latest Payment version applied (0: none).
    pub version: u32,
    pub status: Option<PaymentStatus>,
}

/// What a merchant database's record of an order says of its result, observed after a
/// client step changed it: what the liveness check reads (the query schedule, SCHED-01,
/// and the order's state as the merchant shows it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ShownOrder {
    /// What the merchant shows for the order.
    pub state: OrderState,
    pub payment_id: Option<PaymentId>,
    /// The latest Payment version applied (0: none).
    pub version: u32,
    /// The order number the current submission carries.
    pub merchant_order_no: Text,
    /// Since when the result has been unknown: the query window's start (SCHED-01).
    pub confirming_since: Option<Millis>,
    /// When a server last sent a query of the order's Payment (SCHED-02).
    pub last_query_at: Option<Millis>,
    /// The last query time of the client's own schedule from `confirming_since`: no
    /// query is due after it.
    pub queries_until: Option<Millis>,
}

impl ShownOrder {
    /// What `order` says of its result, its query window read from the schedule of a
    /// client with `params`.
    pub fn of(order: &crate::client::OrderRecord, params: &crate::client::ClientParams) -> Self {
        let last = crate::client::schedule::query_offsets(params)
            .into_iter()
            .max();
        ShownOrder {
            state: order.state(),
            payment_id: order.payment_id,
            version: order.version(),
            merchant_order_no: order.submission.merchant_order_no.clone(),
            confirming_since: order.confirming_since,
            last_query_at: order.last_query_at,
            queries_until: order
                .confirming_since
                .map(|anchor| last.map_or(anchor, |o| anchor.after(o))),
        }
    }
}

/// One thing that happened, at simulated (or recorded) time `at`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub at: Millis,
    #[serde(flatten)]
    pub what: What,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum What {
    // ---- The merchants' network. ----
    /// Merchant node `from` opens HTTP exchange `id` with `request`.
    Sent {
        id: RequestId,
        from: u8,
        request: ApiRequest,
    },
    /// A message was duplicated on the network; a duplicated request is a new exchange
    /// `copy` with the same bytes.
    Duplicated {
        message: Message,
        copy: Option<RequestId>,
    },
    /// A message was lost on the network.
    Lost { message: Message },
    /// The request of exchange `id` reaches the platform.
    Arrived {
        id: RequestId,
        from: u8,
        request: ApiRequest,
    },
    /// The platform's edge answered 500 without executing (UNKNOWN-01).
    Refused500 {
        id: RequestId,
        from: u8,
        request: ApiRequest,
    },
    /// The platform handled the request of exchange `id`: what the step did.
    Handled {
        id: RequestId,
        request: ApiRequest,
        owner: Owner,
        /// The client's business order the request is for, if a client submitted it.
        business: Option<BusinessOrder>,
        handling: Handling,
    },
    /// The platform answers exchange `id` (before any edge replacement), by `rule`;
    /// `route` is `None` when nobody holds that exchange any more.
    Answered {
        id: RequestId,
        response: ApiResponse,
        rule: Rule,
        route: Option<Route>,
    },
    /// A response reaches merchant node `to`.
    Delivered {
        id: RequestId,
        to: u8,
        response: ApiResponse,
    },
    /// A response reaches client node `to`, which no longer awaits exchange `id` (it
    /// gave up on it (TIMEOUT-01) or crashed, or the exchange is a copy the network
    /// made): the connection is gone and nothing reads it, so it is no input.
    DeliveredUnread {
        id: RequestId,
        to: u8,
        response: ApiResponse,
    },
    /// A response reaches merchant node `to`, of which the source (a recorded log)
    /// kept the status and `Retry-After` but no body in the contract's shape.
    DeliveredStatus {
        id: RequestId,
        to: u8,
        status: u16,
        retry_after_s: Option<u32>,
    },

    // ---- Webhooks. ----
    /// The platform emits a webhook event for node `to` (`None`: no endpoint configured).
    WebhookEmitted {
        event: WebhookEvent,
        rule: Rule,
        to: Option<u8>,
    },
    /// A webhook event reaches node `to`.
    WebhookDelivered { to: u8, event: WebhookEvent },

    // ---- The upstream link and the acquirer. ----
    /// The platform sends `call` upstream, while handling exchange `during` (`None`: on
    /// a timer, a reply or a webhook acknowledgement).
    UpstreamCalled {
        call: UpstreamCall,
        rule: Rule,
        during: Option<RequestId>,
    },
    /// The acquirer handles `call` with `decision`.
    Acquired {
        call: UpstreamCall,
        decision: AcquirerDecision,
    },
    /// An acquirer reply reaches the platform.
    UpstreamReplied { reply: UpstreamReply },
    /// An upstream call was lost.
    UpstreamCallLost { call: UpstreamCall },
    /// An upstream reply was lost.
    UpstreamReplyLost { reply: UpstreamReply },
    /// The payer authenticated a `requires_action` charge, or failed to.
    Authenticated { attempt: AttemptId, ok: bool },

    // ---- Observations of the ground truth. ----
    /// Money moved: a new entry in the acquirer's ledger.
    Ledger { entry: LedgerEntry },
    /// The acquirer's state of a charge changed.
    Charge {
        attempt: AttemptId,
        state: ChargeState,
    },
    /// The acquirer voided a charge reference before its charge arrived (A-UPSTREAM-VOID).
    Voided { attempt: AttemptId },
    /// The platform's store holds a new or changed Payment.
    PaymentStored {
        payment: PaymentId,
        stored: StoredPayment,
    },
    /// The platform's store holds a new or changed attempt.
    AttemptStored {
        attempt: AttemptId,
        payment: PaymentId,
        stored: StoredAttempt,
    },
    /// The platform's store holds a new or changed refund.
    RefundStored {
        refund: RefundId,
        stored: StoredRefund,
    },
    /// A merchant database holds a new or changed order: what it held before (`None`: a
    /// new order) and now.
    OrderStored {
        db: u8,
        order_no: Text,
        was: Option<StoredOrder>,
        stored: StoredOrder,
    },

    /// A merchant database files an order under a purchase (a merchant journal's cart,
    /// or the order alone): `payments`, the Payments of order `order_no` of `merchant`
    /// and `environment`, are business order `business`'s (EFFECT-01: "the same
    /// purchase"; where no journal tells, the wire's reading is A-SAME-PURCHASE-BY-AMOUNT).
    OrderInPurchase {
        merchant: MerchantId,
        environment: Environment,
        order_no: Text,
        payments: Vec<PaymentId>,
        business: BusinessOrder,
    },

    /// A merchant database's record of an order changed what it says of the order's
    /// result ([`ShownOrder`]); emitted where a source can read the database.
    OrderShown {
        db: u8,
        order_no: Text,
        shown: ShownOrder,
    },

    // ---- Merchant servers. ----
    /// Merchant node `node` is given a business command.
    Commanded { node: u8, command: Command },
    /// A client decides to send `request` as `handle`, waiting `timeout` (TIMEOUT-01);
    /// `held`: the process dies before it leaves.
    ClientSends {
        node: u8,
        handle: Handle,
        request: ApiRequest,
        owner: Owner,
        timeout: Millis,
        rule: Rule,
        submission: Option<SubmissionRef>,
        held: bool,
    },
    /// A client decision about `subject`, and the rule that led to it.
    ClientDecided {
        node: u8,
        subject: Subject,
        decision: Decision,
        rule: Rule,
    },
    /// A client's timeout for exchange `id` fired: no response (TIMEOUT-01).
    TimedOut { node: u8, id: RequestId },
    /// A merchant server crashes: memory lost, database kept.
    Crashed { node: u8 },
    /// A merchant server restarts from its database.
    Restarted { node: u8 },

    // ---- The environment. ----
    /// A control is thrown on the platform (rate limit, channel pause, API keys, fees).
    Controlled { control: Control },
    /// The clock moved to `to`.
    Clock { to: Millis },
    /// A jump of the clock past the horizon of everything pending compressed the
    /// deadlines that re-arm themselves (the platform's manual_review re-query, the
    /// clients' wakes): from `from` to `to` they fire once, at `to`, not once per period.
    /// A harness artefact (a `wait 99999999d`), not the platform's behaviour: the
    /// cadence properties do not judge the periods it compressed.
    ClockCompressed { from: Millis, to: Millis },
}

impl Event {
    pub fn new(at: Millis, what: What) -> Event {
        Event { at, what }
    }
}

impl What {
    /// A card retry's confirm its client persisted but died before sending: it still
    /// reopens its Payment (ATTEMPT-02: the database holds the retry; GEN-06 resends it).
    pub fn is_held_confirm(&self) -> bool {
        matches!(self, What::ClientSends { request, held: true, .. }
            if matches!(request.endpoint, crate::Endpoint::ConfirmPayment { .. }))
    }
}
