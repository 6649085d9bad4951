//! The session's merchant journal ([`crate::serve::journal`]): posted lines kept, and the
//! verdict's facts and wire side with them folded in.

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
        self.journal
            .apply(&self.world.facts, self.record.wire_side())
    }
}
