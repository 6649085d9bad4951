//! The report of a `verify` run: a Markdown page a code host renders, HTML, and JSON
//! for CI, drawn from what the run found (`crate::verify_cmd::report`).

use crate::verify_cmd::report::Report;
use std::path::Path;

pub mod outcome;
pub mod page;
mod problems;
mod summary;

pub use problems::Problem;

impl Report {
    pub fn to_json(&self) -> String {
        let json = serde_json::to_string_pretty(self);
        json.unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Writes `report.md`, `report.html`, `report.json` and the diagrams to `out`;
    /// returns their paths.
    pub fn write(&self, out: &Path) -> Result<Vec<String>, String> {
        let mkdir = |d: &Path| {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))
        };
        mkdir(out)?;
        let (md, html) = self.pages();
        let names = ["report.html", "report.md", "report.json"];
        for (name, text) in names.into_iter().zip([html, md, self.to_json()]) {
            crate::whole_file::write(&out.join(name), text)?;
        }
        // The diagrams, one Mermaid document each.
        let diagrams = out.join("diagrams");
        mkdir(&diagrams)?;
        let scenarios = self.scenarios.iter();
        let mut written: Vec<(String, &str)> = scenarios
            .map(|sc| (format!("{}.mmd", sc.name), sc.mermaid.as_str()))
            .collect();
        let example = self.kill_matrix.as_ref().and_then(|z| z.example.as_ref());
        written.extend(example.map(|e| (format!("mutant-{}.mmd", e.name), e.mermaid.as_str())));
        // An earlier run's drawings that this run does not make are removed, so the
        // folder shows this run alone (only `.mmd` files: nothing else is touched).
        for e in std::fs::read_dir(&diagrams).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".mmd") && !written.iter().any(|(w, _)| *w == name) {
                std::fs::remove_file(e.path())
                    .map_err(|err| format!("cannot remove {}: {err}", e.path().display()))?;
            }
        }
        for (name, text) in written {
            crate::whole_file::write(&diagrams.join(name), text)?;
        }
        let [html, md, json] = names.map(|n| out.join(n).display().to_string());
        Ok(vec![md, html, json, format!("{}/", diagrams.display())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::{ContractNamed, Header};
    use crate::simulate_cmd::{SimCounterexample, SweepSummary};
    use crate::utc::date_time as utc;
    use crate::verify_cmd::report::{ChaosSummary, ZooReport};
    use payhub_properties::checker::Limits;
    use payhub_properties::checker::{CheckStatus, PresetReport};
    use payhub_properties::rules_of;
    use payhub_properties::zoo::KillMatrix;

    fn header() -> Header {
        Header {
            contract: ContractNamed::JUDGED,
            version: "0.1.0",
            commit: "abc1234".into(),
            date: utc(1_764_582_662),
            command: "payhub-verify verify --preset create-lossy".into(),
            cores: 2,
        }
    }

    /// A run of `presets` and `kill_matrix`, nothing else.
    fn report_of(presets: Vec<PresetReport>, kill_matrix: Option<ZooReport>) -> Report {
        Report {
            verdict: "",
            header: header(),
            limits: "no bound (complete)".into(),
            search: crate::verify_cmd::PresetSearch::Every.describe(),
            problems: Vec::new(),
            seconds: 1.0,
            phases: Vec::new(),
            presets,
            simulation: SweepSummary::default(),
            simulation_other_readings: None,
            readings: Vec::new(),
            chaos: ChaosSummary::default(),
            scenarios: Vec::new(),
            coverage: Vec::new(),
            findings: Vec::new(),
            kill_matrix,
            edges: None,
            shortcuts: None,
            interrupted: None,
            planted: None,
        }
        .judged()
    }

    fn report(presets: Vec<PresetReport>) -> Report {
        report_of(presets, None)
    }

    #[test]
    fn a_report_folder_keeps_no_drawing_of_an_earlier_run() {
        let out = std::env::temp_dir().join(format!("payhub-report-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(out.join("diagrams")).unwrap();
        std::fs::write(out.join("diagrams/S99-gone.mmd"), "sequenceDiagram\n").unwrap();
        std::fs::write(out.join("diagrams/notes.txt"), "mine").unwrap();
        report(Vec::new()).write(&out).unwrap();
        assert!(
            !out.join("diagrams/S99-gone.mmd").exists(),
            "a stale drawing stayed"
        );
        assert!(
            out.join("diagrams/notes.txt").exists(),
            "a file not ours was removed"
        );
        assert!(out.join("report.md").exists());
        std::fs::remove_dir_all(&out).ok();
    }

    #[test]
    fn utc_dates_follow_the_civil_calendar() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_764_582_662), "2025-12-01 09:51:02 UTC");
    }

    /// With a violation, the first 20 lines name the verdict, version, commit, date, the
    /// violated property, its rule and the command that reproduces it.
    #[test]
    fn the_first_screen_names_the_violation_its_rule_and_the_reproduce_command() {
        use payhub_model::client::{AntiPattern, Policy};
        let policy = Policy::reference_random().with(AntiPattern::NewOrderNoAfterTimeout);
        let preset = payhub_properties::presets::client_presets(&policy)
            .into_iter()
            .find(|p| p.name == "create-lossy")
            .expect("create-lossy");
        let limits = Limits {
            threads: 1,
            max_states: Some(20_000),
            timeout: None,
            max_depth: None,
        };
        let checked = payhub_properties::check(&preset, limits).expect("checks");
        let violated = checked
            .properties
            .iter()
            .find(|p| p.status == CheckStatus::Violated)
            .expect("the anti-pattern is caught")
            .clone();
        let md = report(vec![checked]).pages().0;
        let screen: Vec<&str> = md.lines().take(20).collect();
        let screen = screen.join("\n");
        for needle in [
            "FAILED",
            "0.1.0",
            "abc1234",
            "2025-12-01",
            violated.name,
            violated.rules[0],
            "reproduce: `payhub-verify check --preset create-lossy`",
        ] {
            assert!(screen.contains(needle), "{needle} not in:\n{screen}");
        }
    }

    /// The simulation's counterexample: drawn as SVG in HTML, a Mermaid block in
    /// Markdown, its rules' sentences beside it.
    #[test]
    fn the_simulations_counterexample_is_drawn_in_both_formats() {
        let mut d = payhub_sim::Diagram::default();
        d.participant("C", "client");
        d.push_verdict("VIOLATED no-new-attempt-while-one-is-unfinished: twice");
        let mut r = report(Vec::new());
        r.simulation.counterexample = Some(SimCounterexample {
            property: "no-new-attempt-while-one-is-unfinished".into(),
            detail: "twice".into(),
            mermaid: d.to_mermaid(),
            diagram: d,
            ..Default::default()
        });
        let rule = rules_of("no-new-attempt-while-one-is-unfinished")[0];
        let (md, html) = r.pages();
        let sim = &html[html.find("id=\"simulation\"").unwrap()..];
        assert!(sim.contains("<svg") && sim.contains(&format!("data-rule=\"{rule}\"")));
        let sim = &md[md.find("## Simulation").unwrap()..];
        assert!(
            sim.contains("```mermaid\nsequenceDiagram") && sim.contains(rule),
            "{sim}"
        );
    }

    /// The exit code is read from what failed or was not judged: a reference
    /// configuration of the zoo that did not complete makes the run not judged (3), one
    /// that a property caught makes it fail (1), and each is listed with its command.
    #[test]
    fn the_exit_code_follows_the_problems_listed() {
        use payhub_properties::zoo::ReferenceRow;
        let with_reference = |caught: bool, complete: bool| {
            let zoo = ZooReport {
                matrix: KillMatrix {
                    mutants: Vec::new(),
                    references: vec![ReferenceRow {
                        name: "reference".into(),
                        method: "exhaustive".into(),
                        caught,
                        complete,
                        property: None,
                        detail: None,
                        tape: Vec::new(),
                        seconds: 0.0,
                        states_or_seeds: 1,
                        tried: Vec::new(),
                    }],
                    killed: 0,
                    total: 0,
                    median_seconds: 0.0,
                    max_seconds: 0.0,
                    seconds: 0.0,
                    threads: 1,
                    incomplete: None,
                },
                example: None,
            };
            let r = report_of(Vec::new(), Some(zoo));
            (r.exit_code_value(), r.verdict, r.problems.len())
        };
        assert_eq!(with_reference(false, true), (0, "all hold", 0));
        assert_eq!(
            with_reference(false, false),
            (3, "not judged (incomplete)", 1)
        );
        assert_eq!(with_reference(true, true), (1, "FAILED", 1));
    }

    #[test]
    fn a_passing_report_puts_its_verdict_and_header_first() {
        let md = report(Vec::new()).pages().0;
        let screen: Vec<&str> = md.lines().take(20).collect();
        let screen = screen.join("\n");
        for needle in ["all hold", "0.1.0", "abc1234", "2025-12-01", "2 cores"] {
            assert!(screen.contains(needle), "{needle} not in:\n{screen}");
        }
        assert!(!md.contains("## What failed"));
        // The page's own markup is markup: nothing of it escaped as text.
        assert!(md.contains("Each reason in full: `report.html`"), "{md}");
    }
}
