use super::*;
use crate::conform::case::{Fault, KeyUse, Op};
use crate::conform::profile::CardOutcome;
use crate::serve::faults::Plan;
use crate::serve::sandbox::{Branches, Planted, Sandbox, Settings as SandboxSettings, Step};

/// The oracle for the sandbox's profile, ids numbered across merchants.
fn oracle() -> Oracle {
    let text = include_str!("../../docs/profiles/sandbox.json");
    let mut profile = Loaded::from_json(text).unwrap();
    profile.profile.isolation.ids_per_merchant = false;
    Oracle::new(&profile, 64)
}

fn create(key: u8) -> Req {
    Req {
        key_of: 1,
        key: KeyUse::Slot(key),
        op: Op::Create {
            order: 1,
            amount: 10000,
            currency: "USD",
            card: Some(CardOutcome::Approve),
        },
        fault: Fault::None,
        rotation: 0,
    }
}

/// The sandbox (the reference over its sans-IO core) as the target.
fn answer(sb: &mut Sandbox, names: &Names, req: &Req) -> Seen {
    let side = Side {
        of: Of::Model(&IdMap::default()),
        refs: &TargetRefs::default(),
        ns: 0,
    };
    let http = req.render(names, &side);
    let Step::Answered(reply) = sb.handle(sb.now(), &http) else {
        panic!("pending")
    };
    Seen::Answer(Observed {
        status: reply.status,
        retry_after: reply.retry_after_s.map(|s| s.to_string()),
        body: serde_json::from_str(&reply.body).unwrap(),
    })
}

fn sandbox(planted: Planted) -> Sandbox {
    Sandbox::new(SandboxSettings {
        seed: 0,
        branches: Branches::A,
        plan: Plan::default(),
        webhooks: false,
        planted,
        seam: Default::default(),
    })
}

fn sent(req: Req, seen: Seen) -> Vec<Sent> {
    let now = std::time::Instant::now();
    vec![Sent {
        req,
        seen,
        after: None,
        http: Default::default(),
        at: (now, now),
        reply: None,
    }]
}

/// Round `sent` of a case named `names`.
fn at<'a>(names: &'a Names, refs: &'a TargetRefs, sent: &'a [Sent]) -> Round<'a> {
    Round { names, refs, sent }
}

#[test]
fn the_references_answers_conform_a_lost_one_branches_and_a_wrong_one_breaks() {
    let names = Names::new("T", "1");
    let refs = TargetRefs::default();
    let mut sb = sandbox(Planted::Reference);
    let mut o = oracle();
    // A create whose answer is lost: executed or not, two states.
    let _ = answer(&mut sb, &names, &create(1));
    assert_eq!(
        o.round(at(&names, &refs, &sent(create(1), Seen::Unknown))),
        RoundVerdict::Conforms
    );
    assert_eq!(o.states.len(), 2);
    // The retry under the same key: the sandbox replays (200); only "executed" explains it.
    let replay = answer(&mut sb, &names, &create(1));
    assert_eq!(
        o.round(at(&names, &refs, &sent(create(1), replay.clone()))),
        RoundVerdict::Conforms
    );
    assert_eq!(o.states.len(), 1);
    // The same answer once more, but 201: a planted wrong status is a violation.
    let Seen::Answer(mut wrong) = replay else {
        unreachable!()
    };
    wrong.status = 201;
    let RoundVerdict::Broken { allowed, .. } =
        o.round(at(&names, &refs, &sent(create(1), Seen::Answer(wrong))))
    else {
        panic!("a 201 replay conformed");
    };
    assert!(allowed.iter().any(|a| a.starts_with("200")), "{allowed:?}");
}

#[test]
fn a_planted_bug_of_the_sandbox_breaks_the_oracle() {
    let names = Names::new("T", "2");
    let refs = TargetRefs::default();
    let mut sb = sandbox(Planted::Mutant(
        payhub_model::Mutant::AmountNotInFingerprint,
    ));
    let mut o = oracle();
    let first = answer(&mut sb, &names, &create(1));
    assert_eq!(
        o.round(at(&names, &refs, &sent(create(1), first))),
        RoundVerdict::Conforms
    );
    let mut changed = create(1);
    changed.op = Op::Create {
        order: 1,
        amount: 10001,
        currency: "USD",
        card: Some(CardOutcome::Approve),
    };
    let seen = answer(&mut sb, &names, &changed);
    let verdict = o.round(at(&names, &refs, &sent(changed, seen)));
    let RoundVerdict::Broken {
        unexplained, rules, ..
    } = verdict
    else {
        panic!("the planted bug conformed: {verdict:?}");
    };
    assert_eq!(unexplained, [0]);
    // The rule the target broke is the one by which the model answered that request
    // (the conflict's, CONFLICT-01); the model's own run of the round is a what-if script
    // that `run` replays, applying that rule.
    assert_eq!(rules, ["CONFLICT-01"]);
    let tape = o
        .model_run(at(&names, &refs, &sent(changed, Seen::Any)))
        .unwrap();
    let script = payhub_sim::script::script_from_tape(&model_config(), &tape, None, "t").unwrap();
    let parsed = payhub_sim::script::parse(
        "t.pha",
        script.as_bytes(),
        &crate::script_cmd::always_properties(),
    )
    .unwrap();
    let trace = crate::script_cmd::execute(&parsed).trace;
    assert!(
        trace
            .events
            .iter()
            .any(|e| e.rule.map(|r| r.id()) == Some("CONFLICT-01"))
    );
}

/// In a round whose answers no state explains together, the answers the closest paths
/// explain are told from the one they do not: a create's first copy answered 201, its
/// proxy's second copy 201 again (a replay answers 200, REPLAY-02).
#[test]
fn the_answers_the_model_explains_are_told_from_the_one_it_does_not() {
    let names = Names::new("T", "3");
    let refs = TargetRefs::default();
    let mut sb = sandbox(Planted::Reference);
    let mut o = oracle();
    let Seen::Answer(first) = answer(&mut sb, &names, &create(1)) else {
        unreachable!()
    };
    let mut round = sent(create(1), Seen::Answer(first.clone()));
    let mut second = round[0].clone();
    second.after = Some(0);
    round.push(second);
    let verdict = o.round(at(&names, &refs, &round));
    let RoundVerdict::Broken {
        unexplained, rules, ..
    } = verdict
    else {
        panic!("a replay answered 201 conformed: {verdict:?}");
    };
    assert_eq!(unexplained, [1]);
    assert_eq!(rules, ["REPLAY-02"]);
}
