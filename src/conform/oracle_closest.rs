//! A round no model state explains, told as its closest paths tell it: the paths that
//! explained the most of the round's answers before one differed. Their answers are the
//! model's closest (`allowed`); the requests where they differ are the witness, the
//! answers they explain are not; the rules those paths answered them by are the rules
//! the target broke (read off the path's own events, never off a text).

use super::*;
use payhub_model::event::What;
use std::collections::BTreeSet;

/// Where a path ended: its answer to request `request` differs (`text`) after `explained`
/// answers of the round matched; its start state, choices since, and model request.
pub(super) struct Missed {
    explained: usize,
    request: usize,
    text: String,
    from: usize,
    path: Vec<Choice>,
    id: Option<RequestId>,
}

/// Keeps `m` among the closest misses of a round so far, if none explained more.
pub(super) fn keep(misses: &mut Vec<Missed>, m: Missed) {
    let most = misses.first().map_or(0, |f| f.explained);
    if m.explained > most {
        misses.clear();
    }
    if m.explained >= most {
        misses.push(m);
    }
}

impl Oracle {
    /// The miss of request `request` on `node`'s path: its answer differs (`text`).
    pub(super) fn missed(
        &self,
        node: &Node,
        sent: &[Sent],
        request: usize,
        text: String,
    ) -> Missed {
        let answered = |j: usize| matches!(sent[j].seen, Seen::Answer(_));
        let explained = (0..sent.len()).filter(|&j| node.ex[j].done && answered(j));
        let start = self.states.get(node.from).map_or(0, |s| s.tape.len());
        Missed {
            explained: explained.count(),
            request,
            text,
            from: node.from,
            path: node.st.tape.get(start..).unwrap_or_default().to_vec(),
            id: node.ex[request].sent.map(|s| s.1),
        }
    }

    /// The verdict of a round no state explains, from its closest misses: their answers
    /// (six at most, by their text), the requests they miss, the rules of those answers.
    pub(super) fn broken(&self, mut misses: Vec<Missed>) -> RoundVerdict {
        let unexplained = misses.iter().map(|m| m.request).collect::<BTreeSet<_>>();
        misses.sort_by(|a, b| a.text.cmp(&b.text));
        misses.dedup_by(|a, b| a.text == b.text);
        misses.truncate(6);
        let mut rules: Vec<&'static str> = misses.iter().flat_map(|m| self.rules_of(m)).collect();
        let mut seen = BTreeSet::new();
        rules.retain(|r| seen.insert(*r));
        RoundVerdict::Broken {
            allowed: misses.into_iter().map(|m| m.text).collect(),
            unexplained: unexplained.into_iter().collect(),
            rules,
        }
    }

    /// The rules by which `m`'s path answered its request: the path run again from its
    /// state, recorded.
    fn rules_of(&self, m: &Missed) -> Vec<&'static str> {
        let (Some(id), Some(st)) = (m.id, self.states.get(m.from)) else {
            return Vec::new();
        };
        let (mut w, mut trace) = (st.world.clone(), payhub_sim::Trace::new());
        for c in &m.path {
            top_up(&mut w);
            if w.apply(&self.config, c, Some(&mut trace)).is_err() {
                break;
            }
        }
        let rule = |e: &payhub_model::event::Event| match &e.what {
            What::Answered { id: a, rule, .. } if *a == id => Some(rule.id()),
            _ => None,
        };
        trace.stream.iter().filter_map(rule).collect()
    }
}
