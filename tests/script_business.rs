//! `NAME: for order ORDER [db=N] POST /v1/payments …`: a request line filed under a
//! business order, as the sandbox files a create it reads off the wire. Two creates of
//! one business order under two order numbers, both captured, violate
//! `client-never-charges-an-order-twice`; the same lines without the filing do not. The
//! filing survives the export (`script_from_tape_filed`) and reads back; bad use is a
//! one-line parse error.

use payhub_model::event::BusinessOrder;
use payhub_properties::ScriptReport as Report;
use payhub_properties::{AlwaysCheck, Kind, PROPERTIES};
use payhub_sim::Choice;
use payhub_sim::script::ast::Action;
use payhub_sim::script::{self, Script};
use std::collections::BTreeMap;

fn always() -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .filter(|p| p.over_facts() && p.kind() == Kind::Always)
        .map(|p| p.name)
        .collect()
}

fn parse(text: &str) -> Script {
    script::parse("business.pha", text.as_bytes(), &always())
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run(text: &str) -> Report {
    let mut script = parse(text);
    script.config = script.config.clone();
    let mut check = AlwaysCheck {
        config: &script.config,
    };
    script::run(&script, &mut check)
}

fn create(order: &str, key: &str) -> String {
    format!(
        r#"POST /v1/payments  Idempotency-Key: {key}  {{"merchant_order_no":"{order}","amount":10000,"currency":"USD","card":"A"}}"#
    )
}

/// The "do not do this" client's session: the first create's answer is lost, the order
/// is resubmitted under a new number; both are captured. `filing` goes after `A: `.
fn resubmitted(filing: &str) -> String {
    format!(
        "use platform=reference delivery=manual\n\
         webhooks none\n\
         A: {filing}{}\n\
         deliver m1\n\
         acquire u1 approve\n\
         deliver u2\n\
         drop m2\n\
         A: {filing}{}\n\
         deliver m3\n\
         acquire u3 approve\n",
        create("ORDER-1", "K1"),
        create("ORDER-1-retry", "K2"),
    )
}

const PROPERTY: &str = "client-never-charges-an-order-twice";

#[test]
fn script_business_filed_resubmission_is_the_double_charge() {
    let report = run(&resubmitted("for order ORDER-1 db=2 "));
    assert!(!report.passed(), "{}", report.to_text());
    let v = report.violation.as_ref().expect("a violation");
    assert_eq!(v.0.property, PROPERTY, "{}", report.to_text());
    // With the line that expects it, the run passes.
    let expected = run(&format!(
        "{}expect violation {PROPERTY}\n",
        resubmitted("for order ORDER-1 ")
    ));
    assert!(expected.passed(), "{}", expected.to_text());
    // Without the filing, two order numbers are two business orders: nothing is violated.
    let unfiled = run(&resubmitted(""));
    assert!(unfiled.passed(), "{}", unfiled.to_text());
    assert!(unfiled.violation.is_none());
    // Each under its own order number: two orders, one capture each.
    let own = run(&resubmitted("").replacen("A: POST", "A: for order ORDER-1 POST", 1));
    assert!(own.violation.is_none(), "{}", own.to_text());
}

#[test]
fn script_business_filing_reads_back_from_the_export() {
    let source = parse(&resubmitted("for order ORDER-1 db=2 "));
    let mut tape = Vec::new();
    let mut filed: BTreeMap<usize, BusinessOrder> = BTreeMap::new();
    for s in &source.statements {
        match &s.action {
            Action::Request {
                server,
                request,
                business,
            } => {
                if let Some(b) = business {
                    filed.insert(tape.len(), b.clone());
                }
                tape.push(Choice::Send {
                    merchant: source.servers[*server].node,
                    request: request.clone().into(),
                });
            }
            Action::Step(c) => tape.push(c.clone()),
            other => panic!("not a step: {other:?}"),
        }
    }
    assert_eq!(filed.len(), 2);
    let text = script::script_from_tape_filed(
        &source.config,
        &tape,
        &filed,
        Some(PROPERTY),
        "filed round trip",
    )
    .expect("exports");
    assert_eq!(
        text.matches("A: for order ORDER-1 db=2 POST /v1/payments")
            .count(),
        2,
        "{text}"
    );
    let back = parse(&text);
    let business: Vec<Option<BusinessOrder>> = back
        .statements
        .iter()
        .filter_map(|s| match &s.action {
            Action::Request { business, .. } => Some(business.clone()),
            _ => None,
        })
        .collect();
    let want = Some(BusinessOrder {
        db: 2,
        order: "ORDER-1".into(),
    });
    assert_eq!(business, vec![want.clone(), want]);
    let report = run(&text);
    assert!(report.passed(), "{}", report.to_text());
    // A filing on a step that is not a request is refused.
    let wrong: BTreeMap<usize, BusinessOrder> = [(1, filed[&0].clone())].into();
    let err = script::script_from_tape_filed(&source.config, &tape, &wrong, None, "x")
        .expect_err("step 2 is a delivery");
    assert_eq!(
        err,
        payhub_sim::error::ExportError::FiledNotARequest(2),
        "{err}"
    );
    // An order number with a space is written as a JSON string and reads back.
    let spaced: BTreeMap<usize, BusinessOrder> = [(
        0,
        BusinessOrder {
            db: 0,
            order: "ORDER 1".into(),
        },
    )]
    .into();
    let text =
        script::script_from_tape_filed(&source.config, &tape, &spaced, None, "x").expect("exports");
    assert!(text.contains("A: for order \"ORDER 1\" POST"), "{text}");
    parse(&text);
}

fn parse_error(line: &str) -> String {
    let text = format!("{line}\n");
    match script::parse("bad.pha", text.as_bytes(), &always()) {
        Ok(_) => panic!("parsed: {line}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn script_business_bad_filing_is_one_clear_error() {
    let create = create("ORDER-1", "K1");
    let cases: &[(String, &str)] = &[
        (
            format!("A: for ordr ORDER-1 {create}"),
            "bad.pha:1:8: expected 'for order ORDER', found 'for ordr' (did you mean 'order'?)",
        ),
        (
            "A: for order".to_owned(),
            "bad.pha:1:13: 'for order' needs an order number (ORDER-1)",
        ),
        (
            format!("A: for order {create}"),
            "bad.pha:1:14: 'for order' needs an order number before the method",
        ),
        (
            "A: for order ORDER-1 GET /v1/payments/pay_demo_001".to_owned(),
            "bad.pha:1:22: 'for order' files a request under a business order: it goes on a POST /v1/payments, POST /v1/payments/{id}/confirm or POST /v1/refunds line",
        ),
        (
            format!("A: for order ORDER-1 db=x {create}"),
            "bad.pha:1:22: db= is a database number (0 … 255), not 'x'",
        ),
        (
            format!("A: for order ORDER-1 db=300 {create}"),
            "bad.pha:1:22: db= is a database number (0 … 255), not '300'",
        ),
    ];
    for (line, want) in cases {
        assert_eq!(parse_error(line), *want, "{line}");
    }
    let typo = parse_error(&format!("A: fro order ORDER-1 {create}"));
    assert!(typo.contains("or 'for order ORDER POST …'"), "{typo}");
}
