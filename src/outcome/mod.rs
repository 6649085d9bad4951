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
            commit: crate::report::commit(),
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

    /// A failure with no detail beyond its message.
    pub fn failed(message: impl Into<String>) -> ItemResult {
        ItemResult::Failed {
            message: message.into(),
            detail: String::new(),
        }
    }
}

/// The first line of a witness, as a failure's message.
pub fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

/// Verdicts over a recorded source (`judge`, `check-log`): an item per property; cannot
/// judge is skipped with the evidence missing. Over a source read only in part
/// (`incomplete`: why), a property that held is not judged: it held over what was read.
pub fn verdicts(
    class: &str,
    vs: &[payhub_properties::verdict::Verdict],
    incomplete: Option<&str>,
) -> Vec<Item> {
    use payhub_properties::verdict::Status as S;
    vs.iter()
        .map(|v| {
            let result = match v.status {
                S::Holds if incomplete.is_some() => ItemResult::not_judged(format!(
                    "{}; it held over what was read",
                    incomplete.unwrap_or_default()
                )),
                S::Holds | S::Reached => ItemResult::Passed,
                S::Violated => {
                    let detail = v.detail.clone().unwrap_or_default();
                    ItemResult::Failed {
                        message: first_line(&detail),
                        detail,
                    }
                }
                S::Unreached => ItemResult::Skipped(
                    "not reached by this recording (a sometimes property: not a failure)".into(),
                ),
                S::CannotJudge => ItemResult::Skipped(v.status_text()),
            };
            Item::new(class, v.name, result).with_rules(&v.rules)
        })
        .collect()
}
