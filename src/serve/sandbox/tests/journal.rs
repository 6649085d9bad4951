//! The merchant journal: the properties over the merchant's database judge what it
//! tells, its carts decide "the same purchase", and a bad line refuses the whole post.

use super::*;
use crate::serve::witness::Session;
use payhub_properties::verdict::{Status, Verdict};

fn verdict_of(sb: &Sandbox, name: &str) -> Verdict {
    session_verdicts(&Session::of(sb))
        .into_iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no property {name}"))
}

fn markdown(sb: &Sandbox) -> String {
    session_markdown(sb.trace(), &Session::of(sb))
}

const TWICE: &str = "client-never-charges-an-order-twice";
const FULFILS: &str = "client-fulfils-an-order-once-when-succeeded";
const PENDING: &str = "client-keeps-an-order-pending-until-its-payment-is-final";
const CLOSED: &str = "client-never-closes-a-captured-order";

/// Two purchases of one amount by one merchant at once: the first waits for the
/// acquirer (card D, 202) while the second is paid; both are captured.
fn two_purchases_at_once() -> Sandbox {
    let mut sb = plain();
    assert_eq!(create(&mut sb, "k1", "ORDER-1", 100, 'D').status, 202);
    assert_eq!(create(&mut sb, "k2", "ORDER-2", 100, 'A').status, 201);
    sb.advance(Millis::hours(1)).unwrap();
    assert_eq!(
        json(&get(&mut sb, "/v1/payments/pay_demo_001"))["status"],
        "succeeded"
    );
    assert_eq!(captures(&sb), 2);
    sb
}

#[test]
fn two_purchases_of_one_amount_at_once_hold_with_carts_and_name_the_wire_reading_without() {
    let mut sb = two_purchases_at_once();
    // Without a journal: the wire's reading, named, reads them as one purchase.
    assert_eq!(verdict_of(&sb, TWICE).status, Status::Violated);
    let md = markdown(&sb);
    assert!(md.contains("the same purchase read from the wire"), "{md}");
    let carts = "{\"order\":\"ORDER-1\",\"cart\":\"CART-1\"}\n{\"order\":\"ORDER-2\",\"cart\":\"CART-2\"}\n";
    assert_eq!(sb.post_journal(1, carts), Ok(2));
    assert_eq!(verdict_of(&sb, TWICE).status, Status::Holds);
    let md = markdown(&sb);
    assert!(md.contains("the cart ids of the merchant journal"), "{md}");
    // One cart for both: the same purchase captured twice.
    let one = "{\"order\":\"ORDER-2\",\"cart\":\"CART-1\"}\n";
    assert_eq!(sb.post_journal(1, one), Ok(1));
    let v = verdict_of(&sb, TWICE);
    assert_eq!(v.status, Status::Violated);
    let detail = v.detail.unwrap_or_default();
    assert!(
        detail.contains("pay_demo_001") && detail.contains("pay_demo_002"),
        "{detail}"
    );
}

fn paid() -> Sandbox {
    let mut sb = plain();
    assert_eq!(create(&mut sb, "k1", "ORDER-1", 100, 'A').status, 201);
    sb
}

#[test]
fn res_07_an_order_fulfilled_twice_is_named_and_once_holds() {
    let mut sb = paid();
    assert_eq!(verdict_of(&sb, FULFILS).status, Status::CannotJudge);
    let once = "{\"order\":\"ORDER-1\",\"state\":\"paid\",\"payment\":\"pay_demo_001\",\"version\":2}\n{\"order\":\"ORDER-1\",\"fulfilled\":\"pay_demo_001\"}\n";
    assert_eq!(sb.post_journal(1, once), Ok(2));
    for name in [FULFILS, PENDING, CLOSED] {
        assert_eq!(verdict_of(&sb, name).status, Status::Holds, "{name}");
    }
    assert_eq!(
        sb.post_journal(1, "{\"order\":\"ORDER-1\",\"fulfilled\":\"pay_demo_001\"}"),
        Ok(1)
    );
    let v = verdict_of(&sb, FULFILS);
    assert_eq!(v.status, Status::Violated);
    assert!(v.detail.unwrap_or_default().contains("a second time"));
}

#[test]
fn res_04_an_order_shown_failed_on_manual_review_is_named() {
    let mut sb = plain();
    assert_eq!(create(&mut sb, "k1", "ORDER-1", 100, 'E').status, 202);
    sb.advance(Millis::hours(2)).unwrap();
    let seen = get(&mut sb, "/v1/payments/pay_demo_001");
    assert_eq!(json(&seen)["resolution_status"], "manual_review");
    let version = json(&seen)["version"].as_u64().unwrap();
    let pending = format!(
        "{{\"order\":\"ORDER-1\",\"state\":\"pending\",\"payment\":\"pay_demo_001\",\"version\":{version}}}"
    );
    assert_eq!(sb.post_journal(1, &pending), Ok(1));
    assert_eq!(verdict_of(&sb, PENDING).status, Status::Holds);
    let failed = pending.replace("pending", "failed");
    assert_eq!(sb.post_journal(1, &failed), Ok(1));
    let v = verdict_of(&sb, PENDING);
    assert_eq!(v.status, Status::Violated);
    assert!(v.detail.unwrap_or_default().contains("ORDER-1"));
    assert!(markdown(&sb).starts_with("# Sandbox verdict\n\n**VIOLATED**"));
}

#[test]
fn a_malformed_line_refuses_the_post_naming_the_line_and_the_field() {
    let mut sb = paid();
    let cases = [
        (
            "{\"order\":\"ORDER-1\",\"cart\":\"C\"}\nnot json",
            2,
            "(line)",
        ),
        (
            "{\"order\":\"ORDER-1\",\"state\":\"paidd\",\"payment\":\"pay_demo_001\",\"version\":1}",
            1,
            "state",
        ),
        (
            "{\"order\":\"ORDER-1\",\"state\":\"paid\",\"version\":1}",
            1,
            "payment",
        ),
        (
            "{\"order\":\"ORDER-1\",\"state\":\"paid\",\"payment\":\"pay_demo_001\"}",
            1,
            "version",
        ),
        (
            "{\"order\":\"ORDER-1\",\"fulfilled\":\"pay_1\"}",
            1,
            "fulfilled",
        ),
        (
            "{\"order\":\"ORDER-1\",\"cart\":\"C\",\"colour\":1}",
            1,
            "colour",
        ),
        ("{\"cart\":\"C\"}", 1, "order"),
        ("\n\n{\"order\":\"ORDER-9\",\"cart\":\"C\"}", 3, "order"),
    ];
    for (body, line, field) in cases {
        let refused = sb.post_journal(1, body).unwrap_err();
        assert_eq!(
            (refused.line, refused.field.as_str()),
            (line, field),
            "{body}: {refused}"
        );
    }
    let unseen = sb
        .post_journal(1, "{\"order\":\"ORDER-9\",\"cart\":\"C\"}")
        .unwrap_err();
    assert!(
        unseen.to_string().contains("ORDER-9 was never sent"),
        "{unseen}"
    );
    // Nothing of a refused post was kept.
    assert_eq!(verdict_of(&sb, FULFILS).status, Status::CannotJudge);
}
