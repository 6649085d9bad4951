//! What does not fit the form is an error that says what is wrong.

use super::*;
use payhub_model::client::{ClientOutput, Command, Decision};

/// An unknown field, an unknown variant or a value of the wrong form is an error that
/// says so.
#[test]
fn unknown_fields_and_variants_are_clear_errors() {
    let cases: Vec<(String, &str)> = vec![
        (
            error::<ApiRequest>(
                r#"{"api_key":"ak_1","endpoint":"create_payment","body":{},"extra":1}"#,
            ),
            "unknown field `extra`",
        ),
        (
            error::<ApiRequest>(r#"{"api_key":"ak_1","endpoint":"teleport"}"#),
            "unknown variant `teleport`",
        ),
        (
            error::<ApiRequest>(r#"{"endpoint":"list_refunds_processing"}"#),
            "missing field `api_key`",
        ),
        (
            error::<CreatePaymentBody>(r#"{"amount":1,"cvc":"123"}"#),
            "unknown field `cvc`",
        ),
        (
            error::<PaymentView>(&{
                let mut v = serde_json::to_value(payment(PaymentStatus::Succeeded, None)).unwrap();
                v["card"] = "A".into();
                v.to_string()
            }),
            "unknown field `card`",
        ),
        (error::<ErrorCode>(r#""nope""#), "unknown variant `nope`"),
        (
            error::<Rule>(r#""NoSuchRule""#),
            "unknown variant `NoSuchRule`",
        ),
        (
            error::<Branch>(r#""S9Anything""#),
            "unknown variant `S9Anything`",
        ),
        (
            error::<PaymentId>(r#""ref_demo_001""#),
            "expected an id like pay_demo_001",
        ),
        (
            error::<PaymentId>(r#""pay_demo_1""#),
            "expected an id like pay_demo_001",
        ),
        (
            error::<RequestId>(r#""req_99999999999""#),
            "expected an id like req_1",
        ),
        (error::<Card>(r#""AB""#), "a card label of one character"),
        (error::<Card>(r#""""#), "a card label of one character"),
        (error::<Text>("17"), "expected a string"),
        (
            error::<Decision>(r#"{"decision":"restarted","boot":1,"why":"?"}"#),
            "unknown field `why`",
        ),
        (
            error::<ClientOutput>(r#"{"output":"shout","rule":"PersistBeforeSend"}"#),
            "unknown variant `shout`",
        ),
        (
            error::<Command>(r#"{"command":"pay_order","order":"O"}"#),
            "missing field `amount`",
        ),
        (
            error::<ResponseBody>(r#"{"id":"pay_demo_001"}"#),
            "did not match any variant of untagged enum ResponseBody",
        ),
        (
            error::<ApiResponse>(r#"{"status":200,"body":{"data":[]},"etag":"x"}"#),
            "unknown field `etag`",
        ),
        (
            error::<UpstreamReply>(r#"{"reply":"charge","attempt":"att_001","state":"lost"}"#),
            "unknown variant `lost`",
        ),
    ];
    for (got, want) in cases {
        assert!(got.contains(want), "{got:?} does not say {want:?}");
    }
}
