//! The input-edge presets: Idempotency-Key edges, keyless requests, closed Payments,
//! unknown ids and routes.

use super::{Knob, PAY_1, Preset, Step, base, budget, paid};
use payhub_model::api::req;
use payhub_model::api_keys::M1_TEST;
use payhub_model::{AcquirerDecision, ApiRequest, Millis, PaymentId, Rule};
use payhub_sim::WorldConfig;

/// The names of the input-edge presets ([`edge_presets`]): last among the platform
/// presets, and tried by the bug zoo after its own.
pub const EDGE_PRESETS: &[&str] = &["edges-keys", "edges-closed"];

/// The Idempotency-Key edges (KEY-07, A-KEY-LENGTH: characters are Unicode scalar
/// values): missing, empty, 1, 255 and 256 characters, and multi-byte keys of 255 and 256
/// characters (510 and 512 bytes).
pub fn key_edges() -> Vec<Option<String>> {
    vec![
        None,
        Some(String::new()),
        Some("k".into()),
        Some("k".repeat(255)),
        Some("k".repeat(256)),
        Some("é".repeat(255)),
        Some("é".repeat(256)),
    ]
}

/// The input edges the contract's answers are judged at: every key edge on a create,
/// keyless and empty-key requests on every endpoint that needs a key, confirm and cancel
/// of closed Payments, refunds of failed and unpaid Payments, order numbers that differ
/// only in case, GETs of unknown ids, unknown routes.
pub(super) fn edge_presets() -> Vec<Preset> {
    let create = |k: Option<&str>| {
        req::with_key(
            req::create_as(M1_TEST, "K", "ORDER-2", 5000, "USD", None),
            k,
        )
    };
    let mut keys: Vec<(u8, ApiRequest)> = key_edges()
        .iter()
        .map(|k| (0, create(k.as_deref())))
        .collect();
    for k in [None, Some("")] {
        keys.extend([
            (0, req::with_key(req::confirm("K", PAY_1, 'B'), k)),
            (0, req::with_key(req::cancel("K", PAY_1), k)),
            (
                0,
                req::with_key(req::session("K", "ORDER-3", 5000, "USD"), k),
            ),
            (0, req::with_key(req::refund("K", PAY_1, "R-1", 5000), k)),
        ]);
    }
    keys.extend([
        (0, req::confirm("C1", PAY_1, 'B')),
        (0, req::cancel("X1", PAY_1)),
        (0, req::get(PAY_1)),
        (0, req::get(PaymentId(9))),
        (0, req::get_refund(payhub_model::RefundId(9))),
        (0, req::by_order("order-1")),
        (
            0,
            req::query(payhub_model::Endpoint::Other {
                method: payhub_model::Method::Delete,
                path: "/v1/payments/pay_demo_001".into(),
            }),
        ),
        (
            0,
            req::query(payhub_model::Endpoint::Other {
                method: payhub_model::Method::Get,
                path: "/v1/nothing".into(),
            }),
        ),
    ]);
    let closed = WorldConfig {
        decisions: vec![AcquirerDecision::Approve, AcquirerDecision::Decline],
        ..base(
            vec![
                (0, req::refund("R1", PAY_1, "R-1", 5000)),
                (0, req::refund("R2", PaymentId(2), "R-2", 5000)),
                (0, req::cancel("X1", PAY_1)),
                (0, req::cancel("X2", PaymentId(2))),
                (0, req::confirm("C1", PAY_1, 'B')),
                (0, req::confirm("C2", PaymentId(2), 'B')),
                (0, req::create("K3", "order-1", 10000, "USD", 'A')),
                (0, req::by_order("order-1")),
                (0, req::by_order("ORDER-1")),
            ],
            budget(&[(Knob::Sends, 2)]),
        )
    };
    let mut closed_setup = paid("K0", AcquirerDecision::Decline);
    closed_setup.extend([
        Step::Send(req::create_as(M1_TEST, "K1", "ORDER-2", 5000, "USD", None)),
        Step::Deliver,
    ]);
    vec![
        Preset::new(
            "edges-keys",
            "KEY-01..07, QUERY-01: every Idempotency-Key edge (missing, empty, 1, 255, 256 characters, multi-byte), keyless and empty-key requests on every keyed endpoint, confirm and cancel of a succeeded Payment, GETs of unknown ids and routes.",
            base(keys, budget(&[(Knob::Sends, 2)])),
            Millis::mins(30),
        )
        .exercising(&[Rule::KeyRequiredCreatePayment, Rule::KeyRequiredConfirm, Rule::KeyRequiredCancel, Rule::KeyRequiredCheckoutSession, Rule::KeyRequiredRefund, Rule::KeyNotRequiredQueries, Rule::KeyLength, Rule::QueryById])
        .after(paid("K0", AcquirerDecision::Approve)),
        Preset::new(
            "edges-closed",
            "ATTEMPT-02, A-CANCEL, QUERY-02: refunds of a failed and an unpaid Payment, cancels and confirms of them (closed once canceled), an order number that differs only in case.",
            closed,
            Millis::mins(30),
        )
        .exercising(&[Rule::CardRetryAfterFailure, Rule::QueryByOrderNo])
        .after(closed_setup),
    ]
}
