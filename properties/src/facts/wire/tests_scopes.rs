//! What a scope keeps while RET-01's window lasts ([`super::scopes`]).

use super::*;

/// RET-01, RATE-03, CONC-02: a scope is forgotten only when nothing of it is left. A scope
/// whose only record is its rare part (a Retry-After not ended, or an early answer still
/// in the window) is kept; its first request past the window goes, the rest stays.
#[test]
fn a_scope_is_kept_while_its_rare_part_lasts() {
    let rec = |sent: u64| {
        let seen = Seen {
            id: RequestId(sent as u32),
            sent: Millis(sent),
            closed: Millis(sent + 1),
            method: Method::Post,
            path: "/v1/payments".into(),
            key: Some("k".into()),
            params: WireParams::None,
            answer: None,
            open: false,
        };
        Arc::new(record::Record::of(&seen, (sent, sent + 1)))
    };
    let (window, now) = (Millis(1_000), Millis(5_000));
    let only = |rare: scopes::Rare| scopes::Scope {
        first: Some(rec(10)),
        rare: Some(Box::new(rare)),
        ..scopes::Scope::default()
    };
    let retry_after = |until: u64| scopes::Rare {
        retry_after: Some((Millis(until), rec(10))),
        ..scopes::Rare::default()
    };
    let early = |sent: u64| scopes::Rare {
        early: Some((rec(sent), None)),
        ..scopes::Rare::default()
    };
    for (rare, kept) in [
        (retry_after(6_000), true),
        (retry_after(4_000), false),
        (early(2_000), true),
        (early(500), false),
    ] {
        let what = format!("{rare:?}");
        let mut scope = only(rare);
        assert_eq!(scope.prune(window, now), kept, "{what}");
        assert!(
            scope.first.is_none(),
            "the first request past the window goes"
        );
        assert_eq!(scope.rare.is_some(), kept, "{what}");
    }
}
