//! The fault-injecting proxy conform runs between itself and the target, on loopback.
//! Each request names its fault in [`FAULT_HEADER`] (stripped before forwarding; the
//! sandbox's vocabulary: `reset_before`, `reset_after`, `hold:MS`, `duplicate`, whose
//! second answer is kept under the request's [`TAG_HEADER`]). A target answer that could
//! not be read or never came, with no fault planned, resets the client's connection and
//! is kept as the target's failure ([`Proxy::take_failure`]), never read as a fault.

use crate::serve::seam::EdgeSeam;
use crate::wire::{self, WireError, WireReply, WireRequest};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderName, HeaderValue, TRANSFER_ENCODING,
};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
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

type Kept = (Seconds, Failures);

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

/// One connection from conform's client: hyper reads the request and writes the answer;
/// a reset ends it with `SO_LINGER` 0, set on a second handle of the socket (hyper owns
/// the first) once hyper has let go of it.
async fn connection(
    stream: TcpStream,
    target: String,
    timeout: Duration,
    kept: Kept,
    seam: EdgeSeam,
) {
    let Ok(std) = stream.into_std() else { return };
    let (Ok(handle), Ok(stream)) = (std.try_clone(), TcpStream::from_std(std)) else {
        return;
    };
    let reset = Arc::new(AtomicBool::new(false));
    let resets = reset.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let (target, kept, resets) = (target.clone(), kept.clone(), resets.clone());
        async move {
            match forward(req, &target, timeout, &kept, seam).await {
                Some(reply) => Ok(response(reply)),
                None => {
                    resets.store(true, Ordering::SeqCst);
                    Err(std::io::Error::other("reset"))
                }
            }
        }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    if reset.load(Ordering::SeqCst) {
        let _ = socket2::SockRef::from(&handle).set_linger(Some(Duration::ZERO));
    }
}

/// Forwards `req` as its fault says; the answer for the client, or `None`: reset it.
async fn forward(
    req: Request<Incoming>,
    target: &str,
    timeout: Duration,
    (seconds, failures): &Kept,
    seam: EdgeSeam,
) -> Option<WireReply> {
    let mut req = read(req).await?;
    let fault = take_header(&mut req, FAULT_HEADER).unwrap_or_default();
    let tag = take_header(&mut req, TAG_HEADER).unwrap_or_default();
    match fault.as_str() {
        "reset_before" => {
            if seam.proxy_forwards_reset_before() {
                let _ = wire::send(target, &req, timeout).await;
            }
            return None;
        }
        "reset_after" => {
            let _ = wire::send(target, &req, timeout).await;
            return None;
        }
        hold if hold.starts_with("hold:") => {
            let ms = hold[5..].parse::<u64>().unwrap_or(0).min(10_000);
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        _ => {}
    }
    let first = wire::send(target, &req, timeout).await;
    if fault == "duplicate" {
        let sent = Instant::now();
        let reply = wire::send(target, &req, timeout).await;
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
        Ok(reply) => Some(reply),
        Err(e) => {
            if let Ok(mut kept) = failures.lock() {
                kept.insert(tag, e.to_string());
            }
            None
        }
    }
}

fn take_header(req: &mut WireRequest, name: &str) -> Option<String> {
    let i = req
        .headers
        .iter()
        .position(|(n, _)| n.eq_ignore_ascii_case(name))?;
    Some(req.headers.remove(i).1)
}

/// The client's request as conform's client sends one (`None`: over the bound, or cut).
async fn read(req: Request<Incoming>) -> Option<WireRequest> {
    let (head, body) = req.into_parts();
    let body = Limited::new(body, REQUEST_BYTES_MAX).collect().await.ok()?;
    let body = String::from_utf8_lossy(&body.to_bytes()).into_owned();
    let has_body = head.headers.contains_key(CONTENT_TYPE);
    let headers = head
        .headers
        .iter()
        .filter(|(n, _)| ![HOST, CONTENT_LENGTH, CONNECTION, CONTENT_TYPE].contains(n))
        .map(|(n, v)| {
            let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
            (n.as_str().to_owned(), v)
        })
        .collect();
    Some(WireRequest {
        method: head.method.as_str().to_owned(),
        target: head
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned(),
        headers,
        body: (has_body || !body.is_empty()).then_some(body),
    })
}

/// The target's answer for the client, framed anew (its length, `Connection: close`).
fn response(reply: WireReply) -> Response<Full<Bytes>> {
    let mut out = Response::new(Full::new(Bytes::from(reply.body)));
    *out.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::BAD_GATEWAY);
    for (n, v) in &reply.headers {
        let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(n.as_bytes()),
            HeaderValue::from_str(v),
        ) else {
            continue;
        };
        if ![CONTENT_LENGTH, CONNECTION, TRANSFER_ENCODING].contains(&n) {
            out.headers_mut().append(n, v);
        }
    }
    out.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A loopback target that counts its connections and answers each `201 {}`.
    async fn target(count: Arc<AtomicUsize>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let _ = s
                    .write_all(
                        b"HTTP/1.1 201 Created\r\nRetry-After: 1\r\ncontent-length: 2\r\n\r\n{}",
                    )
                    .await;
            }
        });
        addr
    }

    fn post(fault: &str, tag: &str) -> WireRequest {
        WireRequest {
            method: "POST".into(),
            target: "/v1/payments".into(),
            headers: vec![
                (FAULT_HEADER.into(), fault.into()),
                (TAG_HEADER.into(), tag.into()),
            ],
            body: Some("{}".into()),
        }
    }

    /// Each fault does what it says to the client and to the target: a reset before
    /// forwarding reaches nothing, one after reaches the target once, a duplicate twice
    /// (its second answer kept by tag), none once, its answer passed on whole.
    #[tokio::test]
    async fn each_fault_reaches_the_target_as_it_says() {
        let t = Duration::from_secs(5);
        let count = Arc::new(AtomicUsize::new(0));
        let addr = target(count.clone()).await;
        let proxy = Proxy::start_with(addr.clone(), t, EdgeSeam::REFERENCE)
            .await
            .unwrap();
        let cases: [(&str, Option<u16>, usize); 4] = [
            ("reset_before", None, 0),
            ("reset_after", None, 1),
            ("duplicate", Some(201), 2),
            ("", Some(201), 1),
        ];
        for (fault, status, reached) in cases {
            count.store(0, Ordering::SeqCst);
            let r = wire::send(&proxy.addr, &post(fault, fault), t).await;
            match status {
                Some(s) => {
                    let r = r.unwrap();
                    assert_eq!((r.status, r.body.as_str()), (s, "{}"), "{fault}");
                    assert_eq!(r.header("retry-after"), Some("1"), "{fault}");
                }
                None => assert_eq!(r, Err(WireError::Reset), "{fault}"),
            }
            assert_eq!(count.load(Ordering::SeqCst), reached, "{fault}");
            assert_eq!(proxy.take_failure(fault), None, "{fault}");
        }
        let second = proxy.take_second("duplicate").unwrap();
        assert_eq!(second.reply.unwrap().status, 201);
        // The edge zoo's defect at this seam: a reset before forwarding forwards.
        let defect = crate::serve::defect::EdgeDefect::ProxyResetBeforeForwards;
        let planted = Proxy::start_with(addr.clone(), t, EdgeSeam::planted(defect))
            .await
            .unwrap();
        count.store(0, Ordering::SeqCst);
        let r = wire::send(&planted.addr, &post("reset_before", "planted"), t).await;
        assert_eq!(
            (r, count.load(Ordering::SeqCst)),
            (Err(WireError::Reset), 1)
        );
        // A target that does not answer: the client's connection reset, the failure kept.
        let down = Proxy::start_with("127.0.0.1:9".into(), t, EdgeSeam::REFERENCE)
            .await
            .unwrap();
        let r = wire::send(&down.addr, &post("", "lost"), t).await;
        assert_eq!(r, Err(WireError::Reset));
        assert!(down.take_failure("lost").is_some());
    }
}
