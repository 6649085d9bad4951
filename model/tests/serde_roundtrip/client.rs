//! The merchant client: commands, decisions, refusals, outputs, policies.

use super::*;
use payhub_model::client::{
    AntiPattern, ClientOutput, Command, Decision, Draw, Handle, KeyPurpose, Keys, ObjectState,
    OrderOutcome, OrderState, PayerMessage, Policy, Refusal, Subject, SubmissionKind, Via,
};

fn order_states() -> Vec<OrderState> {
    vec![
        OrderState::Submitting,
        OrderState::Confirming,
        OrderState::PendingConfirmation,
        OrderState::AwaitingPayer,
        OrderState::Paid,
        OrderState::Failed,
        OrderState::Closed,
        OrderState::Rejected(ErrorCode::UnsupportedCurrency),
        OrderState::Defect,
    ]
}

fn decisions() -> Vec<Decision> {
    let mut decisions = vec![
        Decision::KeyPersisted {
            key: "payment.create:ORDER-1:1".into(),
            seq: 1,
        },
        Decision::RetryScheduled {
            try_no: 2,
            at: Millis::ms(1_100),
        },
        Decision::RetryDropped { try_no: 3 },
        Decision::ResultUnknown,
        Decision::QueryScheduled {
            at: Millis::secs(10),
        },
        Decision::QueryDeferred {
            until: Millis::secs(20),
        },
        Decision::QueryStopped,
        Decision::ScheduleEnded,
        Decision::Applied {
            object: ObjectState::Payment {
                status: PaymentStatus::Succeeded,
                resolution: ResolutionStatus::Known,
            },
            version: 2,
            via: Via::Response,
        },
        Decision::Applied {
            object: ObjectState::Refund {
                status: RefundStatus::Failed,
            },
            version: 1,
            via: Via::Webhook,
        },
        Decision::Stale {
            version: 1,
            applied: 2,
            via: Via::Query,
        },
        Decision::OtherPayment {
            payment: PaymentId(9),
        },
        Decision::Adopted {
            object: ResourceId::Refund(RefundId(1)),
        },
        Decision::Fulfil {
            payment: PaymentId(1),
        },
        Decision::PendingConfirmation,
        Decision::CancelNotConfirmed,
        Decision::Rejected {
            code: ErrorCode::InvalidRequest,
        },
        Decision::Defect {
            code: ErrorCode::IdempotencyConflict,
        },
        Decision::LateReply {
            handle: Handle { boot: 1, n: 4 },
        },
        Decision::UnknownObject,
        Decision::Restarted { boot: 2 },
    ];
    for &pattern in AntiPattern::ALL {
        decisions.push(Decision::Deviate { pattern });
    }
    for message in [
        PayerMessage::TemporarilyUnavailable,
        PayerMessage::Confirming,
    ] {
        decisions.push(Decision::ShowPayer { message });
    }
    let mut reasons = vec![
        Refusal::UnknownOrder,
        Refusal::InvalidOrder,
        Refusal::ParametersBound,
        Refusal::AlreadyInProgress,
        Refusal::NoPaymentId,
        Refusal::NotFailed { status: None },
        Refusal::NotFailed {
            status: Some(PaymentStatus::Processing),
        },
        Refusal::AttemptsExhausted,
        Refusal::Expired,
        Refusal::RefundExists,
    ];
    for state in order_states() {
        reasons.push(Refusal::OrderExists { state });
        reasons.push(Refusal::NotCancelable { state });
        reasons.push(Refusal::NotPaid { state });
    }
    decisions.extend(
        reasons
            .into_iter()
            .map(|reason| Decision::Refused { reason }),
    );
    decisions
}

#[test]
fn client_commands_decisions_and_outputs_round_trip() {
    let commands = [
        Command::PayOrder {
            order: "ORDER-1".into(),
            amount: 10_000,
            currency: "USD".into(),
            card: Card('A'),
        },
        Command::RetryWithCard {
            order: "ORDER-1".into(),
            card: Card('B'),
        },
        Command::CancelOrder {
            order: "ORDER-1".into(),
        },
        Command::AmendOrder {
            order: "ORDER-1".into(),
            amount: 1,
        },
        Command::RefundOrder {
            order: "ORDER-1".into(),
            refund: "R-1".into(),
            amount: 4_000,
        },
        Command::Reconcile,
    ];
    for command in &commands {
        round_trip(command);
    }
    round_trip(&Draw::new(Millis::ms(249), u64::MAX));
    let subjects = [
        Subject::Order("ORDER-1".into()),
        Subject::Refund("R-1".into()),
        Subject::Server,
    ];
    let mut outputs = vec![
        ClientOutput::Send {
            handle: Handle { boot: 0, n: 1 },
            request: ApiRequest {
                api_key: ApiKeyId(1),
                idempotency_key: Some("payment.create:ORDER-1:1".into()),
                endpoint: super::api::endpoints().remove(0),
            },
            timeout: Millis::secs(20),
            rule: Rule::ClientTimeouts,
        },
        ClientOutput::AckWebhook {
            event: EventId(3),
            rule: Rule::LatestVersionWins,
        },
    ];
    for decision in decisions() {
        for subject in &subjects {
            outputs.push(ClientOutput::Decision {
                subject: subject.clone(),
                decision: decision.clone(),
                rule: Rule::PersistBeforeSend,
            });
        }
    }
    for output in &outputs {
        round_trip(output);
    }
    for state in order_states() {
        round_trip(&state);
    }
    for outcome in [
        OrderOutcome::Sending,
        OrderOutcome::Answered,
        OrderOutcome::Unknown,
        OrderOutcome::Rejected(ErrorCode::RateLimited),
        OrderOutcome::Conflict,
    ] {
        round_trip(&outcome);
    }
    for kind in [SubmissionKind::Create, SubmissionKind::Confirm] {
        round_trip(&kind);
    }
    for purpose in [
        KeyPurpose::CreatePayment,
        KeyPurpose::ConfirmPayment,
        KeyPurpose::CancelPayment,
        KeyPurpose::CreateRefund,
    ] {
        round_trip(&purpose);
    }
    let mut policy = Policy::reference_random();
    assert_eq!(policy.keys, Keys::RandomPersisted);
    round_trip(&policy);
    for &pattern in AntiPattern::ALL {
        policy = policy.with(pattern);
        round_trip(&pattern);
    }
    round_trip(&policy);
}
