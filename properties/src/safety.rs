//! Safety properties of the platform, judged from the facts alone: the acquirer's ledger
//! and what the platform's store and answers were seen to hold, never against what the
//! platform says about itself alone.

use crate::evidence::{PLATFORM, PLATFORM_LEDGER};
use crate::exercise::{CHARGES, Exercise, KEYED};
use crate::property::{Predicate, Property};
use crate::witnessed::Witnessed;
use payhub_model::acquirer::ChargeState;
use payhub_model::platform::state::AttemptStatus;
use payhub_model::{LedgerEntry, PaymentStatus, Rule};
use std::collections::BTreeMap;

/// EFFECT-01, REPLAY-01, CONC-01, UNKNOWN-01: one idempotency scope causes at most one
/// upstream charge, however often and however concurrently it is sent.
pub const ONE_CHARGE_PER_SCOPE: Property = Property {
    name: "at-most-one-charge-per-scope",
    rules: &[
        Rule::OneBusinessEffect,
        Rule::OneBilling,
        Rule::ReplayReusesObject,
        Rule::ConcurrentOneExecutes,
        Rule::FiveXxMayHaveExecuted,
        Rule::CardReplayNotCharged,
        Rule::RetentionSevenDays,
    ],
    about: "An idempotency scope (merchant + environment + method + path + key) sends at most one charge upstream within its 7-day retention.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        f.money
            .charges_per_scope
            .iter()
            .find(|(_, n)| **n > 1)
            .map(|(scope, n)| {
                Witnessed::new(format!(
                    "{n} charges under {} {} Idempotency-Key: {}",
                    scope.method, scope.path, scope.key
                ))
                .key(&scope.key)
                .object_at(&scope.path)
            })
    }),
};

/// UNIQ-01, ORDER-01, RET-02, UNIQ-03: one Payment per (merchant, environment,
/// merchant_order_no), also after the key's retention.
pub const ONE_PAYMENT_PER_ORDER: Property = Property {
    name: "at-most-one-payment-per-order",
    rules: &[
        Rule::UniqueOrderNo,
        Rule::OrderNoNewKey,
        Rule::RetentionOrderNoOutlives,
        Rule::CheckoutSameProcess,
        Rule::CheckoutNewSession,
    ],
    about: "No (merchant, environment, merchant_order_no) ever has two Payments, also after the 7-day key retention.",
    needs: PLATFORM_LEDGER,
    exercised_by: &[Exercise::Create, Exercise::Session],
    predicate: Predicate::Levels {
        facts: |f| {
            let (other, id) = f.attempts.shared_order()?;
            let order = &f.attempts.payments.get(&id)?.merchant_order_no;
            Some(
                Witnessed::new(format!("{other} and {id} share order number {order}"))
                    .payment(other)
                    .payment(id)
                    .order(order),
            )
        },
        wire: crate::wire::ONE_PAYMENT_PER_ORDER_NUMBER,
    },
};

/// UNIQ-02, ATTEMPT-01, EFFECT-01: the ledger captures a Payment at most once.
pub const ONE_CAPTURE_PER_PAYMENT: Property = Property {
    name: "at-most-one-capture-per-payment",
    rules: &[
        Rule::OneUnfinishedAttempt,
        Rule::ConfirmWhileProcessing,
        Rule::OneBusinessEffect,
    ],
    about: "The acquirer's ledger never captures one Payment twice.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        let mut captures: BTreeMap<_, u32> = BTreeMap::new();
        for e in f.money.ledger() {
            if let LedgerEntry::Capture { payment, .. } = e {
                let n = captures.entry(*payment).or_default();
                *n += 1;
                if *n > 1 {
                    return Some(
                        Witnessed::new(format!("{payment} captured {n} times")).payment(*payment),
                    );
                }
            }
        }
        None
    }),
};

/// UNIQ-02, ATTEMPT-01: never a second unfinished attempt.
pub const ONE_UNFINISHED_ATTEMPT: Property = Property {
    name: "no-new-attempt-while-one-is-unfinished",
    rules: &[
        Rule::OneUnfinishedAttempt,
        Rule::ConfirmWhileProcessing,
        Rule::CardRetryAfterFailure,
    ],
    about: "A Payment never has two attempts (of those the store holds for it, listed by its record or not) that the upstream may still capture.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Levels {
        facts: |f| {
            for (id, _) in f.attempts.payments.iter() {
                // Every attempt the store holds for it, listed by its record or not.
                let unfinished = f
                    .attempts
                    .attempts_of(*id)
                    .iter()
                    .filter(|a| {
                        let on_platform = f
                            .attempts
                            .attempts
                            .get(a)
                            .is_some_and(|a| a.status.is_unfinished());
                        // Judged by the acquirer too: a charge it still holds open counts.
                        let upstream_open = f
                            .attempts
                            .charges
                            .get(a)
                            .is_some_and(|state| *state == ChargeState::ActionRequired);
                        on_platform || upstream_open
                    })
                    .count();
                if unfinished > 1 {
                    return Some(
                        Witnessed::new(format!("{id} has {unfinished} unfinished attempts"))
                            .payment(*id),
                    );
                }
            }
            None
        },
        wire: crate::wire::A_NEW_ATTEMPT_ONLY_AFTER_A_FAILURE,
    },
};

/// ATTEMPT-02, ATTEMPT-04, ATTEMPT-05, EXPIRY-01: a new attempt only after the previous
/// one failed, before `expires_at`, within the limit.
pub const ATTEMPTS_WITHIN_LIMITS: Property = Property {
    name: "attempts-within-limits",
    rules: &[
        Rule::CardRetryAfterFailure,
        Rule::CardRetryBeforeExpiry,
        Rule::AttemptsMax,
        Rule::ExpiryLimitsNewOpsOnly,
    ],
    about: "Every attempt of a Payment the store holds (listed by its record or not) but the last has failed; none was started at or after expires_at (the first confirm of a checkout session's Payment included: EXPIRY-01); there are at most the contract's 3 (whatever the platform's attempts_max).",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Levels {
        facts: |f| {
            for (id, p) in f.attempts.payments.iter() {
                let attempts = f.attempts.attempts_of(*id);
                if attempts.len() > payhub_model::Contract::ATTEMPTS_MAX as usize {
                    return Some(
                        Witnessed::new(format!(
                            "{id} has {} attempts (max {})",
                            attempts.len(),
                            payhub_model::Contract::ATTEMPTS_MAX
                        ))
                        .payment(*id),
                    );
                }
                for (i, a) in attempts.iter().enumerate() {
                    let Some(attempt) = f.attempts.attempts.get(a) else {
                        return Some(
                            Witnessed::new(format!("{a} of {id} is not in the store"))
                                .attempt(*a)
                                .payment(*id),
                        );
                    };
                    // A first attempt too: a checkout session's Payment is confirmed later.
                    if attempt.sent_at >= p.expires_at {
                        return Some(
                            Witnessed::new(format!(
                                "{a} of {id} started at {} after expires_at {}",
                                attempt.sent_at, p.expires_at
                            ))
                            .attempt(*a)
                            .payment(*id),
                        );
                    }
                    if i + 1 < attempts.len() && attempt.status != AttemptStatus::Failed {
                        return Some(
                            Witnessed::new(format!(
                                "{id} started a new attempt while {a} was {:?}",
                                attempt.status
                            ))
                            .payment(*id)
                            .attempt(*a),
                        );
                    }
                }
            }
            None
        },
        wire: crate::wire::ATTEMPTS_STAY_WITHIN_THE_MAXIMUM,
    },
};

/// UNIQ-04, REFUND-01, REFUND-03, RET-03: one upstream refund per refund, one refund
/// per refund number, never more refunded than captured.
pub const REFUNDS_ONCE_AND_WITHIN_CAPTURED: Property = Property {
    name: "refunds-once-and-within-captured",
    rules: &[
        Rule::UniqueRefundNo,
        Rule::RefundTimeoutNoSecondRefund,
        Rule::RefundNotBeyondCaptured,
        Rule::RetentionRefundNoOutlives,
    ],
    about: "Each refund reaches the upstream once, each merchant_refund_no has one refund, and no attempt is refunded beyond what the ledger captured of it (nothing, for an attempt never captured).",
    needs: PLATFORM_LEDGER,
    exercised_by: &[Exercise::Refund],
    predicate: Predicate::Levels {
        facts: |f| {
            if let Some((refund, n)) = f.refunds.refund_calls.iter().find(|(_, n)| **n > 1) {
                return Some(
                    Witnessed::new(format!("{refund} sent upstream {n} times")).refund(*refund),
                );
            }
            let mut numbers = BTreeMap::new();
            for (id, r) in f.refunds.refunds.iter() {
                if let Some(other) =
                    numbers.insert((r.merchant, r.environment, &r.merchant_refund_no), *id)
                {
                    return Some(
                        Witnessed::new(format!(
                            "{other} and {id} share refund number {}",
                            r.merchant_refund_no
                        ))
                        .refund(other)
                        .refund(*id),
                    );
                }
            }
            // Every attempt money was paid back against, captured or not: a refund with no
            // capture behind it is refunded beyond its (zero) capture.
            for e in f.money.ledger() {
                if let LedgerEntry::Refund { attempt, .. } = e {
                    let (captured, refunded) = f.money.net_of(*attempt);
                    if refunded > captured {
                        return Some(
                            Witnessed::new(format!(
                                "{attempt}: refunded {refunded} of {captured} captured"
                            ))
                            .attempt(*attempt),
                        );
                    }
                }
            }
            None
        },
        wire: crate::wire::ONE_REFUND_PER_NUMBER_WITHIN_THE_AMOUNT,
    },
};

/// REJECT-01, RATE-01, RATE-04, CONFLICT-01, CONC-03, ATTEMPT-01, A-409-NOBIND: a request
/// answered 400, 401, 403, 404, 405, 409, 422, 429 or 503 executed nothing and occupies no
/// key.
pub const REJECTIONS_EXECUTE_NOTHING: Property = Property {
    name: "rejections-execute-nothing",
    rules: &[
        Rule::RejectionsDoNotOccupyKey,
        Rule::RateLimited,
        Rule::ChannelPaused,
        Rule::IdempotencyConflict,
        Rule::ConcurrentWaitTimeout,
        Rule::ConfirmWhileProcessing,
        Rule::Only503NotAccepted,
        Rule::FirstExecution201,
    ],
    about: "A request answered 400/401/403/404/405/409/422/429/503 created, bound (stored an idempotency record) and sent nothing.",
    needs: PLATFORM_LEDGER,
    exercised_by: &[],
    predicate: Predicate::Levels {
        facts: |f| {
            Witnessed::of_request(f.money.rejected_but_executed, |id| {
                format!("{id} was rejected but changed the platform or called the upstream")
            })
        },
        wire: crate::wire::REFUSALS_AND_REJECTIONS_EXECUTE_NOTHING,
    },
};

/// QUERY-04: queries, replies and timers never charge.
pub const QUERIES_NEVER_CHARGE: Property = Property {
    name: "queries-never-charge",
    rules: &[
        Rule::QueryReadsKnownState,
        Rule::RefundTimeoutNoSecondRefund,
    ],
    about: "The platform sends a charge only while executing a create or confirm request, never on a query, a reply or a timer.",
    needs: PLATFORM_LEDGER,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        (f.money.unsolicited_charges > 0).then(|| {
            Witnessed::new(format!(
                "{} charge(s) sent outside a create or confirm",
                f.money.unsolicited_charges
            ))
        })
    }),
};

/// REPLAY-01, REPLAY-02, CONC-02: every 2xx answer under one scope names the same object.
pub const REPLAY_RETURNS_SAME_OBJECT: Property = Property {
    name: "replay-returns-same-object",
    rules: &[
        Rule::ReplayReusesObject,
        Rule::ReplayLatestStatus200,
        Rule::ConcurrentWaitSameObject,
    ],
    about: "Within retention, every successful answer under one idempotency scope refers to the same object.",
    needs: PLATFORM_LEDGER,
    exercised_by: KEYED,
    predicate: Predicate::Levels {
        facts: |f| {
            Witnessed::of_request(f.money.replay_mismatch, |id| {
                format!("{id} was answered with another object than its scope's first answer")
            })
        },
        wire: crate::wire::REPLAY_ANSWERS_200_WITH_THE_SAME_OBJECT,
    },
};

/// SCOPE-01, SCOPE-02, SCOPE-03: answers never cross merchants or environments.
pub const SCOPES_NEVER_INTERFERE: Property = Property {
    name: "scopes-never-interfere",
    rules: &[
        Rule::ScopeComponents,
        Rule::ScopeEnvironments,
        Rule::ScopeApiKeyRotation,
    ],
    about: "A request is never answered with an object of another merchant or environment (its own object, or one a list answer shows), and a webhook never shows one to another merchant or environment than the store holds it for.",
    needs: PLATFORM_LEDGER,
    exercised_by: &[],
    predicate: Predicate::Levels {
        facts: |f| {
            Witnessed::of_request(f.money.foreign_object, |id| {
                format!("{id} was answered with another merchant's or environment's object")
            })
            .or_else(|| {
                crate::responses::explain(
                    &f.responses.foreign_shown,
                    "another merchant's or environment's object",
                )
            })
        },
        wire: crate::wire::ENVIRONMENTS_NEVER_SHARE_OBJECTS,
    },
};

/// CARD-01, CARD-03: the card of a replay is never charged.
pub const REPLAYED_CARD_NEVER_CHARGED: Property = Property {
    name: "replayed-card-never-charged",
    rules: &[
        Rule::CardNotCompared,
        Rule::CardReplayNotCharged,
        Rule::CardRetryAfterFailure,
    ],
    about: "A charge sent while handling a request uses that request's own card, and a request under a scope that executed within retention (a replay) charges nothing, whatever card it carries.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Levels {
        facts: |f| {
            Witnessed::of_request(f.money.charged_other_card, |id| {
                format!("handling {id} charged a card it did not carry")
            })
        },
        wire: crate::wire::ATTEMPTS_START_ONLY_WITH_A_CONFIRM,
    },
};

/// RET-01, A-CONFIRM-RETENTION: a confirm key replayed after its retention is read one
/// of the two ways the contract allows, and the platform keeps to the one it answers.
pub const PAST_RETENTION_ONE_READING: Property = Property {
    name: "confirm-past-retention-kept-to-its-reading",
    rules: &[Rule::RetentionSevenDays],
    about: "A confirm under a key whose 7-day retention has passed is either a new attempt (the card charged once, answered when the charge returns or the synchronous wait ends) or not new business (200 with the Payment as it stands in the request's own step, nothing charged): answered at once as not new business, it charges nothing (A-CONFIRM-RETENTION).",
    needs: PLATFORM_LEDGER,
    exercised_by: &[Exercise::Confirm],
    predicate: Predicate::Always(|f| {
        Witnessed::of_request(f.money.not_new_business_charged, |id| {
            format!(
                "{id}, a confirm key past its retention, was answered at once as not new business and charged"
            )
        })
    }),
};

/// REFUND-03, A-REFUND-REVIEW: a refund its review rejects ends failed and moves no money.
pub const REJECTED_REFUND_NEVER_SENT: Property = Property {
    name: "refund-rejected-in-review-is-never-sent",
    rules: &[Rule::RefundNotBeyondCaptured],
    about: "A refund whose review rejects it goes from pending_review to failed, a final status of the contract's refund statuses (SCHED-03), and is never sent upstream: no money moves for a refund the merchant is told failed (A-REFUND-REVIEW).",
    needs: PLATFORM,
    exercised_by: &[Exercise::Refund],
    predicate: Predicate::Always(|f| {
        f.refunds.rejected_but_sent.map(|refund| {
            Witnessed::new(format!(
                "{refund} was rejected in review (pending_review to failed) and sent upstream"
            ))
            .refund(refund)
        })
    }),
};

/// RES-03, UNKNOWN-02, RES-06: `failed` only on the upstream's word (a decline, or a
/// voided reference), never because time passed (manual_review never fails by itself).
pub const FAILED_ONLY_ON_UPSTREAM_EVIDENCE: Property = Property {
    name: "failed-only-on-upstream-evidence",
    rules: &[
        Rule::ManualReview,
        Rule::UnknownResult,
        Rule::TerminalStatuses,
    ],
    about: "A Payment is failed only if the acquirer declined its latest attempt or never received it.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        for (id, p) in f.attempts.payments.iter() {
            if p.status != PaymentStatus::Failed {
                continue;
            }
            if p.failure_attempt.is_none() {
                return Some(
                    Witnessed::new(format!("{id} is failed without failure.attempt_id"))
                        .payment(*id),
                );
            }
            // The latest attempt, not the one failure.attempt_id names: an earlier decline
            // is no evidence about a later attempt (which attempt failure.attempt_id
            // names is failure-names-the-latest-attempt's).
            let Some(&a) = p.attempts.last() else {
                return Some(
                    Witnessed::new(format!("{id} is failed without an attempt")).payment(*id),
                );
            };
            let declined = f
                .attempts
                .charges
                .get(&a)
                .is_some_and(|state| matches!(state, ChargeState::Declined(_)));
            if !declined && !f.attempts.voided.contains(&a) {
                return Some(
                    Witnessed::new(format!(
                        "{id} is failed but the acquirer did not decline its latest attempt {a}"
                    ))
                    .payment(*id)
                    .attempt(a),
                );
            }
        }
        None
    }),
};

/// CANCEL-01, RES-06, EXPIRY-01: money never moves behind a failed, canceled or expired Payment.
pub const NO_CAPTURE_BEHIND_A_CLOSED_PAYMENT: Property = Property {
    name: "no-capture-behind-a-closed-payment",
    rules: &[
        Rule::Cancel202KeepsStatus,
        Rule::TerminalStatuses,
        Rule::ExpiryLimitsNewOpsOnly,
    ],
    about: "No Payment that the platform reports failed, canceled or expired has a capture in the ledger.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        let (id, p) = f.attempts.payments.iter().find(|(id, p)| {
            let closed = matches!(
                p.status,
                PaymentStatus::Failed | PaymentStatus::Canceled | PaymentStatus::Expired
            );
            closed && f.money.captured(**id)
        })?;
        let found = format!("{id} is {} but the ledger captured it", p.status.as_str());
        Some(Witnessed::new(found).payment(*id))
    }),
};

/// RES-06: `succeeded` only when the ledger captured the Payment.
pub const SUCCEEDED_IS_CAPTURED: Property = Property {
    name: "succeeded-only-when-captured",
    rules: &[Rule::TerminalStatuses],
    about: "A Payment the platform reports succeeded has a capture in the ledger.",
    needs: PLATFORM_LEDGER,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        let (id, _) = (f.attempts.payments.iter())
            .find(|(id, p)| p.status == PaymentStatus::Succeeded && !f.money.captured(**id))?;
        let found = format!("{id} is succeeded but the ledger has no capture");
        Some(Witnessed::new(found).payment(*id))
    }),
};

/// CONFLICT-01, SAFE-01, CARD-01, SCOPE-01: within retention, a request is answered
/// `idempotency_conflict` exactly when its safety-relevant parameters differ from those of
/// its scope's execution. Judged from the requests the merchant sent, not from the
/// platform's fingerprint: a conflict without an execution under the same scope, a
/// conflict over the card, and a replay with another amount or currency all fail it.
pub const CONFLICT_IFF_PARAMETERS_DIFFER: Property = Property {
    name: "idempotency-conflict-iff-parameters-differ",
    rules: &[
        Rule::IdempotencyConflict,
        Rule::SafeParameters,
        Rule::CardNotCompared,
        Rule::ScopeComponents,
    ],
    about: "Within retention, a request under a scope that executed is answered 409 idempotency_conflict if and only if its safety-relevant parameters (not its card) differ from the execution's, in its own step or, having waited, later; a scope that never executed never conflicts.",
    needs: PLATFORM_LEDGER,
    exercised_by: KEYED,
    predicate: Predicate::Levels {
        facts: |f| {
            Witnessed::of_request(f.money.conflict_misjudged, |id| {
                format!(
                    "{id}: its conflict verdict contradicts the parameters its scope executed with"
                )
            })
        },
        wire: crate::wire::CONFLICT_EXACTLY_WHEN_PARAMETERS_DIFFER,
    },
};

/// REPLAY-01, CONC-01, CONC-02, RET-01: a key that executed is, for its 7-day retention,
/// answered from its execution (replay, wait or operation_in_progress), never handled as
/// new business.
pub const SAME_KEY_NEVER_NEW_BUSINESS: Property = Property {
    name: "same-key-never-new-business",
    rules: &[
        Rule::ReplayReusesObject,
        Rule::ConcurrentOneExecutes,
        Rule::ConcurrentWaitSameObject,
        Rule::RetentionSevenDays,
    ],
    about: "Within retention of a scope's execution, no request under it is answered 409 order_no_conflict, payment_in_progress or refund_no_conflict, in its own step or later (a waiter).",
    needs: PLATFORM_LEDGER,
    exercised_by: KEYED,
    predicate: Predicate::Levels {
        facts: |f| {
            Witnessed::of_request(f.money.replay_as_new_business, |id| {
                format!("{id} reused a key that executed, and was answered as new business")
            })
        },
        wire: crate::wire::SAME_KEY_AT_ONCE_ANSWERS_ONE_OBJECT,
    },
};

/// SCOPE-01, REPLAY-01: an answer is about the Payment the request names.
pub const ANSWERS_NAME_THE_REQUESTED_PAYMENT: Property = Property {
    name: "answers-name-the-requested-payment",
    rules: &[Rule::ScopeComponents, Rule::ReplayReusesObject],
    about: "A 2xx answer to a confirm, cancel, GET or refund is about the Payment named in the request's path or body, in its own step or later (a waiter).",
    needs: PLATFORM,
    exercised_by: &[
        Exercise::Confirm,
        Exercise::Cancel,
        Exercise::Query,
        Exercise::Refund,
    ],
    predicate: Predicate::Always(|f| {
        Witnessed::of_request(f.money.answered_other_payment, |id| {
            format!("{id} was answered about another Payment than the one it names")
        })
    }),
};

/// ATTEMPT-06: "the new attempt keeps the original Payment and the fee rate of that time".
pub const PAYMENTS_KEEP_THEIR_FEE_SNAPSHOT: Property = Property {
    name: "payments-keep-their-fee-snapshot",
    rules: &[Rule::RetryKeepsPaymentAndFee],
    about: "A Payment keeps the fee rate it was created with through every attempt (A-FEE-SNAPSHOT: the snapshot is taken at creation), whatever the platform's rate is when a card retry comes.",
    needs: PLATFORM,
    exercised_by: CHARGES,
    predicate: Predicate::Levels {
        facts: |f| {
            f.attempts.fee_changed.map(|c| {
            Witnessed::new(format!(
                "{} was stored with fee rate {} bps after {} bps, holding {} attempts: a new attempt keeps the fee-rate snapshot",
                c.payment, c.now, c.was, c.attempts
            ))
            .payment(c.payment)
        })
        },
        wire: crate::wire::PAYMENTS_KEEP_THEIR_AMOUNT,
    },
};
