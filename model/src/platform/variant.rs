//! The platform's decision points, and the planted bugs that answer them otherwise.
//!
//! Admission and execution read as the contract. At each point where the bug zoo plants
//! a bug they ask their [`Variant`] instead of deciding alone: each method here is one
//! such decision point, named for what it decides, whose reference answer is the
//! contract's (cited by rule) and which one or a few [`Mutant`]s answer otherwise.
//! [`Variant::REFERENCE`] (the default) answers every point as the contract does.
//!
//! What only a mutant does (a charge sent again, a key bound by a rejection, a Payment
//! canceled without the upstream's word) is no decision of the reference: it lives in
//! `mutant_hooks.rs`, reached through one seam (`Platform::hook`).

use super::execute::Reading;
use super::state::{AttemptStatus, IdempotencyRecord, RecordState, Route, Scope};
use crate::acquirer::{ChargeState, UpstreamCall};
use crate::api::{
    ApiError, ApiResponse, ErrorCode, Failure, FailureCode, Field, PaymentStatus, ResolutionStatus,
    ResponseBody,
};
use crate::cow::CowMap;
use crate::ids::{AttemptId, Card, RefundId, ResourceId};
use crate::mutants::Mutant;
use crate::params::PlatformParams;
use crate::platform::Fingerprint;
use crate::platform::PlatformOutput;
use crate::rules::Rule;
use crate::text::Text;
use crate::time::Millis;
use serde::Serialize;

/// Which platform runs: the reference, or the reference with one planted bug
/// ([`Mutant`]). Handed to the platform apart from its parameters
/// ([`super::Platform::with_variant`]); fixed for its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Variant(Option<Mutant>);

/// What cancel of an unfinished Payment answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CancelAnswer {
    /// CANCEL-01: the upstream is asked; 200 on its evidence, 202 without it.
    AfterUpstream,
    /// 200 canceled at once, without the upstream's word (cancel_reports_canceled).
    CanceledAtOnce,
}

/// What the end of the automatic query window means for an unfinished attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WindowEnd {
    /// RES-03: manual_review, and a query every 24 hours; never failed automatically.
    ManualReview,
    /// A failure without the upstream's evidence (manual_review_fails_on_timer).
    Failure,
}

impl Variant {
    /// The reference platform: every decision as the contract says.
    pub const REFERENCE: Variant = Variant(None);

    /// The reference platform with `mutant` planted.
    pub const fn planted(mutant: Mutant) -> Variant {
        Variant(Some(mutant))
    }

    /// The planted bug, if any.
    pub const fn mutant(self) -> Option<Mutant> {
        self.0
    }

    /// Whether this is the reference platform.
    pub const fn is_reference(&self) -> bool {
        self.0.is_none()
    }

    fn is(self, mutant: Mutant) -> bool {
        self.0 == Some(mutant)
    }

    // ---- admission ----------------------------------------------------------------

    /// The fingerprint compared under a key: the safety-relevant parameters (SAFE-01,
    /// CONFLICT-01) and never the card (CARD-01). Reference: `contract`, as admission
    /// computed it. card_in_fingerprint adds the card (as a body hash would);
    /// amount_not_in_fingerprint and currency_not_in_fingerprint leave one out.
    pub(super) fn fingerprint(self, contract: Fingerprint, card: Option<Card>) -> Fingerprint {
        match self.0 {
            Some(m) => wrong_fingerprint(m, contract, card),
            None => contract,
        }
    }

    /// How a request's idempotency record is looked up: SCOPE-01, every component of the
    /// scope (merchant, environment, method and path, key). The scope mutants drop one.
    pub(super) fn find_record<'a>(
        self,
        records: &'a CowMap<Scope, IdempotencyRecord>,
        scope: &Scope,
    ) -> Option<&'a IdempotencyRecord> {
        match self.0 {
            Some(m) if scope_matches(m, scope, scope).is_some() => records
                .iter()
                .find(|(s, _)| scope_matches(m, s, scope) == Some(true))
                .map(|(_, r)| r),
            _ => records.get(scope),
        }
    }

    /// Whether an in-flight record still holds the right to execute: CONC-01, until its
    /// execution ends. lock_expires_before_upstream: only for the concurrent wait
    /// (10 s), which ends before the upstream answers (15 s).
    pub(super) fn lock_held(
        self,
        record: &IdempotencyRecord,
        now: Millis,
        params: &PlatformParams,
    ) -> bool {
        !(self.is(Mutant::LockExpiresBeforeUpstream)
            && now >= record.created_at.after(params.concurrent_wait_timeout))
    }

    /// Whether a request's fingerprint is compared with its record's before anything
    /// else: CONFLICT-01, always, also while the record's execution is in flight.
    /// in_flight_hides_conflict: an in-flight record is waited on (or answered
    /// operation_in_progress) whatever the parameters.
    pub(super) fn compares_first(self, state: &RecordState) -> bool {
        !(self.is(Mutant::InFlightHidesConflict) && matches!(state, RecordState::InFlight { .. }))
    }

    /// Whether a replay of an executed scope returns its object: REPLAY-01, always.
    /// session_replay_new_session: a checkout session's replay makes a new session.
    pub(super) fn replay_returns_object(self, resource: ResourceId) -> bool {
        !(self.is(Mutant::SessionReplayNewSession) && matches!(resource, ResourceId::Session(_)))
    }

    /// Whether a confirm is refused while an attempt is unfinished: UNIQ-02, ATTEMPT-01,
    /// always. second_unfinished_attempt: no.
    pub(super) fn one_unfinished_attempt(self) -> bool {
        !self.is(Mutant::SecondUnfinishedAttempt)
    }

    /// Whether card retries are held to `expires_at` (and the expired status):
    /// ATTEMPT-04, always. attempt_after_expiry: no.
    pub(super) fn retries_before_expiry(self) -> bool {
        !self.is(Mutant::AttemptAfterExpiry)
    }

    /// How many attempts a Payment may have: ATTEMPT-05, the platform's `attempts_max`
    /// (the contract's default 3). fourth_attempt: one more.
    pub(super) fn attempts_max(self, params: &PlatformParams) -> usize {
        let max = params.attempts_max as usize;
        if self.is(Mutant::FourthAttempt) {
            max + 1
        } else {
            max
        }
    }

    /// Whether a used merchant_refund_no is refused under a new key: UNIQ-04, always.
    /// refund_no_not_unique: it is not looked up.
    pub(super) fn refund_no_unique(self) -> bool {
        !self.is(Mutant::RefundNoNotUnique)
    }

    /// Whether a refund its review rejects is left unsent: A-REFUND-REVIEW, always (it
    /// is failed, a final status). rejected_refund_sent_anyway: it is sent upstream.
    pub(super) fn rejection_sends_nothing(self) -> bool {
        !self.is(Mutant::RejectedRefundSentAnyway)
    }

    /// Whether refunds are held to the captured amount: REFUND-03 (A-REFUND-LIMIT),
    /// always. refund_beyond_captured: no limit.
    pub(super) fn refunds_within_captured(self) -> bool {
        !self.is(Mutant::RefundBeyondCaptured)
    }

    // ---- execution ----------------------------------------------------------------

    /// Whether the key is claimed before the charge is sent: CONC-01, EFFECT-01, always.
    /// key_claimed_after_charge: only when the upstream answers.
    pub(super) fn claims_key_before_charge(self) -> bool {
        !self.is(Mutant::KeyClaimedAfterCharge)
    }

    /// Whether a create's order number is committed before its charge is sent: UNIQ-01,
    /// always. order_no_check_not_atomic: only when the charge returns.
    pub(super) fn commits_order_no_before_charge(self) -> bool {
        !self.is(Mutant::OrderNoCheckNotAtomic)
    }

    /// What cancel of an unfinished Payment answers: CANCEL-01, after the upstream.
    /// cancel_reports_canceled: 200 canceled at once.
    pub(super) fn cancel_answer(self) -> CancelAnswer {
        if self.is(Mutant::CancelReportsCanceled) {
            CancelAnswer::CanceledAtOnce
        } else {
            CancelAnswer::AfterUpstream
        }
    }

    /// How an upstream answer about a charge is read: as the contract reads it
    /// (`contract`). upstream_error_is_final reads a 5xx as a final failure (UNKNOWN-02,
    /// RES-01); action_required_as_succeeded reads requires_action as succeeded (RES-05).
    /// failure_names_first_attempt names the Payment's first attempt (`attempts`, oldest
    /// first) in `failure.attempt_id` instead of the one that failed (RES-06).
    pub(super) fn read_charge(
        self,
        state: ChargeState,
        attempt: AttemptId,
        attempts: &[AttemptId],
        contract: Reading,
    ) -> Reading {
        match (self.0, state) {
            (Some(Mutant::FailureNamesFirstAttempt), _) => Reading {
                failure: contract.failure.map(|f| Failure {
                    attempt_id: attempts.first().copied().unwrap_or(f.attempt_id),
                    ..f
                }),
                ..contract
            },
            (Some(Mutant::UpstreamErrorIsFinal), ChargeState::Error) => Reading {
                attempt: AttemptStatus::Failed,
                known: true,
                status: PaymentStatus::Failed,
                resolution: ResolutionStatus::Known,
                failure: Some(Failure {
                    code: FailureCode::NotReceivedByUpstream,
                    attempt_id: attempt,
                }),
                rule: Rule::UnknownResult,
                ..contract
            },
            (Some(Mutant::ActionRequiredAsSucceeded), ChargeState::ActionRequired) => Reading {
                status: PaymentStatus::Succeeded,
                resolution: ResolutionStatus::Known,
                ..contract
            },
            _ => contract,
        }
    }

    /// What the end of the automatic query window means: RES-03, manual_review.
    /// manual_review_fails_on_timer: a failure.
    pub(super) fn window_end(self) -> WindowEnd {
        if self.is(Mutant::ManualReviewFailsOnTimer) {
            WindowEnd::Failure
        } else {
            WindowEnd::ManualReview
        }
    }

    /// How long the platform waits between two automatic verifications of an unknown
    /// charge: RES-01, `verify_interval` (A-VERIFY-INTERVAL), within the automatic window.
    /// verification_stalls: 24 hours, the manual_review cadence (RES-03).
    pub(super) fn verify_interval(self, params: &PlatformParams) -> Millis {
        if self.is(Mutant::VerificationStalls) {
            crate::Contract::MANUAL_REVIEW_REQUERY
        } else {
            params.verify_interval
        }
    }

    /// The resolution of a charge unanswered within the synchronous wait: RES-01,
    /// needs_query (the automatic window starts). manual_review_at_once: manual_review.
    /// The fee rate a card retry's Payment keeps: ATTEMPT-06, its snapshot
    /// (A-FEE-SNAPSHOT). card_retry_takes_current_fee: the platform's rate now.
    pub(super) fn card_retry_fee(self, snapshot: u32, now: u32) -> u32 {
        if self.is(Mutant::CardRetryTakesCurrentFee) {
            now
        } else {
            snapshot
        }
    }

    pub(super) fn unknown_resolution(self) -> ResolutionStatus {
        if self.is(Mutant::ManualReviewAtOnce) {
            ResolutionStatus::ManualReview
        } else {
            ResolutionStatus::NeedsQuery
        }
    }

    /// The upstream call that verifies a refund whose answer is unknown: REFUND-01, a
    /// query, never the refund again. refund_resent_when_unknown: the refund again.
    pub(super) fn refund_verification(
        self,
        refund: RefundId,
        attempt: AttemptId,
        amount: u64,
    ) -> UpstreamCall {
        if self.is(Mutant::RefundResentWhenUnknown) {
            UpstreamCall::Refund {
                refund,
                attempt,
                amount,
            }
        } else {
            UpstreamCall::QueryRefund { refund }
        }
    }

    /// Whether an Idempotency-Key is longer than `max`: KEY-07, A-KEY-LENGTH, counted in
    /// characters (Unicode scalar values). key_length_in_bytes counts bytes.
    pub(super) fn key_too_long(self, key: &str, max: usize) -> bool {
        if self.is(Mutant::KeyLengthInBytes) {
            key.len() > max
        } else {
            key.chars().count() > max
        }
    }

    /// Whether a change of a Payment decided by `rule` gets a new version and its event:
    /// WEBHOOK-01, A-VERSION, every change. version_not_bumped_on_needs_query: not the
    /// switch to needs_query.
    pub(super) fn bumps_version(self, rule: Rule) -> bool {
        !(self.is(Mutant::VersionNotBumpedOnNeedsQuery) && rule == Rule::NeedsQuery)
    }

    /// The answers of one step as they leave the platform: the reference sends each as it
    /// was built, with every detail the contract prescribes (the status code, Retry-After,
    /// `error.field`, `related_resource_id`, the object's current state). The response
    /// detail mutants change one detail of the answers they concern.
    pub(super) fn finish_answers(self, out: &mut [PlatformOutput]) {
        let Some(m) = self.0 else {
            return;
        };
        for output in out {
            if let PlatformOutput::Response { response, rule, .. } = output {
                wrong_answer(m, response, *rule);
            }
        }
    }

    /// How long an idempotency record is kept: RET-01, the platform's `retention` (the
    /// contract's 7 days). retention_expires_early: a day (hours taken for days).
    pub(super) fn retention(self, params: &PlatformParams) -> Millis {
        if self.is(Mutant::RetentionExpiresEarly) {
            Millis::hours(24)
        } else {
            params.retention
        }
    }
}

/// The answer `mutant` sends instead of `response` (decided by `rule`): one detail
/// wrong. Other mutants leave it as it is.
fn wrong_answer(mutant: Mutant, response: &mut ApiResponse, rule: Rule) {
    let replay = rule == Rule::ReplayLatestStatus200;
    let code = response.error_code();
    match (mutant, &mut response.body) {
        (Mutant::ReplayAnswersPreviousVersion, ResponseBody::Payment(p)) if replay => {
            p.version = p.version.saturating_sub(1).max(1);
        }
        (Mutant::ReplayAnswersCreated, _) if replay => response.status = 201,
        (Mutant::PauseStatesItsCause, ResponseBody::Error { error })
            if code == Some(ErrorCode::TemporarilyUnavailable) =>
        {
            error.field = Some(crate::api::Field::Card);
        }
        (Mutant::PauseAnswersInternalError, _)
            if code == Some(ErrorCode::TemporarilyUnavailable) =>
        {
            *response = ApiResponse::error(ApiError::new(ErrorCode::InternalError));
        }
        (Mutant::KeyErrorWithoutField, ResponseBody::Error { error })
            if error.field == Some(Field::IdempotencyKey) =>
        {
            error.field = None;
        }
        (Mutant::MissingPaymentAnswersForbidden, _)
            if rule == Rule::QueryById && code == Some(ErrorCode::ResourceMissing) =>
        {
            *response = ApiResponse::error(ApiError::new(ErrorCode::PermissionDenied));
        }
        (Mutant::OrderNoConflictWithoutRelated, ResponseBody::Error { error })
            if error.code == ErrorCode::OrderNoConflict =>
        {
            error.related_resource_id = None;
        }
        (Mutant::PaymentInProgressWithoutRelated, ResponseBody::Error { error })
            if error.code == ErrorCode::PaymentInProgress =>
        {
            error.related_resource_id = None;
        }
        (Mutant::AttemptCountOffByOne, ResponseBody::Payment(p)) if p.status.is_in_progress() => {
            p.attempt_count = p.attempt_count.saturating_sub(1);
        }
        (Mutant::ReplayInProgressAnswersConflict, ResponseBody::Payment(p))
            if replay && p.status.is_in_progress() =>
        {
            *response = ApiResponse::error(ApiError::new(ErrorCode::OperationInProgress));
        }
        (Mutant::QueryHidesNeedsQuery, ResponseBody::Payment(p))
            if rule == Rule::QueryReadsKnownState
                && p.resolution_status == ResolutionStatus::NeedsQuery =>
        {
            p.resolution_status = ResolutionStatus::Known;
        }
        (Mutant::ConfirmWhileProcessingUnconfirmable, _)
            if code == Some(ErrorCode::PaymentInProgress) =>
        {
            *response = ApiResponse::error(ApiError::new(ErrorCode::PaymentNotConfirmable));
        }
        (Mutant::OrderNoReuseAnswersCreated, ResponseBody::Payment(_))
            if rule == Rule::OrderNoNewKey =>
        {
            response.status = 201;
        }
        (Mutant::CancelAcceptedWithoutPayment, ResponseBody::Payment(_))
            if rule == Rule::Cancel202KeepsStatus && response.status == 202 =>
        {
            response.body = ResponseBody::Error {
                error: ApiError::new(ErrorCode::OperationInProgress),
            };
        }
        (Mutant::RequiresActionWithoutNextAction, ResponseBody::Payment(p))
            if p.status == PaymentStatus::RequiresAction =>
        {
            p.next_action = false;
        }
        (Mutant::RefundQueryAnswersPreviousVersion, ResponseBody::Refund(r))
            if rule == Rule::QueryRefunds =>
        {
            r.version = r.version.saturating_sub(1).max(1);
        }
        (Mutant::RefundQueryAnswersPreviousVersion, ResponseBody::Refunds { data })
            if rule == Rule::QueryRefunds =>
        {
            for r in data {
                r.version = r.version.saturating_sub(1).max(1);
            }
        }
        _ => {}
    }
}

/// Whether `record` is taken for the scope of `request` under a scope mutant (each drops
/// one component of SCOPE-01); `None` under a mutant that does not change the lookup.
fn scope_matches(mutant: Mutant, record: &Scope, request: &Scope) -> Option<bool> {
    let key = record.key == request.key;
    let merchant = record.merchant == request.merchant;
    let environment = record.environment == request.environment;
    let route = record.route == request.route;
    Some(match mutant {
        Mutant::ScopeWithoutMerchant => key && environment && route,
        Mutant::ScopeWithoutEnvironment => key && merchant && route,
        Mutant::ScopeWithoutRoute => key && merchant && environment,
        Mutant::ScopeWithoutPaymentInPath => {
            let template = match (record.route, request.route) {
                (Route::Confirm(_), Route::Confirm(_)) | (Route::Cancel(_), Route::Cancel(_)) => {
                    true
                }
                (a, b) => a == b,
            };
            key && merchant && environment && template
        }
        _ => return None,
    })
}

/// The fingerprint `mutant` computes instead of `contract`: with the card in it (as a
/// hash of the whole body would have it), or without the amount or the currency. Other
/// mutants leave it as it is.
fn wrong_fingerprint(mutant: Mutant, contract: Fingerprint, card: Option<Card>) -> Fingerprint {
    use Fingerprint::*;
    let mut wrong = contract;
    match (mutant, &mut wrong) {
        (
            Mutant::CardInFingerprint,
            CreatePayment {
                merchant_order_no, ..
            },
        ) => {
            if let Some(card) = card {
                *merchant_order_no = Text::format(format_args!("{merchant_order_no} +{card}"));
            }
        }
        (
            Mutant::AmountNotInFingerprint,
            CreatePayment { amount, .. } | CheckoutSession { amount, .. } | Refund { amount, .. },
        ) => *amount = 0,
        (
            Mutant::CurrencyNotInFingerprint,
            CreatePayment { currency, .. } | CheckoutSession { currency, .. },
        ) => *currency = Text::new(),
        _ => {}
    }
    wrong
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{Environment, MerchantId, PaymentId};

    fn scope(merchant: u32, environment: Environment, route: Route) -> Scope {
        Scope {
            merchant: MerchantId(merchant),
            environment,
            route,
            key: "K".into(),
        }
    }

    /// The reference answers every decision point as the contract does, whatever the
    /// parameters say where the contract leaves a number to them.
    #[test]
    fn scope_01_ret_01_the_reference_variant_decides_as_the_contract() {
        let v = Variant::REFERENCE;
        let params = PlatformParams::default();
        assert!(v.is_reference() && Variant::default() == v);
        assert!(v.claims_key_before_charge() && v.commits_order_no_before_charge());
        assert!(v.one_unfinished_attempt() && v.retries_before_expiry());
        assert!(v.refund_no_unique() && v.refunds_within_captured());
        assert!(v.replay_returns_object(ResourceId::Session(crate::ids::SessionId(1))));
        assert_eq!(v.attempts_max(&params), 3);
        assert_eq!(v.retention(&params), Millis::days(7));
        assert_eq!(v.cancel_answer(), CancelAnswer::AfterUpstream);
        assert_eq!(v.window_end(), WindowEnd::ManualReview);
        assert_eq!(
            v.refund_verification(RefundId(1), AttemptId(1), 5),
            UpstreamCall::QueryRefund {
                refund: RefundId(1)
            }
        );
        let f = Fingerprint::Confirm;
        assert_eq!(v.fingerprint(f.clone(), Some(Card('B'))), f);
    }

    /// Each scope mutant drops exactly one component of SCOPE-01.
    #[test]
    fn scope_01_scope_mutants_drop_one_component() {
        let request = scope(1, Environment::Test, Route::Confirm(PaymentId(1)));
        let other_merchant = scope(2, Environment::Test, Route::Confirm(PaymentId(1)));
        let other_env = scope(1, Environment::Live, Route::Confirm(PaymentId(1)));
        let other_route = scope(1, Environment::Test, Route::Cancel(PaymentId(1)));
        let other_payment = scope(1, Environment::Test, Route::Confirm(PaymentId(2)));
        let others = [&other_merchant, &other_env, &other_route, &other_payment];
        let cases: [(Mutant, &[&Scope]); 4] = [
            (Mutant::ScopeWithoutMerchant, &[&other_merchant]),
            (Mutant::ScopeWithoutEnvironment, &[&other_env]),
            (Mutant::ScopeWithoutRoute, &[&other_route, &other_payment]),
            (Mutant::ScopeWithoutPaymentInPath, &[&other_payment]),
        ];
        for (m, collide) in cases {
            assert_eq!(scope_matches(m, &request, &request), Some(true), "{m}");
            for other in others {
                let expected = collide.contains(&other);
                assert_eq!(scope_matches(m, other, &request), Some(expected), "{m}");
            }
        }
        assert_eq!(
            scope_matches(Mutant::FourthAttempt, &request, &request),
            None
        );
    }
}
