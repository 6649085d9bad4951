//! The outcome document: what a command found, in one typed shape. A command builds an
//! [`Outcome`] from its own results (the presets it checked, the sweep it ran, the files
//! it judged, the cases it sent) and hands it to a renderer; no renderer knows a command.
//! JUnit is rendered from it for every command; the Markdown and HTML pages are built
//! once per command as a [`doc`] page and drawn by one renderer per format; text and
//! JSON are the command's own. The contract judged ([`payhub_model::Contract`]: title,
//! version, date) is the same for every outcome, and every renderer names it.
//!
//! An outcome is parts (a preset, the sweep, a file, the zoo), each holding items (a
//! property, a script, a mutant, a case). An item's name is the same in every run; what
//! the run found (counts, seeds, witnesses) is only in its result and output, so a CI
//! system keeps a history per item.

pub mod doc;
pub mod html;
pub mod junit;
pub mod text;

use doc::Block;
use html::PropertyRow;
use payhub_properties::verdict::{Status, Verdict};
use text::Text;

/// What a command found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The command that produced it, without its arguments (`payhub-verify check`), so
    /// that two runs of it carry the same name.
    pub command: String,
    /// The whole command line, as a shell takes it back (secrets hidden): the command
    /// that reproduces it. None where no command line reproduces it (the sandbox's
    /// verdict is of the traffic it was sent, not of how it was started).
    pub command_line: Option<String>,
    /// The commit of the build, where known.
    pub commit: Option<String>,
    pub parts: Vec<Part>,
}

impl Outcome {
    /// The outcome of this process's command.
    pub fn new(command: impl Into<String>, parts: Vec<Part>) -> Outcome {
        Outcome {
            command: command.into(),
            command_line: Some(crate::usage::command_line()),
            commit: crate::header::commit(),
            parts,
        }
    }
}

/// One part of a run: a preset, the simulation sweep, the scenarios, the zoo, a file.
#[derive(Clone, Debug)]
pub struct Part {
    pub name: String,
    pub seconds: Option<f64>,
    pub items: Vec<Item>,
}

impl Part {
    pub fn new(name: impl Into<String>, items: Vec<Item>) -> Part {
        Part {
            name: name.into(),
            seconds: None,
            items,
        }
    }

    /// The part, taking `seconds`.
    pub fn timed(mut self, seconds: f64) -> Part {
        self.seconds = Some(seconds);
        self
    }
}

/// One thing judged: a property, preset, script, mutant or case.
#[derive(Clone, Debug)]
pub struct Item {
    /// The family it belongs to (`check.create-lossy`, `verify.bug-zoo`).
    pub class: String,
    pub name: String,
    pub seconds: Option<f64>,
    pub result: ItemResult,
    /// What it saw, for a passing item too.
    pub output: Option<String>,
    /// The rules it judges.
    pub rules: Vec<&'static str>,
}

impl Item {
    pub fn new(class: impl Into<String>, name: impl Into<String>, result: ItemResult) -> Item {
        Item {
            class: class.into(),
            name: name.into(),
            seconds: None,
            result,
            output: None,
            rules: Vec::new(),
        }
    }

    pub fn with_output(mut self, output: impl Into<String>) -> Item {
        self.output = Some(output.into());
        self
    }

    pub fn with_rules(mut self, rules: &[&'static str]) -> Item {
        self.rules = rules.to_vec();
        self
    }
}

/// What one item found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemResult {
    Passed,
    /// A violation (or a failed scenario, a surviving mutant): `message` is the witness in
    /// one line, `detail` the rest (the counterexample, the command that replays it).
    Failed {
        message: String,
        detail: String,
    },
    /// Not judged: why.
    Skipped(String),
}

impl ItemResult {
    /// A skipped result saying why: `not judged: {why}`.
    pub fn not_judged(why: impl std::fmt::Display) -> ItemResult {
        ItemResult::Skipped(format!("not judged: {why}"))
    }

    /// A failure witnessed by `detail`, its first line the message.
    pub fn witnessed(detail: String) -> ItemResult {
        ItemResult::fail(first_line(&detail), detail)
    }

    /// A failure: `message` in one line, `detail` the rest.
    pub fn fail(message: impl Into<String>, detail: impl Into<String>) -> ItemResult {
        let (message, detail) = (message.into(), detail.into());
        ItemResult::Failed { message, detail }
    }

    /// A failure with no detail beyond its message.
    pub fn failed(message: impl Into<String>) -> ItemResult {
        ItemResult::fail(message, "")
    }
}

/// A value as a command's JSON format prints it: pretty, two spaces an indent.
pub fn json(value: &impl serde::Serialize) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}

/// The first line of a witness, as a failure's message.
pub fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

/// Verdicts over a recorded source (`judge`, `check-log`): an item per property; cannot
/// judge is skipped with the evidence missing. Over a source read only in part
/// (`incomplete`: why), a property that held is not judged: it held over what was read.
pub fn verdicts(class: &str, vs: &[Verdict], incomplete: Option<&str>) -> Vec<Item> {
    use Status as S;
    vs.iter()
        .map(|v| {
            let result = match v.status {
                S::Holds if incomplete.is_some() => ItemResult::not_judged(format!(
                    "{}; it held over what was read",
                    incomplete.unwrap_or_default()
                )),
                S::Holds | S::Reached => ItemResult::Passed,
                S::Violated => ItemResult::witnessed(v.detail.clone().unwrap_or_default()),
                S::Unreached => ItemResult::Skipped(
                    "not reached by this recording (a sometimes property: not a failure)".into(),
                ),
                S::CannotJudge => ItemResult::Skipped(v.status_text()),
            };
            Item::new(class, v.name, result).with_rules(&v.rules)
        })
        .collect()
}

/// The properties that cannot be judged, grouped by the evidence they miss (`needs the
/// acquirer's ledger: …`), in the verdicts' order.
pub fn cannot_judge(vs: &[Verdict]) -> Vec<(String, Vec<&'static str>)> {
    let mut groups: Vec<(String, Vec<&'static str>)> = Vec::new();
    for v in vs.iter().filter(|v| v.status == Status::CannotJudge) {
        let needs = v.status_text();
        let needs = needs
            .trim_start_matches("cannot judge (")
            .trim_end_matches(')');
        match groups.iter_mut().find(|(n, _)| n == needs) {
            Some((_, names)) => names.push(v.name),
            None => groups.push((needs.to_owned(), vec![v.name])),
        }
    }
    groups
}

/// Verdicts over a recorded source as a page's section, its headings of `level`: each
/// violation with its rules' sentences and what `witness` gives it (its drawing first,
/// if any), the properties judged, and those that cannot judge, grouped by the evidence
/// they miss.
pub fn verdict_blocks(
    blocks: &mut Vec<Block>,
    level: u8,
    vs: &[Verdict],
    witness: impl Fn(&Verdict, &[Block]) -> Vec<Block>,
) {
    let violated: Vec<&Verdict> = vs.iter().filter(|v| v.status == Status::Violated).collect();
    if !violated.is_empty() {
        let n = violated.len();
        blocks.push(Block::h(level, None, format!("Violations ({n})")));
    }
    for v in violated {
        let after = witness(v, blocks);
        blocks.push(Block::Violation {
            property: v.name.to_owned(),
            context: Text::default(),
            rules: v.rules.clone(),
            detail: v.detail.clone().unwrap_or_default(),
            after,
        });
    }
    let judged = vs.iter().filter(|v| v.status != Status::CannotJudge);
    let judged: Vec<PropertyRow> = judged.map(PropertyRow::of).collect();
    let n = judged.len();
    blocks.push(Block::h(level, None, format!("Properties judged ({n})")));
    blocks.push(doc::properties(&judged));
    let groups = cannot_judge(vs);
    if !groups.is_empty() {
        let n: usize = groups.iter().map(|(_, names)| names.len()).sum();
        let heading = format!("Cannot judge from this source ({n})");
        blocks.push(Block::h(level, None, heading));
        let rows = groups.into_iter().map(|(needs, names)| {
            let names = names.iter().map(|n| text::text!("`{}`", n));
            vec![needs.into(), Text::join(names, ", ")]
        });
        blocks.push(Block::table("evidence missing|properties", rows.collect()));
    }
}

/// A verdict in one line, as `judge` and `check-log` print each: its status, its name,
/// what it saw and its rules.
pub fn verdict_line(v: &Verdict) -> String {
    let detail = v.detail.as_deref().map(|d| format!(": {d}"));
    let (status, rules) = (v.status_text(), v.rules.join(", "));
    format!(
        "{status:<9} {}{}  [{rules}]",
        v.name,
        detail.unwrap_or_default()
    )
}

/// A violation in one line: `VIOLATED NAME [RULES]: DETAIL`, as every text format and
/// drawing closes with it.
pub fn violated_line(name: &str, rules: &[&str], detail: &str) -> String {
    format!("VIOLATED {name} [{}]: {detail}", rules.join(", "))
}
