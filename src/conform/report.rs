//! conform's report: the sweep's counts and speed, and each violation found — its
//! shrunk case in the contract's notation, as a Mermaid sequence diagram, and as a
//! what-if script for `payhub-verify run` (docs/scripts.md) — then the registry's
//! verdicts over the recorded exchanges ([`super::registry`]), as text, JSON or Markdown.

use super::run::Exchange;
use super::{Finding, Report, TARGET_FAILED_SHARE_PCT};
use payhub_sim::diagram::{Arrow, Diagram, NoteKind, Shape};
use std::fmt::Write as _;

impl Report {
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
