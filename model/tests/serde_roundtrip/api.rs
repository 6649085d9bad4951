//! Requests and responses: every endpoint and body, every response body and error code.

use super::*;

#[test]
fn every_error_code_and_endpoint_is_covered() {
    let codes: BTreeSet<String> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(codes.len(), ErrorCode::ALL.len());
    assert_eq!(codes, variant_names::<ErrorCode>(r#""nope""#));
    let tags: BTreeSet<String> = endpoints()
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["endpoint"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(tags, variant_names::<Endpoint>(r#"{"endpoint":"nope"}"#));
}

/// Every endpoint, with well-formed, empty, invalid and malformed bodies.
pub(crate) fn endpoints() -> Vec<Endpoint> {
    let create = CreatePaymentBody {
        merchant_order_no: Some("ORDER-1".into()),
        amount: Some(10_000),
        currency: Some("USD".into()),
        card: Some(Card('A')),
    };
    let endpoints = vec![
        Endpoint::CreatePayment {
            body: Json::Parsed(create.clone()),
        },
        Endpoint::CreatePayment {
            body: Json::Parsed(CreatePaymentBody::default()),
        },
        Endpoint::CreatePayment {
            body: Json::Parsed(CreatePaymentBody {
                amount: Some(-5),
                currency: Some("usd!".into()),
                merchant_order_no: Some(String::new().into()),
                card: None,
            }),
        },
        Endpoint::CreatePayment {
            body: Json::Malformed("{\"amount\":".into()),
        },
        Endpoint::CreatePayment {
            body: Json::Malformed("{\"amount\":10000,\"merchant_order_no\":\"ORDER-1\"}".into()),
        },
        Endpoint::ConfirmPayment {
            payment_id: PaymentId(1),
            body: Json::Parsed(ConfirmBody {
                card: Some(Card('B')),
            }),
        },
        Endpoint::ConfirmPayment {
            payment_id: PaymentId(1_234),
            body: Json::Malformed("not json at all".into()),
        },
        Endpoint::CancelPayment {
            payment_id: PaymentId(1),
        },
        Endpoint::CreateCheckoutSession {
            body: Json::Parsed(SessionBody {
                merchant_order_no: Some("ORDER-2".into()),
                amount: Some(5_000),
                currency: Some("EUR".into()),
            }),
        },
        Endpoint::CreateRefund {
            body: Json::Parsed(RefundBody {
                payment_id: Some(PaymentId(1)),
                merchant_refund_no: Some("R-1".into()),
                amount: Some(0),
            }),
        },
        Endpoint::CreateRefund {
            body: Json::Malformed(String::new().into()),
        },
        Endpoint::GetPayment {
            payment_id: PaymentId(7),
        },
        Endpoint::ListPayments {
            merchant_order_no: "ORDER-1".into(),
        },
        Endpoint::GetRefund {
            refund_id: RefundId(3),
        },
        Endpoint::ListRefundsByNo {
            merchant_refund_no: "R-1".into(),
        },
        Endpoint::ListRefundsProcessing,
        Endpoint::Other {
            method: Method::Delete,
            path: "/v1/payments/pay_demo_001".into(),
        },
        Endpoint::Other {
            method: Method::Get,
            path: "/v1/nowhere?x=1".into(),
        },
    ];
    endpoints
}

#[test]
fn requests_round_trip_for_every_endpoint_and_body() {
    for endpoint in endpoints() {
        round_trip(&endpoint);
        for idempotency_key in [None, Some(Text::from("payment.create:ORDER-1:1"))] {
            let request = ApiRequest {
                api_key: ApiKeyId(2),
                idempotency_key,
                endpoint: endpoint.clone(),
            };
            round_trip(&request);
        }
    }
    // The forms traces already use, unchanged.
    let request = ApiRequest {
        api_key: ApiKeyId(1),
        idempotency_key: Some("K".into()),
        endpoint: Endpoint::CreatePayment {
            body: Json::Malformed("{".into()),
        },
    };
    assert_eq!(
        round_trip(&request),
        r#"{"api_key":"ak_1","idempotency_key":"K","endpoint":"create_payment","body":"{"}"#
    );
    let list = Endpoint::ListRefundsProcessing;
    assert_eq!(
        round_trip(&list),
        r#"{"endpoint":"list_refunds_processing"}"#
    );
    for method in [Method::Get, Method::Post, Method::Delete] {
        assert_eq!(round_trip(&method), format!("\"{method}\""));
    }
}

#[test]
fn responses_round_trip_for_every_body_and_error_code() {
    let failure = Failure {
        code: FailureCode::CardDeclined,
        attempt_id: AttemptId(1),
    };
    let mut bodies = vec![
        ResponseBody::Payment(payment(PaymentStatus::Failed, Some(failure))),
        ResponseBody::Refund(refund(RefundStatus::Processing)),
        ResponseBody::Session(SessionView {
            id: SessionId(1),
            payment_id: PaymentId(1),
            expires_at: Millis::mins(30),
        }),
        ResponseBody::Payments { data: vec![] },
        ResponseBody::Payments {
            data: vec![
                payment(PaymentStatus::Processing, None),
                payment(PaymentStatus::Succeeded, None),
            ],
        },
        ResponseBody::Refunds { data: vec![] },
        ResponseBody::Refunds {
            data: vec![refund(RefundStatus::Succeeded)],
        },
    ];
    for status in PAYMENT_STATUSES {
        bodies.push(ResponseBody::Payment(payment(status, None)));
    }
    for status in REFUND_STATUSES {
        bodies.push(ResponseBody::Refund(refund(status)));
    }
    for &code in ErrorCode::ALL {
        assert_eq!(round_trip(&code), format!("\"{}\"", code.as_str()));
        bodies.push(ResponseBody::Error {
            error: ApiError::new(code),
        });
    }
    let fields = [
        Field::IdempotencyKey,
        Field::Body,
        Field::MerchantOrderNo,
        Field::Amount,
        Field::Currency,
        Field::PaymentId,
        Field::MerchantRefundNo,
        Field::Card,
    ];
    for field in fields {
        bodies.push(ResponseBody::Error {
            error: ApiError::new(ErrorCode::InvalidRequest).with_field(field),
        });
    }
    for related in [
        ResourceId::Payment(PaymentId(1)),
        ResourceId::Refund(RefundId(1)),
        ResourceId::Session(SessionId(1)),
    ] {
        round_trip(&related);
        bodies.push(ResponseBody::Error {
            error: ApiError::new(ErrorCode::OrderNoConflict).related(related),
        });
    }
    for body in bodies {
        match &body {
            ResponseBody::Payment(_)
            | ResponseBody::Refund(_)
            | ResponseBody::Session(_)
            | ResponseBody::Payments { .. }
            | ResponseBody::Refunds { .. }
            | ResponseBody::Error { .. } => {}
        }
        round_trip(&body);
        let status = body_status(&body);
        round_trip(&ApiResponse::ok(status, body.clone()));
        let mut limited = ApiResponse::ok(status, body);
        limited.retry_after_s = Some(2);
        round_trip(&limited);
    }
}

fn body_status(body: &ResponseBody) -> u16 {
    match body {
        ResponseBody::Error { error } => error.code.http_status(),
        _ => 200,
    }
}

/// The empty lists are told apart: a refund list says so; a payment list keeps its form.
#[test]
fn empty_lists_keep_their_kind() {
    let payments = ResponseBody::Payments { data: vec![] };
    let refunds = ResponseBody::Refunds { data: vec![] };
    assert_eq!(round_trip(&payments), r#"{"data":[]}"#);
    assert_eq!(round_trip(&refunds), r#"{"list":"refunds","data":[]}"#);
    let e = error::<ResponseBody>(r#"{"list":"payments","data":[]}"#);
    assert!(e.contains("did not match any variant"), "{e}");
}
