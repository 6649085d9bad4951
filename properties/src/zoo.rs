//! The bug zoo and its kill matrix: every planted bug must be caught by a named property.
//!
//! A subject of the zoo is a platform [`Mutant`] (planted by `WorldConfig::variant`),
//! a [`ParameterMutant`] (the reference platform run with a number other than the
//! contract's), or a client [`AntiPattern`] (the merchant policy `reference-random + pattern`, as
//! `payhub-verify simulate --policy` reads it). [`kill`] tries to catch one:
//!
//! 1. **exhaustive**: the checker presets, cheapest first, each explored breadth-first
//!    until the first `always` property fails ([`HasDiscoveries::AnyFailures`]). For a
//!    platform mutant these are the platform presets, the zoo's own small presets
//!    ([`zoo_platform_presets`], for bugs no general preset reaches) and the client
//!    presets with the reference client; for an anti-pattern the client presets and the
//!    zoo's client presets ([`zoo_client_presets`]) with that policy;
//! 2. **simulation**: if no preset catches it, a seeded sweep of the simulation world
//!    (`worlds::simulation`) with every `always` property checked after every step.
//!
//! The first counterexample is replayed on the world to prove it, shrunk, and kept with
//! its configuration so that it can be replayed and rendered (`mutants --show NAME`).
//!
//! The same methods run on the **reference configurations** (the unmutated platform
//! with the reference client, deterministic and random keys): nothing may be caught
//! there, or a property is wrong rather than the mutant caught.
//!
//! A property never looks at which mutant is on: each judges the world's observable
//! history against the contract, so a mutant is caught only by what it does.

use crate::checker::{COMBINED, PresetModel, Registration};
use crate::presets::{
    PAY_1, Preset, Step, base, checker_params, client_presets, client_world, paid, pay,
    platform_presets,
};
use crate::property::{AlwaysCheck, OneCheck, Property};
use payhub_model::client::{AntiPattern, Command, Policy};
use payhub_model::harness::{M1_TEST_READ_ONLY, req};
use payhub_model::{
    AcquirerDecision, Card, Control, MerchantId, Millis, Mutant, ParameterMutant, PaymentId,
    PlatformParams, Rule, Variant,
};
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::{Budget, Choice, Trace, WorkItem, WorldConfig, worlds};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use stateright::{Checker, HasDiscoveries, Model};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

// ---- subjects ---------------------------------------------------------------------

/// Which side a planted bug is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Platform,
    Client,
}

/// A planted bug: a platform mutant, a wrong platform parameter or a client anti-pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    Platform(Mutant),
    Parameter(ParameterMutant),
    Client(AntiPattern),
}

impl Subject {
    /// Every subject: the platform mutants, the parameter mutants, then the client
    /// anti-patterns.
    pub fn all() -> Vec<Subject> {
        Mutant::ALL
            .iter()
            .map(|m| Subject::Platform(*m))
            .chain(ParameterMutant::ALL.iter().map(|m| Subject::Parameter(*m)))
            .chain(AntiPattern::ALL.iter().map(|p| Subject::Client(*p)))
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Subject::Platform(m) => m.name(),
            Subject::Parameter(m) => m.name(),
            Subject::Client(p) => p.name(),
        }
    }

    pub fn side(self) -> Side {
        match self {
            Subject::Platform(_) | Subject::Parameter(_) => Side::Platform,
            Subject::Client(_) => Side::Client,
        }
    }

    /// The contract rules it breaks.
    pub fn rules(self) -> Vec<Rule> {
        match self {
            Subject::Platform(m) => m.breaks().to_vec(),
            Subject::Parameter(m) => m.breaks().to_vec(),
            Subject::Client(p) => vec![p.breaks()],
        }
    }

    /// What the bug does, in one line.
    pub fn about(self) -> &'static str {
        match self {
            Subject::Platform(m) => m.about(),
            Subject::Parameter(m) => m.about(),
            Subject::Client(p) => p.deviation(),
        }
    }

    /// Looks a subject up by name (`card_in_fingerprint`, `poll_too_fast`).
    pub fn from_name(name: &str) -> Option<Subject> {
        Subject::all().into_iter().find(|s| s.name() == name)
    }

    /// The client policy under test: the reference (deterministic keys) for platform
    /// mutants; `reference-random + pattern` for an anti-pattern (as `--policy` reads it;
    /// two patterns act only on random keys).
    pub fn policy(self) -> Policy {
        match self {
            Subject::Platform(_) | Subject::Parameter(_) => Policy::reference(),
            Subject::Client(p) => Policy::reference_random().with(p),
        }
    }

    /// The presets tried, in order (cheapest first), with the bug switched on.
    pub fn presets(self) -> Vec<Preset> {
        match self {
            Subject::Platform(m) => {
                let mut presets = platform_order();
                for p in &mut presets {
                    p.config.variant = Variant::planted(m);
                }
                presets
            }
            Subject::Parameter(m) => {
                let mut presets = platform_order();
                for p in &mut presets {
                    p.config.params = m.apply(p.config.params.clone());
                }
                presets
            }
            Subject::Client(_) => client_order(&self.policy()),
        }
    }

    /// The simulation world with the bug switched on.
    pub fn simulation(self) -> WorldConfig {
        let mut config = worlds::simulation(&self.policy(), 2);
        if let Subject::Platform(m) = self {
            config.variant = Variant::planted(m);
            config.name = format!("{} mutant={}", config.name, m.name());
        }
        if let Subject::Parameter(m) = self {
            config.params = m.apply(config.params);
            config.name = format!("{} {}", config.name, m.name());
        }
        config
    }
}

// ---- presets, in the order they are tried -------------------------------------------

/// Presets that take seconds where the others take milliseconds: tried last in their group.
const SLOW_PRESETS: &[&str] = &["card-retry", "create-lossy"];

fn slow_last(presets: Vec<Preset>) -> Vec<Preset> {
    let (slow, cheap): (Vec<Preset>, Vec<Preset>) = presets
        .into_iter()
        .partition(|p| SLOW_PRESETS.contains(&p.name));
    cheap.into_iter().chain(slow).collect()
}

/// Platform presets (cheap), the zoo's platform presets, the slow platform presets, then
/// the client presets with the reference client.
pub fn platform_order() -> Vec<Preset> {
    let (slow, cheap): (Vec<Preset>, Vec<Preset>) = platform_presets()
        .into_iter()
        .partition(|p| SLOW_PRESETS.contains(&p.name));
    cheap
        .into_iter()
        .chain(zoo_platform_presets())
        .chain(slow)
        .chain(client_order(&Policy::reference()))
        .collect()
}

/// The client presets and the zoo's client presets with `policy`, cheapest first.
pub fn client_order(policy: &Policy) -> Vec<Preset> {
    let mut all = client_presets(policy);
    all.extend(zoo_client_presets(policy));
    slow_last(all)
}

const PAY_2: PaymentId = PaymentId(2);

fn sends(n: u8) -> Budget {
    Budget {
        sends: n,
        ..Budget::NONE
    }
}

/// A zoo preset: `config` from the state `steps` reach, reaching nothing in particular.
fn preset(
    name: &'static str,
    about: &'static str,
    config: WorldConfig,
    steps: Vec<Step>,
    horizon: Millis,
) -> Preset {
    Preset {
        name,
        about,
        config,
        setup: Vec::new(),
        horizon,
        reaches: &[],
    }
    .after(steps)
}

/// Small platform presets for bugs that no general preset reaches, built like the
/// platform presets (on `presets::base`, with the same parameters and setups). Each holds for
/// the reference platform (checked with the reference configurations) and explores in
/// milliseconds.
pub fn zoo_platform_presets() -> Vec<Preset> {
    let fingerprint = base(
        "zoo-fingerprint",
        vec![
            (0, req::create("K", "ORDER-1", 10000, "EUR", 'A')),
            (0, req::create("K", "ORDER-1", 12000, "USD", 'A')),
            (0, req::create("K", "ORDER-1", 10000, "USD", 'B')),
        ],
        sends(1),
    );
    let routes = base(
        "zoo-scope-routes",
        vec![
            (0, req::confirm("C", PAY_1, 'B')),
            (0, req::confirm("C", PAY_2, 'B')),
            (0, req::cancel("K0", PAY_2)),
        ],
        sends(2),
    );
    let rejections = base(
        "zoo-rejections",
        vec![
            (0, req::create("K", "ORDER-1", 10000, "XXX", 'A')),
            (0, req::create("K", "ORDER-1", 0, "USD", 'A')),
            (
                0,
                req::with_api_key(
                    req::create("K", "ORDER-1", 10000, "USD", 'A'),
                    M1_TEST_READ_ONLY,
                ),
            ),
            (0, req::create("K", "ORDER-1", 10000, "USD", 'A')),
        ],
        sends(2),
    );
    let race = WorldConfig {
        decisions: vec![AcquirerDecision::Approve, AcquirerDecision::ApproveSilently],
        ..base(
            "zoo-order-race",
            vec![
                (0, req::create("K1", "ORDER-1", 10000, "USD", 'A')),
                (1, req::create("K2", "ORDER-1", 10000, "USD", 'A')),
            ],
            sends(2),
        )
    };
    let retention = WorldConfig {
        waits: vec![Millis::days(2)],
        ..base(
            "zoo-retention",
            vec![(0, req::create("K0", "ORDER-1", 10000, "USD", 'A'))],
            Budget {
                sends: 1,
                waits: 1,
                ..Budget::NONE
            },
        )
    };
    let attempts = WorldConfig {
        decisions: vec![AcquirerDecision::Decline],
        params: PlatformParams {
            payment_ttl: Millis::hours(2),
            ..checker_params()
        },
        waits: vec![Millis::hours(3)],
        ..base(
            "zoo-attempts",
            vec![
                (0, req::confirm("K2", PAY_1, 'B')),
                (0, req::confirm("K3", PAY_1, 'C')),
                (0, req::confirm("K4", PAY_1, 'D')),
            ],
            Budget {
                sends: 3,
                waits: 1,
                ..Budget::NONE
            },
        )
    };
    let refunds = base(
        "zoo-refunds",
        vec![
            (0, req::refund("R1", PAY_1, "R-1", 3000)),
            (0, req::refund("R2", PAY_1, "R-1", 3000)),
            (0, req::refund("R3", PAY_1, "R-2", 8000)),
        ],
        sends(2),
    );
    let query = base("zoo-query", vec![(0, req::get(PAY_1))], sends(1));
    let mut routes_setup = paid("K0", AcquirerDecision::Decline);
    routes_setup.push(Step::Send(req::create_as(
        payhub_model::harness::M1_TEST,
        "K1",
        "ORDER-2",
        5000,
        "USD",
        None,
    )));
    routes_setup.push(Step::Deliver);
    let routes = WorldConfig {
        decisions: vec![AcquirerDecision::Approve, AcquirerDecision::Decline],
        ..routes
    };
    let query = WorldConfig {
        decisions: vec![AcquirerDecision::ApproveSilently],
        ..query
    };
    vec![
        preset(
            "zoo-fingerprint",
            "CONFLICT-01, CARD-01: a paid key replayed with another currency, amount or card.",
            fingerprint,
            paid("K", AcquirerDecision::Approve),
            Millis::mins(30),
        ),
        preset(
            "zoo-scope-routes",
            "SCOPE-01: one key on two Payments' confirm, and the create's key on a cancel.",
            routes,
            routes_setup,
            Millis::mins(30),
        ),
        preset(
            "zoo-rejections",
            "REJECT-01: 422, 400 and 403 under a key, then the corrected request under it.",
            rejections,
            Vec::new(),
            Millis::mins(30),
        ),
        preset(
            "zoo-order-race",
            "UNIQ-01: two keys for one order number at once, while the upstream is slow or silent.",
            race,
            Vec::new(),
            Millis::mins(30),
        ),
        preset(
            "zoo-retention",
            "RET-01: a paid key replayed two days later, well within its 7-day retention.",
            retention,
            paid("K0", AcquirerDecision::Approve),
            Millis::days(3),
        ),
        preset(
            "zoo-attempts",
            "ATTEMPT-04, ATTEMPT-05: card retries after three declines, and after expires_at.",
            attempts,
            paid("K0", AcquirerDecision::Decline),
            Millis::hours(4),
        ),
        preset(
            "zoo-refunds",
            "UNIQ-04, REFUND-03: a refund number under a new key, and refunds beyond the capture.",
            refunds,
            paid("K0", AcquirerDecision::Approve),
            Millis::mins(30),
        ),
        preset(
            "zoo-query",
            "QUERY-04: a GET of a payment whose charge is unanswered.",
            query,
            paid("K0", AcquirerDecision::ApproveSilently),
            Millis::mins(30),
        ),
    ]
}

fn work(command: Command) -> WorkItem {
    WorkItem {
        node: 0,
        command,
        times: 1,
    }
}

/// Small client presets for anti-patterns the general client presets do not reach (an
/// amended order, a 429, a cancel the upstream cannot confirm, a card retry).
pub fn zoo_client_presets(policy: &Policy) -> Vec<Preset> {
    let no_webhooks = |config: WorldConfig| WorldConfig {
        webhooks: Vec::new(),
        ..config
    };
    let cancel = WorldConfig {
        decisions: vec![AcquirerDecision::RequireAction, AcquirerDecision::Fail],
        payer: true,
        ..no_webhooks(client_world(
            "zoo-client-cancel",
            policy,
            1,
            vec![
                pay(0, "ORDER-1"),
                work(Command::CancelOrder {
                    order: "ORDER-1".into(),
                }),
            ],
            Budget::NONE,
        ))
    };
    let amend = WorldConfig {
        decisions: vec![AcquirerDecision::Approve],
        ..no_webhooks(client_world(
            "zoo-client-amend",
            policy,
            1,
            vec![
                pay(0, "ORDER-1"),
                work(Command::AmendOrder {
                    order: "ORDER-1".into(),
                    amount: 12000,
                }),
            ],
            Budget::NONE,
        ))
    };
    let rate = WorldConfig {
        decisions: vec![AcquirerDecision::Approve],
        controls: vec![
            Control::SetRateLimited {
                merchant: MerchantId(1),
                on: true,
            },
            Control::SetRateLimited {
                merchant: MerchantId(1),
                on: false,
            },
        ],
        ..no_webhooks(client_world(
            "zoo-client-rate-limit",
            policy,
            1,
            vec![pay(0, "ORDER-1")],
            Budget {
                controls: 2,
                ..Budget::NONE
            },
        ))
    };
    let card = WorldConfig {
        decisions: vec![AcquirerDecision::RequireAction, AcquirerDecision::Decline],
        ..no_webhooks(client_world(
            "zoo-client-card-retry",
            policy,
            1,
            vec![
                pay(0, "ORDER-1"),
                work(Command::RetryWithCard {
                    order: "ORDER-1".into(),
                    card: Card('B'),
                }),
            ],
            Budget::NONE,
        ))
    };
    // Time waits for messages: the client's queries are answered before the clock moves,
    // so the hour to manual_review is one line of steps, not every interleaving.
    let manual_review = WorldConfig {
        decisions: vec![AcquirerDecision::ApproveSilently, AcquirerDecision::Fail],
        time_waits_for_messages: true,
        ..no_webhooks(client_world(
            "zoo-client-manual-review",
            policy,
            1,
            vec![pay(0, "ORDER-1")],
            Budget::NONE,
        ))
    };
    let client = |name, about, config| Preset {
        name,
        about,
        config,
        setup: Vec::new(),
        horizon: Millis::secs(25),
        reaches: &[],
    };
    vec![
        client(
            "zoo-client-cancel",
            "CANCEL-02, GEN-05: the merchant cancels a requires_action payment; the upstream cannot confirm; the payer may still authenticate.",
            cancel,
        ),
        client(
            "zoo-client-amend",
            "UNKNOWN-04: the merchant amends the amount of a submitted order.",
            amend,
        ),
        client(
            "zoo-client-rate-limit",
            "RATE-03: the merchant is rate-limited (429, Retry-After: 2) while paying an order.",
            rate,
        ),
        client(
            "zoo-client-card-retry",
            "ATTEMPT-07: the payer asks to change card while the payment requires_action or after a decline.",
            card,
        ),
        Preset {
            horizon: Millis::mins(70),
            ..client(
                "zoo-client-manual-review",
                "RES-04: the acquirer captures and goes silent; the payment goes to manual_review after the 1-hour window while the client queries.",
                manual_review,
            )
        },
    ]
}

// ---- exploring one preset -----------------------------------------------------------

/// A counterexample, replayed and shrunk, with what it takes to replay it again.
#[derive(Clone, Debug)]
pub struct Found {
    pub property: &'static str,
    pub detail: String,
    /// Choices from the initial world (a preset's setup included), shrunk.
    pub choices: Vec<Choice>,
    /// Choices from the initial world to the first violation, before shrinking.
    pub found_length: usize,
    pub config: WorldConfig,
}

/// What exploring one configuration found.
#[derive(Clone, Debug)]
pub struct Explored {
    /// Unique states (exhaustive) or seeds (simulation) explored.
    pub states: u64,
    /// Whether the exploration ended by itself (not by its time limit).
    pub complete: bool,
    pub seconds: f64,
    pub found: Option<Found>,
    /// Why the configuration could not be explored (its setup does not apply), if so.
    pub skipped: Option<String>,
}

/// Explores `preset` breadth-first until the first `always` property fails, or all of it
/// (within `budget` states and `timeout`); a failure is replayed and shrunk.
pub fn explore(
    preset: &Preset,
    budget: Option<usize>,
    timeout: Duration,
) -> Result<Explored, String> {
    let started = Instant::now();
    // Every property in one stateright property that fails at a violating state: the
    // search ends at the first one (see `Registration::Combined`).
    let model = match PresetModel::with_registration(
        preset.clone(),
        Registration::Combined {
            stop_at_violation: true,
        },
    ) {
        Ok(m) => m,
        Err(e) => {
            return Ok(Explored {
                states: 0,
                complete: true,
                seconds: started.elapsed().as_secs_f64(),
                found: None,
                skipped: Some(e),
            });
        }
    };
    let mut builder = model
        .checker()
        .threads(1)
        .timeout(timeout)
        .finish_when(HasDiscoveries::AnyFailures);
    if let Some(n) = budget {
        builder = builder.target_state_count(n);
    }
    let checker = builder.spawn_bfs().join();
    let hit_budget = budget.is_some_and(|n| checker.state_count() >= n);
    let states = checker.unique_state_count() as u64;
    // The path to the first violating state (one thread, breadth-first: at minimal
    // depth; the search ends there) is replayed with every property, in registry order:
    // the property caught is the first one that fails along it.
    let path = checker.discovery(COMBINED).map(|path| path.into_actions());
    let hit_time = started.elapsed() >= timeout;
    let found = match path {
        Some(path) => {
            let mut full = preset.setup.clone();
            full.extend(path);
            Some(first_violation(&preset.config, &full)?)
        }
        None => None,
    };
    Ok(Explored {
        states,
        complete: found.is_some() || !(hit_time || hit_budget),
        seconds: started.elapsed().as_secs_f64(),
        found,
        skipped: None,
    })
}

/// Replays `tape` with every `always` property and proves the first one that fails.
fn first_violation(config: &WorldConfig, tape: &[Choice]) -> Result<Found, String> {
    let mut all = AlwaysCheck { config };
    let (_, outcome) = driver::replay(config, tape, &mut all, None).map_err(|(i, e)| {
        format!(
            "{}: a counterexample does not replay at step {}: {e}",
            config.name,
            i + 1
        )
    })?;
    let violation = outcome.violation.ok_or_else(|| {
        format!(
            "{}: a counterexample replays without a violation",
            config.name
        )
    })?;
    let property = crate::property::property(&violation.property)
        .ok_or_else(|| format!("unknown property {}", violation.property))?;
    prove(config, property, &outcome.tape, outcome.tape.len())
}

/// Replays `tape` to prove it violates `property`, shrinks it, and replays the shrunk one.
fn prove(
    config: &WorldConfig,
    property: &'static Property,
    tape: &[Choice],
    found_length: usize,
) -> Result<Found, String> {
    let mut check = OneCheck { property, config };
    let (_, outcome) = driver::replay(config, tape, &mut check, None).map_err(|(i, e)| {
        format!(
            "{}: the counterexample of {} does not replay at step {}: {e}",
            config.name,
            property.name,
            i + 1
        )
    })?;
    if outcome.violation.is_none() {
        return Err(format!(
            "{}: the counterexample of {} replays without violating it",
            config.name, property.name
        ));
    }
    let shrunk = payhub_sim::shrink::shrink(config, &outcome.tape, property.name, &mut check);
    let choices = if shrunk.len() < outcome.tape.len() {
        shrunk
    } else {
        outcome.tape
    };
    let (_, replayed) = driver::replay(config, &choices, &mut check, None).map_err(|(i, e)| {
        format!(
            "{}: shrunk tape does not replay at step {}: {e}",
            config.name,
            i + 1
        )
    })?;
    let violation = replayed.violation.ok_or_else(|| {
        format!(
            "{}: the shrunk counterexample of {} does not fail",
            config.name, property.name
        )
    })?;
    Ok(Found {
        property: property.name,
        detail: violation.detail,
        choices,
        found_length,
        config: config.clone(),
    })
}

/// The swarm fault profile of a seed, as `payhub-verify simulate` draws it.
pub fn profile(seed: u64) -> FaultProfile {
    FaultProfile::swarm(&mut ChaCha8Rng::seed_from_u64(seed ^ 0x5EED_5EED_5EED_5EED))
}

/// Runs seeds `0..seeds` of `config` (at most `steps` choices each) until one violates an
/// `always` property; that run is shrunk.
pub fn sweep(config: &WorldConfig, seeds: u64, steps: usize) -> Result<Explored, String> {
    let started = Instant::now();
    let mut check = AlwaysCheck { config };
    for seed in 0..seeds {
        let (_, outcome) = driver::run_seed(config, seed, &profile(seed), steps, &mut check, None);
        if outcome.violation.is_some() {
            let found = first_violation(config, &outcome.tape)?;
            return Ok(Explored {
                states: seed + 1,
                complete: true,
                seconds: started.elapsed().as_secs_f64(),
                found: Some(found),
                skipped: None,
            });
        }
    }
    Ok(Explored {
        states: seeds,
        complete: true,
        seconds: started.elapsed().as_secs_f64(),
        found: None,
        skipped: None,
    })
}

// ---- the kill matrix -----------------------------------------------------------------

/// How the zoo runs.
#[derive(Clone, Copy, Debug)]
pub struct ZooOptions {
    /// Worker threads: subjects and reference configurations run in parallel, each
    /// exploration single-threaded (the results do not depend on it).
    pub threads: usize,
    /// Seeds of a simulation sweep.
    pub seeds: u64,
    /// Most choices per seed.
    pub steps: usize,
    /// Longest exploration of one preset.
    pub preset_timeout: Duration,
    /// Whether to run the reference configurations too.
    pub references: bool,
}

impl Default for ZooOptions {
    fn default() -> Self {
        ZooOptions {
            threads: 2,
            seeds: 2_000,
            steps: 400,
            preset_timeout: Duration::from_secs(30),
            references: true,
        }
    }
}

/// One method tried on a subject or a reference configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Tried {
    /// `exhaustive:<preset>` or `simulation`.
    pub method: String,
    pub states_or_seeds: u64,
    pub seconds: f64,
    pub complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caught_by: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// One line of the kill matrix.
#[derive(Clone, Debug, Serialize)]
pub struct MutantRow {
    pub name: &'static str,
    pub side: Side,
    pub about: &'static str,
    /// The contract rules the bug breaks.
    pub rules: Vec<&'static str>,
    pub killed: bool,
    /// The property that caught it.
    pub property: Option<&'static str>,
    /// `exhaustive:<preset>` or `simulation`.
    pub method: Option<String>,
    /// Time to the first counterexample (every method tried before it included).
    pub seconds: f64,
    /// Unique states (exhaustive) or seeds (simulation), summed over the methods tried.
    pub states_or_seeds: u64,
    /// Length of the shrunk counterexample, in choices from the initial world.
    pub counterexample_steps: Option<usize>,
    /// Choices from the initial world (a preset setup included) to the first violation, before shrinking.
    pub found_steps: Option<usize>,
    pub detail: Option<String>,
    /// The world the counterexample runs in (a preset's name, or the simulation world).
    pub world: Option<String>,
    /// The shrunk counterexample as choice labels: a replayable tape.
    pub tape: Vec<String>,
    pub tried: Vec<Tried>,
    /// What replays the counterexample (configuration and choices).
    #[serde(skip)]
    pub counterexample: Option<Found>,
}

/// A reference configuration run through one method: nothing may be caught.
#[derive(Clone, Debug, Serialize)]
pub struct ReferenceRow {
    pub name: String,
    pub method: String,
    pub caught: bool,
    pub complete: bool,
    pub property: Option<&'static str>,
    pub detail: Option<String>,
    pub tape: Vec<String>,
    pub seconds: f64,
    pub states_or_seeds: u64,
    pub tried: Vec<Tried>,
}

/// The kill matrix.
#[derive(Clone, Debug, Serialize)]
pub struct KillMatrix {
    pub mutants: Vec<MutantRow>,
    pub references: Vec<ReferenceRow>,
    pub killed: usize,
    pub total: usize,
    /// Median and largest time to the first counterexample over the killed subjects.
    pub median_seconds: f64,
    pub max_seconds: f64,
    /// Wall time of the whole run.
    pub seconds: f64,
    pub threads: usize,
}

impl KillMatrix {
    /// Subjects no property caught.
    pub fn survivors(&self) -> Vec<&MutantRow> {
        self.mutants.iter().filter(|m| !m.killed).collect()
    }

    /// Reference configurations that something caught, or that did not complete.
    pub fn reference_failures(&self) -> Vec<&ReferenceRow> {
        self.references
            .iter()
            .filter(|r| r.caught || !r.complete)
            .collect()
    }

    /// Whether some reference configuration was caught by a property.
    pub fn reference_caught(&self) -> bool {
        self.references.iter().any(|r| r.caught)
    }

    /// Whether some reference configuration could not be explored completely (nothing
    /// can then be claimed about it).
    pub fn reference_incomplete(&self) -> bool {
        self.references.iter().any(|r| !r.complete)
    }

    /// Every subject killed, no reference configuration caught, every one complete.
    pub fn passed(&self) -> bool {
        self.survivors().is_empty() && self.reference_failures().is_empty()
    }

    /// The row of a subject.
    pub fn row(&self, name: &str) -> Option<&MutantRow> {
        self.mutants.iter().find(|m| m.name == name)
    }
}

fn tried(method: String, e: &Explored) -> Tried {
    Tried {
        method,
        states_or_seeds: e.states,
        seconds: e.seconds,
        complete: e.complete,
        caught_by: e.found.as_ref().map(|f| f.property),
        skipped: e.skipped.clone(),
    }
}

/// Tries to kill one subject: the presets in order, then a simulation sweep.
pub fn kill(subject: Subject, options: &ZooOptions) -> Result<MutantRow, String> {
    let started = Instant::now();
    let mut row = MutantRow {
        name: subject.name(),
        side: subject.side(),
        about: subject.about(),
        rules: subject.rules().iter().map(|r| r.id()).collect(),
        killed: false,
        property: None,
        method: None,
        seconds: 0.0,
        states_or_seeds: 0,
        counterexample_steps: None,
        found_steps: None,
        detail: None,
        world: None,
        tape: Vec::new(),
        tried: Vec::new(),
        counterexample: None,
    };
    let finish = |row: &mut MutantRow, method: String, e: Explored| {
        row.states_or_seeds += e.states;
        row.tried.push(tried(method.clone(), &e));
        if let Some(found) = e.found {
            row.killed = true;
            row.property = Some(found.property);
            row.method = Some(method);
            row.counterexample_steps = Some(found.choices.len());
            row.found_steps = Some(found.found_length);
            row.detail = Some(found.detail.clone());
            row.tape = found.choices.iter().map(|c| c.to_string()).collect();
            row.world = Some(found.config.name.clone());
            row.counterexample = Some(found);
            row.seconds = started.elapsed().as_secs_f64();
            true
        } else {
            false
        }
    };
    // Iterative broadening: every preset up to a small state budget, then a larger one,
    // then all of it. BFS finds the shortest counterexamples first, and most are a few
    // steps deep, so a bug is caught early wherever it hides; the re-exploration costs at
    // most a tenth more.
    let mut remaining = subject.presets();
    for budget in PASSES {
        let mut next = Vec::new();
        for preset in remaining {
            let e = explore(&preset, *budget, options.preset_timeout)?;
            let unfinished = !e.complete;
            if finish(&mut row, format!("exhaustive:{}", preset.name), e) {
                return Ok(row);
            }
            if unfinished {
                next.push(preset);
            }
        }
        remaining = next;
    }
    let e = sweep(&subject.simulation(), options.seeds, options.steps)?;
    finish(&mut row, "simulation".into(), e);
    row.seconds = started.elapsed().as_secs_f64();
    Ok(row)
}

/// State budgets of the passes over the presets (see [`kill`]).
/// The last one bounds memory: a preset not done by then is left unexplored for this
/// subject (reported in `tried` as incomplete).
const PASSES: &[Option<usize>] = &[Some(3_000), Some(30_000), Some(REFERENCE_BUDGET)];

/// States (generated, repeats included) a reference exploration may take: far above the
/// largest preset (about 312,000), low enough to bound memory if a preset grows by mistake.
const REFERENCE_BUDGET: usize = 1_500_000;

/// A unit of work of [`run`].
enum Job {
    Kill(Subject),
    Preset {
        reference: usize,
        preset: Preset,
    },
    Sweep {
        reference: usize,
        config: WorldConfig,
    },
}

enum JobResult {
    Kill(MutantRow),
    Reference {
        reference: usize,
        method: String,
        explored: Explored,
    },
}

/// The reference configurations: (name, presets, simulation world).
fn reference_configurations() -> Vec<(String, Vec<Preset>, WorldConfig)> {
    vec![
        (
            "reference platform, reference client (deterministic keys)".into(),
            platform_order(),
            worlds::simulation(&Policy::reference(), 2),
        ),
        (
            "reference platform, reference client (random keys)".into(),
            client_order(&Policy::reference_random()),
            worlds::simulation(&Policy::reference_random(), 2),
        ),
    ]
}

/// Runs the zoo on `subjects` (and the reference configurations if asked).
pub fn run(subjects: &[Subject], options: &ZooOptions) -> Result<KillMatrix, String> {
    let started = Instant::now();
    let references = if options.references {
        reference_configurations()
    } else {
        Vec::new()
    };
    let mut jobs: Vec<Job> = Vec::new();
    // The reference presets first: they are the longest single jobs.
    for (i, (_, presets, _)) in references.iter().enumerate() {
        for p in presets {
            jobs.push(Job::Preset {
                reference: i,
                preset: p.clone(),
            });
        }
    }
    jobs.extend(subjects.iter().map(|s| Job::Kill(*s)));
    for (i, (_, _, config)) in references.iter().enumerate() {
        jobs.push(Job::Sweep {
            reference: i,
            config: config.clone(),
        });
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<JobResult, String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..options.threads.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    let result = match job {
                        Job::Kill(s) => kill(*s, options).map(JobResult::Kill),
                        Job::Preset { reference, preset } => {
                            explore(preset, Some(REFERENCE_BUDGET), options.preset_timeout).map(
                                |explored| JobResult::Reference {
                                    reference: *reference,
                                    method: format!("exhaustive:{}", preset.name),
                                    explored,
                                },
                            )
                        }
                        Job::Sweep { reference, config } => {
                            sweep(config, options.seeds, options.steps).map(|explored| {
                                JobResult::Reference {
                                    reference: *reference,
                                    method: "simulation".into(),
                                    explored,
                                }
                            })
                        }
                    };
                    results.lock().expect("results").push((i, result));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("results");
    results.sort_by_key(|(i, _)| *i);
    let mut mutants = Vec::new();
    // (reference, exhaustive?) → aggregated row
    let mut rows: BTreeMap<(usize, bool), ReferenceRow> = BTreeMap::new();
    for (_, result) in results {
        match result? {
            JobResult::Kill(row) => mutants.push(row),
            JobResult::Reference {
                reference,
                method,
                explored,
            } => {
                let exhaustive = method.starts_with("exhaustive");
                let row = rows
                    .entry((reference, exhaustive))
                    .or_insert_with(|| ReferenceRow {
                        name: references[reference].0.clone(),
                        method: if exhaustive {
                            format!("exhaustive ({} presets)", references[reference].1.len())
                        } else {
                            format!("simulation ({} seeds)", options.seeds)
                        },
                        caught: false,
                        complete: true,
                        property: None,
                        detail: None,
                        tape: Vec::new(),
                        seconds: 0.0,
                        states_or_seeds: 0,
                        tried: Vec::new(),
                    });
                row.tried.push(tried(method.clone(), &explored));
                row.seconds += explored.seconds;
                row.states_or_seeds += explored.states;
                row.complete &= explored.complete && explored.skipped.is_none();
                if let (false, Some(found)) = (row.caught, explored.found) {
                    row.caught = true;
                    row.property = Some(found.property);
                    row.detail = Some(format!("{method}: {}", found.detail));
                    row.tape = found.choices.iter().map(|c| c.to_string()).collect();
                }
                if let Some(why) = explored.skipped {
                    row.detail.get_or_insert(format!("{method}: {why}"));
                }
            }
        }
    }
    let mut times: Vec<f64> = mutants
        .iter()
        .filter(|m: &&MutantRow| m.killed)
        .map(|m| m.seconds)
        .collect();
    let median_seconds = median(&mut times);
    Ok(KillMatrix {
        killed: mutants.iter().filter(|m: &&MutantRow| m.killed).count(),
        total: mutants.len(),
        mutants,
        references: rows.into_values().collect(),
        median_seconds,
        max_seconds: times.last().copied().unwrap_or(0.0),
        seconds: started.elapsed().as_secs_f64(),
        threads: options.threads.max(1),
    })
}

/// A killed subject's counterexample rendered: (tape of choice labels, text trace,
/// Mermaid sequence diagram), by replaying its choices on its configuration.
pub fn render(found: &Found) -> Result<(Vec<String>, String, String), String> {
    let property = crate::property::property(found.property)
        .ok_or_else(|| format!("unknown property {}", found.property))?;
    let mut check = OneCheck {
        property,
        config: &found.config,
    };
    let mut trace = Trace::new();
    driver::replay(&found.config, &found.choices, &mut check, Some(&mut trace))
        .map_err(|(i, e)| format!("the counterexample does not replay at step {}: {e}", i + 1))?;
    let tape = found.choices.iter().map(|c| c.to_string()).collect();
    Ok((tape, trace.to_text(), trace.to_mermaid()))
}

/// The median of `values` (sorted in place; the mean of the middle two for an even
/// count, 0 for none): the zoo's time to a first counterexample, `bench`'s run times.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}
