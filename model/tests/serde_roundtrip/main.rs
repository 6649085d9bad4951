//! The model's vocabulary reads back from its own JSON: every value below serializes,
//! deserializes to an equal value, and serializes again to the same bytes (as a string
//! and through `serde_json::Value`). Anything that does not fit the form is an error
//! that names what is wrong, never a panic and never a silently different value.

use payhub_model::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeSet;
use std::fmt::Debug;

mod api;
mod client;
mod errors;
mod money;
mod vocabulary;

/// Serializes `value`, reads it back, and checks both the value and the bytes.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: &T) -> String {
    let json = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(&back, value, "{json}");
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    let tree = serde_json::to_value(value).unwrap();
    let again: T = serde_json::from_value(tree).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(&again, value, "{json} through a Value");
    json
}

/// The error reading `json` as a `T`, as text.
fn error<T: DeserializeOwned + Debug>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(v) => panic!("{json} was read as {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn payment(status: PaymentStatus, failure: Option<Failure>) -> PaymentView {
    PaymentView {
        id: PaymentId(1),
        merchant_order_no: "ORDER-1".into(),
        amount: 10_000,
        currency: "USD".into(),
        status,
        resolution_status: ResolutionStatus::Known,
        attempt_count: 1,
        failure,
        next_action: status == PaymentStatus::RequiresAction,
        expires_at: Millis::days(1),
        fee_rate_bps: 290,
        amount_refunded: 0,
        version: 3,
    }
}

fn refund(status: RefundStatus) -> RefundView {
    RefundView {
        id: RefundId(2),
        payment_id: PaymentId(1),
        merchant_refund_no: "R-1".into(),
        amount: 4_000,
        status,
        resolution_status: ResolutionStatus::NeedsQuery,
        version: 1,
    }
}

const PAYMENT_STATUSES: [PaymentStatus; 7] = [
    PaymentStatus::RequiresPaymentMethod,
    PaymentStatus::Processing,
    PaymentStatus::RequiresAction,
    PaymentStatus::Succeeded,
    PaymentStatus::Failed,
    PaymentStatus::Canceled,
    PaymentStatus::Expired,
];

const REFUND_STATUSES: [RefundStatus; 3] = [
    RefundStatus::Processing,
    RefundStatus::Succeeded,
    RefundStatus::Failed,
];

/// The variant names serde lists when `json` names an unknown one: every variant of
/// the enum, to check that a test covers them all.
fn variant_names<T: DeserializeOwned + Debug>(json: &str) -> BTreeSet<String> {
    let e = error::<T>(json);
    let list = e
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("{e}"))
        .1;
    list.split(", ")
        .map(|name| {
            name.split('`')
                .nth(1)
                .unwrap_or_else(|| panic!("{e}"))
                .to_owned()
        })
        .collect()
}
