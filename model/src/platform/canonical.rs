//! The request ids the platform holds, read and renamed for the exhaustive checker's
//! canonical form (`check --reduce requests`, `payhub_sim::canonical`). Nothing here
//! steps the platform: the checker renames a copy it only hashes.
//!
//! A request id sits in three places of the platform: the exchanges it has not answered
//! (`pending`, keyed by id), the idempotency records a request is executing
//! (`RecordState::InFlight { executor }`), and the timers of a synchronous wait
//! (`Timer::SyncWait`, `Timer::WaitTimeout`). The platform never reads an id's number:
//! it compares ids, looks them up and walks them in order, so an order-preserving
//! renaming of every id commutes with each of its steps.

use super::Platform;
use super::Timer;
use super::state::RecordState;
use crate::ids::RequestId;

impl Platform {
    /// Every request id the platform holds (repeats included), to `out`.
    pub fn request_ids(&self, out: &mut impl FnMut(RequestId)) {
        self.pending.keys().for_each(|id| out(*id));
        for record in self.records.values() {
            if let RecordState::InFlight { executor } = record.state {
                out(executor);
            }
        }
        for (_, timer) in self.timers.iter() {
            if let Timer::SyncWait(id) | Timer::WaitTimeout(id) = timer {
                out(*id);
            }
        }
    }

    /// Renames every request id the platform holds by `rename` (order-preserving, for
    /// the canonical form to be one of the same platform).
    pub fn rename_requests(&mut self, rename: &impl Fn(RequestId) -> RequestId) {
        if !self.pending.is_empty() {
            self.pending = self
                .pending
                .iter()
                .map(|(id, p)| (rename(*id), p.clone()))
                .collect();
        }
        let executing =
            |r: &super::state::IdempotencyRecord| matches!(r.state, RecordState::InFlight { .. });
        if self.records.values().any(executing) {
            for record in self.records.values_mut() {
                if let RecordState::InFlight { executor } = &mut record.state {
                    *executor = rename(*executor);
                }
            }
        }
        let renames_a_timer = self
            .timers
            .iter()
            .any(|(_, t)| matches!(t, Timer::SyncWait(_) | Timer::WaitTimeout(_)));
        if renames_a_timer {
            let mut timers = crate::cow::Schedule::new();
            for (at, timer) in self.timers.iter() {
                let timer = match timer {
                    Timer::SyncWait(id) => Timer::SyncWait(rename(*id)),
                    Timer::WaitTimeout(id) => Timer::WaitTimeout(rename(*id)),
                    other => other.clone(),
                };
                timers.insert(*at, timer);
            }
            self.timers = timers;
        }
    }
}
