//! The summary a reviewer reads first: what `verify` prints, and the report's opening;
//! its lines for the edges and the search's shortcuts.

use crate::verify_cmd::report::{Report, Shortcuts, failing};

impl Report {
    /// The summary a reviewer reads first.
    pub fn summary_text(&self) -> String {
        let mut s = vec![format!(
            "payhub-verify: {} ({:.1}s)",
            self.verdict, self.seconds
        )];
        if let Some(m) = self.planted {
            s.push(format!("  planted bug: mutant {m} in every preset below; the simulation, chaos, scripts and bug zoo not run"));
        }
        s.extend(
            self.problems
                .iter()
                .map(|p| format!("  {}\n    reproduce: {}", p.what, p.reproduce)),
        );
        let time = self.phases.iter().map(|p| match p.ran {
            true => format!("{} {:.2}s", p.name, p.seconds),
            false => format!("{} not run", p.name),
        });
        let time: Vec<String> = time.collect();
        if !time.is_empty() {
            s.push(format!("time: {}", time.join(", ")));
        }
        s.push(format!("exhaustive presets ({}):", self.search));
        for r in &self.presets {
            let bad: Vec<&str> = failing(r).map(|p| p.name).collect();
            let verdict = match (r.complete, bad.is_empty()) {
                (false, _) => format!("not judged (incomplete: stopped by {})", self.limits),
                (true, true) => "all hold, all reached".to_owned(),
                (true, false) => format!("NOT OK: {}", bad.join(", ")),
            };
            let complete = ["incomplete", "complete"][usize::from(r.complete)];
            s.push(format!(
                "    {:<24} {complete:<10} {:>9} states {:>7.2}s  {verdict}",
                r.name, r.unique_states, r.seconds,
            ));
        }
        s.extend(self.shortcuts.as_ref().map(Shortcuts::line));
        // A part that did not run is not judged, whatever its numbers say.
        let ran = |part: &str, label: &str, line: String| match self.ran(part) {
            true => line,
            false => format!("{label}: not judged (not run)"),
        };
        let (sim, chaos) = (&self.simulation, &self.chaos);
        s.push(ran("simulation sweep", "simulation", format!(
            "simulation: {} seeds of the reference client, {} steps, {} violations; {} runs with a submission unresolved 25 h after faults stopped",
            sim.seeds, sim.steps, sim.violations, sim.liveness_failures,
        )));
        s.extend(sim.gaps_reached.iter().map(|(id, gap)| format!(
            "    contract finding {id}: reached in {} runs, as assumed (not a failure); first: {}\n    reproduce: {}",
            gap.runs, gap.first, gap.replay
        )));
        s.extend(self.simulation_other_readings.as_ref().map(|other| format!(
            "simulation with the contradictions read the other way ({}): {} seeds, {} violations; {} runs with a submission unresolved",
            payhub_sim::Readings::other().notation(),
            other.seeds,
            other.violations,
            other.liveness_failures,
        )));
        s.push(ran(
            "chaos",
            "chaos",
            format!(
                "chaos: {} seeds of adversarial requests, {} steps, {} violations",
                chaos.seeds, chaos.steps, chaos.violations,
            ),
        ));
        let passed = self.scenarios.iter().filter(|x| x.passed).count();
        let scripts = "scenarios and findings scripts";
        s.push(ran(
            "scripts",
            scripts,
            format!("{scripts}: {passed} of {} pass", self.scenarios.len()),
        ));
        match &self.kill_matrix {
            Some(zoo) => s.push(format!(
                "bug zoo: {} of {} mutants killed",
                zoo.matrix.killed, zoo.matrix.total
            )),
            None if !self.ran("bug zoo") => s.push("bug zoo: not judged (not run)".into()),
            None => {}
        }
        s.extend(self.edges_line());
        let judged = self.coverage.iter().filter(|c| !c.properties.is_empty());
        // Properties here are predicates that can fail; reach checks are never counted.
        let in_part = judged.clone().filter(|c| {
            payhub_model::Rule::from_id(c.id).is_some_and(|r| r.judged_in_part().is_some())
        });
        let (all, judged, in_part) = (self.coverage.len(), judged.count(), in_part.count());
        s.push(format!(
            "rules: {all} in the catalogue, {judged} checked by properties that can fail ({in_part} of them in part), {} by reach checks, unit tests and scenarios only; {} assumptions recorded",
            all - judged,
            self.findings.len()
        ));
        s.join("\n") + "\n"
    }

    /// `edges: …` of the summary.
    fn edges_line(&self) -> Option<String> {
        let e = match &self.edges {
            Some(e) => e,
            None if !self.ran("edges") => return Some("edges: not judged (not run)".into()),
            None => return None,
        };
        let passed = e.checks.iter().filter(|c| c.passed).count();
        let caught = e.defects.iter().filter(|d| d.caught_by.is_some()).count();
        let total = e.defects.len();
        let zoo = if total == 0 {
            "edge zoo: not run (--no-mutants)".to_owned()
        } else {
            format!("edge zoo: {caught} of {total} planted defects caught")
        };
        Some(format!(
            "edges: {passed} of {} end-to-end checks pass (sandbox sessions on loopback, {} exchanges; conform smoke, {} cases); {zoo}",
            e.checks.len(),
            e.exchanges,
            e.smoke_cases
        ))
    }
}

impl Shortcuts {
    /// One line for the summary.
    pub fn line(&self) -> String {
        let compared = self.check.compared.iter();
        let subjects: std::collections::BTreeSet<&str> =
            compared.clone().map(|c| c.subject.as_str()).collect();
        let mismatch = self.check.mismatches().next();
        match (self.planted, mismatch) {
            (Some(planted), Some(m)) => format!(
                "search shortcuts: FAILED with the unsound shortcut {planted} planted: {} judged otherwise on {}: {}",
                m.shortcut,
                m.subject,
                m.differs.as_deref().unwrap_or_default()
            ),
            (Some(planted), None) => format!(
                "search shortcuts: the unsound shortcut {planted} planted judged alike on {} presets: not caught",
                subjects.len()
            ),
            (None, Some(m)) => format!(
                "search shortcuts: FAILED: {} judged otherwise than the plain breadth-first search on {}: {}",
                m.shortcut,
                m.subject,
                m.differs.as_deref().unwrap_or_default()
            ),
            (None, None) => {
                let mut shortcuts: Vec<&str> = Vec::new();
                for c in compared.filter(|c| c.shortcut != "stateright") {
                    if !shortcuts.contains(&c.shortcut) {
                        shortcuts.push(c.shortcut);
                    }
                }
                let planted = &self.check.planted_caught;
                let caught = planted.iter().filter(|(_, c)| *c).count();
                format!(
                    "search shortcuts: {} judge as the plain breadth-first search on {} presets (planted bugs included), its counts and verdicts those of stateright's own checker; {caught} of {} planted unsound shortcuts caught",
                    shortcuts.join(", "),
                    subjects.len(),
                    planted.len()
                )
            }
        }
    }
}
