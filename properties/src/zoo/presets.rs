//! The presets the zoo tries, in order (cheapest first), and its own small presets for
//! bugs no general preset reaches.

use crate::presets::{
    EDGE_PRESETS, Knob, NO_FAULTS, OUTAGE_OTHER_READINGS_PRESET, OUTAGE_PRESET, PAY_1, Preset,
    Step, TWO_SERVERS_RATE_PRESET, base, budget, checker_params, client_presets, client_world,
    paid, pay, platform_presets,
};
use payhub_model::api::req;
use payhub_model::api_keys::M1_TEST_READ_ONLY;
use payhub_model::client::{Command, Policy};
use payhub_model::{
    AcquirerDecision, Card, Control, Endpoint, MerchantId, Millis, PaymentId, PlatformParams,
    RefundId,
};
use payhub_sim::{Budget, WorkItem, WorldConfig};

/// Presets that take seconds where the others take milliseconds: tried last in their group.
const SLOW_PRESETS: &[&str] = &["card-retry", "create-lossy"];

fn slow_last(presets: Vec<Preset>) -> Vec<Preset> {
    let (slow, cheap): (Vec<Preset>, Vec<Preset>) = presets
        .into_iter()
        .partition(|p| SLOW_PRESETS.contains(&p.name));
    cheap.into_iter().chain(slow).collect()
}

/// Platform presets (cheap), the zoo's platform presets, the input-edge presets, the slow platform presets, then
/// the client presets with the reference client.
pub fn platform_order() -> Vec<Preset> {
    let (slow, cheap): (Vec<Preset>, Vec<Preset>) = platform_presets()
        .into_iter()
        .partition(|p| SLOW_PRESETS.contains(&p.name));
    // The input-edge presets come after the zoo's own (the detail mutants they catch
    // are the only ones that get there).
    let (edges, cheap): (Vec<Preset>, Vec<Preset>) = cheap
        .into_iter()
        .partition(|p| EDGE_PRESETS.contains(&p.name));
    cheap
        .into_iter()
        .chain(zoo_platform_presets())
        .chain(edges)
        .chain(slow)
        .chain(client_order(&Policy::reference()))
        .collect()
}

/// The client presets and the zoo's client presets with `policy`, cheapest first; the
/// presets under 429 and 503 ([`OUTAGE_PRESET`], [`TWO_SERVERS_RATE_PRESET`]) and the zoo's detail presets
/// ([`zoo_detail_client_presets`]) after every other, so that each bug is still caught
/// where it was caught before they existed.
pub fn client_order(policy: &Policy) -> Vec<Preset> {
    let (outage, mut all): (Vec<Preset>, Vec<Preset>) =
        client_presets(policy).into_iter().partition(|p| {
            [
                OUTAGE_PRESET,
                OUTAGE_OTHER_READINGS_PRESET,
                TWO_SERVERS_RATE_PRESET,
            ]
            .contains(&p.name)
        });
    all.extend(zoo_client_presets(policy));
    let mut all = slow_last(all);
    all.extend(outage);
    all.extend(zoo_detail_client_presets(policy));
    all
}

const PAY_2: PaymentId = PaymentId(2);

fn sends(n: u8) -> Budget {
    budget(&[(Knob::Sends, n)])
}

/// Small platform presets for bugs that no general preset reaches, built like the
/// platform presets (on `presets::base`, with the same parameters and setups). Each holds for
/// the reference platform (checked with the reference configurations) and explores in
/// milliseconds.
pub fn zoo_platform_presets() -> Vec<Preset> {
    let create = |amount, currency, card| req::create("K", "ORDER-1", amount, currency, card);
    let fingerprint = base(
        vec![
            (0, create(10000, "EUR", 'A')),
            (0, create(12000, "USD", 'A')),
            (0, create(10000, "USD", 'B')),
        ],
        sends(1),
    );
    let routes = WorldConfig {
        decisions: vec![AcquirerDecision::Approve, AcquirerDecision::Decline],
        ..base(
            vec![
                (0, req::confirm("C", PAY_1, 'B')),
                (0, req::confirm("C", PAY_2, 'B')),
                (0, req::cancel("K0", PAY_2)),
            ],
            sends(2),
        )
    };
    let rejections = base(
        vec![
            (0, create(10000, "XXX", 'A')),
            (0, create(0, "USD", 'A')),
            (
                0,
                req::with_api_key(create(10000, "USD", 'A'), M1_TEST_READ_ONLY),
            ),
            (0, create(10000, "USD", 'A')),
        ],
        sends(2),
    );
    let race = WorldConfig {
        decisions: vec![AcquirerDecision::Approve, AcquirerDecision::ApproveSilently],
        ..base(
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
            vec![(0, req::create("K0", "ORDER-1", 10000, "USD", 'A'))],
            budget(&[(Knob::Sends, 1), (Knob::Waits, 1)]),
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
            vec![
                (0, req::confirm("K2", PAY_1, 'B')),
                (0, req::confirm("K3", PAY_1, 'C')),
                (0, req::confirm("K4", PAY_1, 'D')),
            ],
            budget(&[(Knob::Sends, 3), (Knob::Waits, 1)]),
        )
    };
    let refunds = base(
        vec![
            (0, req::refund("R1", PAY_1, "R-1", 3000)),
            (0, req::refund("R2", PAY_1, "R-1", 3000)),
            (0, req::refund("R3", PAY_1, "R-2", 8000)),
        ],
        sends(2),
    );
    // A declined Payment, the platform's fee rate changed, then a card retry (ATTEMPT-06).
    let fee = base(vec![(0, req::confirm("K2", PAY_1, 'B'))], sends(1));
    let mut fee_setup = paid("K0", AcquirerDecision::Decline);
    fee_setup.push(Step::Control(Control::SetFeeRate { bps: 350 }));
    let query = WorldConfig {
        decisions: vec![AcquirerDecision::ApproveSilently],
        ..base(vec![(0, req::get(PAY_1))], sends(1))
    };
    let refund_query = base(
        vec![
            (0, req::refund("R1", PAY_1, "R-1", 3000)),
            (0, req::get_refund(RefundId(1))),
            (0, req::by_refund_no("R-1")),
            (0, req::query(Endpoint::ListRefundsProcessing)),
        ],
        sends(2),
    );
    let mut routes_setup = paid("K0", AcquirerDecision::Decline);
    routes_setup.push(Step::Send(req::create_as(
        payhub_model::api_keys::M1_TEST,
        "K1",
        "ORDER-2",
        5000,
        "USD",
        None,
    )));
    routes_setup.push(Step::Deliver);
    // Every upstream answer a 5xx: the result stays unknown, manual_review after the
    // window, then a re-query each day (RES-03).
    let manual_review = WorldConfig {
        decisions: vec![AcquirerDecision::Fail],
        ..base(
            vec![(0, req::create("K", "ORDER-1", 10000, "USD", 'A'))],
            sends(1),
        )
    };
    let approved = || paid("K0", AcquirerDecision::Approve);
    let declined = || paid("K0", AcquirerDecision::Decline);
    vec![
        Preset::new(
            "zoo-fingerprint",
            "CONFLICT-01, CARD-01: a paid key replayed with another currency, amount or card.",
            fingerprint,
            Millis::mins(30),
        )
        .after(paid("K", AcquirerDecision::Approve)),
        Preset::new(
            "zoo-scope-routes",
            "SCOPE-01: one key on two Payments' confirm, and the create's key on a cancel.",
            routes,
            Millis::mins(30),
        )
        .after(routes_setup),
        Preset::new(
            "zoo-rejections",
            "REJECT-01: 422, 400 and 403 under a key, then the corrected request under it.",
            rejections,
            Millis::mins(30),
        ),
        Preset::new(
            "zoo-order-race",
            "UNIQ-01: two keys for one order number at once, while the upstream is slow or silent.",
            race,
            Millis::mins(30),
        ),
        Preset::new(
            "zoo-retention",
            "RET-01: a paid key replayed two days later, well within its 7-day retention.",
            retention,
            Millis::days(3),
        )
        .after(approved()),
        Preset::new(
            "zoo-attempts",
            "ATTEMPT-04, ATTEMPT-05: card retries after three declines, and after expires_at.",
            attempts,
            Millis::hours(4),
        )
        .after(declined()),
        Preset::new(
            "zoo-refunds",
            "UNIQ-04, REFUND-03: a refund number under a new key, and refunds beyond the capture.",
            refunds,
            Millis::mins(30),
        )
        .after(approved()),
        Preset::new(
            "zoo-fee-snapshot",
            "ATTEMPT-06: a declined Payment, the platform's fee rate changed to 350 bps, then a card retry.",
            fee,
            Millis::mins(30),
        )
        .after(fee_setup),
        Preset::new(
            "zoo-query",
            "QUERY-04: a GET of a payment whose charge is unanswered.",
            query,
            Millis::mins(30),
        )
        .after(paid("K0", AcquirerDecision::ApproveSilently)),
        Preset::new(
            "zoo-refund-query",
            "QUERY-03: a refund of a paid Payment, then one of its three queries (by id, by number, ?status=processing).",
            refund_query,
            Millis::mins(30),
        )
        .after(approved()),
        // ---- detail mutants: cadence and effects ----
        Preset::new(
            "zoo-manual-review",
            "RES-01, RES-03: every upstream answer is a 5xx for two days: verification, manual_review, the daily re-query.",
            manual_review,
            Millis::hours(50),
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

/// A zoo client preset: `config` from its initial state for 25 s, reaching nothing in
/// particular.
fn client(name: &'static str, about: &'static str, config: WorldConfig) -> Preset {
    Preset::new(name, about, config, Millis::secs(25))
}

/// Small client presets for anti-patterns the general client presets do not reach (an
/// amended order, a 429, a cancel the upstream cannot confirm, a card retry).
pub fn zoo_client_presets(policy: &Policy) -> Vec<Preset> {
    let world = |workload| WorldConfig {
        webhooks: Vec::new(),
        ..client_world(policy, 1, workload, Budget::NONE)
    };
    let order = || "ORDER-1".into();
    let cancel = WorldConfig {
        decisions: vec![AcquirerDecision::RequireAction, AcquirerDecision::Fail],
        payer: true,
        ..world(vec![
            pay(0, "ORDER-1"),
            work(Command::CancelOrder { order: order() }),
        ])
    };
    let amend = WorldConfig {
        decisions: vec![AcquirerDecision::Approve],
        ..world(vec![
            pay(0, "ORDER-1"),
            work(Command::AmendOrder {
                order: order(),
                amount: 12000,
            }),
        ])
    };
    let rate_limited = |on| Control::SetRateLimited {
        merchant: MerchantId(1),
        on,
    };
    let rate = WorldConfig {
        decisions: vec![AcquirerDecision::Approve],
        controls: vec![rate_limited(true), rate_limited(false)],
        budget: budget(&[(Knob::Controls, 2)]),
        ..world(vec![pay(0, "ORDER-1")])
    };
    let card = WorldConfig {
        decisions: vec![AcquirerDecision::RequireAction, AcquirerDecision::Decline],
        ..world(vec![
            pay(0, "ORDER-1"),
            work(Command::RetryWithCard {
                order: order(),
                card: Card('B'),
            }),
        ])
    };
    // Time waits for messages: the client's queries are answered before the clock moves,
    // so the hour to manual_review is one line of steps, not every interleaving.
    let manual_review = WorldConfig {
        decisions: vec![AcquirerDecision::ApproveSilently, AcquirerDecision::Fail],
        time_waits_for_messages: true,
        ..world(vec![pay(0, "ORDER-1")])
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
        Preset::new(
            "zoo-client-manual-review",
            "RES-04: the acquirer captures and goes silent; the payment goes to manual_review after the 1-hour window while the client queries.",
            manual_review,
            Millis::mins(70),
        ),
    ]
}

/// Small client presets for the detail mutants no other client preset reaches in
/// milliseconds: a paid order refunded (a newer `succeeded` version by webhook).
pub fn zoo_detail_client_presets(policy: &Policy) -> Vec<Preset> {
    let approved = |workload| WorldConfig {
        decisions: vec![AcquirerDecision::Approve],
        ..client_world(policy, 1, workload, NO_FAULTS)
    };
    let refund = approved(vec![
        pay(0, "ORDER-1"),
        work(Command::RefundOrder {
            order: "ORDER-1".into(),
            refund: "R-1".into(),
            amount: 4000,
        }),
    ]);
    let paused = WorldConfig {
        webhooks: Vec::new(),
        // Nothing is lost and no answer is late here: the clock waits for the messages,
        // so the run is one path, as long as the traffic it checks.
        time_waits_for_messages: true,
        immediate_inbox: true,
        ..approved(vec![pay(0, "ORDER-1")])
    };
    // Declined, possibly after the synchronous wait: the 202 starts the schedule and the
    // failed Payment, by webhook or by a query, must end it (SCHED-01).
    let declined = WorldConfig {
        decisions: vec![AcquirerDecision::Decline],
        ..client_world(policy, 1, vec![pay(0, "ORDER-1")], NO_FAULTS)
    };
    vec![
        Preset::new(
            "zoo-client-late-decline",
            "SCHED-01: one order declined, the decline possibly after the synchronous wait's 202; the failed Payment ends the query schedule.",
            declined,
            Millis::secs(45),
        ),
        client(
            "zoo-client-refund",
            "RES-07: a paid order is refunded; the Payment's newer succeeded version arrives by webhook.",
            refund,
        ),
        Preset::new(
            PAUSED_PRESET,
            "S13, RETRY-03, SCHED-01: one server pays an order while the channel stays paused for ten minutes: five 503s, and nothing more than the schedules allow.",
            paused,
            Millis::mins(10),
        )
        .after(vec![Step::Control(Control::SetChannelPaused { on: true })]),
    ]
}

/// The zoo preset of a channel paused for good ([`zoo_detail_client_presets`]).
pub const PAUSED_PRESET: &str = "zoo-client-paused";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name in [`SLOW_PRESETS`] names a preset (a typo would silently try it first).
    #[test]
    fn slow_presets_are_presets() {
        let mut names: Vec<&str> = platform_presets().iter().map(|p| p.name).collect();
        names.extend(client_presets(&Policy::reference()).iter().map(|p| p.name));
        for slow in SLOW_PRESETS {
            assert!(names.contains(slow), "{slow} is not a preset: {names:?}");
        }
    }
}
