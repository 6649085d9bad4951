//! The online oracle: the set of model states consistent with everything the target
//! has answered so far (docs/conform.md, "The oracle"), each round explored from each
//! state over every order the world allows, each answer compared with the target's
//! (`compare.rs`). No state left is a violation; past a bound, an incomplete run.

use super::case::{self, Names, Of, Req, Side};
use super::compare::{self, IdMap, Observed};
use super::profile::Loaded;
use super::readings::{Reading, Taken};
pub use super::record::{Seen, Sent};
use crate::http_map;
use crate::serve::sandbox::upstream::{answer_in_flight, drive, is_slow, newest_request, top_up};
use payhub_model::observation::Dialect;
use payhub_model::{ApiResponse, Branch, Control, MerchantId, Millis, RequestId, ResponseBody};
use payhub_properties::World;
use payhub_sim::network::{MsgId, Payload};
use payhub_sim::worlds::{self, node_of};
use payhub_sim::{Choice, WorldConfig};
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// One round's requests as sent, and what renders them for a state: the case's names
/// and the target's references as the round started.
#[derive(Clone, Copy)]
pub struct Round<'a> {
    pub names: &'a Names,
    pub refs: &'a TargetRefs,
    pub sent: &'a [Sent],
}

/// One model state.
#[derive(Clone, Debug)]
pub struct State {
    pub world: World,
    pub ids: IdMap,
    pub tape: Vec<Choice>,
    /// The readings the target took where the contract is silent (`readings.rs`): a
    /// state keeps one per point, so those that decide later answers are part of its
    /// identity ([`branch_of`]).
    pub readings: Vec<Taken>,
}

/// Nodes a round may explore from one state; past it the case is incomplete.
const NODE_BUDGET: usize = 20_000;

/// How a round went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoundVerdict {
    Conforms,
    /// No state explains the answers: the model's answers on the closest paths (those
    /// that explained the most of the round's answers), the requests of the round (by
    /// their place in it) whose answers those paths do not explain, and the rules by
    /// which those paths answered them.
    Broken {
        allowed: Vec<String>,
        unexplained: Vec<usize>,
        rules: Vec<&'static str>,
    },
    Incomplete(String),
}

pub struct Oracle {
    config: WorldConfig,
    pub states: Vec<State>,
    /// The target's profile: its branches, horizon, timings and pinned readings.
    profile: Loaded,
    /// How the target speaks the contract (its codes, its extra fields, whole bodies or not).
    dialect: Dialect,
    max_states: usize,
    /// The round of the case being judged (where a reading was first shown).
    pub round_no: usize,
}

/// One request's progress in one path of the exploration.
#[derive(Clone, Debug, Hash)]
struct Ex {
    sent: Option<(MsgId, RequestId)>,
    delivered: bool,
    done: bool,
}

impl Ex {
    /// Delivered and done with: its answer read, or it executed nowhere.
    fn finish(&mut self) {
        (self.delivered, self.done) = (true, true);
    }
}

#[derive(Clone)]
struct Node {
    /// The state of the round's start it was explored from (its place in `states`).
    from: usize,
    st: State,
    ex: Vec<Ex>,
    /// Upstream messages from before the round (left as the round's start has them).
    backlog: Arc<Vec<MsgId>>,
}

/// What two states must share to be the same state for the oracle: everything but the
/// history the properties read (`facts`), which the oracle does not judge.
fn key_of(w: &World, ids: &IdMap) -> u64 {
    hash_of(&(
        w.now,
        &w.platform,
        &w.acquirer,
        &w.net,
        &w.link,
        &w.origins,
        ids,
    ))
}

fn hash_of(v: &impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// The model's world: a live edge's, as the sandbox's (the reference platform, the
/// default API keys, no webhooks, answers that travel so that one can be lost).
pub fn model_config() -> WorldConfig {
    worlds::edge(payhub_model::PlatformParams::default(), false)
}

impl Oracle {
    pub fn new(profile: &Loaded, max_states: usize) -> Oracle {
        let mut config = model_config();
        config.params = profile.params.clone();
        let world = World::new(&config);
        Oracle {
            states: vec![State {
                world,
                ids: IdMap::default(),
                tape: Vec::new(),
                readings: Vec::new(),
            }],
            config,
            profile: profile.clone(),
            dialect: profile.dialect(),
            max_states,
            round_no: 0,
        }
    }

    /// Moves every state's clock by `by`, as a test clock does: the upstream driven and
    /// every timer due fired on the way.
    pub fn advance(&mut self, by: Millis) -> RoundVerdict {
        self.each("advance", |o, st| {
            let to = st.world.now.after(by);
            o.move_to(st, to)
        })
    }

    /// Switches one of the platform's inputs in every state, as the target's control
    /// does: the merchant's rate limit, the channel's pause.
    pub fn control(&mut self, s: case::Switch) -> RoundVerdict {
        let control = match s {
            case::Switch::RateLimit { merchant, on } => Control::SetRateLimited {
                merchant: MerchantId(merchant),
                on,
            },
            case::Switch::Pause { on } => Control::SetChannelPaused { on },
        };
        let what = format!("switch {s}");
        self.each(&what, |o, st| o.apply(st, Choice::Control(control.clone())))
    }

    /// `step` in every state, the states alike then merged; a step the model cannot take
    /// (`what`) leaves the case incomplete.
    fn each(
        &mut self,
        what: &str,
        step: impl Fn(&Self, &mut State) -> Result<(), String>,
    ) -> RoundVerdict {
        let mut next = Vec::new();
        for mut st in std::mem::take(&mut self.states) {
            if let Err(e) = step(self, &mut st) {
                return RoundVerdict::Incomplete(format!("the model cannot {what}: {e}"));
            }
            next.push(st);
        }
        self.states = dedup(next);
        RoundVerdict::Conforms
    }

    fn apply(&self, st: &mut State, choice: Choice) -> Result<(), String> {
        top_up(&mut st.world);
        let applied = st.world.apply(&self.config, &choice, None);
        applied.map_err(|e| format!("{choice}: {e}"))?;
        st.tape.push(choice);
        Ok(())
    }

    fn move_to(&self, st: &mut State, target: Millis) -> Result<(), String> {
        for _ in 0..10_000 {
            while let Some((c, _)) = link_moves(&st.world, &[]).into_iter().next() {
                self.apply(st, c)?;
            }
            drop_stray(self, st, &[])?;
            match st.world.next_deadline() {
                Some(d) if d <= target => self.apply(st, Choice::Tick)?,
                _ => break,
            }
        }
        if st.world.now < target {
            let by = target.since(st.world.now);
            self.apply(st, Choice::Advance(by))?;
        }
        Ok(())
    }

    /// One round against every state.
    pub fn round(&mut self, r: Round) -> RoundVerdict {
        let mut next = Vec::new();
        let mut misses = Vec::new();
        for (from, st) in self.states.iter().cloned().enumerate() {
            match self.explore((from, st), r, &mut misses) {
                Ok(mut found) => next.append(&mut found),
                Err(e) => return RoundVerdict::Incomplete(e),
            }
            if next.len() > self.max_states * 4 {
                next = dedup(next);
            }
        }
        let next = dedup(next);
        if next.len() > self.max_states {
            return RoundVerdict::Incomplete(format!(
                "{} model states are consistent with the answers, over the bound of {} (--max-states)",
                next.len(),
                self.max_states
            ));
        }
        if next.is_empty() {
            return self.broken(misses);
        }
        self.states = next;
        RoundVerdict::Conforms
    }

    /// The model's own run of a round's requests (those of the case, not a duplicate's
    /// second copy) from the first state: the choices of that state and of one path
    /// through the round (for the what-if script).
    pub fn model_run(&self, r: Round) -> Option<Vec<Choice>> {
        let st = self.states.first()?.clone();
        let firsts = r.sent.iter().filter(|s| s.after.is_none());
        let any = |s: &Sent| Sent {
            seen: Seen::Any,
            ..s.clone()
        };
        let sent: Vec<Sent> = firsts.map(any).collect();
        let round = Round { sent: &sent, ..r };
        let found = self.explore((0, st), round, &mut Vec::new()).ok()?;
        (found.into_iter())
            .min_by_key(|s| s.tape.len())
            .map(|s| s.tape)
    }

    fn explore(
        &self,
        (from, st): (usize, State),
        r: Round,
        misses: &mut Vec<Missed>,
    ) -> Result<Vec<State>, String> {
        // What the upstream still had to do from earlier rounds may have happened by
        // now, or part of it, or none: every prefix of it is a start (a slow card's
        // charge excepted: it is placed by the exploration).
        let mut starts = vec![st.clone()];
        let mut st = st;
        while let Some((c, _)) = link_moves(&st.world, &[])
            .into_iter()
            .find(|(_, kind)| *kind != LinkMove::SlowCharge)
        {
            if starts.len() > 64 {
                return Err("the upstream's backlog is longer than 64 moves".into());
            }
            self.apply(&mut st, c)?;
            starts.push(st.clone());
        }
        let mut found = Vec::new();
        for start in starts {
            found.append(&mut self.explore_from((from, start), r, misses)?);
        }
        Ok(found)
    }

    fn explore_from(
        &self,
        (from, st): (usize, State),
        r: Round,
        misses: &mut Vec<Missed>,
    ) -> Result<Vec<State>, String> {
        let limit = st.world.now.after(self.profile.horizon);
        let ex = |s: &Sent| Ex {
            sent: None,
            delivered: false,
            done: matches!(s.seen, Seen::NotSent),
        };
        let ex = r.sent.iter().map(ex).collect();
        let link = st.world.link.iter().filter(|(_, m)| !is_slow(&st.world, m));
        let backlog = Arc::new(link.map(|(m, _)| m).collect());
        let mut stack = vec![Node {
            from,
            st,
            ex,
            backlog,
        }];
        let mut visited: HashSet<u64> = HashSet::new();
        let mut found = Vec::new();
        let mut nodes = 0usize;
        while let Some(mut node) = stack.pop() {
            nodes += 1;
            if nodes > NODE_BUDGET {
                return Err(format!(
                    "a round has more than {NODE_BUDGET} interleavings to explore from one state (node budget)"
                ));
            }
            match self.settle(&mut node, r) {
                Err(Miss::Answer(i, m)) => {
                    keep(misses, self.missed(&node, r.sent, i, m));
                    continue;
                }
                Err(Miss::World(e)) => return Err(e),
                Ok(()) => {}
            }
            let st = &node.st;
            let key = (key_of(&st.world, &st.ids), branch_of(st), &node.ex);
            if !visited.insert(hash_of(&key)) {
                continue;
            }
            if node.ex.iter().all(|e| e.done) {
                found.push(node.st);
                continue;
            }
            'moves: for m in self.moves(&node, r.sent, limit) {
                let mut child = node.clone();
                for choice in m.choices {
                    if self.apply(&mut child.st, choice).is_err() {
                        continue 'moves;
                    }
                }
                if let (Some(reading), Some((i, _))) = (m.reading, m.marks)
                    && let Err(e) = self.take(&mut child.st, reading, i)
                {
                    keep(misses, self.missed(&node, r.sent, i, e));
                    continue;
                }
                if let Some((i, done)) = m.marks {
                    child.ex[i].delivered = true;
                    child.ex[i].done |= done;
                }
                stack.push(child);
            }
        }
        Ok(found)
    }

    /// The choices that may come next, each with the request it delivers or drops.
    fn moves(&self, node: &Node, sent: &[Sent], limit: Millis) -> Vec<Move> {
        let w = &node.st.world;
        let mut out = Vec::new();
        for (i, e) in node.ex.iter().enumerate() {
            let Some((msg, id)) = e.sent else { continue };
            if e.delivered || e.done {
                continue;
            }
            let Some(Payload::Request { request, .. }) = w.net.get(msg) else {
                continue;
            };
            let reading = match &sent[i].seen {
                Seen::Answer(obs) if matches!(obs.status, 200 | 202) => {
                    delivered_reading(w, request)
                }
                _ => None,
            };
            let deliver = |branch| Move {
                choices: vec![Choice::Deliver { msg, branch }],
                marks: Some((i, false)),
                reading,
            };
            out.extend(self.branches(w, request).into_iter().map(deliver));
            let strict = self.dialect.strict;
            match &sent[i].seen {
                Seen::Unknown => {
                    out.push(Move::one(Choice::Drop { msg }, Some((i, true))));
                    if !strict {
                        out.extend(self.reading_moves(w, (i, msg, id), request, None));
                    }
                }
                Seen::Answer(obs) if !strict => {
                    out.extend(self.reading_moves(w, (i, msg, id), request, Some(obs)));
                }
                _ => {}
            }
        }
        let concurrent = is_concurrent(sent);
        let lazy = link_moves(w, &node.backlog).into_iter();
        let lazy = lazy.filter(|(_, kind)| !kind.eager(concurrent, !self.dialect.strict));
        out.extend(lazy.map(|(c, _)| Move::one(c, None)));
        // Time passes while the target takes time to answer, within the horizon.
        let waiting = node.ex.iter().any(|e| e.delivered && !e.done);
        if waiting && w.next_deadline().is_some_and(|d| d <= limit) {
            out.push(Move::one(Choice::Tick, None));
        }
        out
    }

    /// Deterministic steps: sends whose turn has come, answers in flight compared and
    /// delivered (or dropped, for a lost answer), stray messages dropped.
    fn settle(&self, node: &mut Node, r: Round) -> Result<(), Miss> {
        loop {
            let mut moved = false;
            for (i, one) in r.sent.iter().enumerate() {
                if node.ex[i].done {
                    continue;
                }
                let ready = one.after.is_none_or(|j| node.ex[j].done);
                if node.ex[i].sent.is_none() && ready {
                    self.send(node, i, r)?;
                    moved = true;
                    continue;
                }
                let Some((_, id)) = node.ex[i].sent else {
                    continue;
                };
                let Some((msg, response)) = answer_in_flight(&node.st.world, id) else {
                    continue;
                };
                if let Seen::Answer(obs) = &one.seen {
                    let shown = shown_by(&one.req, &response, obs);
                    self.compare(&mut node.st, (i, &one.req), &response, obs, shown)?;
                }
                let choice = match one.seen {
                    Seen::Answer(_) | Seen::Any => Choice::Deliver { msg, branch: None },
                    Seen::Unknown | Seen::NotSent => Choice::Drop { msg },
                };
                self.apply(&mut node.st, choice).map_err(Miss::World)?;
                node.ex[i].finish();
                moved = true;
            }
            let ours: Vec<RequestId> = node.ex.iter().filter_map(|e| e.sent.map(|s| s.1)).collect();
            moved |= drop_stray(self, &mut node.st, &ours).map_err(Miss::World)?;
            let concurrent = is_concurrent(r.sent);
            if let Some((c, _)) = link_moves(&node.st.world, &node.backlog)
                .into_iter()
                .find(|(_, kind)| kind.eager(concurrent, !self.dialect.strict))
            {
                self.apply(&mut node.st, c).map_err(Miss::World)?;
                moved = true;
            }
            if !moved {
                return Ok(());
            }
        }
    }

    /// The model's `response` to request `i` against the target's `obs`: the ids bound and
    /// the readings shown (with `more`) taken, or the path's miss.
    fn compare(
        &self,
        st: &mut State,
        (i, req): (usize, &Req),
        response: &ApiResponse,
        obs: &Observed,
        more: impl IntoIterator<Item = Reading>,
    ) -> Result<(), Miss> {
        let ns = self.profile.namespace(req.key_of);
        let dialect = &self.dialect;
        let mut shown = compare::matches(response, obs, ns, &mut st.ids, dialect)
            .map_err(|e| Miss::Answer(i, format!("{response}  ({e})")))?;
        shown.extend(more);
        if !dialect.strict && obs.status == response.status {
            shown.extend(moves::model_reading(&st.world, req, response));
        }
        for r in shown {
            self.take(st, r, i).map_err(|e| Miss::Answer(i, e))?;
        }
        Ok(())
    }

    fn send(&self, node: &mut Node, i: usize, r: Round) -> Result<(), Miss> {
        let s = &r.sent[i];
        let ns = self.profile.namespace(s.req.key_of);
        // The request as the model's reading of the target's answer has it; `None`: a
        // reading under which it executed nowhere.
        let read = self.as_read(&mut node.st, i, s);
        let Some(req) = read.map_err(|e| Miss::Answer(i, e))? else {
            node.ex[i].finish();
            return Ok(());
        };
        let side = Side {
            of: Of::Model(&node.st.ids),
            refs: r.refs,
            ns,
        };
        let http = req.render(r.names, &side);
        match http_map::to_api_request(&http) {
            Err(edge) => {
                // The sandbox's edge answers what the model cannot represent.
                let body: ResponseBody = serde_json::from_str(&edge.body)
                    .map_err(|e| Miss::World(format!("the edge's answer: {e}")))?;
                let response = ApiResponse {
                    status: edge.status,
                    retry_after_s: edge.retry_after_s,
                    body,
                };
                if let Seen::Answer(obs) = &s.seen {
                    let shown = matches!(req.op, case::Op::ConfirmWithAmount { .. })
                        .then_some(Reading::FieldsRefused);
                    self.compare(&mut node.st, (i, &s.req), &response, obs, shown)?;
                }
                node.ex[i].finish();
            }
            Ok(request) => {
                let merchant = node_of(request.api_key);
                let request = Arc::new(request);
                let send = Choice::Send { merchant, request };
                self.apply(&mut node.st, send).map_err(Miss::World)?;
                let newest = newest_request(&node.st.world)
                    .ok_or_else(|| Miss::World("the sent request is not in flight".into()))?;
                node.ex[i].sent = Some(newest);
            }
        }
        Ok(())
    }
}

enum Miss {
    /// This path's answer to request `.0` of the round differs from the target's.
    Answer(usize, String),
    /// The model itself failed (a bug of the harness): the run is incomplete.
    World(String),
}

/// Whether a round sends more than one request at once.
fn is_concurrent(sent: &[Sent]) -> bool {
    sent.iter().filter(|s| s.after.is_none()).count() > 1
}

#[path = "oracle_moves.rs"]
mod moves;
use moves::*;

#[path = "oracle_closest.rs"]
mod closest;
use closest::{Missed, keep};

pub use super::case::TargetRefs;

#[cfg(test)]
#[path = "tests_oracle.rs"]
mod tests;
