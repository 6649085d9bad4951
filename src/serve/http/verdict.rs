//! The session's verdict over HTTP (`GET /__sandbox/verdict`, and the page's): judged
//! off the session's lock. What it judges is taken under the lock without a copy of what
//! the session folded ([`Sandbox::held`]), copied and judged on a blocking thread; only
//! the Markdown's and the page's drawing of the witnesses takes the lock again. So the
//! session answers its merchants while a verdict over many Payments is judged.

use super::*;
use crate::serve::verdict::Judged;

#[derive(serde::Deserialize)]
pub(super) struct VerdictQuery {
    format: Option<String>,
}

/// `GET /__sandbox/verdict[?format=markdown|junit]`.
pub(super) async fn verdict(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
    q: Result<Query<VerdictQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let q = match q {
        Ok(Query(q)) => q,
        Err(e) => return bad_query(e),
    };
    if let Some(other) = q
        .format
        .as_deref()
        .filter(|f| !["markdown", "junit"].contains(f))
    {
        let message =
            format!("?format={other}: the verdict is JSON (no format), markdown or junit");
        return respond(HttpReply::refusal(400, "invalid_request", message));
    }
    if q.format.as_deref() == Some("junit") {
        let Some(judged) = judged_off_lock(&edge, ns).await else {
            return crashed();
        };
        // A suite for the session, a test case per property, as `judge` writes them;
        // no command line: the verdict is of the traffic, not of how serve started.
        use crate::outcome::{Outcome, Part, junit, verdicts};
        let part = Part::new("sandbox session", verdicts("serve", &judged.verdicts, None));
        let outcome = Outcome {
            command_line: None,
            ..Outcome::new("payhub-verify serve", vec![part])
        };
        let xml = junit::render(&outcome);
        return respond(HttpReply::text(200, "application/xml; charset=utf-8", xml));
    }
    if q.format.as_deref() == Some("markdown") {
        let Some(judged) = judged_off_lock(&edge, ns).await else {
            return crashed();
        };
        let reply = edge.with_core(ns, |core, _| {
            let session = crate::serve::witness::Session::of(core);
            let md = crate::serve::verdict::to_markdown_of(core.trace(), &session, &judged);
            HttpReply::text(200, "text/markdown; charset=utf-8", md)
        });
        return reply.map_or_else(crashed, respond);
    }
    let held = edge.with_core(ns, |core, _| {
        let record = core.record();
        let events = record.events_total();
        // Every event judged, and what the record in memory no longer holds.
        let record = serde_json::json!({
            "events_judged": events,
            "events_held": record.events_held().count(),
            "events_dropped": record.events_dropped(),
            "note": record.note(),
        });
        (core.held(), events, core.journal().reading(), record)
    });
    let Some((held, events, reading, record)) = held else {
        return crashed();
    };
    let judged = tokio::task::spawn_blocking(move || {
        let (facts, side) = held.judged();
        crate::serve::verdict::json_of(&facts, &side, events, &reading, record)
    })
    .await;
    match judged {
        Ok(json) => respond(HttpReply::json(200, json)),
        Err(_) => crashed(),
    }
}

/// Namespace `ns`'s verdicts, judged off its lock; `None` if the session crashed.
pub(super) async fn judged_off_lock(edge: &Edge, ns: usize) -> Option<Judged> {
    let (held, events) =
        edge.with_core(ns, |core, _| (core.held(), core.record().events_total()))?;
    tokio::task::spawn_blocking(move || {
        let (facts, side) = held.judged();
        Judged {
            verdicts: side.verdicts(&facts),
            events,
        }
    })
    .await
    .ok()
}
