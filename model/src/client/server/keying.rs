//! Keys: derived (GEN-01) or random (GEN-04), persisted before the request leaves
//! (GEN-06), and read back.

use super::{Cx, MerchantServer, Op};
use crate::client::db::MerchantDb;
use crate::client::decision::Decision;
use crate::client::keys::{self, KeyPurpose, Keys};
use crate::rules::Rule;
use crate::text::Text;

impl MerchantServer {
    /// The rule behind a new key: GEN-01 derived, GEN-04 random.
    pub(in crate::client) fn key_rule(&self) -> Rule {
        match self.config.policy.keys {
            Keys::Deterministic => Rule::DeterministicKeys,
            Keys::RandomPersisted => Rule::RandomKeyPersistedFirst,
        }
    }

    /// A key for a new business submission: derived (GEN-01) or random (GEN-04).
    pub(in crate::client) fn new_key(
        &self,
        cx: &mut Cx,
        purpose: KeyPurpose,
        number: &str,
        seq: u32,
    ) -> Text {
        match self.config.policy.keys {
            Keys::Deterministic => keys::derived(purpose, number, seq),
            Keys::RandomPersisted => cx.dice.uuid(),
        }
    }

    /// Records a new key: in the database, which the caller writes (GEN-06) — or, under
    /// `KeyNotPersisted` with random keys, in memory only. Returns what the database holds.
    pub(in crate::client) fn keep_key(
        &mut self,
        cx: &mut Cx,
        op: &Op,
        key: Text,
        seq: u32,
        rule: Rule,
    ) -> Option<Text> {
        if let Some(pattern) = self.config.policy.key_kept_in_memory() {
            self.memory.unpersisted.insert(op.clone(), key);
            cx.depart(op.subject(), pattern);
            return None;
        }
        cx.decide(
            op.subject(),
            Decision::KeyPersisted {
                key: key.clone(),
                seq,
            },
            rule,
        );
        Some(key)
    }

    /// The key of an order's current submission, wherever it is kept.
    pub(in crate::client) fn submission_key(&self, cx: &mut Cx, order: &str) -> Text {
        let rec = cx.db.order(order).expect("looked up");
        let op = Op::submit(order, rec.submission.seq);
        self.stored_key(cx.db, &op)
            .unwrap_or_else(|| cx.dice.uuid())
    }

    /// The key of a keyed op as stored: in the database, else in this process's memory.
    pub(in crate::client) fn stored_key(&self, db: &MerchantDb, op: &Op) -> Option<Text> {
        let in_db = match op {
            Op::Submit { order, seq } => db
                .order(order)
                .filter(|o| o.submission.seq == *seq)
                .and_then(|o| o.submission.key.clone()),
            Op::Cancel { order } => db
                .order(order)
                .and_then(|o| o.cancel.as_ref())
                .and_then(|c| c.key.clone()),
            Op::Refund { refund } => db.refund(refund).and_then(|r| r.key.clone()),
            _ => None,
        };
        in_db.or_else(|| self.memory.unpersisted.get(op).cloned())
    }
}
