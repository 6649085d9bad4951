//! Wire properties: the contract's rules that the requests and answers on the wire can
//! witness alone, judged over [`WireFacts`] (see `properties/src/facts/wire/`). Each is a
//! [`Property`] of the one registry whose predicate is [`Predicate::Wire`]. They judge a
//! recorded log (`check-log`), the sandbox's session and a simulated run's stream alike;
//! each needs only [`Evidence::Wire`] and what its pattern reads (the API keys for a
//! scope, the bodies for an object).
//!
//! An explanation names the exchanges that witness the breach, oldest first, in the
//! contract's notation: `entry 12 replays key K of entry 3 with amount 12000; the
//! platform answered 200, the contract requires 409 idempotency_conflict`. The source
//! says how an exchange is named (a HAR entry, a log line, an exchange of a stream).

use crate::evidence::{Evidence, EvidenceSet};
use crate::facts::wire::{Breach, WireFacts, Witness};
use crate::property::{Predicate, Property};
use payhub_model::{Contract, Millis, Rule};
use std::borrow::Cow;

mod explain;
pub use explain::{answer, explain, params, request};

/// Who is judged: the platform's answers or the client's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Platform,
    Client,
}

/// What a property over the wire looks for ([`crate::property::Predicate::Wire`]).
#[derive(Clone, Copy, Debug)]
pub struct Patterns {
    /// Who is judged.
    pub side: Side,
    /// The patterns it looks for, in the order it reports them.
    pub breaches: &'static [Breach],
    /// For a pattern a contract number decides: the witness it finds in what the facts
    /// recorded (the facts keep no witness of such a pattern).
    pub decides: Option<fn(&WireFacts) -> Option<Witness>>,
    /// Judged only when the source is assumed to hold every request
    /// ([`crate::evidence::Supply::assume_complete_log`]): its pattern is a breach only
    /// if no unrecorded request could explain it. Without the assumption it is not
    /// listed at all.
    pub assumes_complete_log: bool,
}

impl Patterns {
    /// The first witness of its patterns, if any.
    pub fn witness<'a>(&self, facts: &'a WireFacts) -> Option<Cow<'a, Witness>> {
        if let Some(decide) = self.decides {
            return decide(facts).map(Cow::Owned);
        }
        self.breaches
            .iter()
            .find_map(|b| facts.witnesses.get(b))
            .map(Cow::Borrowed)
    }
}

/// RET-01: how long the wire facts keep a scope, a key and its parameters (the platform
/// forgets them then too).
pub const RECORDS_KEPT: Millis = Contract::RETENTION;

/// A replay is judged against its scope's execution if sent within the retention less an
/// hour (near its end the platform's record may already be gone).
pub fn replay_judged(w: &Witness) -> bool {
    match &w.entries[..] {
        [first, then] => {
            then.sent.since(first.closed).0
                < Contract::RETENTION.0.saturating_sub(Millis::hours(1).0)
        }
        _ => false,
    }
}

/// REPLAY-01/02, CONFLICT-01: the soonest replay of each of `breaches` after its scope's
/// execution, if within the retention ([`replay_judged`]).
fn soonest_replay(facts: &WireFacts, breaches: &[Breach]) -> Option<Witness> {
    breaches
        .iter()
        .filter_map(|b| facts.soonest_replays.get(b))
        .find(|w| replay_judged(w))
        .cloned()
}

fn replays(facts: &WireFacts) -> Option<Witness> {
    soonest_replay(facts, &[Breach::ReplayNotSameObject])
}

fn conflicts(facts: &WireFacts) -> Option<Witness> {
    soonest_replay(
        facts,
        &[Breach::ConflictMissing, Breach::ConflictWithoutChange],
    )
}

/// SCHED-02: the closest two queries of one object, if less than 10 s apart.
fn queries_too_soon(facts: &WireFacts) -> Option<Witness> {
    let [earlier, later] = facts.closest_queries.as_deref()?;
    (later.sent.since(earlier.sent) < Contract::QUERY_SPACING_MIN).then(|| Witness {
        breach: Breach::QueryTooSoon,
        entries: vec![earlier.clone(), later.clone()],
    })
}

/// ATTEMPT-05: the sighting with the most attempts, if more than the contract's default
/// maximum ("without exceeding the maximum number of attempts (default 3)").
fn attempts_beyond_maximum(facts: &WireFacts) -> Option<Witness> {
    let (n, seen) = facts.most_attempts.as_deref()?;
    (*n > u32::from(Contract::ATTEMPTS_MAX)).then(|| Witness {
        breach: Breach::AttemptsBeyondMaximum,
        entries: vec![seen.clone()],
    })
}

/// ATTEMPT-01, ATTEMPT-02 ("Initiate only after the payment has status=failed"): the
/// first newer attempt shown after one whose card never fails.
fn attempt_before_failure(facts: &WireFacts) -> Option<Witness> {
    facts
        .renewed_attempts
        .iter()
        .find(|(card, _)| !payhub_model::cards::can_fail(**card))
        .map(|(_, w)| w.clone())
}

/// KEY-07: the shortest printable key refused, if it had 1-255 characters in every
/// reading; a key outside printable ASCII only when the log shows another such key
/// accepted (A-KEY-LENGTH: the contract gives no character set, and a platform may
/// refuse them all).
fn valid_key_refused(facts: &WireFacts) -> Option<Witness> {
    let other = facts
        .shortest_refused_other_key
        .as_deref()
        .filter(|_| facts.other_key_accepted);
    [facts.shortest_refused_key.as_deref(), other]
        .into_iter()
        .flatten()
        .find(|(units, _)| (Contract::KEY_LEN_MIN..=Contract::KEY_LEN_MAX).contains(units))
        .map(|(_, seen)| Witness {
            breach: Breach::ValidKeyRefused,
            entries: vec![seen.clone()],
        })
}

use Evidence::{ApiKeys, ResponseBodies, TestCards, Wire};
const SCOPED: EvidenceSet = EvidenceSet::of(&[Wire, ApiKeys]);
const SCOPED_BODIES: EvidenceSet = EvidenceSet::of(&[Wire, ApiKeys, ResponseBodies]);
const BODIES: EvidenceSet = EvidenceSet::of(&[Wire, ResponseBodies]);
const CARDS: EvidenceSet = EvidenceSet::of(&[Wire, ResponseBodies, TestCards]);

pub const REPLAY_ANSWERS_200_WITH_THE_SAME_OBJECT: Property = Property {
    name: "wire-replay-answers-200-with-the-same-object",
    rules: &[Rule::ReplayReusesObject, Rule::ReplayLatestStatus200],
    about: "A request replaying an executed scope with its parameters is answered 200 with the object of the first execution.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::ReplayNotSameObject],
        decides: Some(replays),
        assumes_complete_log: false,
    }),
};

pub const SAME_KEY_AT_ONCE_ANSWERS_ONE_OBJECT: Property = Property {
    name: "wire-same-key-at-once-answers-one-object",
    rules: &[Rule::ConcurrentOneExecutes, Rule::ConcurrentWaitSameObject],
    about: "Requests of one key with the same parameters sent at once are one business: none is answered as new business (409 order_no_conflict, payment_in_progress, refund_no_conflict) beside the one that executed.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::SameKeyAsNewBusiness],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const CONFLICT_EXACTLY_WHEN_PARAMETERS_DIFFER: Property = Property {
    name: "wire-conflict-exactly-when-parameters-differ",
    rules: &[Rule::IdempotencyConflict, Rule::SafeParameters],
    about: "Under an executed scope, other safety-relevant parameters are answered 409 idempotency_conflict, and the same parameters never are; two requests of one key in flight together with other parameters are never both answered 2xx.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::ConflictMissing, Breach::ConflictWithoutChange],
        decides: Some(conflicts),
        assumes_complete_log: false,
    }),
};

pub const ONE_PAYMENT_PER_ORDER_NUMBER: Property = Property {
    name: "wire-one-payment-per-order-number",
    rules: &[Rule::UniqueOrderNo, Rule::OrderNoNewKey],
    about: "The answers of one merchant and environment never show two Payments for one merchant_order_no.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::TwoPaymentsForOrder],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const CONFLICTS_CARRY_RELATED_RESOURCE_ID: Property = Property {
    name: "wire-conflicts-carry-related-resource-id",
    rules: &[
        Rule::OrderNoNewKey,
        Rule::ConfirmWhileProcessing,
        Rule::UniqueRefundNo,
    ],
    about: "A 409 order_no_conflict, payment_in_progress or refund_no_conflict carries error.related_resource_id.",
    needs: BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::RelatedResourceMissing],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const VERSIONS_NEVER_GO_BACK: Property = Property {
    name: "wire-versions-never-go-back",
    rules: &[Rule::LatestVersionWins, Rule::WebhookPrimary],
    about: "A request sent after an answer showed a Payment at version v is never answered with that Payment at a lower version.",
    needs: BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::VersionWentBack],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const ONE_REFUND_PER_REFUND_NUMBER: Property = Property {
    name: "wire-one-refund-per-refund-number",
    rules: &[Rule::UniqueRefundNo, Rule::RetentionRefundNoOutlives],
    about: "The answers of one merchant and environment never show two Refunds for one merchant_refund_no.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::TwoRefundsForRefundNo],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const CANCEL_202_KEEPS_THE_STATUS: Property = Property {
    name: "wire-cancel-202-keeps-the-status",
    rules: &[Rule::Cancel202KeepsStatus],
    about: "A cancel answered 202 (no evidence of a safe cancellation yet) keeps the Payment's status: it never shows it canceled.",
    needs: BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::Cancel202ShowsCanceled],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const LOOKUPS_MATCH_THE_NUMBER_EXACTLY: Property = Property {
    name: "wire-lookups-match-the-number-exactly",
    rules: &[Rule::QueryByOrderNo, Rule::QueryRefunds],
    about: "A lookup by merchant_order_no (merchant_refund_no) shows only objects of exactly that number.",
    needs: BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::LookupOtherNumber],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const VERSIONS_RISE_WITH_EVERY_CHANGE: Property = Property {
    name: "wire-versions-rise-with-every-change",
    rules: &[Rule::LatestVersionWins],
    about: "A request sent after an answer showed a Payment at version v is never answered with that Payment at version v and another status.",
    needs: BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::VersionStayedOnChange],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const PAYMENTS_KEEP_THEIR_AMOUNT: Property = Property {
    name: "wire-payments-keep-their-amount",
    rules: &[Rule::RetryKeepsPaymentAndFee],
    about: "The answers never show one Payment with two amounts (a new attempt keeps the original Payment).",
    needs: BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::AmountChanged],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const ENVIRONMENTS_NEVER_SHARE_OBJECTS: Property = Property {
    name: "wire-environments-never-share-objects",
    rules: &[Rule::ScopeEnvironments],
    about: "An object shown to one environment of a merchant is never shown to its other environment (test and live do not affect each other).",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::ObjectInTwoEnvironments],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const REFUNDS_STAY_WITHIN_THE_PAYMENT_AMOUNT: Property = Property {
    name: "wire-refunds-stay-within-the-payment-amount",
    rules: &[Rule::RefundNotBeyondCaptured],
    about: "A refund is never accepted (2xx) beyond its Payment's amount, counting the refunds of that Payment already shown succeeded (A-REFUND-LIMIT: the contract names no limit; the amount paid is the one it could mean).",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::RefundBeyondAmount],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const ATTEMPTS_STAY_WITHIN_THE_MAXIMUM: Property = Property {
    name: "wire-attempts-stay-within-the-maximum",
    rules: &[Rule::AttemptsMax],
    about: "No Payment is shown with more attempts (attempt_count) than the contract's default maximum of 3.",
    needs: BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::AttemptsBeyondMaximum],
        decides: Some(attempts_beyond_maximum),
        assumes_complete_log: false,
    }),
};

pub const A_NEW_ATTEMPT_ONLY_AFTER_A_FAILURE: Property = Property {
    name: "wire-a-new-attempt-only-after-a-failure",
    rules: &[Rule::ConfirmWhileProcessing, Rule::CardRetryAfterFailure],
    about: "A Payment is never shown with a newer attempt after one charged on a test card that never fails (approved at once, after the wait, or silently): a new attempt starts only once the previous one definitively failed, and a confirm while processing never charges.",
    needs: CARDS,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::NewAttemptBeforeFailure],
        decides: Some(attempt_before_failure),
        assumes_complete_log: false,
    }),
};

pub const VALID_KEYS_ARE_ACCEPTED: Property = Property {
    name: "wire-valid-keys-are-accepted",
    rules: &[Rule::KeyLength],
    about: "A printable Idempotency-Key of 1-255 characters in every reading of \"character\" (A-KEY-LENGTH; at most 255 UTF-16 code units) is never refused 400 with error.field Idempotency-Key.",
    needs: BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::ValidKeyRefused],
        decides: Some(valid_key_refused),
        assumes_complete_log: false,
    }),
};

pub const CLIENT_KEEPS_KEY_AND_ORDER_AFTER_UNKNOWN: Property = Property {
    name: "wire-client-keeps-key-and-order-after-unknown",
    rules: &[Rule::NeverSwitchKeyOnUnknown, Rule::OneBusinessEffect],
    about: "After a create whose outcome is unknown (no answer, a timeout, a 5xx), the client sends no create of that order under a new key, nor the same purchase under a new order number, until it learns the order's Payment.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::NewKeyAfterUnknown, Breach::NewOrderNoAfterUnknown],
        decides: None,
        assumes_complete_log: false,
    }),
};

/// UNKNOWN-03 ("when the result is unknown never change the idempotency key … retry with
/// the same key or query"), ATTEMPT-01 (S8: "wait for the result, or query"), RETRY-03.
pub const CLIENT_KEEPS_THE_CONFIRM_KEY_WHILE_UNRESOLVED: Property = Property {
    name: "wire-client-keeps-the-confirm-key-while-unresolved",
    rules: &[
        Rule::NeverSwitchKeyOnUnknown,
        Rule::ConfirmWhileProcessing,
        Rule::RetryMaxAttempts,
    ],
    about: "After a confirm whose outcome is unknown (no answer, a 5xx other than 503), or while the Payment was last shown processing or requires_action, the client confirms that Payment only under the same key, until an answer shows it in another status.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::NewConfirmKeyWhileUnresolved],
        decides: None,
        assumes_complete_log: false,
    }),
};

/// REFUND-04, UNKNOWN-03, REFUND-02 (S11: "Retry with K, or query by
/// merchant_refund_no; do not change the refund number and apply again").
pub const CLIENT_KEEPS_THE_REFUND_NUMBER_WHILE_UNRESOLVED: Property = Property {
    name: "wire-client-keeps-the-refund-number-while-unresolved",
    rules: &[
        Rule::RefundNoKept,
        Rule::NeverSwitchKeyOnUnknown,
        Rule::RefundReplaySameRefund,
    ],
    about: "After a refund whose outcome is unknown (no answer, a 5xx other than 503, or shown processing or pending_review), the client applies no refund of the same Payment and amount under another merchant_refund_no until an answer shows that refund final.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::NewRefundNoWhileUnresolved],
        decides: None,
        assumes_complete_log: false,
    }),
};

/// ATTEMPT-02, GEN-05 ("payment.confirm:ORDER-DEMO-001:2": the card retry's own key).
pub const CLIENT_RETRIES_A_CARD_UNDER_A_NEW_KEY: Property = Property {
    name: "wire-client-retries-a-card-under-a-new-key",
    rules: &[Rule::CardRetryAfterFailure, Rule::OneKeyPerSubmission],
    about: "After an answer showed a Payment failed, the client does not confirm it again under the key of its previous confirm (the platform would replay the failure and never charge the new card).",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::CardRetryUnderFailedKey],
        decides: None,
        assumes_complete_log: false,
    }),
};

/// RATE-03 ("After 429 wait Retry-After seconds, then retry with the original idempotency
/// key"), RETRY-01, S13 (503: "retry later with K").
pub const CLIENT_KEEPS_THE_KEY_AFTER_A_REFUSAL: Property = Property {
    name: "wire-client-keeps-the-key-after-a-refusal",
    rules: &[Rule::RetryAfterHonoured, Rule::RetrySameKey],
    about: "After a create answered 429 rate_limited or 503 temporarily_unavailable, the client sends that order number (refund number) again only under the same key, until an answer executes it.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::NewKeyAfterRefusal],
        decides: None,
        assumes_complete_log: false,
    }),
};

/// TIMEOUT-01 ("Client timeouts are at least 20 seconds for create and confirm and at
/// least 10 seconds for queries").
pub const CLIENT_WAITS_THE_CONTRACT_TIMEOUTS: Property = Property {
    name: "wire-client-waits-the-contract-timeouts",
    rules: &[Rule::ClientTimeouts],
    about: "A client never hangs up on a create or confirm less than 20 seconds after sending it, nor on a query less than 10 seconds after (the platform waits about 15 s for the acquirer before its 202).",
    needs: SCOPED,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::GaveUpTooSoon],
        decides: None,
        assumes_complete_log: false,
    }),
};

/// SCHED-01 ("stopping at a terminal status or on its webhook").
pub const CLIENT_STOPS_QUERYING_AT_A_FINAL_STATUS: Property = Property {
    name: "wire-client-stops-querying-at-a-final-status",
    rules: &[Rule::QuerySchedule],
    about: "Once a query showed a Payment succeeded, failed, canceled or expired, the client queries that Payment no more.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::QueryAfterFinal],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const CLIENT_USES_A_KEY_ON_ONE_ENDPOINT: Property = Property {
    name: "wire-client-uses-a-key-on-one-endpoint",
    rules: &[Rule::OneKeyPerSubmission],
    about: "A client never sends one Idempotency-Key on two endpoints (method and path).",
    needs: SCOPED,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::KeyOnTwoEndpoints],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const CLIENT_NEVER_CHANGES_PARAMETERS_UNDER_A_KEY: Property = Property {
    name: "wire-client-never-changes-parameters-under-a-key",
    rules: &[Rule::ConflictIsDefect, Rule::OneKeyPerSubmission],
    about: "A client re-sends a key only with the safety-relevant parameters it first sent it with.",
    needs: SCOPED,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::ParamsChangedUnderKey],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const CLIENT_SPACES_QUERIES: Property = Property {
    name: "wire-client-spaces-queries",
    rules: &[Rule::QuerySpacing],
    about: "A client never sends two queries of the same object less than 10 seconds apart.",
    needs: SCOPED,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::QueryTooSoon],
        decides: Some(queries_too_soon),
        assumes_complete_log: false,
    }),
};

pub const CLIENT_HONOURS_RETRY_AFTER: Property = Property {
    name: "wire-client-honours-retry-after",
    rules: &[Rule::RetryAfterHonoured],
    about: "After a 429 with Retry-After, a client sends nothing under that scope before Retry-After has passed.",
    needs: SCOPED,
    predicate: Predicate::Wire(Patterns {
        side: Side::Client,
        breaches: &[Breach::RetryAfterIgnored],
        decides: None,
        assumes_complete_log: false,
    }),
};

pub const REFUSED_REQUESTS_EXECUTE_NOTHING: Property = Property {
    name: "wire-refused-requests-execute-nothing",
    rules: &[
        Rule::RateLimited,
        Rule::ChannelPaused,
        Rule::FirstExecution201,
    ],
    about: "With every request of the capture in the log: a scope whose every request was refused 429 rate_limited or 503 temporarily_unavailable is never answered as executed (a create answered 200, a 409 idempotency_conflict): those refusals executed nothing.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::RefusedThenExecuted],
        decides: None,
        assumes_complete_log: true,
    }),
};

pub const REJECTED_REQUESTS_BIND_NO_KEY: Property = Property {
    name: "wire-rejected-requests-bind-no-key",
    rules: &[Rule::RejectionsDoNotOccupyKey, Rule::IdempotencyConflict],
    about: "With every request of the capture in the log: a key whose every request was rejected (400, 403, 422) is not used up: a later request under it is never answered 409 idempotency_conflict (nor a create 200) as if the rejection had bound it.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::RejectedThenBound],
        decides: None,
        assumes_complete_log: true,
    }),
};

pub const ATTEMPTS_START_ONLY_WITH_A_CONFIRM: Property = Property {
    name: "wire-attempts-start-only-with-a-confirm",
    rules: &[Rule::CardReplayNotCharged, Rule::CardRetryAfterFailure],
    about: "With every request of the capture in the log: a Payment created through the API is never shown with more attempts than before unless a confirm of it was sent in between: a replay never charges newly supplied card information.",
    needs: SCOPED_BODIES,
    predicate: Predicate::Wire(Patterns {
        side: Side::Platform,
        breaches: &[Breach::AttemptWithoutConfirm],
        decides: None,
        assumes_complete_log: true,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::event::What;
    use payhub_model::observation::Dialect;
    use payhub_model::observed::{IdKind, ObservedAnswer, Shape};
    use payhub_model::{
        ApiKeyId, ApiRequest, CreatePaymentBody, Endpoint, Environment, Json, MerchantId, RequestId,
    };

    /// RET-01 is the property's to apply: a replay answered 201 a day after the
    /// execution is a breach, one past the retention (less an hour) is not judged.
    #[test]
    fn replays_are_judged_within_the_retention_by_the_property() {
        let verdict = |replay_at: Millis| {
            let mut w = WireFacts::new([(ApiKeyId(1), (MerchantId(1), Environment::Test))]);
            let create = ApiRequest {
                api_key: ApiKeyId(1),
                idempotency_key: Some("k".into()),
                endpoint: Endpoint::CreatePayment {
                    body: Json::Parsed(CreatePaymentBody {
                        merchant_order_no: Some("O".into()),
                        ..CreatePaymentBody::default()
                    }),
                },
            };
            for (id, at) in [(1, Millis(0)), (2, replay_at)] {
                let id = RequestId(id);
                let request = create.clone();
                w.observe(
                    at,
                    &What::Sent {
                        id,
                        from: 0,
                        request,
                    },
                );
                let body = br#"{"id":"p1"}"#;
                let shape = Shape::One(IdKind::Payment);
                let a =
                    ObservedAnswer::read(201, None, body, shape, &Dialect::default(), &mut w.ids);
                w.answered(at, id, &a.unwrap());
            }
            REPLAY_ANSWERS_200_WITH_THE_SAME_OBJECT
                .wire_witness(&w)
                .is_some()
        };
        assert!(verdict(Millis::hours(24)));
        assert!(!verdict(Contract::RETENTION));
    }

    #[test]
    fn every_breach_is_reported_by_exactly_one_wire_property() {
        use std::collections::BTreeSet;
        let mut all = BTreeSet::new();
        for p in crate::PROPERTIES {
            let Some(patterns) = p.patterns() else {
                continue;
            };
            assert!(!p.rules.is_empty(), "{}", p.name);
            for b in patterns.breaches {
                assert!(all.insert(*b), "{b:?} twice");
            }
        }
        assert_eq!(all.len(), 32);
    }

    /// The drivers that hold a world's facts alone skip a property by its needs: a
    /// property needs the wire exactly when its predicate reads the wire facts.
    #[test]
    fn a_property_needs_the_wire_exactly_when_it_reads_the_wire() {
        for p in crate::PROPERTIES {
            assert_eq!(
                p.needs.contains(Evidence::Wire),
                p.patterns().is_some(),
                "{}",
                p.name
            );
            assert_eq!(p.over_facts(), p.patterns().is_none(), "{}", p.name);
        }
    }
}
