//! The branch point of CKO-01 and EXPIRY-01 (A-CKO-ANY-STATUS): a checkout session for
//! the order of an expired Payment.

use super::*;

fn session_of(payment: PaymentId) -> ApiResponse {
    ApiResponse {
        status: 201,
        retry_after_s: None,
        body: ResponseBody::Session(SessionView {
            id: SessionId(2),
            payment_id: payment,
            expires_at: Millis::hours(25),
        }),
    }
}

/// An expired Payment's order: 201 with a session of that Payment, or 422
/// payment_expired; a session of another Payment, or another 422, is neither. While the
/// Payment is not expired the point is not reached.
#[test]
fn a_checkout_session_for_an_expired_payment_gets_one_of_the_two() {
    let name = "branches-answer-one-of-the-two";
    let again = req::session("k2", "ORDER-1", 10000, "USD");
    let with = |status: PaymentStatus, answer: ApiResponse| {
        vec![
            super::super::stored_as(PAY, M, ENV, "ORDER-1", status),
            step(2, &again, MINE, Some(answer), vec![], false),
        ]
    };
    let expired = PaymentStatus::Expired;
    holds(name, &with(expired, session_of(PAY)));
    holds(name, &with(expired, error(ErrorCode::PaymentExpired)));
    holds(name, &with(expired, error(ErrorCode::RateLimited)));
    violated(name, &with(expired, session_of(PaymentId(2))));
    violated(name, &with(expired, error(ErrorCode::PaymentNotCancelable)));
    // Not expired: no point here (CKO-01's new session is judged elsewhere).
    holds(
        name,
        &with(
            PaymentStatus::Succeeded,
            error(ErrorCode::PaymentNotCancelable),
        ),
    );
}
