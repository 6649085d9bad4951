//! The sandbox under test: `payhub-verify serve` started on a free loopback port (its
//! printed address read back), a minimal HTTP/1.1 client on `std::net::TcpStream` (no
//! client dependency), and the session's exports checked by `judge` and `run`. Shared by
//! the Rust and the Node.js sandbox tests; the child is killed when dropped.
#![allow(dead_code)]

use crate::common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub const IO_TIMEOUT: Duration = Duration::from_secs(20);

/// A running sandbox; killed when dropped.
pub struct Serve {
    pub child: Child,
    pub addr: SocketAddr,
    pub stderr: std::path::PathBuf,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What came back on a connection.
#[derive(Debug)]
pub enum Outcome {
    Answer(Reply),
    /// The connection was reset or closed without a byte of answer.
    Reset(ErrorKind),
}

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Serve {
    pub fn start(name: &str, args: &[&str]) -> Serve {
        let stderr = temp(&format!("{name}.stderr"), "");
        let mut child = bin()
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("serve starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(first)) = lines.next() {
                let _ = tx.send(first);
            }
            for _ in lines {}
        });
        let first = rx
            .recv_timeout(IO_TIMEOUT)
            .expect("serve prints its address");
        let addr = first
            .rsplit("http://")
            .next()
            .and_then(|a| a.trim().parse().ok())
            .unwrap_or_else(|| panic!("no address in '{first}'"));
        Serve {
            child,
            addr,
            stderr,
        }
    }

    /// Sends raw bytes on a new connection and reads until the server closes it.
    pub fn raw(&self, bytes: &[u8]) -> Outcome {
        self.raw_within(bytes, IO_TIMEOUT)
    }

    /// [`Serve::raw`], giving up (and closing) after `timeout`, as a client's timeout does.
    pub fn raw_within(&self, bytes: &[u8], timeout: Duration) -> Outcome {
        let mut stream = TcpStream::connect_timeout(&self.addr, IO_TIMEOUT).unwrap();
        stream.set_read_timeout(Some(timeout)).unwrap();
        stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        if let Err(e) = stream.write_all(bytes) {
            return Outcome::Reset(e.kind());
        }
        let mut got = Vec::new();
        if let Err(e) = stream.read_to_end(&mut got) {
            if got.is_empty() {
                return Outcome::Reset(e.kind());
            }
        }
        if got.is_empty() {
            return Outcome::Reset(ErrorKind::UnexpectedEof);
        }
        Outcome::Answer(parse(&got))
    }

    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Outcome {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (n, v) in headers {
            req.push_str(&format!("{n}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.raw(req.as_bytes())
    }

    pub fn answer(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        match self.send(method, path, headers, body) {
            Outcome::Answer(r) => r,
            Outcome::Reset(kind) => panic!("{method} {path}: no answer ({kind:?})"),
        }
    }

    pub fn create(&self, api_key: &str, key: &str, order: &str, amount: u64) -> Outcome {
        let body = format!(
            r#"{{"merchant_order_no":"{order}","amount":{amount},"currency":"USD","card":"A"}}"#
        );
        let auth = format!("Bearer {api_key}");
        self.send(
            "POST",
            "/v1/payments",
            &[("Authorization", &auth), ("Idempotency-Key", key)],
            &body,
        )
    }

    pub fn created(&self, key: &str, order: &str, amount: u64) -> Reply {
        match self.create("ak_1", key, order, amount) {
            Outcome::Answer(r) => r,
            Outcome::Reset(kind) => panic!("create {key}: no answer ({kind:?})"),
        }
    }

    /// A control endpoint's answer (a body is sent as JSON, as the controls require).
    pub fn control(&self, method: &str, path: &str, body: &str) -> Reply {
        let json: &[(&str, &str)] = if body.is_empty() {
            &[]
        } else {
            &[("Content-Type", "application/json")]
        };
        self.answer(method, path, json, body)
    }

    pub fn verdict(&self) -> Value {
        self.control("GET", "/__sandbox/verdict", "").json()
    }

    /// The session's events judged by `payhub-verify judge`, and the session's script
    /// run by `payhub-verify run`: (judge's JSON, run's exit code).
    pub fn judged_and_run(&self, name: &str) -> (Value, i32) {
        let events = self.control("GET", "/__sandbox/events", "");
        assert_eq!(events.status, 200);
        let file = temp(&format!("{name}.jsonl"), &events.body);
        let judged = run(&["judge", file.to_str().unwrap(), "--format", "json"]);
        no_panic(&judged);
        let judged: Value = serde_json::from_str(&stdout(&judged)).expect("judge prints JSON");
        let script = self.control("GET", "/__sandbox/script", "");
        assert_eq!(script.status, 200, "{}", script.body);
        let file = temp(&format!("{name}.pha"), &script.body);
        let ran = run(&["run", file.to_str().unwrap()]);
        no_panic(&ran);
        (judged, code(&ran))
    }

    /// The verdict holds, `judge` gives it again from the session's events, and the
    /// session's script replays under `run` with no property violated.
    pub fn holds_everywhere(&self, name: &str) {
        let verdict = self.verdict();
        assert_eq!(verdict["holds"], true, "{verdict:#}");
        let (judged, ran) = self.judged_and_run(name);
        assert_eq!(
            statuses(&judged["properties"]),
            statuses(&verdict["properties"])
        );
        assert_eq!(ran, 0, "the session's script replays with the same verdict");
    }

    /// The one property of the registry the verdict has violated over the session's facts
    /// (beside those violated at their level over the wire, with a witness of exchanges,
    /// that see the same fault from the wire), which `judge` finds violated too.
    pub fn the_violation(&self, name: &str) -> Value {
        let verdict = self.verdict();
        assert_eq!(verdict["holds"], false);
        let violated: Vec<&Value> = verdict["properties"]
            .as_array()
            .expect("a list of properties")
            .iter()
            .filter(|p| p["status"] == "violated")
            .filter(|p| p.get("witness").is_none())
            .collect();
        assert_eq!(violated.len(), 1, "{verdict:#}");
        let (judged, _) = self.judged_and_run(name);
        assert_eq!(
            statuses(&judged["properties"]),
            statuses(&verdict["properties"])
        );
        violated[0].clone()
    }

    /// The child is still running and never panicked.
    pub fn healthy(&mut self) {
        assert!(self.child.try_wait().unwrap().is_none(), "serve exited");
        let err = std::fs::read_to_string(&self.stderr).unwrap();
        assert!(!err.contains("panicked"), "{err}");
    }
}

pub fn parse(bytes: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {text}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

/// A chunked body decoded (RFC 9112 §7.1); a body cut short gives what arrived.
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            out.push_str(&tail[..tail.len().min(n)]);
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].strip_prefix("\r\n").unwrap_or(&tail[n..]);
    }
    out
}

/// Each property's status, by name (the sandbox's verdict lists violations first,
/// `judge` and `check-log` in the registry's order).
pub fn statuses(properties: &Value) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = properties
        .as_array()
        .expect("a list of properties")
        .iter()
        .map(|p| (p["name"].to_string(), p["status"].to_string()))
        .collect();
    all.sort();
    all
}
