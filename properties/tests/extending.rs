//! Adding a property is one file: a `Property` value (its name, rules, one sentence, the
//! evidence it needs and a predicate over the facts that returns what it found: its words
//! and the identifiers of its witness) that every driver runs as it runs the one
//! registry's (a predicate over the wire, `Predicate::Wire`, by the drivers that hold
//! wire facts: `judge`, `check-log`, the sandbox). The one below lives in this file only
//! and reads facts the registry keeps already (the acquirer's ledger and the store's
//! Payments): UNIQ-01 read from the money's side. It
//! is run here as the registry's are: by the exhaustive checker over a preset (the
//! engine and the preset's model `check` uses), by the seeded simulator after every
//! step, and over a recorded event stream with no world behind it (what `judge` folds).
//! It holds on the reference platform and catches a planted bug of the zoo.

use payhub_model::{Mutant, Rule};
use payhub_properties::checker::PresetModel;
use payhub_properties::engine::{self, Bounds, Flow};
use payhub_properties::evidence::PLATFORM_LEDGER;
use payhub_properties::property::{OneCheck, Predicate, Property};
use payhub_properties::zoo::Subject;
use payhub_properties::{Facts, Preset, Witnessed, World, preset};
use payhub_sim::Trace;
use payhub_sim::driver::{self, FaultProfile};
use std::sync::Mutex;

/// UNIQ-01 over the ledger: "one merchant order number corresponds to one Payment", so
/// money is captured for at most one Payment per order number of a merchant.
static ONE_CAPTURED_PAYMENT_PER_ORDER: Property = Property {
    name: "one-captured-payment-per-order-number",
    rules: &[Rule::UniqueOrderNo],
    about: "The acquirer captures money for at most one Payment per merchant order number.",
    needs: PLATFORM_LEDGER,
    exercised_by: &[],
    predicate: Predicate::Always(|f| {
        let mut captured = Vec::new();
        for entry in f.money.ledger() {
            let payhub_model::LedgerEntry::Capture { payment, .. } = entry else {
                continue;
            };
            let Some(p) = f.attempts.payments.get(payment) else {
                continue;
            };
            let order = (p.merchant, p.environment, &p.merchant_order_no);
            if let Some((other, _)) = captured.iter().find(|(q, o)| q != payment && *o == order) {
                return Some(
                    Witnessed::new(format!(
                        "{other} and {payment} were both captured for {}",
                        p.merchant_order_no
                    ))
                    .payment(*other)
                    .payment(*payment)
                    .order(&p.merchant_order_no),
                );
            }
            captured.push((*payment, order));
        }
        None
    }),
};

/// The planted bug: the platform forgets an order number with its key (RET-02).
const PLANTED: Mutant = Mutant::OrderNoDroppedWithKey;

/// The preset `order-number`, on the reference platform or with [`PLANTED`].
fn order_number(planted: bool) -> Preset {
    if planted {
        Subject::Platform(PLANTED)
            .presets()
            .into_iter()
            .find(|p| p.name == "order-number")
            .expect("the zoo explores order-number")
    } else {
        preset("order-number").expect("a preset")
    }
}

/// Explores `preset` exhaustively with the checker's engine, judging every state by the
/// property alone: the first violating world, if any.
fn first_violation(preset: Preset) -> (Option<World>, engine::Explored) {
    let model = PresetModel::new(preset).expect("the preset builds");
    let found = Mutex::new(None);
    let judge = |world: &World| {
        if ONE_CAPTURED_PAYMENT_PER_ORDER.holds_in(&world.facts) {
            Flow::Continue
        } else {
            *found.lock().unwrap() = Some(world.clone());
            Flow::Stop
        }
    };
    let fp = |s: &World| engine::fingerprint(s);
    let seen = engine::visited::Exact::default();
    let explored = engine::bfs_over(&model, 1, Bounds::default(), &judge, &fp, &seen);
    (found.into_inner().unwrap(), explored)
}

#[test]
fn uniq_01_a_property_outside_the_registry_holds_on_the_reference_in_the_checker() {
    let (found, explored) = first_violation(order_number(false));
    assert!(found.is_none(), "the reference platform violates it");
    assert!(
        !explored.stopped && !explored.cut,
        "incomplete: {explored:?}"
    );
    assert!(explored.unique_states > 10, "{explored:?}");
}

#[test]
fn uniq_01_a_property_outside_the_registry_catches_a_planted_bug_in_the_checker() {
    let (found, _) = first_violation(order_number(true));
    let world = found.expect("the planted bug is caught");
    let detail = ONE_CAPTURED_PAYMENT_PER_ORDER
        .judge(&world.facts)
        .expect("violated");
    assert!(detail.contains("both captured for ORDER-1"), "{detail}");
}

/// The simulator runs it after every step (as `simulate` runs the registry through
/// `AlwaysCheck`); a recorded run's events, folded with no world behind them as `judge`
/// folds a file, give the same verdict.
#[test]
fn uniq_01_a_property_outside_the_registry_runs_in_the_simulator_and_over_events() {
    let mut caught = 0;
    for planted in [false, true] {
        let preset = order_number(planted);
        for seed in 0..200 {
            let mut check = OneCheck {
                property: &ONE_CAPTURED_PAYMENT_PER_ORDER,
                config: &preset.config,
            };
            let mut trace = Trace::new();
            let (world, run) = driver::run_seed(
                &preset.config,
                seed,
                &FaultProfile::for_seed(seed),
                50,
                &mut check,
                Some(&mut trace),
            );
            let from_events = Facts::from_events(&trace.stream);
            let verdict = ONE_CAPTURED_PAYMENT_PER_ORDER.judge(&from_events);
            assert_eq!(verdict, ONE_CAPTURED_PAYMENT_PER_ORDER.judge(&world.facts));
            match run.violation {
                Some(v) => {
                    assert!(planted, "seed {seed}: the reference violates it: {v:?}");
                    assert_eq!(v.property, ONE_CAPTURED_PAYMENT_PER_ORDER.name);
                    assert_eq!(verdict, Some(v.detail), "seed {seed}");
                    caught += 1;
                }
                None => assert_eq!(verdict, None, "seed {seed}"),
            }
        }
    }
    assert!(caught > 0, "no seed of the planted bug was caught");
}
