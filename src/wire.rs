//! The harness's HTTP/1.1 client: hyper's, one request per connection (`Connection:
//! close`), bounded in time and bytes: what conform's cases and faults, `verify`'s edge
//! clients and the sandbox's webhooks send. One connection per request gives every
//! request of a concurrent round a connection of its own, and lets a fault on the wire (a
//! reset) end exactly one exchange.

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Bytes;
use hyper::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use hyper_util::rt::TokioIo;
use std::time::Duration;
use tokio::net::TcpStream;

/// An answer's body over this many bytes is a broken target (or webhook receiver).
pub const REPLY_BYTES_MAX: usize = 1 << 20;
/// One HTTP request as conform sends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireRequest {
    pub method: String,
    /// Path and query (`/v1/payments?merchant_order_no=CF-1-o1`).
    pub target: String,
    /// Headers other than Host, Content-Length and Connection.
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

impl WireRequest {
    /// `method target` with no header of its own.
    pub fn new(method: &str, target: &str, body: Option<String>) -> WireRequest {
        let (method, target, headers) = (method.to_owned(), target.to_owned(), Vec::new());
        WireRequest {
            method,
            target,
            headers,
            body,
        }
    }

    /// A request of the contract's API: `Authorization`, then `Idempotency-Key` if any.
    pub fn api(
        method: &str,
        target: &str,
        authorization: &str,
        key: Option<&str>,
        body: Option<String>,
    ) -> WireRequest {
        let key = key.map(|k| ("Idempotency-Key", k));
        let headers = [("Authorization", authorization)].into_iter().chain(key);
        WireRequest {
            headers: headers.map(|(n, v)| (n.to_owned(), v.to_owned())).collect(),
            ..WireRequest::new(method, target, body)
        }
    }
}

/// One HTTP answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl WireReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why no answer came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Nothing listens there (the target is down).
    Connect(String),
    /// The connection was reset or closed before a whole answer.
    Reset,
    /// No whole answer within the timeout.
    Timeout,
    /// The bytes are not an HTTP/1.1 answer.
    Malformed(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Connect(e) => write!(f, "cannot connect: {e}"),
            WireError::Reset => f.write_str("connection reset before an answer"),
            WireError::Timeout => f.write_str("no answer within the timeout"),
            WireError::Malformed(e) => write!(f, "not an HTTP answer: {e}"),
        }
    }
}

/// `req` for `host` as hyper writes it (header names in title case, as sent before).
fn request(req: &WireRequest, host: &str) -> Result<hyper::Request<Full<Bytes>>, WireError> {
    let unsendable =
        |e: String| WireError::Malformed(format!("a request that cannot be written: {e}"));
    let mut out = hyper::Request::builder()
        .method(req.method.as_str())
        .uri(req.target.as_str())
        .body(Full::new(Bytes::from(req.body.clone().unwrap_or_default())))
        .map_err(|e| unsendable(e.to_string()))?;
    let headers = out.headers_mut();
    let value =
        |v: &str| HeaderValue::from_bytes(v.as_bytes()).map_err(|e| unsendable(e.to_string()));
    headers.append(HOST, value(host)?);
    for (n, v) in &req.headers {
        let name = HeaderName::from_bytes(n.as_bytes()).map_err(|e| unsendable(e.to_string()))?;
        headers.append(name, value(v)?);
    }
    if req.body.is_some() {
        headers.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    let length = req.body.as_ref().map_or(0, String::len);
    headers.append(CONTENT_LENGTH, HeaderValue::from(length));
    headers.append(CONNECTION, HeaderValue::from_static("close"));
    Ok(out)
}

/// Sends `req` to `addr` (`127.0.0.1:8080`) and reads the whole answer within `timeout`.
pub async fn send(
    addr: &str,
    req: &WireRequest,
    timeout: Duration,
) -> Result<WireReply, WireError> {
    match tokio::time::timeout(timeout, exchange(addr, req)).await {
        Ok(r) => r,
        Err(_) => Err(WireError::Timeout),
    }
}

/// The connection's task, ended with the exchange (its socket closed).
struct Connection(tokio::task::JoinHandle<()>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a hyper error means for conform: bytes that are not an answer, or no answer.
fn failed(e: hyper::Error) -> WireError {
    if e.is_parse() || e.is_parse_status() || e.is_parse_too_large() {
        WireError::Malformed(e.to_string())
    } else {
        WireError::Reset
    }
}

/// Sends `req` to `addr` and returns the answer's status once its head has arrived,
/// within `timeout`; the body is not waited for (the sandbox's webhooks: a 2xx status
/// acknowledges one, whatever follows it).
pub async fn status(addr: &str, req: &WireRequest, timeout: Duration) -> Result<u16, WireError> {
    let head = async { Ok(head(addr, req).await?.0.status.as_u16()) };
    tokio::time::timeout(timeout, head)
        .await
        .unwrap_or(Err(WireError::Timeout))
}

/// The answer's head and its body still to read, with the connection's task.
type Head = (
    hyper::http::response::Parts,
    hyper::body::Incoming,
    Connection,
);

async fn head(addr: &str, req: &WireRequest) -> Result<Head, WireError> {
    let request = request(req, addr)?;
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| WireError::Connect(format!("{addr}: {e}")))?;
    let _ = stream.set_nodelay(true);
    let (mut sender, connection) = hyper::client::conn::http1::Builder::new()
        .title_case_headers(true)
        .handshake(TokioIo::new(stream))
        .await
        .map_err(failed)?;
    let connection = Connection(tokio::spawn(async move {
        let _ = connection.await;
    }));
    let (head, body) = sender
        .send_request(request)
        .await
        .map_err(failed)?
        .into_parts();
    Ok((head, body, connection))
}

async fn exchange(addr: &str, req: &WireRequest) -> Result<WireReply, WireError> {
    let (head, body, _connection) = head(addr, req).await?;
    let body = Limited::new(body, REPLY_BYTES_MAX)
        .collect()
        .await
        .map_err(|e| match e.downcast::<hyper::Error>() {
            Ok(e) => failed(*e),
            Err(e) if e.is::<LengthLimitError>() => {
                WireError::Malformed(format!("an answer over {REPLY_BYTES_MAX} bytes"))
            }
            Err(_) => WireError::Reset,
        })?
        .to_bytes();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let headers = head.headers.iter();
    Ok(WireReply {
        status: head.status.as_u16(),
        headers: headers
            .map(|(n, v)| (n.as_str().to_owned(), text(v.as_bytes())))
            .collect(),
        body: text(&body),
    })
}

/// The host and port of an `http://host[:port][/path]` URL (port 80 if none).
pub fn authority(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url}: only http:// targets are supported"))?;
    let host = rest.split('/').next().unwrap_or("");
    let (name, port) = host.rsplit_once(':').unwrap_or((host, "80"));
    if name.is_empty() {
        return Err(format!("{url}: no host"));
    }
    let port: u16 = port
        .parse()
        .map_err(|_| format!("{url}: '{port}' is not a port"))?;
    Ok(format!("{name}:{port}"))
}

#[cfg(test)]
#[path = "tests_wire.rs"]
pub(crate) mod tests;
