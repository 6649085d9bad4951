//! A sandbox session in this process: `serve --clock manual --shared-merchants` under a
//! fault plan on a free loopback port, its clients run, its verdict, events and HAR fetched.

use super::EdgeSeam;
use super::client::{Client, Exchange, Run};
use crate::serve::faults::Plan;
use crate::serve::http::{self, ClockMode, Edge, Namespace};
use crate::serve::sandbox::{Branches, OBJECTS_MAX, Planted, Settings};
use crate::wire::{self, WireRequest};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// What a session is: its branches, fault plan and client runs.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: &'static str,
    pub branches: Branches,
    pub plan: Plan,
    pub runs: Vec<Run>,
    /// What its clients break: the properties the sandbox's verdict must violate.
    pub violated: &'static [&'static str],
}

/// What a session left: the sandbox's verdict (`GET /__sandbox/verdict`), events (JSON
/// Lines) and HAR, and the client's exchanges.
pub struct Session {
    pub verdict: Value,
    pub events: String,
    pub har: String,
    pub seen: Vec<Exchange>,
    /// A control the sandbox refused, or an export that did not come.
    pub errors: Vec<String>,
}

/// A sandbox listening on loopback until dropped.
pub struct Live {
    pub addr: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a sandbox with `settings` on a free loopback port (`shared`: one session for
/// every merchant).
pub async fn start(settings: Settings, shared: bool) -> Result<Live, String> {
    let namespaces = Namespace::pair(&settings, 0, OBJECTS_MAX, |_| Ok(None))?;
    let (listener, addr) = http::listen(([127, 0, 0, 1], 0).into()).await?;
    let guard = crate::serve::guard::Guard {
        addr: Some(addr),
        ..Default::default()
    };
    let edge = Edge::new(namespaces, ClockMode::Manual, None, guard, shared);
    let task = tokio::spawn(http::serve(listener, Arc::new(edge)));
    Ok(Live {
        addr: addr.to_string(),
        task,
    })
}

/// The sandbox's settings for `spec` with `seam` planted.
pub fn settings(branches: Branches, plan: Plan, seam: EdgeSeam) -> Settings {
    Settings {
        seed: 0,
        branches,
        plan,
        webhooks: false,
        planted: Planted::Reference,
        seam,
    }
}

async fn get(addr: &str, target: &str, errors: &mut Vec<String>) -> String {
    let req = WireRequest::new("GET", target, None);
    match wire::send(addr, &req, Duration::from_secs(10)).await {
        Ok(r) if r.status == 200 => r.body,
        Ok(r) => {
            errors.push(format!("GET {target} answered {}", r.status));
            String::new()
        }
        Err(e) => {
            errors.push(format!("GET {target}: {e}"));
            String::new()
        }
    }
}

/// Runs `spec` against a fresh sandbox with `seam` planted.
pub async fn run(spec: &Spec, seam: EdgeSeam) -> Result<Session, String> {
    let live = start(settings(spec.branches, spec.plan.clone(), seam), true).await?;
    let mut client = Client::new(live.addr.clone());
    for run in &spec.runs {
        client.run(run).await;
    }
    let mut errors = std::mem::take(&mut client.errors);
    let verdict = get(&live.addr, "/__sandbox/verdict", &mut errors).await;
    let events = get(&live.addr, "/__sandbox/events", &mut errors).await;
    let har = get(&live.addr, "/__sandbox/har", &mut errors).await;
    let verdict = serde_json::from_str(&verdict).unwrap_or(Value::Null);
    Ok(Session {
        verdict,
        events,
        har,
        seen: client.seen,
        errors,
    })
}
