//! API keys to scopes, judged through whole HAR files (SCOPE-01, docs/check-log.md): the
//! sandbox's keys resolve to its merchants, a key no map names is a merchant of its own,
//! entries with no key one more (or the owner `"*"` of `--api-key-map` names), and what
//! was assumed is said. Each case is an order number created twice: one Payment per
//! order number (ORDER-01) is violated exactly when both creates fall in one scope.

use super::judge_file_with;
use payhub_properties::verdict::Status;

/// A create of ORDER-1 answered 201 with Payment `id`, sent with `auth` (an
/// `Authorization` value, or none) at second `at`.
fn create(auth: Option<&str>, key: &str, id: &str, at: u32) -> String {
    let auth = auth
        .map(|a| format!(r#"{{"name":"Authorization","value":"{a}"}},"#))
        .unwrap_or_default();
    let body = format!(
        r#"{{\"amount\":100,\"amount_refunded\":0,\"attempt_count\":1,\"currency\":\"USD\",\"expires_at\":\"2026-12-05T10:00:00.000Z\",\"fee_rate_bps\":290,\"id\":\"{id}\",\"merchant_order_no\":\"ORDER-1\",\"next_action\":false,\"resolution_status\":\"known\",\"status\":\"succeeded\",\"version\":2}}"#
    );
    format!(
        r#"{{"startedDateTime":"2026-12-04T10:00:{at:02}.000Z","time":5,
            "request":{{"method":"POST","url":"https://api.example/v1/payments",
              "headers":[{auth}{{"name":"Idempotency-Key","value":"{key}"}}],
              "postData":{{"mimeType":"application/json","text":"{{\"merchant_order_no\":\"ORDER-1\",\"amount\":100,\"currency\":\"USD\"}}"}}}},
            "response":{{"status":201,"headers":[],"content":{{"text":"{body}"}}}}}}"#
    )
}

/// check-log over the entries, with `map` as `--api-key-map`: whether one Payment per
/// order number is violated, and what was assumed.
fn judge(name: &str, entries: &[String], map: Option<&str>) -> (bool, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("payhub-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let har = dir.join(format!("{name}.har"));
    std::fs::write(
        &har,
        format!(r#"{{"log":{{"entries":[{}]}}}}"#, entries.join(",")),
    )
    .unwrap();
    let map = map.map(|m| {
        let path = dir.join(format!("{name}-keys.json"));
        std::fs::write(&path, m).unwrap();
        path
    });
    let j = judge_file_with(&har, map.as_deref(), false, Default::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let v = j
        .verdicts
        .iter()
        .find(|v| v.name == "at-most-one-payment-per-order")
        .expect("the property");
    assert_ne!(v.status, Status::CannotJudge, "{name}");
    (v.status == Status::Violated, j.assumptions)
}

#[test]
fn scope_01_the_sandbox_keys_of_one_merchant_share_order_numbers() {
    // ak_1 and ak_5 are merchant 1's test keys: one scope of order numbers.
    let (violated, assumed) = judge(
        "one-merchant",
        &[
            create(Some("Bearer ak_1"), "k1", "pay_demo_001", 1),
            create(Some("Bearer ak_5"), "k2", "pay_demo_002", 2),
        ],
        None,
    );
    assert!(violated, "two Payments for ORDER-1 of merchant 1");
    // Keys of the sandbox's form are its merchants', and that default is said.
    assert_eq!(assumed.len(), 1, "{assumed:?}");
    assert!(assumed[0].contains("of the sandbox's form"), "{assumed:?}");
    // ak_3 is merchant 2: another scope.
    let (violated, _) = judge(
        "two-merchants",
        &[
            create(Some("Bearer ak_1"), "k1", "pay_demo_001", 1),
            create(Some("Bearer ak_3"), "k1", "pay_demo_002", 2),
        ],
        None,
    );
    assert!(!violated);
}

#[test]
fn scope_01_each_key_no_map_names_is_a_merchant_of_its_own_and_said_so() {
    let entries = [
        create(Some("Bearer sk_a"), "k1", "pay_demo_001", 1),
        create(Some("Bearer sk_b"), "k2", "pay_demo_002", 2),
        create(Some("Bearer sk_a"), "k3", "pay_demo_001", 3),
    ];
    let (violated, assumed) = judge("unknown", &entries, None);
    assert!(!violated, "sk_a and sk_b are two merchants");
    assert_eq!(assumed.len(), 1, "{assumed:?}");
    assert!(
        assumed[0].starts_with("2 API keys no --api-key-map names"),
        "{assumed:?}"
    );
    // The same key twice is one merchant.
    let entries = [
        create(Some("Bearer sk_a"), "k1", "pay_demo_001", 1),
        create(Some("Bearer sk_a"), "k2", "pay_demo_002", 2),
    ];
    assert!(judge("unknown-same", &entries, None).0);
}

#[test]
fn scope_01_entries_without_a_key_are_one_merchant_unless_the_map_names_it() {
    let entries = [
        create(None, "k1", "pay_demo_001", 1),
        create(None, "k2", "pay_demo_002", 2),
    ];
    let (violated, assumed) = judge("headerless", &entries, None);
    assert!(violated, "one merchant of their own");
    assert_eq!(assumed.len(), 1, "{assumed:?}");
    assert!(
        assumed[0].starts_with("2 request(s) carry no Authorization header"),
        "{assumed:?}"
    );
    // "*" names their owner: merchant 1, whose ak_1 created ORDER-1 too.
    let map = r#"{"*": {"merchant": 1, "environment": "test"},
                  "sk_live_x": {"merchant": 2, "environment": "test"}}"#;
    let entries = [
        create(Some("Bearer ak_1"), "k1", "pay_demo_001", 1),
        create(None, "k2", "pay_demo_002", 2),
    ];
    let (violated, assumed) = judge("star", &entries, Some(map));
    assert!(violated, "the headerless create is merchant 1's");
    // Only the sandbox-form key the map does not name is a default, and said so.
    assert!(
        assumed.iter().all(|a| a.contains("of the sandbox's form")),
        "{assumed:?}"
    );
    // A mapped key is its merchant's, and nothing is assumed of it.
    let entries = [
        create(Some("Bearer ak_3"), "k1", "pay_demo_001", 1),
        create(Some("Bearer sk_live_x"), "k2", "pay_demo_002", 2),
    ];
    let (violated, assumed) = judge("mapped", &entries, Some(map));
    assert!(violated, "sk_live_x is merchant 2's, as ak_3 is");
    assert!(
        assumed.iter().all(|a| a.contains("of the sandbox's form")),
        "{assumed:?}"
    );
}

#[test]
fn a_key_map_that_is_not_one_is_refused_with_its_line() {
    let dir = std::env::temp_dir().join(format!("payhub-keys-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("bad.json");
    std::fs::write(&map, "{\"sk\": {\"merchant\": \"one\"}}").unwrap();
    let e = super::keys::Keys::load(Some(&map), &[])
        .err()
        .expect("refused");
    assert!(e.contains("not an API key map"), "{e}");
}
