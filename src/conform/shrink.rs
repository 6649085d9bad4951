//! Shrinking against the live target (docs/conform.md, "Shrinking"): a violating case
//! made smaller one step at a time, each candidate run under fresh names and kept if it
//! still violates; a concurrent one, which may fail only sometimes, gets `reruns` runs.

use super::case::{Case, Fault, Req, Round};
use super::run::{CaseOutcome, CaseRun, Target, run_case};

pub struct Shrunk {
    pub case: Case,
    pub run: CaseRun,
    /// Runs of the target spent shrinking.
    pub runs: usize,
}

/// Smaller cases than `case`, simplest first.
fn candidates(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let with = |rounds: Vec<Round>| Case {
        seed: case.seed,
        rounds,
    };
    for i in 0..case.rounds.len() {
        let mut r = case.rounds.clone();
        r.remove(i);
        if r.iter().any(|x| matches!(x, Round::Send(_))) {
            out.push(with(r));
        }
    }
    for (i, round) in case.rounds.iter().enumerate() {
        let Round::Send(reqs) = round else { continue };
        let mut send = |edit: &dyn Fn(&mut Vec<Req>)| {
            let mut r = case.rounds.clone();
            let mut v = reqs.clone();
            edit(&mut v);
            r[i] = Round::Send(v);
            out.push(with(r));
        };
        for j in (0..reqs.len()).filter(|_| reqs.len() > 1) {
            send(&|v| {
                v.remove(j);
            });
        }
        for j in (0..reqs.len()).filter(|&j| reqs[j].fault != Fault::None) {
            send(&|v| v[j].fault = Fault::None);
        }
    }
    out
}

/// Shrinks `case` (which violated in `run`). `next_tag` names each run's namespace.
pub async fn shrink(
    t: &Target,
    case: Case,
    run: CaseRun,
    reruns: usize,
    budget: usize,
    next_tag: &mut dyn FnMut() -> String,
) -> Result<Shrunk, String> {
    let mut best = Shrunk { case, run, runs: 0 };
    'outer: loop {
        for cand in candidates(&best.case) {
            let tries = if cand.is_concurrent() {
                reruns.max(1)
            } else {
                1
            };
            for _ in 0..tries {
                if best.runs >= budget {
                    break 'outer;
                }
                best.runs += 1;
                let run = run_case(t, &cand, &next_tag(), false).await?;
                if matches!(run.outcome, CaseOutcome::Violation { .. }) {
                    best.case = cand;
                    best.run = run;
                    continue 'outer;
                }
            }
        }
        break;
    }
    Ok(best)
}
