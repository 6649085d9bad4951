//! `payhub-verify serve`: the sandbox. The platform model as a live HTTP API on loopback,
//! its acquirer driven by test cards, faults on the wire from a plan, a test clock, and the
//! harness's verdict over the session. [`sandbox`] is the sans-IO core, [`http`] the edge
//! (tokio, hyper, axum); HTTP ↔ model is `crate::http_map`, shared with check-log and
//! conform.

pub mod business;
pub mod defect;
pub mod diagrams;
pub mod faults;
pub mod guard;
pub mod har;
pub mod http;
pub mod journal;
pub mod page;
pub mod record;
pub mod sandbox;
pub mod script;
pub mod seam;
pub mod tape_file;
pub mod verdict;
pub mod webhooks;
pub mod witness;

use http::ClockMode;
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use sandbox::{Branches, Planted, Settings};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on (port 0: any free port; the banner prints the one taken).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Listen on a non-loopback address: anyone who can reach it can use the sandbox.
    #[arg(long)]
    pub allow_non_loopback: bool,
    /// The seed of `--branches seeded` and of the fault plan's probabilities.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// A fault plan (JSON, see `POST /__sandbox/faults`).
    #[arg(long)]
    pub faults: Option<PathBuf>,
    /// `real`: the session's time follows the wall clock; `manual`: it moves only with
    /// `POST /__sandbox/clock/advance`.
    #[arg(long, value_enum, default_value = "real")]
    pub clock: ClockMode,
    /// Where the contract allows two answers (S4, S5, S8): `a` the first, `b` the second,
    /// `seeded` a mix drawn from `--seed`.
    #[arg(long, value_enum, default_value = "a")]
    pub branches: Branches,
    /// Record the session's events to FILE as JSON Lines as they happen (what
    /// `payhub-verify judge` reads); merchant 2's go to FILE with `-merchant-2` before its
    /// extension. A reset starts the file again.
    #[arg(long, value_name = "FILE")]
    pub tape: Option<PathBuf>,
    /// POST the platform's webhooks to this http:// URL (a 2xx acknowledges one; anything
    /// else loses it, and the platform re-delivers).
    #[arg(long)]
    pub webhooks: Option<String>,
    /// Plant a bug of the zoo in the platform (`payhub-verify mutants --list`: a platform
    /// or a parameter mutant), for `payhub-verify conform` to find.
    #[arg(long, value_name = "NAME")]
    pub mutant: Option<String>,
    /// Every merchant in one session instead of one each: the platform's idempotency
    /// scopes alone keep merchants apart (`conform` with docs/profiles/sandbox-shared.json).
    #[arg(long)]
    pub shared_merchants: bool,
    /// Require this token in the header `X-Sandbox-Token` on every control `POST`
    /// (printed in the banner); without it, the Host and cross-origin checks alone guard
    /// the controls.
    #[arg(long, value_name = "TOKEN", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub control_token: Option<String>,
    /// The most Payments `POST /__sandbox/fill` leaves a session holding (each call adds
    /// at most 100,000).
    #[arg(long, value_name = "N", default_value_t = http::FILL_SESSION_MAX)]
    pub fill_max: usize,
    /// The most objects (Payments, Refunds, checkout sessions) the API creates in a
    /// session; past it, each create is answered 429 rate_limited with Retry-After (not
    /// executed, as the contract says of a 429) until `POST /__sandbox/reset`.
    #[arg(long, value_name = "N", default_value_t = sandbox::OBJECTS_MAX)]
    pub objects_max: usize,
}

/// Whether `ip` is loopback, an IPv4-mapped IPv6 loopback (`::ffff:127.0.0.1`) too.
pub fn is_loopback_ip(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback(),
        std::net::IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// The `after_help` of `serve --help`.
pub const HELP: &str = "\
Test cards (the body's \"card\" is a label; any other value is 400 field card, never stored):
  A approve   B decline   C requires_action (POST /__sandbox/authenticate)
  D slow: 202 after the ~15 s wait   E silent: needs_query, then manual_review   F acquirer 5xx
  G silent, and a cancel answered only after the ~15 s wait (cancel 202)

API keys (Authorization: Bearer ak_N): ak_1 merchant 1 test, ak_2 merchant 1 live,
  ak_3 merchant 2 test, ak_4 merchant 1 test read-only, ak_5 merchant 1 test (rotated,
  not issued). Each merchant is a session of its own (a namespace: two tests can run side
  by side); the control endpoints take ?merchant=2 (merchant 1 by default).

Control endpoints: POST /__sandbox/clock/advance {\"by\":\"8d\"}, GET /__sandbox/verdict
  [?format=markdown], GET /__sandbox/events, GET /__sandbox/script, GET /__sandbox/har,
  POST /__sandbox/reset, POST /__sandbox/fill {\"payments\":N} (N Payments more, for load tests),
  GET|POST /__sandbox/faults, POST /__sandbox/controls {\"rate_limited\":true} | {\"paused\":true}
  (the platform's own 429 / 503 until switched off), POST /__sandbox/authenticate {\"payment_id\":\"pay_demo_001\",\"ok\":true},
  POST /__sandbox/journal (JSON lines: {\"order\":\"ORDER-1\",\"state\":\"paid\",\"payment\":\"pay_demo_001\",\"version\":2},
  {\"order\":\"ORDER-1\",\"fulfilled\":\"pay_demo_001\"}, {\"order\":\"ORDER-1\",\"cart\":\"CART-1\"}: the merchant's database).

Fault plan: {\"faults\":[{\"endpoint\":\"create_payment\",\"order\":\"ORDER-1\",\"nth\":1,\"times\":1,
  \"action\":\"reset_after\"}],\"retry_after_s\":1}; matchers endpoint (create_payment, confirm_payment,
  cancel_payment, create_checkout_session, create_refund, get_payment, list_payments, get_refund,
  list_refunds_by_no, list_refunds_processing), api_key, key, order; the
  nth match and the times-1 after it, or \"probability\":0.1 of every match (drawn from --seed); actions
  reset_before, reset_after (executed, then the connection is reset), 500_before, 500_after,
  rate_limited (429 with retry_after_s), unavailable (503), slow_upstream with \"ms\" (the
  upstream answers that much later: a concurrent same-key request meets it in flight),
  hold with \"ms\" (executed, the answer written that much later; a client that gives up
  first has an unknown result). Webhooks: \"webhook_faults\":[{\"type\":\"payment.succeeded\",
  \"nth\":1,\"action\":\"drop\"}], actions drop, duplicate, delay with \"ms\" (reordering).

Examples:
  payhub-verify serve
  payhub-verify serve --addr 127.0.0.1:0 --clock manual
  payhub-verify serve --faults plan.json --branches b
  payhub-verify serve --webhooks http://127.0.0.1:9000/payhub
  payhub-verify serve --tape session.jsonl   # then: payhub-verify judge session.jsonl
  curl -s localhost:8080/v1/payments -H 'Authorization: Bearer ak_1' -H 'Idempotency-Key: k1' \\
    -H 'Content-Type: application/json' -d '{\"merchant_order_no\":\"ORDER-1\",\"amount\":10000,\"currency\":\"USD\",\"card\":\"A\"}'
  curl -s localhost:8080/__sandbox/verdict?format=markdown
  curl -s localhost:8080/__sandbox/events > session.jsonl && payhub-verify judge session.jsonl
  curl -s localhost:8080/__sandbox/script > session.pha && payhub-verify run session.pha";

pub fn run(args: &ServeArgs) -> Result<ExitCode, String> {
    if !is_loopback_ip(args.addr.ip()) && !args.allow_non_loopback {
        return Err(format!(
            "{} is not a loopback address; add --allow-non-loopback to listen on it",
            args.addr
        ));
    }
    let plan = match &args.faults {
        None => faults::Plan::default(),
        Some(path) => {
            let text = crate::input::read_text(path)?;
            faults::Plan::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
    };
    let webhooks = args
        .webhooks
        .as_deref()
        .map(webhooks::parse_url)
        .transpose()?;
    let planted = match &args.mutant {
        None => Planted::Reference,
        // A zoo name (`payhub-verify mutants --list`): a platform or a parameter mutant.
        Some(name) => (payhub_model::Mutant::from_name(name).map(Planted::Mutant))
            .or_else(|| payhub_model::ParameterMutant::from_name(name).map(Planted::Parameter))
            .ok_or_else(|| {
            format!("--mutant {name}: not a platform or parameter mutant of the zoo (payhub-verify mutants --list)")
        })?,
    };
    let settings = Settings {
        seed: args.seed,
        branches: args.branches,
        plan,
        webhooks: webhooks.is_some(),
        planted,
        seam: Default::default(),
    };
    // The bodies write times as dates: under the real clock edge time 0 is now; under
    // the manual clock 1970-01-01T00:00:00Z, so that a session's dates are the same on
    // every run.
    let edge_zero = match args.clock {
        ClockMode::Real => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0)),
        ClockMode::Manual => 0,
    };
    let namespaces = http::Namespace::pair(&settings, edge_zero, args.objects_max, |ns| {
        args.tape
            .as_ref()
            .map(|base| tape_file::TapeFile::create(&tape_file::path_of(base, ns)))
            .transpose()
    })?;
    let runtime = runtime()?;
    runtime.block_on(async {
        let (listener, addr) = http::listen(args.addr).await?;
        if !is_loopback_ip(addr.ip()) {
            eprintln!(
                "payhub-verify serve: WARNING: listening on {addr}, not loopback: anyone who reaches it can use this sandbox"
            );
        }
        print!("{}", banner(addr, args, &settings.plan));
        let guard = guard::Guard {
            addr: Some(addr),
            open: args.allow_non_loopback && addr.ip().is_unspecified(),
            token: args.control_token.clone(),
        };
        let shared = args.shared_merchants;
        let mut edge = http::Edge::new(namespaces, args.clock, webhooks, guard, shared);
        edge.fill_max = args.fill_max;
        let edge = Arc::new(edge);
        tokio::select! {
            _ = http::serve(listener, edge) => {}
            _ = tokio::signal::ctrl_c() => println!("payhub-verify serve: stopped"),
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The runtime the sandbox and its clients run on: two worker threads.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// What `serve` prints at start: its address first (a test reads that line), the keys,
/// the test cards and the control endpoints.
pub fn banner(addr: SocketAddr, args: &ServeArgs, plan: &faults::Plan) -> String {
    use clap::ValueEnum as _;
    use std::fmt::Write as _;
    let name = |v: Option<clap::builder::PossibleValue>| {
        v.map(|v| v.get_name().to_owned()).unwrap_or_default()
    };
    let mut s = format!("payhub-verify serve: listening on http://{addr}\n");
    let _ = writeln!(
        s,
        "clock: {}, branches: {}, seed: {}, webhooks: {}{}",
        name(args.clock.to_possible_value()),
        name(args.branches.to_possible_value()),
        args.seed,
        args.webhooks.as_deref().unwrap_or("none"),
        args.mutant
            .as_deref()
            .map(|m| format!(", PLANTED BUG: {m}"))
            .unwrap_or_default()
    );
    if let Some(base) = &args.tape {
        let _ = writeln!(
            s,
            "tape: merchant 1's events to {}, merchant 2's to {} (JSON Lines, as they happen)",
            base.display(),
            tape_file::path_of(base, 1).display()
        );
    }
    let plan_json = serde_json::to_string(plan).unwrap_or_default();
    let _ = writeln!(
        s,
        "fault plan: {} (applies to every merchant's session and survives POST /__sandbox/reset; POST /__sandbox/faults[?merchant=2] replaces it for that session)",
        if plan.faults.is_empty() && plan.webhook_faults.is_empty() && plan.retry_after_s.is_none()
        {
            "none"
        } else {
            plan_json.as_str()
        }
    );
    s.push_str("API keys (Authorization: Bearer …):\n");
    for k in default_api_keys() {
        let _ = writeln!(
            s,
            "  {:<5} {} {}{}",
            k.id.to_string(),
            k.merchant,
            k.environment,
            if k.read_only { " read-only" } else { "" }
        );
    }
    let r = rotated_key_spec();
    let _ = writeln!(
        s,
        "  {:<5} {} {} (the rotated key: not issued until rotation)",
        r.id.to_string(),
        r.merchant,
        r.environment
    );
    s.push_str("test cards (\"card\" in the body):\n");
    for c in payhub_model::cards::CARDS {
        let _ = writeln!(s, "  {}  {}", c.label, c.about);
    }
    let _ = writeln!(
        s,
        "limits: body {} bytes (413), headers {} bytes (431), header and body read timeouts {} s",
        http::BODY_BYTES_MAX,
        http::HEADER_BYTES_MAX,
        http::HEADER_READ_TIMEOUT.as_secs()
    );
    let _ = writeln!(
        s,
        "bounds: a clock advance at most 36500d, fill at most 100000 Payments per call and {} per session, {} objects created through the API per session (then 429 rate_limited)",
        args.fill_max, args.objects_max
    );
    match &args.control_token {
        Some(t) => {
            let _ = writeln!(
                s,
                "control token: {t} (send X-Sandbox-Token: {t} on every POST /__sandbox/…)"
            );
        }
        None => s.push_str(
            "control plane: loopback Host names only, cross-origin browser requests refused, JSON bodies only (--control-token adds a token)\n",
        ),
    }
    if args.shared_merchants {
        s.push_str("namespaces: one session for every merchant (--shared-merchants)\n");
    } else {
        s.push_str("namespaces: merchant 1 and merchant 2 are sessions of their own; control endpoints take ?merchant=2\n");
    }
    s.push_str(CONTROL_ENDPOINTS);
    s
}

/// The banner's last lines: every control endpoint and what it does.
const CONTROL_ENDPOINTS: &str = "control endpoints:
  POST /__sandbox/clock/advance {\"by\":\"8d\"}                      moves the session clock; returns after every timer due has fired
  GET  /__sandbox/[?merchant=2]                                  the session's page: verdict, sequence diagram, exports
  GET  /__sandbox/page.json                                      what the page shows, as JSON
  GET  /__sandbox/verdict[?format=markdown]                      every property of the harness over the session
  GET  /__sandbox/events                                         the session's events, JSON Lines (payhub-verify judge reads them)
  GET  /__sandbox/script                                         the session as a what-if script (payhub-verify run replays it)
  GET  /__sandbox/har                                            the session's exchanges as HAR 1.2 (payhub-verify check-log reads it)
  POST /__sandbox/reset                                          a new session
  POST /__sandbox/fill {\"payments\":N}                            N more Payments, created through the model (load tests)
  GET|POST /__sandbox/faults                                     the fault plan in force / a new one
  POST /__sandbox/controls {\"rate_limited\":true}|{\"paused\":true} the platform's own 429 / 503 until switched off
  POST /__sandbox/authenticate {\"payment_id\":…,\"ok\":true}        the payer's 3-D Secure for card C
  POST /__sandbox/journal (JSON lines)                           the merchant's orders, fulfilments and carts (docs/sandbox.md)
";
