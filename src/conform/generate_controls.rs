//! The generator's control rounds: the merchant rate-limited and the channel paused,
//! each switched back off (RATE-01, RATE-02, RATE-04, RATE-05).

use super::*;

impl Gen<'_> {
    /// The merchant rate-limited (RATE-01, RATE-02): a create and a query answered 429
    /// and not executed; once the limit is off, the same create under the same key
    /// executes (the 429 bound nothing).
    pub(super) fn rate_limited(&mut self) -> Vec<Round> {
        let merchant = if self.has(3) && self.rng.chance(250) {
            2
        } else {
            1
        };
        let key_of = if merchant == 2 { 3 } else { 1 };
        let card = Some(self.card());
        let m = Made {
            key_of,
            ..self.new_create(card)
        };
        if let Some(last) = self.made.last_mut() {
            last.key_of = key_of;
        }
        let switch = |on| Switch::RateLimit { merchant, on };
        self.switched(switch(true), m, switch(false))
    }

    /// `on`, the create of `m` and a query of it or its create refused, `off`, and the
    /// create of `m` again. The refused create lacks its Idempotency-Key (KEY-07): while
    /// a switch is on, two refusals apply, and which one wins is the platform's
    /// (A-REFUSAL-ORDER).
    fn switched(&mut self, on: Switch, m: Made, off: Switch) -> Vec<Round> {
        let first = self.create(m);
        let then = if self.rng.chance(400) {
            self.req(
                m.key_of,
                KeyUse::Missing,
                Op::FindPayment { order: m.order },
            )
        } else {
            Req {
                key: KeyUse::Missing,
                ..self.create(m)
            }
        };
        let again = self.create(m);
        let send = |r| Round::Send(vec![r]);
        let (on, off) = (Round::Control(on), Round::Control(off));
        vec![on, send(first), send(then), off, send(again)]
    }

    /// The channel paused (RATE-04, RATE-05): a new create (or a confirm of a Payment
    /// made before) answered 503 and not accepted; once resumed, the same request
    /// under the same key executes.
    pub(super) fn paused(&mut self) -> Vec<Round> {
        let (on, off) = (Switch::Pause { on: true }, Switch::Pause { on: false });
        if self.rng.chance(300) {
            let n = self.new_create(None);
            let made = self.create(n);
            let key = self.key();
            let card = self.card();
            let confirm = self.confirm(key, n.order, card);
            let send = |r| Round::Send(vec![r]);
            let (on, off) = (Round::Control(on), Round::Control(off));
            return vec![send(made), on, send(confirm), off, send(confirm)];
        }
        let card = Some(self.card());
        let m = self.new_create(card);
        self.switched(on, m, off)
    }
}
