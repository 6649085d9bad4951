//! conform's report: the sweep's counts and speed, and each violation found — its
//! shrunk case in the contract's notation, as a Mermaid sequence diagram, and as a
//! what-if script for `payhub-verify run` (docs/scripts.md) — then the registry's
//! verdicts over the recorded exchanges ([`super::registry`]), as text, JSON or Markdown.

use super::registry::Registry;
use super::run::Exchange;
use payhub_sim::diagram::{Arrow, Diagram, NoteKind, Shape};
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub seed: u64,
    /// Requests of the generated case, and of the shrunk one.
    pub requests: usize,
    pub shrunk_requests: usize,
    /// Runs of the target shrinking took.
    pub shrink_runs: usize,
    /// Cases run until this one, and seconds (shrinking not included).
    pub detected_after_cases: usize,
    pub detected_after_s: f64,
    /// The shrunk case as run: every exchange, the last round's the one that broke.
    pub exchanges: Vec<Exchange>,
    /// The round whose answers no model state explains (0-based).
    pub breaking_round: usize,
    /// The model's answers that round could have had (closest paths), with why each differs.
    pub allowed: Vec<String>,
    pub mermaid: String,
    pub script: String,
    /// The property that judged it.
    pub property: &'static str,
    /// The rules by which the model's closest paths answered the requests whose answers
    /// no model state explains (the rules the target broke).
    pub rules: Vec<&'static str>,
    /// Other seeds that broke the same rule (`--keep-going` keeps one finding per rule).
    pub also_seeds: Vec<u64>,
}

/// The share of a run's exchanges the target may fail (no answer read, with no fault
/// planned) before the run is incomplete whatever its cases say.
pub const TARGET_FAILED_SHARE_PCT: usize = 5;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub target: String,
    pub profile: String,
    pub seeds: String,
    pub proxy_faults: bool,
    pub cases_run: usize,
    pub requests: usize,
    pub elapsed_s: f64,
    pub cases_per_s: f64,
    pub violations: Vec<Finding>,
    /// Cases the oracle could not finish (bounds), or whose judgement depended on an
    /// exchange the target failed: never a pass.
    pub incomplete: Vec<(u64, String)>,
    /// Exchanges sent, those whose answer from the target could not be read or never
    /// came with no fault planned, and the first of those.
    pub exchanged: usize,
    pub target_failed: usize,
    pub target_first_failure: Option<String>,
    /// Seeds not reached (the duration ran out, or the run stopped at a violation).
    pub not_run: usize,
    /// How to continue, when seeds were not reached.
    pub continue_with: Option<String>,
    /// The profile's suppressions, each a registry property with its reason and what it
    /// hid in this run.
    pub suppressed: Vec<String>,
    /// Per silent point, the reading the target took (`silent.rs`).
    pub readings: Vec<super::silent::PointRow>,
    /// The registry's verdicts over the exchanges sent, beside the oracle's.
    pub registry: Registry,
    /// Per rule the platform keeps, the registry's verdict (`rule_rows.rs`).
    pub rules: Vec<super::rule_rows::RuleRow>,
}

impl Report {
    /// 0 conforms, 1 a violation (the oracle's or the registry's), 3 incomplete (the
    /// oracle's bounds, seeds not reached, or a registry that judged nothing: see
    /// [`Registry::exit_code`]), 2 nothing checked.
    pub fn exit_code(&self) -> u8 {
        let registry = self.registry.exit_code(self.cases_run);
        if !self.violations.is_empty() || registry == 1 {
            1
        } else if !self.incomplete.is_empty()
            || self.target_failed_past_share()
            || (self.not_run > 0 && self.continue_with.is_some())
            || registry == 3
        {
            3
        } else if self.cases_run == 0 {
            2
        } else {
            0
        }
    }

    /// Whether the target failed more than [`TARGET_FAILED_SHARE_PCT`] % of the exchanges.
    pub fn target_failed_past_share(&self) -> bool {
        self.target_failed * 100 > self.exchanged * TARGET_FAILED_SHARE_PCT
    }

    pub fn verdict(&self) -> &'static str {
        match self.exit_code() {
            0 => "conforms",
            1 => "VIOLATION",
            3 => "incomplete",
            _ => "nothing checked",
        }
    }

    pub fn text(&self) -> String {
        let faults = ["", ", proxy faults"][usize::from(self.proxy_faults)];
        let mut s = vec![format!(
            "payhub-verify conform: {} — {} cases ({} requests) against {} [{}], seeds {}{faults}, {:.1}s, {:.1} cases/s",
            self.verdict(),
            self.cases_run,
            self.requests,
            self.target,
            self.profile,
            self.seeds,
            self.elapsed_s,
            self.cases_per_s
        )];
        if self.target_failed > 0 {
            let past = ["", "incomplete: "][usize::from(self.target_failed_past_share())];
            s.push(format!(
                "{past}the target failed {} of {} exchanges ({TARGET_FAILED_SHARE_PCT} % allowed a run): its answer could not be read or never came; first: {}",
                self.target_failed,
                self.exchanged,
                self.target_first_failure.as_deref().unwrap_or_default()
            ));
        }
        let incomplete = self.incomplete.iter();
        s.extend(incomplete.map(|(seed, why)| format!("incomplete: seed {seed}: {why}")));
        let not_run = self.continue_with.iter();
        s.extend(not_run.map(|c| format!("not run: {} seeds; continue with: {c}", self.not_run)));
        let mut s = s.join("\n") + "\n" + &super::silent::text(&self.readings);
        self.suppressed.iter().for_each(|l| s += &format!("{l}\n"));
        self.violations.iter().for_each(|f| s += &f.text());
        s += &self.registry.text();
        s += &super::rule_rows::summary(&self.rules);
        let registry = self.registry.incomplete(self.cases_run);
        s + &registry
            .map(|why| format!("incomplete: the registry: {why}\n"))
            .unwrap_or_default()
    }
}

impl Finding {
    /// The rule a finding is kept under, one per rule with `--keep-going`.
    pub fn rule(&self) -> &str {
        self.rules.last().copied().unwrap_or("(no rule)")
    }

    /// The shrunk case in the contract's notation, the breaking answers marked `!!`: the
    /// others the model explains, those no model state explains with them.
    pub fn notation(&self) -> String {
        let explained = self.exchanges.iter().filter(|e| !e.unexplained).count();
        let mut s = format!(
            "   ({explained} answers the model explains, unmarked; !! marks the round's answers no model state explains)\n"
        );
        for e in &self.exchanges {
            let mark = ["   ", "!! "][usize::from(e.unexplained)];
            let answer = match e.answer.is_empty() {
                true => String::new(),
                false => format!("  →  {}", e.answer),
            };
            let _ = writeln!(s, "{mark}{}{answer}", e.request);
        }
        if self.allowed.is_empty() {
            s.push_str(
                "   the model has no answer here at all (its paths end before this round)\n",
            );
        }
        for a in &self.allowed {
            let _ = writeln!(s, "   the model allows: {a}");
        }
        s
    }

    pub fn text(&self) -> String {
        format!(
            "violation of {} (rules {}; also seeds {:?}): seed {} (found after {} cases, {:.1}s), shrunk from {} to {} requests in {} runs:\n{}mermaid:\n{}what-if script (payhub-verify run):\n{}",
            self.property,
            self.rules.join(", "),
            self.also_seeds,
            self.seed,
            self.detected_after_cases,
            self.detected_after_s,
            self.requests,
            self.shrunk_requests,
            self.shrink_runs,
            self.notation(),
            self.mermaid,
            self.script
        )
    }
}

/// A request from `m` to `t` and its answer back, as arrows (an empty text none).
pub fn messages(
    d: &mut Diagram,
    (m, t): (usize, usize),
    (request, answer): (&str, &str),
    witness: bool,
) {
    for (from, to, arrow, text) in [(m, t, Arrow::Call, request), (t, m, Arrow::Reply, answer)] {
        if !text.is_empty() {
            let shape = Shape::Message { from, to, arrow };
            d.push(shape, text.replace([';', '#'], ",")).witness = witness;
        }
    }
}

/// The exchanges as a sequence diagram: each request and the target's answer (a clock
/// move or a control as a note), the breaking round's unexplained answers marked as the
/// witness with a note that no model state explains it, and a note for each answer the
/// model allows.
pub fn diagram(exchanges: &[Exchange], breaking_round: usize, allowed: &[String]) -> Diagram {
    let clean = |t: &str| t.replace([';', '#'], ",");
    let mut d = Diagram::default();
    let m = d.participant("M", "conform (merchant)");
    let t = d.participant("T", "target");
    let note = |over| Shape::Note {
        over,
        kind: NoteKind::Plain,
    };
    for e in exchanges {
        let witness = e.unexplained && e.round == breaking_round;
        if e.answer.is_empty() {
            d.push(note((m, t)), clean(&e.request)).witness = witness;
            continue;
        }
        messages(&mut d, (m, t), (&e.request, &e.answer), witness);
        if witness {
            d.push(note((t, t)), "no model state explains this answer")
                .witness = true;
        }
    }
    // Every alternative the model allows, each with the fields where the target differs.
    for (i, a) in allowed.iter().enumerate() {
        let which = if allowed.len() > 1 {
            format!(" ({} of {})", i + 1, allowed.len())
        } else {
            String::new()
        };
        d.push(
            note((m, t)),
            format!("the model allows{which}: {}", clean(a)),
        );
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Mermaid note lists every answer the model allows, not only the first.
    #[test]
    fn the_mermaid_lists_every_alternative_the_model_allows() {
        let exchanges = vec![Exchange {
            round: 0,
            request: "POST /v1/payments K-1 (ORDER-1, 100 USD)".into(),
            answer: "200 pay_X".into(),
            unexplained: true,
            place: Some(0),
        }];
        let allowed: Vec<String> = [
            "201 pay_demo_001  (status 200 where the model answers 201)",
            "202 pay_demo_001  (status 200 where the model answers 202)",
            "500 internal_error  (status 200 where the model answers 500)",
        ]
        .map(String::from)
        .to_vec();
        let m = diagram(&exchanges, 0, &allowed).to_mermaid();
        for (i, a) in allowed.iter().enumerate() {
            let head = a.split("  (").next().unwrap();
            assert!(m.contains(&format!("({} of 3)", i + 1)), "{m}");
            assert!(m.contains(head), "{head}: {m}");
        }
    }
}
