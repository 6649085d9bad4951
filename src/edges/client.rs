//! The clients `verify` drives the sandbox with, over real HTTP on loopback: the
//! contract's reference client ("Reference retry implementation": the same key through
//! resets, 429 and 5xx, `Retry-After` honoured, a query by order number when the result
//! stays unknown, the Payment queried until final at least 10 s apart) and its "Don't do
//! this" client (a new key, then a new order number, after a lost answer), a double
//! submit under one key (the same body or another amount), and a retry that ignores
//! `Retry-After`. Every wait is the session's time: the client moves the
//! sandbox's manual clock instead of sleeping, and records each exchange as it saw it
//! ([`Exchange`], written as a capture by [`super::capture`]).

use crate::conform::wire::{self, WireError, WireReply, WireRequest};
use payhub_model::Millis;
use payhub_model::client::ClientParams;
use payhub_model::client::schedule::retry_delay;
use serde::Serialize;
use std::time::Duration;

/// A client program of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Program {
    /// The contract's reference retry.
    Reference,
    /// The contract's "Don't do this": a new key, then a new order number.
    DontDoThis,
    /// Two creates under one key at once (a double submit), the second sent while the
    /// first is in flight; then the clock moves past the first's upstream.
    DoubleSubmit,
    /// The double submit with another amount in the second copy (a changed parameter
    /// under the same key, while the first is in flight).
    DoubleSubmitChanged,
    /// A Payment created, then queried twice 10 s apart (start to start, SCHED-02), the
    /// first query's answer slow: the clock moves while it is in flight.
    SlowQuery,
    /// A create retried at once after a 429, not after its `Retry-After` (RATE-03's
    /// "Don't").
    ImpatientRetry,
}

impl Program {
    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Program::Reference => "reference client",
            Program::DontDoThis => "\"Don't do this\" client",
            Program::DoubleSubmit => "double submit",
            Program::DoubleSubmitChanged => "double submit, another amount",
            Program::SlowQuery => "slow query",
            Program::ImpatientRetry => "retry at once after a 429",
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
    pub key: String,
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
        let req = WireRequest {
            method: "POST".into(),
            target: "/__sandbox/clock/advance".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Some(format!("{{\"by\":\"{ms}ms\"}}")),
        };
        match wire::send(&self.addr, &req, TIMEOUT).await {
            Ok(r) if r.status == 200 => self.now_ms += ms,
            Ok(r) => self
                .errors
                .push(format!("clock advance answered {}", r.status)),
            Err(e) => self.errors.push(format!("clock advance: {e}")),
        }
    }

    fn request(api_key: &str, method: &str, target: &str, key: Option<&str>) -> WireRequest {
        let mut headers = vec![("Authorization".into(), format!("Bearer {api_key}"))];
        if let Some(k) = key {
            headers.push(("Content-Type".into(), "application/json".into()));
            headers.push(("Idempotency-Key".into(), k.to_owned()));
        }
        WireRequest {
            method: method.into(),
            target: target.into(),
            headers,
            body: None,
        }
    }

    /// Sends one request and records it.
    pub async fn send(&mut self, req: WireRequest) -> Option<WireReply> {
        let started_ms = self.now_ms;
        let answer = send_once(&self.addr, &req).await;
        self.seen.push(Exchange {
            started_ms,
            time_ms: self.now_ms - started_ms,
            request: req,
            answer: answer.clone(),
        });
        answer
    }

    fn create(run: &Run, order: &str, key: &str) -> WireRequest {
        Client::create_of(run, order, key, 10_000)
    }

    fn create_of(run: &Run, order: &str, key: &str, amount: u64) -> WireRequest {
        let mut req = Client::request(run.api_key, "POST", "/v1/payments", Some(key));
        req.body = Some(format!(
            "{{\"merchant_order_no\":\"{order}\",\"amount\":{amount},\"currency\":\"USD\",\"card\":\"{}\"}}",
            run.card
        ));
        req
    }

    /// `postWithRetry`: the same key through resets, 429 (its `Retry-After`) and 5xx,
    /// tries and waits as the model's reference client counts them (RETRY-02, RATE-03;
    /// no jitter); `None` when the result stays unknown.
    async fn post_with_retry(&mut self, req: &WireRequest) -> Option<WireReply> {
        let params = ClientParams::default();
        for attempt in 1..=params.tries_max {
            let answer = self.send(req.clone()).await;
            if let Some(r) = &answer {
                if r.status != 429 && r.status < 500 {
                    return answer;
                }
            }
            if attempt == params.tries_max {
                break;
            }
            let retry_after_s = answer
                .as_ref()
                .filter(|r| r.status == 429)
                .and_then(|r| r.header("retry-after")?.trim().parse().ok());
            self.wait(retry_delay(&params, attempt, Millis::ZERO, retry_after_s).0)
                .await;
        }
        None
    }

    async fn find_by_order(&mut self, api_key: &str, order: &str) -> Option<serde_json::Value> {
        let target = format!("/v1/payments?merchant_order_no={order}");
        let r = self
            .send(Client::request(api_key, "GET", &target, None))
            .await?;
        let page: serde_json::Value = serde_json::from_str(&r.body).ok()?;
        page["data"].get(0).cloned()
    }

    async fn get(&mut self, api_key: &str, id: &str) -> Option<serde_json::Value> {
        let r = self
            .send(Client::request(
                api_key,
                "GET",
                &format!("/v1/payments/{id}"),
                None,
            ))
            .await?;
        serde_json::from_str(&r.body).ok()
    }

    /// Runs one program to its end.
    pub async fn run(&mut self, run: &Run) {
        match run.program {
            Program::Reference => self.reference(run).await,
            Program::DontDoThis => self.dont_do_this(run).await,
            Program::DoubleSubmit => self.double_submit(run, 10_000).await,
            Program::DoubleSubmitChanged => self.double_submit(run, 20_000).await,
            Program::SlowQuery => self.slow_query(run).await,
            Program::ImpatientRetry => {
                let req = Client::create(run, &run.order, &run.key);
                for _ in 0..3 {
                    match self.send(req.clone()).await {
                        Some(r) if r.status == 429 => continue,
                        _ => break,
                    }
                }
            }
        }
    }

    async fn reference(&mut self, run: &Run) {
        let req = Client::create(run, &run.order, &run.key);
        let mut payment = match self.post_with_retry(&req).await {
            Some(r) if (200..300).contains(&r.status) => serde_json::from_str(&r.body).ok(),
            Some(r) if r.body.contains("order_no_conflict") => {
                self.wait(QUERY_SPACING_MS).await;
                self.find_by_order(run.api_key, &run.order).await
            }
            Some(_) => None,
            None => {
                self.wait(QUERY_SPACING_MS).await;
                match self.find_by_order(run.api_key, &run.order).await {
                    Some(p) => Some(p),
                    None => self
                        .post_with_retry(&req)
                        .await
                        .and_then(|r| serde_json::from_str(&r.body).ok()),
                }
            }
        };
        for _ in 0..6 {
            let Some(p) = &payment else { break };
            let status = p["status"].as_str().unwrap_or("");
            if ["succeeded", "failed", "canceled", "expired"].contains(&status) {
                break;
            }
            let Some(id) = p["id"].as_str().map(str::to_owned) else {
                break;
            };
            self.wait(QUERY_SPACING_MS).await;
            payment = self.get(run.api_key, &id).await;
        }
    }

    async fn dont_do_this(&mut self, run: &Run) {
        let first = self.send(Client::create(run, &run.order, &run.key)).await;
        if first.is_none() {
            let key = format!("{}-new", run.key);
            self.send(Client::create(run, &run.order, &key)).await;
            let order = format!("{}-retry", run.order);
            let key = format!("{}-newer", run.key);
            self.send(Client::create(run, &order, &key)).await;
        }
    }

    async fn double_submit(&mut self, run: &Run, second_amount: u64) {
        let sent = self.sent().await;
        let req = Client::create(run, &run.order, &run.key);
        let copy = Client::create_of(run, &run.order, &run.key, second_amount);
        let started_ms = self.now_ms;
        let addr = self.addr.clone();
        let first = tokio::spawn({
            let (addr, req) = (addr.clone(), req.clone());
            async move { send_once(&addr, &req).await }
        });
        // The second copy once the first is in flight (its upstream held by the plan).
        self.until_sent(sent + 1).await;
        let second = send_once(&addr, &copy).await;
        self.seen.push(Exchange {
            started_ms,
            time_ms: 0,
            request: copy,
            answer: second,
        });
        self.wait(QUERY_SPACING_MS).await;
        let first = first.await.ok().flatten();
        // Recorded first: it started first (a capture lists entries by their start).
        let at = self.seen.len() - 1;
        self.seen.insert(
            at,
            Exchange {
                started_ms,
                time_ms: self.now_ms - started_ms,
                request: req,
                answer: first,
            },
        );
    }
}

impl Client {
    /// Sends `req` and moves the clock `ms` while it is in flight (an answer the plan
    /// holds that long); records it with the time it took.
    async fn send_across(&mut self, req: WireRequest, ms: u64) -> Option<WireReply> {
        let sent = self.sent().await;
        let started_ms = self.now_ms;
        let pending = tokio::spawn({
            let (addr, req) = (self.addr.clone(), req.clone());
            async move { send_once(&addr, &req).await }
        });
        self.until_sent(sent + 1).await;
        self.wait(ms).await;
        let answer = pending.await.ok().flatten();
        self.seen.push(Exchange {
            started_ms,
            time_ms: self.now_ms - started_ms,
            request: req,
            answer: answer.clone(),
        });
        answer
    }

    /// How many requests the sandbox's events show sent so far.
    async fn sent(&mut self) -> usize {
        let req = WireRequest {
            method: "GET".into(),
            target: "/__sandbox/events".into(),
            headers: Vec::new(),
            body: None,
        };
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
        let created = self.send(Client::create(run, &run.order, &run.key)).await;
        let Some(id) = created
            .and_then(|r| serde_json::from_str::<serde_json::Value>(&r.body).ok())
            .and_then(|p| p["id"].as_str().map(str::to_owned))
        else {
            return;
        };
        self.wait(QUERY_SPACING_MS).await;
        let get = Client::request(run.api_key, "GET", &format!("/v1/payments/{id}"), None);
        self.send_across(get.clone(), SLOW_QUERY_MS).await;
        self.wait(QUERY_SPACING_MS - SLOW_QUERY_MS).await;
        self.send(get).await;
    }
}

/// How long the slow query's answer takes, in the session's time.
pub const SLOW_QUERY_MS: u64 = 3_000;

async fn send_once(addr: &str, req: &WireRequest) -> Option<WireReply> {
    match wire::send(addr, req, TIMEOUT).await {
        Ok(r) => Some(r),
        Err(WireError::Reset | WireError::Timeout) => None,
        Err(_) => None,
    }
}
