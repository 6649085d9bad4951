//! Money and the upstream link: calls, replies, ledger entries, acquirer decisions.

use super::*;
use payhub_model::acquirer::{ChargeRecord, ChargeState, RefundState};

#[test]
fn money_and_upstream_round_trip() {
    let charge_states = [
        ChargeState::Approved,
        ChargeState::Declined(FailureCode::CardDeclined),
        ChargeState::Declined(FailureCode::AuthenticationFailed),
        ChargeState::Declined(FailureCode::NotReceivedByUpstream),
        ChargeState::ActionRequired,
        ChargeState::Canceled,
        ChargeState::NotFound,
        ChargeState::Error,
    ];
    for state in charge_states {
        round_trip(&UpstreamReply::Charge {
            attempt: AttemptId(4),
            state,
        });
        round_trip(&ChargeRecord {
            state,
            payment: PaymentId(1),
            merchant: MerchantId(0),
            environment: Environment::Live,
            amount: 1,
            card: Card('Z'),
        });
    }
    for state in [
        RefundState::Succeeded,
        RefundState::Failed,
        RefundState::NotFound,
        RefundState::Error,
    ] {
        round_trip(&UpstreamReply::Refund {
            refund: RefundId(1),
            state,
        });
    }
    let calls = [
        UpstreamCall::Charge {
            attempt: AttemptId(1),
            payment: PaymentId(1),
            merchant: MerchantId(1),
            environment: Environment::Test,
            amount: 10_000,
            currency: "USD".into(),
            card: Card('A'),
        },
        UpstreamCall::QueryCharge {
            attempt: AttemptId(1),
        },
        UpstreamCall::CancelCharge {
            attempt: AttemptId(1),
        },
        UpstreamCall::Refund {
            refund: RefundId(1),
            attempt: AttemptId(1),
            amount: 4_000,
        },
        UpstreamCall::QueryRefund {
            refund: RefundId(1),
        },
    ];
    for call in &calls {
        round_trip(call);
    }
    let entries = vec![
        LedgerEntry::Capture {
            attempt: AttemptId(1),
            payment: PaymentId(1),
            merchant: MerchantId(1),
            environment: Environment::Test,
            amount: 10_000,
            card: Card('A'),
            at: Millis::secs(15),
        },
        LedgerEntry::Refund {
            refund: RefundId(1),
            attempt: AttemptId(1),
            amount: 4_000,
            at: Millis::hours(2),
        },
    ];
    for entry in &entries {
        round_trip(entry);
    }
    round_trip(&Ledger { entries });
    // Every decision, by the names serde knows.
    let names = variant_names::<AcquirerDecision>(r#""nope""#);
    assert_eq!(names.len(), 5);
    for name in names {
        let decision: AcquirerDecision = serde_json::from_str(&format!("\"{name}\"")).unwrap();
        assert_eq!(round_trip(&decision), format!("\"{name}\""));
    }
}
