//! The clock as a fault domain: time jumps to the next deadline (`Tick`) or by a fixed
//! amount (`Advance`), firing the platform's timers and the clients' deadlines due on
//! the way, in a fixed order: the platform's timer, then clients' timeouts by exchange,
//! then clients' wakes by node.
//!
//! A jump is bounded whatever its length: everything pending when it starts, and
//! everything that arms on the way, settles within a horizon (the latest pending deadline
//! plus [`settle`], the longest chain of one-shot periods the platform arms). Beyond it
//! only deadlines that re-arm themselves are left (the daily manual-review query, a
//! client's status polls); their firings between the horizon and the end of the jump are
//! not replayed one by one: each is overdue and fires once, at the end. `wait 99999999d`
//! is as cheap as `wait 8d`.

use crate::config::WorldConfig;
use crate::event_fold::EventFold;
use crate::sink::Sink;
use crate::world::{ApplyError, World};
use payhub_model::event::What;
use payhub_model::{Millis, PlatformInput};

impl<F: EventFold> World<F> {
    /// Time jumps to the next deadline.
    pub(crate) fn tick(
        &mut self,
        config: &WorldConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let at = self.next_deadline().ok_or_else(ApplyError::not_enabled)?;
        self.advance_to(config, at, sink)
    }

    /// Where the clock stands after `choice`, if `choice` moves it (`Tick`, `Advance`),
    /// known before applying it: `Tick` jumps to the next deadline (never back),
    /// `Advance(d)` to `now + d`. `None` for every other choice, and for a `Tick` with
    /// nothing due (not enabled).
    pub fn clock_after(&self, choice: &crate::choice::Choice) -> Option<Millis> {
        match choice {
            crate::choice::Choice::Tick => self.next_deadline().map(|at| at.max(self.now)),
            crate::choice::Choice::Advance(d) => Some(self.now.after(*d)),
            _ => None,
        }
    }

    /// Time passes by `d`: every deadline on the way fires, in order. The waits of the
    /// configuration spend the budget; scripted ones are free.
    pub(crate) fn advance(
        &mut self,
        config: &WorldConfig,
        d: Millis,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        if config.waits.contains(&d) {
            if self.budget.waits == 0 {
                return Err(ApplyError::not_enabled());
            }
            self.budget.waits -= 1;
        }
        let until = self.now.after(d);
        let horizon = self
            .latest_deadline()
            .unwrap_or(self.now)
            .max(self.now)
            .after(settle(&config.params));
        while let Some(at) = self.next_deadline() {
            if at > until {
                break;
            }
            // Past the horizon every deadline left re-arms itself: jump to the end, where
            // each fires once and re-arms beyond it.
            let at = if at > horizon {
                let from = self.now;
                self.emit(sink, What::ClockCompressed { from, to: until });
                until
            } else {
                at
            };
            self.advance_to(config, at, sink)?;
        }
        self.now = until;
        self.note(sink, || What::Clock { to: until });
        Ok(())
    }

    /// The latest deadline pending: the platform's timers, clients' timeouts and wakes.
    fn latest_deadline(&self) -> Option<Millis> {
        let clients = self
            .servers
            .iter()
            .flatten()
            .filter_map(|s| s.poll_timeout());
        let timeouts = self.awaiting.values().map(|a| a.deadline);
        // The platform's timers are in firing order: the last is the latest (a walk over
        // them all cost every clock move time in proportion to the Payments held).
        self.platform
            .timers()
            .next_back()
            .map(|(at, _)| *at)
            .into_iter()
            .chain(clients)
            .chain(timeouts)
            .max()
    }

    fn advance_to(
        &mut self,
        config: &WorldConfig,
        at: Millis,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        self.now = self.now.max(at);
        if self.platform.next_timer().is_some_and(|t| t <= self.now) {
            self.step_platform(config, PlatformInput::Timeout, sink)?;
        }
        self.fire_client_deadlines(config, sink)
    }
}

/// How long what is pending can keep arming one-shot deadlines: the sum of the platform's
/// periods (a record's retention, a Payment's and a session's expiry, the automatic query
/// window and a manual-review re-query, every webhook re-delivery, the waits). Past it only
/// self-re-arming deadlines remain.
fn settle(p: &payhub_model::PlatformParams) -> Millis {
    let redeliveries = (0..p.webhook_redeliveries_max as u32).fold(Millis::ZERO, |sum, i| {
        sum.after(Millis::ms(
            p.webhook_redelivery_delay
                .0
                .saturating_mul(1u64 << i.min(32)),
        ))
    });
    [
        p.retention,
        p.payment_ttl,
        p.session_ttl,
        p.auto_query_window,
        p.manual_review_requery,
        p.verify_interval,
        p.sync_wait,
        p.concurrent_wait_timeout,
        redeliveries,
    ]
    .into_iter()
    .fold(Millis::ZERO, Millis::after)
}
