//! A minimal HTTP/1.1 client on a tokio `TcpStream`, one request per connection
//! (`Connection: close`), bounded in time and bytes: what conform's cases and its proxy
//! send. One connection per request gives every request of a concurrent round a
//! connection of its own, and lets a fault on the wire (a reset) end exactly one
//! exchange.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An answer over this many bytes is a broken target (head and body together).
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

/// The bytes of `req` for `host`.
pub fn encode(req: &WireRequest, host: &str) -> Vec<u8> {
    let mut s = format!("{} {} HTTP/1.1\r\nHost: {host}\r\n", req.method, req.target);
    for (n, v) in &req.headers {
        s.push_str(&format!("{n}: {v}\r\n"));
    }
    let body = req.body.as_deref().unwrap_or("");
    if req.body.is_some() {
        s.push_str("Content-Type: application/json\r\n");
    }
    s.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    s.into_bytes()
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

async fn exchange(addr: &str, req: &WireRequest) -> Result<WireReply, WireError> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| WireError::Connect(format!("{addr}: {e}")))?;
    let _ = stream.set_nodelay(true);
    stream
        .write_all(&encode(req, addr))
        .await
        .map_err(|_| WireError::Reset)?;
    read_reply(&mut stream).await
}

/// Reads one answer: the head, then `Content-Length` bytes (or to the end).
pub async fn read_reply(stream: &mut TcpStream) -> Result<WireReply, WireError> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(reply) = parse_reply(&buf)? {
            return Ok(reply);
        }
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| WireError::Reset)?;
        if n == 0 {
            return match parse_reply_at_end(&buf)? {
                Some(reply) => Ok(reply),
                None => Err(WireError::Reset),
            };
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > REPLY_BYTES_MAX {
            return Err(WireError::Malformed(format!(
                "an answer over {REPLY_BYTES_MAX} bytes"
            )));
        }
    }
}

/// A whole answer in `buf`, if it is there yet.
fn parse_reply(buf: &[u8]) -> Result<Option<WireReply>, WireError> {
    let Some((status, headers, body_at)) = head(buf)? else {
        return Ok(None);
    };
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.trim().parse::<usize>())
        .transpose()
        .map_err(|_| WireError::Malformed("a bad Content-Length".into()))?;
    let Some(length) = length else {
        return Ok(None);
    };
    if buf.len() < body_at + length {
        return Ok(None);
    }
    let body = String::from_utf8_lossy(&buf[body_at..body_at + length]).into_owned();
    Ok(Some(WireReply {
        status,
        headers,
        body,
    }))
}

/// At the end of the stream: an answer without `Content-Length` ends there.
fn parse_reply_at_end(buf: &[u8]) -> Result<Option<WireReply>, WireError> {
    if let Some(reply) = parse_reply(buf)? {
        return Ok(Some(reply));
    }
    let Some((status, headers, body_at)) = head(buf)? else {
        return Ok(None);
    };
    if headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    {
        return Ok(None);
    }
    Ok(Some(WireReply {
        status,
        headers,
        body: String::from_utf8_lossy(&buf[body_at..]).into_owned(),
    }))
}

type Head = (u16, Vec<(String, String)>, usize);

fn head(buf: &[u8]) -> Result<Option<Head>, WireError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let text = std::str::from_utf8(&buf[..end])
        .map_err(|_| WireError::Malformed("a head that is not UTF-8".into()))?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| status_line.strip_prefix("HTTP/1.0 "))
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| WireError::Malformed(format!("status line {status_line:?}")))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Ok(Some((status, headers, end + 4)))
}

/// The host and port of an `http://host:port[/]` URL.
pub fn authority(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url}: only http:// targets are supported"))?;
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() {
        return Err(format!("{url}: no host"));
    }
    Ok(if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:80")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_parsed_with_and_without_a_length() {
        let bytes = b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\nRetry-After: 1\r\n\r\n{}";
        let r = parse_reply(bytes).unwrap().unwrap();
        assert_eq!((r.status, r.body.as_str()), (201, "{}"));
        assert_eq!(r.header("retry-after"), Some("1"));
        assert_eq!(parse_reply(&bytes[..bytes.len() - 1]).unwrap(), None);
        let open = b"HTTP/1.1 200 OK\r\n\r\nabc";
        assert_eq!(parse_reply(open).unwrap(), None);
        assert_eq!(parse_reply_at_end(open).unwrap().unwrap().body, "abc");
        assert!(parse_reply(b"SSH-2.0\r\n\r\n").is_err());
    }

    #[test]
    fn urls_name_their_authority() {
        assert_eq!(authority("http://127.0.0.1:9/").unwrap(), "127.0.0.1:9");
        assert_eq!(authority("http://localhost").unwrap(), "localhost:80");
        assert!(authority("https://x").is_err());
    }
}
