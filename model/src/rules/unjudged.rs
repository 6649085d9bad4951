//! Which rules no property judges, and where each is checked instead; and which rules
//! are invariants of what the platform keeps rather than decisions.

use super::Rule;
use serde::Serialize;

/// Why no property judges a rule, and where it is checked instead: `rules --coverage`
/// prints it for each rule no property lists. `checked_by` names tests
/// (`path::function`) and scripts (`scenarios/NAME.pha`); `tests/rule_catalogue.rs`
/// checks that each exists and that a rule has a reason exactly when no property judges
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Unjudged {
    /// What the rule asks for (quoted) and why that is not a predicate over the facts.
    pub why: &'static str,
    /// The tests and scripts that check it.
    pub checked_by: &'static [&'static str],
}

impl Rule {
    /// Whether the rule is an invariant of what the platform keeps (its ledger, its
    /// idempotency records keyed by scope, its order and refund numbers) rather than a
    /// decision: no single answer, call or client step is decided by it, so no event
    /// cites it, and its properties judge it in every state. The coverage table counts
    /// it as exercised by the presets built to exercise it (each preset lists the rules
    /// it exercises); a test checks that no preset's events ever cite one of these.
    pub const fn invariant(self) -> bool {
        matches!(
            self,
            Rule::OneBusinessEffect
                | Rule::OneBilling
                | Rule::KeyNotRequiredQueries
                | Rule::ScopeComponents
                | Rule::ScopeEnvironments
                | Rule::ScopeApiKeyRotation
                | Rule::ReplayReusesObject
                | Rule::ConcurrentOneExecutes
                | Rule::CardNotCompared
                | Rule::CardReplayNotCharged
                | Rule::RetentionRefundNoOutlives
                | Rule::NotFoundMeansNeverCreated
                | Rule::RateLimitPerMerchant
                | Rule::Only503NotAccepted
        )
    }

    /// What of the rule its properties leave unjudged, for the rules judged in part: the
    /// coverage table counts these apart from the rules judged whole.
    pub const fn judged_in_part(self) -> Option<&'static str> {
        Some(match self {
            Rule::KeyRequiredCancel => {
                "\"no request body\" (无请求体): a cancel is typed without a body, so a cancel that carries one cannot be sent in the model; the key is judged"
            }
            Rule::OneBilling => {
                "\"one billing\" (一次计费): billing is not modelled apart from the charge: one capture, at the Payment's one fee-rate snapshot, is judged; a fee booked twice for it cannot happen in the model"
            }
            Rule::QuerySpacing => {
                "\"do not poll concurrently in batches\" (不要并发批量轮询): the contract gives no size of a batch nor a window of concurrency, so only the 10-second spacing of one object's queries is judged"
            }
            Rule::WebhookPrimary => {
                "\"webhooks are the primary channel\" (Webhook 是主通道): judged as every event carrying a version that rises with each change; that a client learns by webhook rather than by query is a design, not an outcome"
            }
            _ => return None,
        })
    }

    /// Why no property judges this rule, for the rules none does (see [`Unjudged`]).
    pub const fn unjudged(self) -> Option<Unjudged> {
        let (why, checked_by): (&str, &[&str]) = match self {
            Rule::CardNotStored => (
                "it asks that card information \"is not stored either\" (也不会被保存): a claim about what the platform keeps, and no stored object in the event stream (a stored Payment, attempt or refund) has a card field, so no predicate over the facts could see one; the types are the check, and the tests look at the whole platform state",
                &[
                    "model/tests/card_data.rs::card_02_platform_state_never_holds_card_data",
                    "model/tests/card_data.rs::card_02_responses_and_webhooks_carry_no_card_data_either",
                    "scenarios/F15-card-not-stored.pha",
                ],
            ),
            Rule::DeterministicKeys => (
                "it recommends (推荐, \"recommended\") keys derived from the business (payment.create:ORDER-DEMO-001:1); the contract equally allows random keys persisted first (GEN-04, the reference-random policy), so a key's form is no violation; what derivation buys, one key per submission across servers and restarts, is judged by client-sends-one-key-per-submission and client-creates-an-order-under-one-key",
                &[
                    "model/src/client/keys.rs::gen_01_derived_keys_follow_the_contract_examples",
                    "model/tests/client_reference.rs::gen_01_deterministic_keys_for_create_card_retry_and_refund_with_platform",
                    "model/tests/client_reference.rs::gen_01_two_servers_compute_the_same_key_and_one_payment_results_with_platform",
                ],
            ),
            Rule::NoSensitiveDataInKeys => (
                "it asks that keys \"must not contain sensitive information such as email, name or card number\": the simulated world has no e-mail or name, and a card is a one-letter label that any key may contain by chance, so a predicate over the keys sent cannot tell sensitive data from text",
                &[
                    "model/tests/client_reference.rs::gen_03_keys_carry_no_card_or_personal_data_and_the_db_only_the_card_label",
                ],
            ),
            Rule::NotFoundRetryOriginalKey => (
                "it asks, on \"no record found\" by order number, to \"retry the creation with the original idempotency key\": the key of every create of an order is judged by client-creates-an-order-under-one-key and the order being known after healing by liveness, but no planted bug makes a new key after a not-found specifically, so the rule is not claimed by either",
                &[
                    "model/tests/client_reference.rs::query_06_not_found_by_order_number_creates_with_the_original_key_with_platform",
                    "model/tests/client_reference.rs::retry_04_a_lookup_with_no_answer_resends_the_create_with_the_original_key",
                ],
            ),
            Rule::OrderConflictQueryExisting => (
                "it asks, on 409 order_no_conflict, to \"query the existing object\" and never change the order number: a changed order number is a second business order, judged by client-never-charges-an-order-twice (anti-pattern new_order_no_after_timeout); that the next request is a GET of related_resource_id is a step of the client's procedure, not an outcome of the run",
                &[
                    "model/tests/client_reference.rs::unknown_05_order_no_conflict_queries_the_existing_payment_with_platform",
                ],
            ),
            Rule::RefundNoPolling => (
                "it says refund polling is \"not recommended\" (不建议): rely on refund.* events and a daily GET /v1/refunds?status=processing; a recommendation, not a prohibition, and the cadence facts follow Payment queries only",
                &[
                    "model/tests/client_reference.rs::sched_03_refunds_are_not_polled_and_reconciled_daily_with_platform",
                    "model/tests/client_reference.rs::sched_03_reconciliation_learns_how_a_refund_ended_with_platform",
                    "scenarios/F10-refund-pending-review.pha",
                ],
            ),
            Rule::RateLimitPerMerchant => (
                "it says \"switching Key cannot get around the merchant's overall limit\" without saying which key (A-RATE-SCOPE) or how large the limit is: the limit is the platform's configuration, which no event carries, so the facts cannot tell a 429 that was due from one that was missing",
                &[
                    "model/tests/rules_rate.rs::rate_02_switching_key_does_not_get_around_the_merchants_limit",
                ],
            ),
            Rule::ManualReviewSupport => (
                "it says the merchant \"may contact technical support\" (可以联系技术支持) after more than 24 hours of manual_review: a permission with no stated start of the 24 hours, and nothing in the simulated world is technical support; the reference client notes the decision",
                &[
                    "model/tests/client_reference.rs::res_04_manual_review_stays_pending_and_is_never_charged_again_with_platform",
                ],
            ),
            Rule::QueryByOrderNoAfterCrash => (
                "it asks, when no Payment ID was saved before a crash, to \"query by merchant_order_no (exact match, case-sensitive)\": a step of the recovery procedure; its outcomes are judged (the lookup's answer by queries-answer-known-state, the create that follows by client-creates-an-order-under-one-key, the order known after healing by liveness), which request a restart sends first is not",
                &[
                    "model/tests/client_reference.rs::retry_04_no_payment_id_after_a_crash_queries_by_order_number_with_platform",
                    "model/tests/client_reference.rs::retry_04_a_lookup_with_no_answer_resends_the_create_with_the_original_key",
                ],
            ),
            Rule::RotationKeepsKey => (
                "it asks the merchant, \"during key rotation, keep retrying with the original key as usual\" (密钥轮换期间照常用原键重试): the reference client holds one API key and never rotates it, so no run shows a client rotating; the platform's half, a rotated API key keeping the scope, is SCOPE-03's (scopes-never-interfere), and a retry under the original idempotency key and a new API key is shown to replay",
                &[
                    "model/tests/rules_scope.rs::scope_04_a_retry_with_the_original_key_after_rotation_replays_the_same_payment",
                ],
            ),
            Rule::SettlementEvents => (
                "it asks the merchant to \"rely on settlement.* events\" (依赖 settlement.* 事件) for settlements and payouts: the page defines neither settlements, payouts nor their events, and the model has none (its webhooks carry Payments and refunds only), so nothing in a run is a settlement",
                &["model/tests/rules_scope.rs::settle_01_webhooks_carry_payments_and_refunds_only"],
            ),
            Rule::ProcessingKnown => (
                "it says what processing + known means, \"submitted, being processed\": a meaning, not an obligation of its own; that the pair is a row of the table is judged by payments-shown-as-the-status-table-lists (listed under RES-05, whose planted bug it kills), and the obligation next to it, a result the platform does not know shown as needs_query rather than known, is RES-01's (queries-answer-known-state, answers-show-the-current-state; mutant query_hides_needs_query)",
                &[
                    "model/tests/rules_queries.rs::res_02_processing_known_while_the_platform_waits_for_the_upstream",
                ],
            ),
            _ => return None,
        };
        Some(Unjudged { why, checked_by })
    }
}
