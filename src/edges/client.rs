//! The clients `verify` drives the sandbox with, over HTTP on loopback: the model's
//! reference client and its `AntiPattern::IgnoreRetryAfter` through a thin HTTP shell
//! ([`Client::drive`]), and short scripts of traffic the model's policies do not make
//! (the "Don't do this" client, a double submit under one key, since one merchant's
//! servers never create an order concurrently: A-CLIENT-DB-TXN; a slow query). Every
//! wait moves the sandbox's manual clock; each exchange is recorded as the client saw it.

use crate::wire::{self, WireReply, WireRequest};
use payhub_model::api::req;
use payhub_model::client::{
    AntiPattern, ClientInput, ClientOutput, Command, Draw, MerchantDb, MerchantServer, Policy,
    ServerConfig,
};
use payhub_model::{ApiKeyId, ApiRequest, ApiResponse, Card, Millis, Text};
use serde::Serialize;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::task::JoinHandle;

payhub_model::named! {
    fn name;
    /// A client program of a session, with its name in the report.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Program {
        /// The contract's reference retry.
        Reference = "reference client",
        /// The contract's "Don't do this": a new key, then a new order number.
        DontDoThis = "\"Don't do this\" client",
        /// Two creates under one key at once (a double submit), the second sent while the
        /// first is in flight; then the clock moves past the first's upstream.
        DoubleSubmit = "double submit",
        /// The double submit with another amount in the second copy (a changed parameter
        /// under the same key, while the first is in flight).
        DoubleSubmitChanged = "double submit, another amount",
        /// A Payment created, then queried twice 10 s apart (start to start, SCHED-02),
        /// the first query's answer slow: the clock moves while it is in flight.
        SlowQuery = "slow query",
        /// The reference client that retries a 429 after its usual backoff, not after its
        /// `Retry-After` (RATE-03's "Don't"): the model's `AntiPattern::IgnoreRetryAfter`.
        IgnoresRetryAfter = "retry of a 429 after its backoff",
    }
}

impl Program {
    /// The model's policy the program is (`None`: a script of exchanges).
    pub fn policy(self) -> Option<Policy> {
        match self {
            Program::Reference => Some(Policy::reference()),
            Program::IgnoresRetryAfter => {
                Some(Policy::reference().with(AntiPattern::IgnoreRetryAfter))
            }
            _ => None,
        }
    }
}

/// One run of a program: who pays which order with which card and key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Run {
    pub program: Program,
    /// `ak_1` (merchant 1), `ak_3` (merchant 2).
    pub api_key: &'static str,
    pub order: String,
    pub card: char,
    /// The key of its first create (the reference client derives its own: GEN-01).
    pub key: String,
}

impl Run {
    /// Its API key as the model's.
    fn key_id(&self) -> ApiKeyId {
        crate::http_map::api_key(Some(format!("Bearer {}", self.api_key).as_bytes()))
    }

    /// A create of `order` for `amount` under `key`, with its API key and card.
    fn create(&self, order: &str, key: &str, amount: i64) -> WireRequest {
        let (api_key, card) = (self.key_id(), Some(self.card));
        to_wire(&req::create_as(api_key, key, order, amount, "USD", card))
    }
}

/// One exchange as the client saw it, on the session's clock.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub started_ms: u64,
    pub time_ms: u64,
    pub request: WireRequest,
    /// `None`: the connection was reset or timed out (no answer).
    pub answer: Option<WireReply>,
}

/// A client bound to a sandbox: its address, the session's clock as the client moved it,
/// and what it saw.
pub struct Client {
    pub addr: String,
    pub now_ms: u64,
    pub seen: Vec<Exchange>,
    /// Clock moves that failed (a control the sandbox refused).
    pub errors: Vec<String>,
}

const TIMEOUT: Duration = Duration::from_secs(5);
/// The contract's minimum spacing of status queries.
const QUERY_SPACING_MS: u64 = 10_000;

impl Client {
    pub fn new(addr: String) -> Client {
        Client {
            addr,
            now_ms: 0,
            seen: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Moves the session's clock `ms` (a wait of the client).
    pub async fn wait(&mut self, ms: u64) {
        if ms == 0 {
            return;
        }
        let body = Some(format!("{{\"by\":\"{ms}ms\"}}"));
        // The body's Content-Type is the wire's to write, once.
        let req = WireRequest::new("POST", "/__sandbox/clock/advance", body);
        match wire::send(&self.addr, &req, TIMEOUT).await {
            Ok(r) if r.status == 200 => self.now_ms += ms,
            Ok(r) => self
                .errors
                .push(format!("clock advance answered {}", r.status)),
            Err(e) => self.errors.push(format!("clock advance: {e}")),
        }
    }

    /// Sends one request and records it.
    pub async fn send(&mut self, req: WireRequest) -> Option<WireReply> {
        let started_ms = self.now_ms;
        let answer = send_once(&self.addr, &req).await;
        self.record(started_ms, req, answer)
    }

    /// Records an exchange that started at `started_ms` and ends now.
    fn record(
        &mut self,
        started_ms: u64,
        request: WireRequest,
        answer: Option<WireReply>,
    ) -> Option<WireReply> {
        self.seen.push(Exchange {
            started_ms,
            time_ms: self.now_ms - started_ms,
            request,
            answer: answer.clone(),
        });
        answer
    }

    /// Runs one program to its end.
    pub async fn run(&mut self, run: &Run) {
        if let Some(policy) = run.program.policy() {
            return self.drive(run, policy).await;
        }
        match run.program {
            Program::DontDoThis => self.dont_do_this(run).await,
            Program::DoubleSubmit => self.double_submit(run, 10_000).await,
            Program::DoubleSubmitChanged => self.double_submit(run, 20_000).await,
            Program::SlowQuery => self.slow_query(run).await,
            Program::Reference | Program::IgnoresRetryAfter => {}
        }
    }

    /// The model's merchant server (`payhub_model::client`) under `policy` pays `run`'s
    /// order over HTTP: each request it sends is an exchange on loopback, its answer (or
    /// its reset) fed back at once; each timer it sets moves the session's clock there
    /// and wakes it; until it has no timer left. No jitter (RETRY-02's bound is the
    /// model's to test), the entropy counted.
    async fn drive(&mut self, run: &Run, policy: Policy) {
        let mut server = MerchantServer::new(ServerConfig::new(run.key_id(), policy));
        let mut db = MerchantDb::new();
        let mut entropy = 0;
        let mut draw = || {
            entropy += 1;
            Draw::new(Millis::ZERO, entropy)
        };
        let command = Command::PayOrder {
            order: run.order.as_str().into(),
            amount: 10_000,
            currency: "USD".into(),
            card: Card(run.card),
        };
        let mut inputs = VecDeque::from([ClientInput::Command {
            command,
            draw: draw(),
        }]);
        loop {
            while let Some(input) = inputs.pop_front() {
                let mut out = Vec::new();
                if let Err(e) = server.step(Millis(self.now_ms), &mut db, input, &mut out) {
                    self.errors.push(format!("the model's client: {e}"));
                    return;
                }
                for o in out {
                    let ClientOutput::Send {
                        handle, request, ..
                    } = o
                    else {
                        continue;
                    };
                    let input = match self.send(to_wire(&request)).await.map(|r| to_response(&r)) {
                        Some(Ok(response)) => ClientInput::Response {
                            handle,
                            response,
                            draw: draw(),
                        },
                        Some(Err(e)) => {
                            self.errors.push(e);
                            return;
                        }
                        None => ClientInput::NetworkError {
                            handle,
                            draw: draw(),
                        },
                    };
                    inputs.push_back(input);
                }
            }
            let Some(at) = server.poll_timeout() else {
                return;
            };
            self.wait(at.0.saturating_sub(self.now_ms)).await;
            if self.now_ms < at.0 {
                // The clock did not move (`errors` says why): the timer would never fire.
                return;
            }
            inputs.push_back(ClientInput::Wake);
        }
    }

    async fn dont_do_this(&mut self, run: &Run) {
        let first = self.send(run.create(&run.order, &run.key, 10_000)).await;
        if first.is_none() {
            let key = format!("{}-new", run.key);
            self.send(run.create(&run.order, &key, 10_000)).await;
            let order = format!("{}-retry", run.order);
            let key = format!("{}-newer", run.key);
            self.send(run.create(&order, &key, 10_000)).await;
        }
    }

    async fn double_submit(&mut self, run: &Run, second_amount: i64) {
        let req = run.create(&run.order, &run.key, 10_000);
        let copy = run.create(&run.order, &run.key, second_amount);
        let (started_ms, first) = self.in_flight(&req).await;
        // The second copy once the first is in flight (its upstream held by the plan).
        let second = send_once(&self.addr, &copy).await;
        self.wait(QUERY_SPACING_MS).await;
        // The first recorded first: it started first (a capture lists entries by their
        // start).
        self.record(started_ms, req, first.await.ok().flatten());
        self.seen.push(Exchange {
            started_ms,
            time_ms: 0,
            request: copy,
            answer: second,
        });
    }

    /// Sends `req` in the background and returns once the sandbox shows it sent: when
    /// it started, and its answer to come.
    async fn in_flight(&mut self, req: &WireRequest) -> (u64, JoinHandle<Option<WireReply>>) {
        let sent = self.sent().await;
        let started_ms = self.now_ms;
        let pending = tokio::spawn({
            let (addr, req) = (self.addr.clone(), req.clone());
            async move { send_once(&addr, &req).await }
        });
        self.until_sent(sent + 1).await;
        (started_ms, pending)
    }

    /// Sends `req` and moves the clock `ms` while it is in flight (an answer the plan
    /// holds that long); records it with the time it took.
    async fn send_across(&mut self, req: WireRequest, ms: u64) -> Option<WireReply> {
        let (started_ms, pending) = self.in_flight(&req).await;
        self.wait(ms).await;
        let answer = pending.await.ok().flatten();
        self.record(started_ms, req, answer)
    }

    /// How many requests the sandbox's events show sent so far.
    async fn sent(&mut self) -> usize {
        let req = WireRequest::new("GET", "/__sandbox/events", None);
        match wire::send(&self.addr, &req, TIMEOUT).await {
            Ok(r) => r.body.matches("\"kind\":\"sent\"").count(),
            Err(e) => {
                self.errors.push(format!("GET /__sandbox/events: {e}"));
                0
            }
        }
    }

    /// Waits (in real time, at most [`TIMEOUT`]) until the sandbox has `n` requests sent:
    /// the one in flight has reached it, whatever the machine's load.
    async fn until_sent(&mut self, n: usize) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        while self.sent().await < n {
            if tokio::time::Instant::now() >= deadline {
                self.errors
                    .push(format!("request {n} never reached the sandbox"));
                return;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    async fn slow_query(&mut self, run: &Run) {
        let created = self.send(run.create(&run.order, &run.key, 10_000)).await;
        let Some(id) = created
            .and_then(|r| serde_json::from_str::<serde_json::Value>(&r.body).ok())
            .and_then(|p| serde_json::from_value(p["id"].clone()).ok())
        else {
            return;
        };
        self.wait(QUERY_SPACING_MS).await;
        let get = to_wire(&req::with_api_key(req::get(id), run.key_id()));
        self.send_across(get.clone(), SLOW_QUERY_MS).await;
        self.wait(QUERY_SPACING_MS - SLOW_QUERY_MS).await;
        self.send(get).await;
    }
}

/// How long the slow query's answer takes, in the session's time.
pub const SLOW_QUERY_MS: u64 = 3_000;

/// `req`'s answer; `None` when none came (a reset, a timeout).
async fn send_once(addr: &str, req: &WireRequest) -> Option<WireReply> {
    wire::send(addr, req, TIMEOUT).await.ok()
}

/// The model's request as the client writes it: `Authorization`, then for a keyed
/// request `Idempotency-Key`, and the body as the wire carries it (`Content-Type` with it).
fn to_wire(request: &ApiRequest) -> WireRequest {
    let (method, path) = (request.endpoint.method(), request.endpoint.path());
    let key = request.idempotency_key.as_ref().map(Text::as_str);
    let body = crate::serve::har::request_body(request);
    let bearer = format!("Bearer {}", request.api_key);
    WireRequest::api(&method.to_string(), path.as_str(), &bearer, key, body)
}

/// An answer read back as the model's: its status, `Retry-After` in seconds and body,
/// its dates as the model's milliseconds ([`crate::http_map::model_times`] at the Unix
/// epoch: only a card retry reads them, and these runs make none).
fn to_response(reply: &WireReply) -> Result<ApiResponse, String> {
    let unread = |e: serde_json::Error| {
        format!(
            "an answer {} the reference client cannot read: {e}",
            reply.status
        )
    };
    let mut body: serde_json::Value = serde_json::from_str(&reply.body).map_err(unread)?;
    crate::http_map::model_times(&mut body, 0);
    Ok(ApiResponse {
        status: reply.status,
        retry_after_s: crate::retry_after::seconds(reply.header("retry-after")),
        body: serde_json::from_value(body).map_err(unread)?,
    })
}
