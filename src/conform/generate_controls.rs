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
        let first = self.create(m);
        let mut rounds = vec![
            Round::Control(Switch::RateLimit { merchant, on: true }),
            Round::Send(vec![first]),
        ];
        if self.rng.chance(400) {
            let find = self.req(key_of, KeyUse::Missing, Op::FindPayment { order: m.order });
            rounds.push(Round::Send(vec![find]));
        } else {
            rounds.push(Round::Send(vec![self.refused(key_of, m)]));
        }
        rounds.push(Round::Control(Switch::RateLimit {
            merchant,
            on: false,
        }));
        rounds.push(Round::Send(vec![self.create(m)]));
        rounds
    }

    /// The create of `m` without its Idempotency-Key (KEY-07): while a switch is on,
    /// two refusals apply, and which one wins is the platform's (A-REFUSAL-ORDER).
    fn refused(&mut self, key_of: u32, m: Made) -> Req {
        Req {
            key: KeyUse::Missing,
            ..self.create(Made { key_of, ..m })
        }
    }

    /// The channel paused (RATE-04, RATE-05): a new create (or a confirm of a Payment
    /// made before) answered 503 and not accepted; once resumed, the same request
    /// under the same key executes.
    pub(super) fn paused(&mut self) -> Vec<Round> {
        let on = Round::Control(Switch::Pause { on: true });
        let off = Round::Control(Switch::Pause { on: false });
        if self.rng.chance(300) {
            let n = self.new_create(None);
            let made = self.create(n);
            let key = self.key();
            let card = self.card();
            let confirm = self.confirm(key, n.order, card);
            return vec![
                Round::Send(vec![made]),
                on,
                Round::Send(vec![confirm]),
                off,
                Round::Send(vec![confirm]),
            ];
        }
        let card = Some(self.card());
        let m = self.new_create(card);
        let first = self.create(m);
        let mut rounds = vec![on, Round::Send(vec![first])];
        if self.rng.chance(400) {
            let find = self.get(Op::FindPayment { order: m.order });
            rounds.push(Round::Send(vec![find]));
        } else {
            rounds.push(Round::Send(vec![self.refused(1, m)]));
        }
        rounds.push(off);
        rounds.push(Round::Send(vec![self.create(m)]));
        rounds
    }
}
