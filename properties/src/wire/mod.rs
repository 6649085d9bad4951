//! The contract's rules read at the level of the wire: the requests and answers alone,
//! judged over [`WireFacts`] (see `properties/src/facts/wire/`). A rule a run's facts
//! judge too is one property with both levels ([`crate::property::Predicate::Levels`]): its patterns here
//! are its wire level, named after what they see. A rule only the wire can witness is a
//! property of its own ([`crate::property::Predicate::Wire`], named `wire-…`, declared with
//! its side's properties). Either judges a
//! recorded log (`check-log`), the sandbox's session and a simulated run's stream alike;
//! the wire level needs only [`Evidence::Wire`] and what its patterns read (the API keys
//! for a scope, the bodies for an object).
//!
//! An explanation names the exchanges that witness the breach, oldest first, in the
//! contract's notation: `entry 12 replays key K of entry 3 with amount 12000; the
//! platform answered 200, the contract requires 409 idempotency_conflict`. The source
//! says how an exchange is named (a HAR entry, a log line, an exchange of a stream).

use crate::evidence::{Evidence, EvidenceSet};
use crate::facts::wire::{Breach, WireFacts, Witness};
use payhub_model::{Contract, Millis};
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

/// What a property looks for at its level over the wire
/// ([`crate::property::Predicate`]'s `Wire` and `Levels`).
#[derive(Clone, Copy, Debug)]
pub struct Patterns {
    /// Who is judged.
    pub side: Side,
    /// The evidence this level needs: [`Evidence::Wire`] and what its patterns read (the
    /// API keys for a scope, the bodies for an object).
    pub needs: EvidenceSet,
    /// The patterns it looks for, in the order it reports them.
    pub breaches: &'static [Breach],
    /// For a pattern a contract number decides: the witness it finds in what the facts
    /// recorded (the facts keep no witness of such a pattern).
    pub decides: Option<fn(&WireFacts) -> Option<Witness>>,
    /// Judged only when the source is assumed to hold every request
    /// ([`crate::evidence::Assumed::complete_log`]): its pattern is a breach only
    /// if no unrecorded request could explain it. Without the assumption it is not
    /// listed at all.
    pub assumes_complete_log: bool,
}

impl Patterns {
    /// The platform's answers judged by `breaches`, needing `needs`.
    pub const fn platform(needs: EvidenceSet, breaches: &'static [Breach]) -> Patterns {
        Patterns::of(Side::Platform, needs, breaches)
    }

    /// The client's requests judged by `breaches`, needing `needs`.
    pub const fn client(needs: EvidenceSet, breaches: &'static [Breach]) -> Patterns {
        Patterns::of(Side::Client, needs, breaches)
    }

    const fn of(side: Side, needs: EvidenceSet, breaches: &'static [Breach]) -> Patterns {
        Patterns {
            side,
            needs,
            breaches,
            decides: None,
            assumes_complete_log: false,
        }
    }

    /// Its witness found by `decide` ([`Patterns::decides`]).
    pub const fn deciding(self, decide: fn(&WireFacts) -> Option<Witness>) -> Patterns {
        Patterns {
            decides: Some(decide),
            ..self
        }
    }

    /// Judged only with a complete log ([`Patterns::assumes_complete_log`]).
    pub const fn assuming_complete_log(self) -> Patterns {
        Patterns {
            assumes_complete_log: true,
            ..self
        }
    }

    /// The first witness of its patterns, if any; of those that read purchases from
    /// amounts ([`Breach::reads_purchases`]) only if `purchases` allows it.
    pub fn witness<'a>(&self, facts: &'a WireFacts, purchases: bool) -> Option<Cow<'a, Witness>> {
        if let Some(decide) = self.decides {
            return decide(facts).map(Cow::Owned);
        }
        self.breaches
            .iter()
            .filter(|b| purchases || !b.reads_purchases())
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
    (later.sent.since(earlier.sent) < Contract::QUERY_SPACING_MIN)
        .then(|| Witness::of(Breach::QueryTooSoon, vec![earlier.clone(), later.clone()]))
}

/// ATTEMPT-05: the sighting with the most attempts, if more than the contract's default
/// maximum ("without exceeding the maximum number of attempts (default 3)").
fn attempts_beyond_maximum(facts: &WireFacts) -> Option<Witness> {
    let (n, seen) = facts.most_attempts.as_deref()?;
    (*n > u32::from(Contract::ATTEMPTS_MAX))
        .then(|| Witness::of(Breach::AttemptsBeyondMaximum, vec![seen.clone()]))
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
    if let Some(w) = facts.witnesses.get(&Breach::InvalidKeyAccepted) {
        return Some(w.clone());
    }
    let other = facts
        .shortest_refused_other_key
        .as_deref()
        .filter(|_| facts.other_key_accepted);
    [facts.shortest_refused_key.as_deref(), other]
        .into_iter()
        .flatten()
        .find(|(units, _)| (Contract::KEY_LEN_MIN..=Contract::KEY_LEN_MAX).contains(units))
        .map(|(_, seen)| Witness::of(Breach::ValidKeyRefused, vec![seen.clone()]))
}

use Evidence::{ApiKeys, HangUps, ResponseBodies, TestCards, Wire};
const SCOPED: EvidenceSet = EvidenceSet::of(&[Wire, ApiKeys]);
pub(crate) const SCOPED_BODIES: EvidenceSet = EvidenceSet::of(&[Wire, ApiKeys, ResponseBodies]);
const BODIES: EvidenceSet = EvidenceSet::of(&[Wire, ResponseBodies]);
const CARDS: EvidenceSet = EvidenceSet::of(&[Wire, ResponseBodies, TestCards]);
const HUNG_UP: EvidenceSet = EvidenceSet::of(&[Wire, ApiKeys, HangUps]);

/// Over the wire: a request replaying an executed scope with its parameters is answered
/// 200 with the object of the first execution.
pub const REPLAY_ANSWERS_200_WITH_THE_SAME_OBJECT: Patterns =
    Patterns::platform(SCOPED_BODIES, &[Breach::ReplayNotSameObject]).deciding(replays);

/// Over the wire: requests of one key with the same parameters sent at once are one
/// business: none is answered as new business (409 order_no_conflict,
/// payment_in_progress, refund_no_conflict) beside the one that executed.
pub const SAME_KEY_AT_ONCE_ANSWERS_ONE_OBJECT: Patterns =
    Patterns::platform(SCOPED_BODIES, &[Breach::SameKeyAsNewBusiness]);

/// Over the wire: under an executed scope, other safety-relevant parameters are
/// answered 409 idempotency_conflict, and the same parameters never are; two requests
/// of one key in flight together with other parameters are never both answered 2xx.
pub const CONFLICT_EXACTLY_WHEN_PARAMETERS_DIFFER: Patterns = Patterns::platform(
    SCOPED_BODIES,
    &[Breach::ConflictMissing, Breach::ConflictWithoutChange],
)
.deciding(conflicts);

/// Over the wire: the answers of one merchant and environment never show two Payments
/// for one merchant_order_no.
pub const ONE_PAYMENT_PER_ORDER_NUMBER: Patterns =
    Patterns::platform(SCOPED_BODIES, &[Breach::TwoPaymentsForOrder]);

/// Over the wire: a 409 order_no_conflict, payment_in_progress or refund_no_conflict
/// carries error.related_resource_id, and an order_no_conflict names the Payment earlier
/// answers showed for the order number.
pub const CONFLICTS_CARRY_RELATED_RESOURCE_ID: Patterns = Patterns::platform(
    BODIES,
    &[Breach::RelatedResourceMissing, Breach::RelatedResourceOther],
);

/// Over the wire: a request sent after an answer showed a Payment at version v is never
/// answered with that Payment at a lower version, nor at version v with another status.
pub const VERSIONS_RISE_AND_NEVER_GO_BACK: Patterns = Patterns::platform(
    BODIES,
    &[Breach::VersionWentBack, Breach::VersionStayedOnChange],
);

/// Over the wire: the answers of one merchant and environment never show two Refunds
/// for one merchant_refund_no, and a refund is never accepted (2xx) beyond its Payment's
/// amount, counting the refunds of that Payment already shown succeeded (A-REFUND-LIMIT:
/// the contract names no limit; the amount paid is the one it could mean).
pub const ONE_REFUND_PER_NUMBER_WITHIN_THE_AMOUNT: Patterns = Patterns::platform(
    SCOPED_BODIES,
    &[Breach::TwoRefundsForRefundNo, Breach::RefundBeyondAmount],
);

/// Over the wire: a cancel answered 202 (no evidence of a safe cancellation yet) keeps
/// the Payment's status: it never shows it canceled.
pub const CANCEL_202_KEEPS_THE_STATUS: Patterns =
    Patterns::platform(BODIES, &[Breach::Cancel202ShowsCanceled]);

/// Over the wire: a query by id shows that object; a lookup by merchant_order_no
/// (merchant_refund_no) shows only objects of exactly that number, and one Payment at most;
/// neither answers "no record" for a Payment an earlier answer showed its merchant.
pub const LOOKUPS_MATCH_THE_NUMBER_EXACTLY: Patterns = Patterns::platform(
    BODIES,
    &[Breach::LookupOtherNumber, Breach::LookupMissesKnown],
);

/// Over the wire: the answers never show one Payment with two amounts (a new attempt
/// keeps the original Payment).
pub const PAYMENTS_KEEP_THEIR_AMOUNT: Patterns =
    Patterns::platform(BODIES, &[Breach::AmountChanged]);

/// Over the wire: an object shown to one environment of a merchant is never shown to
/// its other environment (test and live do not affect each other).
pub const ENVIRONMENTS_NEVER_SHARE_OBJECTS: Patterns =
    Patterns::platform(SCOPED_BODIES, &[Breach::ObjectInTwoEnvironments]);

/// Over the wire: no Payment is shown with more attempts (attempt_count) than the
/// contract's default maximum of 3.
pub const ATTEMPTS_STAY_WITHIN_THE_MAXIMUM: Patterns =
    Patterns::platform(BODIES, &[Breach::AttemptsBeyondMaximum]).deciding(attempts_beyond_maximum);

/// Over the wire: a Payment is never shown with a newer attempt after one charged on a
/// test card that never fails (approved at once, after the wait, or silently): a new
/// attempt starts only once the previous one definitively failed, and a confirm while
/// processing never charges.
pub const A_NEW_ATTEMPT_ONLY_AFTER_A_FAILURE: Patterns =
    Patterns::platform(CARDS, &[Breach::NewAttemptBeforeFailure]).deciding(attempt_before_failure);

/// Over the wire: a printable Idempotency-Key of 1-255 characters in every reading of
/// "character" (A-KEY-LENGTH; at most 255 UTF-16 code units) is never refused 400 with
/// error.field Idempotency-Key; a missing, empty or over-long one is never answered 2xx
/// on an endpoint that needs a key.
pub const VALID_KEYS_ARE_ACCEPTED: Patterns = Patterns::platform(
    BODIES,
    &[Breach::InvalidKeyAccepted, Breach::ValidKeyRefused],
)
.deciding(valid_key_refused);

/// UNKNOWN-03 ("when the result is unknown never change the idempotency key or the order
/// number to charge again").
///
/// Over the wire: after a create whose outcome is unknown (no answer, a timeout, a
/// 5xx, a 202), the client sends no create of that order under a new key, nor the same purchase
/// (merchant, environment, amount, currency) under a new order number, until it learns
/// the order's Payment.
pub const CLIENT_KEEPS_KEY_AND_ORDER_AFTER_UNKNOWN: Patterns = Patterns::client(
    SCOPED_BODIES,
    &[Breach::NewKeyAfterUnknown, Breach::NewOrderNoAfterUnknown],
);

/// UNKNOWN-03 ("when the result is unknown never change the idempotency key … retry with
/// the same key or query"), ATTEMPT-01 (S8: "wait for the result, or query"), RETRY-03.
///
/// Over the wire: after a confirm whose outcome is unknown (no answer, a 5xx other than
/// 503), or while the Payment was last shown processing or requires_action, the client
/// confirms that Payment only under the same key, until an answer shows it in another
/// status.
pub const CLIENT_KEEPS_THE_CONFIRM_KEY_WHILE_UNRESOLVED: Patterns =
    Patterns::client(SCOPED_BODIES, &[Breach::NewConfirmKeyWhileUnresolved]);

/// REFUND-04, UNKNOWN-03 (S11: "Retry with K, or query by merchant_refund_no; do not
/// change the refund number and apply again").
///
/// Over the wire: after a refund whose outcome is unknown (no answer, a 5xx other than
/// 503, or shown processing or pending_review), the client applies no refund of the same
/// Payment and amount under another merchant_refund_no until an answer shows that refund
/// final.
pub const CLIENT_KEEPS_THE_REFUND_NUMBER_WHILE_UNRESOLVED: Patterns = Patterns::client(
    SCOPED_BODIES,
    &[
        Breach::NewRefundNoWhileUnresolved,
        Breach::NewRefundKeyWhileUnresolved,
    ],
);

/// RATE-03 ("After 429 wait Retry-After seconds, then retry with the original idempotency
/// key"), RETRY-01, S13 (503: "retry later with K").
///
/// Over the wire: after a create answered 429 rate_limited or 503
/// temporarily_unavailable, the client sends that order number (refund number) again
/// only under the same key, until an answer executes it.
pub const CLIENT_KEEPS_THE_KEY_AFTER_A_REFUSAL: Patterns =
    Patterns::client(SCOPED_BODIES, &[Breach::NewKeyAfterRefusal]);

/// TIMEOUT-01 ("Client timeouts are at least 20 seconds for create and confirm and at
/// least 10 seconds for queries").
///
/// Over the wire: a client never hangs up on a create or confirm less than 20 seconds
/// after sending it, nor on a query less than 10 seconds after (the platform waits
/// about 15 s for the acquirer before its 202).
pub const CLIENT_WAITS_THE_CONTRACT_TIMEOUTS: Patterns =
    Patterns::client(HUNG_UP, &[Breach::GaveUpTooSoon]);

/// SCHED-01 ("stopping at a terminal status or on its webhook").
///
/// Over the wire: once a query showed a Payment succeeded, failed, canceled or expired,
/// or the webhook of such a status reached the merchant (a stream that holds webhook
/// deliveries: the sandbox's, a simulated run's), the client queries that Payment no
/// more.
pub const CLIENT_STOPS_QUERYING_AT_A_FINAL_STATUS: Patterns =
    Patterns::client(SCOPED_BODIES, &[Breach::QueryAfterFinal]);

/// Over the wire: a client never sends one Idempotency-Key on two endpoints (method and
/// path).
pub const CLIENT_USES_A_KEY_ON_ONE_ENDPOINT: Patterns =
    Patterns::client(SCOPED, &[Breach::KeyOnTwoEndpoints]);

/// Over the wire: a client re-sends a key only with the safety-relevant parameters it
/// first sent it with.
pub const CLIENT_NEVER_CHANGES_PARAMETERS_UNDER_A_KEY: Patterns =
    Patterns::client(SCOPED, &[Breach::ParamsChangedUnderKey]);

/// Over the wire: a client never sends two queries of the same object less than 10
/// seconds apart.
pub const CLIENT_SPACES_QUERIES: Patterns =
    Patterns::client(SCOPED, &[Breach::QueryTooSoon]).deciding(queries_too_soon);

/// Over the wire: after a 429 with Retry-After, a client sends nothing under that scope
/// before Retry-After has passed.
pub const CLIENT_HONOURS_RETRY_AFTER: Patterns =
    Patterns::client(SCOPED, &[Breach::RetryAfterIgnored]);

/// Over the wire, with every request of the capture in the log: a scope whose every
/// request was refused 429 rate_limited or 503 temporarily_unavailable is never answered
/// as executed (a create answered 200, a 409 idempotency_conflict): those refusals
/// executed nothing; and a key whose every request was rejected (400, 403, 422) is not
/// used up: a later request under it is never answered 409 idempotency_conflict (nor a
/// create 200) as if the rejection had bound it.
pub const REFUSALS_AND_REJECTIONS_EXECUTE_NOTHING: Patterns = Patterns::platform(
    SCOPED_BODIES,
    &[Breach::RefusedThenExecuted, Breach::RejectedThenBound],
)
.assuming_complete_log();

/// Over the wire, with every request of the capture in the log: a Payment created
/// through the API is never shown with more attempts than before unless a confirm of it
/// was sent in between: a replay never charges newly supplied card information.
pub const ATTEMPTS_START_ONLY_WITH_A_CONFIRM: Patterns =
    Patterns::platform(SCOPED_BODIES, &[Breach::AttemptWithoutConfirm]).assuming_complete_log();

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
                .witness(&w, true)
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
        assert_eq!(all.len(), 36);
    }

    /// The drivers that hold a world's facts alone skip a property by its needs: a
    /// property needs the wire exactly when it reads the wire facts alone; a level over
    /// the wire always needs it.
    #[test]
    fn a_property_needs_the_wire_exactly_when_it_reads_the_wire_alone() {
        for p in crate::PROPERTIES {
            assert_eq!(
                p.needs.contains(Evidence::Wire),
                p.wire_only(),
                "{}",
                p.name
            );
            assert_eq!(p.over_facts(), !p.wire_only(), "{}", p.name);
            if let Some(w) = p.patterns() {
                assert!(w.needs.contains(Evidence::Wire), "{}", p.name);
                if p.wire_only() {
                    assert_eq!(w.needs, p.needs, "{}", p.name);
                }
            }
        }
    }

    /// One predicate per rule sentence: no two properties are named alike but for the
    /// `wire-` prefix (a rule both levels read is one property with both).
    #[test]
    fn no_rule_is_judged_by_a_facts_property_and_its_wire_twin() {
        for p in crate::PROPERTIES {
            if let Some(rest) = p.name.strip_prefix("wire-") {
                assert!(crate::property(rest).is_none(), "{} and {rest}", p.name);
            }
        }
    }
}
