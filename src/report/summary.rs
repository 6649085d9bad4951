//! The summary a reviewer reads first: what `verify` prints, and the report's opening.

use super::Report;
use std::fmt::Write as _;

impl Report {
    /// The summary a reviewer reads first.
    pub fn summary_text(&self) -> String {
        let mut s = String::new();
        let violated = self.violated_names();
        let _ = match violated.len() {
            0 => writeln!(s, "payhub-verify: {} ({:.1}s)", self.verdict, self.seconds),
            n => writeln!(
                s,
                "payhub-verify: {} ({:.1}s): {n} violated: {}",
                self.verdict,
                self.seconds,
                named_first(&violated, 8)
            ),
        };
        if let Some(m) = self.planted {
            let _ = writeln!(
                s,
                "  planted bug: mutant {m} in every preset below; the simulation, chaos, scripts and bug zoo not run"
            );
        }
        for p in &self.problems {
            let _ = writeln!(s, "  {}\n    reproduce: {}", p.what, p.reproduce);
        }
        if !self.phases.is_empty() {
            let parts: Vec<String> = self
                .phases
                .iter()
                .map(|p| {
                    if p.ran {
                        format!("{} {:.2}s", p.name, p.seconds)
                    } else {
                        format!("{} not run", p.name)
                    }
                })
                .collect();
            let _ = writeln!(s, "time: {}", parts.join(", "));
        }
        let _ = writeln!(s, "exhaustive presets ({}):", self.search);
        for r in &self.presets {
            let bad: Vec<&str> = super::failing(r).map(|p| p.name).collect();
            let verdict = if !r.complete {
                format!("not judged (incomplete: stopped by {})", self.limits)
            } else if bad.is_empty() {
                "all hold, all reached".to_owned()
            } else {
                format!("NOT OK: {}", bad.join(", "))
            };
            let _ = writeln!(
                s,
                "    {:<24} {:<10} {:>9} states {:>7.2}s  {verdict}",
                r.name,
                if r.complete { "complete" } else { "incomplete" },
                r.unique_states,
                r.seconds,
            );
        }
        if let Some(shortcuts) = &self.shortcuts {
            let _ = writeln!(s, "{}", shortcuts.line());
        }
        if !self.ran("simulation sweep") {
            let _ = writeln!(s, "simulation: not judged (not run)");
        } else {
            let _ = writeln!(
                s,
                "simulation: {} seeds of the reference client, {} steps, {} violations; {} runs with a submission unresolved 25 h after faults stopped",
                self.simulation.seeds,
                self.simulation.steps,
                self.simulation.violations,
                self.simulation.liveness_failures,
            );
        }
        for (id, gap) in &self.simulation.gaps_reached {
            let _ = writeln!(
                s,
                "    contract finding {id}: reached in {} runs, as assumed (not a failure); first: {}\n    reproduce: {}",
                gap.runs, gap.first, gap.replay
            );
        }
        if let Some(other) = &self.simulation_other_readings {
            let _ = writeln!(
                s,
                "simulation with the contradictions read the other way ({}): {} seeds, {} violations; {} runs with a submission unresolved",
                payhub_sim::Readings::other().notation(),
                other.seeds,
                other.violations,
                other.liveness_failures,
            );
        }
        if !self.ran("chaos") {
            let _ = writeln!(s, "chaos: not judged (not run)");
        } else {
            let _ = writeln!(
                s,
                "chaos: {} seeds of adversarial requests, {} steps, {} violations",
                self.chaos.seeds, self.chaos.steps, self.chaos.violations,
            );
        }
        if !self.ran("scripts") {
            let _ = writeln!(s, "scenarios and findings scripts: not judged (not run)");
        } else {
            let passed = self.scenarios.iter().filter(|x| x.passed).count();
            let _ = writeln!(
                s,
                "scenarios and findings scripts: {passed} of {} pass",
                self.scenarios.len()
            );
        }
        match &self.kill_matrix {
            Some(zoo) => {
                let _ = writeln!(
                    s,
                    "bug zoo: {} of {} mutants killed",
                    zoo.matrix.killed, zoo.matrix.total
                );
            }
            None if !self.ran("bug zoo") => {
                let _ = writeln!(s, "bug zoo: not judged (not run)");
            }
            None => {}
        }
        if let Some(line) = self.edges_line() {
            let _ = writeln!(s, "{line}");
        }
        let gaps = self
            .coverage
            .iter()
            .filter(|c| c.properties.is_empty())
            .count();
        // Properties here are predicates that can fail; reach checks are never counted.
        let in_part = self
            .coverage
            .iter()
            .filter(|c| !c.properties.is_empty())
            .filter(|c| {
                payhub_model::Rule::from_id(c.id).is_some_and(|r| r.judged_in_part().is_some())
            })
            .count();
        let _ = writeln!(
            s,
            "rules: {} in the catalogue, {} checked by properties that can fail ({} of them in part), {} by reach checks, unit tests and scenarios only; {} assumptions recorded",
            self.coverage.len(),
            self.coverage.len() - gaps,
            in_part,
            gaps,
            self.findings.len()
        );
        s
    }

    /// Every violation's name, in the order of the problems: `preset P: NAME`,
    /// `simulation: NAME`, `script S`, `mutant M survived`.
    pub fn violated_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.presets {
            out.extend(super::failing(r).map(|p| format!("{} in {}", p.name, r.name)));
        }
        for name in self.simulation.violations_by_property.keys() {
            out.push(format!("{name} in the simulation"));
        }
        if self.simulation.liveness_failures > 0 {
            out.push(format!(
                "{} in the simulation",
                payhub_properties::liveness::NAME
            ));
        }
        if self.chaos.violations > 0 {
            out.push("chaos".to_owned());
        }
        for sc in self.scenarios.iter().filter(|x| !x.passed) {
            out.push(format!("script {}", sc.name));
        }
        if let Some(zoo) = &self.kill_matrix {
            for m in zoo.matrix.survivors() {
                out.push(format!("mutant {} survived", m.name));
            }
        }
        out
    }
}

/// The first `n` names, then how many more.
fn named_first(names: &[String], n: usize) -> String {
    let mut s = names.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > n {
        s.push_str(&format!(" and {} more (below)", names.len() - n));
    }
    s
}
