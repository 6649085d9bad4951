//! Generation from the model: a seed → a case of 2 to 7 rounds over the contract's
//! endpoints, the same seed always the same case (docs/conform.md, "Generation": the
//! moves are the checker presets' alphabets in request form). Each request gets a proxy
//! fault with probability `fault_rate`.

use super::case::{Case, Fault, KeyUse, Op, Req, Round, Switch};
use super::profile::CardOutcome;
use payhub_model::Millis;
use payhub_model::splitmix::splitmix64;

/// What the generator may use.
#[derive(Clone, Debug)]
pub struct Alphabet {
    pub outcomes: Vec<CardOutcome>,
    /// Model keys the profile has (1 always).
    pub keys: Vec<u32>,
    pub clock: bool,
    /// The profile can switch the target's rate limit (`controls.rate_limit`).
    pub rate_limit: bool,
    /// The profile can pause the target's channel (`controls.pause`).
    pub pause: bool,
    /// The request shapes added for targets the model does not describe exactly (not
    /// `strict`): a checkout session under a new key for an existing order (CKO-01), an
    /// order lookup in another letter case. A strict target keeps the cases it always
    /// had (the sandbox's kill matrix is measured on them).
    pub shapes: bool,
    /// The target has a second key for ak_1 (rotation): replays are also sent with it.
    pub rotation: bool,
    /// Proxy faults, per request, in thousandths.
    pub fault_rate: u16,
}

struct Rng(u64, u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.1 += 1;
        splitmix64(self.0 ^ self.1.rotate_left(29))
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, per_mille: u16) -> bool {
        self.below(1000) < per_mille as usize
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
}

/// A create the case made: its key, order, body.
#[derive(Clone, Copy)]
struct Made {
    key_of: u32,
    key: u8,
    order: u8,
    amount: i64,
    currency: &'static str,
    card: Option<CardOutcome>,
}

struct Gen<'a> {
    rng: Rng,
    a: &'a Alphabet,
    made: Vec<Made>,
    keys: u8,
    orders: u8,
    refunds: u8,
    /// The order each refund number was first asked for.
    refund_orders: Vec<u8>,
}

impl Gen<'_> {
    fn key(&mut self) -> u8 {
        self.keys += 1;
        self.keys
    }
    fn order(&mut self) -> u8 {
        self.orders += 1;
        self.orders
    }
    fn card(&mut self) -> CardOutcome {
        if self.rng.chance(500) {
            CardOutcome::Approve
        } else {
            self.rng.pick(&self.a.outcomes)
        }
    }
    fn has(&self, k: u32) -> bool {
        self.a.keys.contains(&k)
    }
    fn req(&mut self, key_of: u32, key: KeyUse, op: Op) -> Req {
        let mut r = Req::new(key_of, key, op);
        if self.rng.chance(self.a.fault_rate) {
            r.fault = match self.rng.below(20) {
                0..=7 => Fault::ResetAfter,
                8..=11 => Fault::ResetBefore,
                12..=16 => Fault::Duplicate,
                _ => Fault::Hold(20),
            };
        }
        r
    }
    /// A POST under a new key slot, as `ak_1`.
    fn new_key(&mut self, op: Op) -> Req {
        let key = self.key();
        self.req(1, KeyUse::Slot(key), op)
    }
    /// A confirm of order slot `order` with `card` under key slot `key`, as `ak_1`.
    fn confirm(&mut self, key: u8, order: u8, card: CardOutcome) -> Req {
        self.req(1, KeyUse::Slot(key), Op::Confirm { order, card })
    }

    /// A GET (no key), as `ak_1`.
    fn get(&mut self, op: Op) -> Req {
        self.req(1, KeyUse::Missing, op)
    }
    fn create(&mut self, m: Made) -> Req {
        self.req(
            m.key_of,
            KeyUse::Slot(m.key),
            Op::Create {
                order: m.order,
                amount: m.amount,
                currency: m.currency,
                card: m.card,
            },
        )
    }
    fn new_create(&mut self, card: Option<CardOutcome>) -> Made {
        let m = Made {
            key_of: 1,
            key: self.key(),
            order: self.order(),
            amount: 10000,
            currency: "USD",
            card,
        };
        self.made.push(m);
        m
    }
    fn old(&mut self) -> Option<Made> {
        (!self.made.is_empty()).then(|| self.made[self.rng.below(self.made.len())])
    }

    /// One round.
    fn round(&mut self) -> Vec<Round> {
        let one = |r: Req| vec![Round::Send(vec![r])];
        loop {
            let old = self.old();
            // The control moves only for a profile that has controls: a profile without
            // them keeps the cases it always had.
            let controls = 2 * usize::from(self.a.rate_limit || self.a.pause);
            let shapes = 4 * usize::from(self.a.shapes);
            let roll = self.rng.below(34 + controls + shapes);
            // The added shapes take the rolls after the controls'.
            let roll = match roll.checked_sub(34 + controls) {
                Some(extra) => 100 + extra,
                None => roll,
            };
            let r = match (roll, old) {
                (0..=4, _) | (_, None) => {
                    let card = Some(self.card());
                    let m = self.new_create(card);
                    one(self.create(m))
                }
                (5 | 6, Some(m)) => one(self.create(m)),
                (7, Some(m)) => {
                    let card = Some(self.card());
                    one(self.create(Made { card, ..m }))
                }
                (8, Some(mut m)) => {
                    if self.rng.chance(500) {
                        m.amount += 1;
                    } else {
                        m.currency = "EUR";
                    }
                    one(self.create(m))
                }
                (9, Some(m)) => {
                    let key = self.key();
                    one(self.create(Made { key, ..m }))
                }
                (10, _) => {
                    let m = self.new_create(None);
                    one(self.create(m))
                }
                (11 | 12, Some(m)) => {
                    let card = self.card();
                    let key = if self.rng.chance(300) {
                        m.key
                    } else {
                        self.key()
                    };
                    one(self.confirm(key, m.order, card))
                }
                (13, Some(m)) => one(self.new_key(Op::Cancel { order: m.order })),
                (14, _) => {
                    let key = self.key();
                    let order = self.order();
                    let s = self.req(1, KeyUse::Slot(key), Op::session(order));
                    let again = Req {
                        fault: Fault::None,
                        ..s
                    };
                    if self.rng.chance(500) {
                        one(s)
                    } else {
                        vec![Round::Send(vec![s, again])]
                    }
                }
                (15 | 16, Some(m)) => {
                    let mut paid = Vec::new();
                    let (refund, m) = if self.refunds > 0 && self.rng.chance(500) {
                        // The number again, for a second Payment, paid (made now if none
                        // is): one refund number, two Payments (UNIQ-04, `refund-no:`).
                        let first = self.refund_orders[usize::from(self.refunds) - 1];
                        let approved = Some(CardOutcome::Approve);
                        let mut made = self.made.iter().rev().copied();
                        let other = made.find(|x| x.order != first && x.card == approved);
                        let other = other.unwrap_or_else(|| {
                            let n = self.new_create(approved);
                            paid.push(self.create(n));
                            n
                        });
                        (self.refunds, other)
                    } else {
                        self.refunds += 1;
                        self.refund_orders.push(m.order);
                        (self.refunds, m)
                    };
                    let amount = if self.rng.chance(200) {
                        m.amount + 1
                    } else {
                        m.amount / 2
                    };
                    let op = Op::Refund {
                        order: m.order,
                        refund,
                        amount,
                    };
                    let first = self.new_key(op);
                    if self.rng.chance(400) {
                        // The same refund number again under a new key (UNIQ-04).
                        let again = self.new_key(op);
                        seq([paid, vec![first, again]].concat())
                    } else {
                        seq([paid, vec![first]].concat())
                    }
                }
                (17, Some(m)) => {
                    let key_of = if self.has(3) && self.rng.chance(300) {
                        3
                    } else {
                        1
                    };
                    one(self.req(key_of, KeyUse::Missing, Op::GetPayment { order: m.order }))
                }
                (18, Some(m)) => one(self.get(Op::FindPayment { order: m.order })),
                (19, _) if self.refunds > 0 => {
                    let refund = 1 + self.rng.below(self.refunds as usize) as u8;
                    let op = if self.rng.chance(500) {
                        Op::GetRefund { refund }
                    } else {
                        Op::FindRefund { refund }
                    };
                    one(self.get(op))
                }
                (20, _) => {
                    // A request the contract rejects, then its corrected retry.
                    let good = self.new_create(Some(CardOutcome::Approve));
                    let (key, order) = (good.key, good.order);
                    let bad = match self.rng.below(5) {
                        0 => self.req(1, KeyUse::Missing, Op::approved(order)),
                        1 => self.req(1, KeyUse::TooLong, Op::approved(order)),
                        2 => self.req(1, KeyUse::Wide(key), Op::approved(order)),
                        3 if self.has(4) => self.create(Made { key_of: 4, ..good }),
                        _ => self.create(Made {
                            currency: "XXX",
                            ..good
                        }),
                    };
                    let fixed = self.create(good);
                    if matches!(bad.key, KeyUse::Wide(_)) {
                        // A key a few non-ASCII characters long, on a new order.
                        let order = self.order();
                        let key = self.key();
                        let accented = self.req(1, KeyUse::Accented(key), Op::approved(order));
                        seq(vec![accented, bad, fixed])
                    } else {
                        seq(vec![bad, fixed])
                    }
                }
                (21, Some(m)) => {
                    // One key across merchants, environments, endpoints.
                    let other: Vec<u32> = [2, 3].into_iter().filter(|k| self.has(*k)).collect();
                    match self.rng.below(4) {
                        0 if !other.is_empty() => {
                            let key_of = self.rng.pick(&other);
                            one(self.create(Made { key_of, ..m }))
                        }
                        1 => {
                            let order = self.order();
                            one(self.req(1, KeyUse::Slot(m.key), Op::session(order)))
                        }
                        _ => {
                            // One key on two Payments' confirm (SCOPE-01: the path is
                            // part of the scope).
                            let n1 = self.new_create(None);
                            let n2 = self.new_create(None);
                            let (a1, a2) = (self.create(n1), self.create(n2));
                            let card = self.card();
                            let key = self.key();
                            let c1 = self.confirm(key, n1.order, card);
                            let c2 = self.confirm(key, n2.order, card);
                            seq(vec![a1, a2, c1, c2])
                        }
                    }
                }
                (22..=25, _) => {
                    // Requests at once.
                    let card = Some(self.card());
                    let m = self.new_create(card);
                    let first = self.create(m);
                    let second = match self.rng.below(4) {
                        0 => self.create(Made {
                            amount: m.amount + 100,
                            ..m
                        }),
                        1 => {
                            let key = self.key();
                            self.create(Made { key, ..m })
                        }
                        _ => self.create(m),
                    };
                    let mut v = vec![first, second];
                    if self.rng.chance(250) {
                        v.push(self.create(m));
                    }
                    vec![Round::Send(v)]
                }
                (26 | 27, _) if self.a.clock => {
                    let by = self.rng.pick(&[
                        Millis::secs(16),
                        Millis::mins(2),
                        Millis::hours(2),
                        Millis::hours(25),
                        Millis::days(2),
                        Millis::days(8),
                    ]);
                    vec![Round::Advance(by)]
                }
                (28 | 29, Some(_)) => {
                    // Card retries of one Payment until the attempt limit.
                    let n = self.new_create(Some(CardOutcome::Decline));
                    let first = self.create(n);
                    let mut v = vec![first];
                    for _ in 0..3 {
                        let key = self.key();
                        let card = if self.rng.chance(700) {
                            CardOutcome::Decline
                        } else {
                            self.card()
                        };
                        v.push(self.confirm(key, n.order, card));
                    }
                    seq(v)
                }
                (30 | 33, _) if self.a.clock && self.rng.chance(333) => {
                    // The order number past the key's retention (RET-02, UNIQ-01), or the
                    // key within it (RET-01).
                    let n = self.new_create(Some(CardOutcome::Approve));
                    let first = self.create(n);
                    // Past the retention (8 d), or within it but past a day: the same key
                    // then replays (a record dropped early answers it as a new request).
                    let by = [Millis::days(8), Millis::hours(25), Millis::days(2)];
                    let by = self.rng.pick(&by);
                    let key = if by < Millis::days(7) || self.rng.chance(300) {
                        n.key
                    } else {
                        self.key()
                    };
                    let again = self.create(Made { key, ..n });
                    apart(first, by, again)
                }
                (30 | 33, _) if self.a.clock && self.rng.chance(500) => {
                    // A card retry after expires_at (CARD-RETRY, EXPIRY-01).
                    let card = if self.rng.chance(500) {
                        None
                    } else {
                        Some(CardOutcome::Decline)
                    };
                    let n = self.new_create(card);
                    let first = self.create(n);
                    let retry = self.new_key(Op::Confirm {
                        order: n.order,
                        card: CardOutcome::Approve,
                    });
                    apart(first, Millis::hours(25), retry)
                }
                (30 | 33, _) if self.a.clock => {
                    // An unanswered charge past the automatic query window (RES-03).
                    let n = self.new_create(Some(CardOutcome::Silent));
                    let first = self.create(n);
                    let get = self.get(Op::GetPayment { order: n.order });
                    let by = [Millis::mins(30), Millis::hours(2), Millis::hours(25)];
                    let by = self.rng.pick(&by);
                    apart(first, by, get)
                }
                (100, Some(m)) if m.currency == "USD" => {
                    // CKO-01: a new key, the same order number, amount and currency: a new
                    // session for the same Payment, not a conflict.
                    let key = self.key();
                    let (order, amount) = (m.order, m.amount);
                    one(self.req(m.key_of, KeyUse::Slot(key), Op::Session { order, amount }))
                }
                (101, Some(m)) => one(self.get(Op::FindPaymentOtherCase { order: m.order })),
                (102, Some(m)) if m.key_of == 1 && self.a.rotation => {
                    // The same request under the rotated API key: the same scope (SCOPE-01).
                    let mut r = self.create(m);
                    r.rotation = 1;
                    one(r)
                }
                (103, Some(m)) => {
                    let key = self.key();
                    let card = self.card();
                    let op = Op::ConfirmWithAmount {
                        order: m.order,
                        card,
                        amount: m.amount * 2,
                    };
                    one(self.req(1, KeyUse::Slot(key), op))
                }
                (34, _) if self.a.rate_limit => self.rate_limited(),
                (35, _) if self.a.pause => self.paused(),
                (34 | 35, _) => continue,
                (31 | 32, _) => {
                    // Cancel of an unfinished Payment, then its status (CANCEL-02); with
                    // card G the acquirer answers the cancel late: 202 (A-CANCEL).
                    // S12: a cancel of a requires_action charge the acquirer does not
                    // confirm in time.
                    use CardOutcome::*;
                    let mut cards = vec![Slow, Silent, RequireAction];
                    let late = [SlowCancel, RequiresActionCancelUnconfirmed];
                    cards.extend(late.into_iter().filter(|c| self.a.outcomes.contains(c)));
                    let card = self.rng.pick(&cards);
                    let n = self.new_create(Some(card));
                    let first = self.create(n);
                    let cancel = self.new_key(Op::Cancel { order: n.order });
                    let get = self.get(Op::GetPayment { order: n.order });
                    seq(vec![first, cancel, get])
                }
                _ => continue,
            };
            return r;
        }
    }
}

// The control rounds: the merchant rate-limited and the channel paused, each switched
// back off (RATE-01, RATE-02, RATE-04, RATE-05).
impl Gen<'_> {
    /// The merchant rate-limited (RATE-01, RATE-02): a create and a query answered 429
    /// and not executed; once the limit is off, the same create under the same key
    /// executes (the 429 bound nothing).
    fn rate_limited(&mut self) -> Vec<Round> {
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
    fn paused(&mut self) -> Vec<Round> {
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

/// What the profile cannot do becomes what it can: a card it has no outcome for is
/// the approving one, a key it has not is `ak_1`.
fn sanitize(r: &mut Req, a: &Alphabet) {
    if let Op::Create { card: Some(c), .. } | Op::Confirm { card: c, .. } = &mut r.op
        && !a.outcomes.contains(c)
    {
        *c = CardOutcome::Approve;
    }
    if !a.keys.contains(&r.key_of) {
        r.key_of = 1;
    }
}

/// A request, the target's clock moved `by`, then another.
fn apart(first: Req, by: Millis, then: Req) -> Vec<Round> {
    vec![
        Round::Send(vec![first]),
        Round::Advance(by),
        Round::Send(vec![then]),
    ]
}

/// Requests sent one after another: a round each.
fn seq(v: Vec<Req>) -> Vec<Round> {
    v.into_iter().map(|r| Round::Send(vec![r])).collect()
}

/// The case of `seed`.
pub fn generate(seed: u64, a: &Alphabet) -> Case {
    let mut g = Gen {
        rng: Rng(splitmix64(seed ^ 0xc0f0_4d11), 0),
        a,
        made: Vec::new(),
        keys: 0,
        orders: 0,
        refunds: 0,
        refund_orders: Vec::new(),
    };
    let n = 2 + g.rng.below(6);
    let mut rounds = Vec::new();
    while rounds.len() < n {
        rounds.extend(g.round());
    }
    for round in &mut rounds {
        if let Round::Send(reqs) = round {
            for r in reqs {
                sanitize(r, a);
            }
        }
    }
    Case { seed, rounds }
}

#[cfg(test)]
#[path = "tests_generate.rs"]
mod tests;
