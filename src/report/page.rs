//! The report's page, built once and drawn as `report.md` (inline Mermaid, for a code
//! host) and `report.html` (inline SVG): the verdict, what failed and how to reproduce it first.

use crate::outcome::doc::{self, Block};
use crate::outcome::html::{Tone, drawn};
use crate::outcome::text::{Text, text};
use crate::verify_cmd::coverage::Judged;
use crate::verify_cmd::readings::ReadingRow;
use crate::verify_cmd::report::Report;
use payhub_properties::checker::CheckStatus;
use payhub_properties::rules_of;

fn h2(id: &'static str, text: impl Into<Text>) -> Block {
    Block::h(2, Some(id), text)
}

fn p(text: impl Into<Text>) -> Block {
    Block::p(text)
}

impl Report {
    /// `report.md` and `report.html`, drawn from one page.
    pub fn pages(&self) -> (String, String) {
        let page = self.page();
        let title = format!("payhub-verify: {}", self.verdict);
        (doc::markdown(&page), doc::html(&title, &page))
    }

    fn page(&self) -> Vec<Block> {
        let h = &self.header;
        let mut first = vec![
            text!("**Verdict: {}** in {:.1} s", self.verdict, self.seconds),
            text!(
                "payhub-verify {}, commit {}, {}",
                h.version,
                h.commit,
                h.date
            ),
            text!("command: `{}` on {} cores", h.command, h.cores),
            text!("reproduce: `{}`", h.command),
        ];
        if let Some(m) = self.planted {
            first.push(text!("planted bug: mutant `{}` in every preset; the simulation, chaos, scripts and bug zoo were not run", m));
        }
        if let Some(why) = &self.interrupted {
            first.push(text!("not judged: {}", why));
        }
        let tone = Tone::of_exit(self.exit_code_value());
        let title = format!("payhub-verify: {}", self.verdict);
        let mut page = vec![Block::Banner(tone, title, first)];
        if !self.problems.is_empty() {
            page.push(h2("failed", "What failed"));
            page.push(Block::List(
                self.problems
                    .iter()
                    .map(|p| text!("{}\nreproduce: `{}`", p.what, p.reproduce))
                    .collect(),
            ));
        }
        page.push(h2("summary", "Summary"));
        page.push(Block::Code(self.summary_text()));
        self.presets_page(&mut page);
        self.simulation_page(&mut page);
        page.extend(readings(&self.readings));
        self.scenarios_page(&mut page);
        self.findings_page(&mut page);
        self.coverage_page(&mut page);
        self.zoo_page(&mut page);
        self.edges_page(&mut page);
        page
    }

    /// A row per preset; every violated property with its counterexample drawn.
    fn presets_page(&self, page: &mut Vec<Block>) {
        let platform: Vec<&str> = payhub_properties::presets::platform_presets()
            .iter()
            .map(|p| p.name)
            .collect();
        page.push(h2("presets", "Exhaustive presets"));
        page.push(p(text!("Searched {}. Client properties (`client-*`) have nothing to judge in a platform preset (an adversarial sender, no client): not applicable there.", self.search)));
        let rows = self.presets.iter().map(|r| {
            let applies = |name: &str| !(platform.contains(&r.name) && name.starts_with("client-"));
            let count = |kind: payhub_properties::Kind, ok: CheckStatus| {
                let of_kind: Vec<_> = r
                    .properties
                    .iter()
                    .filter(|p| p.kind == kind && applies(p.name))
                    .collect();
                let n = of_kind.iter().filter(|p| p.status == ok).count();
                Text::from(format!("{n}/{}", of_kind.len()))
            };
            let result = match (r.complete, r.passed()) {
                (false, _) => text!("not judged (incomplete)"),
                (true, true) => text!("pass"),
                (true, false) => text!("**FAIL**"),
            };
            let na = r.properties.iter().filter(|p| !applies(p.name)).count();
            let n = [r.unique_states, r.total_states, r.max_depth];
            let mut row = vec![text!("`{}`", r.name), result];
            row.extend(n.map(|n| n.to_string().into()));
            row.extend([
                text!("{:.2}", r.seconds),
                count(payhub_properties::Kind::Always, CheckStatus::Holds),
                count(payhub_properties::Kind::Sometimes, CheckStatus::Reached),
                na.to_string().into(),
            ]);
            row
        });
        page.push(Block::table(
            "preset|result|unique states|total states|depth|seconds|always held|sometimes reached|not applicable",
            rows.collect(),
        ));
        let violated = self.presets.iter();
        let violated = violated.flat_map(|r| r.properties.iter().map(move |p| (r, p)));
        let violated: Vec<_> = violated
            .filter(|(_, p)| p.status == CheckStatus::Violated)
            .collect();
        if violated.is_empty() {
            return;
        }
        page.push(h2("violations", text!("Violations ({})", violated.len())));
        for (r, p) in violated {
            let cx = p.counterexample.as_ref();
            let detail = cx.map_or("", |cx| cx.detail.as_str());
            page.push(Block::Violation {
                property: p.name.to_owned(),
                context: text!("in `{}`", r.name),
                rules: p.rules.clone(),
                detail: detail.to_owned(),
                after: cx.map_or(Vec::new(), |cx| {
                    let n = cx.tape.len();
                    let summary = text!("The tape ({} choices), as replay --tape takes it", n);
                    let draw = || drawn(&cx.proof.trace, p.name, &p.rules, detail);
                    vec![
                        doc::drawing(page, draw),
                        Block::folded(summary, cx.tape.join("\n")),
                    ]
                }),
            });
        }
    }

    fn simulation_page(&self, page: &mut Vec<Block>) {
        page.push(h2("simulation", "Simulation"));
        if !self.ran("simulation sweep") && !self.ran("chaos") {
            let not_run = "Not run: nothing is claimed for the simulation or chaos sweeps.";
            return page.push(p(not_run));
        }
        let (sim, chaos) = (&self.simulation, &self.chaos);
        page.push(p(text!(
            "{} seeds of the reference client (two servers sharing a database, one live server; swarm fault profiles), {} steps, {} violations; each run healed for 25 simulated hours, {} left a submission unresolved. Chaos: {} seeds of adversarial requests, {} steps, {} violations. Choice and answer counts are in `report.json`.",
            sim.seeds, sim.steps, sim.violations, sim.liveness_failures, chaos.seeds, chaos.steps, chaos.violations
        )));
        if let Some(cx) = &sim.counterexample {
            let rules = rules_of(&cx.property);
            let drawing = doc::drawing(page, || cx.diagram.clone());
            page.push(Block::Violation {
                property: cx.property.clone(),
                context: text!("in seed {}, the simulation's counterexample", cx.seed),
                rules,
                detail: cx.detail.clone(),
                after: vec![
                    drawing,
                    p(text!("Replay: `{}`", cx.replay)),
                    Block::folded("The trace as text", cx.trace.clone()),
                ],
            });
        }
    }

    /// The scripts: in Markdown the names, failed first; in HTML a row per script with
    /// its run drawn (each drawing's Mermaid document is in `diagrams/`).
    fn scenarios_page(&self, page: &mut Vec<Block>) {
        page.push(h2("scenarios", "Scenarios and findings scripts"));
        if !self.ran("scripts") {
            return page.push(p("Not run: nothing is claimed for the scripts."));
        }
        let passed = self.scenarios.iter().filter(|sc| sc.passed).count();
        page.push(p(text!(
            "{} of {} scripts pass. Each script's trace and sequence diagram: `payhub-verify scenario NAME [--format mermaid]`; each drawing's Mermaid document is in `diagrams/`.",
            passed,
            self.scenarios.len()
        )));
        let names = |pass: bool| {
            let names = self.scenarios.iter().filter(|sc| sc.passed == pass);
            Text::join(names.map(|sc| text!("`{}`", sc.name)), ", ")
        };
        let mut short = Vec::new();
        if passed < self.scenarios.len() {
            short.push(p(text!("**FAILED:** ") + names(false) + "."));
        }
        if passed > 0 {
            short.push(p(text!("Passed: ") + names(true) + "."));
        }
        page.push(Block::Md(short));
        let mut order: Vec<_> = self.scenarios.iter().collect();
        order.sort_by_key(|sc| sc.passed);
        let rows = order.iter().map(|sc| {
            let result = if sc.passed {
                text!("pass")
            } else {
                text!("**FAILED**: {}", sc.failures.join("; "))
            };
            let title = sc.title.as_deref().unwrap_or("");
            vec![
                text!("`{}` {}", sc.name, title),
                result,
                sc.rules.join(", ").into(),
            ]
        });
        let mut full = vec![Block::table("script|result|rules", rows.collect())];
        full.extend(order.iter().map(|sc| {
            let summary = text!("drawing of {}", sc.name);
            Block::Details(summary, vec![Block::Figure(sc.diagram.clone())])
        }));
        page.push(Block::Html(full));
    }

    /// Where the contract is silent, ambiguous or contradicts itself: the contradictions
    /// first with their texts whole, then a row per finding; every finding's texts in HTML.
    fn findings_page(&self, page: &mut Vec<Block>) {
        use payhub_model::Gap;
        page.push(h2(
            "findings",
            text!("Contract findings ({})", self.findings.len()),
        ));
        page.push(p(text!("Where the contract allows several behaviours (the checkers explore all), is silent, can be read two ways, or contradicts itself (both readings explored; listed first, with both texts), and what the harness assumed (`model/ASSUMPTIONS.md`, `payhub-verify assumptions`). Change an assumption through its parameter or branch, not the code. Every finding's texts are in `report.html` (and `report.json`).")));
        let mut order: Vec<_> = self.findings.iter().collect();
        order.sort_by_key(|f| (f.gap != Gap::Contradiction, f.scripts.is_empty()));
        for f in order.iter().filter(|f| f.gap == Gap::Contradiction) {
            page.push(p(text!(
                "**Contradiction `{}`.** {}\n\nWhat the harness does: {} (in full: `payhub-verify assumptions`, report.html) Scripts: {}.",
                f.id,
                f.contract,
                f.assumed.find(". ").map_or(f.assumed, |i| &f.assumed[..=i]),
                f.scripts.join(", ")
            )));
        }
        let rows = order.iter().map(|f| {
            let runs = (f.simulation_runs > 0).then(|| f.simulation_runs.to_string().into());
            vec![
                text!("`{}`", f.id),
                f.gap.as_str().into(),
                f.parameter.map(|p| text!("`{}`", p)).unwrap_or_default(),
                f.scripts.join(", ").into(),
                runs.unwrap_or_default(),
            ]
        });
        page.push(Block::table(
            "finding|kind|parameter|scripts|simulation runs",
            rows.collect(),
        ));
        let texts = order
            .iter()
            .map(|f| text!("`{}`: {}\nAssumed: {}", f.id, f.contract, f.assumed));
        page.push(Block::Html(vec![Block::List(texts.collect())]));
    }

    /// The sentences by how they are judged (in Markdown each reason's first clause),
    /// then a row per rule with what exercised it.
    fn coverage_page(&self, page: &mut Vec<Block>) {
        page.push(h2("sentences", "Sentences by how they are judged"));
        let table = |whole: bool| {
            let rows = Judged::ALL.iter().map(|&j| {
                let rows: Vec<_> = self.coverage.iter().filter(|c| c.judged == j).collect();
                let which: Vec<Text> = rows
                    .iter()
                    .filter(|_| whole || j != Judged::Whole)
                    .map(|c| match (whole, c.in_part, &c.reason) {
                        (true, Some(why), _) => text!("`{}`: {}", c.id, why),
                        (true, None, Some(why)) => text!("`{}`: {}", c.id, why),
                        (false, _, Some(why)) => {
                            text!("`{}`: {}", c.id, why.split("; ").next().unwrap_or(why))
                        }
                        _ => text!("`{}`", c.id),
                    })
                    .filter(|w| !whole || w.markdown().contains(':'))
                    .collect();
                vec![
                    j.as_str().into(),
                    rows.len().to_string().into(),
                    Text::join(which, "\n"),
                ]
            });
            let head = "judged|sentences|what is not judged, or why no property judges it";
            Block::table(head, rows.collect())
        };
        page.push(Block::Md(vec![
            p(text!("Each reason in full: `report.html`, `report.json`, `payhub-verify rules --coverage`.")),
            table(false),
        ]));
        page.push(Block::Html(vec![table(true)]));
        let judged = self
            .coverage
            .iter()
            .filter(|c| !c.properties.is_empty())
            .count();
        page.push(h2("rules", "Rule coverage"));
        page.push(p(text!(
            "{} rules: {} judged by properties (how many properties judge each, and how many presets and scripts exercised it, that is decided something, reached a witness of it or, for an invariant no single answer decides, were built to exercise it and judged it in every state; which ones: `report.json`), the others checked by unit tests and scenarios only.",
            self.coverage.len(),
            judged
        )));
        // Markdown: a row per rule a property judges, the others by who keeps them; HTML:
        // a row per rule with its sentence.
        let rows = self.coverage.iter().map(|c| {
            let n = [c.properties.len(), c.presets.len(), c.scenarios.len()];
            let mut row = vec![text!("`{}`", c.id)];
            row.extend(n.map(|n| n.to_string().into()));
            row.push(format!("{} ({:?})", c.text, c.enforcer).into());
            (!c.properties.is_empty(), row)
        });
        let head = "rule|properties|presets|scripts|sentence (who keeps it)";
        page.push(Block::Table(head, 4, rows.collect()));
        let mut by_enforcer: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
        for c in self.coverage.iter().filter(|c| c.properties.is_empty()) {
            by_enforcer
                .entry(format!("{:?}", c.enforcer))
                .or_default()
                .push(c.id);
        }
        let short = by_enforcer.into_iter().map(|(by, ids)| {
            let ids = Text::join(ids.iter().map(|id| text!("`{}`", id)), ", ");
            p(text!("Checked by tests only ({}): ", by) + ids + ".")
        });
        page.push(Block::Md(short.collect()));
    }

    /// The kill matrix, survivors first (in HTML with what each bug is, its time and its
    /// counterexample drawn); one killed mutant's counterexample inline in Markdown.
    fn zoo_page(&self, page: &mut Vec<Block>) {
        let Some(zoo) = &self.kill_matrix else { return };
        let m = &zoo.matrix;
        page.push(h2(
            "zoo",
            text!("Bug zoo: {} of {} killed", m.killed, m.total),
        ));
        page.push(p(text!("Each row: the rules the planted bug breaks, the property that killed it, how, and the counterexample's length in choices. A `zoo-*` preset is a small world of the bug zoo's own, not one `check --preset` knows: `payhub-verify mutants --show NAME` shows that mutant's counterexample and a tape `replay --tape` accepts.")));
        let mut order: Vec<_> = m.mutants.iter().collect();
        order.sort_by_key(|r| r.killed);
        let rows = order.iter().map(|r| {
            let caught = match (r.killed, r.property) {
                (true, Some(p)) => text!("`{}`", p),
                _ => text!("**SURVIVED**"),
            };
            let method = r.method.as_deref().map(crate::mutants_cmd::method_name);
            let steps = r.counterexample_steps.map(|n| n.to_string());
            let row = vec![
                text!("`{}`", r.name),
                r.rules.join(", ").into(),
                caught,
                method.unwrap_or_else(|| "—".to_owned()).into(),
                steps.unwrap_or_else(|| "—".to_owned()).into(),
                r.about.into(),
                text!("{:.2}", r.seconds),
            ];
            (true, row)
        });
        let head = "mutant|rules|killed by|method|steps|the bug|seconds";
        page.push(Block::Table(head, 5, rows.collect()));
        if let Some(example) = &zoo.example {
            page.push(Block::Md(vec![
                p(text!("One killed mutant's counterexample, `{}` (also `diagrams/mutant-{}.mmd`; any mutant's: `payhub-verify mutants --show NAME`):", example.name, example.name)),
                Block::Mermaid(example.mermaid.clone()),
            ]));
        }
        let drawings = order.iter().filter_map(|r| {
            let (found, summary) = (
                r.counterexample.as_ref()?,
                text!("counterexample of {}", r.name),
            );
            let rules: Vec<&str> = found.property.rules.iter().map(|r| r.id()).collect();
            let (proof, name) = (&found.proof, found.property.name);
            let drawing = drawn(&proof.trace, name, &rules, &proof.detail);
            Some(Block::Details(summary, vec![Block::Figure(drawing)]))
        });
        page.push(Block::Html(drawings.collect()));
    }

    /// The edges' checks over each session and the edge zoo's kill matrix: in Markdown
    /// what failed, in HTML every row.
    fn edges_page(&self, page: &mut Vec<Block>) {
        let Some(e) = &self.edges else { return };
        let passed = e.checks.iter().filter(|c| c.passed).count();
        let caught = e.defects.iter().filter(|d| d.caught_by.is_some()).count();
        page.push(h2(
            "edges",
            text!(
                "Edges: {} of {} checks pass; edge zoo {} of {} caught",
                passed,
                e.checks.len(),
                caught,
                e.defects.len()
            ),
        ));
        page.push(p(text!("The sandbox, check-log, judge and conform over the reference edges ({} exchanges, {} conform cases, {:.1} s); each planted edge defect with a shrunk witness. Every check and defect: `report.html`, `edges` in `report.json`.", e.exchanges, e.smoke_cases, e.seconds)));
        let check = |c: &&crate::edges::CheckRow| {
            let verdict = if c.passed {
                text!("passes")
            } else {
                text!("**fails** {}", c.detail.as_deref().unwrap_or_default())
            };
            vec![c.session.as_str().into(), text!("`{}`", c.check), verdict]
        };
        let defect = |d: &&crate::edges::zoo::DefectRow| {
            vec![
                text!("`{}` {}", d.name, d.about),
                d.edge.to_string().into(),
                d.caught_by
                    .map_or(text!("**MISSED**"), |c| text!("`{}`", c)),
                d.session.clone().unwrap_or_default().into(),
                text!("{:.2}", d.seconds),
                d.witness_requests
                    .map(|n| n.to_string())
                    .unwrap_or_default()
                    .into(),
                text!(
                    "{}\n{}",
                    d.detail.as_deref().unwrap_or(""),
                    d.witness.as_deref().unwrap_or("")
                ),
            ]
        };
        let checks = e.checks.iter().map(|c| (!c.passed, check(&c)));
        page.push(Block::Table("session|check|verdict", 3, checks.collect()));
        if !e.defects.is_empty() {
            let defects = e
                .defects
                .iter()
                .map(|d| (d.caught_by.is_none(), defect(&d)));
            let head = "defect|edge|caught by|session|seconds|exchanges|witness";
            page.push(Block::Table(head, 7, defects.collect()));
        }
    }
}

/// The section: a row per reading of each contradiction.
pub fn readings(rows: &[ReadingRow]) -> Vec<Block> {
    let rows = rows.iter().map(|r| {
        let reference = if r.reference { " (reference)" } else { "" };
        vec![
            text!("`{}`", r.assumption),
            text!("`{}={}`{}", r.parameter, r.reading, reference),
            text!("`{}`: {}", r.preset, r.checker),
            r.sweep.as_str().into(),
        ]
    });
    vec![
        Block::h(2, Some("readings"), "Contradictions read both ways"),
        Block::p(
            "Where the contract contradicts itself on what a client reads from a round of refusals, each reading runs: in the checker (a preset per reading) and in the simulation sweep (a sweep per reading). The reference client's reading is marked (reference).",
        ),
        Block::table("assumption|reading|checker|sweep", rows.collect()),
    ]
}
