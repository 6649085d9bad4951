//! A wire witness in words: each exchange in the contract's notation
//! (`POST /v1/payments Idempotency-Key K-1 (amount 100 …) → 201 pay_demo_001 version 2`),
//! and what the breach it shows is.

use crate::facts::wire::{Breach, Seen, WireParams, Witness};
use payhub_model::Contract;

/// `merchant_order_no ORDER-1, amount 12000, currency USD`.
pub fn params(p: &WireParams) -> String {
    let t = |v: &Option<payhub_model::Text>| v.as_ref().map(|v| v.to_string());
    let n = |v: &Option<i64>| v.map(|v| v.to_string());
    let fields = match p {
        WireParams::None => return "no parameters".into(),
        WireParams::Order {
            merchant_order_no,
            amount,
            currency,
        } => [
            ("merchant_order_no", t(merchant_order_no)),
            ("amount", n(amount)),
            ("currency", t(currency)),
        ],
        WireParams::Refund {
            payment_id,
            merchant_refund_no,
            amount,
        } => [
            ("payment_id", t(payment_id)),
            ("merchant_refund_no", t(merchant_refund_no)),
            ("amount", n(amount)),
        ],
    };
    let shown = fields
        .into_iter()
        .filter_map(|(name, v)| Some(format!("{name} {}", v?)));
    shown.collect::<Vec<_>>().join(", ")
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
    let code = a.code.map(|c| c.as_str()).or(a.unnamed_code.as_deref());
    for part in [code, a.object.as_deref()].into_iter().flatten() {
        out.push(' ');
        out.push_str(part);
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
    let key = (s.key.as_ref()).map(|k| format!(" Idempotency-Key {k}"));
    let p = (s.params != WireParams::None).then(|| format!(" ({})", params(&s.params)));
    let (key, p) = (key.unwrap_or_default(), p.unwrap_or_default());
    format!("{} {}{key}{p}", s.method, s.path)
}

/// The explanation of a witness, each exchange named by `name` (`entry 12`).
pub fn explain(w: &Witness, name: &dyn Fn(&Seen) -> String) -> String {
    if let (Some(d), [query]) = (&w.webhook, w.entries.as_slice()) {
        return format!(
            "the webhook {} ({} of {} version {}) reached the merchant at {} (its endpoint answered 2xx); {} later {} queried it again ({}): the contract's schedule stops on the webhook of a terminal status",
            d.event,
            d.kind,
            d.object,
            d.version,
            d.at,
            query.sent.since(d.at),
            name(query),
            request(query)
        );
    }
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
            "{b} replays key {key} of {a} with the same parameters ({}), {} {}; the platform answered {}, the contract requires 200 with the object of the first execution",
            params(&then.params),
            if then.sent < first.closed {
                format!("while {a} was in flight, whose answer was")
            } else {
                format!("{gap} after {a}'s answer")
            },
            answer(first),
            answer(then)
        ),
        Breach::ConflictMissing if then.sent < first.closed => format!(
            "{b} and {a} were in flight together under key {key} with other parameters ({b}: {}; {a}: {}); the platform answered {a} {} and {b} {}, the contract requires 409 idempotency_conflict for the one it took second",
            params(&then.params),
            params(&first.params),
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
        Breach::NewConfirmKeyWhileUnresolved => format!(
            "{a} ({}) left the Payment's outcome unknown ({}); {gap} later {b} confirmed it under another key {key}: the contract requires the same key, or a query, until the result is known",
            request(first),
            answer(first)
        ),
        Breach::NewRefundNoWhileUnresolved => format!(
            "{a} ({}) left the refund's outcome unknown ({}); {gap} later {b} applied the same refund under another refund number ({}): the contract requires retrying with the same key, or a query by merchant_refund_no, never a new refund number",
            request(first),
            answer(first),
            params(&then.params)
        ),
        Breach::NewRefundKeyWhileUnresolved => format!(
            "{a} ({}) left the refund's outcome unknown ({}); {gap} later {b} sent the same refund number under another key {key}: the contract requires retrying with the same key K, or a query by merchant_refund_no",
            request(first),
            answer(first)
        ),
        Breach::CardRetryUnderFailedKey => format!(
            "{a} showed the Payment failed ({}); {gap} later {b} confirmed it again under the previous confirm's key {key}: a card retry is a new submission under a new key, or the stored failure is replayed and the new card never charged",
            answer(first)
        ),
        Breach::NewKeyAfterRefusal => format!(
            "{a} was answered {} (not executed); {gap} later {b} sent the same number under another key {key}: the contract asks to retry later with the original key",
            answer(first)
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
        Breach::RefundBeyondAmount => format!(
            "{a} answered {}, the Payment's amount {}; {b} ({}) was answered {}: with the refunds of that Payment already shown succeeded, it refunds more than was paid",
            answer(first),
            first
                .answer
                .as_ref()
                .and_then(|a| a.amount)
                .map_or("not shown".into(), |a| a.to_string()),
            request(then),
            answer(then)
        ),
        Breach::AttemptWithoutConfirm => format!(
            "{a} ({}) answered {} with attempt_count {}; {b} ({}), sent {gap} after that answer, was answered {} with attempt_count {}, and no confirm of that Payment is in the log between them: a new attempt starts only with a confirm, a replay never charges (assuming the log complete)",
            request(first),
            answer(first),
            attempts(first),
            request(then),
            answer(then),
            attempts(then)
        ),
        Breach::NewAttemptBeforeFailure => format!(
            "{a} ({}) was answered {} with attempt_count {}, an attempt charged on a card that never fails; {b} ({}), sent {gap} after that answer, was answered {} with attempt_count {}: a new attempt before the previous one definitively failed",
            request(first),
            answer(first),
            attempts(first),
            request(then),
            answer(then),
            attempts(then)
        ),
        Breach::RelatedResourceOther => format!(
            "{a} answered {} for that order number; {b} ({}) was answered {} naming {} in error.related_resource_id: the contract's 409 carries the existing Payment's id",
            answer(first),
            request(then),
            answer(then),
            then.answer
                .as_ref()
                .and_then(|a| a.related_id.as_deref())
                .unwrap_or("-")
        ),
        Breach::LookupMissesKnown => format!(
            "{a} was answered {}; {gap} later {b} ({}) was answered {}: no record of a Payment the platform had shown the merchant (\"no record: the platform has never created a Payment for this order number\")",
            answer(first),
            request(then),
            answer(then)
        ),
        Breach::QueryAfterFinal => format!(
            "{a} showed the Payment final ({}); {gap} later {b} queried it again ({}): the contract's schedule stops at a terminal status",
            answer(first),
            request(then)
        ),
        Breach::RelatedResourceMissing
        | Breach::Cancel202ShowsCanceled
        | Breach::LookupOtherNumber
        | Breach::AttemptsBeyondMaximum
        | Breach::ValidKeyRefused
        | Breach::InvalidKeyAccepted
        | Breach::GaveUpTooSoon => one(w.breach, first, name),
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
            "{} ({}) was answered {} showing an object it did not ask for (another id or number, or a second Payment of the order); a query shows the object it names, and an order has at most one Payment",
            name(s),
            request(s),
            answer(s)
        ),
        Breach::AttemptsBeyondMaximum => format!(
            "{} ({}) was answered {} with attempt_count {}; the contract allows at most {} attempts (its default)",
            name(s),
            request(s),
            answer(s),
            attempts(s),
            Contract::ATTEMPTS_MAX
        ),
        Breach::ValidKeyRefused => format!(
            "{} ({}) was answered {} naming the Idempotency-Key, for a key of {} characters; the contract takes 1-{} characters",
            name(s),
            request(s),
            answer(s),
            s.key.as_deref().map_or(0, |k| k.chars().count()),
            Contract::KEY_LEN_MAX
        ),
        Breach::InvalidKeyAccepted => format!(
            "{} ({}) was answered {}, with {}; the contract answers a missing key, or one outside 1-{} characters, 400 with error.field Idempotency-Key",
            name(s),
            request(s),
            answer(s),
            match s.key.as_deref() {
                None => "no Idempotency-Key".to_owned(),
                Some(k) => format!("an Idempotency-Key of {} characters", k.chars().count()),
            },
            Contract::KEY_LEN_MAX
        ),
        Breach::GaveUpTooSoon => format!(
            "the client hung up on {} ({}) {} after sending it, before its answer; the contract asks a client to wait at least {} for a create or confirm and {} for a query",
            name(s),
            request(s),
            s.closed.since(s.sent),
            Contract::POST_TIMEOUT_MIN,
            Contract::QUERY_TIMEOUT_MIN
        ),
        other => format!("{other:?}: {}", name(s)),
    }
}

/// The `attempt_count` an exchange's answer showed.
fn attempts(s: &Seen) -> String {
    s.answer
        .as_ref()
        .and_then(|a| a.attempt_count)
        .map_or("not shown".into(), |n| n.to_string())
}
