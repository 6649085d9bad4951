//! The clock as a fault domain: time jumps to the next deadline (`Tick`) or by a fixed
//! amount (`Advance`), firing the platform's timers and the clients' deadlines due on
//! the way, in a fixed order: the platform's timer, then clients' timeouts by exchange,
//! then clients' wakes by node.

use crate::config::WorldConfig;
use crate::sink::Sink;
use crate::world::{ApplyError, World};
use payhub_model::event::What;
use payhub_model::{Millis, PlatformInput};

impl World {
    /// Time jumps to the next deadline.
    pub(crate) fn tick(
        &mut self,
        config: &WorldConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), ApplyError> {
        let at = self.next_deadline().ok_or_else(ApplyError::not_enabled)?;
        self.advance_to(config, at, sink)
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
        while let Some(at) = self.next_deadline() {
            if at > until {
                break;
            }
            self.advance_to(config, at, sink)?;
        }
        self.now = until;
        self.note(sink, || What::Clock { to: until });
        Ok(())
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
