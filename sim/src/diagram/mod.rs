//! A sequence diagram: the one drawing every counterexample is shown as.
//!
//! A [`Diagram`] is participants (merchant servers, the platform, the acquirer, …) and,
//! in order, the items between them: messages in the contract's notation (a call, a
//! reply, a lost one), notes (a timeout, a client's decision), crashes and clock moves,
//! and the verdict that closes a counterexample (the property, its rules, the contract's
//! sentence). Items that witness a violation are marked, so every rendering can show
//! which exchanges the verdict rests on.
//!
//! It renders as Mermaid source ([`Diagram::to_mermaid`], for code hosts) and as inline
//! SVG ([`Diagram::to_svg`], no script and no network at view time); no source lays out
//! a drawing of its own.

mod svg;

pub use svg::{STYLE as SVG_STYLE, escape};

use std::fmt::Write as _;

/// A lifeline: `id` names it in Mermaid (`M0`, `P`), `label` is what a reader sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participant {
    pub id: String,
    pub label: String,
}

/// How a message travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrow {
    /// A request, an upstream call, a webhook: a solid arrow.
    Call,
    /// An answer: a dashed arrow.
    Reply,
    /// A message that never arrived: it ends in a cross.
    Lost,
}

/// What a note stands for, which decides how it is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// A timeout, a duplicate, a client's decision.
    Plain,
    /// A crash or a restart.
    Crash,
    /// The clock moved: drawn as a rule across every lifeline.
    Clock,
    /// The verdict that closes a counterexample.
    Verdict,
}

/// One row of a diagram: its shape, its text and what it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub shape: Shape,
    pub text: String,
    /// The rule that caused it (`REPLAY-02`), shown after the text.
    pub rule: Option<String>,
    /// Simulated or recorded time, in milliseconds from the run's start.
    pub at: Option<u64>,
    /// The HTTP exchange it belongs to (a request id), if any.
    pub exchange: Option<String>,
    /// Part of the violation's witness.
    pub witness: bool,
}

/// What an item draws: a message between two participants (indices into
/// [`Diagram::participants`]), or a note over the first to the last it spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Message {
        from: usize,
        to: usize,
        arrow: Arrow,
    },
    Note {
        over: (usize, usize),
        kind: NoteKind,
    },
}

impl Item {
    /// `text` drawn as `shape`, of no rule, time or exchange, not a witness.
    pub fn new(shape: Shape, text: impl Into<String>) -> Item {
        Item {
            shape,
            text: text.into(),
            rule: None,
            at: None,
            exchange: None,
            witness: false,
        }
    }

    /// The text a reader sees in full (on hover where the drawing elides it).
    pub fn full_text(&self) -> String {
        match &self.rule {
            Some(r) => format!("{} [{r}]", self.text),
            None => self.text.clone(),
        }
    }

    /// Whether it is the verdict that closes a counterexample.
    pub fn is_verdict(&self) -> bool {
        matches!(
            self.shape,
            Shape::Note {
                kind: NoteKind::Verdict,
                ..
            }
        )
    }
}

/// A sequence diagram.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagram {
    pub participants: Vec<Participant>,
    pub items: Vec<Item>,
}

impl Diagram {
    /// The index of the participant `id`, declared now if it is new.
    pub fn participant(&mut self, id: &str, label: &str) -> usize {
        if let Some(i) = self.participants.iter().position(|p| p.id == id) {
            return i;
        }
        self.participants.push(Participant {
            id: id.to_owned(),
            label: label.to_owned(),
        });
        self.participants.len() - 1
    }

    /// Adds `text` drawn as `shape` (of no rule, time or exchange, not a witness), to be
    /// marked through what it returns.
    pub fn push(&mut self, shape: Shape, text: impl Into<String>) -> &mut Item {
        self.items.push(Item::new(shape, text));
        self.items.last_mut().expect("an item was just pushed")
    }

    /// Adds the verdict note over every participant (declaring `P as platform` if there
    /// is none).
    pub fn push_verdict(&mut self, text: &str) {
        if self.participants.is_empty() {
            self.participant("P", "platform");
        }
        let (over, kind) = ((0, self.participants.len() - 1), NoteKind::Verdict);
        self.push(Shape::Note { over, kind }, text).witness = true;
    }

    /// Whether any item is marked as the witness.
    pub fn has_witness(&self) -> bool {
        self.items.iter().any(|i| i.witness && !i.is_verdict())
    }

    /// Mermaid `sequenceDiagram` source: every participant declared first, one arrow per
    /// message (`->>` a call, `-->>` a reply, `-x` a lost one), notes over their span.
    pub fn to_mermaid(&self) -> String {
        let mut s = String::from("sequenceDiagram\n");
        for p in &self.participants {
            let _ = writeln!(s, "    participant {} as {}", p.id, p.label);
        }
        let id = |i: usize| self.participants[i].id.as_str();
        for item in &self.items {
            let text = mermaid_text(&item.text) + &rule_suffix(&item.rule);
            let _ = match item.shape {
                Shape::Message { from, to, arrow } => {
                    let sign = match arrow {
                        Arrow::Call => "->>",
                        Arrow::Reply => "-->>",
                        Arrow::Lost => "-x",
                    };
                    writeln!(s, "    {}{sign}{}: {text}", id(from), id(to))
                }
                Shape::Note { over: (a, b), .. } if a == b => {
                    writeln!(s, "    Note over {}: {text}", id(a))
                }
                Shape::Note { over: (a, b), .. } => {
                    writeln!(s, "    Note over {},{}: {text}", id(a), id(b))
                }
            };
        }
        s
    }

    /// The drawing as one inline `<svg>` element.
    pub fn to_svg(&self) -> String {
        svg::render(self, &svg::layout(self), true)
    }

    /// [`Diagram::to_svg`] without its stylesheet, for a page that holds many drawings
    /// and carries [`SVG_STYLE`] once.
    pub fn to_svg_unstyled(&self) -> String {
        svg::render(self, &svg::layout(self), false)
    }
}

fn rule_suffix(rule: &Option<String>) -> String {
    rule.as_ref().map(|r| format!(" [{r}]")).unwrap_or_default()
}

/// Message text Mermaid accepts: no `;` or `#` (entity syntax), no `<` or `>` (a label
/// is drawn as HTML), no line breaks.
pub fn mermaid_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '<' => out.push_str("#60;"),
            '>' => out.push_str("#62;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
