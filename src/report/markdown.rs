//! How a report reads: the summary text a reviewer reads first, and the Markdown page.

use super::{CoverageRow, Finding, Judged, Report, ZooReport};
use payhub_properties::checker::CheckStatus;
use std::collections::BTreeMap;
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
        for p in self.problems() {
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
            let bad: Vec<&str> = r
                .properties
                .iter()
                .filter(|p| matches!(p.status, CheckStatus::Violated | CheckStatus::Unreached))
                .map(|p| p.name)
                .collect();
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
            for p in &r.properties {
                if p.status == CheckStatus::Violated
                    || (r.complete && p.status == CheckStatus::Unreached)
                {
                    out.push(format!("{} in {}", p.name, r.name));
                }
            }
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

    /// The Markdown page: the verdict, what failed and how to reproduce it on the first
    /// screen; then one table per kind of check, one row per item. Diagrams and
    /// paragraph-sized texts are in `report.json` and `diagrams/`.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let h = &self.header;
        let _ = writeln!(s, "# payhub-verify report\n");
        let _ = writeln!(
            s,
            "**Verdict: {}** in {:.1} s\n",
            self.verdict, self.seconds
        );
        let _ = writeln!(
            s,
            "- payhub-verify {}, commit {}, {}",
            h.version, h.commit, h.date
        );
        let _ = writeln!(
            s,
            "- contract: {} (the Chinese original is authoritative)",
            payhub_model::Contract::named()
        );
        let _ = writeln!(s, "- command: `{}` on {} cores", h.command, h.cores);
        let _ = writeln!(s, "- reproduce: `{}`", h.command);
        let problems = self.problems();
        if !problems.is_empty() {
            let _ = writeln!(s, "\n## What failed\n");
            for p in &problems {
                let _ = writeln!(s, "- {}  \n  reproduce: `{}`", p.what, p.reproduce);
            }
        }
        let _ = writeln!(s, "\n## Summary\n\n```text\n{}```\n", self.summary_text());

        self.presets_markdown(&mut s);
        self.simulation_markdown(&mut s);
        super::readings::markdown(&self.readings, &mut s);
        self.scenarios_markdown(&mut s);
        self.findings_markdown(&mut s);
        self.coverage_markdown(&mut s);
        if let Some(zoo) = &self.kill_matrix {
            kill_matrix_markdown(&mut s, zoo);
        }
        self.edges_markdown(&mut s);
        s
    }

    /// One table, a row per preset; a failing preset's counterexamples below it.
    fn presets_markdown(&self, s: &mut String) {
        let platform: Vec<&str> = payhub_properties::presets::platform_presets()
            .iter()
            .map(|p| p.name)
            .collect();
        let _ = writeln!(s, "## Exhaustive presets\n");
        let _ = writeln!(
            s,
            "Client properties (`client-*`) have nothing to judge in a platform preset (an adversarial sender, no client): not applicable there.\n"
        );
        let _ = writeln!(
            s,
            "| preset | result | unique states | total states | depth | seconds | always held | sometimes reached | not applicable |\n|---|---|---|---|---|---|---|---|---|"
        );
        for r in &self.presets {
            let applies = |name: &str| !(platform.contains(&r.name) && name.starts_with("client-"));
            let count = |kind: payhub_properties::Kind, ok: CheckStatus| {
                let of_kind: Vec<_> = r
                    .properties
                    .iter()
                    .filter(|p| p.kind == kind && applies(p.name))
                    .collect();
                format!(
                    "{}/{}",
                    of_kind.iter().filter(|p| p.status == ok).count(),
                    of_kind.len()
                )
            };
            let na = r.properties.iter().filter(|p| !applies(p.name)).count();
            let result = if !r.complete {
                "not judged (incomplete)"
            } else if r.passed() {
                "pass"
            } else {
                "**FAIL**"
            };
            let _ = writeln!(
                s,
                "| `{}` | {result} | {} | {} | {} | {:.2} | {} | {} | {na} |",
                r.name,
                r.unique_states,
                r.total_states,
                r.max_depth,
                r.seconds,
                count(payhub_properties::Kind::Always, CheckStatus::Holds),
                count(payhub_properties::Kind::Sometimes, CheckStatus::Reached),
            );
        }
        s.push('\n');
        for r in &self.presets {
            for p in r.properties.iter().filter(|p| p.counterexample.is_some()) {
                let cx = p.counterexample.as_ref().expect("filtered");
                let note = crate::outcome::html::note(p.name, &p.rules, &cx.detail);
                let _ = writeln!(
                    s,
                    "### Counterexample of `{}` [{}] in `{}`\n\n{}\n\n```mermaid\n{}```\n\n<details><summary>The tape ({} choices), as <code>replay --tape</code> takes it</summary>\n\n```text\n{}\n```\n\n</details>\n",
                    p.name,
                    p.rules.join(", "),
                    r.name,
                    cx.detail,
                    cx.proof.trace.to_mermaid_with_verdict(Some(&note)),
                    cx.tape.len(),
                    cx.tape.join("\n")
                );
            }
        }
    }

    fn simulation_markdown(&self, s: &mut String) {
        let _ = writeln!(s, "## Simulation\n");
        if !self.ran("simulation sweep") && !self.ran("chaos") {
            let _ = writeln!(
                s,
                "Not run: nothing is claimed for the simulation or chaos sweeps.\n"
            );
            return;
        }
        let _ = writeln!(
            s,
            "{} seeds of the reference client (two servers sharing a database, one live server; swarm fault profiles), {} steps, {} violations; each run healed for 25 simulated hours, {} left a submission unresolved. Chaos: {} seeds of adversarial requests, {} steps, {} violations. Choice and answer counts are in `report.json`.\n",
            self.simulation.seeds,
            self.simulation.steps,
            self.simulation.violations,
            self.simulation.liveness_failures,
            self.chaos.seeds,
            self.chaos.steps,
            self.chaos.violations
        );
        if let Some(cx) = &self.simulation.counterexample {
            let _ = writeln!(
                s,
                "### Counterexample: `{}`\n\n{}\n\nReplay: `{}`\n\n```mermaid\n{}```\n\n<details><summary>The trace as text</summary>\n\n```text\n{}```\n\n</details>\n",
                cx.property, cx.detail, cx.replay, cx.mermaid, cx.trace
            );
        }
    }

    fn scenarios_markdown(&self, s: &mut String) {
        let _ = writeln!(s, "## Scenarios and findings scripts\n");
        if !self.ran("scripts") {
            let _ = writeln!(s, "Not run: nothing is claimed for the scripts.\n");
            return;
        }
        let passed = self.scenarios.iter().filter(|sc| sc.passed).count();
        let _ = writeln!(
            s,
            "{passed} of {} scripts pass (titles in `report.json`, `payhub-verify scenario --list`).\n",
            self.scenarios.len()
        );
        let names = |pass: bool| {
            self.scenarios
                .iter()
                .filter(|sc| sc.passed == pass)
                .map(|sc| format!("`{}`", sc.name))
                .collect::<Vec<_>>()
        };
        let failed = names(false);
        if !failed.is_empty() {
            let _ = writeln!(s, "**FAILED:** {}.\n", failed.join(", "));
        }
        let passed = names(true);
        if !passed.is_empty() {
            let _ = writeln!(s, "Passed: {}.", passed.join(", "));
        }
        let _ = writeln!(
            s,
            "\nEach script's trace and sequence diagram: `payhub-verify scenario NAME [--format mermaid]`; the findings' diagrams are in `diagrams/`.\n"
        );
    }

    /// Where the contract is silent or ambiguous: one line each, then the details.
    fn findings_markdown(&self, s: &mut String) {
        let _ = writeln!(s, "## Contract findings\n");
        let _ = writeln!(
            s,
            "Where the contract allows several behaviours (the checkers explore all), is silent, can be read two ways, or contradicts itself (both readings explored; listed first, with both texts), and what the harness assumed (`model/ASSUMPTIONS.md`, `payhub-verify assumptions`). Change an assumption through its parameter or branch, not the code. Every finding's texts, with its scripts drawn, are in `report.html` (and `report.json`).\n"
        );
        // The contradictions quoted in full (the contract, Chinese and English) with the
        // first sentence of what was assumed; every text whole is in report.html.
        let shown = |f: &&Finding| f.gap == payhub_model::Gap::Contradiction;
        for f in self.findings.iter().filter(shown) {
            let kind = if f.gap == payhub_model::Gap::Contradiction {
                "Contradiction"
            } else {
                "Reading"
            };
            let _ = writeln!(
                s,
                "**{kind} `{}`.** {}\n\nWhat the harness does: {} (in full: `payhub-verify assumptions`, report.html) Scripts: {}.\n",
                f.id,
                f.contract,
                first_sentence(f.assumed),
                f.scripts.join(", ")
            );
        }
        for f in &self.findings {
            let mut line = format!("- `{}` ({})", f.id, f.gap.as_str());
            if let Some(p) = f.parameter {
                let _ = write!(line, ", parameter `{}`", md_cell(p));
            }
            if !f.scripts.is_empty() {
                let _ = write!(line, ", scripts {}", f.scripts.join(", "));
            }
            if f.simulation_runs > 0 {
                let _ = write!(line, ", reached in {} simulation runs", f.simulation_runs);
            }
            let _ = writeln!(s, "{line}");
        }
        s.push('\n');
    }

    /// Rules the properties judge, with what exercised them, in a table; the rules only
    /// unit tests and scenarios check, in one line by who keeps them (the reasons are in
    /// `report.json` and `payhub-verify rules --coverage`).
    fn coverage_markdown(&self, s: &mut String) {
        let _ = writeln!(s, "## Rule coverage\n");
        self.sentences_markdown(s);
        let (judged, tested): (Vec<_>, Vec<_>) =
            self.coverage.iter().partition(|c| !c.properties.is_empty());
        let _ = writeln!(
            s,
            "{} rules: {} judged by properties (below: how many properties judge each, and how many presets and scripts exercised it, that is decided something, reached a witness of it or, for an invariant no single answer decides, were built to exercise it and judged it in every state; which ones: `report.json`), {} checked by unit tests and scenarios only.\n",
            self.coverage.len(),
            judged.len(),
            tested.len()
        );
        let _ = writeln!(
            s,
            "| rule | properties | presets | scripts |\n|---|---|---|---|"
        );
        for c in &judged {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} |",
                c.id,
                c.properties.len(),
                c.presets.len(),
                c.scenarios.len(),
            );
        }
        let mut by_enforcer: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for c in &tested {
            by_enforcer
                .entry(format!("{:?}", c.enforcer))
                .or_default()
                .push(c.id);
        }
        for (enforcer, ids) in by_enforcer {
            let _ = writeln!(
                s,
                "\nChecked by tests only ({enforcer}): {}.",
                ids.iter()
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}

impl Report {
    /// The contract's sentences (one rule each) by how they are judged: those judged in
    /// part by name, those no property judges each with the first clause of its stated
    /// reason (the data of `rules --coverage`; whole in `report.html` and `report.json`).
    fn sentences_markdown(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "### Sentences by how they are judged\n\nWhat is not judged of a sentence judged in part, and each reason in full: `report.html`, `report.json`, `payhub-verify rules --coverage`.\n\n| judged | sentences | which, and why no property judges it |\n|---|---|---|"
        );
        for j in Judged::ALL {
            let rows: Vec<&CoverageRow> = self.coverage.iter().filter(|c| c.judged == j).collect();
            let which: Vec<String> = rows
                .iter()
                .filter(|_| j != Judged::Whole)
                .map(|c| match &c.reason {
                    Some(why) => {
                        let clause = why.split("; ").next().unwrap_or(why);
                        format!("`{}`: {}", c.id, md_cell(clause))
                    }
                    None => format!("`{}`", c.id),
                })
                .collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                j.as_str(),
                rows.len(),
                which.join("<br>")
            );
        }
        s.push('\n');
    }
}

/// The kill matrix section of the Markdown page.
fn kill_matrix_markdown(s: &mut String, zoo: &ZooReport) {
    let _ = writeln!(s, "\n## Kill matrix\n");
    let killed = zoo.matrix.mutants.iter().filter(|r| r.killed).count();
    let _ = writeln!(
        s,
        "{killed} of {} planted bugs killed; each row: the rules it breaks, the property that killed it, how, and the counterexample's length in choices (sides, times and the rest: `report.json`).\n",
        zoo.matrix.mutants.len()
    );
    let _ = writeln!(
        s,
        "| mutant | rules | killed by | method | steps |\n|---|---|---|---|---|"
    );
    for r in &zoo.matrix.mutants {
        let property = match (r.killed, r.property) {
            (true, Some(p)) => p.to_owned(),
            _ => "**SURVIVED**".to_owned(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {property} | {} | {} |",
            r.name,
            r.rules.join(", "),
            r.method
                .as_deref()
                .map_or_else(|| "—".to_owned(), crate::mutants_cmd::method_name),
            r.counterexample_steps
                .map_or_else(|| "—".to_owned(), |n| n.to_string()),
        );
    }
    let _ = writeln!(
        s,
        "\nA `zoo-*` preset is a small world of the bug zoo's own, not one `check --preset` knows: `payhub-verify mutants --show NAME` shows that mutant's counterexample and a tape `replay --tape` accepts."
    );
    if let Some(example) = &zoo.example {
        let _ = writeln!(
            s,
            "\nOne killed mutant's counterexample, `{}` (also `diagrams/mutant-{}.mmd`; any mutant's: `payhub-verify mutants --show NAME`):\n\n```mermaid\n{}```",
            example.name, example.name, example.mermaid
        );
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The first `n` names, then how many more.
fn named_first(names: &[String], n: usize) -> String {
    let mut s = names.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > n {
        s.push_str(&format!(" and {} more (below)", names.len() - n));
    }
    s
}

/// A text's first sentence (up to the first ". "), or the whole text.
fn first_sentence(text: &str) -> &str {
    text.find(". ").map_or(text, |i| &text[..=i])
}
