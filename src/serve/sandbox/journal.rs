//! The session's merchant journal ([`crate::serve::journal`]): posted lines kept, and the
//! verdict's facts and wire side with them folded in, and the events export's end.

use super::Sandbox;
use crate::serve::journal::{Journal, Refused};
use crate::serve::record::WireSnapshot;
use payhub_model::event::Event;
use payhub_model::{Environment, MerchantId};
use payhub_properties::Facts;
use payhub_properties::verdict::WireSide;

/// The session as a verdict judges it ([`Sandbox::held`]).
pub struct Held {
    facts: payhub_model::Shared<Facts>,
    journal: Vec<Event>,
    wire: WireSnapshot,
}

impl Held {
    /// The facts and the wire side the verdict judges, as the session held them when
    /// the snapshot was taken.
    pub fn judged(self) -> (Facts, WireSide) {
        crate::serve::journal::fold(&self.journal, &self.facts, self.wire.side())
    }
}

impl Sandbox {
    /// `POST /__sandbox/journal`: merchant `merchant`'s (test environment) lines, kept
    /// at the session's time, or all refused.
    pub fn post_journal(&mut self, merchant: u32, body: &str) -> Result<usize, Refused> {
        let owner = (MerchantId(merchant), Environment::Test);
        let at = self.world.now;
        let facts = &self.world.facts;
        self.journal.post(at, owner, body, &self.orders, facts)
    }

    /// The journal posted so far.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// What the verdict judges (the world's facts and the record's wire side, with the
    /// journal folded in), taken under the session's lock without copying
    /// what the session folded (the world's facts share their maps; the wire side is
    /// shared until [`Held::judged`] copies it): the session keeps answering while a
    /// verdict is judged.
    pub fn held(&self) -> Held {
        let end = self.record.last_at();
        Held {
            facts: self.world.facts.clone(),
            journal: self.journal.events(end, &self.world.facts),
            wire: self.record.wire_snapshot(),
        }
    }

    /// The journal's events as the events export ends with them (JSON Lines).
    pub fn journal_jsonl(&self) -> String {
        let end = self.record.last_at();
        let mut s = String::new();
        for e in self.journal.events(end, &self.world.facts) {
            crate::serve::record::push_line(&mut s, &e);
        }
        s
    }
}
