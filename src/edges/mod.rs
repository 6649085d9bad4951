//! The edges checked end to end, as `verify` runs them (docs/testing.md): sandbox
//! sessions on loopback driven by the [`client`]s, what they left judged by [`checks`]
//! (the client's own [`capture`] among it), conform's [`smoke`] run, then the edge
//! [`zoo`]. The planted defects and their decision points live with the sandbox
//! (`serve::defect`, `serve::seam`), which check-log and conform ask too, so no edge
//! imports this folder.

pub mod capture;
pub mod checks;
pub mod client;
pub mod session;
pub mod smoke;
pub mod zoo;

pub use crate::serve::defect::EdgeDefect;
pub use crate::serve::seam::EdgeSeam;

use crate::serve::faults::{Action, Plan, Rule};
use crate::serve::sandbox::Branches;
use checks::EdgeCheck;
use client::{Program, Run};
use payhub_model::client::KeyPurpose;
use payhub_model::client::keys::derived;
use serde::Serialize;
use session::Spec;
use std::path::Path;
use std::time::Instant;

/// Seeds of conform's smoke run (`conform --preset smoke`: 0..50).
pub const SMOKE_SEEDS: u64 = 50;

fn rule(endpoint: &str, nth: u32, action: Action, ms: Option<u64>) -> Rule {
    Rule {
        endpoint: Some(endpoint.into()),
        api_key: None,
        key: None,
        order: None,
        nth,
        times: 1,
        action,
        probability: None,
        ms,
    }
}

/// A run of merchant 1 (`ak_1`).
fn client_run(program: Program, order: &str, card: char, key: &str) -> Run {
    Run {
        program,
        api_key: "ak_1",
        order: order.into(),
        card,
        key: key.into(),
    }
}

/// A run of the model's client (the reference policy, or `program`'s anti-pattern of
/// it), its key the one it derives (GEN-01).
fn model_run(program: Program, api_key: &'static str, order: &str, card: char) -> Run {
    let key = derived(KeyPurpose::CreatePayment, order, 1);
    Run {
        api_key,
        ..client_run(program, order, card, &key)
    }
}

/// A plan of `faults` alone.
fn plan(faults: Vec<Rule>) -> Plan {
    Plan {
        faults,
        ..Plan::default()
    }
}

/// The sessions the edges are checked on, in the order the edge zoo tries them.
pub fn sessions() -> Vec<Spec> {
    let create = "create_payment";
    let slow = || plan(vec![rule(create, 1, Action::SlowUpstream, Some(2_000))]);
    let hold = Action::Hold;
    vec![
        // "Don't do this": a new key, then a new order number, after a lost answer; and
        // a retry of a 429 after the usual backoff (1 s), before its Retry-After (2 s).
        Spec {
            name: "dont-do-this",
            branches: Branches::A,
            plan: plan(vec![
                rule(create, 1, Action::ResetAfter, None),
                rule(create, 4, Action::RateLimited, None),
            ]),
            runs: vec![
                client_run(Program::DontDoThis, "ORDER-9", 'A', "k-9"),
                model_run(Program::IgnoresRetryAfter, "ak_1", "ORDER-8", 'A'),
            ],
            violated: &[
                "client-never-charges-an-order-twice",
                "client-honours-retry-after",
                "client-creates-an-order-under-one-key",
            ],
        },
        // The reference client through every fault of the plan on its first create,
        // then merchant 2 under the same key and order number with a slow card, then a
        // declined card.
        Spec {
            name: "reference",
            branches: Branches::A,
            plan: Plan {
                retry_after_s: Some(1),
                ..plan(vec![
                    rule(create, 1, Action::ResetAfter, None),
                    rule(create, 2, Action::Fail500After, None),
                    rule(create, 3, Action::RateLimited, None),
                    rule(create, 4, Action::Unavailable, None),
                    rule(create, 5, Action::ResetBefore, None),
                    rule(create, 6, Action::Fail500Before, None),
                ])
            },
            runs: vec![
                model_run(Program::Reference, "ak_1", "ORDER-1", 'A'),
                model_run(Program::Reference, "ak_3", "ORDER-1", 'D'),
                model_run(Program::Reference, "ak_1", "ORDER-2", 'B'),
            ],
            violated: &[],
        },
        // A double submit under one key while the first create's upstream is slow: the
        // second is answered 409 operation_in_progress (S5's second branch).
        Spec {
            name: "double-submit",
            branches: Branches::B,
            plan: slow(),
            runs: vec![client_run(Program::DoubleSubmit, "ORDER-5", 'A', "k-5")],
            violated: &[],
        },
        // Queries spaced 10 s from start to start, the first one's answer held 3 s, of a
        // Payment still processing (card E: a query after one showed it final breaks
        // SCHED-01).
        Spec {
            name: "slow-query",
            branches: Branches::A,
            plan: plan(vec![rule(
                "get_payment",
                1,
                hold,
                Some(client::SLOW_QUERY_MS),
            )]),
            runs: vec![client_run(Program::SlowQuery, "ORDER-7", 'E', "k-7")],
            violated: &[],
        },
        // The double submit with another amount in the second copy.
        Spec {
            name: "double-submit-changed",
            branches: Branches::B,
            plan: slow(),
            runs: vec![client_run(
                Program::DoubleSubmitChanged,
                "ORDER-6",
                'A',
                "k-6",
            )],
            violated: &["client-never-changes-parameters-under-a-key"],
        },
    ]
}

/// One check over one session of the reference edges.
#[derive(Clone, Debug, Serialize)]
pub struct CheckRow {
    pub session: String,
    pub check: &'static str,
    pub passed: bool,
    pub detail: Option<String>,
}

/// What `verify` reports of the edges.
#[derive(Clone, Debug, Serialize)]
pub struct EdgeReport {
    /// The reference edges: every check over every session, and conform's smoke run.
    pub checks: Vec<CheckRow>,
    /// HTTP exchanges the sessions' clients made.
    pub exchanges: usize,
    pub smoke_cases: usize,
    pub smoke_requests: usize,
    /// The edge zoo's kill matrix (empty with `verify --no-mutants`).
    pub defects: Vec<zoo::DefectRow>,
    pub seconds: f64,
}

/// The edges end to end, then (with `zoo`) the edge zoo; the files the checks read go
/// to `dir`.
pub fn run(dir: &Path, zoo: bool) -> Result<EdgeReport, String> {
    let started = Instant::now();
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let runtime = crate::serve::runtime()?;
    runtime.block_on(async {
        let mut rows = Vec::new();
        let mut exchanges = 0;
        for spec in sessions() {
            let s = session::run(&spec, EdgeSeam::REFERENCE).await?;
            exchanges += s.seen.len();
            for check in EdgeCheck::SESSION {
                let r = checks::run(
                    check,
                    &s,
                    &spec.plan,
                    spec.violated,
                    dir,
                    spec.name,
                    EdgeSeam::REFERENCE,
                );
                rows.push(CheckRow {
                    session: spec.name.into(),
                    check: check.name(),
                    passed: r.is_ok(),
                    detail: r.err(),
                });
            }
        }
        let smoke = smoke::run(SMOKE_SEEDS, EdgeSeam::REFERENCE, EdgeSeam::REFERENCE).await?;
        rows.push(CheckRow {
            session: "conform smoke".into(),
            check: EdgeCheck::ConformSmoke.name(),
            passed: smoke.exit == 0,
            detail: smoke.violation.as_ref().map(|(rule, n)| {
                format!("conform finds a violation of {rule} (shrunk to {n} requests) against the reference sandbox")
            }),
        });
        let mut defects = Vec::new();
        for defect in EdgeDefect::ALL.into_iter().filter(|_| zoo) {
            defects.push(zoo::kill(defect, dir).await?);
        }
        Ok(EdgeReport {
            checks: rows,
            exchanges,
            smoke_cases: smoke.cases,
            smoke_requests: smoke.requests,
            defects,
            seconds: started.elapsed().as_secs_f64(),
        })
    })
}

#[cfg(test)]
mod tests {
    /// The reference edges pass every check, and every planted defect of the edge zoo is
    /// caught by one, with a witness of at least one exchange: each check is shown to
    /// fail on a planted bug.
    #[test]
    fn the_reference_edges_pass_and_every_planted_defect_is_caught() {
        let dir = std::env::temp_dir().join(format!("payhub-edges-{}", std::process::id()));
        let report = super::run(&dir, true).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        for c in &report.checks {
            assert!(c.passed, "{} on {}: {:?}", c.check, c.session, c.detail);
        }
        for d in &report.defects {
            println!(
                "{} | {:?} | {:?} | {:.2} s | {:?} | {:?}",
                d.name, d.caught_by, d.session, d.seconds, d.witness_requests, d.witness
            );
            assert!(d.caught_by.is_some(), "{} missed", d.name);
            assert!(d.witness_requests.is_some_and(|n| n >= 1), "{}", d.name);
        }
        assert_eq!(report.defects.len(), super::EdgeDefect::ALL.len());
    }
}
