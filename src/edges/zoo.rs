//! The edge zoo's kill matrix: every planted [`EdgeDefect`] must fail one end-to-end
//! check (each session of [`super::sessions`] and [`EdgeCheck::SESSION`] in order, then
//! conform's smoke run); the session that shows it is shrunk to a witness while the
//! same check still fails. Its time runs from the start of the defect's trials.

use super::checks::{self, EdgeCheck};
use super::session::{self, Session, Spec};
use super::{EdgeSeam, SMOKE_SEEDS};
use crate::serve::defect::{Edge, EdgeDefect};
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// One row of the matrix.
#[derive(Clone, Debug, Serialize)]
pub struct DefectRow {
    pub name: &'static str,
    pub edge: &'static str,
    pub about: &'static str,
    /// The check that failed, `None`: missed.
    pub caught_by: Option<&'static str>,
    /// The session it failed on (`conform smoke` for conform's run).
    pub session: Option<String>,
    pub seconds: f64,
    /// The shrunk witness: its HTTP exchanges, and what it is.
    pub witness_requests: Option<usize>,
    pub witness: Option<String>,
    /// The check's sentence.
    pub detail: Option<String>,
}

/// Whether `check` passes on `spec` with the reference edges and fails with `seam`
/// (what the clients of a shrunk session break is what the reference sandbox says they
/// break); the sentence and the exchanges seen.
async fn fails(
    spec: &Spec,
    check: EdgeCheck,
    seam: EdgeSeam,
    dir: &Path,
) -> Result<Option<(String, usize)>, String> {
    let reference = session::run(spec, EdgeSeam::REFERENCE).await?;
    let want = checks::violated(&reference.verdict);
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    let tag = format!("{}-shrink", spec.name);
    let check_on = |s: &Session, seam| checks::run(check, s, &spec.plan, &want, dir, &tag, seam);
    if check_on(&reference, EdgeSeam::REFERENCE).is_err() {
        return Ok(None);
    }
    let s = session::run(spec, seam).await?;
    Ok(check_on(&s, seam).err().map(|why| (why, s.seen.len())))
}

/// Leaves out client runs, then fault rules, one at a time, then moves each rule's
/// `nth` earlier, while `check` still fails.
async fn shrink(
    spec: &Spec,
    check: EdgeCheck,
    seam: EdgeSeam,
    dir: &Path,
    found: (String, usize),
) -> Result<(Spec, (String, usize)), String> {
    let mut best = (spec.clone(), found);
    // First the boldest cut: one rule alone, on the first request it matches.
    for i in 0..spec.plan.faults.len() {
        let mut candidate = spec.clone();
        let mut rule = candidate.plan.faults[i].clone();
        rule.nth = 1;
        candidate.plan.faults = vec![rule];
        if let Some(f) = fails(&candidate, check, seam, dir).await? {
            best = (candidate, f);
            break;
        }
    }
    // Then to a fixed point: a fault moved earlier can let a rule or a run go, and back.
    loop {
        let size = |s: &Spec| {
            s.runs.len()
                + s.plan.faults.len()
                + s.plan.faults.iter().map(|r| r.nth as usize).sum::<usize>()
        };
        let before = size(&best.0);
        let mut i = 0;
        while i < best.0.runs.len() && best.0.runs.len() > 1 {
            let mut candidate = best.0.clone();
            candidate.runs.remove(i);
            match fails(&candidate, check, seam, dir).await? {
                Some(f) => best = (candidate, f),
                None => i += 1,
            }
        }
        let mut i = 0;
        while i < best.0.plan.faults.len() {
            let mut candidate = best.0.clone();
            candidate.plan.faults.remove(i);
            match fails(&candidate, check, seam, dir).await? {
                Some(f) => best = (candidate, f),
                None => i += 1,
            }
        }
        for i in 0..best.0.plan.faults.len() {
            while best.0.plan.faults[i].nth > 1 {
                let mut candidate = best.0.clone();
                candidate.plan.faults[i].nth -= 1;
                match fails(&candidate, check, seam, dir).await? {
                    Some(f) => best = (candidate, f),
                    None => break,
                }
            }
        }
        if size(&best.0) == before {
            break;
        }
    }
    Ok(best)
}

fn describe(spec: &Spec) -> String {
    let runs: Vec<String> = spec
        .runs
        .iter()
        .map(|r| {
            format!(
                "{} {}: order {} card {} key {}",
                r.program.name(),
                r.api_key,
                r.order,
                r.card,
                r.key
            )
        })
        .collect();
    let plan = serde_json::to_string(&spec.plan).unwrap_or_default();
    format!("{}; plan {plan}", runs.join("; "))
}

/// Tries to catch `defect`.
pub async fn kill(defect: EdgeDefect, dir: &Path) -> Result<DefectRow, String> {
    let started = Instant::now();
    let seam = EdgeSeam::planted(defect);
    let mut row = DefectRow {
        name: defect.name(),
        edge: defect.edge().name(),
        about: defect.about(),
        caught_by: None,
        session: None,
        seconds: 0.0,
        witness_requests: None,
        witness: None,
        detail: None,
    };
    if defect.edge() != Edge::ConformProxy {
        for spec in super::sessions() {
            let s = session::run(&spec, seam).await?;
            let tag = format!("{}-{}", spec.name, defect.name());
            for check in EdgeCheck::SESSION {
                let Err(why) = checks::run(check, &s, &spec.plan, spec.violated, dir, &tag, seam)
                else {
                    continue;
                };
                row.seconds = started.elapsed().as_secs_f64();
                let (shrunk, (why, n)) =
                    shrink(&spec, check, seam, dir, (why, s.seen.len())).await?;
                row.caught_by = Some(check.name());
                row.session = Some(spec.name.to_owned());
                row.witness_requests = Some(n);
                row.witness = Some(describe(&shrunk));
                row.detail = Some(why);
                return Ok(row);
            }
        }
    }
    let (sandbox, proxy) = if defect.edge() == Edge::ConformProxy {
        (EdgeSeam::REFERENCE, seam)
    } else {
        (seam, EdgeSeam::REFERENCE)
    };
    let smoke = super::smoke::run(SMOKE_SEEDS, sandbox, proxy).await?;
    if let Some((rule, n)) = smoke.violation {
        row.caught_by = Some(EdgeCheck::ConformSmoke.name());
        row.session = Some("conform smoke".into());
        row.witness_requests = Some(n);
        row.witness = Some(format!("conform's shrunk case ({n} requests)"));
        row.detail = Some(format!(
            "conform finds a violation of {rule} after {} cases",
            smoke.cases
        ));
    }
    row.seconds = started.elapsed().as_secs_f64();
    Ok(row)
}
