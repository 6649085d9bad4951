//! conform's smoke run, in this process, against a sandbox as `serve --clock manual` with
//! the sandbox's profile and conform's faults on: the reference conforms; a violation's
//! witness is its shrunk case (or the registry's witness exchanges).

use super::EdgeSeam;
use super::session::{settings, start};
use crate::conform::{self, SweepOptions, profile};
use crate::serve::faults::Plan;
use crate::serve::sandbox::Branches;

/// The sandbox's profile, as the repository ships it.
const PROFILE: &str = include_str!("../../docs/profiles/sandbox.json");

/// What a smoke run found.
pub struct Smoke {
    pub cases: usize,
    pub requests: usize,
    /// The first violation: the oracle's rule and its shrunk case's requests, or else the
    /// registry's property and its witness exchanges.
    pub violation: Option<(String, usize)>,
    pub exit: u8,
}

/// Seeds `0..seeds` of conform, conform's faults on, against a fresh sandbox with
/// `sandbox` planted in it and `proxy` in conform's faults.
pub async fn run(seeds: u64, sandbox: EdgeSeam, proxy: EdgeSeam) -> Result<Smoke, String> {
    let live = start(settings(Branches::A, Plan::default(), sandbox), false).await?;
    let url = format!("http://{}", live.addr);
    let loaded = profile::Loaded::from_json(PROFILE)?;
    let target = conform::connect(&url, loaded, 2048, proxy).await?;
    let options = SweepOptions {
        seeds: (0..seeds).collect(),
        seeds_text: format!("0..{seeds}"),
        continue_to: format!("..{seeds}"),
        proxy_faults: true,
        reruns: 3,
        shrink_budget: 60,
        deadline: None,
        keep_going: false,
        har: None,
    };
    let report = conform::sweep(&target, &url, &options, Some(())).await?;
    Ok(Smoke {
        cases: report.cases_run,
        requests: report.requests,
        violation: report
            .violations
            .first()
            .map(|f| (f.rule().to_owned(), f.shrunk_requests))
            .or_else(|| {
                let p = report.registry.violated().into_iter().next()?;
                let witness = p.witness.as_ref().map_or(0, |w| w.exchanges.len());
                Some((p.name.to_owned(), witness))
            }),
        exit: report.exit_code(),
    })
}
