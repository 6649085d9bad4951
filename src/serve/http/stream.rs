//! Exports streamed with back-pressure and a write timeout: the body is a channel of
//! chunks of at most [`CHUNK_BYTES`], one in flight, so a reader that does not read
//! holds at most a chunk or two (plus hyper's and the socket's buffers), never a copy of
//! the export; a reader that takes no chunk for [`WRITE_TIMEOUT`] has its connection
//! closed. The events export is produced a chunk at a time under the session's lock;
//! the exports built whole (HAR, script) are held by at most [`WHOLE_EXPORTS_MAX`]
//! readers at once (the rest wait, then 429 with `Retry-After`).

use super::*;
use axum::body::{Bytes, HttpBody};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use tokio::sync::{Semaphore, mpsc};

/// The most bytes of one chunk of an export.
pub const CHUNK_BYTES: usize = 64 * 1024;
/// Events serialized per chunk of the events export (under the session's lock).
const EVENTS_PER_CHUNK: usize = 256;
/// A reader that takes no chunk for this long is disconnected.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Readers of an export built whole (HAR, script) at once.
pub const WHOLE_EXPORTS_MAX: usize = 4;
/// How long a reader waits for its turn at an export built whole.
const TURN_WAIT: Duration = Duration::from_secs(10);

static WHOLE_EXPORTS: Semaphore = Semaphore::const_new(WHOLE_EXPORTS_MAX);

/// A body fed by a channel; ends with an error (the connection aborts, the client sees
/// a truncated body) unless the producer marked it complete.
struct ChunkBody {
    rx: mpsc::Receiver<Bytes>,
    complete: Arc<AtomicBool>,
}

impl HttpBody for ChunkBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, std::io::Error>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(b)) => Poll::Ready(Some(Ok(hyper::body::Frame::data(b)))),
            Poll::Ready(None) if self.complete.load(Ordering::Acquire) => Poll::Ready(None),
            Poll::Ready(None) => Poll::Ready(Some(Err(std::io::Error::other(
                "the export was cut short (the reader stalled, or the record changed)",
            )))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The sending side: each chunk waits for the reader at most [`WRITE_TIMEOUT`].
pub(super) struct Feed {
    tx: mpsc::Sender<Bytes>,
    complete: Arc<AtomicBool>,
    kill: Option<Kill>,
}

impl Feed {
    /// `false` once the reader is gone or stalled (its connection is then closed).
    pub(super) async fn send(&self, chunk: Bytes) -> bool {
        match tokio::time::timeout(WRITE_TIMEOUT, self.tx.send(chunk)).await {
            Ok(Ok(())) => true,
            Ok(Err(_)) => false,
            Err(_) => {
                if let Some(k) = &self.kill {
                    k.0.notify_one();
                }
                false
            }
        }
    }

    pub(super) fn done(self) {
        self.complete.store(true, Ordering::Release);
    }
}

/// A streamed response of `content_type`, and the feed that writes it.
pub(super) fn streamed(content_type: &'static str, kill: Option<Kill>) -> (Response, Feed) {
    let (tx, rx) = mpsc::channel(1);
    let complete = Arc::new(AtomicBool::new(false));
    let body = ChunkBody {
        rx,
        complete: complete.clone(),
    };
    let response = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::new(body))
        .unwrap_or_else(|_| Response::new(Body::empty()));
    (response, Feed { tx, complete, kill })
}

/// An export built whole, streamed in chunks; at most [`WHOLE_EXPORTS_MAX`] at once.
pub(super) async fn whole(
    reply: HttpReply,
    kill: Option<Kill>,
    permit: tokio::sync::SemaphorePermit<'static>,
) -> Response {
    if reply.status != 200 {
        return respond(reply);
    }
    let (response, feed) = streamed(reply.content_type, kill);
    let text = Bytes::from(reply.body);
    tokio::spawn(async move {
        let _permit = permit;
        for at in (0..text.len()).step_by(CHUNK_BYTES) {
            let end = (at + CHUNK_BYTES).min(text.len());
            if !feed.send(text.slice(at..end)).await {
                return;
            }
        }
        feed.done();
    });
    response
}

/// A turn at an export built whole, or 429 with `Retry-After` when every turn stays
/// taken for [`TURN_WAIT`].
pub(super) async fn turn() -> Result<tokio::sync::SemaphorePermit<'static>, Response> {
    match tokio::time::timeout(TURN_WAIT, WHOLE_EXPORTS.acquire()).await {
        Ok(Ok(p)) => Ok(p),
        _ => {
            let body = serde_json::json!({ "error": { "code": "rate_limited", "message": format!("{WHOLE_EXPORTS_MAX} exports are being read already; try again"), "retryable": true } });
            let mut reply = HttpReply::json(429, body.to_string());
            reply.retry_after_s = Some(1);
            Err(respond(reply))
        }
    }
}

/// `GET /__sandbox/events`: JSON Lines, as `payhub-verify judge` reads them, a chunk of
/// [`EVENTS_PER_CHUNK`] events at a time under the lock (a reader that does not read
/// holds no copy of the session); 410 when the record no longer holds the first events.
pub(super) async fn events(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
    req: Request,
) -> Response {
    let kill = exports::kill_of(&req);
    let first = edge.with_core(ns, |core, _| {
        core.events_export_from(0, EVENTS_PER_CHUNK)
            .map(|(text, next)| (text, next, core.record().events_dropped()))
    });
    let (text, mut next, dropped) = match first {
        None => return crashed(),
        Some(Err(e)) => return respond(HttpReply::refusal(410, "gone", e)),
        Some(Ok(x)) => x,
    };
    let (response, feed) = streamed("application/x-ndjson", kill);
    tokio::spawn(async move {
        let mut text = text;
        while !text.is_empty() {
            if !feed.send(Bytes::from(text)).await {
                return;
            }
            let chunk = edge.with_core(ns, |core, _| {
                // The record rotated meanwhile: what is left is not the session's.
                let rotated = core.record().events_dropped() != dropped;
                let chunk = || core.events_export_from(next, EVENTS_PER_CHUNK).ok();
                (!rotated).then(chunk).flatten()
            });
            let Some((t, n)) = chunk.flatten() else {
                return;
            };
            (text, next) = (t, n);
        }
        feed.done();
    });
    response
}
