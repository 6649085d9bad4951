//! conform's page, built once and drawn as Markdown or HTML (docs/conform.md): the
//! verdict, each violation drawn ([`super::report::diagram`]) and written out, the
//! cases not judged, the silent points, the registry and the rules; or the kill matrix.

use super::matrix::Row;
use super::registry::{CaseWitness, Judges, PropertyRow, Registry};
use super::report::{diagram, messages};
use super::rule_rows::RuleVerdict;
use super::{Finding, Report};
use crate::outcome::doc::{Block, drawing};
use crate::outcome::html::{self as page, Tone};
use crate::outcome::text::{Text, text};
use payhub_properties::verdict::Status;
use payhub_sim::diagram::Diagram;

/// What a conform violation violates: the target's answers are the model's.
pub const PROPERTY: &str = "target-answers-as-the-model-allows";

/// The page of a sweep, and its title.
pub fn page(r: &Report) -> (Vec<Block>, String) {
    let lines = vec![
        text!(
            "{} cases ({} requests) against `{}` [{}] in {:.1} s, {:.1} cases/s · exit {}",
            r.cases_run,
            r.requests,
            r.target,
            r.profile,
            r.elapsed_s,
            r.cases_per_s,
            r.exit_code()
        ),
        match r.proxy_faults {
            true => text!("seeds {}, proxy faults on", r.seeds),
            false => text!("seeds {}", r.seeds),
        },
    ];
    let title = format!("conform: {}", r.verdict());
    let tone = Tone::of_exit(r.exit_code());
    let mut blocks = vec![Block::Banner(tone, title.clone(), lines)];
    if !r.suppressed.is_empty() {
        let suppressed = r.suppressed.iter().map(|x| x.as_str().into());
        blocks.push(Block::List(suppressed.collect()));
    }
    if !r.violations.is_empty() {
        let heading = format!("Violations ({})", r.violations.len());
        blocks.push(Block::h(2, Some("violations"), heading));
    }
    for f in &r.violations {
        blocks.push(violation(f, &blocks));
    }
    rest(&mut blocks, r);
    silent(&mut blocks, &r.readings);
    registry(&mut blocks, &r.registry);
    blocks.push(Block::h(2, Some("rules"), "Rules"));
    let rows = r.rules.iter().map(|x| {
        let verdict = match x.verdict {
            RuleVerdict::Verified => text!("verified"),
            RuleVerdict::Violated => text!("**VIOLATED**"),
            RuleVerdict::Blind => text!("blind"),
            RuleVerdict::NotJudgedOverTheWire => text!("oracle only"),
        };
        vec![
            x.rule.into(),
            verdict,
            x.cases.to_string().into(),
            x.properties.join(", ").into(),
            x.why.clone().unwrap_or_default().into(),
        ]
    });
    blocks.push(Block::table(
        "rule|verdict|cases|properties|why blind",
        rows.collect(),
    ));
    (blocks, format!("payhub-verify {title}"))
}

/// Per silent point, the reading the target took.
pub(super) fn silent(blocks: &mut Vec<Block>, rows: &[super::silent::PointRow]) {
    blocks.push(Block::h(2, Some("silent"), "Silent points"));
    let rows = rows.iter().map(|row| {
        let first: Vec<String> = row
            .shown
            .iter()
            .map(|x| format!("{}: seed {}, {}", x.name, x.seed, x.first))
            .collect();
        let taken = super::silent::taken(row);
        vec![
            text!("`{}`", row.name),
            text!("`{}`", row.assumption),
            text!("`{}`", row.model),
            match row.pinned {
                Some(p) => text!("{} (pinned `{}`)", taken, p),
                None => taken.into(),
            },
            first.join("\n").into(),
        ]
    });
    blocks.push(Block::table(
        "point|assumption|model's reading|reading taken|first shown",
        rows.collect(),
    ));
}

/// The registry's verdicts: the summary, each violation with its witness exchanges, then
/// a table of the properties judging the target.
fn registry(blocks: &mut Vec<Block>, g: &Registry) {
    let heading = "The registry over the recorded exchanges";
    blocks.push(Block::h(2, Some("registry"), heading));
    blocks.push(Block::p(g.summary()));
    let unreadable = g.unreadable_listed.iter();
    blocks.extend(unreadable.map(|why| Block::p(format!("unreadable: {why}"))));
    for row in g.violated() {
        let Some(w) = &row.witness else { continue };
        blocks.push(Block::Violation {
            property: row.name.to_owned(),
            context: format!(
                "seed {}, violated in {} of {} cases",
                w.seed,
                row.cases.violated,
                row.cases.total()
            )
            .into(),
            rules: row.rules.clone(),
            detail: w.detail.clone(),
            after: vec![
                drawing(blocks, || witness_diagram(row, w)),
                Block::Code(w.exchanges.join("\n")),
            ],
        });
    }
    let rows = g
        .properties
        .iter()
        .filter(|r| r.judges == Judges::Target)
        .map(|r| page::PropertyRow {
            name: r.name.to_owned(),
            status: r.status,
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
        });
    blocks.push(crate::outcome::doc::properties(&rows.collect::<Vec<_>>()));
}

/// One violation: the shrunk case drawn, in the contract's notation, and as a script.
fn violation(f: &Finding, page: &[Block]) -> Block {
    let detail = format!(
        "round {}: no model state explains the target's answer; {}",
        f.breaking_round + 1,
        if f.allowed.is_empty() {
            "the model has no answer here at all".to_owned()
        } else {
            format!("the model allows {}", f.allowed.join("; or "))
        }
    );
    let drawing = drawing(page, || {
        let mut d = diagram(&f.exchanges, f.breaking_round, &f.allowed);
        d.push_verdict(&page::note(PROPERTY, &f.rules, &detail));
        d
    });
    Block::Violation {
        property: PROPERTY.to_owned(),
        context: format!(
            "seed {}, shrunk from {} to {} requests in {} runs, found after {} cases ({:.1} s)",
            f.seed,
            f.requests,
            f.shrunk_requests,
            f.shrink_runs,
            f.detected_after_cases,
            f.detected_after_s
        )
        .into(),
        rules: f.rules.clone(),
        detail,
        after: vec![
            drawing,
            Block::p(
                "Rules: those by which the model answered the requests no model state explains.",
            ),
            Block::p(text!(
                "The case in the contract's notation (`!!` the answers no model state explains):"
            )),
            Block::Code(f.notation()),
            Block::folded("what-if script (payhub-verify run)", f.script.clone()),
        ],
    }
}

/// The cases not judged: the oracle's bounds, the seeds not reached.
fn rest(blocks: &mut Vec<Block>, r: &Report) {
    if r.incomplete.is_empty() && r.not_run == 0 {
        return;
    }
    blocks.push(Block::h(2, Some("not-judged"), "Not judged"));
    if !r.incomplete.is_empty() {
        let rows = r
            .incomplete
            .iter()
            .map(|(seed, why)| vec![seed.to_string().into(), why.as_str().into()]);
        blocks.push(Block::table(
            "seed|why the oracle could not finish",
            rows.collect(),
        ));
    }
    if r.not_run > 0 {
        blocks.push(Block::Para(match &r.continue_with {
            Some(c) => text!("{} seeds not run; continue with `{}`.", r.not_run, c),
            None => format!(
                "{} seeds not run (the sweep stops at its first violation).",
                r.not_run
            )
            .into(),
        }));
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

/// The page of `--kill-matrix`: every mutant, found ones drawn; and its title.
pub fn matrix(rows: &[Row]) -> (Vec<Block>, String) {
    let (found, blind, missed) = super::matrix::tally(rows);
    let verdict = format!(
        "conform kill matrix: {found} of {} mutants found, {blind} the wire cannot see, {missed} missed",
        rows.len()
    );
    let seconds: f64 = rows.iter().filter_map(|r| r.seconds_to_detection).sum();
    let table = rows.iter().map(|r| {
        let status = if r.found {
            text!("found")
        } else if r.reason.is_some() {
            text!("blind")
        } else {
            text!("**MISSED**")
        };
        let cells = [
            r.rules.join(", "),
            r.shrunk_requests.map(|n| n.to_string()).unwrap_or_default(),
            r.seconds_to_detection
                .map(|t| format!("{t:.1} s"))
                .unwrap_or_default(),
            r.cases.to_string(),
            r.setup.clone().or(r.reason.clone()).unwrap_or_default(),
        ];
        let mut row = vec![text!("`{}`", r.mutant), status];
        row.extend(cells.map(Text::from));
        row
    });
    let mut blocks = vec![
        Block::Banner(
            if missed > 0 { Tone::Fail } else { Tone::Ok },
            verdict.clone(),
            vec![format!("{seconds:.1} s to detection in all").into()],
        ),
        Block::table(
            "mutant|over HTTP|rules|shrunk requests|time to detection|cases|setup / reason",
            table.collect(),
        ),
    ];
    if rows.iter().any(|r| r.finding.is_some()) {
        blocks.push(Block::h(2, Some("violations"), "What conform found"));
    }
    for (r, f) in rows.iter().filter_map(|r| Some((r, r.finding.as_ref()?))) {
        blocks.push(Block::h(3, None, text!("mutant `{}`", r.mutant)));
        blocks.push(violation(f, &blocks));
    }
    (blocks, format!("payhub-verify {verdict}"))
}
