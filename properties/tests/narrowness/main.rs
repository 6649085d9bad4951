//! No property narrower than its name: for each property whose predicate once
//! covered less than its name promises, an event stream that plants exactly the case the
//! name covers and the predicate missed, judged from the events alone
//! ([`Facts::from_events`], no world), next to the contract's own case, which must hold.
//!
//! - `refunds-once-and-within-captured` iterated captures only: a refund with no capture
//!   behind it was invisible.
//! - `failed-only-on-upstream-evidence` accepted a decline of any attempt named by
//!   `failure.attempt_id`, not of the latest attempt.
//! - `no-capture-behind-a-closed-payment` must see a capture of any attempt of the
//!   Payment, not only of the latest.
//! - `succeeded-only-when-captured` must not accept a capture of another Payment.
//! - `queries-answer-known-state` covers refund queries (QUERY-03), not only Payments.
//! - `payments-shown-as-the-status-table-lists` covers every row of the table, not only
//!   requires_action's next_action (the case its planted bug makes).
//! - `queries-never-charge` counted a keyed request's charge under its scope only: a
//!   cancel, refund or checkout session that charged passed (now: a charge outside a
//!   create or confirm is unsolicited, `properties/src/facts/money.rs`).
//! - `client-closes-an-order-once-on-a-closed-payment` judged a fulfilment against the
//!   orders closed *now*: an order closed, reopened by its database, then fulfilled passed
//!   (now: against every order ever closed, `properties/src/facts/effects.rs`).
//! - `client-never-closes-a-captured-order` read canceled orders only: an expired order
//!   with a capture behind it passed (now: canceled or expired, `properties/src/facts/client.rs`).
//! - `conflicts-name-the-related-resource` accepted any refund as refund_no_conflict's
//!   related_resource_id (now: the refund holding the number,
//!   `properties/src/responses/judge.rs`); order_no_conflict accepted any
//!   related_resource_id while no Payment held the order number (now: violated).
//! - `client-stops-querying-at-a-final-status` judged queries by Payment id only: a
//!   query by merchant order number of an order its database holds as final passed (now:
//!   both, the order number against the database the server writes,
//!   `properties/src/facts/cadence.rs`).
//! - `client-queries-until-24-hours` judged only servers a submission had named the
//!   database of: a second server that only queried and ended the schedule early passed
//!   (now: judged against the earliest order of that number, `properties/src/facts/cadence.rs`).
//! - `client-sends-one-key-per-submission` read keyed sends only: a submission re-sent
//!   without its key passed (now: a keyless send of a keyed submission is a second key,
//!   `properties/src/facts/client.rs`).
//! - `reach:202-result-unknown` counted any 202, a cancel's too, and `reach:cancel-202`
//!   a cancel's 200 (same rule) next to a create's 202 (now: by the rule that decided
//!   the 202, `rules_202` in `properties/src/facts/queries.rs`).
//! - `reach:needs-query` counted the rule only: a store holding a Payment processing with
//!   needs_query (a recorded stream's store events carry no rule) was not reached.
//! - `reach:manual-review` read the store's current state: a Payment in manual_review
//!   and resolved since was not reached at the end of a judged stream (now: the cadence
//!   family's history).
//! - The liveness classifier (`properties/src/liveness.rs`, not a registry property)
//!   filed a confirming order behind its Payment as A-CLIENT-AFTER-24H once the
//!   *client's own* schedule said no query was due: a client that stopped querying early
//!   while its servers ran was a documented gap. Now the gap also needs the contract's
//!   window to have run: its last query no earlier than the last scheduled query a
//!   running server of its database owed (`liveness::window_ran`, tested in its module).
//!
//! Found by the safety and response rows (`safety_responses/mod.rs`, each test's doc says
//! what was widened):
//! - `no-new-attempt-while-one-is-unfinished` and `attempts-within-limits` counted the
//!   attempts the Payment's record lists only, not every attempt the store holds for it
//!   (`Attempts::attempts_of`); `attempts-within-limits` judged expires_at for card
//!   retries only, not the first confirm of a checkout session's Payment.
//! - `rejections-execute-nothing` did not count 404 and 405 as rejections, nor a
//!   rejection that stored an idempotency record (`properties/src/facts/money.rs`).
//! - `scopes-never-interfere` judged an answer's single object only: a list answer or a
//!   webhook showing another merchant's or environment's Payment or refund passed
//!   (`properties/src/responses/foreign.rs`).
//! - `replayed-card-never-charged` compared the charged card with the request's own only:
//!   a replay charging the card it carried passed.
//! - `idempotency-conflict-iff-parameters-differ`, `same-key-never-new-business` and
//!   `answers-name-the-requested-payment` judged answers given in the request's own step
//!   only, never a waiter's later answer (`Money::waiting`).
//! - `first-execution-201-replay-200` never judged a create answered in its own step
//!   that created its Payment, and judged later answers of Payment creates only (not of
//!   checkout sessions and refunds).
//! - `unknown-objects-and-routes-answered-404-405` judged GETs of a Payment only: now
//!   GETs of refunds, confirm, cancel and refunds naming a Payment (A-NOT-FOUND-POST).
//! - `versions-rise-with-every-visible-change` judged Payments only, not refunds.
//! - `operation-in-progress-only-while-in-flight` compared the Idempotency-Key only: a
//!   second merchant's or live's execution under the same key passed.
//! - `branches-answer-one-of-the-two` did not judge the used refund number's point
//!   (A-REFUND-NO-BRANCH).
//!
//! Property → test ("— (reason)": none can be written from
//! events, and why). A row may name several tests, separated by ", ". The test
//! `the_table_names_every_property` keeps this table in step with the registry's
//! properties over a run's facts and with the tests of this directory (the properties
//! over the wire are judged from the wire facts, tested in `properties/src/facts/wire/tests.rs`
//! and, one planted bug each, in `tests/check_log.rs`).
//!
//! | property | test |
//! |---|---|
//! | `at-most-one-charge-per-scope` | two_charges_under_one_scope_of_either_endpoint |
//! | `at-most-one-payment-per-order` | one_payment_per_order_in_its_own_scope_only |
//! | `at-most-one-capture-per-payment` | second_capture_of_another_attempt_of_one_payment |
//! | `no-new-attempt-while-one-is-unfinished` | second_unfinished_attempt_the_record_does_not_list (found: fixed) |
//! | `attempts-within-limits` | attempts_beyond_the_record_and_a_first_confirm_after_expiry (found: fixed) |
//! | `refunds-once-and-within-captured` | refund_with_no_capture_behind_it |
//! | `rejections-execute-nothing` | rejections_404_405_and_a_key_bound_by_a_rejection (found: fixed) |
//! | `queries-never-charge` | charges_of_keyed_requests_other_than_create_and_confirm (found: fixed) |
//! | `replay-returns-same-object` | replay_and_waiter_answered_another_object |
//! | `scopes-never-interfere` | answers_with_objects_of_another_merchant_or_environment (found: fixed) |
//! | `replayed-card-never-charged` | replay_charging_its_own_card (found: fixed) |
//! | `confirm-past-retention-kept-to-its-reading` | — (no narrowness test yet: the zoo's retention_replay_charged_anyway shows it failing, scripts F01b and F01c show it holding under each reading) |
//! | `refund-rejected-in-review-is-never-sent` | — (no narrowness test yet: the zoo's rejected_refund_sent_anyway shows it failing, script F10b shows it holding) |
//! | `failed-only-on-upstream-evidence` | failed_judged_on_the_latest_attempt |
//! | `no-capture-behind-a-closed-payment` | closed_payment_with_a_capture_of_an_earlier_attempt |
//! | `succeeded-only-when-captured` | succeeded_with_a_capture_of_another_payment |
//! | `idempotency-conflict-iff-parameters-differ` | waiter_answered_against_its_parameters (found: fixed) |
//! | `same-key-never-new-business` | waiter_answered_as_new_business (found: fixed) |
//! | `answers-name-the-requested-payment` | waiter_answered_about_another_payment (found: fixed) |
//! | `payments-keep-their-fee-snapshot` | sync_fee_pause::fee_rate_of_a_card_retry_against_the_snapshot |
//! | `answers-show-the-current-state` | replay_and_waiter_show_the_state_at_answer_time |
//! | `first-execution-201-replay-200` | first_execution_answered_in_its_own_step_or_later (found: fixed) |
//! | `only-5xx-is-503-temporarily-unavailable` | five_hundreds_on_every_endpoint_to_anyone |
//! | `pause-answer-states-no-reason` | sync_fee_pause::paused_answers_that_state_a_field_or_a_resource |
//! | `invalid-key-answered-400-idempotency-key` | invalid_key_on_every_keyed_endpoint |
//! | `unknown-objects-and-routes-answered-404-405` | unknown_objects_on_every_endpoint_that_names_one (found: fixed) |
//! | `conflicts-name-the-related-resource` | refund_no_conflict_names_the_refund_of_its_number (found: fixed), order_no_conflict_only_with_a_payment_holding_the_number (found: fixed) |
//! | `cancel-202-keeps-the-status` | cancel_202_shown_or_stored_closed |
//! | `failure-names-the-latest-attempt` | failed_naming_an_earlier_attempt |
//! | `attempt-count-is-attempts-made` | attempt_count_in_lists_waiters_and_webhooks |
//! | `versions-rise-with-every-visible-change` | visible_changes_without_a_new_version_of_payments_and_refunds (found: fixed) |
//! | `operation-in-progress-only-while-in-flight` | in_progress_for_another_scope_or_after_the_answer (found: fixed) |
//! | `queries-answer-known-state` | queries_of_refunds_answer_known_state |
//! | `branches-answer-one-of-the-two` | branch_points_of_orders_confirms_and_refund_numbers (found: fixed), branches::a_checkout_session_for_an_expired_payment_gets_one_of_the_two |
//! | `payments-shown-as-the-status-table-lists` | status_table_rows_beyond_next_action |
//! | `client-backs-off-as-the-reference-code` | cadence_client::backoff_after_every_retried_answer_to_its_cap_and_jitter |
//! | `client-waits-the-contract-timeouts` | cadence_client::timeouts_of_confirms_and_of_every_query |
//! | `client-queries-until-24-hours` | cadence_client::schedule_ends_only_after_its_late_steps (found: fixed) |
//! | `client-stops-querying-at-a-final-status` | cadence_client::no_query_after_a_final_status_by_id_or_by_order_number (found: fixed) |
//! | `platform-answers-202-after-about-15-seconds` | sync_fee_pause::a_202_after_the_wait_at_once_late_or_about_15_seconds |
//! | `platform-verifies-unknown-results-within-its-window` | cadence_client::verification_late_after_the_charge_or_after_a_query |
//! | `platform-requeries-manual-review-every-24-hours` | cadence_client::manual_review_requeries_on_every_day |
//! | `platform-goes-to-manual-review-after-its-automatic-queries` | cadence_client::manual_review_after_the_latest_attempt_s_own_queries |
//! | `client-fulfils-an-order-once-when-succeeded` | fulfilled_twice_through_a_second_payment |
//! | `client-closes-an-order-once-on-a-closed-payment` | fulfilled_after_a_closing_the_database_undid (found: fixed) |
//! | `client-keeps-an-order-pending-until-its-payment-is-final` | shown_paid_or_failed_while_processing_or_requires_action |
//! | `client-shows-the-status-table-message` | cadence_client::payer_messages_of_every_row_and_server |
//! | `client-never-charges-an-order-twice` | cadence_client::one_business_order_captured_through_two_payments |
//! | `client-keeps-the-refund-number-while-unresolved` | cadence_client::refund_request_sent_again_under_another_number |
//! | `client-never-refunds-a-request-twice` | — (new, no narrower predicate found yet; the sandbox's money paths test it: src/serve/sandbox/tests/money_twice.rs) |
//! | `client-sends-one-key-per-submission` | cadence_client::one_submission_under_a_second_or_no_key (found: fixed) |
//! | `client-never-applies-an-older-version` | cadence_client::applied_version_goes_back_in_any_database |
//! | `client-spaces-queries` | cadence_client::queries_spaced_across_servers_and_objects, cadence_client::queries_of_one_object_by_id_and_by_number (found: fixed) |
//! | `client-honours-retry-after` | cadence_client::retry_after_on_every_keyed_endpoint |
//! | `client-traffic-within-the-schedules` | cadence_client::traffic_within_the_schedules_per_opening |
//! | `client-uses-a-key-on-one-endpoint` | cadence_client::key_on_any_two_of_the_keyed_endpoints |
//! | `client-never-changes-parameters-under-a-key` | cadence_client::parameters_changed_under_a_key_of_every_endpoint |
//! | `client-creates-an-order-under-one-key` | cadence_client::order_rekeyed_after_answers_that_free_no_key |
//! | `client-card-retry-only-after-failed` | cadence_client::payment_in_progress_to_any_waiting_server |
//! | `client-never-closes-a-captured-order` | expired_order_with_a_capture_behind_it (found: fixed) |
//! | `reach:replay-answered-200` | cadence_client::replay_reached_on_every_keyed_endpoint |
//! | `reach:409-idempotency-conflict` | cadence_client::conflicts_reached_on_every_endpoint |
//! | `reach:409-order-no-conflict` | cadence_client::conflicts_reached_on_every_endpoint |
//! | `reach:409-operation-in-progress` | cadence_client::conflicts_reached_on_every_endpoint |
//! | `reach:409-payment-in-progress` | cadence_client::conflicts_reached_on_every_endpoint |
//! | `reach:409-refund-no-conflict` | cadence_client::conflicts_reached_on_every_endpoint |
//! | `reach:202-result-unknown` | cadence_client::two_kinds_of_202_reached_apart (found: fixed) |
//! | `reach:needs-query` | cadence_client::needs_query_reached_from_the_store_or_a_rule (found: fixed) |
//! | `reach:manual-review` | cadence_client::manual_review_reached_though_resolved_since (found: fixed) |
//! | `reach:second-card-succeeded` | cadence_client::second_card_reached_by_a_second_attempt_only |
//! | `reach:replay-after-retention` | cadence_client::replay_after_retention_of_a_payment_or_a_refund_key |
//! | `reach:429-rate-limited` | cadence_client::rate_limit_and_pause_reached_on_every_endpoint |
//! | `reach:503-temporarily-unavailable` | cadence_client::rate_limit_and_pause_reached_on_every_endpoint |
//! | `reach:cancel-202` | cadence_client::two_kinds_of_202_reached_apart (found: fixed) |
//! | `reach:new-checkout-session-same-payment` | cadence_client::new_checkout_session_reached_by_its_rule |
//! | `reach:refund-succeeded` | cadence_client::refund_succeeded_reached_in_the_store |
//! | `reach:refund-rejected-in-review` | — (no narrowness test yet: the preset refund-review must reach it, or its check fails) |

use payhub_model::acquirer::ChargeState;
use payhub_model::api::req;
use payhub_model::client::{Decision, Subject};
use payhub_model::event::{
    Event, Handling, Route, ScopeKey, StoredAttempt, StoredOrder, StoredPayment, StoredRefund, What,
};
use payhub_model::platform::state::AttemptStatus;
use payhub_model::{
    ApiError, ApiRequest, ApiResponse, AttemptId, Card, Endpoint, Environment, ErrorCode, EventId,
    FailureCode, Field, LedgerEntry, MerchantId, Millis, PaymentId, PaymentStatus, PaymentView,
    RefundId, RefundStatus, RefundView, RequestId, ResolutionStatus, ResourceId, ResponseBody,
    Rule, UpstreamCall, WebhookEvent, WebhookObject,
};
use payhub_properties::Facts;
use payhub_properties::property;

mod cadence_client;
mod safety_responses;
mod sync_fee_pause;

const M: MerchantId = MerchantId(1);
const ENV: Environment = Environment::Test;
const PAY: PaymentId = PaymentId(1);

fn ev(what: What) -> Event {
    Event::new(Millis(0), what)
}

fn verdict(name: &str, events: &[Event]) -> Option<String> {
    let p = property(name).unwrap_or_else(|| panic!("{name} is registered"));
    p.judge(&Facts::from_events(events))
}

#[track_caller]
fn violated(name: &str, events: &[Event]) {
    assert!(verdict(name, events).is_some(), "{name} should be violated");
}

#[track_caller]
fn holds(name: &str, events: &[Event]) {
    assert_eq!(verdict(name, events), None, "{name} should hold");
}

fn capture(payment: PaymentId, attempt: u32, amount: u64) -> Event {
    ev(What::Ledger {
        entry: LedgerEntry::Capture {
            attempt: AttemptId(attempt),
            payment,
            merchant: M,
            environment: ENV,
            amount,
            card: Card('A'),
            at: Millis(0),
        },
    })
}

fn refund(refund: u32, attempt: u32, amount: u64) -> Event {
    ev(What::Ledger {
        entry: LedgerEntry::Refund {
            refund: RefundId(refund),
            attempt: AttemptId(attempt),
            amount,
            at: Millis(0),
        },
    })
}

fn payment(status: PaymentStatus, attempts: &[u32], failure: Option<u32>) -> Event {
    ev(What::PaymentStored {
        payment: PAY,
        stored: StoredPayment {
            merchant: M,
            environment: ENV,
            merchant_order_no: "ORDER-1".into(),
            status,
            resolution: ResolutionStatus::Known,
            expires_at: Millis::hours(2),
            attempts: attempts.iter().map(|a| AttemptId(*a)).collect(),
            failure_attempt: failure.map(AttemptId),
            version: 1 + attempts.len() as u32,
            fee_rate_bps: 290,
        },
    })
}

fn attempt(attempt: u32, status: AttemptStatus) -> Event {
    ev(What::AttemptStored {
        attempt: AttemptId(attempt),
        payment: PAY,
        stored: StoredAttempt {
            status,
            sent_at: Millis(0),
        },
    })
}

fn charge(attempt: u32, state: ChargeState) -> Event {
    ev(What::Charge {
        attempt: AttemptId(attempt),
        state,
    })
}

/// REFUND-02 (and the property's name): a refund is within what was captured, also when
/// nothing was captured: money paid back against an attempt the ledger never captured.
#[test]
fn refund_with_no_capture_behind_it() {
    let name = "refunds-once-and-within-captured";
    holds(name, &[capture(PAY, 1, 10000), refund(1, 1, 10000)]);
    violated(name, &[capture(PAY, 1, 10000), refund(1, 1, 10001)]);
    // The case the predicate missed: no capture at all behind the refund, with or
    // without a capture of another attempt in the ledger.
    violated(name, &[refund(1, 1, 5000)]);
    violated(name, &[capture(PAY, 2, 10000), refund(1, 1, 5000)]);
}

/// RES-06 and the property's name: failed only if the acquirer declined the *latest*
/// attempt (or never received it), not any earlier one.
#[test]
fn failed_judged_on_the_latest_attempt() {
    let name = "failed-only-on-upstream-evidence";
    let declined = ChargeState::Declined(FailureCode::CardDeclined);
    // The contract's case: one attempt, declined.
    holds(
        name,
        &[
            attempt(1, AttemptStatus::Failed),
            charge(1, declined),
            payment(PaymentStatus::Failed, &[1], Some(1)),
        ],
    );
    // A card retry declined: the latest attempt is the one declined.
    holds(
        name,
        &[
            charge(1, declined),
            charge(2, declined),
            payment(PaymentStatus::Failed, &[1, 2], Some(2)),
        ],
    );
    // The case the predicate missed: the first attempt declined, the second still at the
    // acquirer (or approved), and the Payment failed naming the first attempt.
    for second in [ChargeState::ActionRequired, ChargeState::Approved] {
        violated(
            name,
            &[
                charge(1, declined),
                charge(2, second),
                payment(PaymentStatus::Failed, &[1, 2], Some(1)),
            ],
        );
    }
    // Second attempt never sent a reply yet (no charge known): not evidence either.
    violated(
        name,
        &[
            charge(1, declined),
            payment(PaymentStatus::Failed, &[1, 2], Some(1)),
        ],
    );
}

/// CANCEL-01, RES-06: a closed Payment has no capture of *any* of its attempts.
#[test]
fn closed_payment_with_a_capture_of_an_earlier_attempt() {
    let name = "no-capture-behind-a-closed-payment";
    holds(
        name,
        &[
            charge(1, ChargeState::Declined(FailureCode::CardDeclined)),
            payment(PaymentStatus::Failed, &[1], Some(1)),
        ],
    );
    for status in [
        PaymentStatus::Failed,
        PaymentStatus::Canceled,
        PaymentStatus::Expired,
    ] {
        violated(
            name,
            &[capture(PAY, 1, 10000), payment(status, &[1, 2], Some(2))],
        );
    }
}

/// RES-06: succeeded means captured, and by a capture of *this* Payment.
#[test]
fn succeeded_with_a_capture_of_another_payment() {
    let name = "succeeded-only-when-captured";
    holds(
        name,
        &[
            capture(PAY, 1, 10000),
            payment(PaymentStatus::Succeeded, &[1], None),
        ],
    );
    violated(name, &[payment(PaymentStatus::Succeeded, &[1], None)]);
    violated(
        name,
        &[
            capture(PaymentId(2), 9, 10000),
            payment(PaymentStatus::Succeeded, &[1], None),
        ],
    );
}

fn shown(status: PaymentStatus, resolution: ResolutionStatus, next_action: bool) -> Event {
    ev(What::WebhookEmitted {
        event: WebhookEvent {
            id: EventId(1),
            merchant: M,
            environment: ENV,
            kind: "payment.updated".into(),
            object: WebhookObject::Payment(PaymentView {
                id: PAY,
                merchant_order_no: "ORDER-1".into(),
                amount: 10000,
                currency: "USD".into(),
                status,
                resolution_status: resolution,
                attempt_count: 1,
                failure: None,
                next_action,
                expires_at: Millis::hours(2),
                fee_rate_bps: 0,
                amount_refunded: 0,
                version: 2,
            }),
            delivery: 0,
        },
        rule: Rule::WebhookPrimary,
        to: Some(0),
    })
}

/// RES-02..RES-06: every row of the status table holds; every pair it does not list, and
/// next_action other than exactly with requires_action, is violated.
#[test]
fn status_table_rows_beyond_next_action() {
    use PaymentStatus::*;
    use ResolutionStatus::*;
    let name = "payments-shown-as-the-status-table-lists";
    for (status, resolution) in [
        (Processing, NeedsQuery),
        (Processing, Known),
        (Processing, ManualReview),
        (RequiresAction, Known),
        (RequiresAction, ManualReview),
        (Succeeded, Known),
        (Failed, Known),
        (Canceled, Known),
        (Expired, Known),
        (RequiresPaymentMethod, Known),
    ] {
        holds(name, &[shown(status, resolution, status == RequiresAction)]);
    }
    // The planted bug's case, and its mirror.
    violated(name, &[shown(RequiresAction, Known, false)]);
    violated(name, &[shown(Processing, Known, true)]);
    // Pairs no row lists.
    for (status, resolution) in [
        (RequiresAction, NeedsQuery),
        (Succeeded, NeedsQuery),
        (Succeeded, ManualReview),
        (Failed, ManualReview),
        (Canceled, NeedsQuery),
        (Expired, ManualReview),
    ] {
        violated(name, &[shown(status, resolution, status == RequiresAction)]);
    }
}

fn refund_stored(status: RefundStatus, version: u32) -> Event {
    ev(What::RefundStored {
        refund: RefundId(1),
        stored: StoredRefund {
            merchant: M,
            environment: ENV,
            merchant_refund_no: "R-1".into(),
            status,
            version,
        },
    })
}

fn refund_view(status: RefundStatus, version: u32) -> RefundView {
    RefundView {
        id: RefundId(1),
        payment_id: PAY,
        merchant_refund_no: "R-1".into(),
        amount: 5000,
        status,
        resolution_status: ResolutionStatus::Known,
        version,
    }
}

fn query(request: ApiRequest, body: ResponseBody) -> Event {
    ev(What::Handled {
        id: RequestId(1),
        request,
        owner: Some((M, ENV)),
        business: None,
        handling: Handling {
            answer: Some(ApiResponse::ok(200, body)),
            calls: Vec::new(),
            new_record: false,
            store_changed: false,
        },
    })
}

/// QUERY-03, QUERY-04: a refund query answers the refund as stored: by id, by
/// merchant_refund_no, and `?status=processing` (every processing refund, no other).
#[test]
fn queries_of_refunds_answer_known_state() {
    use RefundStatus::{PendingReview, Processing, Succeeded};
    let name = "queries-answer-known-state";
    let stored = refund_stored(Processing, 2);
    let by_id = req::get_refund(RefundId(1));
    let by_no = req::by_refund_no("R-1");
    let processing = req::query(Endpoint::ListRefundsProcessing);
    let one = |v: RefundView| ResponseBody::Refunds { data: vec![v] };
    let none = ResponseBody::Refunds { data: vec![] };
    for (request, body) in [
        (
            by_id.clone(),
            ResponseBody::Refund(refund_view(Processing, 2)),
        ),
        (by_no.clone(), one(refund_view(Processing, 2))),
        (processing.clone(), one(refund_view(Processing, 2))),
    ] {
        holds(name, &[stored.clone(), query(request, body)]);
    }
    // A version behind, a status never stored, a refund missing, one not processing.
    for (request, body) in [
        (
            by_id.clone(),
            ResponseBody::Refund(refund_view(Processing, 1)),
        ),
        (by_id, ResponseBody::Refund(refund_view(Succeeded, 2))),
        (by_no.clone(), one(refund_view(Processing, 1))),
        (by_no.clone(), none.clone()),
        (processing.clone(), none.clone()),
    ] {
        violated(name, &[stored.clone(), query(request, body)]);
    }
    let reviewed = refund_stored(PendingReview, 2);
    holds(
        name,
        &[reviewed.clone(), query(processing.clone(), none.clone())],
    );
    violated(
        name,
        &[
            reviewed,
            query(processing, one(refund_view(PendingReview, 2))),
        ],
    );
    holds(name, &[query(by_no, none)]);
}

fn stored(id: PaymentId, merchant: MerchantId, env: Environment, order: &str) -> Event {
    stored_as(id, merchant, env, order, PaymentStatus::Processing)
}

fn stored_as(
    id: PaymentId,
    merchant: MerchantId,
    environment: Environment,
    order: &str,
    status: PaymentStatus,
) -> Event {
    ev(What::PaymentStored {
        payment: id,
        stored: StoredPayment {
            merchant,
            environment,
            merchant_order_no: order.into(),
            status,
            resolution: ResolutionStatus::Known,
            expires_at: Millis::hours(2),
            attempts: vec![AttemptId(id.0)],
            failure_attempt: None,
            version: 2,
            fee_rate_bps: 290,
        },
    })
}

/// UNIQ-01: one Payment per (merchant, environment, order number): two under one
/// order are violated, the same number under a second merchant or in live holds.
#[test]
fn one_payment_per_order_in_its_own_scope_only() {
    let name = "at-most-one-payment-per-order";
    let first = stored(PAY, M, ENV, "ORDER-1");
    violated(
        name,
        &[first.clone(), stored(PaymentId(2), M, ENV, "ORDER-1")],
    );
    for other in [
        stored(PaymentId(2), MerchantId(2), ENV, "ORDER-1"),
        stored(PaymentId(2), M, Environment::Live, "ORDER-1"),
        stored(PaymentId(2), M, ENV, "ORDER-2"),
    ] {
        holds(name, &[first.clone(), other]);
    }
}

/// UNIQ-02: a Payment is captured once, whichever attempts the captures are of (a card
/// retry's second capture is the double charge, not a new Payment's).
#[test]
fn second_capture_of_another_attempt_of_one_payment() {
    let name = "at-most-one-capture-per-payment";
    holds(
        name,
        &[capture(PAY, 1, 10000), capture(PaymentId(2), 2, 10000)],
    );
    violated(name, &[capture(PAY, 1, 10000), capture(PAY, 2, 10000)]);
    violated(name, &[capture(PAY, 1, 10000), capture(PAY, 1, 10000)]);
}

fn handled_with_charge(request: ApiRequest) -> Event {
    ev(What::Handled {
        id: RequestId(1),
        request,
        owner: Some((M, ENV)),
        business: None,
        handling: Handling {
            answer: Some(ApiResponse::ok(
                200,
                ResponseBody::Payments { data: vec![] },
            )),
            calls: vec![UpstreamCall::Charge {
                attempt: AttemptId(1),
                payment: PAY,
                merchant: M,
                environment: ENV,
                amount: 10000,
                currency: "USD".into(),
                card: Card('A'),
            }],
            new_record: true,
            store_changed: true,
        },
    })
}

/// QUERY-04 and the property's name: a charge only while executing a create or a
/// confirm. The predicate counted only charges of requests without an idempotency
/// scope (GETs) and of timers: a keyed cancel, refund or checkout session that charged
/// was counted under its scope, and passed.
#[test]
fn charges_of_keyed_requests_other_than_create_and_confirm() {
    let name = "queries-never-charge";
    for request in [
        req::create("k1", "ORDER-1", 10000, "USD", 'A'),
        req::confirm("k1", PAY, 'A'),
    ] {
        holds(name, &[handled_with_charge(request)]);
    }
    for request in [
        req::get(PAY),
        req::cancel("k1", PAY),
        req::refund("k1", PAY, "R-1", 5000),
        req::session("k1", "ORDER-1", 10000, "USD"),
    ] {
        violated(name, &[handled_with_charge(request)]);
    }
}

fn fulfil(order: &str, payment: PaymentId) -> Event {
    ev(What::ClientDecided {
        node: 0,
        subject: Subject::Order(order.into()),
        decision: Decision::Fulfil { payment },
        rule: Rule::FulfilByPaymentId,
    })
}

fn order_held(order: &str, payment: PaymentId, status: PaymentStatus) -> Event {
    ev(What::OrderStored {
        db: 0,
        order_no: order.into(),
        was: None,
        stored: StoredOrder {
            payment_id: Some(payment),
            version: 2,
            status: Some(status),
        },
    })
}

/// RES-07: an order is fulfilled once, whichever Payment the second fulfilment names
/// (a second Payment of the same order, seen through another merchant server), and only
/// a succeeded one; the same order number of a second merchant is another order.
#[test]
fn fulfilled_twice_through_a_second_payment() {
    use PaymentStatus::Succeeded;
    let name = "client-fulfils-an-order-once-when-succeeded";
    let one = stored_as(PAY, M, ENV, "ORDER-1", Succeeded);
    let two = stored_as(PaymentId(2), M, ENV, "ORDER-1", Succeeded);
    let other_merchant = stored_as(PaymentId(3), MerchantId(2), ENV, "ORDER-1", Succeeded);
    holds(name, &[one.clone(), fulfil("ORDER-1", PAY)]);
    holds(
        name,
        &[
            one.clone(),
            other_merchant,
            fulfil("ORDER-1", PAY),
            fulfil("ORDER-1", PaymentId(3)),
        ],
    );
    violated(
        name,
        &[one.clone(), fulfil("ORDER-1", PAY), fulfil("ORDER-1", PAY)],
    );
    violated(
        name,
        &[
            one.clone(),
            two,
            fulfil("ORDER-1", PAY),
            fulfil("ORDER-1", PaymentId(2)),
        ],
    );
    for status in [
        PaymentStatus::Processing,
        PaymentStatus::RequiresAction,
        PaymentStatus::Failed,
    ] {
        violated(
            name,
            &[
                stored_as(PAY, M, ENV, "ORDER-1", status),
                fulfil("ORDER-1", PAY),
            ],
        );
    }
}

/// CANCEL-02, RES-07: an order is never both fulfilled and closed, in either order, also
/// when the database reopened the order between the two; closed only on a canceled or
/// expired Payment.
#[test]
fn fulfilled_after_a_closing_the_database_undid() {
    use PaymentStatus::{Canceled, Processing, Succeeded};
    let name = "client-closes-an-order-once-on-a-closed-payment";
    let canceled = stored_as(PAY, M, ENV, "ORDER-1", Canceled);
    holds(
        name,
        &[canceled.clone(), order_held("ORDER-1", PAY, Canceled)],
    );
    violated(
        name,
        &[
            stored_as(PAY, M, ENV, "ORDER-1", Processing),
            order_held("ORDER-1", PAY, Canceled),
        ],
    );
    // Fulfilled, then closed.
    violated(
        name,
        &[
            stored_as(PAY, M, ENV, "ORDER-1", Succeeded),
            fulfil("ORDER-1", PAY),
            canceled.clone(),
            order_held("ORDER-1", PAY, Canceled),
        ],
    );
    // Closed, then fulfilled while still closed.
    violated(
        name,
        &[
            canceled.clone(),
            order_held("ORDER-1", PAY, Canceled),
            fulfil("ORDER-1", PAY),
        ],
    );
    // Closed, reopened by the database, then fulfilled: closed and fulfilled all the same.
    violated(
        name,
        &[
            canceled.clone(),
            order_held("ORDER-1", PAY, Canceled),
            order_held("ORDER-1", PAY, Succeeded),
            fulfil("ORDER-1", PAY),
        ],
    );
    // Closed twice (closed, reopened, closed).
    violated(
        name,
        &[
            canceled.clone(),
            order_held("ORDER-1", PAY, Canceled),
            order_held("ORDER-1", PAY, Processing),
            order_held("ORDER-1", PAY, Canceled),
        ],
    );
}

/// RES-04, RES-06: an order is held paid or failed only on a Payment that is; one still
/// processing (manual_review among them) or requires_action keeps it pending, whichever
/// final status it is shown as.
#[test]
fn shown_paid_or_failed_while_processing_or_requires_action() {
    use PaymentStatus::{Failed, Processing, RequiresAction, Succeeded};
    let name = "client-keeps-an-order-pending-until-its-payment-is-final";
    for status in [Succeeded, Failed] {
        let held = [
            stored_as(PAY, M, ENV, "ORDER-1", status),
            order_held("ORDER-1", PAY, status),
        ];
        holds(name, &held);
    }
    let pending = [
        stored_as(PAY, M, ENV, "ORDER-1", Processing),
        order_held("ORDER-1", PAY, Processing),
    ];
    holds(name, &pending);
    for shown in [Succeeded, Failed] {
        for platform in [Processing, RequiresAction] {
            let events = [
                stored_as(PAY, M, ENV, "ORDER-1", platform),
                order_held("ORDER-1", PAY, shown),
            ];
            violated(name, &events);
        }
    }
}

/// CANCEL-02 and the property's name: an order a client closed, canceled or expired, has
/// no capture behind it; the predicate once read canceled orders only.
#[test]
fn expired_order_with_a_capture_behind_it() {
    use PaymentStatus::{Canceled, Expired, Succeeded};
    let name = "client-never-closes-a-captured-order";
    holds(name, &[order_held("ORDER-1", PAY, Expired)]);
    holds(
        name,
        &[
            capture(PAY, 1, 10000),
            order_held("ORDER-1", PAY, Succeeded),
        ],
    );
    for status in [Canceled, Expired] {
        violated(
            name,
            &[capture(PAY, 1, 10000), order_held("ORDER-1", PAY, status)],
        );
    }
    // Another Payment's capture is no capture of this order's.
    holds(
        name,
        &[
            capture(PaymentId(2), 2, 10000),
            order_held("ORDER-1", PAY, Canceled),
        ],
    );
}

fn answered(request: ApiRequest, answer: ApiResponse) -> Event {
    ev(What::Handled {
        id: RequestId(1),
        request,
        owner: Some((M, ENV)),
        business: None,
        handling: Handling {
            answer: Some(answer),
            calls: Vec::new(),
            new_record: false,
            store_changed: false,
        },
    })
}

fn keyed_requests(key: &str) -> Vec<ApiRequest> {
    vec![
        req::create(key, "ORDER-1", 10000, "USD", 'A'),
        req::confirm(key, PAY, 'A'),
        req::cancel(key, PAY),
        req::session(key, "ORDER-1", 10000, "USD"),
        req::refund(key, PAY, "R-1", 5000),
    ]
}

fn leaves(request: &ApiRequest, response: ApiResponse, routed: bool) -> Event {
    let owner = Some((M, ENV));
    ev(What::Answered {
        id: RequestId(1),
        response,
        rule: Rule::RateLimited,
        route: routed.then(|| Route {
            merchant: 0,
            owner,
            scope: ScopeKey::of(owner, request),
            awaited: true,
            edge_500: false,
            object_owner: None,
        }),
    })
}

/// KEY-01..KEY-07 and the property's name: on every endpoint that needs a key (create,
/// confirm, cancel, checkout session, refund), a missing, empty or 256-character key is
/// 400 with error.field = Idempotency-Key; 1 and 255 characters (multi-byte counted as
/// characters) never are; a query needs none.
#[test]
fn invalid_key_on_every_keyed_endpoint() {
    let name = "invalid-key-answered-400-idempotency-key";
    let with_field = ApiResponse::error(ApiError {
        field: Some(Field::IdempotencyKey),
        ..ApiError::new(ErrorCode::InvalidRequest)
    });
    let without_field = ApiResponse::error(ApiError::new(ErrorCode::InvalidRequest));
    let ok = ApiResponse::ok(200, ResponseBody::Payments { data: vec![] });
    let long = "k".repeat(256);
    let longest = "é".repeat(255);
    for valid in [false, true] {
        let keys: Vec<Option<&str>> = if valid {
            vec![Some("k"), Some(&longest)]
        } else {
            vec![None, Some(""), Some(&long)]
        };
        for key in keys {
            for mut request in keyed_requests("x") {
                request.idempotency_key = key.map(Into::into);
                let (right, wrong) = if valid {
                    (&ok, &with_field)
                } else {
                    (&with_field, &ok)
                };
                holds(name, &[answered(request.clone(), right.clone())]);
                violated(name, &[answered(request.clone(), wrong.clone())]);
                if !valid {
                    violated(name, &[answered(request, without_field.clone())]);
                }
            }
        }
    }
    holds(name, &[answered(req::get(PAY), ok.clone())]);
    violated(name, &[answered(req::get(PAY), with_field)]);
}

/// The table at the top of this file lists every property of the registry; each row
/// names tests that exist in this directory (`fn NAME(`), or says "— (reason)" where no
/// test can be written from events; a bare "—" fails.
#[test]
fn the_table_names_every_property() {
    let table = include_str!("main.rs");
    // Every file of this directory (add a file here when it is added to the directory).
    let sources = [
        table,
        include_str!("safety_responses/mod.rs"),
        include_str!("safety_responses/responses.rs"),
        include_str!("safety_responses/branches.rs"),
        include_str!("cadence_client.rs"),
        include_str!("sync_fee_pause.rs"),
    ]
    .concat();
    let rows: Vec<(&str, &str)> = table
        .lines()
        .filter_map(|l| l.strip_prefix("//! | `"))
        .filter_map(|l| l.split_once("` | "))
        .map(|(name, rest)| (name, rest.trim_end_matches(" |").trim()))
        .collect();
    for p in payhub_properties::PROPERTIES
        .iter()
        .filter(|p| p.over_facts())
    {
        assert!(
            rows.iter().any(|(name, _)| *name == p.name),
            "{} has no row in the table",
            p.name
        );
    }
    let mut untested = 0;
    for (name, tests) in &rows {
        assert!(
            payhub_properties::PROPERTIES
                .iter()
                .any(|p| p.over_facts() && p.name == *name),
            "the table's row {name} is no property of the registry over a run's facts"
        );
        if *tests == "—" {
            untested += 1;
            continue;
        }
        if let Some(reason) = tests.strip_prefix("— ") {
            assert!(
                reason.starts_with('(') && reason.ends_with(')') && reason.len() > 2,
                "{name}: \"—\" takes a reason in parentheses, not {reason:?}"
            );
            continue;
        }
        for test in tests.split(", ") {
            let test = test.split(" (").next().unwrap_or(test);
            // `module::name` for a test in a file of its own.
            let test = test.rsplit("::").next().unwrap_or(test);
            assert!(
                sources.contains(&format!("fn {test}(")),
                "{name}: its test {test} is no fn of the narrowness directory"
            );
        }
    }
    assert_eq!(
        untested, 0,
        "{untested} rows say \"—\" without a test or a reason"
    );
}

/// UNIQ-04 and the property's name: 409 refund_no_conflict names *the* refund holding the
/// refund number (as order_no_conflict names the order's Payment), not any refund.
#[test]
fn refund_no_conflict_names_the_refund_of_its_number() {
    let name = "conflicts-name-the-related-resource";
    let conflict = |related| {
        ApiResponse::error(ApiError {
            related_resource_id: related,
            ..ApiError::new(ErrorCode::RefundNoConflict)
        })
    };
    let held = refund_stored(RefundStatus::Succeeded, 2);
    let again = req::refund("k2", PAY, "R-1", 5000);
    holds(
        name,
        &[
            held.clone(),
            answered(
                again.clone(),
                conflict(Some(ResourceId::Refund(RefundId(1)))),
            ),
        ],
    );
    for related in [
        None,
        Some(ResourceId::Refund(RefundId(7))),
        Some(ResourceId::Payment(PAY)),
    ] {
        violated(
            name,
            &[held.clone(), answered(again.clone(), conflict(related))],
        );
    }
}

/// EFFECT-01 and the property's name: one charge per scope on every charging endpoint
/// (create and confirm alike); the same key under a second merchant, in live, or on the
/// other endpoint is another scope.
#[test]
fn two_charges_under_one_scope_of_either_endpoint() {
    let name = "at-most-one-charge-per-scope";
    let under = |owner: (MerchantId, Environment), request: ApiRequest| {
        let Event { at, what } = handled_with_charge(request);
        let what = match what {
            What::Handled {
                id,
                request,
                business,
                handling,
                ..
            } => What::Handled {
                id,
                request,
                owner: Some(owner),
                business,
                handling,
            },
            other => other,
        };
        Event { at, what }
    };
    let create = req::create("k1", "ORDER-1", 10000, "USD", 'A');
    let confirm = req::confirm("k1", PAY, 'A');
    for request in [create.clone(), confirm.clone()] {
        violated(
            name,
            &[under((M, ENV), request.clone()), under((M, ENV), request)],
        );
    }
    for (a, b) in [
        (
            under((M, ENV), create.clone()),
            under((MerchantId(2), ENV), create.clone()),
        ),
        (
            under((M, ENV), create.clone()),
            under((M, Environment::Live), create.clone()),
        ),
        (under((M, ENV), create), under((M, ENV), confirm)),
    ] {
        holds(name, &[a, b]);
    }
}
