//! Webhooks POSTed to the merchant's URL (`--webhooks URL`, [`crate::wire`]). The core
//! hands each webhook in flight out once ([`Outbox`]); a 2xx head acknowledges it
//! (`Choice::Deliver`), anything else or nothing within [`POST_TIMEOUT`] loses it
//! (`Choice::Drop`: re-delivered per A-WEBHOOK-REDELIVERY).

use crate::wire::{self, WireRequest};
use payhub_model::{WebhookEvent, WebhookObject};
use payhub_sim::network::MsgId;
use std::collections::BTreeSet;
use std::time::Duration;

/// A webhook POST not answered within this is lost.
pub const POST_TIMEOUT: Duration = Duration::from_secs(5);

/// One webhook to POST.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    pub msg: MsgId,
    pub body: String,
    /// POSTed this much later (a `delay` webhook fault).
    pub delay_ms: u64,
}

/// The webhooks handed to the edge and not yet reported.
#[derive(Clone, Debug, Default)]
pub struct Outbox {
    handed: BTreeSet<MsgId>,
}

impl Outbox {
    /// The webhooks in flight not handed out yet, with what they are to carry.
    pub fn fresh<'a>(
        &self,
        in_flight: impl Iterator<Item = (MsgId, &'a WebhookEvent)>,
    ) -> Vec<(MsgId, WebhookEvent)> {
        in_flight
            .filter(|(msg, _)| !self.handed.contains(msg))
            .map(|(msg, e)| (msg, e.clone()))
            .collect()
    }

    /// Hands one out, its times on the session's clock (`origin_ms`, the Unix time of the
    /// world's 0).
    pub fn hand(
        &mut self,
        msg: MsgId,
        event: &WebhookEvent,
        delay_ms: u64,
        origin_ms: i64,
    ) -> Outgoing {
        self.handed.insert(msg);
        Outgoing {
            msg,
            body: body(event, origin_ms),
            delay_ms,
        }
    }

    /// A handed-out webhook was reported.
    pub fn done(&mut self, msg: MsgId) -> bool {
        self.handed.remove(&msg)
    }
}

/// `{"id":"evt_001","type":"payment.succeeded","version":2,"object":{…}}`.
/// Times as the sandbox's answers write them ([`crate::http_map::edge_times`]).
pub fn body(event: &WebhookEvent, origin_ms: i64) -> String {
    let mut object = match &event.object {
        WebhookObject::Payment(p) => serde_json::to_value(p),
        WebhookObject::Refund(r) => serde_json::to_value(r),
    }
    .unwrap_or_default();
    crate::http_map::edge_times(&mut object, origin_ms);
    serde_json::json!({
        "id": event.id,
        "type": event.kind.as_str(),
        "version": event.object.version(),
        "object": object,
    })
    .to_string()
}

/// `http://host:port/path` → (`host:port`, path).
pub fn parse_url(url: &str) -> Result<(String, String), String> {
    let authority = wire::authority(url)?;
    let rest = &url["http://".len()..];
    Ok((
        authority,
        rest.find('/').map_or("/", |i| &rest[i..]).to_owned(),
    ))
}

/// POSTs one webhook; whether a 2xx status came within [`POST_TIMEOUT`].
pub async fn post((addr, path): &(String, String), body: &str) -> bool {
    let req = WireRequest::new("POST", path, Some(body.to_owned()));
    wire::status(addr, &req, POST_TIMEOUT)
        .await
        .is_ok_and(|s| (200..300).contains(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2xx status acknowledges, however its body ends (or never does); another status,
    /// a reset or silence does not.
    #[tokio::test]
    async fn a_2xx_head_acknowledges() {
        use crate::wire::tests::target;
        let at = |addr: String| (addr, "/hooks".to_owned());
        let cases: [(&[u8], bool); 4] = [
            (b"HTTP/1.1 204 No Content\r\n\r\n", true),
            (b"HTTP/1.1 200 OK\r\ncontent-length: 99\r\n\r\n{", true),
            (
                b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n",
                false,
            ),
            (b"", false),
        ];
        for (answer, acknowledged) in cases {
            let addr = target(answer).await;
            let answer = String::from_utf8_lossy(answer);
            assert_eq!(post(&at(addr), "{}").await, acknowledged, "{answer}");
        }
    }

    #[test]
    fn urls_are_http_with_a_host() {
        assert_eq!(
            parse_url("http://127.0.0.1:9000/hooks").unwrap(),
            ("127.0.0.1:9000".into(), "/hooks".into())
        );
        assert_eq!(
            parse_url("http://localhost").unwrap(),
            ("localhost:80".into(), "/".into())
        );
        for bad in ["https://x/", "http://:80/", "http://h:port/"] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }
}
