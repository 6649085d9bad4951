//! The sandbox's upstream driving: choices applied and recorded, upstream calls held or
//! decided by their test card, replies delivered, the world's clock moved to a target.
//! The readings of a world both live drivers take (the sandbox, conform's oracle) are
//! the free functions here: a link message driven (a call decided by its card, a reply
//! delivered), the request sent last, an answer in flight, the fault budget topped up.

use super::{Release, STEPS_MAX, Sandbox};
use payhub_model::cards;
use payhub_model::{ApiResponse, Millis, RequestId};
use payhub_properties::World;
use payhub_sim::Choice;
use payhub_sim::network::{MsgId, Payload, UpstreamMsg};

/// The world's fault budget, refilled before it runs low: a live driver's session has
/// no end. (A script starts with the full budget, so a session of more than 239 faults
/// of one kind exports a script that stops short.)
pub(crate) fn top_up(w: &mut World) {
    let b = &w.budget;
    if b.drops < 16 || b.fail_500 < 16 || b.duplicates < 16 {
        w.budget = payhub_sim::Budget::UNLIMITED;
    }
}

/// The choice that moves link message `msg` on, for both live drivers: a call decided
/// by its test card, a reply delivered.
pub(crate) fn drive(w: &World, msg: MsgId, m: &UpstreamMsg) -> Choice {
    let UpstreamMsg::Call(call) = m else {
        return Choice::DeliverUpstream { msg };
    };
    let decision = cards::decision(call, |a| w.acquirer.charges.get(&a).map(|c| c.card));
    Choice::Acquire { msg, decision }
}

/// Whether `m` is a call on the slow card (a card G charge's cancel, a card D charge).
pub(crate) fn is_slow(w: &World, m: &UpstreamMsg) -> bool {
    let card_of = |a| w.acquirer.charges.get(&a).map(|c| c.card);
    matches!(m, UpstreamMsg::Call(c) if cards::is_slow(c, card_of))
}

/// The request put in flight last (message ids only grow).
pub(crate) fn newest_request(w: &World) -> Option<(MsgId, RequestId)> {
    w.net
        .iter()
        .filter_map(|(msg, p)| match p {
            Payload::Request { id, .. } => Some((msg, *id)),
            _ => None,
        })
        .last()
}

/// The answer to request `id`, if it is in flight.
pub(crate) fn answer_in_flight(w: &World, id: RequestId) -> Option<(MsgId, ApiResponse)> {
    w.net.iter().find_map(|(msg, p)| match p {
        Payload::Response {
            id: to, response, ..
        } if *to == id => Some((msg, response.clone())),
        _ => None,
    })
}

impl Sandbox {
    /// Applies one choice, recording it in the tape and the trace, and holds the
    /// upstream calls it put on the link that must wait.
    pub(super) fn apply(&mut self, choice: Choice) -> Result<(), String> {
        let trace = self.record.trace_for_next_step();
        self.world
            .apply(&self.config, &choice, Some(trace))
            .map_err(|e| format!("{choice}: {e}"))?;
        self.record.push_choice(choice);
        self.hold_new_calls();
        Ok(())
    }

    /// New calls of the exchange being stepped: all of them for `slow_upstream`, a
    /// slow card's charge (a card G charge's cancel) until the exchange has its answer.
    pub(super) fn hold_new_calls(&mut self) {
        let seen = self.link_seen;
        let fresh: Vec<(MsgId, bool)> = self
            .world
            .link
            .iter()
            .filter(|(msg, _)| seen.is_none_or(|s| *msg > s))
            .map(|(msg, m)| (msg, is_slow(&self.world, m)))
            .collect();
        if let Some((last, _)) = fresh.last() {
            self.link_seen = Some(*last);
        }
        let Some((id, slow)) = self.current else {
            return;
        };
        for (msg, slow_card) in fresh {
            if !matches!(self.world.link.get(msg), Some(UpstreamMsg::Call(_))) {
                continue;
            }
            if let Some(d) = slow {
                self.held.insert(msg, Release::At(self.world.now.after(d)));
            } else if slow_card {
                self.held.insert(msg, Release::AfterAnswer(id));
            }
        }
    }

    /// Whether a held call may be decided now.
    pub(super) fn released(&self, release: Release) -> bool {
        match release {
            Release::At(t) => t <= self.world.now,
            Release::AfterAnswer(id) => !self.world.origins.contains_key(&id),
        }
    }

    /// Decides every call on the upstream link by its test card (but those held) and
    /// delivers every reply. Returns whether anything moved.
    pub(super) fn drive_link(&mut self) -> Result<bool, String> {
        let mut moved = false;
        for _ in 0..STEPS_MAX {
            let held = |msg| self.held.get(&msg).is_some_and(|r| !self.released(*r));
            let next = (self.world.link.iter())
                .find(|(msg, m)| !(matches!(m, UpstreamMsg::Call(_)) && held(*msg)))
                .map(|(msg, m)| drive(&self.world, msg, m));
            let Some(choice) = next else {
                return Ok(moved);
            };
            if let Choice::Acquire { msg, .. } = &choice {
                self.held.remove(msg);
            }
            self.apply(choice)?;
            moved = true;
        }
        Err(format!(
            "the upstream link still moves after {STEPS_MAX} steps"
        ))
    }

    /// Moves the world's clock to `target`: every deadline on the way by `Tick` (the
    /// upstream driven after each), then the rest by `Advance`. A call held until a
    /// time on the way is released when the clock passes it.
    pub(super) fn move_world_to(&mut self, target: Millis) -> Result<(), String> {
        for _ in 0..STEPS_MAX {
            self.drive_link()?;
            let deadline = self.world.next_deadline();
            let release = self.next_release();
            let Some(next) = deadline.into_iter().chain(release).min() else {
                break;
            };
            if next > target {
                break;
            }
            if deadline == Some(next) {
                self.apply(Choice::Tick)?;
            } else {
                self.apply(Choice::Advance(next.since(self.world.now)))?;
            }
        }
        if self.world.now < target {
            self.apply(Choice::Advance(target.since(self.world.now)))?;
        }
        Ok(())
    }
}
