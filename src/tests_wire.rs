//! The harness's HTTP/1.1 client against loopback targets that answer with fixed bytes.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback target that answers every connection with `answer`'s bytes, then closes.
pub(crate) async fn target(answer: &'static [u8]) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let _ = s.write_all(answer).await;
        }
    });
    addr
}

fn get() -> WireRequest {
    WireRequest {
        method: "GET".into(),
        target: "/v1/payments/pay_1".into(),
        headers: vec![("Idempotency-Key".into(), "ключ".into())],
        body: None,
    }
}

/// Answers with a length, chunked, and ended by the close are read whole; bytes that
/// are not HTTP are malformed; a close before an answer is a reset.
#[tokio::test]
async fn answers_are_read_whole_however_they_end() {
    let t = Duration::from_secs(5);
    let cases: [(&[u8], u16, &str); 3] = [
        (
            b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\nRetry-After: 1\r\n\r\n{}",
            201,
            "{}",
        ),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            200,
            "abc",
        ),
        (b"HTTP/1.1 200 OK\r\n\r\nabc", 200, "abc"),
    ];
    for (bytes, status, body) in cases {
        let r = send(&target(bytes).await, &get(), t).await.unwrap();
        assert_eq!((r.status, r.body.as_str()), (status, body));
        assert_eq!(r.header("retry-after").is_some(), status == 201);
    }
    let ssh = send(&target(b"SSH-2.0-OpenSSH\r\n\r\n").await, &get(), t).await;
    assert!(matches!(ssh, Err(WireError::Malformed(_))), "{ssh:?}");
    let closed = send(&target(b"").await, &get(), t).await;
    assert_eq!(closed, Err(WireError::Reset));
}

/// `status` returns at the head, with the body still coming; silence is a timeout.
#[tokio::test]
async fn a_status_is_read_at_the_head() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            if held.is_empty() {
                let _ = s
                    .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 9\r\n\r\n{")
                    .await;
            }
            held.push(s);
        }
    });
    let t = Duration::from_millis(500);
    assert_eq!(status(&addr, &get(), t).await, Ok(202));
    assert_eq!(status(&addr, &get(), t).await, Err(WireError::Timeout));
}

#[test]
fn urls_name_their_authority() {
    assert_eq!(authority("http://127.0.0.1:9/").unwrap(), "127.0.0.1:9");
    assert_eq!(authority("http://localhost").unwrap(), "localhost:80");
    for bad in ["https://x", "http://:80/", "http://h:port/"] {
        assert!(authority(bad).is_err(), "{bad}");
    }
}
