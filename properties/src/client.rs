//! Safety properties of merchant integrations: what a client following the contract
//! never does, whatever faults the contract allows. Anti-pattern clients break them.

use crate::evidence::{CLIENT, CLIENT_PLATFORM, DB, DB_LEDGER, PLATFORM, PLATFORM_LEDGER};
use crate::exercise::{Exercise, KEYED};
use crate::property::{Predicate, Property};
use crate::wire;
use crate::witnessed::Witnessed;
use payhub_model::event::BusinessOrder;
use payhub_model::{Contract, LedgerEntry, PaymentId, RefundId, Rule};

/// EFFECT-01, UNKNOWN-03, RES-04: one business order is captured at most once, however
/// the client retried, re-keyed, renumbered or re-charged it.
pub const ORDER_CHARGED_ONCE: Property = Property {
    name: "client-never-charges-an-order-twice",
    rules: &[
        Rule::OneBusinessEffect,
        Rule::NeverSwitchKeyOnUnknown,
        Rule::ManualReviewClient,
        Rule::PersistBeforeSend,
    ],
    about: "The ledger captures each business order of a client at most once (across every Payment its submissions created).",
    needs: PLATFORM_LEDGER,
    exercised_by: &[Exercise::Create, Exercise::Confirm, Exercise::Session],
    predicate: Predicate::Always(|f| {
        // The Payments captured so far per order: a second capture is the violation.
        let mut captured: std::collections::BTreeMap<&BusinessOrder, Vec<PaymentId>> =
            Default::default();
        for e in f.money.ledger() {
            if let LedgerEntry::Capture { payment, .. } = e {
                if let Some(business) = f.money.payment_business.get(payment) {
                    let earlier = captured.entry(business).or_default();
                    if !earlier.is_empty() {
                        let list: Vec<String> = earlier.iter().map(|p| p.to_string()).collect();
                        let mut w = Witnessed::new(format!(
                            "order {} was captured {} times: {} and then {payment}",
                            business.order,
                            earlier.len() + 1,
                            list.join(", ")
                        ))
                        .order(&business.order);
                        for p in earlier.iter() {
                            w = w.payment(*p);
                        }
                        return Some(w.payment(*payment));
                    }
                    earlier.push(*payment);
                }
            }
        }
        None
    }),
};

/// EFFECT-01, UNKNOWN-03, REFUND-02 (S11: "retry with K, or query by merchant_refund_no"):
/// one refund request is paid back at most once, however the client renumbered it. The
/// effect: the renumbering itself (REFUND-04) is [`REFUND_NUMBER_KEPT`]'s, whether or not
/// money moved twice.
pub const REFUND_REQUEST_REFUNDED_ONCE: Property = Property {
    name: "client-never-refunds-a-request-twice",
    rules: &[
        Rule::OneBusinessEffect,
        Rule::NeverSwitchKeyOnUnknown,
        Rule::RefundReplaySameRefund,
    ],
    about: "The ledger pays back each refund request of a client at most once (across every refund its submissions created under any refund number).",
    needs: PLATFORM_LEDGER,
    exercised_by: &[Exercise::Refund],
    predicate: Predicate::Always(|f| {
        // The first refund paid back per refund request.
        let mut refunded: std::collections::BTreeMap<&BusinessOrder, RefundId> = Default::default();
        for e in f.money.ledger() {
            if let LedgerEntry::Refund { refund, .. } = e {
                let Some(business) = f.money.refund_business.get(refund) else {
                    continue;
                };
                if let Some(first) = refunded.get(business).filter(|r| *r != refund) {
                    return Some(
                        Witnessed::new(format!(
                            "refund request {} was paid back twice: {first} and then {refund}",
                            business.order
                        ))
                        .refund(*first)
                        .refund(*refund),
                    );
                }
                refunded.entry(business).or_insert(*refund);
            }
        }
        None
    }),
};

/// REFUND-04, UNKNOWN-03 (S11: "do not change the refund number and apply again"): a
/// refund request keeps its refund number until its refund is known. In a run's facts:
/// no refund request sent to the acquirer as two refunds of different refund numbers
/// (the world files a refund under a request only as its client's, or, in the sandbox,
/// as a refund of the same Payment and amount while the first is unresolved); over the
/// wire: after a refund's unknown outcome, or while it was shown `processing` or
/// `pending_review`, no refund of the same Payment and amount under another number
/// ([`crate::wire::CLIENT_KEEPS_THE_REFUND_NUMBER_WHILE_UNRESOLVED`]).
pub const REFUND_NUMBER_KEPT: Property = Property {
    name: "client-keeps-the-refund-number-while-unresolved",
    rules: &[Rule::RefundNoKept, Rule::NeverSwitchKeyOnUnknown],
    about: "A refund request is never applied again under another merchant_refund_no while its outcome is unknown (no answer, a 5xx other than 503, or shown processing or pending_review): in a run's facts, no refund request sent to the acquirer under two refund numbers; on the wire, no refund of the same Payment and amount under another number until an answer shows the first final.",
    needs: PLATFORM,
    exercised_by: &[Exercise::Refund],
    predicate: Predicate::Levels {
        facts: |f| {
            let number = |r: &RefundId| f.refunds.refunds.get(r).map(|s| &s.merchant_refund_no);
            let filed = &f.money.refund_business;
            filed.iter().enumerate().find_map(|(i, (first, request))| {
                let (then, _) = filed.iter().skip(i + 1).find(|(then, other)| {
                    *other == request
                        && number(first).zip(number(then)).is_some_and(|(a, b)| a != b)
                })?;
                Some(
                    Witnessed::new(format!(
                        "refund request {} was applied again under another refund number: {first} and then {then}",
                        request.order
                    ))
                    .refund(*first)
                    .refund(*then),
                )
            })
        },
        wire: crate::wire::CLIENT_KEEPS_THE_REFUND_NUMBER_WHILE_UNRESOLVED,
    },
};

/// GEN-04, GEN-05, GEN-06, UNKNOWN-03: one business submission, one key.
pub const ONE_KEY_PER_SUBMISSION: Property = Property {
    name: "client-sends-one-key-per-submission",
    rules: &[
        Rule::OneKeyPerSubmission,
        Rule::RandomKeyPersistedFirst,
        Rule::PersistBeforeSend,
        Rule::NeverSwitchKeyOnUnknown,
        Rule::RetrySameKey,
        Rule::InFlightRetryLater,
        Rule::RetryAfterHonoured,
    ],
    about: "Every request of one business submission (order, sequence) carries the same Idempotency-Key.",
    needs: CLIENT,
    exercised_by: KEYED,
    predicate: Predicate::Levels {
        facts: |f| {
            f.client.second_key.as_ref().map(|s| {
                let (order, seq) = (&s.order, s.seq);
                Witnessed::new(format!(
                    "submission {seq} of {order} was sent under a second key"
                ))
                .order(order)
            })
        },
        wire: crate::wire::CLIENT_KEEPS_THE_KEY_AFTER_A_REFUSAL,
    },
};

/// WEBHOOK-02: a client never applies an older version over a newer one.
pub const VERSIONS_NEVER_GO_BACK: Property = Property {
    name: "client-never-applies-an-older-version",
    rules: &[Rule::LatestVersionWins],
    about: "The Payment version a client has applied to an order never decreases.",
    needs: DB,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        f.client.version_regressed.as_ref().map(|(_, order)| {
            Witnessed::new(format!("order {order} went back to an older version")).order(order)
        })
    }),
};

/// SCHED-02: at least 10 seconds between two queries of one object.
pub const QUERIES_SPACED: Property = Property {
    name: "client-spaces-queries",
    rules: &[Rule::QuerySpacing],
    about: "A client never sends two queries of the same object less than 10 seconds apart.",
    needs: CLIENT,
    exercised_by: &[Exercise::Query],
    predicate: Predicate::Levels {
        facts: |f| {
            let q = f.queries.closest_queries.as_ref()?;
            (q.gap() < Contract::QUERY_SPACING_MIN).then(|| {
                let found = if q.path == q.last_path {
                    Witnessed::new(format!(
                        "query too soon: GET {} at {} after {}",
                        q.path, q.at, q.last
                    ))
                } else {
                    Witnessed::new(format!(
                        "query too soon: GET {} at {} after GET {} at {}, the same object",
                        q.path, q.at, q.last_path, q.last
                    ))
                };
                found.object_at(&q.path).object_at(&q.last_path)
            })
        },
        wire: crate::wire::CLIENT_SPACES_QUERIES,
    },
};

/// RATE-03: after a 429, wait Retry-After before retrying the same key.
pub const RETRY_AFTER_HONOURED: Property = Property {
    name: "client-honours-retry-after",
    rules: &[Rule::RetryAfterHonoured],
    about: "After a 429 a client sends nothing under that idempotency scope before Retry-After has passed.",
    needs: CLIENT_PLATFORM,
    exercised_by: &[],
    predicate: Predicate::Levels {
        facts: |f| {
            f.queries.retry_after_ignored.as_ref().map(|r| {
                Witnessed::new(format!(
                    "merchant-{} sent {} {} Idempotency-Key: {} at {}, Retry-After ends at {}",
                    r.node, r.scope.method, r.scope.path, r.scope.key, r.at, r.until
                ))
                .key(&r.scope.key)
                .object_at(&r.scope.path)
            })
        },
        wire: crate::wire::CLIENT_HONOURS_RETRY_AFTER,
    },
};

/// GEN-05: a key is used only for the same endpoint.
pub const KEY_ON_ONE_ENDPOINT: Property = Property {
    name: "client-uses-a-key-on-one-endpoint",
    rules: &[Rule::OneKeyPerSubmission],
    about: "A client never sends one Idempotency-Key on two endpoints (method and path).",
    needs: CLIENT,
    exercised_by: KEYED,
    predicate: Predicate::Levels {
        facts: |f| {
            f.client.key_on_two_endpoints.as_ref().map(|k| {
                Witnessed::new(format!(
                    "key reused across endpoints: {} on {} {} and {} {}",
                    k.key, k.first.0, k.first.1, k.then.0, k.then.1
                ))
                .key(&k.key)
                .object_at(&k.first.1)
                .object_at(&k.then.1)
            })
        },
        wire: crate::wire::CLIENT_USES_A_KEY_ON_ONE_ENDPOINT,
    },
};

/// UNKNOWN-04: never change the parameters and replay the original key.
pub const PARAMETERS_BOUND_TO_KEY: Property = Property {
    name: "client-never-changes-parameters-under-a-key",
    rules: &[Rule::ConflictIsDefect, Rule::OneKeyPerSubmission],
    about: "A client re-sends a key only with the safety-relevant parameters it first sent it with.",
    needs: CLIENT,
    exercised_by: KEYED,
    predicate: Predicate::Levels {
        facts: |f| {
            f.client.params_changed_under_key.as_ref().map(|k| {
                Witnessed::new(format!(
                    "parameters changed under a key: {} {} Idempotency-Key: {}: {} then {}",
                    k.scope.method, k.scope.path, k.scope.key, k.first, k.then
                ))
                .key(&k.scope.key)
                .object_at(&k.scope.path)
            })
        },
        wire: crate::wire::CLIENT_NEVER_CHANGES_PARAMETERS_UNDER_A_KEY,
    },
};

/// UNKNOWN-03 ("never change the idempotency key or the order number to charge again"),
/// GEN-02, RETRY-03: an order's payment is created under one key, however its result
/// turned out; only a new business submission (a card retry) gets a new key. In a run's
/// facts: every create of one order under one key; over the wire: after a create's
/// unknown outcome, neither the order under a new key nor the same purchase under a new order
/// number ([`crate::wire::CLIENT_KEEPS_KEY_AND_ORDER_AFTER_UNKNOWN`]). The facts level
/// reads no renumbering: a business order charged again under another number is judged
/// by its effect ([`ORDER_CHARGED_ONCE`]).
pub const ORDER_CREATED_UNDER_ONE_KEY: Property = Property {
    name: "client-creates-an-order-under-one-key",
    rules: &[
        Rule::NeverSwitchKeyOnUnknown,
        Rule::SequenceOnlyForNewSubmission,
        Rule::RetryMaxAttempts,
    ],
    about: "Every create a client sends for one (merchant, environment, merchant_order_no) carries the same Idempotency-Key, unless a create under it was rejected with 400, 401, 403 or 422 (REJECT-01: the corrected request goes under a new key); on the wire: after a create whose outcome is unknown, neither that order under a new key nor the same purchase under a new order number until the client learns the order's Payment.",
    needs: CLIENT_PLATFORM,
    exercised_by: &[Exercise::Create],
    predicate: Predicate::Levels {
        facts: |f| {
            f.client.order_rekeyed.as_ref().map(|o| {
                Witnessed::new(format!(
                    "order created under a second key: {} under {} and {}",
                    o.order, o.first, o.then
                ))
                .order(&o.order)
                .key(&o.first)
                .key(&o.then)
            })
        },
        wire: crate::wire::CLIENT_KEEPS_KEY_AND_ORDER_AFTER_UNKNOWN,
    },
};

/// ATTEMPT-07: a card retry only after `failed`.
pub const CARD_RETRY_ONLY_AFTER_FAILED: Property = Property {
    name: "client-card-retry-only-after-failed",
    rules: &[
        Rule::CardRetryOnlyAfterFailed,
        Rule::NeverSwitchKeyOnUnknown,
        Rule::ConfirmWhileProcessing,
        Rule::RetryMaxAttempts,
    ],
    about: "No request a client waits for is answered 409 payment_in_progress: it never confirms with a new key while the payment is processing or requires_action.",
    needs: CLIENT_PLATFORM,
    exercised_by: &[Exercise::Confirm],
    predicate: Predicate::Levels {
        facts: |f| {
            Witnessed::of_request(f.client.card_retry_in_progress, |id| {
                format!("{id}: a confirm with a new key while the payment was in progress")
            })
        },
        wire: crate::wire::CLIENT_KEEPS_THE_CONFIRM_KEY_WHILE_UNRESOLVED,
    },
};

/// CANCEL-02: a 202 on cancel is not "canceled". An order the client closed (canceled
/// or expired) has no money captured behind it.
pub const CLOSED_ORDER_NOT_CAPTURED: Property = Property {
    name: "client-never-closes-a-captured-order",
    rules: &[Rule::Cancel202NotCanceled, Rule::FulfilByPaymentId],
    about: "No order a client holds as closed (canceled or expired) has a capture of its Payment in the ledger.",
    needs: DB_LEDGER,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        let closed = &f.effects.history.closed;
        let ((_, order_no), payment) = closed.iter().find(|(_, p)| f.money.captured(**p))?;
        let found =
            format!("order {order_no} is canceled for the merchant but {payment} was captured");
        Some(Witnessed::new(found).order(order_no).payment(*payment))
    }),
};

/// ATTEMPT-03 ("a confirm with a new idempotency key"), GEN-05
/// ("payment.confirm:ORDER-DEMO-001:2": the card retry's own key).
pub const CLIENT_RETRIES_A_CARD_UNDER_A_NEW_KEY: Property = Property {
    name: "wire-client-retries-a-card-under-a-new-key",
    rules: &[Rule::CardRetryNewKey, Rule::OneKeyPerSubmission],
    about: "After an answer showed a Payment failed, the client does not confirm it again under the key of its previous confirm (the platform would replay the failure and never charge the new card).",
    needs: wire::SCOPED_BODIES,
    exercised_by: &[Exercise::Confirm],
    predicate: Predicate::Wire(wire::Patterns::client(
        wire::SCOPED_BODIES,
        &[crate::facts::wire::Breach::CardRetryUnderFailedKey],
    )),
};
