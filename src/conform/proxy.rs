//! The fault-injecting proxy conform runs between itself and the target, on loopback.
//!
//! Each request says which fault it gets in the header [`FAULT_HEADER`] (the case's
//! generator placed it; the proxy strips it before forwarding): none, `reset_before`
//! (the connection is reset and nothing is forwarded), `reset_after` (forwarded, the
//! target's answer read and thrown away, then the client's connection reset: the result
//! is unknown to the client), `hold:MS` (held that long before forwarding: concurrent
//! requests arrive in another order), `duplicate` (forwarded twice, one after the other;
//! the client gets the first answer, the second is kept for the oracle under the
//! request's [`TAG_HEADER`]). The vocabulary is the sandbox's (`serve --help`).
//!
//! The client's connection is reset too when the target's own answer could not be read
//! or never came (garbage, a timeout, past a bound), with no fault planned: that is the
//! target's failure, not a fault of the case, and is kept under the request's tag
//! ([`Proxy::take_failure`]) so that conform never reads it as a network fault it made.

use super::wire::{self, WireError, WireReply, WireRequest};
use crate::edges::EdgeSeam;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const FAULT_HEADER: &str = "x-conform-fault";
pub const TAG_HEADER: &str = "x-conform-tag";

/// A request over this many bytes is refused (conform's own requests are small).
const REQUEST_BYTES_MAX: usize = 256 * 1024;

/// What the proxy saw of a duplicated request's second copy, by tag.
pub type Seconds = Arc<Mutex<BTreeMap<String, Second>>>;

/// A duplicated request's second copy: when the proxy sent it (after the first's answer
/// came back), when its answer came, and the answer.
#[derive(Debug)]
pub struct Second {
    pub sent: Instant,
    pub answered: Instant,
    pub reply: Result<WireReply, WireError>,
}

/// Why the target's answer to a request could not be read or never came, by tag.
pub type Failures = Arc<Mutex<BTreeMap<String, String>>>;

/// A running proxy: its address, the second answers of duplicated requests, and the
/// target's failures.
pub struct Proxy {
    pub addr: String,
    pub seconds: Seconds,
    failures: Failures,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Starts a proxy on a free loopback port in front of `target` (`host:port`).
    /// `seam`: the proxy's decision points ([`EdgeSeam::REFERENCE`]: as documented
    /// above; the edge zoo plants a defect there).
    pub async fn start_with(
        target: String,
        timeout: Duration,
        seam: EdgeSeam,
    ) -> Result<Proxy, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("the proxy cannot listen on loopback: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("the proxy has no address: {e}"))?
            .to_string();
        let seconds = Seconds::default();
        let failures = Failures::default();
        let kept = (seconds.clone(), failures.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                tokio::spawn(connection(
                    stream,
                    target.clone(),
                    timeout,
                    kept.clone(),
                    seam,
                ));
            }
        });
        Ok(Proxy {
            addr,
            seconds,
            failures,
            task,
        })
    }

    /// Why the target's answer to request `tag` could not be read or never came, if so.
    pub fn take_failure(&self, tag: &str) -> Option<String> {
        self.failures.lock().ok()?.remove(tag)
    }

    /// The second answer of duplicated request `tag`, once the proxy has it.
    pub fn take_second(&self, tag: &str) -> Option<Second> {
        self.seconds.lock().ok()?.remove(tag)
    }
}

async fn connection(
    mut stream: TcpStream,
    target: String,
    timeout: Duration,
    (seconds, failures): (Seconds, Failures),
    seam: EdgeSeam,
) {
    let Ok(Some(mut req)) = read_request(&mut stream).await else {
        return;
    };
    let fault = take_header(&mut req, FAULT_HEADER).unwrap_or_default();
    let tag = take_header(&mut req, TAG_HEADER).unwrap_or_default();
    match fault.as_str() {
        "reset_before" => {
            if seam.proxy_forwards_reset_before() {
                let _ = wire::send(&target, &req, timeout).await;
            }
            return reset(stream);
        }
        "reset_after" => {
            let _ = wire::send(&target, &req, timeout).await;
            return reset(stream);
        }
        hold if hold.starts_with("hold:") => {
            let ms = hold[5..].parse::<u64>().unwrap_or(0).min(10_000);
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        _ => {}
    }
    let first = wire::send(&target, &req, timeout).await;
    if fault == "duplicate" {
        let sent = Instant::now();
        let reply = wire::send(&target, &req, timeout).await;
        let second = Second {
            sent,
            answered: Instant::now(),
            reply,
        };
        if let Ok(mut kept) = seconds.lock() {
            kept.insert(tag.clone(), second);
        }
    }
    match first {
        Ok(reply) => {
            let _ = stream.write_all(&encode_reply(&reply)).await;
            let _ = stream.shutdown().await;
        }
        Err(e) => {
            if let Ok(mut kept) = failures.lock() {
                kept.insert(tag, e.to_string());
            }
            reset(stream)
        }
    }
}

/// Drops the connection with a reset (`SO_LINGER` 0): the client reads a network error.
fn reset(stream: TcpStream) {
    if let Ok(std) = stream.into_std() {
        socket_linger_zero(&std);
        drop(std);
    }
}

fn socket_linger_zero(stream: &std::net::TcpStream) {
    let _ = socket2::SockRef::from(stream).set_linger(Some(std::time::Duration::ZERO));
}

fn take_header(req: &mut WireRequest, name: &str) -> Option<String> {
    let i = req
        .headers
        .iter()
        .position(|(n, _)| n.eq_ignore_ascii_case(name))?;
    Some(req.headers.remove(i).1)
}

fn encode_reply(reply: &WireReply) -> Vec<u8> {
    let mut s = format!("HTTP/1.1 {} X\r\n", reply.status);
    for (n, v) in &reply.headers {
        if ["content-length", "connection", "transfer-encoding"]
            .iter()
            .any(|h| n.eq_ignore_ascii_case(h))
        {
            continue;
        }
        s.push_str(&format!("{n}: {v}\r\n"));
    }
    s.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
        reply.body.len(),
        reply.body
    ));
    s.into_bytes()
}

/// Reads one request (head and `Content-Length` body) from a client of the proxy.
async fn read_request(stream: &mut TcpStream) -> Result<Option<WireRequest>, ()> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let text = std::str::from_utf8(&buf[..end]).map_err(|_| ())?;
            let mut lines = text.split("\r\n");
            let mut first = lines.next().unwrap_or("").split(' ');
            let method = first.next().unwrap_or("").to_owned();
            let target = first.next().unwrap_or("/").to_owned();
            let mut headers: Vec<(String, String)> = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
                .collect();
            let length = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into_owned();
                let has_body = headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
                headers.retain(|(n, _)| {
                    !["host", "content-length", "connection", "content-type"]
                        .iter()
                        .any(|h| n.eq_ignore_ascii_case(h))
                });
                return Ok(Some(WireRequest {
                    method,
                    target,
                    headers,
                    body: (has_body || !body.is_empty()).then_some(body),
                }));
            }
        }
        let n = stream.read(&mut chunk).await.map_err(|_| ())?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > REQUEST_BYTES_MAX {
            return Err(());
        }
    }
}
