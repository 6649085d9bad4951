//! Response-level properties: the executable reading of the contract's answers. Each
//! judges, from the facts alone, one thing the contract prescribes about what the
//! platform answers (a status code, a header, an error field, the object's current
//! state, its version), written from the contract's text and never by asking the
//! platform. The facts are `crate::facts::responses` (first witnesses) and the
//! attempts family's mirror of the store; each answer is judged as it is folded, against
//! the store as it was at answer time, by [`answers`] ([`judge`] the rules that need no
//! flight, [`foreign`] SCOPE-01/02 of lists and webhooks), which the facts call as they
//! fold.

pub(crate) mod answers;
mod foreign;
mod judge;

use crate::evidence::PLATFORM;
use crate::exercise::{CHARGES, Exercise, KEYED};
use crate::facts::responses::Misanswer;
use crate::property::{Predicate, Property};
use crate::witnessed::Witnessed;
use payhub_model::{Contract, PaymentStatus, Rule};

/// `{who}: {what}`, naming the request, the Payment and the refund of the misanswer.
pub(crate) fn explain(witness: &Option<Box<Misanswer>>, what: &str) -> Option<Witnessed> {
    witness
        .as_ref()
        .map(|m| named(m, Witnessed::new(format!("{}: {what}", who(m)))))
}

/// `found` naming the request, the Payment, the attempts its failure names (shown and
/// stored) and the refund of `m`.
fn named(m: &Misanswer, found: Witnessed) -> Witnessed {
    let found = found.request_if(m.request).payment_if(m.payment);
    let failed = [m.shown, m.stored].into_iter().flatten();
    let found = failed
        .filter_map(|s| s.failure_attempt)
        .fold(found, Witnessed::attempt);
    match m.refund {
        Some((id, ..)) => found.refund(id),
        None => found,
    }
}

/// `req_3 (409 operation_in_progress)`, `pay_demo_001`, …: who, for the properties'
/// explanations: the witness a fact kept, in the contract's words.
pub fn who(m: &Misanswer) -> String {
    let mut s = match m.request {
        Some(id) => format!("{id} ({}", m.status),
        None => format!("a webhook ({}", m.status),
    };
    if let Some(code) = m.code {
        s.push(' ');
        s.push_str(code.as_str());
    }
    s.push(')');
    if let Some(p) = m.payment {
        s.push_str(&format!(" about {p}"));
    }
    if let Some(shown) = m.shown {
        s.push_str(&format!(": shown {shown}"));
    }
    match m.stored {
        Some(stored) => s.push_str(&format!(", stored {stored}")),
        None if m.payment.is_some() => s.push_str(", not in the store"),
        None => {}
    }
    if let Some((id, status, version)) = m.refund {
        s.push_str(&format!(
            " about {id}: shown {} version {version}",
            status.as_str()
        ));
        match m.stored_refund {
            Some((status, version)) => {
                s.push_str(&format!(", stored {} version {version}", status.as_str()))
            }
            None => s.push_str(", not in the store"),
        }
    }
    s
}

/// The properties that read one first misanswer of the response facts, each a row: its
/// name, rules and claim, the misanswer's field and what it says, and its wire level if
/// it has one (then it reads the rule at both levels).
macro_rules! answer_properties {
    ($(
        $(#[doc = $doc:literal])*
        $const:ident = $name:literal, [$($rule:path),+ $(,)?], $about:literal, by $by:expr,
        $field:ident => $what:literal $(, wire $wire:path)?;
    )*) => {$(
        $(#[doc = $doc])*
        pub const $const: Property = Property {
            name: $name,
            rules: &[$($rule),+],
            about: $about,
            needs: PLATFORM,
            exercised_by: $by,
            predicate: answer_predicate!(|f| explain(&f.responses.$field, $what) $(, $wire)?),
        };
    )*};
}

/// Over a run's facts alone, or at both levels with a wire level.
macro_rules! answer_predicate {
    ($facts:expr) => {
        Predicate::Always($facts)
    };
    ($facts:expr, $wire:path) => {
        Predicate::Levels {
            facts: $facts,
            wire: $wire,
        }
    };
}

answer_properties! {
    /// REPLAY-02, CONC-02, REPLAY-01: every answer to a POST shows its Payment as the store
    /// holds it at answer time: a replay or a waiter's answer the object's latest state.
    ANSWERS_SHOW_CURRENT_STATE = "answers-show-the-current-state",
        [Rule::ReplayLatestStatus200, Rule::ConcurrentWaitSameObject, Rule::ReplayReusesObject],
        "Every answer to a POST (first execution, replay, wait) shows its Payment's status, resolution_status, version and failure.attempt_id, or its Refund's status and version, as the store holds them when the answer leaves (attempt_count: attempt-count-is-attempts-made).", by KEYED,
        stale_answer => "the answer does not show the Payment's current state";

    /// REPLAY-03, REPLAY-02, CONC-02: 201 for a first execution, 200 for a replay.
    FIRST_EXECUTION_201_REPLAY_200 = "first-execution-201-replay-200",
        [Rule::FirstExecution201, Rule::ReplayLatestStatus200, Rule::ConcurrentWaitSameObject],
        "A create's own execution (of a Payment, a checkout session or a refund, A-STATUS-CODES), answered in its own step or later, is answered 201 (202 while the upstream has not answered); a request whose step created, bound and sent nothing (a replay, a reread) and a request that waited are answered 200 when they succeed; only creates are ever answered 201.", by KEYED,
        wrong_success_code => "201 is for a first execution, 200 for a replay or a wait";

    /// RATE-04: S13's "the response does not state the internal reason".
    PAUSE_STATES_NO_REASON = "pause-answer-states-no-reason",
        [Rule::ChannelPaused],
        "A 503 temporarily_unavailable carries its code and retryable only: no error.field and no related_resource_id, nothing of why or where the channel is paused (S13: the response does not state the internal reason).", by &[],
        pause_reason_stated => "a 503 temporarily_unavailable that states more than its code";

    /// RATE-04, RATE-05: 503 temporarily_unavailable is the platform's only 5xx.
    ONLY_5XX_IS_503 = "only-5xx-is-503-temporarily-unavailable",
        [Rule::ChannelPaused, Rule::Only503NotAccepted],
        "The platform's own answers (before any edge failure) include no 5xx but 503, and a 503 is temporarily_unavailable (what it created is judged by rejections-execute-nothing).", by &[],
        wrong_5xx => "the only 5xx the platform answers is 503 temporarily_unavailable";

    /// KEY-01..KEY-07: a missing or invalid key is 400 with `error.field = Idempotency-Key`
    /// on every endpoint that needs one.
    INVALID_KEY_400_FIELD = "invalid-key-answered-400-idempotency-key",
        [
            Rule::KeyRequiredCreatePayment,
            Rule::KeyRequiredConfirm,
            Rule::KeyRequiredCancel,
            Rule::KeyRequiredCheckoutSession,
            Rule::KeyRequiredRefund,
            Rule::KeyNotRequiredQueries,
            Rule::KeyLength,
        ],
        "On create, confirm, cancel, checkout session and refund, a missing, empty or over-255-character Idempotency-Key (counted in characters) is answered 400 invalid_request with error.field = Idempotency-Key (unless authentication or the rate limit answered first: 401, 403, 429); a key of 1 to 255 characters, and a query, never are.", by KEYED,
        key_misjudged => "the Idempotency-Key was judged against its 1-255 characters wrongly, or without error.field", wire crate::wire::VALID_KEYS_ARE_ACCEPTED;

    /// QUERY-01, QUERY-03, QUERY-05, A-NOT-FOUND-POST: what does not exist is 404 (405 for
    /// a known path), on every endpoint that names an object.
    NOT_FOUND_404_405 = "unknown-objects-and-routes-answered-404-405",
        [Rule::QueryById, Rule::QueryRefunds, Rule::NotFoundMeansNeverCreated],
        "A GET of a Payment or a refund the merchant does not have (unknown, or another merchant's or environment's), a confirm or cancel of such a Payment and a refund naming one are answered 404 resource_missing (A-NOT-FOUND-POST: unless authentication, the rate limit or, first, the key's or a refund field's 400 answered), and one it has never is; a route that does not exist is answered 404, or 405 for a known path (unless authentication or the rate limit answered first).", by &[],
        not_found_misjudged => "what does not exist is answered 404 (405), what exists never is";

    /// ORDER-01, ATTEMPT-01, UNIQ-04: the conflicts that point at an existing object name it.
    CONFLICTS_NAME_RELATED_RESOURCE = "conflicts-name-the-related-resource",
        [Rule::OrderNoNewKey, Rule::UniqueOrderNo, Rule::ConfirmWhileProcessing, Rule::UniqueRefundNo],
        "409 order_no_conflict carries related_resource_id = the order's Payment in the store (never answered while the store holds none), 409 payment_in_progress the Payment in the path, 409 refund_no_conflict the refund holding the refund number (any refund while the store shows none).", by &[Exercise::Create, Exercise::Confirm, Exercise::Session, Exercise::Refund],
        related_misnamed => "the conflict does not name the existing object in related_resource_id", wire crate::wire::CONFLICTS_CARRY_RELATED_RESOURCE_ID;

    /// CANCEL-01: 202 to a cancel leaves the status as it was.
    CANCEL_202_KEEPS_STATUS = "cancel-202-keeps-the-status",
        [Rule::Cancel202KeepsStatus],
        "A cancel answered 202 shows its Payment (S12: 202 {\"status\":\"requires_action\",…}) still processing or requires_action, and the store holds it so: without the upstream's word nothing is canceled.", by &[Exercise::Cancel],
        cancel_202_changed => "a cancel answered 202 did not show its Payment kept in progress", wire crate::wire::CANCEL_202_KEEPS_THE_STATUS;

    /// WEBHOOK-01, A-VERSION: versions rise with every visible change, of Payments and refunds.
    VERSIONS_RISE = "versions-rise-with-every-visible-change",
        [Rule::WebhookPrimary, Rule::LatestVersionWins],
        "Every change of a Payment's status, resolution_status, attempts or failure.attempt_id, and of a refund's status, in the store raises its version, which never goes back; a webhook (of a Payment or a refund) never shows the current version with another state, nor a version the store has not reached: one version, one state.", by &[],
        unversioned_change => "a visible change without a higher version, or two states under one version", wire crate::wire::VERSIONS_RISE_AND_NEVER_GO_BACK;

    /// CONC-03, CONC-01: operation_in_progress only while the original is in flight.
    IN_PROGRESS_ONLY_WHILE_IN_FLIGHT = "operation-in-progress-only-while-in-flight",
        [Rule::ConcurrentWaitTimeout, Rule::ConcurrentOneExecutes, Rule::ScopeComponents],
        "409 operation_in_progress answers a request only while a request under the same Idempotency-Key, merchant and environment (SCOPE-01) is executing and not yet answered; another merchant's or environment's execution under the same key is no reason (a crossed endpoint or Payment: answers-name-the-requested-payment).", by KEYED,
        in_progress_without_execution => "operation_in_progress while nothing executes under its Idempotency-Key";

    /// QUERY-04, QUERY-01, QUERY-02, QUERY-03, QUERY-05: queries read only known state.
    QUERIES_ANSWER_KNOWN_STATE = "queries-answer-known-state",
        [Rule::QueryReadsKnownState, Rule::QueryById, Rule::QueryByOrderNo, Rule::NotFoundMeansNeverCreated, Rule::QueryRefunds],
        "A GET answers the Payment it names as the store holds it (status, resolution_status, version, failure.attempt_id); a list by order number answers the order's Payment as stored, or nothing when the store holds none (exact, case-sensitive); a refund query answers as stored (status, version) the refund it names, the refund of its merchant_refund_no (or nothing), or with ?status=processing every processing refund of the merchant and no other.", by &[Exercise::Query],
        query_unknown_state => "the query answered a state the platform does not hold", wire crate::wire::LOOKUPS_MATCH_THE_NUMBER_EXACTLY;

    /// ORDER-01 (S4), CONC-02 and CONC-03 (S5), ATTEMPT-01 (S8), a used refund number, CKO-01
    /// for an expired Payment: where the contract allows two answers, one of those two.
    BRANCHES_ANSWER_ONE_OF_TWO = "branches-answer-one-of-the-two",
        [
            Rule::OrderNoNewKey,
            Rule::ConcurrentWaitSameObject,
            Rule::ConcurrentWaitTimeout,
            Rule::ConfirmWhileProcessing,
            Rule::UniqueRefundNo,
            Rule::CheckoutNewSession,
        ],
        "S4: a create for an order number that has a Payment succeeds only as 200 with that Payment, and conflicts only as order_no_conflict; S5: while a request under the scope executes, no other succeeds in its own step (it waits for the same object, or gets operation_in_progress); S8: a confirm of a Payment in progress gets 409 payment_in_progress or 200 with the Payment, or an answer that comes before that point (400, 401, 403, 429, 503); a used refund number (A-REFUND-NO-BRANCH) gets 409 refund_no_conflict or 200 with the Refund holding it, never another or a new one; a checkout session for the order of an expired Payment (A-CKO-ANY-STATUS) gets 201 with a session of that Payment or 422 payment_expired.", by KEYED,
        branch_misanswered => "the answer is neither of the two the contract allows here";

    /// RES-05 (and the status table, RES-02..RES-06): every Payment shown is a row of the
    /// table, with next_action exactly when requires_action.
    SHOWN_AS_THE_STATUS_TABLE_LISTS = "payments-shown-as-the-status-table-lists",
        [Rule::RequiresAction],
        "Every answer and webhook shows a Payment as a row of the contract's status table (processing with needs_query, known or manual_review; requires_action with known or manual_review; succeeded, failed, canceled and expired with known; requires_payment_method with known), with next_action exactly when it is requires_action (RES-05: the payer must complete authentication).", by &[],
        off_the_status_table => "a Payment shown as no row of the status table, or next_action not exactly when requires_action";
}

/// RES-06, ATTEMPT-02: `failure.attempt_id` names the attempt that failed last.
pub const FAILURE_NAMES_LATEST_ATTEMPT: Property = Property {
    name: "failure-names-the-latest-attempt",
    rules: &[Rule::TerminalStatuses, Rule::CardRetryAfterFailure],
    about: "A Payment the store holds failed has failure.attempt_id = its latest attempt (answers and webhooks show what the store holds: answers-show-the-current-state, queries-answer-known-state, versions-rise-with-every-visible-change).",
    needs: PLATFORM,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        for (id, p) in f.attempts.payments.iter() {
            if p.status != PaymentStatus::Failed {
                continue;
            }
            let latest = p.attempts.last().copied();
            if p.failure_attempt != latest || latest.is_none() {
                let found = Witnessed::new(format!(
                    "{id} is failed with failure.attempt_id {:?}, its latest attempt is {:?}",
                    p.failure_attempt.map(|a| a.to_string()),
                    latest.map(|a| a.to_string())
                ))
                .payment(*id);
                let named = p.failure_attempt.iter().chain(&latest);
                return Some(named.fold(found, |found, a| found.attempt(*a)));
            }
        }
        None
    }),
};

/// ATTEMPT-05, REPLAY-02: `attempt_count` is the number of attempts made.
pub const ATTEMPT_COUNT_IS_ATTEMPTS_MADE: Property = Property {
    name: "attempt-count-is-attempts-made",
    rules: &[
        Rule::AttemptsMax,
        Rule::ReplayLatestStatus200,
        Rule::CardRetryAfterFailure,
    ],
    about: "Every answer, and every webhook of the Payment's current version, shows attempt_count = the attempts the store holds for the Payment (never more than the contract's 3: attempts-within-limits).",
    needs: PLATFORM,
    exercised_by: CHARGES,
    predicate: Predicate::Always(|f| {
        let m = f.responses.miscounted_attempts.as_ref()?;
        let what = format!(
            "attempt_count is not the attempts made (max {})",
            Contract::ATTEMPTS_MAX
        );
        Some(named(m, Witnessed::new(format!("{}: {what}", who(m)))))
    }),
};
