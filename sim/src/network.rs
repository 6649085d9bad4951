//! The network between merchants and the platform, and the upstream link between the
//! platform and the acquirer.
//!
//! A message in flight can be delivered, dropped or duplicated, in any order (so
//! reordering and arbitrary delay are the order in which the world's driver picks them).
//! Nothing here decides: the world lists what each message may do as choices.

use payhub_model::{ApiRequest, ApiResponse, RequestId, UpstreamCall, UpstreamReply, WebhookEvent};
use payhub_model::{CowMap, Shared};
use serde::Serialize;

/// A message id, unique within a run (`m7`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct MsgId(pub u32);

impl std::fmt::Display for MsgId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "m{}", self.0)
    }
}

/// Who sends or receives (`merchant-0`, `platform`, `acquirer`): the event stream's nodes.
pub use payhub_model::event::Node;

/// What travels between merchants and the platform.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Payload {
    /// A request from merchant `from` as HTTP exchange `id`.
    Request {
        from: u8,
        id: RequestId,
        request: ApiRequest,
    },
    /// The response to exchange `id`, to merchant `to`.
    Response {
        to: u8,
        id: RequestId,
        response: ApiResponse,
    },
    /// A webhook event to merchant `to`.
    Webhook { to: u8, event: WebhookEvent },
}

impl Payload {
    pub fn source(&self) -> Node {
        match self {
            Payload::Request { from, .. } => Node::Merchant(*from),
            Payload::Response { .. } | Payload::Webhook { .. } => Node::Platform,
        }
    }
}

/// What travels on the upstream link.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UpstreamMsg {
    Call(UpstreamCall),
    Reply(UpstreamReply),
}

/// Messages in flight, by id. Ordered, so that listing them is deterministic.
///
/// Each message sits in a [`Shared`] box: a step that takes one message out copies the
/// map's pointers, not every other message's request body (the checker's case), and a
/// message is hashed once in its life, not whenever the map around it changes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct InFlight<T> {
    next: u32,
    msgs: CowMap<MsgId, Shared<T>>,
}

/// Takes the one `u64` a [`Shared`] box hashes as (its cached digest).
#[derive(Default)]
struct Last(u64);

impl std::hash::Hasher for Last {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl<T: std::hash::Hash> InFlight<T> {
    /// Hashes the messages in flight as a multiset, without their ids or the next id:
    /// two states whose messages differ only in the ids the order of sending gave them
    /// hash alike. Sound because a message id appears nowhere else in a world (not in
    /// its facts, its clients, its platform): renaming the ids of one state gives the
    /// other, and every choice names its message by id, so both have the same futures
    /// up to that renaming (the checker's canonical form, `World::hash_canonical`).
    pub fn hash_unnamed<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut digests: smallvec::SmallVec<[u64; 8]> = self
            .msgs
            .iter()
            .map(|(_, m)| {
                let mut last = Last::default();
                std::hash::Hash::hash(m, &mut last);
                last.0
            })
            .collect();
        digests.sort_unstable();
        state.write_usize(digests.len());
        for d in digests {
            state.write_u64(d);
        }
    }
}

impl<T> Default for InFlight<T> {
    fn default() -> Self {
        InFlight {
            next: 0,
            msgs: CowMap::new(),
        }
    }
}

impl<T: Clone> InFlight<T> {
    /// Puts a message in flight and returns its id.
    pub fn send(&mut self, msg: T) -> MsgId {
        self.next += 1;
        let id = MsgId(self.next);
        self.msgs.insert(id, Shared::new(msg));
        id
    }

    /// Takes a message out of flight (to deliver or drop it), still in its shared box:
    /// the states before this one hold the same box, so unboxing it would mean a deep
    /// clone.
    pub fn take(&mut self, id: MsgId) -> Option<Shared<T>> {
        self.msgs.remove(&id)
    }

    /// The message, shared (a reference-count increment).
    pub fn get_shared(&self, id: MsgId) -> Option<Shared<T>> {
        self.msgs.get(&id).cloned()
    }

    /// A second copy of a message in flight, under a new id.
    pub fn duplicate(&mut self, id: MsgId) -> Option<MsgId> {
        let copy = Shared::clone(self.msgs.get(&id)?);
        self.next += 1;
        let dup = MsgId(self.next);
        self.msgs.insert(dup, copy);
        Some(dup)
    }

    pub fn get(&self, id: MsgId) -> Option<&T> {
        self.msgs.get(&id).map(|m| &**m)
    }

    pub fn iter(&self) -> impl Iterator<Item = (MsgId, &T)> {
        self.msgs.iter().map(|(id, m)| (*id, &**m))
    }

    pub fn len(&self) -> usize {
        self.msgs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    /// Replaces each message `f` gives a replacement for, under the same id (the
    /// checker's canonical form renames a copy it only hashes: `canonical.rs`).
    pub(crate) fn replace_each(&mut self, f: impl Fn(&T) -> Option<T>) {
        let changed: Vec<(MsgId, T)> = self
            .msgs
            .iter()
            .filter_map(|(id, m)| f(m).map(|m| (*id, m)))
            .collect();
        for (id, m) in changed {
            self.msgs.insert(id, Shared::new(m));
        }
    }

    /// Removes every message matching `pred` (a crashed server's connections).
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.msgs.retain(|_, m| keep(m));
    }
}
