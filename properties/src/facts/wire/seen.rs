//! What a witness of the wire family shows: each exchange as it was sent and answered,
//! its ids as the source wrote them ([`payhub_model::observed::Interner`]).

use crate::facts::money::SafeParams;
use payhub_model::observation::VersionMark;
use payhub_model::observed::{IdKind, Interner, ObservedAnswer};
use payhub_model::{ErrorCode, Method, Millis, RequestId, Text};
use serde::Serialize;

/// One exchange as a witness names it: when it was sent and closed, what was sent,
/// and what came back (`None`: an unknown outcome).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Seen {
    pub id: RequestId,
    pub sent: Millis,
    pub closed: Millis,
    pub method: Method,
    /// The path and query, ids as the source wrote them.
    pub path: Text,
    pub key: Option<Text>,
    pub params: WireParams,
    /// The answer that reached the client (a 5xx too: still an unknown outcome).
    pub answer: Option<Answer>,
    /// Not closed yet: a witness taken at its send, before its answer.
    pub open: bool,
}

/// The safety-relevant parameters of a request ([`SafeParams`], SAFE-01) with the
/// Payment a refund names written as the source wrote it.
pub type WireParams = SafeParams<Text>;

impl SafeParams<Text> {
    /// `p` with its Payment id written as the source wrote it.
    pub fn of(p: SafeParams, ids: &Interner) -> WireParams {
        match p {
            SafeParams::None => WireParams::None,
            SafeParams::Order {
                merchant_order_no,
                amount,
                currency,
            } => WireParams::Order {
                merchant_order_no,
                amount,
                currency,
            },
            SafeParams::Refund {
                payment_id,
                merchant_refund_no,
                amount,
            } => WireParams::Refund {
                payment_id: payment_id.map(|p| ids.name(IdKind::Payment, p.0)),
                merchant_refund_no,
                amount,
            },
        }
    }

    /// Whether two requests' parameters are the same (`Some(true)`), differ in a field
    /// both name (`Some(false)`), or cannot be told: a field absent or null on one side
    /// only is not known (a log that did not record a body), never a change.
    pub fn compare(&self, other: &WireParams) -> Option<bool> {
        fn field<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> Option<bool> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a == b),
                (None, None) => Some(true),
                _ => None,
            }
        }
        let fields = match (self, other) {
            (WireParams::None, WireParams::None) => vec![],
            (
                WireParams::Order {
                    merchant_order_no: a,
                    amount: n,
                    currency: c,
                },
                WireParams::Order {
                    merchant_order_no: b,
                    amount: m,
                    currency: d,
                },
            ) => vec![field(a, b), field(n, m), field(c, d)],
            (
                WireParams::Refund {
                    payment_id: a,
                    merchant_refund_no: c,
                    amount: n,
                },
                WireParams::Refund {
                    payment_id: b,
                    merchant_refund_no: d,
                    amount: m,
                },
            ) => vec![field(a, b), field(c, d), field(n, m)],
            _ => return None,
        };
        if fields.contains(&Some(false)) {
            Some(false)
        } else if fields.contains(&None) {
            None
        } else {
            Some(true)
        }
    }
}

/// The part of an answer a witness shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Answer {
    pub status: u16,
    /// `error.code` where the contract names it (the model's code).
    pub code: Option<ErrorCode>,
    /// `error.code` as written where the contract does not name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unnamed_code: Option<Text>,
    /// The object's id as written (`pay_demo_001`, `pay_557eff458b794164bc1a`), if the
    /// body shows one.
    pub object: Option<Text>,
    pub version: Option<VersionMark>,
    pub retry_after_s: Option<u32>,
    pub related: bool,
    /// `error.related_resource_id` as written, when a string (named only where an
    /// explanation needs it).
    #[serde(skip)]
    pub related_id: Option<Text>,
    /// The Payment's `attempt_count`, if shown (named only where an explanation needs
    /// it).
    #[serde(skip)]
    pub attempt_count: Option<u32>,
    /// The object's `amount`, if shown (named only where an explanation needs it).
    #[serde(skip)]
    pub amount: Option<i64>,
}

impl Answer {
    pub(super) fn of(r: &ObservedAnswer) -> Answer {
        let shown = r.objects.first();
        Answer {
            status: r.status,
            code: r.code,
            unnamed_code: r.written_code.clone().filter(|_| r.code.is_none()),
            object: shown.map(|o| o.written.clone()),
            version: shown.and_then(|o| o.version.clone()),
            retry_after_s: r.retry_after_s,
            related: r.related,
            related_id: r.related_id.clone(),
            attempt_count: shown.and_then(|o| o.attempt_count),
            amount: shown.and_then(|o| o.amount),
        }
    }

    pub(super) fn status_only(status: u16, retry_after_s: Option<u32>) -> Answer {
        Answer {
            status,
            retry_after_s,
            ..Answer::default()
        }
    }
}

/// What a witness shows broke, with the exchanges that show it (oldest first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Witness {
    pub breach: Breach,
    pub entries: Vec<Seen>,
    /// The webhook the merchant acknowledged before its entries, where it is part of
    /// what broke (SCHED-01: a query after the webhook of a final status).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Delivered>,
}

impl Witness {
    /// A witness of exchanges alone.
    pub fn of(breach: Breach, entries: Vec<Seen>) -> Witness {
        Witness {
            breach,
            entries,
            webhook: None,
        }
    }
}

/// A webhook delivered to the merchant, its endpoint's answer 2xx (the event the
/// platform sent it as: its id, type, object and version as written).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Delivered {
    pub at: Millis,
    pub event: Text,
    pub kind: Text,
    pub object: Text,
    pub version: u32,
}

/// The patterns the properties' wire level looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Breach {
    /// REPLAY-01/02: a replay of an executed scope with its parameters got 201, another
    /// object, or an answer of new business (409 order_no_conflict, payment_in_progress,
    /// refund_no_conflict).
    ReplayNotSameObject,
    /// CONFLICT-01: other parameters under an executed scope were not answered 409
    /// idempotency_conflict.
    ConflictMissing,
    /// CONFLICT-01: the same parameters were answered 409 idempotency_conflict.
    ConflictWithoutChange,
    /// UNIQ-01, ORDER-01: two Payments for one order number.
    TwoPaymentsForOrder,
    /// ORDER-01, ATTEMPT-01, UNIQ-04: a conflict with no related_resource_id.
    RelatedResourceMissing,
    /// ORDER-01 ("returns 409 order_no_conflict with the existing Payment's id"): a 409
    /// order_no_conflict to a create naming another Payment than the one earlier answers
    /// showed for its order number.
    RelatedResourceOther,
    /// WEBHOOK-02's versions: a later answer showed an older version.
    VersionWentBack,
    /// UNKNOWN-03: a new key for an order whose create had an unknown outcome.
    NewKeyAfterUnknown,
    /// UNKNOWN-03: the same purchase under a new order number while the first is unknown.
    NewOrderNoAfterUnknown,
    /// UNKNOWN-03, ATTEMPT-01 (S8): a confirm of a Payment under another key while a
    /// confirm of it had an unknown outcome or it was last shown processing or
    /// requires_action.
    NewConfirmKeyWhileUnresolved,
    /// UNKNOWN-03, REFUND-02 (S11): a refund of the same Payment and amount under another
    /// refund number while a refund's outcome was unknown or it was last shown processing.
    NewRefundNoWhileUnresolved,
    /// UNKNOWN-03, REFUND-02 (S11: "retry with K"): a refund number sent again under
    /// another key while its refund's outcome was unknown or it was last shown processing.
    NewRefundKeyWhileUnresolved,
    /// ATTEMPT-02, GEN-04: a confirm under the previous confirm's key after the Payment was
    /// shown failed (a card retry the platform answers with the stored failure).
    CardRetryUnderFailedKey,
    /// RATE-03, S13: a create of an order (a refund number) answered 429 or 503, then
    /// sent under another key before an answer executed it.
    NewKeyAfterRefusal,
    /// GEN-05: one key on two endpoints.
    KeyOnTwoEndpoints,
    /// UNKNOWN-04, GEN-05: a key re-sent with other parameters.
    ParamsChangedUnderKey,
    /// SCHED-02: two queries of one object less than 10 s apart (decided by the
    /// property from `WireFacts::closest_queries`).
    QueryTooSoon,
    /// RATE-03: a request under a scope before its 429's Retry-After had passed.
    RetryAfterIgnored,
    /// UNIQ-04, RET-03: two Refunds for one merchant_refund_no.
    TwoRefundsForRefundNo,
    /// CANCEL-01: a cancel answered 202 shows the Payment canceled.
    Cancel202ShowsCanceled,
    /// QUERY-01, QUERY-02, QUERY-03: a query shows an object it did not ask for: another
    /// id, another number (the match is exact), or a second Payment of one order.
    LookupOtherNumber,
    /// QUERY-05, QUERY-01: a lookup by order number answered no record, or a query by id
    /// 404, after an answer showed the merchant that Payment ("no record: the platform
    /// has never created a Payment for this order number").
    LookupMissesKnown,
    /// WEBHOOK-02: a later answer showed a Payment's status changed at the same version.
    VersionStayedOnChange,
    /// ATTEMPT-06: a later answer showed a Payment with another amount.
    AmountChanged,
    /// SCOPE-02: one object shown to a merchant's test and live environments.
    ObjectInTwoEnvironments,
    /// CONC-01, CONC-02: a request under a key, with the parameters of the key's
    /// execution, answered as new business (409 order_no_conflict, …) while or after
    /// that execution ran, whatever the order of the two.
    SameKeyAsNewBusiness,
    /// RATE-01, RATE-04: every recorded request of a scope was refused (429
    /// rate_limited, 503 temporarily_unavailable), then an answer showed an execution of
    /// it (a create answered 200, a 409 idempotency_conflict). A breach only if the
    /// source holds every request (decided by the property that assumes it).
    RefusedThenExecuted,
    /// REJECT-01: every recorded request of a scope was rejected (400, 403, 422), then
    /// an answer showed the key bound (a 409 idempotency_conflict, a create answered
    /// 200). A breach only if the source holds every request.
    RejectedThenBound,
    /// REFUND-03 (A-REFUND-LIMIT): a refund accepted although, with the refunds of its
    /// Payment already shown succeeded, it exceeds the Payment's amount.
    RefundBeyondAmount,
    /// CARD-03, ATTEMPT-02: a Payment created through the API shown with more attempts
    /// than before, no confirm of it having been sent in between (a replay that
    /// charged). A breach only if the source holds every request.
    AttemptWithoutConfirm,
    /// ATTEMPT-05: a Payment shown with more attempts than the maximum (decided by the
    /// property from `WireFacts::most_attempts`).
    AttemptsBeyondMaximum,
    /// ATTEMPT-01, ATTEMPT-02: a newer attempt shown after one charged on a card that
    /// never fails (decided by the property from `WireFacts::renewed_attempts`).
    NewAttemptBeforeFailure,
    /// TIMEOUT-01: a client gave up on a create or confirm less than 20 s after sending
    /// it, or on a query less than 10 s.
    GaveUpTooSoon,
    /// SCHED-01: a query of a Payment sent after an answer to an earlier query showed it
    /// final.
    QueryAfterFinal,
    /// KEY-07: a key of 1–255 characters in every reading refused 400 about the
    /// Idempotency-Key (decided by the property from `WireFacts::shortest_refused_key`).
    ValidKeyRefused,
    /// KEY-01..KEY-06: a create, confirm, cancel, checkout session or refund with no
    /// Idempotency-Key, an empty one, or a printable ASCII one over 255 characters,
    /// answered 2xx: "if it is missing, 400 is returned".
    InvalidKeyAccepted,
}

impl Breach {
    /// A pattern that reads "the same purchase" (or refund request) from its amount: a
    /// log cannot tell a new order of one amount from the same order renumbered, so it is
    /// a breach only where the source is read so (A-SAME-PURCHASE-BY-AMOUNT).
    pub fn reads_purchases(self) -> bool {
        matches!(
            self,
            Breach::NewOrderNoAfterUnknown | Breach::NewRefundNoWhileUnresolved
        )
    }
}
