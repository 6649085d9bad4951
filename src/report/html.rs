//! The report as one self-contained HTML page: the verdict, what was checked and how
//! long each part took on the first screen; then every violation with its drawn
//! counterexample, the contract's findings with their scripts' drawings, the scripts,
//! the bug zoo's kill matrix (one drawn counterexample per mutant, collapsed) and the
//! rule coverage. No script, no external stylesheet, no network at view time: the
//! drawings are inline SVG ([`payhub_sim::diagram`]).

use super::{Report, ScenarioResult};
use crate::outcome::html::{self, escape, rules_cell};
use payhub_properties::checker::CheckStatus;
use payhub_sim::Trace;
use std::fmt::Write as _;

/// A counterexample drawn: the trace, and its verdict as the closing note.
fn figure(trace: &Trace, note: &str) -> String {
    crate::outcome::html::figure(&trace.to_diagram(Some(note), |_| false))
}

impl Report {
    /// The whole page.
    pub fn html(&self) -> String {
        let mut s = String::with_capacity(1 << 20);
        s.push_str(&crate::outcome::html::head(&format!(
            "payhub-verify: {}",
            self.verdict
        )));
        self.first_screen(&mut s);
        self.violations_html(&mut s);
        self.findings_html(&mut s);
        super::readings::html(&self.readings, &mut s);
        self.scenarios_html(&mut s);
        self.zoo_html(&mut s);
        self.edges_html(&mut s);
        self.coverage_html(&mut s);
        s.push_str(crate::outcome::html::END);
        s
    }

    /// The verdict, what failed with how to reproduce it, and what was checked with the
    /// time each part took.
    fn first_screen(&self, s: &mut String) {
        let class = match self.exit_code_value() {
            0 => "ok",
            1 => "fail",
            _ => "open",
        };
        let h = &self.header;
        let _ = write!(
            s,
            "<section class=\"banner {class}\" id=\"verdict\"><h1>payhub-verify: {}</h1>\
             <p>{:.1} s · payhub-verify {} · commit <code>{}</code> · {} · {} cores<br>\
             {}<br>reproduce: <code>{}</code></p>",
            escape(self.verdict),
            self.seconds,
            escape(h.version),
            escape(&h.commit),
            escape(&h.date),
            h.cores,
            crate::outcome::html::contract_line(),
            escape(&h.command)
        );
        if let Some(m) = self.planted {
            let _ = write!(
                s,
                "<p>Planted bug: mutant <code>{}</code> in every preset; the simulation, chaos, scripts and bug zoo were not run.</p>",
                escape(m)
            );
        }
        if let Some(why) = &self.interrupted {
            let _ = write!(s, "<p>Not judged: {}.</p>", escape(why));
        }
        let problems = self.problems();
        if !problems.is_empty() {
            let _ = write!(
                s,
                "<p><b>{} {} failed or not judged:</b></p><ul>",
                problems.len(),
                if problems.len() == 1 {
                    "thing"
                } else {
                    "things"
                }
            );
            for p in &problems {
                let _ = write!(
                    s,
                    "<li>{}<br>reproduce: <code>{}</code></li>",
                    escape(&p.what),
                    escape(&p.reproduce)
                );
            }
            s.push_str("</ul>");
        }
        s.push_str("</section>");
        s.push_str(
            "<h2 id=\"checked\">What was checked</h2><table><tr><th>part</th><th>what</th><th>result</th><th>seconds</th></tr>",
        );
        let complete = self.presets.iter().filter(|p| p.complete).count();
        let states: usize = self.presets.iter().map(|p| p.unique_states).sum();
        let preset_seconds: f64 = self.presets.iter().map(|p| p.seconds).sum();
        let failed: Vec<&str> = self
            .presets
            .iter()
            .filter(|p| p.complete && !p.passed())
            .map(|p| p.name)
            .collect();
        let presets_result = if !failed.is_empty() {
            format!(
                "<span class=\"bad\">FAILED: {}</span>",
                escape(&failed.join(", "))
            )
        } else if complete < self.presets.len() {
            format!("not judged: {} incomplete", self.presets.len() - complete)
        } else {
            "<span class=\"good\">all hold, all reached</span>".to_owned()
        };
        let phase = |name: &str| {
            self.phases
                .iter()
                .find(|p| p.name == name && p.ran)
                .map(|p| p.seconds)
        };
        let row = |s: &mut String, part: &str, what: String, result: String, secs: Option<f64>| {
            let _ = write!(
                s,
                "<tr><td>{part}</td><td>{what}</td><td>{result}</td><td class=\"n\">{}</td></tr>",
                secs.map(|x| format!("{x:.2}")).unwrap_or_default()
            );
        };
        row(
            s,
            "exhaustive presets",
            format!(
                "{} presets ({complete} complete), {states} unique states; {}",
                self.presets.len(),
                self.search
            ),
            presets_result,
            phase("presets").or(Some(preset_seconds)),
        );
        let sim = &self.simulation;
        row(
            s,
            "simulation",
            format!(
                "{} seeds of the reference client, {} steps, healed 25 simulated hours each",
                sim.seeds, sim.steps
            ),
            if sim.incomplete.is_some() {
                "not judged (incomplete)".to_owned()
            } else if sim.violations + sim.liveness_failures > 0 {
                format!(
                    "<span class=\"bad\">{} violations, {} unresolved</span>",
                    sim.violations, sim.liveness_failures
                )
            } else if sim.seeds == 0 {
                "not run".to_owned()
            } else {
                "<span class=\"good\">0 violations</span>".to_owned()
            },
            phase("simulation sweep"),
        );
        row(
            s,
            "chaos",
            format!(
                "{} seeds of adversarial requests, {} steps",
                self.chaos.seeds, self.chaos.steps
            ),
            if self.chaos.seeds == 0 {
                "not run".to_owned()
            } else if self.chaos.violations > 0 {
                format!(
                    "<span class=\"bad\">{} violations</span>",
                    self.chaos.violations
                )
            } else {
                "<span class=\"good\">0 violations</span>".to_owned()
            },
            phase("chaos"),
        );
        let passed = self.scenarios.iter().filter(|x| x.passed).count();
        row(
            s,
            "scenarios and findings scripts",
            format!("{} scripts", self.scenarios.len()),
            if self.scenarios.is_empty() {
                "not run".to_owned()
            } else if passed == self.scenarios.len() {
                format!(
                    "<span class=\"good\">{passed} of {} pass</span>",
                    self.scenarios.len()
                )
            } else {
                format!(
                    "<span class=\"bad\">{passed} of {} pass</span>",
                    self.scenarios.len()
                )
            },
            phase("scripts"),
        );
        if let Some(zoo) = &self.kill_matrix {
            let m = &zoo.matrix;
            row(
                s,
                "bug zoo",
                format!("{} planted bugs", m.total),
                if m.incomplete.is_some() {
                    "not judged (incomplete)".to_owned()
                } else if m.killed == m.total && !m.reference_caught() {
                    format!(
                        "<span class=\"good\">{} of {} killed</span>",
                        m.killed, m.total
                    )
                } else {
                    format!(
                        "<span class=\"bad\">{} of {} killed</span>",
                        m.killed, m.total
                    )
                },
                phase("bug zoo").or(Some(m.seconds)),
            );
        }
        match &self.edges {
            Some(e) => {
                let checks_ok = e.checks.iter().filter(|c| c.passed).count();
                let caught = e.defects.iter().filter(|d| d.caught_by.is_some()).count();
                let result = format!(
                    "{checks_ok} of {} checks hold; {caught} of {} planted edge defects caught",
                    e.checks.len(),
                    e.defects.len()
                );
                row(
                    s,
                    "edges",
                    format!(
                        "sandbox sessions, check-log and conform over loopback: {} exchanges, {} conform cases",
                        e.exchanges, e.smoke_cases
                    ),
                    if e.passed() {
                        format!("<span class=\"good\">{result}</span>")
                    } else {
                        format!("<span class=\"bad\">{result}</span>")
                    },
                    phase("edges").or(Some(e.seconds)),
                );
            }
            None => row(
                s,
                "edges",
                "sandbox sessions, check-log and conform over loopback".to_owned(),
                "not run".to_owned(),
                None,
            ),
        }
        let judged = self
            .coverage
            .iter()
            .filter(|c| !c.properties.is_empty())
            .count();
        row(
            s,
            "rules",
            format!(
                "{} in the catalogue, {judged} judged by properties; {} assumptions recorded",
                self.coverage.len(),
                self.findings.len()
            ),
            String::new(),
            None,
        );
        let _ = write!(
            s,
            "<tr><td><b>total</b></td><td></td><td></td><td class=\"n\"><b>{:.2}</b></td></tr></table>",
            self.seconds
        );
    }

    /// Every violated property of a preset, with its counterexample drawn.
    fn violations_html(&self, s: &mut String) {
        let violated: Vec<_> = self
            .presets
            .iter()
            .flat_map(|r| r.properties.iter().map(move |p| (r, p)))
            .filter(|(_, p)| p.status == CheckStatus::Violated)
            .collect();
        if violated.is_empty() {
            return;
        }
        s.push_str(&html::violations_heading(violated.len()));
        for (n, (r, p)) in violated.into_iter().enumerate() {
            let cx = p.counterexample.as_ref();
            let detail = cx.map_or("", |cx| cx.detail.as_str());
            let draw = cx.map(|cx| {
                move || {
                    let note = html::note(p.name, &p.rules, detail);
                    cx.proof.trace.to_diagram(Some(&note), |_| false)
                }
            });
            let v = html::Violation {
                property: p.name,
                context: format!("in {}", escape(r.name)),
                rules: &p.rules,
                detail,
                drawing: draw.as_ref().map(|f| f as &dyn Fn() -> _),
                after: cx.map_or(String::new(), |cx| {
                    format!(
                        "<details><summary>tape ({} choices)</summary><pre>{}</pre></details>",
                        cx.tape.len(),
                        escape(&cx.tape.join("\n"))
                    )
                }),
            };
            s.push_str(&v.html(n));
        }
    }

    /// Where the contract is silent, ambiguous or contradicts itself, with the scripts
    /// that show each reading drawn.
    fn findings_html(&self, s: &mut String) {
        if self.findings.is_empty() {
            return;
        }
        let _ = write!(
            s,
            "<h2 id=\"findings\">Contract findings ({})</h2><p>Where the contract allows several behaviours, is silent, can be read two ways, or contradicts itself, and what was assumed (<code>payhub-verify assumptions</code>).</p>",
            self.findings.len()
        );
        let mut order: Vec<_> = self.findings.iter().collect();
        order.sort_by_key(|f| {
            (
                f.gap != payhub_model::Gap::Contradiction,
                f.scripts.is_empty(),
            )
        });
        for f in order {
            let _ = write!(
                s,
                "<details class=\"finding\" data-finding=\"{}\"><summary><code>{}</code> {}{}</summary><p>{}</p><p>Assumed: {}</p>",
                escape(f.id),
                escape(f.id),
                f.gap.as_str(),
                if f.scripts.is_empty() {
                    String::new()
                } else {
                    format!(" · scripts {}", escape(&f.scripts.join(", ")))
                },
                escape(f.contract),
                escape(f.assumed)
            );
            if let Some(p) = f.parameter {
                let _ = write!(s, "<p>Parameter: <code>{}</code></p>", escape(p));
            }
            if !f.scripts.is_empty() {
                let links: Vec<String> = f
                    .scripts
                    .iter()
                    .map(|n| format!("<a href=\"#script-{0}\"><code>{0}</code></a>", escape(n)))
                    .collect();
                let _ = write!(s, "<p>Drawn in: {}.</p>", links.join(", "));
            }
            s.push_str("</details>");
        }
    }

    fn scenarios_html(&self, s: &mut String) {
        if self.scenarios.is_empty() {
            return;
        }
        let _ = write!(
            s,
            "<h2 id=\"scenarios\">Scenarios and findings scripts</h2><table><tr><th>script</th><th>result</th><th>rules</th></tr>"
        );
        let mut order: Vec<&ScenarioResult> = self.scenarios.iter().collect();
        order.sort_by_key(|sc| sc.passed);
        for sc in order {
            let result = if sc.passed {
                "<span class=\"good\">pass</span>".to_owned()
            } else {
                format!(
                    "<span class=\"bad\">FAILED</span>: {}",
                    escape(&sc.failures.join("; "))
                )
            };
            let _ = write!(
                s,
                "<tr id=\"script-{}\"><td><code>{}</code> {}</td><td>{result}</td><td>{}</td></tr>\
                 <tr class=\"drawing\"><td colspan=\"3\"><details><summary>drawing of <code>{}</code></summary>{}</details></td></tr>",
                escape(&sc.name),
                escape(&sc.name),
                escape(sc.title.as_deref().unwrap_or("")),
                rules_cell(&sc.rules),
                escape(&sc.name),
                scenario_figure(sc)
            );
        }
        s.push_str("</table>");
    }

    /// The kill matrix, survivors first, each killed mutant's counterexample drawn on
    /// demand.
    fn zoo_html(&self, s: &mut String) {
        let Some(zoo) = &self.kill_matrix else { return };
        let m = &zoo.matrix;
        let _ = write!(
            s,
            "<h2 id=\"zoo\">Bug zoo: {} of {} killed</h2><table><tr><th>mutant</th><th>rules</th><th>caught by</th><th>how</th><th>steps</th><th>seconds</th></tr>",
            m.killed, m.total
        );
        let mut rows: Vec<_> = m.mutants.iter().collect();
        rows.sort_by_key(|r| r.killed);
        for r in rows {
            let caught = match (r.killed, r.property) {
                (true, Some(p)) => format!("<code>{}</code>", escape(p)),
                _ => "<span class=\"bad\">SURVIVED</span>".to_owned(),
            };
            let drawing = match &r.counterexample {
                Some(found) => format!(
                    "<tr class=\"drawing\"><td colspan=\"6\"><details><summary>counterexample of <code>{}</code></summary>{}</details></td></tr>",
                    escape(r.name),
                    figure(
                        &found.proof.trace,
                        &crate::outcome::html::note(
                            found.property.name,
                            &found
                                .property
                                .rules
                                .iter()
                                .map(|r| r.id())
                                .collect::<Vec<_>>(),
                            &found.proof.detail
                        )
                    )
                ),
                None => String::new(),
            };
            let _ = write!(
                s,
                "<tr data-mutant=\"{}\"><td><code>{}</code> <span class=\"muted\">{}</span></td><td>{}</td><td>{caught}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.2}</td></tr>{drawing}",
                escape(r.name),
                escape(r.name),
                escape(r.about),
                rules_cell(&r.rules),
                escape(r.method.as_deref().unwrap_or("")),
                r.counterexample_steps
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
                r.seconds
            );
        }
        s.push_str("</table>");
    }

    fn coverage_html(&self, s: &mut String) {
        s.push_str("<h2 id=\"sentences\">Sentences by how they are judged</h2><table><tr><th>judged</th><th>sentences</th><th>what is not judged, or why no property judges it</th></tr>");
        for j in super::Judged::ALL {
            let rows: Vec<&super::CoverageRow> =
                self.coverage.iter().filter(|c| c.judged == j).collect();
            let _ = write!(
                s,
                "<tr><td>{}</td><td class=\"n\">{}</td><td>",
                escape(j.as_str()),
                rows.len()
            );
            for c in &rows {
                if let Some(why) = c.in_part.map(str::to_owned).or_else(|| c.reason.clone()) {
                    let _ = write!(s, "<code>{}</code>: {}<br>", escape(c.id), escape(&why));
                }
            }
            s.push_str("</td></tr>");
        }
        s.push_str("</table>");
        let _ = write!(
            s,
            "<h2 id=\"rules\">Rule coverage</h2><details><summary>{} rules</summary><table><tr><th>rule</th><th>text</th><th>properties</th><th>presets</th><th>scripts</th></tr>",
            self.coverage.len()
        );
        for c in &self.coverage {
            let _ = write!(
                s,
                "<tr><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                escape(c.id),
                escape(c.text),
                c.properties.len(),
                c.presets.len(),
                c.scenarios.len()
            );
        }
        s.push_str("</table></details>");
    }
}

/// A script's run drawn, its violation (expected or not) as the closing note.
fn scenario_figure(sc: &ScenarioResult) -> String {
    format!("<figure>{}</figure>", sc.diagram.to_svg_unstyled())
}
