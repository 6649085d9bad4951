//! `conform --format html`: one self-contained page: the verdict and what was checked,
//! each violation drawn as inline SVG ([`super::report::diagram`]) with the round no
//! model state explains marked, the cases not judged, then the registry's verdicts.
//! With `--kill-matrix`, the matrix, each mutant found drawn.

use super::matrix::Row;
use super::registry::{CaseWitness, Judges, PropertyRow, Registry};
use super::report::{Finding, Report, diagram, messages};
use crate::outcome::html::{self as page, Tone, escape};
use payhub_properties::verdict::Status;
use payhub_sim::diagram::Diagram;
use std::fmt::Write as _;

/// What a conform violation violates: the target's answers are the model's.
pub const PROPERTY: &str = "target-answers-as-the-model-allows";

/// The page of a sweep.
pub fn page(r: &Report) -> String {
    let mut s = page::head(&format!("payhub-verify conform: {}", r.verdict()));
    let lines = vec![
        format!(
            "{} cases ({} requests) against <code>{}</code> [{}] in {:.1} s, {:.1} cases/s · exit {}",
            r.cases_run,
            r.requests,
            escape(&r.target),
            escape(&r.profile),
            r.elapsed_s,
            r.cases_per_s,
            r.exit_code()
        ),
        format!(
            "seeds {}{}",
            escape(&r.seeds),
            if r.proxy_faults {
                ", proxy faults on"
            } else {
                ""
            }
        ),
    ];
    s.push_str(&page::banner(
        Tone::of_exit(r.exit_code()),
        &format!("conform: {}", r.verdict()),
        &lines,
    ));
    let _ = write!(
        s,
        "<h2 id=\"checked\">What was checked</h2><table>\
         <tr><th>target</th><td><code>{}</code></td></tr><tr><th>profile</th><td>{}</td></tr>\
         <tr><th>seeds</th><td>{}</td></tr><tr><th>proxy faults</th><td>{}</td></tr>\
         <tr><th>cases</th><td class=\"n\">{} ({} requests)</td></tr>\
         <tr><th>violations</th><td class=\"n\">{}</td></tr><tr><th>incomplete</th><td class=\"n\">{}</td></tr>\
         <tr><th>seeds not run</th><td class=\"n\">{}</td></tr>\
         <tr><th>seconds</th><td class=\"n\">{:.2} ({:.1} cases/s)</td></tr></table>",
        escape(&r.target),
        escape(&r.profile),
        escape(&r.seeds),
        if r.proxy_faults { "on" } else { "off" },
        r.cases_run,
        r.requests,
        r.violations.len(),
        r.incomplete.len(),
        r.not_run,
        r.elapsed_s,
        r.cases_per_s
    );
    if !r.violations.is_empty() {
        s.push_str(&page::violations_heading(r.violations.len()));
    }
    for (n, f) in r.violations.iter().enumerate() {
        violation(&mut s, f, n);
    }
    rest(&mut s, r);
    registry(&mut s, &r.registry);
    s.push_str(page::END);
    s
}

/// The registry's verdicts: the summary, each violation with its witness exchanges, then
/// a table of the properties judging the target.
fn registry(s: &mut String, g: &Registry) {
    let _ = write!(
        s,
        "<h2 id=\"registry\">The registry over the recorded exchanges</h2><p>{}</p>",
        escape(&g.summary())
    );
    for why in &g.unreadable_listed {
        let _ = write!(s, "<p class=\"muted\">unreadable: {}</p>", escape(why));
    }
    for (n, row) in g.violated().into_iter().enumerate() {
        let Some(w) = &row.witness else { continue };
        let draw = || witness_diagram(row, w);
        let v = page::Violation {
            property: row.name,
            context: escape(&format!(
                "seed {}, violated in {} cases",
                w.seed, row.cases.violated
            )),
            rules: &row.rules,
            detail: &w.detail,
            drawing: Some(&draw),
            after: format!("<pre>{}</pre>", escape(&w.exchanges.join("\n"))),
        };
        s.push_str(&v.html(n));
    }
    let rows: Vec<page::PropertyRow> = g
        .properties
        .iter()
        .filter(|r| r.judges == Judges::Target)
        .map(|r| page::PropertyRow {
            name: r.name,
            status: r.status.to_string(),
            rules: r.rules.clone(),
            detail: if r.status != Status::CannotJudge {
                format!(
                    "cases: {} held, {} violated, {} not judged",
                    r.cases.holds + r.cases.reached,
                    r.cases.violated,
                    r.cases.cannot_judge
                )
            } else {
                format!("needs {}", r.missing.join("; "))
            },
        })
        .collect();
    s.push_str(&page::properties_table(&rows));
}

/// One violation, the page's `n`-th: the shrunk case drawn, in the contract's notation,
/// and as a script.
fn violation(s: &mut String, f: &Finding, n: usize) {
    let detail = format!(
        "round {}: no model state explains the target's answer; {}",
        f.breaking_round + 1,
        if f.allowed.is_empty() {
            "the model has no answer here at all".to_owned()
        } else {
            format!("the model allows {}", f.allowed.join("; or "))
        }
    );
    let draw = || {
        let mut d = diagram(&f.exchanges, f.breaking_round, &f.allowed);
        d.push_verdict(&page::note(PROPERTY, &f.rules, &detail));
        d
    };
    let v = page::Violation {
        property: PROPERTY,
        context: format!(
            "seed {}, shrunk from {} to {} requests in {} runs, found after {} cases ({:.1} s)",
            f.seed,
            f.requests,
            f.shrunk_requests,
            f.shrink_runs,
            f.detected_after_cases,
            f.detected_after_s
        ),
        rules: &f.rules,
        detail: &detail,
        drawing: Some(&draw),
        after: format!(
            "<p class=\"muted\">Rules: those the model's own run of the case applied (its answers rest on them).</p>\
             <details open><summary>the case in the contract's notation (<code>!!</code> the round no model state explains)</summary><pre>{}</pre></details>\
             <details><summary>what-if script (<code>payhub-verify run</code>)</summary><pre>{}</pre></details>",
            escape(&f.notation()),
            escape(&f.script)
        ),
    };
    s.push_str(&v.html(n));
}

/// The cases not judged: the oracle's bounds, the seeds not reached.
fn rest(s: &mut String, r: &Report) {
    if r.incomplete.is_empty() && r.not_run == 0 {
        return;
    }
    s.push_str("<h2 id=\"not-judged\">Not judged</h2>");
    if !r.incomplete.is_empty() {
        s.push_str("<table><tr><th>seed</th><th>why the oracle could not finish</th></tr>");
        for (seed, why) in &r.incomplete {
            let _ = write!(
                s,
                "<tr data-status=\"incomplete\"><td class=\"n\">{seed}</td><td>{}</td></tr>",
                escape(why)
            );
        }
        s.push_str("</table>");
    }
    if r.not_run > 0 {
        let _ = write!(
            s,
            "<p>{} seeds not run{}.</p>",
            r.not_run,
            match &r.continue_with {
                Some(c) => format!("; continue with <code>{}</code>", escape(c)),
                None => " (the sweep stops at its first violation)".to_owned(),
            }
        );
    }
}

/// A registry violation's witness exchanges drawn, every one marked, with the verdict.
fn witness_diagram(row: &PropertyRow, w: &CaseWitness) -> Diagram {
    let mut d = Diagram::default();
    let m = d.participant("M", "conform (merchant)");
    let t = d.participant("T", "target");
    for e in &w.exchanges {
        let exchange = e.split_once("  →  ").unwrap_or((e, ""));
        messages(&mut d, (m, t), exchange, true);
    }
    d.push_verdict(&page::note(row.name, &row.rules, &w.detail));
    d
}

/// The page of `--kill-matrix`: every mutant, found ones drawn.
pub fn matrix(rows: &[Row]) -> String {
    let (found, blind, missed) = super::matrix::tally(rows);
    let verdict = format!(
        "conform kill matrix: {found} of {} mutants found, {blind} the wire cannot see, {missed} missed",
        rows.len()
    );
    let mut s = page::head(&format!("payhub-verify {verdict}"));
    s.push_str(&page::banner(
        if missed > 0 { Tone::Fail } else { Tone::Ok },
        &verdict,
        &[format!(
            "{:.1} s to detection in all",
            rows.iter()
                .filter_map(|r| r.seconds_to_detection)
                .sum::<f64>()
        )],
    ));
    s.push_str("<table><tr><th>mutant</th><th>over HTTP</th><th>shrunk requests</th><th>seconds to detection</th><th>cases</th><th>setup / reason</th></tr>");
    for r in rows {
        let status = if r.found {
            "<span class=\"good\">found</span>"
        } else if r.reason.is_some() {
            "blind"
        } else {
            "<span class=\"bad\">MISSED</span>"
        };
        let _ = write!(
            s,
            "<tr data-mutant=\"{}\"><td><code>{}</code></td><td>{status}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            escape(&r.mutant),
            escape(&r.mutant),
            r.shrunk_requests.map(|n| n.to_string()).unwrap_or_default(),
            r.seconds_to_detection
                .map(|t| format!("{t:.1}"))
                .unwrap_or_default(),
            r.cases,
            escape(r.setup.as_deref().or(r.reason.as_deref()).unwrap_or(""))
        );
    }
    s.push_str("</table>");
    let drawn: Vec<&Row> = rows.iter().filter(|r| r.finding.is_some()).collect();
    if !drawn.is_empty() {
        s.push_str("<h2 id=\"violations\">What conform found</h2>");
    }
    for (n, r) in drawn.into_iter().enumerate() {
        if let Some(f) = &r.finding {
            let _ = write!(s, "<h3>mutant <code>{}</code></h3>", escape(&r.mutant));
            violation(&mut s, f, n);
        }
    }
    s.push_str(page::END);
    s
}
