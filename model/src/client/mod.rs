//! Merchant integrations as models: the contract's reference client, and the
//! anti-patterns the contract warns against as named variants of its policy.
//!
//! A [`MerchantServer`] is a sans-IO state machine: no clock, no randomness, no I/O.
//! Its state splits into what a crash loses (memory: requests in flight, try counters,
//! timers) and what survives (the [`MerchantDb`], passed to every step because several
//! servers of one merchant share it: "multiple servers … compute the same key").
//!
//! # Driving a server
//! ```text
//! loop {
//!     server.step(now, &mut db, input, &mut out)?;   // one ClientInput
//!     for o in out.drain(..) { /* Send → network, AckWebhook → platform, Decision → trace */ }
//!     // next wake-up: server.poll_timeout(); deliver ClientInput::Wake then
//! }
//! ```
//! Inputs: `Command` (pay, card retry, cancel, amend, refund, daily reconciliation),
//! `Response`/`NetworkError`/`Timeout` for a [`Handle`] the server sent, `Wake`,
//! `Webhook`, `Crash`, `Restart`. Every input that can schedule a retry or make a random
//! key carries a [`Draw`]: `jitter` (below 250 ms, RETRY-02) and `entropy` (random keys,
//! GEN-04), chosen by the seeded world or the exhaustive checker.
//!
//! # The reference policy, step by step ([`Policy::reference`])
//! - Keys (GEN-01..06): `payment.create:ORDER:1`, `payment.confirm:ORDER:2`,
//!   `payment.cancel:ORDER:1`, `refund.create:REFUND:1` (or random UUIDs), written to the
//!   database with the order before the request leaves; read back after a crash.
//! - Retries (RETRY-01..03, RATE-03): network errors, timeouts, 429, 5xx (503 included)
//!   and the in-flight 409s are retried with the same key after `min(30 s, 1 s ×
//!   2^(n-1))` plus jitter, or exactly Retry-After on 429; at most 5 tries; then the
//!   result is unknown and the order is "confirming".
//! - Timeouts (TIMEOUT-01): 20 s for every POST, 10 s for queries.
//! - Queries (SCHED-01, SCHED-02, RETRY-04, QUERY-06): after a 202 or an unknown result,
//!   at 10 s, 30 s, 2 min, 5 min, 15 min, 1 h, then every 4 h until 24 h; never less than
//!   10 s apart for one order, by any server; stop at a final status or on its webhook;
//!   by order number when no Payment id survived; "not found" re-sends the create with
//!   the original key.
//! - Versions (WEBHOOK-02): a Payment or Refund state from a response, a query or a
//!   webhook is applied only if its `version` is newer.
//! - Card retry (ATTEMPT-07, GEN-02): only after `failed`, before `expires_at`, within 3
//!   attempts, with sequence + 1. `idempotency_conflict` is a defect (UNKNOWN-04);
//!   `order_no_conflict` names the Payment to query (UNKNOWN-05); a 202 on cancel is not
//!   canceled (CANCEL-02); `manual_review` stays pending, never re-charged (RES-04);
//!   fulfilment once per order (RES-07).
//! - Refunds (SCHED-03): a persisted key, the same retries, no polling; a daily
//!   `GET /v1/refunds?status=processing`.
//!
//! # Anti-patterns ([`AntiPattern`], each naming the rule it breaks)
//! See [`AntiPattern::ALL`]; [`Policy::with`] adds one to a policy. Each is the reference
//! client plus one deviation, taken at one decision point of `conduct.rs` that records
//! `Decision::Deviate { pattern }` with the rule broken.
//!
//! # Assumptions of the client (the contract is silent or ambiguous)
//! Catalogued with the platform's in [`crate::Assumption`] and `model/ASSUMPTIONS.md`,
//! and cited where the server decides:
//! - A-CLIENT-SCHED-ANCHOR: query times count from when the client learned the result is
//!   not final (a 202, a response or query showing it in progress, an order-number
//!   conflict, or the last try failing), not from "first acceptance", which it cannot
//!   observe; a 202 on cancel starts its own window, and so does a submission that was
//!   still sending when it became unknown (an older window of the order may be over).
//! - A-CLIENT-SCHED-4H: "then every 4 hours until 24 hours" is 5 h, 9 h, 13 h, 17 h, 21 h.
//! - A-CLIENT-INFLIGHT-409: `operation_in_progress` (S5, CONC-03: "retry later with the
//!   same key") goes through the same retry loop as 429 and 5xx (RETRY-02 backoff, 5 tries,
//!   then unknown).
//! - A-CLIENT-S8-WAIT: `payment_in_progress` (S8: "wait for the result, or query") is
//!   never re-sent: the result is unknown and the Payment is queried on the SCHED-01
//!   schedule.
//! - A-CLIENT-CORRECTED-KEY: paying a create rejected with 400, 401, 403 or 422 again is a
//!   new submission under a new key (REJECT-01: "after correcting them, submit with a new
//!   key"), sequence + 1.
//! - A-CLIENT-POST-TIMEOUT: every POST (cancel and refund included) waits 20 s, as the
//!   contract's reference code does; queries 10 s.
//! - A-CLIENT-CANCEL-KEY: a cancel's derived key is `payment.cancel:ORDER:1` (the contract
//!   gives examples for create, confirm and refund only).
//! - A-CLIENT-DB-TXN: one step of one server is one database transaction; two servers
//!   never create the same order concurrently (the order number is the primary key).
//! - A-CLIENT-RESTART-SWEEP: a restarted process resumes every unfinished submission of
//!   the shared database, whichever server started it.
//! - A-CLIENT-REFUND-LOOKUP: at the daily reconciliation, a refund whose create never got
//!   an answer is looked up by refund number, and "not found" re-sends it with its
//!   original key (S11: "retry with K, or query by merchant_refund_no").
//!
//! One server driven entirely by hand, and a bench of servers against the platform, are
//! the tests': `tests/solo`, `tests/client_bench`.

mod commands;
pub mod conduct;
pub mod db;
pub mod decision;
pub mod io;
pub mod keys;
pub mod policy;
mod replies;
pub mod schedule;
pub mod server;

pub use db::{
    AppliedPayment, AppliedRefund, CancelRecord, MerchantDb, OrderOutcome, OrderRecord, OrderState,
    RefundRecord, Submission, SubmissionKind,
};
pub use decision::{Decision, ObjectState, PayerMessage, Refusal, Subject, Via};
pub use io::{ClientError, ClientInput, ClientOutput, Command, Draw, Handle};
pub use keys::{KeyPurpose, Keys};
pub use policy::{After503, AntiPattern, ClientParams, Policy};
pub use server::{ClientTimer, MerchantServer, Op, ServerConfig};
