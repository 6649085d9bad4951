//! The contract's scenarios S1–S13, their alternative branches (S4, S5, S8) and the
//! contract findings, run from the scripts of `scenarios/`: the files a reviewer reads
//! are the runs these tests pin.
//!
//! Each test runs one script in the world (every *always* property checked after every
//! step, every `expect` line of the script checked at its line), pins its text report
//! with an insta snapshot (`tests/snapshots/`), and asserts the contract's own facts
//! again in Rust: the AC number, the status and error code of every request in order,
//! and the scenario's invariant on the acquirer's ledger.

use payhub_model::client::OrderState;
use payhub_model::{Assumption, Card, ErrorCode, LedgerEntry, PaymentId, PaymentStatus, Rule};
use payhub_properties::ScriptReport as Report;
use payhub_properties::liveness::{self, LivenessVerdict};
use payhub_properties::{AlwaysCheck, Kind, PROPERTIES};
use payhub_sim::script::{self, Script};
use std::path::PathBuf;

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// The scenario files, sorted, with their names (`S07`, `S04b`, `F01`).
fn scenario_files() -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pha"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_str().unwrap().to_owned();
            (stem.split('-').next().unwrap().to_owned(), p)
        })
        .collect();
    files.sort();
    files
}

/// The names `expect violation` accepts, as `payhub-verify run` reads them: the *always*
/// properties of the facts, and the wire properties a `use wire=judged` script has
/// judged at its end (by `run` itself: [`wire_judged`]).
fn always() -> Vec<&'static str> {
    let wire = PROPERTIES
        .iter()
        .filter(|p| p.wire_only() && p.patterns().is_some_and(|w| !w.assumes_complete_log))
        .map(|p| p.name);
    PROPERTIES
        .iter()
        .filter(|p| p.over_facts() && p.kind() == Kind::Always)
        .map(|p| p.name)
        .chain(wire)
        .collect()
}

/// Runs a `use wire=judged` script as a user does, `payhub-verify run FILE` (the wire
/// properties are judged by the command at the end of the run): its exit and output.
fn wire_judged(name: &str) -> (i32, String) {
    let (_, path) = scenario_files()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no scenarios/{name}-….pha"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_payhub-verify"))
        .arg("run")
        .arg(&path)
        .output()
        .expect("payhub-verify runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// Parses and runs scenario `name`; the report names the file relative to the repository.
fn run(name: &str) -> (Script, Report) {
    let (_, path) = scenario_files()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no scenarios/{name}-….pha"));
    let label = format!("scenarios/{}", path.file_name().unwrap().to_str().unwrap());
    let bytes = std::fs::read(&path).expect("readable scenario");
    let mut script = script::parse(&label, &bytes, &always()).unwrap_or_else(|e| panic!("{e}"));
    script.config = script.config.clone();
    let mut check = AlwaysCheck {
        config: &script.config,
    };
    let report = script::run(&script, &mut check);
    (script, report)
}

/// Runs scenario `name`, requires that it passes, and pins its report.
fn pinned(name: &str) -> (Script, Report) {
    let (script, report) = run(name);
    assert!(
        report.passed(),
        "{name} failed:\n{}\n{}",
        report.failures().join("\n"),
        report.to_text()
    );
    let stem = PathBuf::from(&report.script.file)
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    insta::assert_snapshot!(stem, report.to_text());
    (script, report)
}

/// Every request line's server and outcome, in order: `("A", "409 idempotency_conflict")`.
fn answers(r: &Report) -> Vec<(String, String)> {
    r.exchanges
        .iter()
        .map(|x| (x.server.clone(), x.outcome()))
        .collect()
}

fn a(outcomes: &[&str]) -> Vec<(String, String)> {
    outcomes
        .iter()
        .map(|o| match o.split_once(' ') {
            Some((s, rest)) if s.len() == 1 => (s.to_owned(), rest.to_owned()),
            _ => ("A".to_owned(), (*o).to_owned()),
        })
        .collect()
}

fn captures(r: &Report) -> usize {
    r.world
        .acquirer
        .ledger
        .entries
        .iter()
        .filter(|e| matches!(e, LedgerEntry::Capture { .. }))
        .count()
}

fn code_of(r: &Report, i: usize) -> Option<ErrorCode> {
    r.exchanges[i]
        .response
        .as_ref()
        .and_then(|x| x.error_code())
}

/// A-RETRY-AFTER-429, reading zero: a 429 with `Retry-After: 0` holds every property;
/// the retry at once executes once, a client's five tries at once charge nothing.
#[test]
fn s10b_rate_03_429_with_retry_after_0_is_retried_at_once_and_holds() {
    let (s, r) = pinned("S10b");
    assert!(assumed(&s).contains(&"A-RETRY-AFTER-429"));
    assert_eq!(
        r.exchanges[0].response.as_ref().unwrap().retry_after_s,
        Some(0)
    );
    assert_eq!(
        answers(&r)[..2].to_vec(),
        a(&["B 429 rate_limited", "B 201"])
    );
    assert_eq!(captures(&r), 2);
}

/// A-SYNC-WAIT-ABOUT: a platform that waits 90 s for the upstream answers its 202 long
/// past the client's 20 s; the synchronous-wait property flags it.
#[test]
fn f26_upstream_01_a_202_after_90_seconds_is_flagged() {
    let (s, r) = pinned("F26");
    assert!(assumed(&s).contains(&"A-SYNC-WAIT-ABOUT"));
    let v = r.violation.as_ref().expect("flagged");
    assert_eq!(v.0.property, "platform-answers-202-after-about-15-seconds");
    assert_eq!(captures(&r), 0);
}

/// SCHED-01 stops queries at failed too: a client whose schedule goes on after failed
/// is flagged at its first query of the failed Payment (the reference client is not).
#[test]
fn f27_sched_01_a_client_that_queries_a_failed_payment_again_is_flagged() {
    let (_, r) = pinned("F27");
    let v = r.violation.as_ref().expect("flagged");
    assert_eq!(v.0.property, "client-stops-querying-at-a-final-status");
    assert!(v.0.detail.contains("pay_demo_001"), "{}", v.0.detail);
    assert_eq!(captures(&r), 0);
}

/// REFUND-04 (S11: "do not change the refund number and apply again"): a refund whose
/// answer was lost, applied again under a new number, is refunded twice by the platform
/// (new business) and flagged from the wire by `run` (`use wire=judged`).
#[test]
fn f28_refund_04_a_refund_renumbered_after_a_lost_answer_is_flagged() {
    let (code, out) = wire_judged("F28");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("the expected violation witnessed: client-keeps-the-refund-number-while-unresolved [REFUND-04"),
        "{out}"
    );
    assert!(out.contains("merchant_refund_no R-002"), "{out}");
    // The platform took the new number as new business: two refunds on the ledger.
    let (_, r) = run("F28");
    let refunds = r
        .world
        .acquirer
        .ledger
        .entries
        .iter()
        .filter(|e| matches!(e, LedgerEntry::Refund { .. }))
        .count();
    assert_eq!(refunds, 2);
}

/// A-S13-REFERENCE-CODE read the reference code's way: five 503s leave the order
/// confirming and queried; paid once the channel is back, one charge, nothing violated.
#[test]
fn f17b_rate_04_five_503s_read_as_result_unknown_are_queried_and_paid_once() {
    let (s, r) = pinned("F17b");
    assert!(assumed(&s).contains(&"A-S13-REFERENCE-CODE"));
    assert!(r.violation.is_none(), "{:?}", r.violation);
    assert_eq!(captures(&r), 1);
}

/// A-429-REFERENCE-CODE read RATE-01's way: five 429s refuse the order for now; paid
/// later under the same key, one charge, nothing violated.
#[test]
fn f24b_rate_01_five_429s_read_as_not_accepted_are_paid_later_under_the_same_key() {
    let (s, r) = pinned("F24b");
    assert!(assumed(&s).contains(&"A-429-REFERENCE-CODE"));
    assert!(r.violation.is_none(), "{:?}", r.violation);
    assert_eq!(captures(&r), 1);
}

/// A-REFUND-REVIEW: a review that rejects ends the refund failed, never sent upstream.
#[test]
fn f10b_sched_03_a_refund_rejected_in_review_is_failed_and_never_sent() {
    let (s, r) = pinned("F10b");
    assert!(assumed(&s).contains(&"A-REFUND-REVIEW"));
    assert!(r.violation.is_none(), "{:?}", r.violation);
    let refunds = r
        .world
        .acquirer
        .ledger
        .entries
        .iter()
        .filter(|e| matches!(e, LedgerEntry::Refund { .. }))
        .count();
    assert_eq!(refunds, 1, "only the second refund moved money");
}

/// Every scenario file is pinned by a test below, and every test's file exists.
#[test]
fn every_scenario_file_has_a_test() {
    let names: Vec<String> = scenario_files().into_iter().map(|(n, _)| n).collect();
    let tested = [
        "F01", "F01b", "F01c", "F02", "F03", "F04", "F05", "F06", "F07", "F08", "F09", "F10",
        "F10b", "F11", "F12", "F13", "F14", "F15", "F16", "F17", "F17b", "F18", "F19", "F20",
        "F21", "F22", "F23", "F24", "F24b", "F25", "F26", "F27", "F28", "S01", "S02", "S02b",
        "S03", "S04", "S04b", "S05", "S05b", "S06", "S07", "S08", "S08b", "S09", "S10", "S10b",
        "S11", "S12", "S13",
    ];
    assert_eq!(names, tested);
    // S1–S13 are all there, and the three "A or B" scenarios have both branches.
    for n in 1..=13 {
        assert!(names.contains(&format!("S{n:02}")), "S{n} is missing");
    }
    for b in ["S04b", "S05b", "S08b"] {
        assert!(names.contains(&b.to_owned()));
    }
}

#[test]
fn s01_replay_01_timeout_then_retry_with_k_returns_the_same_payment_once() {
    let (s, r) = pinned("S01");
    assert_eq!(s.ac(), Some("AC-014"));
    assert_eq!(Rule::ReplayReusesObject.ac(), s.ac());
    assert_eq!(answers(&r), a(&["lost", "200"]));
    assert_eq!(captures(&r), 1);
}

#[test]
fn s02_unknown_01_500_after_executing_then_retry_with_k_returns_the_original() {
    let (s, r) = pinned("S02");
    assert_eq!(s.ac(), Some("AC-069"));
    assert_eq!(Rule::FiveXxMayHaveExecuted.ac(), s.ac());
    assert_eq!(answers(&r), a(&["500 internal_error", "200", "200"]));
    let retry = r.exchanges[1].response.as_ref().unwrap();
    assert_eq!(retry.payment().unwrap().id, PaymentId(1));
    assert_eq!(captures(&r), 1);
}

#[test]
fn s02b_unknown_01_500_before_executing_then_retry_with_k_executes_once() {
    let (s, r) = pinned("S02b");
    assert_eq!(s.ac(), Some("AC-069"));
    assert_eq!(answers(&r), a(&["500 internal_error", "201"]));
    assert_eq!(captures(&r), 1);
}

#[test]
fn s03_conflict_01_same_key_different_amount_201_then_409_idempotency_conflict() {
    let (s, r) = pinned("S03");
    assert_eq!(s.ac(), Some("AC-016"));
    assert_eq!(Rule::IdempotencyConflict.ac(), s.ac());
    assert_eq!(answers(&r), a(&["201", "409 idempotency_conflict"]));
    assert_eq!(code_of(&r, 1), Some(ErrorCode::IdempotencyConflict));
    let original = r.world.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(
        original.amount, 10000,
        "the original transaction is unchanged"
    );
    assert_eq!(captures(&r), 1);
}

#[test]
fn s04_order_01_new_key_same_order_conflict_branch_409_order_no_conflict() {
    let (s, r) = pinned("S04");
    assert_eq!(s.ac(), Some("AC-017"));
    assert_eq!(Rule::OrderNoNewKey.ac(), s.ac());
    assert_eq!(answers(&r), a(&["201", "409 order_no_conflict", "200"]));
    let error = match &r.exchanges[1].response.as_ref().unwrap().body {
        payhub_model::ResponseBody::Error { error } => error.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        error.related_resource_id.map(|x| x.to_string()).as_deref(),
        Some("pay_demo_001")
    );
    assert_eq!(r.world.platform.payments().len(), 1);
    assert_eq!(r.world.acquirer.ledger.captures_with(Card('B')), 0);
}

#[test]
fn s04b_order_01_new_key_same_order_existing_object_branch_200_same_payment() {
    let (s, r) = pinned("S04b");
    assert_eq!(s.ac(), Some("AC-017"));
    assert_eq!(answers(&r), a(&["201", "200", "200"]));
    for x in &r.exchanges {
        assert_eq!(
            x.response.as_ref().unwrap().payment().unwrap().id,
            PaymentId(1)
        );
    }
    assert_eq!(r.world.platform.payments().len(), 1);
    assert_eq!(r.world.acquirer.ledger.captures_with(Card('B')), 0);
}

#[test]
fn s05_conc_02_concurrent_same_key_wait_branch_201_and_200_one_execution() {
    let (s, r) = pinned("S05");
    assert_eq!(s.ac(), Some("AC-015"));
    assert_eq!(Rule::ConcurrentWaitSameObject.ac(), s.ac());
    assert_eq!(answers(&r), a(&["A 201", "B 200"]));
    assert_eq!(captures(&r), 1);
}

#[test]
fn s05b_conc_03_concurrent_same_key_in_progress_branch_409_then_retry_200() {
    let (s, r) = pinned("S05b");
    assert_eq!(s.ac(), Some("AC-015"));
    assert_eq!(
        answers(&r),
        a(&["A 201", "B 409 operation_in_progress", "B 200"])
    );
    assert_eq!(captures(&r), 1);
}

#[test]
fn s06_replay_02_same_key_ten_times_one_payment_one_charge() {
    let (s, r) = pinned("S06");
    assert_eq!(s.ac(), Some("AC-014"));
    let mut expected = vec!["201"];
    expected.extend(["200"; 9]);
    assert_eq!(answers(&r), a(&expected));
    assert_eq!(r.world.platform.payments().len(), 1);
    assert_eq!(r.world.platform.attempts().len(), 1);
    assert_eq!(captures(&r), 1);
}

/// EFFECT-02: "只有一个 Payment、一次扣款、一次计费" (one Payment, one charge, one
/// billing): one capture, and the Payment keeps the fee rate it was created with.
#[test]
fn s06_effect_02_ten_sends_one_capture_at_one_fee_rate() {
    let (_, r) = run("S06");
    assert_eq!(captures(&r), 1);
    let rates: std::collections::BTreeSet<u32> = r
        .exchanges
        .iter()
        .filter_map(|x| x.response.as_ref())
        .filter_map(|resp| match &resp.body {
            payhub_model::ResponseBody::Payment(p) => Some(p.fee_rate_bps),
            _ => None,
        })
        .collect();
    assert_eq!(rates.len(), 1, "{rates:?}");
}

#[test]
fn s07_card_03_card_b_on_retry_after_timeout_is_never_charged() {
    let (s, r) = pinned("S07");
    assert_eq!(s.ac(), Some("AC-018"));
    assert_eq!(Rule::CardReplayNotCharged.ac(), s.ac());
    assert_eq!(answers(&r), a(&["lost", "200"]));
    assert_eq!(r.world.acquirer.ledger.captures_with(Card('B')), 0);
    assert_eq!(r.world.acquirer.ledger.captures_with(Card('A')), 1);
}

#[test]
fn s08_attempt_01_confirm_new_key_while_processing_409_payment_in_progress() {
    let (s, r) = pinned("S08");
    assert_eq!(s.ac(), Some("AC-027"));
    assert_eq!(Rule::ConfirmWhileProcessing.ac(), s.ac());
    assert_eq!(answers(&r), a(&["202", "409 payment_in_progress"]));
    assert_eq!(r.world.platform.attempts().len(), 1);
    assert_eq!(r.world.acquirer.ledger.captures_with(Card('B')), 0);
}

#[test]
fn s08b_attempt_01_confirm_new_key_while_processing_200_original_status() {
    let (s, r) = pinned("S08b");
    assert_eq!(s.ac(), Some("AC-027"));
    assert_eq!(answers(&r), a(&["202", "200"]));
    let p = r.exchanges[1].response.as_ref().unwrap().payment().unwrap();
    assert_eq!(p.status, payhub_model::PaymentStatus::Processing);
    assert_eq!(r.world.platform.attempts().len(), 1);
    assert_eq!(r.world.acquirer.ledger.captures_with(Card('B')), 0);
}

#[test]
fn s09_attempt_02_card_retry_after_failure_new_attempt_same_payment_and_fee() {
    let (s, r) = pinned("S09");
    assert_eq!(s.ac(), Some("AC-026"));
    assert_eq!(Rule::CardRetryAfterFailure.ac(), s.ac());
    assert_eq!(answers(&r), a(&["201", "200", "200"]));
    let p = r.exchanges[2].response.as_ref().unwrap().payment().unwrap();
    assert_eq!((p.attempt_count, p.fee_rate_bps), (2, 290));
    assert_eq!(r.world.acquirer.ledger.captures_with(Card('B')), 1);
    assert_eq!(r.world.acquirer.ledger.captures_with(Card('A')), 0);
}

#[test]
fn s10_rate_01_429_not_executed_then_retry_after_2_seconds_201() {
    let (s, r) = pinned("S10");
    assert_eq!(s.ac(), None);
    assert_eq!(Rule::RateLimited.ac(), None);
    assert_eq!(answers(&r), a(&["429 rate_limited", "201"]));
    assert_eq!(
        r.exchanges[0].response.as_ref().unwrap().retry_after_s,
        Some(2)
    );
    assert_eq!(captures(&r), 1);
}

#[test]
fn s11_refund_02_refund_timeout_retry_with_k_same_refund_one_upstream_refund() {
    let (s, r) = pinned("S11");
    assert_eq!(s.ac(), Some("AC-033"));
    assert_eq!(Rule::RefundReplaySameRefund.ac(), s.ac());
    assert_eq!(answers(&r), a(&["201", "lost", "200", "200"]));
    assert_eq!(
        r.world
            .acquirer
            .ledger
            .refunds_paid(payhub_model::RefundId(1)),
        1
    );
    assert_eq!(r.world.platform.refunds().len(), 1);
}

#[test]
fn s12_cancel_01_cancel_202_keeps_requires_action_then_canceled() {
    let (s, r) = pinned("S12");
    assert_eq!(s.ac(), Some("AC-029"));
    assert_eq!(Rule::Cancel202KeepsStatus.ac(), s.ac());
    assert_eq!(answers(&r), a(&["201", "202", "200"]));
    let p = r.exchanges[1].response.as_ref().unwrap().payment().unwrap();
    assert_eq!(p.status, payhub_model::PaymentStatus::RequiresAction);
    assert_eq!(captures(&r), 0);
}

#[test]
fn s13_rate_04_channel_paused_503_nothing_created_then_retry_201() {
    let (s, r) = pinned("S13");
    assert_eq!(s.ac(), None);
    assert_eq!(Rule::ChannelPaused.ac(), None);
    assert_eq!(answers(&r), a(&["503 temporarily_unavailable", "201"]));
    assert_eq!(captures(&r), 1);
}

#[test]
fn f01_ret_01_confirm_key_replayed_after_retention_is_refused_as_expired() {
    let (s, r) = pinned("F01");
    let ids: Vec<&str> = s.assumptions.iter().map(|a| a.id()).collect();
    assert!(ids.contains(&"A-EXPIRES-AT"), "{ids:?}");
    assert_eq!(
        answers(&r),
        a(&["201", "200", "200", "422 payment_expired"])
    );
    assert_eq!(r.world.platform.attempts().len(), 2);
}

#[test]
fn f01b_ret_01_confirm_key_replayed_after_retention_charges_again_with_a_long_expiry() {
    let (s, r) = pinned("F01b");
    assert_eq!(
        s.assumptions.iter().map(|a| a.id()).collect::<Vec<_>>(),
        ["A-EXPIRES-AT", "A-CONFIRM-RETENTION"]
    );
    // Past retention the replay, read as new business, is attempt 3, a second charge of
    // card B. No property is violated: the contract protects a key for 7 days only (RET-01).
    assert_eq!(answers(&r), a(&["201", "200", "200"]));
    assert!(r.violation.is_none(), "{:?}", r.violation);
    assert_eq!(r.world.platform.attempts().len(), 3);
}

/// A-CONFIRM-RETENTION read the other way: the replay past retention is not new
/// business, answered with the Payment as it stands; no attempt, no second charge.
#[test]
fn f01c_ret_01_confirm_key_replayed_after_retention_read_as_not_new_business_charges_nothing() {
    let (s, r) = pinned("F01c");
    assert!(assumed(&s).contains(&"A-CONFIRM-RETENTION"));
    assert_eq!(answers(&r), a(&["201", "200", "200", "200"]));
    assert!(r.violation.is_none(), "{:?}", r.violation);
    assert_eq!(r.world.platform.attempts().len(), 2);
}

#[test]
fn f02_cko_01_new_key_session_same_order_other_amount_409_order_no_conflict() {
    let (s, r) = pinned("F02");
    assert_eq!(
        s.assumptions.iter().map(|a| a.id()).collect::<Vec<_>>(),
        ["A-CKO-CONFLICT"]
    );
    assert_eq!(answers(&r), a(&["201", "201", "409 order_no_conflict"]));
    assert_eq!(r.world.platform.payments().len(), 1);
    assert_eq!(r.world.platform.sessions().len(), 2);
}

fn assumed(s: &Script) -> Vec<&'static str> {
    s.assumptions.iter().map(|a| a.id()).collect()
}

/// CKO-01 is not silent: a new key with the same order, amount and currency is
/// a new session whatever the Payment's status, never order_no_conflict.
#[test]
fn f06_cko_01_new_key_session_same_order_is_never_a_conflict_in_any_status() {
    let (s, r) = pinned("F06");
    assert_eq!(assumed(&s), ["A-CKO-ANY-STATUS", "A-CKO-CONFLICT"]);
    assert!(
        r.exchanges
            .iter()
            .all(|x| x.response.as_ref().and_then(|r| r.error_code())
                != Some(ErrorCode::OrderNoConflict)),
        "no order_no_conflict"
    );
    assert_eq!(
        answers(&r),
        a(&["201", "201", "200", "201", "202", "201", "201"])
    );
    assert_eq!(r.world.platform.payments().len(), 1);
    assert_eq!(r.world.platform.sessions().len(), 5);
    assert_eq!(captures(&r), 1);
}

/// S8 and the card-retry section disagree for processing (both readings
/// explored); requires_action gets the 409 only.
#[test]
fn f07_attempt_01_s8_and_the_card_retry_section_both_readings_while_processing() {
    let (s, r) = pinned("F07");
    assert_eq!(assumed(&s), ["A-S8-CARD-RETRY", "A-S8-NOBIND"]);
    assert_eq!(
        answers(&r),
        a(&[
            "201",
            "409 payment_in_progress",
            "202",
            "409 payment_in_progress",
            "200"
        ])
    );
    assert!(Assumption::ALL.iter().any(|a| a.id() == "A-S8-CARD-RETRY"
        && a.contract().contains("会被拒绝")
        && a.contract().contains("或返回原状态")));
    assert_eq!(r.world.platform.attempts().len(), 2);
}

/// S8's advice is "wait for the result, or query"; a later re-send charges
/// nothing twice.
#[test]
fn f08_attempt_01_after_payment_in_progress_wait_or_query_and_a_resend_charges_nothing_twice() {
    let (s, r) = pinned("F08");
    assert_eq!(assumed(&s), ["A-CLIENT-S8-WAIT", "A-S8-NOBIND"]);
    assert_eq!(code_of(&r, 1), Some(ErrorCode::PaymentInProgress));
    assert_eq!(code_of(&r, 4), Some(ErrorCode::PaymentNotConfirmable));
    assert_eq!(captures(&r), 2);
}

/// REJECT-01's "after correcting them, submit with a new key".
#[test]
fn f09_reject_01_a_corrected_create_goes_under_a_new_key() {
    let (s, r) = pinned("F09");
    assert_eq!(assumed(&s), ["A-CLIENT-CORRECTED-KEY"]);
    assert!(r.violation.is_none(), "{:?}", r.violation);
    let order = r.world.dbs[0].order("ORDER-1").expect("ORDER-1");
    assert_eq!(order.state(), OrderState::Paid);
    assert_eq!(order.submission.seq, 2);
    assert_eq!(
        order.submission.key.as_deref(),
        Some("payment.create:ORDER-1:2")
    );
    assert_eq!(r.world.platform.payments().len(), 1);
    assert_eq!(captures(&r), 1);
}

/// pending_review, and the reconciliation query that never lists it.
#[test]
fn f10_sched_03_a_pending_review_refund_is_not_listed_by_status_processing() {
    let (s, r) = pinned("F10");
    assert_eq!(assumed(&s), ["A-REFUND-REVIEW", "A-REFUND-RECONCILE"]);
    assert_eq!(answers(&r), a(&["201", "201", "200", "200", "200"]));
    assert_eq!(
        r.world
            .acquirer
            .ledger
            .refunds_paid(payhub_model::RefundId(1)),
        1
    );
}

/// a used refund number, under a new key or the original one after retention.
#[test]
fn f11_uniq_04_a_used_refund_number_gets_the_existing_refund_or_a_conflict() {
    let (s, r) = pinned("F11");
    assert_eq!(
        assumed(&s),
        ["A-REFUND-NO-BRANCH", "A-REFUND-NO-PARAMS", "A-ERROR-CODES"]
    );
    assert_eq!(
        answers(&r),
        a(&[
            "201",
            "201",
            "409 refund_no_conflict",
            "200",
            "409 refund_no_conflict",
            "200",
            "409 refund_no_conflict"
        ])
    );
    assert_eq!(r.world.platform.refunds().len(), 1);
}

/// A silence of the contract: the 7-day retention counts from the record's creation.
#[test]
fn f12_ret_01_retention_counts_from_creation_and_a_replay_does_not_extend_it() {
    let (s, r) = pinned("F12");
    assert_eq!(assumed(&s), ["A-RETENTION-START", "A-S4-BRANCH"]);
    assert_eq!(answers(&r), a(&["201", "200", "409 order_no_conflict"]));
    assert_eq!(captures(&r), 1);
}

/// A silence of the contract: requires_action is not expired at expires_at and may still succeed.
#[test]
fn f13_expiry_01_requires_action_past_expires_at_still_succeeds() {
    let (s, r) = pinned("F13");
    assert_eq!(assumed(&s), ["A-EXPIRY-STATUSES", "A-EXPIRES-AT"]);
    assert_eq!(answers(&r), a(&["201", "201", "422 payment_expired"]));
    let paid = r.world.platform.payment_view(PaymentId(1)).unwrap();
    assert_eq!(paid.status, PaymentStatus::Succeeded);
    let expired = r.world.platform.payment_view(PaymentId(2)).unwrap();
    assert_eq!(expired.status, PaymentStatus::Expired);
}

/// A silence of the contract: which codes are retryable.
#[test]
fn f14_rate_01_retryable_flags_of_the_codes_the_contract_shows_none_for() {
    let (s, r) = pinned("F14");
    assert_eq!(assumed(&s), ["A-RETRYABLE"]);
    let flags: Vec<bool> = r
        .exchanges
        .iter()
        .skip(1)
        .map(|x| match x.response.as_ref().map(|r| &r.body) {
            Some(payhub_model::ResponseBody::Error { error }) => error.retryable,
            other => panic!("not an error: {other:?}"),
        })
        .collect();
    assert_eq!(flags, [false, false, false, true]);
}

/// A silence of the contract: "not stored" read as the whole platform.
#[test]
fn f15_card_02_no_card_is_kept_so_a_card_retry_carries_the_card_again() {
    let (s, r) = pinned("F15");
    assert_eq!(assumed(&s), ["A-CARD-NOT-STORED"]);
    assert_eq!(answers(&r), a(&["201", "400 invalid_request", "200"]));
    let state = serde_json::to_string(&r.world.platform).expect("serializable");
    assert!(
        !state.contains("\"card\""),
        "no card in the platform's state"
    );
}

/// A silence of the contract: the fields each endpoint compares.
#[test]
fn f16_safe_01_fields_compared_per_endpoint() {
    let (s, r) = pinned("F16");
    assert_eq!(assumed(&s), ["A-SAFE-FIELDS"]);
    assert_eq!(
        answers(&r),
        a(&[
            "201",
            "409 idempotency_conflict",
            "200",
            "200",
            "201",
            "409 idempotency_conflict"
        ])
    );
}

/// F03–F05 (A-WEBHOOK-BLACKOUT): the script's run, replayed and healed as the liveness
/// check does it, leaves ORDER-1 of database 0 behind the platform's latest version of
/// pay_demo_001 in exactly the blackout situation; returns the healed world's verdict.
fn blackout(
    name: &str,
    state: OrderState,
    held: (PaymentStatus, u32),
    latest: (PaymentStatus, u32),
) -> LivenessVerdict {
    let (s, r) = pinned(name);
    let ids: Vec<&str> = s.assumptions.iter().map(|a| a.id()).collect();
    assert!(ids.contains(&"A-WEBHOOK-BLACKOUT"), "{ids:?}");
    let (world, seen, end) =
        liveness::replay_and_heal(&s.config, &r.tape).expect("the tape replays");
    let order = world.dbs[0].order("ORDER-1").expect("ORDER-1").clone();
    assert_eq!(order.state(), state);
    assert_eq!((order.status(), order.version()), (Some(held.0), held.1));
    let view = world
        .platform
        .payment_view(PaymentId(1))
        .expect("pay_demo_001");
    assert_eq!((view.status, view.version), latest);
    assert_eq!(
        liveness::gap(&seen, end.at, 0, "ORDER-1"),
        Ok(Assumption::WebhookBlackout)
    );
    liveness::judge(&seen, end)
}

#[test]
fn f03_sched_01_requires_action_order_misses_payment_succeeded_in_a_blackout() {
    let verdict = blackout(
        "F03",
        OrderState::AwaitingPayer,
        (PaymentStatus::RequiresAction, 2),
        (PaymentStatus::Succeeded, 3),
    );
    // The liveness check reports the assumption reached, not a pass or a violation.
    assert!(
        matches!(
            verdict,
            LivenessVerdict::Gap {
                assumption: Assumption::WebhookBlackout,
                ..
            }
        ),
        "{verdict:?}"
    );
}

#[test]
fn f04_sched_01_failed_order_misses_payment_expired_in_a_blackout() {
    let verdict = blackout(
        "F04",
        OrderState::Failed,
        (PaymentStatus::Failed, 2),
        (PaymentStatus::Expired, 3),
    );
    assert_eq!(
        verdict,
        LivenessVerdict::Resolved,
        "failed is a status the client knows"
    );
}

#[test]
fn f05_sched_01_paid_order_misses_the_refund_payment_event_in_a_blackout() {
    let verdict = blackout(
        "F05",
        OrderState::Paid,
        (PaymentStatus::Succeeded, 2),
        (PaymentStatus::Succeeded, 3),
    );
    assert_eq!(
        verdict,
        LivenessVerdict::Resolved,
        "paid is a status the client knows"
    );
}

/// A script run and its tape replayed by the driver give the same trace: a script is a
/// tape with a readable face.
#[test]
fn scenario_runs_replay_from_their_tapes() {
    for (name, _) in scenario_files() {
        let (s, r) = run(&name);
        let mut check = AlwaysCheck { config: &s.config };
        let mut trace = payhub_sim::Trace::new();
        let (_, outcome) =
            payhub_sim::driver::replay(&s.config, &r.tape, &mut check, Some(&mut trace))
                .unwrap_or_else(|(i, e)| panic!("{name}: step {i}: {e}"));
        assert_eq!(trace.to_text(), r.trace.to_text(), "{name}");
        // A script that judges the wire properties (`use wire=judged`) has them judged
        // over its exchanges at its end, not by the tape's step-by-step check.
        let expected = r.violation.map(|(v, _)| v.property).filter(|p| {
            !(s.judge_wire && payhub_properties::property(p).is_some_and(|p| p.wire_only()))
        });
        assert_eq!(outcome.violation.map(|v| v.property), expected, "{name}");
    }
}

/// S13 against the reference code (A-S13-REFERENCE-CODE): the reference client takes five
/// 503s as "not accepted": the order refused for now, nothing queried, and paid later
/// under the same key (before, `until quiet` never got quiet: lookups and re-creates
/// without end).
#[test]
fn f17_rate_04_five_503s_are_not_accepted_and_the_order_is_paid_later_under_the_same_key() {
    let (s, r) = pinned("F17");
    assert_eq!(assumed(&s), ["A-S13-REFERENCE-CODE"]);
    assert!(r.violation.is_none(), "{:?}", r.violation);
    let order = r.world.dbs[0].order("ORDER-1").expect("ORDER-1");
    assert_eq!(order.state(), OrderState::Paid);
    assert_eq!(order.submission.seq, 1);
    assert_eq!(r.world.platform.payments().len(), 1);
    assert_eq!(captures(&r), 1);
}

/// CANCEL-02 with a lost 202 (A-REPLAY-AFTER-202): the replay's 200 requires_action is not
/// canceled either; the client queries and closes the order.
#[test]
fn f18_cancel_02_a_cancel_whose_202_was_lost_is_queried_until_canceled() {
    let (s, r) = pinned("F18");
    assert_eq!(assumed(&s), ["A-REPLAY-AFTER-202"]);
    let order = r.world.dbs[0].order("ORDER-1").expect("ORDER-1");
    assert_eq!(order.state(), OrderState::Closed);
    assert_eq!(order.status(), Some(PaymentStatus::Canceled));
    assert_eq!(captures(&r), 0);
}

/// REJECT-01 for refunds (A-CLIENT-CORRECTED-KEY): a 422 refund corrected under a new key.
#[test]
fn f19_reject_01_a_rejected_refund_is_corrected_under_a_new_key() {
    let (s, r) = pinned("F19");
    assert_eq!(assumed(&s), ["A-CLIENT-CORRECTED-KEY"]);
    let refund = r.world.dbs[0].refund("REFUND-1").expect("REFUND-1");
    assert_eq!(refund.seq, 2);
    assert_eq!(refund.key.as_deref(), Some("refund.create:REFUND-1:2"));
    assert_eq!(refund.amount, 4000);
}

/// REPLAY-02 (A-REPLAY-AFTER-202, A-REPLAY-SAME-OR-LATEST): a replay answers 200 with the
/// latest status, after a first 202 too.
#[test]
fn f20_replay_02_a_replay_answers_200_with_the_latest_status() {
    let (s, r) = pinned("F20");
    assert_eq!(
        assumed(&s),
        ["A-REPLAY-AFTER-202", "A-REPLAY-SAME-OR-LATEST"]
    );
    assert_eq!(answers(&r), a(&["202", "200", "200", "200"]));
    assert_eq!(captures(&r), 1);
}

/// CKO-01 / EXPIRY-01 (A-CKO-ANY-STATUS): an expired Payment's order gets a new session
/// for it, or 422 payment_expired, which uses no key (REJECT-01).
#[test]
fn f21_cko_01_a_checkout_session_of_an_expired_payment_either_reading() {
    let (s, r) = pinned("F21");
    assert_eq!(assumed(&s), ["A-CKO-ANY-STATUS", "A-EXPIRY-STATUSES"]);
    assert_eq!(answers(&r), a(&["201", "201", "422 payment_expired"]));
    assert_eq!(code_of(&r, 2), Some(ErrorCode::PaymentExpired));
    assert_eq!(captures(&r), 0);
}

/// CONFLICT-01 before CONC-02 (A-CONFLICT-IN-FLIGHT): the same key with another amount
/// while the first request executes is a conflict at once, not a wait.
#[test]
fn f22_conflict_01_other_parameters_while_in_flight_are_a_conflict_at_once() {
    let (s, r) = pinned("F22");
    assert_eq!(assumed(&s), ["A-CONFLICT-IN-FLIGHT"]);
    assert_eq!(answers(&r), a(&["201", "B 409 idempotency_conflict"]));
    assert_eq!(captures(&r), 1);
}

/// CANCEL-02, RES-05 (A-CANCEL-PENDING-STATUS): while its cancel is verified the Payment
/// reads as before: requires_action, known, next_action.
#[test]
fn f23_cancel_02_a_pending_cancel_leaves_the_payment_as_it_reads() {
    let (s, r) = pinned("F23");
    assert_eq!(assumed(&s), ["A-CANCEL-PENDING-STATUS"]);
    assert_eq!(answers(&r), a(&["201", "202", "200"]));
    assert_eq!(captures(&r), 0);
}

/// RATE-01 against RETRY-03 (A-429-REFERENCE-CODE): five 429s are "result unknown" for
/// the reference client, and the order is paid once under its original key.
#[test]
fn f24_rate_01_five_429s_are_queried_and_paid_under_the_original_key() {
    let (s, r) = pinned("F24");
    assert_eq!(assumed(&s), ["A-429-REFERENCE-CODE"]);
    assert_eq!(captures(&r), 1);
}

/// RES-04, WORDING-03 (A-CLIENT-SUPPORT-START): "contact technical support" goes to the
/// merchant, with the payment id, more than 24 hours after the client applied
/// manual_review, not when its query schedule ends.
#[test]
fn f25_wording_03_contact_support_more_than_24_hours_into_manual_review() {
    let (s, r) = pinned("F25");
    assert_eq!(assumed(&s), ["A-CLIENT-SUPPORT-START"]);
    let text = r.to_text();
    assert!(text.contains("merchant: contact technical support with pay_demo_001"));
    assert_eq!(
        text.matches("merchant: contact technical support").count(),
        1
    );
}

/// Ledger counts only these tests make (named apart from the model test bench's own).
trait LedgerCounts {
    fn captures_with(&self, card: Card) -> usize;
    fn refunds_paid(&self, refund: payhub_model::RefundId) -> usize;
}

impl LedgerCounts for payhub_model::Ledger {
    fn captures_with(&self, card: Card) -> usize {
        self.entries
            .iter()
            .filter(
                |e| matches!(e, payhub_model::LedgerEntry::Capture { card: c, .. } if *c == card),
            )
            .count()
    }

    fn refunds_paid(&self, refund: payhub_model::RefundId) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, payhub_model::LedgerEntry::Refund { refund: r, .. } if *r == refund))
            .count()
    }
}
