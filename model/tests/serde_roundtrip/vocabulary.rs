//! The vocabulary every trace cites: rules, branches, ids, time, cards, webhook kinds.

use super::*;

/// The vocabulary every trace cites: rules, branches, ids, time, cards, webhook kinds.
#[test]
fn rules_branches_ids_and_time_round_trip() {
    for rule in Rule::ALL {
        round_trip(rule);
        round_trip(&rule.section());
        round_trip(&rule.enforcer());
    }
    for point in [
        BranchPoint::OrderNoReuse,
        BranchPoint::ConcurrentSameKey,
        BranchPoint::ConfirmWhileProcessing,
    ] {
        round_trip(&point);
        for branch in point.alternatives() {
            round_trip(&branch);
            assert_eq!(branch.point(), point);
        }
    }
    for n in [0, 1, 7, 999, 1_000, 123_456, u32::MAX] {
        round_trip(&PaymentId(n));
        round_trip(&AttemptId(n));
        round_trip(&RefundId(n));
        round_trip(&SessionId(n));
        round_trip(&RequestId(n));
        round_trip(&EventId(n));
        round_trip(&MerchantId(n));
        round_trip(&ApiKeyId(n));
    }
    assert_eq!(round_trip(&PaymentId(1)), "\"pay_demo_001\"");
    for ms in [0, 250, 15_000, u64::MAX] {
        assert_eq!(round_trip(&Millis(ms)), ms.to_string());
    }
    for env in [Environment::Test, Environment::Live] {
        round_trip(&env);
    }
    for label in ['A', 'B', 'z', 'é'] {
        round_trip(&Card(label));
    }
    for status in PAYMENT_STATUSES {
        round_trip(&Text::format(format_args!("payment.{}", status.as_str())));
        round_trip(&status);
    }
    for status in REFUND_STATUSES {
        round_trip(&Text::format(format_args!("refund.{}", status.as_str())));
        round_trip(&status);
    }
    for resolution in [
        ResolutionStatus::Known,
        ResolutionStatus::NeedsQuery,
        ResolutionStatus::ManualReview,
    ] {
        round_trip(&resolution);
    }
    round_trip(&Text::from(
        "a text longer than thirty bytes, kept on the heap",
    ));
}
