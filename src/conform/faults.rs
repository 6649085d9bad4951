//! The proxy faults, applied by conform's own HTTP client on a request's way to the target
//! (docs/conform.md, "Faults"): the target sees what a proxy in front of it would show.

use super::case::Fault;
use crate::serve::seam::EdgeSeam;
use crate::wire::{self, WireError, WireReply, WireRequest};
use std::time::{Duration, Instant};

pub type Timed = ((Instant, Instant), Result<WireReply, WireError>);

/// What came of one request sent with its fault.
#[derive(Clone, Debug)]
pub struct Faulted {
    /// When it was sent and when its answer came (or none did).
    pub at: (Instant, Instant),
    pub reply: Result<WireReply, WireError>,
    /// A duplicate's second copy, sent once the first's answer came.
    pub second: Option<Timed>,
    /// Why the target's answer could not be read or never came, with no reset planned:
    /// the target's failure, never a fault of the case (read as no answer).
    pub failure: Option<String>,
}

/// Sends `req` to `addr` with `fault` (the sandbox's vocabulary): `ResetBefore` sends
/// nothing, `ResetAfter` sends and throws the answer away (both read as a reset),
/// `Hold` waits before sending (so concurrent requests reach the target in another
/// order), `Duplicate` sends it again once the first answer came. `seam`: the edge
/// zoo's defect planted here forwards a `ResetBefore`.
pub async fn send(
    addr: &str,
    req: &WireRequest,
    fault: Fault,
    limit: Duration,
    seam: EdgeSeam,
) -> Faulted {
    let start = Instant::now();
    let reset = |at| Faulted {
        at: (start, at),
        reply: Err(WireError::Reset),
        second: None,
        failure: None,
    };
    match fault {
        Fault::ResetBefore if !seam.proxy_forwards_reset_before() => return reset(start),
        Fault::ResetBefore | Fault::ResetAfter => {
            let _ = wire::send(addr, req, limit).await;
            return reset(Instant::now());
        }
        Fault::Hold(ms) => tokio::time::sleep(Duration::from_millis(u64::from(ms))).await,
        Fault::None | Fault::Duplicate => {}
    }
    let first = wire::send(addr, req, limit).await;
    let answered = Instant::now();
    let second = if fault == Fault::Duplicate {
        let reply = wire::send(addr, req, limit).await;
        Some(((answered, Instant::now()), reply))
    } else {
        None
    };
    let (reply, failure) = match first {
        Ok(r) => (Ok(r), None),
        Err(e) => (Err(WireError::Reset), Some(e.to_string())),
    };
    Faulted {
        at: (start, answered),
        reply,
        second,
        failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A loopback target that counts its connections and answers each `201 {}`.
    async fn counting_target(count: Arc<AtomicUsize>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
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

    /// Each fault does what it says to the case and to the target: a reset before
    /// sending reaches nothing, one after reaches the target once, a duplicate twice
    /// (its second answer kept), none once, its answer read whole; the edge zoo's defect
    /// forwards a reset before sending; a target that does not answer is its failure.
    #[tokio::test]
    async fn each_fault_reaches_the_target_as_it_says() {
        let t = Duration::from_secs(5);
        let count = Arc::new(AtomicUsize::new(0));
        let addr = counting_target(count.clone()).await;
        let post = WireRequest::new("POST", "/v1/payments", Some("{}".into()));
        let cases: [(Fault, Option<u16>, usize); 5] = [
            (Fault::ResetBefore, None, 0),
            (Fault::ResetAfter, None, 1),
            (Fault::Duplicate, Some(201), 2),
            (Fault::Hold(20), Some(201), 1),
            (Fault::None, Some(201), 1),
        ];
        for (fault, status, reached) in cases {
            count.store(0, Ordering::SeqCst);
            let f = send(&addr, &post, fault, t, EdgeSeam::REFERENCE).await;
            match status {
                Some(s) => {
                    let r = f.reply.unwrap();
                    assert_eq!((r.status, r.body.as_str()), (s, "{}"), "{fault:?}");
                    assert_eq!(r.header("retry-after"), Some("1"), "{fault:?}");
                }
                None => assert_eq!(f.reply, Err(WireError::Reset), "{fault:?}"),
            }
            assert_eq!(count.load(Ordering::SeqCst), reached, "{fault:?}");
            assert_eq!(f.failure, None, "{fault:?}");
            let second = f.second.map(|(_, r)| r.unwrap().status);
            assert_eq!(second, (fault == Fault::Duplicate).then_some(201));
        }
        let defect = crate::serve::defect::EdgeDefect::ProxyResetBeforeForwards;
        count.store(0, Ordering::SeqCst);
        let f = send(
            &addr,
            &post,
            Fault::ResetBefore,
            t,
            EdgeSeam::planted(defect),
        )
        .await;
        assert_eq!(
            (f.reply, count.load(Ordering::SeqCst)),
            (Err(WireError::Reset), 1)
        );
        let down = send("127.0.0.1:9", &post, Fault::None, t, EdgeSeam::REFERENCE).await;
        assert_eq!(down.reply, Err(WireError::Reset));
        assert!(down.failure.is_some());
    }
}
