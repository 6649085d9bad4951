//! The upstream acquirer: the ground truth of money.
//!
//! The platform talks to it with [`UpstreamCall`]s and hears back [`UpstreamReply`]s.
//! What the acquirer does with a call is not the model's to decide: the world supplies
//! an [`AcquirerDecision`] with every call (approve, decline, require authentication,
//! fail before charging, or charge and never answer). Every charge and refund that moves
//! money lands in the [`Ledger`]; invariants are judged against the ledger, never against
//! what the platform believes.
//!
//! Sans-IO like the platform: `handle_call(now, call, decision, out)` and
//! `handle_payer(now, attempt, authenticated, out)` are the inputs, replies are pushed
//! to `out`. No clock, no randomness, no I/O.
//!
//! Assumption A-UPSTREAM-VOID (the contract is silent on the upstream protocol): a
//! status query for a reference the acquirer has never seen voids that reference, so a
//! charge that arrives later under it is declined, never captured. This is what makes
//! "not received" a safe final answer for the platform.

use crate::api::FailureCode;
use crate::cow::{CowMap, CowSet};
use crate::ids::{AttemptId, Card, Environment, MerchantId, PaymentId, RefundId};
use crate::text::Text;
use crate::time::Millis;
use serde::{Deserialize, Serialize};

/// A call from the platform to the acquirer.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum UpstreamCall {
    /// Charge `card` for an attempt. The only message that carries card data.
    Charge {
        attempt: AttemptId,
        payment: PaymentId,
        merchant: MerchantId,
        environment: Environment,
        amount: u64,
        currency: Text,
        card: Card,
    },
    /// What happened to this attempt's charge? (RES-01: verifying with the original identifier.)
    QueryCharge { attempt: AttemptId },
    /// Cancel this attempt's charge if it is not captured (CANCEL-01).
    CancelCharge { attempt: AttemptId },
    /// Refund part of a captured charge.
    Refund {
        refund: RefundId,
        attempt: AttemptId,
        amount: u64,
    },
    /// What happened to this refund?
    QueryRefund { refund: RefundId },
}

impl std::fmt::Display for UpstreamCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamCall::Charge {
                attempt,
                amount,
                currency,
                card,
                ..
            } => write!(f, "charge {attempt} {amount} {currency} ({card})"),
            UpstreamCall::QueryCharge { attempt } => write!(f, "query charge {attempt}"),
            UpstreamCall::CancelCharge { attempt } => write!(f, "cancel charge {attempt}"),
            UpstreamCall::Refund {
                refund,
                attempt,
                amount,
            } => write!(f, "refund {refund} of {attempt} {amount}"),
            UpstreamCall::QueryRefund { refund } => write!(f, "query refund {refund}"),
        }
    }
}

/// What the acquirer knows about a charge, as it answers a charge or a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChargeState {
    /// Captured: money moved.
    Approved,
    /// Definitively declined (or authentication failed).
    Declined(FailureCode),
    /// Waiting for the payer to authenticate.
    ActionRequired,
    /// Canceled before capture.
    Canceled,
    /// Never received (answer to a query); the reference is now void (A-UPSTREAM-VOID).
    NotFound,
    /// The acquirer failed (5xx) without deciding: nothing is known.
    Error,
}

crate::named! {
    fn as_str, Display;
    /// What the acquirer knows about a refund.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum RefundState {
        Succeeded = "succeeded",
        Failed = "failed",
        NotFound = "not_found",
        Error = "error",
    }
}

/// A reply from the acquirer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum UpstreamReply {
    Charge {
        attempt: AttemptId,
        state: ChargeState,
    },
    Refund {
        refund: RefundId,
        state: RefundState,
    },
}

impl std::fmt::Display for UpstreamReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamReply::Charge { attempt, state } => write!(f, "{attempt}: {state}"),
            UpstreamReply::Refund { refund, state } => write!(f, "{refund}: {state}"),
        }
    }
}

/// The acquirer's words for a charge's state, as a trace prints them
/// (`approved`, `declined: authentication_failed`).
impl std::fmt::Display for ChargeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChargeState::Approved => "approved",
            ChargeState::Declined(code) => return write!(f, "declined: {}", code.as_str()),
            ChargeState::ActionRequired => "action_required",
            ChargeState::Canceled => "canceled",
            ChargeState::NotFound => "not_found",
            ChargeState::Error => "error",
        })
    }
}

crate::named! {
    fn as_str;
    /// The world's decision on a call the acquirer receives.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum AcquirerDecision {
        /// Charge: capture. Refund: refund. Cancel: cancel if not captured.
        Approve = "approve",
        /// Charge: decline (`card_declined`). Refund: refuse.
        Decline = "decline",
        /// Charge: the payer must authenticate first (3-D Secure).
        RequireAction = "require_action",
        /// Answer 5xx without doing anything.
        Fail = "fail",
        /// Do what `Approve` does, then never answer (the upstream link goes silent).
        ApproveSilently = "approve_silently",
    }
}

/// A charge as the acquirer keeps it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChargeRecord {
    pub state: ChargeState,
    pub payment: PaymentId,
    pub merchant: MerchantId,
    pub environment: Environment,
    pub amount: u64,
    pub card: Card,
}

/// One movement of money: the facts the invariants judge.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum LedgerEntry {
    /// A charge was captured: money left the payer's `card`.
    Capture {
        attempt: AttemptId,
        payment: PaymentId,
        merchant: MerchantId,
        environment: Environment,
        amount: u64,
        card: Card,
        at: Millis,
    },
    /// A refund paid money back.
    Refund {
        refund: RefundId,
        attempt: AttemptId,
        amount: u64,
        at: Millis,
    },
}

/// The acquirer's money ledger, in the order money moved.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ledger {
    pub entries: Vec<LedgerEntry>,
}

impl Ledger {
    /// Total captured, and total refunded, against one attempt.
    pub fn net_of(&self, attempt: AttemptId) -> (u64, u64) {
        net_of(&self.entries, attempt)
    }
}

/// Total captured, and total refunded, against `attempt` in `entries` (a ledger's, or a
/// mirror of one).
pub fn net_of<'a>(
    entries: impl IntoIterator<Item = &'a LedgerEntry>,
    attempt: AttemptId,
) -> (u64, u64) {
    let (mut captured, mut refunded) = (0, 0);
    for e in entries {
        match e {
            LedgerEntry::Capture {
                attempt: a, amount, ..
            } if *a == attempt => captured += amount,
            LedgerEntry::Refund {
                attempt: a, amount, ..
            } if *a == attempt => refunded += amount,
            _ => {}
        }
    }
    (captured, refunded)
}

/// The acquirer's state.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Acquirer {
    /// Every charge reference it has seen, with what it knows of it.
    pub charges: CowMap<AttemptId, ChargeRecord>,
    /// References voided by a query before their charge arrived (A-UPSTREAM-VOID).
    pub voided: CowSet<AttemptId>,
    /// Refund references and their state.
    pub refunds: CowMap<RefundId, RefundState>,
    /// Money that moved.
    pub ledger: Ledger,
}

impl Acquirer {
    pub fn new() -> Acquirer {
        Acquirer::default()
    }

    /// Whether `decision` means anything for `call`: the world offers only these.
    /// Queries ignore the decision except `Fail` and `ApproveSilently` (answer lost).
    pub fn decisions_for(call: &UpstreamCall) -> &'static [AcquirerDecision] {
        use AcquirerDecision::*;
        match call {
            UpstreamCall::Charge { .. } => {
                &[Approve, Decline, RequireAction, Fail, ApproveSilently]
            }
            UpstreamCall::Refund { .. } => &[Approve, Decline, Fail, ApproveSilently],
            UpstreamCall::CancelCharge { .. } => &[Approve, Fail],
            UpstreamCall::QueryCharge { .. } | UpstreamCall::QueryRefund { .. } => &[Approve, Fail],
        }
    }

    /// Handles one call. Replies go to `out` (none when the decision is `ApproveSilently`).
    pub fn handle_call(
        &mut self,
        now: Millis,
        call: &UpstreamCall,
        decision: AcquirerDecision,
        out: &mut Vec<UpstreamReply>,
    ) {
        use AcquirerDecision::*;
        match *call {
            UpstreamCall::Charge {
                attempt,
                payment,
                merchant,
                environment,
                amount,
                card,
                ..
            } => {
                if decision == Fail {
                    out.push(UpstreamReply::Charge {
                        attempt,
                        state: ChargeState::Error,
                    });
                    return;
                }
                if self.voided.contains(&attempt) {
                    // A-UPSTREAM-VOID: a late charge under a voided reference is refused.
                    out.push(UpstreamReply::Charge {
                        attempt,
                        state: ChargeState::Declined(FailureCode::NotReceivedByUpstream),
                    });
                    return;
                }
                // The acquirer does not deduplicate: every charge call that is approved
                // moves money, so a platform that charges twice shows in the ledger.
                let state = match decision {
                    Approve | ApproveSilently => ChargeState::Approved,
                    Decline => ChargeState::Declined(FailureCode::CardDeclined),
                    RequireAction => ChargeState::ActionRequired,
                    Fail => unreachable!("handled above"),
                };
                let record = ChargeRecord {
                    state,
                    payment,
                    merchant,
                    environment,
                    amount,
                    card,
                };
                if state == ChargeState::Approved {
                    self.capture(now, attempt, &record);
                }
                self.charges.insert(attempt, record);
                if decision != ApproveSilently {
                    out.push(UpstreamReply::Charge { attempt, state });
                }
            }
            UpstreamCall::QueryCharge { attempt } => {
                let state = match (decision, self.charges.get(&attempt)) {
                    (Fail, _) => ChargeState::Error,
                    (_, Some(record)) => record.state,
                    (_, None) => {
                        self.voided.insert(attempt);
                        ChargeState::NotFound
                    }
                };
                out.push(UpstreamReply::Charge { attempt, state });
            }
            UpstreamCall::CancelCharge { attempt } => {
                let state = match (decision, self.charges.get_mut(&attempt)) {
                    (Fail, _) => ChargeState::Error,
                    (_, Some(record)) => {
                        if matches!(record.state, ChargeState::ActionRequired) {
                            record.state = ChargeState::Canceled;
                        }
                        record.state
                    }
                    (_, None) => {
                        self.voided.insert(attempt);
                        ChargeState::Canceled
                    }
                };
                out.push(UpstreamReply::Charge { attempt, state });
            }
            UpstreamCall::Refund {
                refund,
                attempt,
                amount,
            } => {
                let state = match decision {
                    Fail => {
                        out.push(UpstreamReply::Refund {
                            refund,
                            state: RefundState::Error,
                        });
                        return;
                    }
                    Decline => RefundState::Failed,
                    _ => {
                        // No deduplication here either: a second refund call pays twice.
                        self.ledger.entries.push(LedgerEntry::Refund {
                            refund,
                            attempt,
                            amount,
                            at: now,
                        });
                        RefundState::Succeeded
                    }
                };
                self.refunds.insert(refund, state);
                if decision != ApproveSilently {
                    out.push(UpstreamReply::Refund { refund, state });
                }
            }
            UpstreamCall::QueryRefund { refund } => {
                let state = match decision {
                    Fail => RefundState::Error,
                    _ => self
                        .refunds
                        .get(&refund)
                        .copied()
                        .unwrap_or(RefundState::NotFound),
                };
                out.push(UpstreamReply::Refund { refund, state });
            }
        }
    }

    /// The payer completes (or fails) authentication of a `requires_action` charge.
    /// Nothing is sent: the platform learns of it by querying (RES-05).
    pub fn handle_payer(&mut self, now: Millis, attempt: AttemptId, authenticated: bool) {
        let Some(record) = self.charges.get(&attempt) else {
            return;
        };
        if record.state != ChargeState::ActionRequired {
            return;
        }
        let record = record.clone();
        let state = if authenticated {
            self.capture(now, attempt, &record);
            ChargeState::Approved
        } else {
            ChargeState::Declined(FailureCode::AuthenticationFailed)
        };
        if let Some(r) = self.charges.get_mut(&attempt) {
            r.state = state;
        }
    }

    /// Charges waiting for the payer, in id order: the world may authenticate each.
    pub fn awaiting_payer(&self) -> impl Iterator<Item = AttemptId> + '_ {
        self.charges
            .iter()
            .filter(|(_, r)| r.state == ChargeState::ActionRequired)
            .map(|(a, _)| *a)
    }

    fn capture(&mut self, now: Millis, attempt: AttemptId, record: &ChargeRecord) {
        self.ledger.entries.push(LedgerEntry::Capture {
            attempt,
            payment: record.payment,
            merchant: record.merchant,
            environment: record.environment,
            amount: record.amount,
            card: record.card,
            at: now,
        });
    }
}
