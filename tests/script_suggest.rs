//! A script's near misses get a did-you-mean at their line and column: a statement, a
//! server or a statement written `WORD:`, an endpoint, an expectation.

use payhub_sim::script;

fn error(source: &str) -> String {
    let names = ["client-never-charges-an-order-twice"];
    script::parse("t.pha", source.as_bytes(), &names)
        .expect_err("a script error")
        .to_string()
}

#[test]
fn near_misses_in_scripts_name_what_was_meant() {
    let create = r#"{"merchant_order_no":"O","amount":1,"currency":"USD","card":"A"}"#;
    let cases = [
        (
            "wiat 15s\n".to_owned(),
            "t.pha:1:1: unknown statement 'wiat' (did you mean 'wait'?)",
        ),
        ("upstrem: approve\n".to_owned(), "did you mean 'upstream'?"),
        (
            format!("A: POST /v1/paymnets  Idempotency-Key: K  {create}\n"),
            "unknown endpoint POST /v1/paymnets (did you mean POST /v1/payments?)",
        ),
        (
            "A: GET /v1/payment/pay_demo_001\n".to_owned(),
            "did you mean GET /v1/payments/{id}?",
        ),
        (
            "expect ledgr: charges = 1\n".to_owned(),
            "did you mean 'expect ledger:'?",
        ),
    ];
    for (source, want) in cases {
        let e = error(&source);
        assert!(e.contains(want), "{source}: {e}");
    }
}

/// A path far from every route is still a request the platform answers 404, as long as it
/// carries no body.
#[test]
fn a_path_no_route_resembles_is_a_404_request_without_a_body() {
    let names: [&str; 0] = [];
    assert!(script::parse("t.pha", b"A: GET /admin\n", &names).is_ok());
    let e = script::parse("t.pha", b"A: POST /admin  {\"x\":1}\n", &names)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an endpoint the platform routes"), "{e}");
}
