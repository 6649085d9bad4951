use super::*;

fn alphabet() -> Alphabet {
    Alphabet {
        outcomes: vec![
            CardOutcome::Approve,
            CardOutcome::Decline,
            CardOutcome::Slow,
        ],
        keys: vec![1, 2, 3, 4],
        clock: true,
        rate_limit: true,
        pause: true,
        shapes: false,
        rotation: false,
        fault_rate: 150,
    }
}

#[test]
fn a_seed_is_always_the_same_case_and_cases_cover_concurrency_and_faults() {
    let a = alphabet();
    assert_eq!(generate(7, &a), generate(7, &a));
    let cases: Vec<Case> = (0..200).map(|s| generate(s, &a)).collect();
    assert!(cases.iter().any(|c| c.is_concurrent()));
    let same_key_at_once = cases.iter().any(|c| {
        c.rounds
            .iter()
            .any(|r| matches!(r, Round::Send(v) if v.len() > 1 && v[0].key == v[1].key))
    });
    assert!(same_key_at_once);
    let faults = cases
        .iter()
        .flat_map(|c| &c.rounds)
        .filter_map(|r| match r {
            Round::Send(v) => Some(v),
            _ => None,
        })
        .flatten()
        .filter(|r| r.fault != Fault::None)
        .count();
    assert!(faults > 20, "{faults}");
    assert!(cases.iter().all(|c| (2..=7 + 4).contains(&c.rounds.len())));
}

#[test]
fn control_moves_come_only_with_controls_and_switch_back_off() {
    let a = alphabet();
    let switches = |c: &Case| -> Vec<Switch> {
        c.rounds
            .iter()
            .filter_map(|r| match r {
                Round::Control(s) => Some(*s),
                _ => None,
            })
            .collect()
    };
    let cases: Vec<Case> = (0..300).map(|s| generate(s, &a)).collect();
    let all: Vec<Switch> = cases.iter().flat_map(switches).collect();
    assert!(all.contains(&Switch::RateLimit {
        merchant: 1,
        on: true
    }));
    assert!(all.contains(&Switch::Pause { on: true }));
    for c in &cases {
        let s = switches(c);
        let ons = s
            .iter()
            .filter(|x| {
                matches!(
                    x,
                    Switch::RateLimit { on: true, .. } | Switch::Pause { on: true }
                )
            })
            .count();
        assert_eq!(ons * 2, s.len(), "every switch on is switched off: {s:?}");
    }
    let without = Alphabet {
        rate_limit: false,
        pause: false,
        ..alphabet()
    };
    assert!((0..300).all(|s| switches(&generate(s, &without)).is_empty()));
}

/// A replay sent under the merchant's rotated API key says so in the printed case
/// (SCOPE-03: the same scope), so a reader sees why the platform answered as it did.
#[test]
fn a_rotated_key_is_shown_in_the_printed_case() {
    let a = Alphabet {
        rotation: true,
        shapes: true,
        ..alphabet()
    };
    let http = crate::http_map::HttpRequest {
        method: "POST".into(),
        target: "/v1/payments".into(),
        authorization: Some(b"Bearer k".to_vec()),
        idempotency_key: Some(b"K".to_vec()),
        body: Vec::new(),
    };
    let rotated: Vec<Req> = (0..400)
        .flat_map(|s| generate(s, &a).rounds)
        .filter_map(|r| match r {
            Round::Send(v) => Some(v),
            _ => None,
        })
        .flatten()
        .filter(|r| r.rotation > 0)
        .collect();
    assert!(!rotated.is_empty(), "no request under a rotated key");
    for r in &rotated {
        let line = super::super::case::line(r, &http);
        assert!(line.contains("its rotated key #2"), "{line}");
    }
}
