//! The registry: every property, in report order, and its lookups.
//!
//! Apart from the [`Property`] type ([`crate::property`]) that the family files
//! (`safety`, `responses`, `client`, `cadence`, `traffic`, `effects`, `reach`, `wire`)
//! use to declare theirs: the families depend on the type, the registry on the
//! families, and nothing runs back.

use crate::property::{Kind, Property};
use crate::{Facts, World};
use payhub_model::Rule;
use payhub_sim::WorldConfig;
use payhub_sim::driver::{Check, Violation};

/// Every property, in report order: safety first, then reachability, then the
/// property over the wire alone.
pub static PROPERTIES: &[Property] = &[
    crate::safety::ONE_CHARGE_PER_SCOPE,
    crate::safety::ONE_PAYMENT_PER_ORDER,
    crate::safety::ONE_CAPTURE_PER_PAYMENT,
    crate::safety::ONE_UNFINISHED_ATTEMPT,
    crate::safety::ATTEMPTS_WITHIN_LIMITS,
    crate::safety::REFUNDS_ONCE_AND_WITHIN_CAPTURED,
    crate::safety::REJECTIONS_EXECUTE_NOTHING,
    crate::safety::QUERIES_NEVER_CHARGE,
    crate::safety::REPLAY_RETURNS_SAME_OBJECT,
    crate::safety::SCOPES_NEVER_INTERFERE,
    crate::safety::REPLAYED_CARD_NEVER_CHARGED,
    crate::safety::PAST_RETENTION_ONE_READING,
    crate::safety::REJECTED_REFUND_NEVER_SENT,
    crate::safety::FAILED_ONLY_ON_UPSTREAM_EVIDENCE,
    crate::safety::NO_CAPTURE_BEHIND_A_CLOSED_PAYMENT,
    crate::safety::SUCCEEDED_IS_CAPTURED,
    crate::safety::CONFLICT_IFF_PARAMETERS_DIFFER,
    crate::safety::SAME_KEY_NEVER_NEW_BUSINESS,
    crate::safety::ANSWERS_NAME_THE_REQUESTED_PAYMENT,
    crate::safety::PAYMENTS_KEEP_THEIR_FEE_SNAPSHOT,
    crate::responses::ANSWERS_SHOW_CURRENT_STATE,
    crate::responses::FIRST_EXECUTION_201_REPLAY_200,
    crate::responses::ONLY_5XX_IS_503,
    crate::responses::PAUSE_STATES_NO_REASON,
    crate::responses::INVALID_KEY_400_FIELD,
    crate::responses::NOT_FOUND_404_405,
    crate::responses::CONFLICTS_NAME_RELATED_RESOURCE,
    crate::responses::CANCEL_202_KEEPS_STATUS,
    crate::responses::FAILURE_NAMES_LATEST_ATTEMPT,
    crate::responses::ATTEMPT_COUNT_IS_ATTEMPTS_MADE,
    crate::responses::VERSIONS_RISE,
    crate::responses::IN_PROGRESS_ONLY_WHILE_IN_FLIGHT,
    crate::responses::QUERIES_ANSWER_KNOWN_STATE,
    crate::responses::BRANCHES_ANSWER_ONE_OF_TWO,
    crate::responses::SHOWN_AS_THE_STATUS_TABLE_LISTS,
    crate::client::ORDER_CHARGED_ONCE,
    crate::client::REFUND_NUMBER_KEPT,
    crate::client::REFUND_REQUEST_REFUNDED_ONCE,
    crate::client::ONE_KEY_PER_SUBMISSION,
    crate::client::VERSIONS_NEVER_GO_BACK,
    crate::client::QUERIES_SPACED,
    crate::client::RETRY_AFTER_HONOURED,
    crate::client::KEY_ON_ONE_ENDPOINT,
    crate::client::PARAMETERS_BOUND_TO_KEY,
    crate::client::ORDER_CREATED_UNDER_ONE_KEY,
    crate::client::CARD_RETRY_ONLY_AFTER_FAILED,
    crate::client::CLOSED_ORDER_NOT_CAPTURED,
    crate::cadence::CLIENT_BACKOFF,
    crate::cadence::CLIENT_TIMEOUTS,
    crate::cadence::CLIENT_QUERIES_24H,
    crate::cadence::CLIENT_STOPS_AT_FINAL,
    crate::cadence::PLATFORM_VERIFIES,
    crate::cadence::PLATFORM_202_AFTER_SYNC_WAIT,
    crate::cadence::PLATFORM_REQUERIES_MANUAL_REVIEW,
    crate::cadence::PLATFORM_MANUAL_REVIEW_AFTER_WINDOW,
    crate::traffic::CLIENT_TRAFFIC_BOUNDED,
    crate::effects::FULFILS_ONCE_WHEN_SUCCEEDED,
    crate::effects::CLOSES_ONCE_ON_A_CLOSED_PAYMENT,
    crate::effects::PENDING_UNTIL_FINAL,
    crate::effects::MESSAGE_MATCHES_STATUS,
    crate::reach::REPLAY_ANSWERED_200,
    crate::reach::IDEMPOTENCY_CONFLICT,
    crate::reach::ORDER_NO_CONFLICT,
    crate::reach::OPERATION_IN_PROGRESS,
    crate::reach::PAYMENT_IN_PROGRESS,
    crate::reach::REFUND_NO_CONFLICT,
    crate::reach::ACCEPTED_202,
    crate::reach::NEEDS_QUERY,
    crate::reach::MANUAL_REVIEW,
    crate::reach::SECOND_CARD_SUCCEEDED,
    crate::reach::REPLAY_AFTER_RETENTION,
    crate::reach::RATE_LIMITED,
    crate::reach::CHANNEL_PAUSED,
    crate::reach::CANCEL_202,
    crate::reach::NEW_CHECKOUT_SESSION,
    crate::reach::REFUND_SUCCEEDED,
    crate::reach::REFUND_REJECTED_IN_REVIEW,
    crate::client::CLIENT_RETRIES_A_CARD_UNDER_A_NEW_KEY,
];

/// The rule IDs of a property, or of the liveness verdict, by name.
pub fn rules_of(name: &str) -> Vec<&'static str> {
    let rules = match name == crate::liveness::NAME {
        true => crate::liveness::RULES,
        false => property(name).map_or(&[][..], |p| p.rules),
    };
    rules.iter().map(|r| r.id()).collect()
}

/// Looks a property up by name.
pub fn property(name: &str) -> Option<&'static Property> {
    PROPERTIES.iter().find(|p| p.name == name)
}

/// The properties that judge `rule`: the `always` ones, whose predicate can fail. A
/// reach check (`sometimes`) shows a rule was exercised, never that it held, so it is
/// counted apart ([`reaching`]).
pub fn judging(rule: Rule) -> impl Iterator<Item = &'static Property> {
    PROPERTIES
        .iter()
        .filter(move |p| p.kind() == Kind::Always && p.rules.contains(&rule))
}

/// The reach checks (`sometimes` properties) that list `rule`.
pub fn reaching(rule: Rule) -> impl Iterator<Item = &'static Property> {
    PROPERTIES
        .iter()
        .filter(move |p| p.kind() == Kind::Sometimes && p.rules.contains(&rule))
}

/// Every `always` property as one [`Check`] for the simulator: the first violated one.
#[derive(Clone, Copy, Debug)]
pub struct AlwaysCheck<'a> {
    pub config: &'a WorldConfig,
}

impl Check<Facts> for AlwaysCheck<'_> {
    fn check(&mut self, world: &World) -> Option<Violation> {
        let mut over_facts = PROPERTIES.iter().filter(|p| p.over_facts());
        over_facts.find_map(|p| p.violation(&world.facts))
    }
}
