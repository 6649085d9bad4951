//! The search's shortcuts, checked where they are used. `check` and `verify --quick`
//! search depth-first with canonical request ids and the partial-order reduction, and
//! `check` counts states with the engine's own fingerprint; each is a claim that the
//! search judges as the plain one does. [`cross_check`] tests those claims on the small
//! presets, as `verify` runs it every time: every shortcut against the unreduced
//! breadth-first search (the same `always` verdicts, the same `sometimes` reached, the
//! same states for depth-first, never more for a reduction) and the breadth-first count
//! against stateright's own checker (the same states and verdicts: the fingerprint and
//! the engine's search are stateright's); and on planted bugs of the zoo, that every
//! shortcut still catches what the plain search catches. A [`Planted`] unsound shortcut
//! stands in for the real ones to show that the cross-check fails when a shortcut drops
//! what it must keep.

use super::{INERT_FIRST, Limits, Order, PresetModel, Registration, Search, Searched};
use crate::World;
use crate::engine::fingerprint;
use crate::presets::Preset;
use crate::zoo::Subject;
use serde::Serialize;
use stateright::{Checker, Model};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

payhub_model::named! {
    fn name;
    /// A shortcut of the search, as the command line names it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Shortcut {
        /// `--search dfs`: the same states as breadth-first.
        DepthFirst = "dfs",
        /// `--reduce ids`: message ids renamed to a canonical order.
        CanonicalIds = "ids",
        /// `--reduce requests`: request ids renamed too.
        CanonicalRequests = "requests",
        /// `--reduce por`: an inert answer delivered first, in one order only.
        PartialOrder = "por",
        /// `--search dfs --reduce requests,por`: `check`'s default and `verify --quick`'s.
        Default = "dfs+requests+por",
    }
}

impl Shortcut {
    fn search(self) -> Search {
        let plain = Search::default();
        match self {
            Shortcut::DepthFirst => Search {
                order: Order::Depth,
                ..plain
            },
            Shortcut::CanonicalIds => Search {
                canonical_ids: true,
                ..plain
            },
            Shortcut::CanonicalRequests => Search {
                canonical_requests: true,
                ..plain
            },
            Shortcut::PartialOrder => Search {
                partial_order: Some(INERT_FIRST),
                ..plain
            },
            Shortcut::Default => Search {
                order: Order::Depth,
                canonical_requests: true,
                partial_order: Some(INERT_FIRST),
                ..plain
            },
        }
    }

    /// Whether it claims the plain search's very states (not only its verdicts).
    fn keeps_every_state(self) -> bool {
        self == Shortcut::DepthFirst
    }
}

payhub_model::named! {
    fn name;
    /// An unsound shortcut, planted in place of the real ones to show the cross-check can
    /// fail (`verify --unsound-shortcut NAME`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Planted {
        /// A canonical fingerprint that forgets the facts: states that differ only in what
        /// was answered are merged.
        ForgetsFacts = "forgets_facts",
        /// A partial order that delivers any answer first, awaited ones too: a client's
        /// timeout while its answer is in flight is never explored.
        DeliversAnyAnswerFirst = "delivers_any_answer_first",
    }
}

impl Planted {
    fn search(self, preset: &Preset) -> Searched {
        fn any_answer(w: &World) -> Option<payhub_sim::MsgId> {
            w.net.iter().find_map(|(msg, payload)| {
                matches!(payload, payhub_sim::Payload::Response { .. }).then_some(msg)
            })
        }
        let forgets_facts =
            |w: &World| fingerprint(&(w.now, &w.platform, &w.acquirer, &w.net, &w.link, w.budget));
        let plain = |w: &World| fingerprint(w);
        let (search, fp): (Search, &(dyn Fn(&World) -> u64 + Sync)) = match self {
            Planted::ForgetsFacts => (Search::default(), &forgets_facts),
            Planted::DeliversAnyAnswerFirst => (
                Search {
                    partial_order: Some(any_answer),
                    ..Search::default()
                },
                &plain,
            ),
        };
        super::search_by(preset, limits(), search, false, fp).expect("the preset builds")
    }
}

/// The small presets of the cross-check: each complete in a few thousand states.
const PRESETS: &[&str] = &[
    "replay-conflict",
    "concurrent-same-key",
    "order-number",
    "scope",
    "rate-and-pause",
    "checkout",
    "unknown-result",
    "edges-keys",
    "edges-closed",
    "two-servers-rate-limited",
];

/// Planted bugs of the zoo and the preset the plain search catches each on: every
/// shortcut must catch them alike.
const CAUGHT: &[(&str, &str)] = &[("key_claimed_after_charge", "two-servers-one-order")];

/// Generated states a search of the cross-check may take (all are far below).
const BOUND: usize = 200_000;

fn limits() -> Limits {
    Limits {
        threads: 1,
        max_states: Some(BOUND),
        ..Limits::default()
    }
}

/// One comparison the cross-check made and what it found.
#[derive(Clone, Debug, Serialize)]
pub struct Compared {
    /// The preset, or `MUTANT on PRESET` for a planted bug.
    pub subject: String,
    /// The shortcut, `stateright` for stateright's own count, or a planted shortcut.
    pub shortcut: &'static str,
    /// `None` when alike; otherwise what differed.
    pub differs: Option<String>,
}

/// What [`cross_check`] found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CrossCheck {
    pub compared: Vec<Compared>,
    /// Each planted unsound shortcut, and whether the cross-check caught it.
    pub planted_caught: Vec<(&'static str, bool)>,
}

impl CrossCheck {
    /// The comparisons that differed.
    pub fn mismatches(&self) -> impl Iterator<Item = &Compared> {
        self.compared.iter().filter(|c| c.differs.is_some())
    }

    /// Every shortcut judged alike and every planted one caught.
    pub fn passed(&self) -> bool {
        self.mismatches().next().is_none() && self.planted_caught.iter().all(|(_, c)| *c)
    }
}

/// The differences of `got` from `plain`, in the registry's names.
fn differ(got: &Searched, plain: &Searched, same_states: bool) -> Option<String> {
    let names = |bits: u128| -> Vec<&'static str> {
        crate::PROPERTIES
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, p)| p.name)
            .collect()
    };
    let (e, p) = (&got.explored, &plain.explored);
    if !got.complete {
        Some(format!("not complete within {BOUND} states"))
    } else if got.violated != plain.violated {
        Some(format!(
            "violated {:?}, the plain search {:?}",
            names(got.violated),
            names(plain.violated)
        ))
    } else if got.reached != plain.reached {
        Some(format!(
            "reached {:?}, the plain search {:?}",
            names(got.reached),
            names(plain.reached)
        ))
    } else if same_states && (e.unique_states, e.total_states) != (p.unique_states, p.total_states)
    {
        Some(format!(
            "{} states ({} generated), the plain search {} ({})",
            e.unique_states, e.total_states, p.unique_states, p.total_states
        ))
    } else if e.unique_states > p.unique_states {
        Some(format!(
            "{} states, more than the plain search's {}",
            e.unique_states, p.unique_states
        ))
    } else {
        None
    }
}

/// stateright's own breadth-first search of `preset`: its state count and verdicts
/// against the engine's plain search.
fn stateright_differs(preset: &Preset, plain: &Searched) -> Option<String> {
    let model = PresetModel::with_registration(
        preset.clone(),
        Registration::Combined {
            stop_at_violation: false,
        },
    )
    .expect("the preset builds");
    let checked = model
        .checker()
        .threads(1)
        .target_state_count(BOUND)
        .spawn_bfs()
        .join();
    let unique = checked.unique_state_count();
    let model = checked.model();
    let (violated, reached) = (model.violated(), model.reached());
    (unique != plain.explored.unique_states
        || violated != plain.violated
        || reached != plain.reached)
        .then(|| {
            format!(
                "stateright counted {unique} states, the engine {}{}",
                plain.explored.unique_states,
                if violated != plain.violated || reached != plain.reached {
                    ", with other verdicts"
                } else {
                    ""
                }
            )
        })
}

/// The cross-check on the small presets and the planted bugs (see the module doc),
/// with `planted` in place of every real shortcut when given. Without one, each
/// planted shortcut is also tried, and must be caught.
pub fn cross_check(planted: Option<Planted>, threads: usize) -> CrossCheck {
    let mut out = CrossCheck {
        compared: compare(planted, threads),
        planted_caught: Vec::new(),
    };
    if planted.is_none() {
        for &p in Planted::ALL {
            let caught = compare(Some(p), threads)
                .iter()
                .any(|c| c.differs.is_some());
            out.planted_caught.push((p.name(), caught));
        }
    }
    out
}

fn compare(planted: Option<Planted>, threads: usize) -> Vec<Compared> {
    let mut subjects: Vec<(String, Preset)> = crate::presets::presets()
        .into_iter()
        .filter(|p| PRESETS.contains(&p.name))
        .map(|p| (p.name.to_owned(), p))
        .collect();
    for (mutant, preset) in CAUGHT {
        let subject = Subject::from_name(mutant).expect("a mutant of the zoo");
        let preset = subject
            .presets()
            .into_iter()
            .find(|p| p.name == *preset)
            .expect("a preset the zoo tries for it");
        subjects.push((format!("{mutant} on {}", preset.name), preset));
    }
    // Each subject on its own, on `threads` workers; gathered in the subjects' order.
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Vec<Compared>)>> = Mutex::default();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((subject, preset)) = subjects.get(i) else {
                        break;
                    };
                    let found = compare_one(subject, preset, planted);
                    done.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((i, found));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().flat_map(|(_, c)| c).collect()
}

/// Every comparison on one preset (or planted bug on its preset).
fn compare_one(subject: &str, preset: &Preset, planted: Option<Planted>) -> Vec<Compared> {
    let plain =
        super::search(preset, limits(), Search::default(), false).expect("the preset builds");
    let record = |shortcut: &'static str, differs: Option<String>| Compared {
        subject: subject.to_owned(),
        shortcut,
        differs,
    };
    match planted {
        Some(p) => vec![record(p.name(), differ(&p.search(preset), &plain, false))],
        None => std::iter::once(record("stateright", stateright_differs(preset, &plain)))
            .chain(Shortcut::ALL.iter().map(|s| {
                let got =
                    super::search(preset, limits(), s.search(), false).expect("the preset builds");
                record(s.name(), differ(&got, &plain, s.keeps_every_state()))
            }))
            .collect(),
    }
}
