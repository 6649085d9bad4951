//! Answers in detail: the first witness of every misanswer the platform gives, each
//! judged, as it is folded, against what the contract prescribes for it and against the
//! platform's store at answer time (REPLAY-02, REPLAY-03, CONC-02, CONC-03, KEY-01..07,
//! QUERY-01, QUERY-04, RATE-01, RATE-05, ORDER-01, ATTEMPT-01, CANCEL-01, WEBHOOK-01).
//! The judgement is the properties' ([`crate::responses::answers::judge`], written in
//! `responses/`); this family records what it finds.
//!
//! The store is the attempts family's mirror of the platform's Payments, read as it is
//! when the answer is seen (store observations of a step come before its answers). This
//! family keeps only what is a function of the platform's current state (the executions
//! and waits in flight) and the first witness of each misanswer, so it adds no states to
//! a run of a platform that answers as the contract says.

use super::attempts::Attempts;
use super::refunds::Refunds;
use crate::responses::answers::judge;
use payhub_model::event::{Handling, ScopeKey, StoredPayment, StoredRefund, What};
use payhub_model::{
    ApiResponse, AttemptId, CowMap, CowSet, ErrorCode, PaymentId, PaymentStatus, PaymentView,
    RefundId, RefundStatus, RequestId, ResolutionStatus,
};
use serde::Serialize;

/// The responses family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Responses {
    /// Executions in flight: the scope and the request that executes under it, from its
    /// own step (an upstream call or a new record, no answer yet) until it is answered.
    pub executing: CowMap<ScopeKey, RequestId>,
    /// Requests waiting on a same-key execution (no answer, nothing executed in their step).
    pub waiting: CowSet<RequestId>,
    /// The Payment the request step being observed created (its store observation comes
    /// before its `Handled`, which clears it): `None` between steps.
    pub created_now: Option<PaymentId>,
    /// REPLAY-02, CONC-02: the first answer to a POST that showed a Payment otherwise than
    /// the store held it (status, resolution_status, version, failure.attempt_id).
    pub stale_answer: Option<Box<Misanswer>>,
    /// REPLAY-02, REPLAY-03: the first 2xx with the wrong status code (201 for a step
    /// that created nothing, a waiter answered other than 200, a create's own execution
    /// answered other than 201 or 202, a 201 to an endpoint that creates nothing).
    pub wrong_success_code: Option<Box<Misanswer>>,
    /// RATE-04, RATE-05: the first 5xx other than 503 temporarily_unavailable, or 503
    /// with another code.
    pub wrong_5xx: Option<Box<Misanswer>>,
    /// RATE-04: the first 503 temporarily_unavailable that states more than its code
    /// (an `error.field`, a `related_resource_id`).
    pub pause_reason_stated: Option<Box<Misanswer>>,
    /// KEY-01..KEY-07: the first keyed POST whose key the answer misjudged: an invalid key
    /// (missing, empty, over 255 characters) not answered 400 `error.field =
    /// Idempotency-Key`, or a valid key or a query answered so.
    pub key_misjudged: Option<Box<Misanswer>>,
    /// QUERY-01, QUERY-05: the first GET of a Payment the merchant does not have, or a
    /// route that does not exist, not answered 404 (405 for a known path).
    pub not_found_misjudged: Option<Box<Misanswer>>,
    /// ORDER-01, ATTEMPT-01, UNIQ-04: the first 409 order_no_conflict, payment_in_progress
    /// or refund_no_conflict whose related_resource_id is missing or names another object.
    pub related_misnamed: Option<Box<Misanswer>>,
    /// CANCEL-01: the first cancel answered 202 whose Payment is not still in progress, in
    /// the answer or in the store.
    pub cancel_202_changed: Option<Box<Misanswer>>,
    /// The first answer or webhook whose attempt_count is not the number of attempts the
    /// store holds for its Payment (a webhook: of the store's current version).
    pub miscounted_attempts: Option<Box<Misanswer>>,
    /// WEBHOOK-01, A-VERSION: the first change of a Payment the store holds with no higher
    /// version (or a lower one), or a webhook showing the current version with another
    /// state or a version the store never held.
    pub unversioned_change: Option<Box<Misanswer>>,
    /// CONC-03: the first 409 operation_in_progress while nothing executes under its
    /// Idempotency-Key.
    pub in_progress_without_execution: Option<Box<Misanswer>>,
    /// QUERY-03, QUERY-04, QUERY-05: the first query (of a Payment or a refund) answered
    /// with a state the store does not hold.
    pub query_unknown_state: Option<Box<Misanswer>>,
    /// ORDER-01, CONC-02, CONC-03, ATTEMPT-01: the first answer at one of the contract's
    /// "A or B" points (S4, S5, S8) that is neither A nor B.
    pub branch_misanswered: Option<Box<Misanswer>>,
    /// RES-02..RES-06: the first answer or webhook showing a Payment whose status and
    /// resolution_status are no row of the contract's status table, or with next_action
    /// other than exactly when requires_action (RES-05).
    pub off_the_status_table: Option<Box<Misanswer>>,
    /// SCOPE-01, SCOPE-02: the first list answer or webhook showing a Payment or refund
    /// the store holds for another merchant or environment than the one it is shown to.
    pub foreign_shown: Option<Box<Misanswer>>,
}

/// The platform's store as the facts mirror it when an event is judged: the attempts
/// family's Payments and the refunds family's refunds.
#[derive(Clone, Copy)]
pub struct Store<'a> {
    pub attempts: &'a Attempts,
    pub refunds: &'a Refunds,
}

/// What a Payment looked like, as far as the response properties compare it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Shown {
    pub status: PaymentStatus,
    pub resolution: ResolutionStatus,
    pub version: u32,
    pub attempts: u8,
    pub failure_attempt: Option<AttemptId>,
}

impl Shown {
    /// A Payment as an answer or a webhook shows it.
    pub fn of_view(p: &PaymentView) -> Shown {
        Shown {
            status: p.status,
            resolution: p.resolution_status,
            version: p.version,
            attempts: p.attempt_count,
            failure_attempt: p.failure.map(|f| f.attempt_id),
        }
    }

    /// A Payment as the store holds it.
    pub fn of_store(p: &StoredPayment) -> Shown {
        Shown {
            status: p.status,
            resolution: p.resolution,
            version: p.version,
            attempts: p.attempts.len() as u8,
            failure_attempt: p.failure_attempt,
        }
    }

    /// The state a merchant sees, without the version.
    pub fn visible(self) -> (PaymentStatus, ResolutionStatus, u8, Option<AttemptId>) {
        (
            self.status,
            self.resolution,
            self.attempts,
            self.failure_attempt,
        )
    }

    /// Equal but for attempt_count (judged on its own).
    pub fn same_state(self, other: Shown) -> bool {
        Shown {
            attempts: 0,
            ..self
        } == Shown {
            attempts: 0,
            ..other
        }
    }
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} version {} attempt_count {}",
            self.status.as_str(),
            self.resolution.as_str(),
            self.version,
            self.attempts
        )?;
        if let Some(a) = self.failure_attempt {
            write!(f, " failure.attempt_id {a}")?;
        }
        Ok(())
    }
}

/// One misanswer: the request answered (if any), the answer's status and code, the
/// Payment concerned, how it was shown and how the store held it. By default nothing:
/// what a store change or a webhook is judged from (no request, no status).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Misanswer {
    pub request: Option<RequestId>,
    pub status: u16,
    pub code: Option<ErrorCode>,
    pub payment: Option<PaymentId>,
    pub shown: Option<Shown>,
    pub stored: Option<Shown>,
    /// A refund shown (status, version), and as the store held it.
    pub refund: Option<(RefundId, RefundStatus, u32)>,
    pub stored_refund: Option<(RefundStatus, u32)>,
}

impl Misanswer {
    /// The answer `response` to `request`, nothing more yet.
    pub fn of(request: Option<RequestId>, response: &ApiResponse) -> Misanswer {
        Misanswer {
            request,
            status: response.status,
            code: response.error_code(),
            ..Misanswer::default()
        }
    }

    /// The same misanswer about `payment`, shown and stored as given.
    pub fn about(
        self,
        payment: PaymentId,
        shown: Option<Shown>,
        stored: Option<Shown>,
    ) -> Misanswer {
        Misanswer {
            payment: Some(payment),
            shown,
            stored,
            ..self
        }
    }

    /// The same misanswer showing a refund (id, status, version), and as the store holds it.
    pub fn showing_refund(
        self,
        shown: Option<(RefundId, RefundStatus, u32)>,
        stored: Option<&StoredRefund>,
    ) -> Misanswer {
        Misanswer {
            refund: shown,
            stored_refund: stored.map(|s| (s.status, s.version)),
            ..self
        }
    }
}

macro_rules! slots {
    ($( $slot:ident => $field:ident, )*) => {
        /// Which witness a finding fills: one variant per witness field of [`Responses`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Slot {
            $($slot,)*
        }

        impl Slot {
            /// Every slot, in the order of the fields of [`Responses`].
            pub const ALL: &'static [Slot] = &[$(Slot::$slot),*];
        }

        impl Responses {
            /// The first misanswer of `slot`, if one was seen.
            pub fn first(&self, slot: Slot) -> &Option<Box<Misanswer>> {
                match slot { $(Slot::$slot => &self.$field,)* }
            }

            pub(super) fn first_mut(&mut self, slot: Slot) -> &mut Option<Box<Misanswer>> {
                match slot { $(Slot::$slot => &mut self.$field,)* }
            }

            /// Every field is a slot's or one of the flight's: a misanswer field added
            /// without its slot does not compile (it would escape the ids' renaming).
            #[allow(dead_code)]
            fn every_misanswer_has_a_slot(&self) {
                let Responses { executing: _, waiting: _, created_now: _, $($field: _,)* } = self;
            }
        }
    };
}

slots! {
    Stale => stale_answer,
    SuccessCode => wrong_success_code,
    FiveXx => wrong_5xx,
    PauseReason => pause_reason_stated,
    Key => key_misjudged,
    NotFound => not_found_misjudged,
    Related => related_misnamed,
    Cancel202 => cancel_202_changed,
    Attempts => miscounted_attempts,
    Version => unversioned_change,
    InProgress => in_progress_without_execution,
    Query => query_unknown_state,
    Branch => branch_misanswered,
    Table => off_the_status_table,
    Foreign => foreign_shown,
}

impl Responses {
    fn is_open(&self, slot: Slot) -> bool {
        self.first(slot).is_none()
    }

    /// Whether `what` changes this family (asked before the shared facts are copied):
    /// it moves an execution or a wait, or `judge` finds a misanswer for an open witness.
    pub(super) fn changes(&self, what: &What, store: &Store<'_>) -> bool {
        if self.moves_flight(what, store) {
            return true;
        }
        let mut found = false;
        judge(self, what, store, &mut |slot, _| {
            found |= self.is_open(slot)
        });
        found
    }

    /// Records the first witness of each misanswer `judge` finds in `what`, then moves
    /// the executions and waits in flight.
    pub(super) fn observe(&mut self, what: &What, store: &Store<'_>) {
        let mut findings = Vec::new();
        judge(self, what, store, &mut |slot, m| findings.push((slot, m)));
        for (slot, m) in findings {
            let witness = self.first_mut(slot);
            if witness.is_none() {
                *witness = Some(Box::new(m));
            }
        }
        self.move_flight(what, store);
    }

    /// Whether `what` starts or ends an execution or a wait, or creates a Payment.
    fn moves_flight(&self, what: &What, store: &Store<'_>) -> bool {
        match what {
            What::Handled {
                request,
                owner,
                handling,
                ..
            } => {
                self.created_now.is_some()
                    || (handling.answer.is_none() && ScopeKey::of(*owner, request).is_some())
            }
            What::Answered { id, .. } => {
                self.waiting.contains(id) || self.executing.values().any(|e| e == id)
            }
            What::PaymentStored { payment, .. } => !store.attempts.payments.contains_key(payment),
            _ => false,
        }
    }

    fn move_flight(&mut self, what: &What, store: &Store<'_>) {
        match what {
            What::PaymentStored { payment, .. }
                if !store.attempts.payments.contains_key(payment) =>
            {
                self.created_now = Some(*payment);
            }
            What::Handled {
                id,
                request,
                owner,
                handling,
                ..
            } => {
                self.created_now = None;
                if handling.answer.is_some() {
                    return;
                }
                let Some(scope) = ScopeKey::of(*owner, request) else {
                    return;
                };
                if executed(handling) {
                    self.executing.insert(scope, *id);
                } else {
                    self.waiting.insert(*id);
                }
            }
            What::Answered { id, .. } => {
                if self.waiting.contains(id) {
                    self.waiting.remove(id);
                }
                if self.executing.values().any(|e| e == id) {
                    self.executing.retain(|_, e| e != id);
                }
            }
            _ => {}
        }
    }
}

/// The step executed something under its scope: an upstream call or a new record.
pub fn executed(handling: &Handling) -> bool {
    handling.new_record || !handling.calls.is_empty()
}
