//! A client that went away before its answer: the answer is lost, and under the real
//! clock the hang-up is the client's timeout on the wire (TIMEOUT-01).

use super::Sandbox;
use payhub_model::event::{Event, What};
use payhub_model::{Millis, RequestId};

impl Sandbox {
    /// The client of a pending exchange went away: its answer is lost (now, if it is in
    /// flight, or when it is). `at` (edge time, `--clock real` only: under the manual
    /// clock a hang-up's time says nothing of how long the client waited) records the
    /// hang-up as the client's timeout (`TimedOut`, TIMEOUT-01).
    pub fn abandon(&mut self, id: RequestId, at: Option<Millis>) {
        let Some(x) = self.pending.iter_mut().find(|x| x.id == id) else {
            return self.reap();
        };
        x.abandoned = true;
        let node = super::node_of(x.request.api_key);
        if let Some(at) = at {
            let at = at.since(self.epoch).max(self.world.now);
            // The session's clock is brought to the hang-up first, so the answer lost
            // with it comes after it in the stream (`judge` reads the stream in order).
            if let Err(e) = self.move_world_to(at) {
                self.errors.push(e);
            }
            let what = What::TimedOut { node, id };
            let event = Event { at, what };
            self.record.trace_for_next_step().record(event);
        }
        self.reap();
    }

    /// Loses the answers in flight of abandoned exchanges.
    pub(super) fn reap(&mut self) {
        let abandoned: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|x| x.abandoned)
            .map(|x| x.id)
            .collect();
        for id in abandoned {
            if let Some((answer, response)) = super::upstream::answer_in_flight(&self.world, id)
                && let Err(e) = self.finish(id, answer, response)
            {
                self.errors.push(e);
            }
        }
    }
}
