//! The session's merchant journal ([`crate::serve::journal`]): posted lines kept, and the
//! verdict's facts and wire side with them folded in, and the events export's end.

use super::Sandbox;
use crate::serve::journal::{Journal, Refused};
use payhub_model::{Environment, MerchantId};
use payhub_properties::Facts;
use payhub_properties::verdict::WireSide;

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

    /// The facts and the wire side the verdict judges: the world's and the record's,
    /// with the journal folded in.
    pub fn judged(&self) -> (Facts, WireSide) {
        let end = self.record.last_at();
        self.journal
            .apply(end, &self.world.facts, self.record.wire_side())
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
