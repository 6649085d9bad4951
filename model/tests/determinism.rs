//! Determinism: the model keeps no hash-ordered collection, and two benches driven by
//! the same inputs produce the same outputs in the same order and the same state, byte
//! for byte.

use payhub_model::api::req;
use payhub_model::harness::Bench;
use payhub_model::*;
use std::path::Path;

use AcquirerDecision::{Approve, ApproveSilently, Decline, RequireAction};

/// A run that touches most of the model: concurrency, timeouts, verification, refunds,
/// card retries, cancels, retention, webhook re-deliveries.
fn drive(b: &mut Bench) {
    let k = |n: u32| format!("K{n}");
    for n in 0..4u32 {
        let order = format!("ORDER-{n:03}");
        b.send(req::create(&k(n), &order, 1000 + i64::from(n), "USD", 'A'));
        b.send_with(
            req::create(&k(n), &order, 1000 + i64::from(n), "USD", 'B'),
            Branch::S5Wait,
        );
    }
    b.upstream(Approve);
    b.upstream(Decline);
    b.upstream(RequireAction);
    b.upstream(ApproveSilently);
    b.advance(Millis::secs(20));
    b.send(req::confirm("K10", PaymentId(2), 'B'));
    b.send_with(
        req::confirm("K11", PaymentId(3), 'B'),
        Branch::S8OriginalStatus,
    );
    b.send(req::cancel("K12", PaymentId(3)));
    b.send(req::refund("K13", PaymentId(1), "R-001", 500));
    b.send(req::session("K14", "ORDER-100", 700, "EUR"));
    while !b.upstream_queue.is_empty() {
        b.upstream(Approve);
    }
    for _ in 0..10 {
        b.advance(Millis::hours(3));
        while !b.upstream_queue.is_empty() {
            b.upstream(Approve);
        }
    }
    b.advance(Millis::days(8));
    b.send_with(
        req::create("K0", "ORDER-000", 1000, "USD", 'A'),
        Branch::S4Conflict,
    );
}

#[test]
fn two_identical_benches_produce_identical_traces_and_states() {
    let (mut one, mut two) = (Bench::default(), Bench::default());
    drive(&mut one);
    drive(&mut two);
    assert!(
        one.trace.len() > 50,
        "the run does something: {}",
        one.trace.len()
    );
    assert!(!one.webhooks.is_empty());
    assert_eq!(
        serde_json::to_string(&one.trace).unwrap(),
        serde_json::to_string(&two.trace).unwrap()
    );
    assert_eq!(
        serde_json::to_string(&one.platform).unwrap(),
        serde_json::to_string(&two.platform).unwrap()
    );
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&two).unwrap()
    );
    assert_eq!(one.platform, two.platform);
}

#[test]
fn a_cloned_bench_continues_exactly_like_the_original() {
    let mut one = Bench::default();
    one.send(req::create("K", "ORDER-001", 10000, "USD", 'A'));
    let mut two = one.clone();
    for b in [&mut one, &mut two] {
        b.upstream(ApproveSilently);
        b.advance(Millis::hours(2));
        while !b.upstream_queue.is_empty() {
            b.upstream(Approve);
        }
    }
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&two).unwrap()
    );
}

#[test]
fn no_hash_collections_anywhere_in_the_model() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src];
    let mut checked = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                files.push(entry.unwrap().path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            // A hasher with fixed seeds is deterministic (the cached digests of
            // `cow.rs`); any other `RandomState` is not.
            let text = std::fs::read_to_string(&path)
                .unwrap()
                .replace("ahash::RandomState::with_seeds(", "");
            for banned in [
                "HashMap<",
                "HashSet<",
                "HashMap::",
                "HashSet::",
                "hash_map",
                "hash_set",
                "RandomState",
            ] {
                assert!(!text.contains(banned), "{banned} in {}", path.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} source files found");
}

#[test]
fn every_input_control_and_timer_serializes_to_json() {
    use payhub_model::acquirer::{ChargeState, UpstreamReply};
    use payhub_model::api_keys::rotated_key_spec;
    use payhub_model::platform::{Route, Scope};
    let controls = vec![
        Control::IssueApiKey(rotated_key_spec()),
        Control::RevokeApiKey(ApiKeyId(1)),
        Control::SetRateLimited {
            merchant: MerchantId(1),
            on: true,
        },
        Control::SetChannelPaused { on: true },
        Control::SetFeeRate { bps: 300 },
    ];
    let mut inputs: Vec<PlatformInput> = controls.into_iter().map(PlatformInput::Control).collect();
    inputs.extend([
        PlatformInput::Request {
            id: RequestId(1),
            request: req::create("K", "ORDER-001", 1, "USD", 'A'),
            branch: Some(Branch::S5Wait),
        },
        PlatformInput::Upstream(UpstreamReply::Charge {
            attempt: AttemptId(1),
            state: ChargeState::Declined(FailureCode::CardDeclined),
        }),
        PlatformInput::WebhookAcked(EventId(1)),
        PlatformInput::Timeout,
    ]);
    for input in &inputs {
        let json = serde_json::to_string(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert!(json.contains("\"input\""), "{json}");
    }
    let scope = Scope {
        merchant: MerchantId(1),
        environment: Environment::Test,
        route: Route::Confirm(PaymentId(1)),
        key: "K".into(),
    };
    let timers = [
        Timer::SyncWait(RequestId(1)),
        Timer::WaitTimeout(RequestId(2)),
        Timer::Verify(AttemptId(1)),
        Timer::VerifyRefund(RefundId(1)),
        Timer::Retention(scope),
        Timer::PaymentExpiry(PaymentId(1)),
        Timer::WebhookRedeliver(EventId(1)),
    ];
    for timer in &timers {
        let json = serde_json::to_string(timer).unwrap_or_else(|e| panic!("{timer:?}: {e}"));
        assert!(json.starts_with("{\"timer\":"), "{json}");
    }
    assert_eq!(
        serde_json::to_string(&timers[0]).unwrap(),
        r#"{"timer":"sync_wait","on":"req_1"}"#
    );
}
