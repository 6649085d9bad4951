//! What the facts keep of one idempotency scope while RET-01's window lasts ([`Scope`]):
//! its first request, its execution, its first request closed, and the rare rest (a run
//! of refusals, an early answer, a Retry-After, its execution's other fields) in a box of
//! its own: one entry of one map where five maps took one each. Each record is forgotten
//! on its own clock, as in the maps it replaces; the entry when none is left.

use super::{Breach, Rec};
use payhub_model::Millis;

#[derive(Clone, Debug, Default)]
pub(super) struct Scope {
    /// GEN-05: its first request, whose parameters the key is bound to.
    pub(super) first: Option<Rec>,
    /// REPLAY-01/02, CONFLICT-01: its first execution (answered 2xx).
    pub(super) executed: Option<Rec>,
    /// RATE-01, RATE-04, REJECT-01: its first request closed ([`super::refusals`]).
    pub(super) closed_first: Option<Rec>,
    pub(super) rare: Option<Box<Rare>>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Rare {
    /// While every request closed in the scope was refused: the pattern an answer
    /// showing an earlier execution would witness.
    pub(super) refused: Option<Breach>,
    /// The fingerprint of its execution's body fields the contract does not name.
    pub(super) other_fields: Option<u64>,
    /// CONC-02: the first answer of new business, or 409 idempotency_conflict, before
    /// any execution (a concurrent request of the key may still execute), with the
    /// fingerprint of its other fields.
    pub(super) early: Option<(Rec, Option<u64>)>,
    /// RATE-03: a 429 with Retry-After holds the scope until then.
    pub(super) retry_after: Option<(Millis, Rec)>,
}

const _: () = assert!(size_of::<Scope>() == 32);

impl Scope {
    pub(super) fn rare(&self) -> Option<&Rare> {
        self.rare.as_deref()
    }

    pub(super) fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_default()
    }

    /// Its execution, with the fingerprint of its other fields.
    pub(super) fn execution(&self) -> Option<(Rec, Option<u64>)> {
        let other_fields = self.rare().and_then(|r| r.other_fields);
        Some((self.executed.clone()?, other_fields))
    }

    pub(super) fn set_execution(&mut self, seen: Rec, other_fields: Option<u64>) {
        self.executed = Some(seen);
        if other_fields.is_some() || self.rare.is_some() {
            self.rare_mut().other_fields = other_fields;
        }
    }

    pub(super) fn set_refused(&mut self, refused: Option<Breach>) {
        if refused.is_some() || self.rare.is_some() {
            self.rare_mut().refused = refused;
        }
    }

    /// Forgets the records sent before `window` and a Retry-After ended by `now`;
    /// whether any is left.
    pub(super) fn prune(&mut self, window: Millis, now: Millis) -> bool {
        for held in [&mut self.first, &mut self.executed, &mut self.closed_first] {
            held.take_if(|x| x.sent < window);
        }
        if let Some(rare) = &mut self.rare {
            rare.other_fields = rare.other_fields.filter(|_| self.executed.is_some());
            rare.refused = rare.refused.filter(|_| self.closed_first.is_some());
            rare.early.take_if(|(x, _)| x.sent < window);
            rare.retry_after.take_if(|(until, _)| *until < now);
            if (rare.early.is_none() && rare.retry_after.is_none())
                && (rare.refused.is_none() && rare.other_fields.is_none())
            {
                self.rare = None;
            }
        }
        let held = [&self.first, &self.executed, &self.closed_first];
        held.iter().any(|x| x.is_some()) || self.rare.is_some()
    }
}
