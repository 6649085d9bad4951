//! Wire properties: the contract's rules that the requests and answers on the wire can
//! witness alone, judged over [`WireFacts`] (see `sim/src/facts/wire/`). They judge a
//! recorded log (`check-log`), the sandbox's session and a simulated run's stream alike;
//! each needs only [`Evidence::Wire`] and what its pattern reads (the API keys for a
//! scope, the bodies for an object).
//!
//! An explanation names the exchanges that witness the breach, oldest first, in the
//! contract's notation: `entry 12 replays key K of entry 3 with amount 12000; the
//! platform answered 200, the contract requires 409 idempotency_conflict`. The source
//! says how an exchange is named (a HAR entry, a log line, an exchange of a stream).

use crate::evidence::{Evidence, EvidenceSet};
use payhub_model::{Contract, Millis, Rule};
use payhub_sim::facts::wire::{Breach, Seen, WireFacts, WireParams, Witness};
use std::borrow::Cow;

/// Who is judged: the platform's answers or the client's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Platform,
    Client,
}

/// A property the wire can witness.
#[derive(Clone, Copy, Debug)]
pub struct WireProperty {
    pub name: &'static str,
    pub rules: &'static [Rule],
    pub side: Side,
    pub about: &'static str,
    /// The patterns it looks for, in the order it reports them.
    pub breaches: &'static [Breach],
    pub needs: EvidenceSet,
    /// For a pattern a contract number decides: the witness it finds in what the facts
    /// recorded (the facts keep no witness of such a pattern).
    pub decides: Option<fn(&WireFacts) -> Option<Witness>>,
    /// Judged only when the source is assumed to hold every request
    /// ([`crate::evidence::Supply::assume_complete_log`]): its pattern is a breach only
    /// if no unrecorded request could explain it. Without the assumption it is not
    /// listed at all.
    pub assumes_complete_log: bool,
}

impl WireProperty {
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

use Evidence::{ApiKeys, ResponseBodies, Wire};
const SCOPED: EvidenceSet = EvidenceSet::of(&[Wire, ApiKeys]);
const SCOPED_BODIES: EvidenceSet = EvidenceSet::of(&[Wire, ApiKeys, ResponseBodies]);
const BODIES: EvidenceSet = EvidenceSet::of(&[Wire, ResponseBodies]);

/// Every wire property, platform side first.
pub static WIRE_PROPERTIES: &[WireProperty] = &[
    WireProperty {
        name: "wire-replay-answers-200-with-the-same-object",
        rules: &[Rule::ReplayReusesObject, Rule::ReplayLatestStatus200],
        side: Side::Platform,
        about: "A request replaying an executed scope with its parameters is answered 200 with the object of the first execution.",
        breaches: &[Breach::ReplayNotSameObject],
        needs: SCOPED_BODIES,
        decides: Some(replays),
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-same-key-at-once-answers-one-object",
        rules: &[Rule::ConcurrentOneExecutes, Rule::ConcurrentWaitSameObject],
        side: Side::Platform,
        about: "Requests of one key with the same parameters sent at once are one business: none is answered as new business (409 order_no_conflict, payment_in_progress, refund_no_conflict) beside the one that executed.",
        breaches: &[Breach::SameKeyAsNewBusiness],
        needs: SCOPED_BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-conflict-exactly-when-parameters-differ",
        rules: &[Rule::IdempotencyConflict, Rule::SafeParameters],
        side: Side::Platform,
        about: "Under an executed scope, other safety-relevant parameters are answered 409 idempotency_conflict, and the same parameters never are.",
        breaches: &[Breach::ConflictMissing, Breach::ConflictWithoutChange],
        needs: SCOPED_BODIES,
        decides: Some(conflicts),
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-one-payment-per-order-number",
        rules: &[Rule::UniqueOrderNo, Rule::OrderNoNewKey],
        side: Side::Platform,
        about: "The answers of one merchant and environment never show two Payments for one merchant_order_no.",
        breaches: &[Breach::TwoPaymentsForOrder],
        needs: SCOPED_BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-conflicts-carry-related-resource-id",
        rules: &[
            Rule::OrderNoNewKey,
            Rule::ConfirmWhileProcessing,
            Rule::UniqueRefundNo,
        ],
        side: Side::Platform,
        about: "A 409 order_no_conflict, payment_in_progress or refund_no_conflict carries error.related_resource_id.",
        breaches: &[Breach::RelatedResourceMissing],
        needs: BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-versions-never-go-back",
        rules: &[Rule::LatestVersionWins, Rule::WebhookPrimary],
        side: Side::Platform,
        about: "A request sent after an answer showed a Payment at version v is never answered with that Payment at a lower version.",
        breaches: &[Breach::VersionWentBack],
        needs: BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-one-refund-per-refund-number",
        rules: &[Rule::UniqueRefundNo, Rule::RetentionRefundNoOutlives],
        side: Side::Platform,
        about: "The answers of one merchant and environment never show two Refunds for one merchant_refund_no.",
        breaches: &[Breach::TwoRefundsForRefundNo],
        needs: SCOPED_BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-cancel-202-keeps-the-status",
        rules: &[Rule::Cancel202KeepsStatus],
        side: Side::Platform,
        about: "A cancel answered 202 (no evidence of a safe cancellation yet) keeps the Payment's status: it never shows it canceled.",
        breaches: &[Breach::Cancel202ShowsCanceled],
        needs: BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-lookups-match-the-number-exactly",
        rules: &[Rule::QueryByOrderNo, Rule::QueryRefunds],
        side: Side::Platform,
        about: "A lookup by merchant_order_no (merchant_refund_no) shows only objects of exactly that number.",
        breaches: &[Breach::LookupOtherNumber],
        needs: BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-versions-rise-with-every-change",
        rules: &[Rule::LatestVersionWins],
        side: Side::Platform,
        about: "A request sent after an answer showed a Payment at version v is never answered with that Payment at version v and another status.",
        breaches: &[Breach::VersionStayedOnChange],
        needs: BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-payments-keep-their-amount",
        rules: &[Rule::RetryKeepsPaymentAndFee],
        side: Side::Platform,
        about: "The answers never show one Payment with two amounts (a new attempt keeps the original Payment).",
        breaches: &[Breach::AmountChanged],
        needs: BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-environments-never-share-objects",
        rules: &[Rule::ScopeEnvironments],
        side: Side::Platform,
        about: "An object shown to one environment of a merchant is never shown to its other environment (test and live do not affect each other).",
        breaches: &[Breach::ObjectInTwoEnvironments],
        needs: SCOPED_BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-client-keeps-key-and-order-after-unknown",
        rules: &[Rule::NeverSwitchKeyOnUnknown, Rule::OneBusinessEffect],
        side: Side::Client,
        about: "After a create whose outcome is unknown (no answer, a timeout, a 5xx), the client sends no create of that order under a new key, nor the same purchase under a new order number, until it learns the order's Payment.",
        breaches: &[Breach::NewKeyAfterUnknown, Breach::NewOrderNoAfterUnknown],
        needs: SCOPED_BODIES,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-client-uses-a-key-on-one-endpoint",
        rules: &[Rule::OneKeyPerSubmission],
        side: Side::Client,
        about: "A client never sends one Idempotency-Key on two endpoints (method and path).",
        breaches: &[Breach::KeyOnTwoEndpoints],
        needs: SCOPED,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-client-never-changes-parameters-under-a-key",
        rules: &[Rule::ConflictIsDefect, Rule::OneKeyPerSubmission],
        side: Side::Client,
        about: "A client re-sends a key only with the safety-relevant parameters it first sent it with.",
        breaches: &[Breach::ParamsChangedUnderKey],
        needs: SCOPED,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-client-spaces-queries",
        rules: &[Rule::QuerySpacing],
        side: Side::Client,
        about: "A client never sends two queries of the same object less than 10 seconds apart.",
        breaches: &[Breach::QueryTooSoon],
        needs: SCOPED,
        decides: Some(queries_too_soon),
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-client-honours-retry-after",
        rules: &[Rule::RetryAfterHonoured],
        side: Side::Client,
        about: "After a 429 with Retry-After, a client sends nothing under that scope before Retry-After has passed.",
        breaches: &[Breach::RetryAfterIgnored],
        needs: SCOPED,
        decides: None,
        assumes_complete_log: false,
    },
    WireProperty {
        name: "wire-refused-requests-execute-nothing",
        rules: &[
            Rule::RateLimited,
            Rule::ChannelPaused,
            Rule::FirstExecution201,
        ],
        side: Side::Platform,
        about: "With every request of the capture in the log: a scope whose every request was refused 429 rate_limited or 503 temporarily_unavailable is never answered as executed (a create answered 200, a 409 idempotency_conflict): those refusals executed nothing.",
        breaches: &[Breach::RefusedThenExecuted],
        needs: SCOPED_BODIES,
        decides: None,
        assumes_complete_log: true,
    },
    WireProperty {
        name: "wire-rejected-requests-bind-no-key",
        rules: &[Rule::RejectionsDoNotOccupyKey, Rule::IdempotencyConflict],
        side: Side::Platform,
        about: "With every request of the capture in the log: a key whose every request was rejected (400, 403, 422) is not used up: a later request under it is never answered 409 idempotency_conflict (nor a create 200) as if the rejection had bound it.",
        breaches: &[Breach::RejectedThenBound],
        needs: SCOPED_BODIES,
        decides: None,
        assumes_complete_log: true,
    },
];

/// `merchant_order_no ORDER-1, amount 12000, currency USD`.
pub fn params(p: &WireParams) -> String {
    fn field<T: std::fmt::Display>(out: &mut Vec<String>, name: &str, v: &Option<T>) {
        if let Some(v) = v {
            out.push(format!("{name} {v}"));
        }
    }
    let mut out = Vec::new();
    match p {
        WireParams::None => return "no parameters".into(),
        WireParams::Order {
            merchant_order_no,
            amount,
            currency,
        } => {
            field(&mut out, "merchant_order_no", merchant_order_no);
            field(&mut out, "amount", amount);
            field(&mut out, "currency", currency);
        }
        WireParams::Refund {
            payment_id,
            merchant_refund_no,
            amount,
        } => {
            field(&mut out, "payment_id", payment_id);
            field(&mut out, "merchant_refund_no", merchant_refund_no);
            field(&mut out, "amount", amount);
        }
    }
    out.join(", ")
}

/// `201 pay_demo_001 v2`, `409 idempotency_conflict`, `no answer`.
pub fn answer(s: &Seen) -> String {
    let Some(a) = &s.answer else {
        return if s.open {
            "no answer recorded (the log ends first)".into()
        } else {
            "no answer (an unknown outcome)".into()
        };
    };
    let mut out = a.status.to_string();
    if a.status >= 500 && a.code != Some(payhub_model::ErrorCode::TemporarilyUnavailable) {
        out.push_str(" (an unknown outcome)");
    }
    if let Some(c) = a.code {
        out.push(' ');
        out.push_str(c.as_str());
    } else if let Some(c) = &a.unnamed_code {
        out.push(' ');
        out.push_str(c);
    }
    if let Some(o) = &a.object {
        out.push(' ');
        out.push_str(o);
    }
    if let Some(v) = &a.version {
        out.push_str(&format!(" version {v}"));
    }
    if let Some(r) = a.retry_after_s {
        out.push_str(&format!(" Retry-After {r}"));
    }
    out
}

/// `POST /v1/payments Idempotency-Key K-1 (amount 100 …)`.
pub fn request(s: &Seen) -> String {
    let key = s
        .key
        .as_ref()
        .map(|k| format!(" Idempotency-Key {k}"))
        .unwrap_or_default();
    let p = if s.params == WireParams::None {
        String::new()
    } else {
        format!(" ({})", params(&s.params))
    };
    format!("{} {}{key}{p}", s.method, s.path)
}

/// The explanation of a witness, each exchange named by `name` (`entry 12`).
pub fn explain(w: &Witness, name: &dyn Fn(&Seen) -> String) -> String {
    let [first, then] = match w.entries.as_slice() {
        [a, b] => [a, b],
        [a] => return one(w.breach, a, name),
        _ => return format!("{:?}", w.breach),
    };
    let (a, b) = (name(first), name(then));
    let gap = then.sent.since(first.closed);
    let key = then.key.as_deref().unwrap_or("-");
    match w.breach {
        Breach::ReplayNotSameObject => format!(
            "{b} replays key {key} of {a} with the same parameters ({}), {gap} after {a}'s answer {}; the platform answered {}, the contract requires 200 with the object of the first execution",
            params(&then.params),
            answer(first),
            answer(then)
        ),
        Breach::ConflictMissing => format!(
            "{b} replays key {key} of {a} with {} (first: {}); the platform answered {}, the contract requires 409 idempotency_conflict",
            params(&then.params),
            params(&first.params),
            answer(then)
        ),
        Breach::ConflictWithoutChange => format!(
            "{b} replays key {key} of {a} with the same parameters ({}); the platform answered 409 idempotency_conflict, the contract requires the first execution's object",
            params(&then.params)
        ),
        Breach::TwoPaymentsForOrder => format!(
            "{a} answered {} and {b} answered {} for the same merchant_order_no; the contract allows one Payment per order number",
            answer(first),
            answer(then)
        ),
        Breach::VersionWentBack => format!(
            "{a} answered {}; {b}, sent {gap} after that answer, got {}: a version went back",
            answer(first),
            answer(then)
        ),
        Breach::NewKeyAfterUnknown => format!(
            "{a} ({}) had an unknown outcome; {gap} later {b} sent the same order under another key {key}: the contract requires the same key until the result is known",
            request(first)
        ),
        Breach::NewOrderNoAfterUnknown => format!(
            "{a} ({}) had an unknown outcome; {gap} later {b} sent the same purchase under another order number ({}): a second order for a result not yet known",
            request(first),
            params(&then.params)
        ),
        Breach::KeyOnTwoEndpoints => format!(
            "{b} sends key {key} on {} {} after {a} sent it on {} {}",
            then.method, then.path, first.method, first.path
        ),
        Breach::ParamsChangedUnderKey => format!(
            "{b} re-sends key {key} of {a} with {} (first: {})",
            params(&then.params),
            params(&first.params)
        ),
        Breach::QueryTooSoon => format!(
            "{b} queries {} {} after {a}{} (sent at {} and {}); the contract requires at least {}",
            then.path,
            then.sent.since(first.sent),
            if first.path == then.path {
                String::new()
            } else {
                format!(" queried it as {}", first.path)
            },
            first.sent,
            then.sent,
            Contract::QUERY_SPACING_MIN
        ),
        Breach::RetryAfterIgnored => format!(
            "{a} was answered {}; {b} re-sent key {key} {gap} later",
            answer(first)
        ),
        Breach::TwoRefundsForRefundNo => format!(
            "{a} answered {} and {b} answered {} for the same merchant_refund_no; the contract allows one Refund per refund number",
            answer(first),
            answer(then)
        ),
        Breach::VersionStayedOnChange => format!(
            "{a} answered {}; {b}, sent {gap} after that answer, got {} with another status at the same version: a version rises with every visible change",
            answer(first),
            answer(then)
        ),
        Breach::AmountChanged => format!(
            "{a} ({}) answered {}; {b} ({}) answered the same Payment with another amount: a Payment keeps its amount",
            request(first),
            answer(first),
            request(then)
        ),
        Breach::ObjectInTwoEnvironments => format!(
            "{a} answered {} in one environment and {b} answered {} in the merchant's other: test and live do not affect each other",
            answer(first),
            answer(then)
        ),
        Breach::SameKeyAsNewBusiness => format!(
            "{a} and {b} sent key {key} with the same parameters ({}); {a} was answered {} and {b} {}: one key is one business, the contract requires a request to wait for the one that executes and answer its object",
            params(&then.params),
            answer(first),
            answer(then)
        ),
        Breach::RefusedThenExecuted => format!(
            "{a} ({}) was answered {}, and no other request of key {key} is in the log; {b} ({}) was answered {}: the refusal executed nothing, so nothing of that key had executed (assuming the log complete)",
            request(first),
            answer(first),
            request(then),
            answer(then)
        ),
        Breach::RejectedThenBound => format!(
            "{a} ({}) was rejected {}, and no other request of key {key} is in the log; {b} ({}) was answered {}: a rejected request does not use up its key (assuming the log complete)",
            request(first),
            answer(first),
            request(then),
            answer(then)
        ),
        Breach::RelatedResourceMissing
        | Breach::Cancel202ShowsCanceled
        | Breach::LookupOtherNumber => one(w.breach, first, name),
    }
}

fn one(breach: Breach, s: &Seen, name: &dyn Fn(&Seen) -> String) -> String {
    match breach {
        Breach::RelatedResourceMissing => format!(
            "{} ({}) was answered {} without error.related_resource_id; the contract requires it to name the existing object",
            name(s),
            request(s),
            answer(s)
        ),
        Breach::Cancel202ShowsCanceled => format!(
            "{} ({}) was answered {} with the Payment canceled; a 202 cancel has no evidence of a safe cancellation and keeps the original status",
            name(s),
            request(s),
            answer(s)
        ),
        Breach::LookupOtherNumber => format!(
            "{} ({}) was answered {} showing an object of another number; the lookup matches the number exactly",
            name(s),
            request(s),
            answer(s)
        ),
        other => format!("{other:?}: {}", name(s)),
    }
}

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
            WIRE_PROPERTIES[0].witness(&w).is_some()
        };
        assert!(verdict(Millis::hours(24)));
        assert!(!verdict(Contract::RETENTION));
    }

    #[test]
    fn every_breach_is_reported_by_exactly_one_wire_property() {
        use std::collections::BTreeSet;
        let mut all = BTreeSet::new();
        for p in WIRE_PROPERTIES {
            assert!(!p.rules.is_empty(), "{}", p.name);
            assert!(p.needs.contains(Evidence::Wire), "{}", p.name);
            for b in p.breaches {
                assert!(all.insert(*b), "{b:?} twice");
            }
        }
        assert_eq!(all.len(), 21);
    }
}
