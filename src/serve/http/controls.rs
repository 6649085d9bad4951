//! The sandbox's control endpoints: the test clock, the session reset, the fault plan,
//! the rate-limit and pause controls, the payer's authentication and the load fill.

use super::*;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AdvanceBody {
    by: String,
}

fn bad(message: impl std::fmt::Display) -> Response {
    respond(HttpReply::refusal(400, "invalid_request", message))
}

/// Reads a control endpoint's body.
async fn control_bytes(req: Request) -> Result<Vec<u8>, Response> {
    let (parts, body) = req.into_parts();
    read_body(&parts.headers, body).await.map_err(respond)
}

/// Reads a control endpoint's JSON body.
async fn control_body<T: serde::de::DeserializeOwned>(req: Request) -> Result<T, Response> {
    let bytes = control_bytes(req).await?;
    serde_json::from_slice(&bytes).map_err(|e| bad(format!("bad JSON body: {e}")))
}

/// A control's answer: 200 with `ok`'s JSON of what it did, 400 with why it refused,
/// 500 when the session's core crashed.
fn answer<T, E: std::fmt::Display>(
    done: Option<Result<T, E>>,
    ok: impl FnOnce(T) -> serde_json::Value,
) -> Response {
    match done {
        Some(Ok(t)) => respond(HttpReply::json(200, ok(t).to_string())),
        Some(Err(e)) => bad(e),
        None => crashed(),
    }
}

/// `POST /__sandbox/clock/advance {"by":"8d"}`: returns once every timer due has fired.
pub(super) async fn advance(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
    req: Request,
) -> Result<Response, Response> {
    let body: AdvanceBody = control_body(req).await?;
    let Some(by) = payhub_sim::script::parse_duration(&body.by) else {
        return Err(bad(format!(
            "'{}' is not a duration of at most 36500d, the bound of one advance (250ms, 15s, 2min, 4h, 8d)",
            body.by
        )));
    };
    // A delivery already on its way is settled first (its acknowledgement recorded at
    // the time it was answered), so the jump cannot make it look unanswered.
    settle_webhooks(&edge, ns).await;
    let advanced = edge.with_core(ns, |core, _| core.advance(by));
    // Returns once every webhook due has been delivered (or lost) too.
    settle_webhooks(&edge, ns).await;
    Ok(answer(
        advanced,
        |now| serde_json::json!({ "now": now.to_string(), "now_ms": now.0 }),
    ))
}

/// Delivers the webhooks in flight until none is left (at most 10 s).
async fn settle_webhooks(edge: &Arc<Edge>, ns: usize) {
    for _ in 0..1_000 {
        flush_webhooks(edge, ns).await;
        if edge.with_core(ns, |core, _| core.webhooks_settled()) != Some(false) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `POST /__sandbox/reset`: a new session, the same settings and fault plan. Under
/// `--clock manual` the new session's clock starts at 0 again (its dates at
/// 1970-01-01T00:00:00Z), as the first session's did.
pub(super) async fn reset(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
) -> Response {
    let manual = edge.clock == super::ClockMode::Manual;
    let reply = edge.with_namespace(ns, |n, now| {
        n.core.reset(if manual { Millis::ZERO } else { now });
        if let Some(file) = &mut n.tape {
            file.restart();
        }
        HttpReply::json(200, "{\"reset\":true}".into())
    });
    reply.map_or_else(crashed, respond)
}

/// `GET /__sandbox/faults`: the plan in force; `POST`: replaces it (its counts start
/// again), answered with the plan then in force.
pub(super) async fn faults(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
    req: Request,
) -> Result<Response, Response> {
    let plan = if req.method() == axum::http::Method::POST {
        let bytes = control_bytes(req).await?;
        let text = std::str::from_utf8(&bytes).map_err(|_| "not UTF-8".to_owned());
        Some(text.and_then(Plan::from_json).map_err(bad)?)
    } else {
        None
    };
    let reply = edge.with_core(ns, |core, _| {
        if let Some(plan) = plan {
            core.set_plan(plan);
        }
        HttpReply::json(200, serde_json::to_string(core.plan()).unwrap_or_default())
    });
    Ok(reply.map_or_else(crashed, respond))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ControlsBody {
    #[serde(default)]
    rate_limited: Option<bool>,
    #[serde(default)]
    paused: Option<bool>,
}

/// `POST /__sandbox/controls?merchant=N {"rate_limited":true}` / `{"paused":true}`: the
/// platform's own rate limit of merchant N (429 with `Retry-After`) or its paused
/// channel (503 `temporarily_unavailable`), on until switched off (or a reset).
pub(super) async fn controls(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, merchant): MerchantNs,
    req: Request,
) -> Result<Response, Response> {
    use payhub_model::{Control, MerchantId};
    let merchant = MerchantId(merchant);
    let body: ControlsBody = control_body(req).await?;
    let mut switches = Vec::new();
    if let Some(on) = body.rate_limited {
        switches.push(Control::SetRateLimited { merchant, on });
    }
    if let Some(on) = body.paused {
        switches.push(Control::SetChannelPaused { on });
    }
    if switches.is_empty() {
        return Err(bad(
            "nothing to switch: give \"rate_limited\" or \"paused\" (true or false)",
        ));
    }
    let done = edge.with_core(ns, |core, now| {
        switches.into_iter().try_for_each(|c| core.control(now, c))
    });
    Ok(answer(
        done,
        |()| serde_json::json!({ "rate_limited": body.rate_limited, "paused": body.paused }),
    ))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthenticateBody {
    payment_id: PaymentId,
    #[serde(default = "yes")]
    ok: bool,
}

fn yes() -> bool {
    true
}

/// `POST /__sandbox/authenticate {"payment_id":"pay_demo_001","ok":true}`: the payer
/// completes (or fails) 3-D Secure for a test card C charge.
pub(super) async fn authenticate(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
    req: Request,
) -> Result<Response, Response> {
    let body: AuthenticateBody = control_body(req).await?;
    let done = edge.with_core(ns, |core, _| core.authenticate(body.payment_id, body.ok));
    Ok(answer(
        done,
        |attempt| serde_json::json!({ "attempt_id": attempt, "ok": body.ok }),
    ))
}

/// `POST /__sandbox/journal`: the merchant's journal, JSON Lines
/// ([`crate::serve::journal`]); all kept, or 400 naming the first bad line and field.
pub(super) async fn journal(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, merchant): MerchantNs,
    req: Request,
) -> Result<Response, Response> {
    let bytes = control_bytes(req).await?;
    let text = std::str::from_utf8(&bytes).map_err(|_| bad("the journal is not UTF-8"))?;
    let (status, json) = match edge.with_core(ns, |core, _| core.post_journal(merchant, text)) {
        Some(Ok(lines)) => (200, serde_json::json!({ "lines": lines })),
        Some(Err(r)) => {
            let (message, line, field) = (r.to_string(), r.line, r.field);
            let error = serde_json::json!({ "code": "invalid_journal", "message": message, "line": line, "field": field, "retryable": false });
            (400, serde_json::json!({ "error": error }))
        }
        None => return Ok(crashed()),
    };
    Ok(respond(HttpReply::json(status, json.to_string())))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FillBody {
    payments: usize,
}

/// Payments one call of `fill` creates under the lock; the lock is released between.
const FILL_CHUNK: usize = 1_000;
/// The most one `POST /__sandbox/fill` creates (a session holds at most
/// `serve --fill-max`).
const FILL_MAX: usize = 100_000;

/// `POST /__sandbox/fill {"payments":N}`: N more Payments in the session (the load
/// benchmark's setup), in chunks, so that other requests are answered in between.
pub(super) async fn fill(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
    req: Request,
) -> Result<Response, Response> {
    let body: FillBody = control_body(req).await?;
    if body.payments > FILL_MAX {
        return Err(bad(format!(
            "{} Payments: at most {FILL_MAX} per call (the bound of one fill)",
            body.payments
        )));
    }
    let held = edge.with_core(ns, |core, _| core.world().platform.payments().len());
    let held = held.ok_or_else(crashed)?;
    if held.saturating_add(body.payments) > edge.fill_max {
        return Err(bad(format!(
            "{} more Payments would make {} held: a session holds at most {} from fill (serve --fill-max)",
            body.payments,
            held.saturating_add(body.payments),
            edge.fill_max
        )));
    }
    let held_json = |held: usize| {
        let json = serde_json::json!({ "held": held });
        respond(HttpReply::json(200, json.to_string()))
    };
    if body.payments == 0 {
        return Ok(held_json(held));
    }
    let mut left = body.payments;
    let held = loop {
        let chunk = left.min(FILL_CHUNK);
        let held = match edge.with_core(ns, |core, now| core.fill(now, chunk)) {
            Some(Ok(n)) => n,
            Some(Err(e)) => return Err(bad(e)),
            None => return Err(crashed()),
        };
        left -= chunk;
        if left == 0 {
            break held;
        }
        tokio::task::yield_now().await;
    };
    Ok(held_json(held))
}
