//! Properties: named predicates over the facts, each tied to the contract rules it checks.
//!
//! A predicate reads only facts folded from the event stream: a run's [`Facts`] (the
//! compact history of the platform, the ledger, the clients and the merchants' databases)
//! or the [`WireFacts`] of its requests and answers. It never looks at the world, the
//! platform or the acquirer, so the same properties judge a simulated run, a recorded
//! event stream (`payhub-verify judge`), a recorded log (`check-log`) and the sandbox's
//! session. Every verdict and its explanation is decided here, not in `sim`.
//!
//! One registry ([`PROPERTIES`]) serves every driver. `judge`, `check-log` and the
//! sandbox hold both kinds of facts and judge every property
//! ([`crate::verdict::judge_all`]); the stateright checker, the seeded simulator (after
//! every step, through [`AlwaysCheck`]), the proptest suites and the zoo hold a world's
//! [`Facts`] alone and judge the properties whose needs name no evidence of the wire
//! ([`Property::over_facts`]).

use crate::evidence::{Evidence, EvidenceSet};
use crate::facts::wire::{WireFacts, Witness};
use crate::wire::Patterns;
use crate::witnessed::Witnessed;
use crate::{Facts, World};
use payhub_model::Rule;
use payhub_sim::WorldConfig;
use payhub_sim::driver::{Check, Violation};
use serde::Serialize;
use std::borrow::Cow;

/// What kind of claim a property makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Safety: holds in every reachable state.
    Always,
    /// Reachability: holds in some reachable state of the presets meant to reach it;
    /// proves the model is not vacuous.
    Sometimes,
}

/// The predicate of a property, over the facts it reads.
#[derive(Clone, Copy)]
pub enum Predicate {
    /// Over a run's [`Facts`]: what it found when violated (its words and witness).
    Always(fn(&Facts) -> Option<Witnessed>),
    /// Over a run's [`Facts`]: `true` when reached.
    Sometimes(fn(&Facts) -> bool),
    /// Over the requests and answers on the wire ([`WireFacts`]): violated by the first
    /// witness of its patterns ([`Patterns::witness`]). Its needs name
    /// [`Evidence::Wire`].
    Wire(Patterns),
}

/// A named property.
#[derive(Clone, Copy)]
pub struct Property {
    pub name: &'static str,
    pub rules: &'static [Rule],
    /// One sentence: what it claims.
    pub about: &'static str,
    /// The evidence its facts are folded from: a source that lacks any of it leaves the
    /// property *cannot judge* ([`crate::evidence`]).
    pub needs: EvidenceSet,
    pub predicate: Predicate,
}

impl Property {
    pub fn kind(&self) -> Kind {
        match self.predicate {
            Predicate::Always(_) | Predicate::Wire(_) => Kind::Always,
            Predicate::Sometimes(_) => Kind::Sometimes,
        }
    }

    /// Whether a run's [`Facts`] alone judge it: its needs name no evidence of the wire.
    /// A driver that holds a world and no wire facts (the checker, the simulator, the
    /// proptest suites, the zoo) judges these and skips the others.
    pub fn over_facts(&self) -> bool {
        !self.needs.contains(Evidence::Wire)
    }

    /// For `always`: `None` if it holds, else what it found (its words and witness). For
    /// `sometimes`: never a violation. A property over the wire reads no [`Facts`]: never
    /// a violation here ([`Property::wire_witness`] judges it).
    pub fn witnessed(&self, facts: &Facts) -> Option<Witnessed> {
        match self.predicate {
            Predicate::Always(f) => f(facts),
            Predicate::Sometimes(_) | Predicate::Wire(_) => None,
        }
    }

    /// The words of [`Property::witnessed`]: `None` if it holds.
    pub fn judge(&self, facts: &Facts) -> Option<String> {
        self.witnessed(facts).map(|f| f.detail)
    }

    /// For `sometimes`: whether these facts reach it. For `always`: whether it holds
    /// (a property over the wire reads no [`Facts`]: it holds here).
    pub fn holds_in(&self, facts: &Facts) -> bool {
        match self.predicate {
            Predicate::Always(f) => f(facts).is_none(),
            Predicate::Sometimes(f) => f(facts),
            Predicate::Wire(_) => true,
        }
    }

    /// For a property over the wire: the first witness of its patterns in `wire`, if
    /// any. `None` for the others.
    pub fn wire_witness<'a>(&self, wire: &'a WireFacts) -> Option<Cow<'a, Witness>> {
        match &self.predicate {
            Predicate::Wire(patterns) => patterns.witness(wire),
            Predicate::Always(_) | Predicate::Sometimes(_) => None,
        }
    }

    /// For a property over the wire: what it looks for. `None` for the others.
    pub fn patterns(&self) -> Option<&Patterns> {
        match &self.predicate {
            Predicate::Wire(patterns) => Some(patterns),
            Predicate::Always(_) | Predicate::Sometimes(_) => None,
        }
    }

    /// [`Property::judge`] over a world's facts.
    pub fn violation(&self, _config: &WorldConfig, world: &World) -> Option<String> {
        self.judge(&world.facts)
    }

    /// [`Property::holds_in`] over a world's facts.
    pub fn holds(&self, _config: &WorldConfig, world: &World) -> bool {
        self.holds_in(&world.facts)
    }
}

impl std::fmt::Debug for Property {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Property")
            .field("name", &self.name)
            .field("kind", &self.kind())
            .finish()
    }
}

/// Every property, in report order: safety first, then reachability, then the
/// properties over the wire (platform side first).
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
    crate::wire::REPLAY_ANSWERS_200_WITH_THE_SAME_OBJECT,
    crate::wire::SAME_KEY_AT_ONCE_ANSWERS_ONE_OBJECT,
    crate::wire::CONFLICT_EXACTLY_WHEN_PARAMETERS_DIFFER,
    crate::wire::ONE_PAYMENT_PER_ORDER_NUMBER,
    crate::wire::CONFLICTS_CARRY_RELATED_RESOURCE_ID,
    crate::wire::VERSIONS_NEVER_GO_BACK,
    crate::wire::ONE_REFUND_PER_REFUND_NUMBER,
    crate::wire::CANCEL_202_KEEPS_THE_STATUS,
    crate::wire::LOOKUPS_MATCH_THE_NUMBER_EXACTLY,
    crate::wire::VERSIONS_RISE_WITH_EVERY_CHANGE,
    crate::wire::PAYMENTS_KEEP_THEIR_AMOUNT,
    crate::wire::ENVIRONMENTS_NEVER_SHARE_OBJECTS,
    crate::wire::REFUNDS_STAY_WITHIN_THE_PAYMENT_AMOUNT,
    crate::wire::ATTEMPTS_STAY_WITHIN_THE_MAXIMUM,
    crate::wire::A_NEW_ATTEMPT_ONLY_AFTER_A_FAILURE,
    crate::wire::VALID_KEYS_ARE_ACCEPTED,
    crate::wire::CLIENT_KEEPS_KEY_AND_ORDER_AFTER_UNKNOWN,
    crate::wire::CLIENT_KEEPS_THE_CONFIRM_KEY_WHILE_UNRESOLVED,
    crate::wire::CLIENT_KEEPS_THE_REFUND_NUMBER_WHILE_UNRESOLVED,
    crate::wire::CLIENT_RETRIES_A_CARD_UNDER_A_NEW_KEY,
    crate::wire::CLIENT_KEEPS_THE_KEY_AFTER_A_REFUSAL,
    crate::wire::CLIENT_USES_A_KEY_ON_ONE_ENDPOINT,
    crate::wire::CLIENT_NEVER_CHANGES_PARAMETERS_UNDER_A_KEY,
    crate::wire::CLIENT_SPACES_QUERIES,
    crate::wire::CLIENT_WAITS_THE_CONTRACT_TIMEOUTS,
    crate::wire::CLIENT_STOPS_QUERYING_AT_A_FINAL_STATUS,
    crate::wire::CLIENT_HONOURS_RETRY_AFTER,
    crate::wire::REFUSED_REQUESTS_EXECUTE_NOTHING,
    crate::wire::REJECTED_REQUESTS_BIND_NO_KEY,
    crate::wire::ATTEMPTS_START_ONLY_WITH_A_CONFIRM,
];

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

/// One `always` property as a [`Check`]: replaying and shrinking its counterexample (a
/// `sometimes` property never fails).
#[derive(Clone, Copy, Debug)]
pub struct OneCheck<'a> {
    pub property: &'static Property,
    pub config: &'a WorldConfig,
}

impl Check<Facts> for OneCheck<'_> {
    fn check(&mut self, world: &World) -> Option<Violation> {
        self.property.judge(&world.facts).map(|detail| Violation {
            property: self.property.name.to_owned(),
            detail,
        })
    }
}

/// Every `always` property as one [`Check`] for the simulator: the first violated one.
#[derive(Clone, Copy, Debug)]
pub struct AlwaysCheck<'a> {
    pub config: &'a WorldConfig,
}

impl Check<Facts> for AlwaysCheck<'_> {
    fn check(&mut self, world: &World) -> Option<Violation> {
        PROPERTIES.iter().filter(|p| p.over_facts()).find_map(|p| {
            p.judge(&world.facts).map(|detail| Violation {
                property: p.name.to_owned(),
                detail,
            })
        })
    }
}
