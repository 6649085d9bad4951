//! The session's exports over HTTP: its events, what-if script, HAR, and the page.

use super::*;

/// The connection's kill switch.
pub(super) fn kill_of(req: &Request) -> Option<Kill> {
    req.extensions().get::<Kill>().cloned()
}

/// A whole export of namespace `ns` made by `make` under the session's lock, written
/// once its turn comes (`stream.rs`: one whole export at a time).
async fn whole_export(
    edge: &Edge,
    ns: usize,
    kill: Option<Kill>,
    make: impl FnOnce(&mut Sandbox) -> HttpReply,
) -> Response {
    let permit = match stream::turn().await {
        Ok(p) => p,
        Err(r) => return r,
    };
    match edge.with_core(ns, |core, _| make(core)) {
        Some(reply) => stream::whole(reply, kill, permit).await,
        None => crashed(),
    }
}

/// `GET /__sandbox/script`: the session as a script `payhub-verify run` replays.
pub(super) async fn script(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
    req: Request,
) -> Response {
    whole_export(&edge, ns, kill_of(&req), |core| {
        match core.record().tape() {
            Err(e) => HttpReply::refusal(410, "gone", e),
            Ok(_) => match crate::serve::script::export(core) {
                Ok(text) => HttpReply::text(200, "text/plain; charset=utf-8", text),
                Err(e) => HttpReply::text(500, "text/plain; charset=utf-8", e),
            },
        }
    })
    .await
}

/// `GET /__sandbox/`: the page (a shell; its script fetches `page.json`).
pub(super) async fn page() -> Response {
    respond(HttpReply::text(
        200,
        "text/html; charset=utf-8",
        crate::serve::page::to_html(),
    ))
}

/// `GET /__sandbox/page.json`: what the page renders.
pub(super) async fn page_json(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
) -> Response {
    // Judged off the session's lock: an open page polls every second.
    let Some(judged) = super::verdict::judged_off_lock(&edge, ns).await else {
        return crashed();
    };
    let reply = edge.with_core(ns, |core, _| {
        let session = crate::serve::witness::Session::of(core);
        HttpReply::json(200, crate::serve::page::to_json_of(&session, judged))
    });
    reply.map_or_else(crashed, respond)
}

/// `GET /__sandbox/har`: the session's exchanges as HAR 1.2.
pub(super) async fn har(
    State(edge): State<Arc<Edge>>,
    MerchantNs(ns, _): MerchantNs,
    req: Request,
) -> Response {
    whole_export(&edge, ns, kill_of(&req), |core| {
        match core.record().events_whole() {
            // Whole or refused, as the events export: never the exchanges still held alone.
            Err(e) => HttpReply::refusal(410, "gone", e),
            Ok(events) => {
                let all: Vec<_> = events.cloned().collect();
                HttpReply::json(200, crate::serve::har::to_har(&all, core.clock_origin_ms()))
            }
        }
    })
    .await
}
