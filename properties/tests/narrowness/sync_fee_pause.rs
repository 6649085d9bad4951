//! No property narrower than its name: the synchronous wait's 202 (UPSTREAM-01), the fee
//! snapshot (ATTEMPT-06) and a paused channel that states no reason (RATE-04).

use super::*;

/// The executor of `request`, waiting for the charge its step sent (no answer yet).
fn waits_for_the_upstream(request: ApiRequest) -> Event {
    let Event { what, .. } = handled_with_charge(request);
    let What::Handled {
        id,
        request,
        owner,
        business,
        mut handling,
    } = what
    else {
        unreachable!("handled_with_charge builds a Handled event")
    };
    handling.answer = None;
    ev(What::Handled {
        id,
        request,
        owner,
        business,
        handling,
    })
}

/// Its 202 at `at`, decided by `rule`.
fn answered_202(at: Millis, rule: Rule) -> Event {
    Event::new(
        at,
        What::Answered {
            id: RequestId(1),
            response: ApiResponse::ok(202, ResponseBody::Payments { data: vec![] }),
            rule,
            route: None,
        },
    )
}

/// UPSTREAM-01 and the property's name: on create and on confirm, a 202 told because
/// the wait ran out comes about 15 s after the step (12 s to 18 s), never at once and
/// never at or past the client's 20 s; a 202 an upstream error decided is no wait.
#[test]
fn a_202_after_the_wait_at_once_late_or_about_15_seconds() {
    let name = "platform-answers-202-after-about-15-seconds";
    for request in [
        req::create("k", "ORDER-1", 10000, "USD", 'A'),
        req::confirm("k", PAY, 'A'),
    ] {
        let run = |at: Millis, rule: Rule| {
            vec![
                waits_for_the_upstream(request.clone()),
                answered_202(at, rule),
            ]
        };
        for s in [12, 15, 18] {
            holds(name, &run(Millis::secs(s), Rule::SyncWait));
        }
        for s in [0, 11, 19, 20, 90] {
            violated(name, &run(Millis::secs(s), Rule::SyncWait));
        }
        holds(name, &run(Millis::ZERO, Rule::UnknownResult));
    }
    // A cancel's 202 (CANCEL-01) is not the charge's wait.
    holds(
        name,
        &[
            waits_for_the_upstream(req::cancel("k", PAY)),
            answered_202(Millis::ZERO, Rule::SyncWait),
        ],
    );
}

/// `payment(..)` with another fee rate.
fn with_fee(event: Event, fee: u32) -> Event {
    let What::PaymentStored {
        payment,
        mut stored,
    } = event.what
    else {
        unreachable!("payment builds a PaymentStored event")
    };
    stored.fee_rate_bps = fee;
    ev(What::PaymentStored { payment, stored })
}

/// ATTEMPT-06 and the property's name: a card retry keeps the rate the Payment was
/// created with, whatever changed in between; a first store sets it.
#[test]
fn fee_rate_of_a_card_retry_against_the_snapshot() {
    let name = "payments-keep-their-fee-snapshot";
    let created = payment(PaymentStatus::Processing, &[1], None);
    let failed = payment(PaymentStatus::Failed, &[1], Some(1));
    let retried = payment(PaymentStatus::Processing, &[1, 2], None);
    holds(name, &[created.clone(), failed.clone(), retried.clone()]);
    holds(name, &[with_fee(created.clone(), 350)]);
    violated(
        name,
        &[created.clone(), failed.clone(), with_fee(retried, 350)],
    );
    violated(name, &[created, with_fee(failed, 0)]);
}

/// RATE-04 and the property's name: a 503 temporarily_unavailable on every endpoint, to
/// a waiter or to nobody, says its code and retryable only.
#[test]
fn paused_answers_that_state_a_field_or_a_resource() {
    let name = "pause-answer-states-no-reason";
    let paused = |field: Option<Field>, related: Option<ResourceId>| {
        ApiResponse::error(ApiError {
            field,
            related_resource_id: related,
            ..ApiError::new(ErrorCode::TemporarilyUnavailable)
        })
    };
    for request in keyed_requests("k") {
        for routed in [true, false] {
            holds(name, &[leaves(&request, paused(None, None), routed)]);
            for wrong in [
                paused(Some(Field::Card), None),
                paused(None, Some(ResourceId::Payment(PAY))),
            ] {
                violated(name, &[leaves(&request, wrong, routed)]);
            }
        }
    }
}
