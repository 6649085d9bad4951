//! The HTTP edge: HTTP/1.1 on a TCP listener (hyper 1 under axum's router), the
//! sandbox's core behind a mutex, `now` read here and nowhere else.
//!
//! Limits: request headers at most [`HEADER_BYTES_MAX`] (hyper answers 431 over it),
//! read within [`HEADER_READ_TIMEOUT`]; a body at most [`BODY_BYTES_MAX`] (413 over it,
//! in the contract's error shape), read within [`BODY_READ_TIMEOUT`] (408). A fault that
//! resets the connection sets `SO_LINGER` to 0 and drops it: the client reads a
//! connection reset, not an answer.

use super::faults::Plan;
use super::sandbox::{MERCHANT_2_IDS_FROM, Sandbox, Settings, Step};
use super::tape_file::TapeFile;
use crate::http_map::{HttpReply, HttpRequest, Wire};
use axum::Router;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use hyper_util::rt::{TokioIo, TokioTimer};
use payhub_model::api_keys::{default_api_keys, rotated_key_spec};
use payhub_model::{ErrorCode, Field, Millis, PaymentId, RequestId};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tower::ServiceExt as _;

/// Request bodies over this are answered 413.
pub const BODY_BYTES_MAX: usize = 64 * 1024;
/// The request line and headers together, at most (hyper's read buffer).
pub const HEADER_BYTES_MAX: usize = 64 * 1024;
/// Headers not complete within this close the connection.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A body not complete within this is answered 408.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Where `now` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockMode {
    /// Milliseconds since the sandbox started.
    Real,
    /// The session's own clock, moved only by `POST /__sandbox/clock/advance`.
    Manual,
}

/// The edge's state: one session per namespace, the clock, where webhooks go.
pub struct Edge {
    namespaces: Vec<Mutex<Namespace>>,
    clock: ClockMode,
    started: Instant,
    webhooks: Option<(String, String)>,
    /// `serve --shared-merchants`: every merchant in one session (namespace 0), so the
    /// platform's scopes, not the sandbox's namespaces, keep merchants apart.
    shared: bool,
    /// Who may reach the sandbox: the Host check, the cross-origin refusal, the token.
    guard: Arc<super::guard::Guard>,
    /// The most Payments `fill` leaves a session holding.
    pub(crate) fill_max: usize,
}

/// One namespace: its session's core and, with `--tape FILE`, the file its events go to.
pub struct Namespace {
    pub core: Sandbox,
    pub tape: Option<TapeFile>,
}

impl Namespace {
    /// A sandbox's two sessions under `settings`, merchant 1's and merchant 2's (its ids
    /// numbered apart): edge time 0 at Unix time `edge_zero`, at most `objects_max`
    /// objects each, each with the tape `tape` opens for its number.
    pub fn pair(
        settings: &Settings,
        edge_zero: i64,
        objects_max: usize,
        mut tape: impl FnMut(usize) -> Result<Option<TapeFile>, String>,
    ) -> Result<Vec<Namespace>, String> {
        (0..2)
            .map(|ns| {
                Ok(Namespace {
                    core: Sandbox::new(settings.clone())
                        .with_ids_from(if ns == 1 { MERCHANT_2_IDS_FROM } else { 0 })
                        .with_edge_zero(edge_zero)
                        .with_objects_max(objects_max),
                    tape: tape(ns)?,
                })
            })
            .collect()
    }
}

impl Edge {
    pub fn new(
        namespaces: Vec<Namespace>,
        clock: ClockMode,
        webhooks: Option<(String, String)>,
        guard: super::guard::Guard,
        shared: bool,
    ) -> Edge {
        Edge {
            namespaces: namespaces.into_iter().map(Mutex::new).collect(),
            clock,
            started: Instant::now(),
            webhooks,
            shared,
            guard: Arc::new(guard),
            fill_max: FILL_SESSION_MAX,
        }
    }

    /// Runs `f` on namespace `ns` at the edge's `now`, printing the world's errors and
    /// writing its new events to the tape file. A panic in the core (a bug) is answered
    /// 500 and printed, and the session goes on.
    fn with_namespace<T>(
        &self,
        ns: usize,
        f: impl FnOnce(&mut Namespace, Millis) -> T,
    ) -> Option<T> {
        let ns = if self.shared { 0 } else { ns };
        let mut guard = self
            .namespaces
            .get(ns)?
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let now = match self.clock {
            ClockMode::Real => Millis(self.started.elapsed().as_millis() as u64),
            ClockMode::Manual => guard.core.now(),
        };
        let namespace = &mut *guard;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(namespace, now)));
        for e in namespace.core.take_errors() {
            eprintln!("payhub-verify serve: sandbox error: {e}");
        }
        // The events recorded since the last call go to the tape file (the record may
        // then rotate its trace).
        let tape = &mut namespace.tape;
        namespace
            .core
            .hand_out_events(|e| tape.iter_mut().for_each(|f| f.write(e)));
        tape.iter_mut().for_each(TapeFile::flush);
        result.ok()
    }

    /// [`Edge::with_namespace`] on the namespace's core.
    fn with_core<T>(&self, ns: usize, f: impl FnOnce(&mut Sandbox, Millis) -> T) -> Option<T> {
        self.with_namespace(ns, |n, now| f(&mut n.core, now))
    }
}

/// The connection's kill switch, handed to the handlers as a request extension: a
/// notice drops the connection (after the socket is set to reset on close, for a fault);
/// the socket says whether the client closed its side.
#[derive(Clone)]
struct Kill(Arc<Notify>, Socket);

/// How often the background task fires due timers (real clock) and sends webhooks.
const BACKGROUND_EVERY: Duration = Duration::from_millis(20);

/// The background task: under the real clock, what comes due fires without a request;
/// webhooks in flight are POSTed.
async fn background(edge: Arc<Edge>) {
    loop {
        for ns in 0..edge.namespaces.len() {
            if edge.clock == ClockMode::Real {
                edge.with_core(ns, |core, now| core.catch_up(now));
            }
            flush_webhooks(&edge, ns).await;
        }
        tokio::time::sleep(BACKGROUND_EVERY).await;
    }
}

/// POSTs every webhook handed out now, concurrently, and reports each.
async fn flush_webhooks(edge: &Edge, ns: usize) {
    let Some(target) = &edge.webhooks else {
        return;
    };
    let out = edge
        .with_core(ns, |core, _| core.take_webhooks())
        .unwrap_or_default();
    let mut posts = tokio::task::JoinSet::new();
    for w in out {
        let target = target.clone();
        posts.spawn(async move {
            tokio::time::sleep(Duration::from_millis(w.delay_ms)).await;
            (w.msg, super::webhooks::post(&target, &w.body).await)
        });
    }
    while let Some(done) = posts.join_next().await {
        if let Ok((msg, acknowledged)) = done {
            edge.with_core(ns, |core, _| core.webhook_done(msg, acknowledged));
        }
    }
}

/// The most Payments `fill` leaves a session holding unless `serve --fill-max` says
/// otherwise (100,000: about 550 MiB resident, README's load figures).
pub const FILL_SESSION_MAX: usize = 100_000;

/// A listener on `addr`, and the address it took (port 0: any free port).
pub async fn listen(
    addr: std::net::SocketAddr,
) -> Result<(TcpListener, std::net::SocketAddr), String> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let taken = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening address: {e}"))?;
    Ok((listener, taken))
}

/// Accepts connections until the listener fails for good.
pub async fn serve(listener: TcpListener, edge: Arc<Edge>) {
    tokio::spawn(background(edge.clone()));
    let guard = edge.guard.clone();
    let router = router(edge);
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // Out of descriptors and the like: wait, then go on accepting.
                eprintln!("payhub-verify serve: accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(stream, router.clone(), guard.clone()));
    }
}

/// One connection: hyper's HTTP/1.1 with the limits above; a kill drops it with a reset.
async fn connection(
    stream: tokio::net::TcpStream,
    router: Router,
    guard: Arc<super::guard::Guard>,
) {
    let kill = Arc::new(Notify::new());
    let switch = Kill(kill.clone(), Socket::of(&stream));
    let service = hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
        let refused = guard.refuses(req.uri().path(), req.method().as_str(), req.headers());
        req.extensions_mut().insert(switch.clone());
        let router = router.clone();
        async move {
            match refused {
                Some(reply) => Ok(respond(reply)),
                None => router.oneshot(req.map(Body::new)).await,
            }
        }
    });
    // A client may shut its side down once the request is sent (`shutdown(Write)`,
    // `curl` with stdin closed): a request answered at once is still answered, not
    // dropped on the EOF. One still waiting for its answer is a hang-up ([`wait`]).
    let conn = hyper::server::conn::http1::Builder::new()
        .half_close(true)
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(HEADER_BYTES_MAX)
        .serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = conn => {}
        // Dropping the connection closes the socket: with `SO_LINGER` 0, a reset.
        _ = kill.notified() => {}
    }
}

fn router(edge: Arc<Edge>) -> Router {
    Router::new()
        .route("/__sandbox/clock/advance", post(advance))
        .route("/__sandbox/verdict", get(verdict))
        .route("/__sandbox/events", get(stream::events))
        .route("/__sandbox/script", get(script))
        .route("/__sandbox/har", get(har))
        .route("/__sandbox/", get(page))
        .route("/__sandbox/page.json", get(page_json))
        .route("/__sandbox/reset", post(reset))
        .route("/__sandbox/faults", get(faults).post(faults))
        .route("/__sandbox/controls", post(controls))
        .route("/__sandbox/authenticate", post(authenticate))
        .route("/__sandbox/journal", post(journal))
        .route("/__sandbox/fill", post(fill))
        .fallback(api)
        .with_state(edge)
}

/// The body, within the limits; the edge's answer otherwise.
async fn read_body(headers: &HeaderMap, body: Body) -> Result<Vec<u8>, HttpReply> {
    let refused = |status| HttpReply {
        status,
        ..HttpReply::code(ErrorCode::InvalidRequest, Some(Field::Body))
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > BODY_BYTES_MAX as u64) {
        return Err(refused(413));
    }
    match tokio::time::timeout(
        BODY_READ_TIMEOUT,
        axum::body::to_bytes(body, BODY_BYTES_MAX),
    )
    .await
    {
        Ok(Ok(bytes)) => Ok(bytes.to_vec()),
        // Past the bound: 413; a body cut short or badly chunked: 400.
        Ok(Err(e)) => match e.into_inner().is::<http_body_util::LengthLimitError>() {
            true => Err(refused(413)),
            false => Err(refused(400)),
        },
        Err(_) => Err(refused(408)),
    }
}

fn respond(reply: HttpReply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut builder = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, reply.content_type);
    if let Some(s) = reply.retry_after_s {
        builder = builder.header(header::RETRY_AFTER, s.to_string());
    }
    builder
        .body(Body::from(reply.body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn crashed() -> Response {
    respond(HttpReply::from_response(
        &payhub_sim::world::internal_error(),
    ))
}

/// Every request that is not a control endpoint: the contract's API.
async fn api(State(edge): State<Arc<Edge>>, req: Request) -> Response {
    let kill = req.extensions().get::<Kill>().cloned();
    let (parts, body) = req.into_parts();
    // The request line and headers over HEADER_BYTES_MAX: 431 (hyper's own limit is on
    // its read buffer, which one large read can pass).
    let headers = parts
        .headers
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len() + 4);
    if parts.uri.to_string().len() + headers.sum::<usize>() > HEADER_BYTES_MAX {
        let code = HttpReply::code(ErrorCode::InvalidRequest, None);
        return respond(HttpReply {
            status: 431,
            ..code
        });
    }
    let body = match read_body(&parts.headers, body).await {
        Ok(b) => b,
        Err(reply) => return respond(reply),
    };
    let header = |name: &str| parts.headers.get(name).map(|v| v.as_bytes().to_vec());
    let http = HttpRequest {
        method: parts.method.as_str().to_owned(),
        target: parts
            .uri
            .path_and_query()
            .map_or("/", |pq| pq.as_str())
            .to_owned(),
        authorization: header("authorization"),
        idempotency_key: header("idempotency-key"),
        body,
    };
    // Namespaces: merchant 1's keys (ak_1, ak_2, ak_4, ak_5 and unknown keys) and
    // merchant 2's (ak_3) are sessions of their own, so two tests can run side by side.
    let key = crate::http_map::api_key(http.authorization.as_deref());
    let mut keys = default_api_keys().into_iter().chain([rotated_key_spec()]);
    let merchant = keys.find(|k| k.id == key).map_or(1, |k| k.merchant.0);
    let ns = usize::from(merchant == 2);
    let Some(step) = edge.with_core(ns, |core, now| core.handle(now, &http)) else {
        return crashed();
    };
    let reply = match step {
        Step::Answered(reply) => reply,
        Step::Pending(id) => match wait(&edge, ns, id, kill.as_ref()).await {
            Ok(reply) => reply,
            // Nothing more is written: the connection is dropped.
            Err(Unanswered::HungUp) => return drop_connection(kill, false).await,
            Err(Unanswered::Crashed) => return crashed(),
        },
    };
    match reply.wire {
        Wire::Reset if kill.is_some() => drop_connection(kill, true).await,
        _ => respond(reply),
    }
}

/// Drops the connection (`reset`: with a reset, a fault on the wire) instead of answering.
async fn drop_connection(kill: Option<Kill>, reset: bool) -> Response {
    if let Some(kill) = kill {
        if reset {
            kill.1.reset_on_close();
        }
        kill.0.notify_one();
    }
    // The connection is dropped before this answers.
    std::future::pending::<()>().await;
    crashed()
}

/// How often a pending exchange is looked at (under `--clock manual` time moves only by
/// the control endpoint, so this is how soon an advance reaches a waiting request).
const POLL_EVERY: Duration = Duration::from_millis(20);

/// Marks a pending exchange abandoned if its handler is dropped (the client went away).
struct Waiting<'a> {
    edge: &'a Edge,
    ns: usize,
    id: RequestId,
    done: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.done {
            let id = self.id;
            let real = self.edge.clock == ClockMode::Real;
            self.edge
                .with_core(self.ns, |core, now| core.abandon(id, real.then_some(now)));
        }
    }
}

/// Why a wait ended without an answer.
enum Unanswered {
    /// The core panicked (a bug).
    Crashed,
    /// The client closed its side of the connection (a clean close, a reset) while it
    /// waited: it hung up, and the exchange was abandoned ([`Waiting`]).
    HungUp,
}

/// Waits, lock released, until the core answers pending exchange `id`: polled at the
/// time it is next due (real clock) and every [`POLL_EVERY`], the client's side of the
/// connection looked at each time.
async fn wait(
    edge: &Edge,
    ns: usize,
    id: RequestId,
    kill: Option<&Kill>,
) -> Result<HttpReply, Unanswered> {
    let mut guard = Waiting {
        edge,
        ns,
        id,
        done: false,
    };
    loop {
        let (reply, wake) = edge
            .with_core(ns, |core, now| {
                let reply = core.poll(now, id);
                (reply, core.wake_at().map(|t| t.since(now)))
            })
            .ok_or(Unanswered::Crashed)?;
        if let Some(reply) = reply {
            guard.done = true;
            return Ok(reply);
        }
        if kill.is_some_and(|k| k.1.peer_closed()) {
            // `guard`, dropped undone, abandons the exchange: the hang-up is recorded
            // as a dropped handler's is.
            return Err(Unanswered::HungUp);
        }
        let nap = match (edge.clock, wake) {
            (ClockMode::Real, Some(d)) => Duration::from_millis(d.0).min(POLL_EVERY),
            _ => POLL_EVERY,
        };
        tokio::time::sleep(nap).await;
    }
}

/// `?merchant=2`: the namespace a control endpoint acts on (merchant 1 by default).
#[derive(serde::Deserialize)]
struct Ns {
    merchant: Option<u32>,
}

/// `?merchant=N` extracted as the namespace it names and the merchant's number: merchant
/// 1 (the default) or 2; any other is 400 (it would otherwise show merchant 1's session
/// under another's name), so no handler repeats the check.
struct MerchantNs(usize, u32);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for MerchantNs {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Response> {
        let Query(q) = Query::<Ns>::from_request_parts(parts, state)
            .await
            .map_err(bad_query)?;
        match q.merchant.unwrap_or(1) {
            m @ (1 | 2) => Ok(MerchantNs(usize::from(m == 2), m)),
            m => {
                let body = serde_json::json!({ "error": { "code": "invalid_request", "field": "merchant", "message": format!("?merchant={m}: the sandbox's merchants are 1 and 2"), "retryable": false } });
                Err(respond(HttpReply::json(400, body.to_string())))
            }
        }
    }
}

/// A control's query string that does not read (`?merchant=-1`, a parameter given
/// twice): 400 in the controls' JSON error shape.
fn bad_query(e: axum::extract::rejection::QueryRejection) -> Response {
    let message = format!("the query string does not read: {}", e.body_text());
    respond(HttpReply::refusal(400, "invalid_request", message))
}

mod controls;
use controls::*;

mod verdict;
use verdict::verdict;

mod exports;
use exports::*;

mod socket;
use socket::Socket;

mod stream;
