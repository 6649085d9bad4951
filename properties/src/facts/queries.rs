//! Answers, rules and the schedule: every (status, error code) answered, every rule that
//! decided something, and when clients queried and retried (SCHED-02, RATE-03).

use super::note_first;
use super::query_object::{self, QueryObject, ties};
use payhub_model::event::{Owner, ScopeKey, What};
use payhub_model::{
    ApiRequest, ApiResponse, CowMap, CowSet, Environment, ErrorCode, MerchantId, Method, Millis,
    RequestId, Rule, Shared, Text,
};
use serde::Serialize;

/// The queries family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Queries {
    /// Every rule that decided a response, an upstream call or a webhook (a bitset over
    /// the catalogue): the "sometimes" properties and rule coverage read it.
    pub rules_exercised: RuleSet,
    /// Every rule that led a client to send a request or to decide (coverage only: see
    /// [`Coverage`]).
    pub client_rules: Coverage,
    /// Every (status, error code) the platform answered, as a small sorted set.
    pub answers: CowSet<(u16, Option<ErrorCode>)>,
    /// The rules that decided a 202 answered to a merchant: a charge's result unknown
    /// (SyncWait, UnknownResult) or a cancel's (Cancel202KeepsStatus), read by the reach
    /// properties.
    pub rules_202: RuleSet,
    /// When clients last sent a query of one object, and the query's path: (merchant,
    /// environment, object), the object as [`QueryObject`] resolves it.
    pub last_query: CowMap<query_object::Owned, (Millis, Text)>,
    /// The ids answers tied numbers to: (merchant, environment, number) → id
    /// ([`super::query_object`]).
    pub query_aliases: CowMap<query_object::Owned, QueryObject>,
    /// The two consecutive client queries of one object sent closest together (the
    /// first such pair: a later one replaces it only when closer); SCHED-02's spacing
    /// is judged by `client-spaces-queries`.
    pub closest_queries: Option<Shared<QueryPair>>,
    /// (client node, scope) → no retry of that scope before this time: a 429's
    /// Retry-After, from when the client got it. Cleared when the node crashes.
    pub retry_not_before: CowMap<(u8, ScopeKey), Millis>,
    /// 429s with Retry-After answered to a client that awaits them and not yet delivered:
    /// exchange → (node, scope, seconds). RATE-03 binds the client from when the answer
    /// reaches it; one it never read (it timed out first, or crashed) binds nothing.
    pub rate_limited_in_flight: CowMap<RequestId, (u8, ScopeKey, u32)>,
    /// The first client request sent before its scope's Retry-After had passed.
    pub retry_after_ignored: Option<Box<EarlyRetry>>,
    /// The zoo's planted narrowing `retry_after_binds_unread_429`
    /// (`crate::Narrowing`), off in every judge: a 429 binds from when the platform
    /// answers it, read or not, as RATE-03 was judged before seed 948570.
    pub binds_unread_429: bool,
}

/// A query of `path` at `at`, after one of the same object, `last_path`, at `last`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct QueryPair {
    pub path: Text,
    pub at: Millis,
    pub last: Millis,
    pub last_path: Text,
}

impl QueryPair {
    /// The time between the two queries.
    pub fn gap(&self) -> Millis {
        self.at.since(self.last)
    }
}

/// Node `node` sent `scope`'s request at `at`; its Retry-After ended at `until`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct EarlyRetry {
    pub node: u8,
    pub scope: ScopeKey,
    pub at: Millis,
    pub until: Millis,
}

impl Queries {
    /// Whether `what` changes this family (asked before the shared facts are copied).
    pub(super) fn changes(&self, what: &What) -> bool {
        match what {
            What::Answered {
                response,
                rule,
                route,
                ..
            } => {
                !self.rules_exercised.contains(*rule)
                    || route.as_ref().is_some_and(|r| {
                        !self
                            .answers
                            .contains(&(response.status, response.error_code()))
                            || (r.awaited && response.status == 429)
                            || (response.status == 202 && !self.rules_202.contains(*rule))
                            || r.owner.is_some_and(|(m, e)| {
                                ties(&response.body).any(|(number, _)| {
                                    !self.query_aliases.contains_key(&(m, e, number))
                                })
                            })
                    })
            }
            What::UpstreamCalled { rule, .. } | What::WebhookEmitted { rule, .. } => {
                !self.rules_exercised.contains(*rule)
            }
            // A query moves its object's last query; any send may ignore a Retry-After.
            What::ClientSends {
                request,
                owner,
                held,
                rule,
                ..
            } => {
                !self.client_rules.0.contains(*rule)
                    || (!held
                        && owner.is_some()
                        && (request.endpoint.method() == Method::Get
                            || (self.retry_after_ignored.is_none()
                                && !self.retry_not_before.is_empty())))
            }
            What::ClientDecided { rule, .. } => !self.client_rules.0.contains(*rule),
            What::Crashed { node } => {
                self.retry_not_before.keys().any(|(n, _)| n == node)
                    || self
                        .rate_limited_in_flight
                        .values()
                        .any(|(n, ..)| n == node)
            }
            What::Delivered { id, .. } | What::TimedOut { id, .. } => {
                self.rate_limited_in_flight.contains_key(id)
            }
            _ => false,
        }
    }

    pub(super) fn observe(&mut self, at: Millis, what: &What) {
        match what {
            What::Answered {
                id,
                response,
                rule,
                route,
            } => {
                self.note_rule(*rule);
                let Some(route) = route else { return };
                let answer = (response.status, response.error_code());
                if !self.answers.contains(&answer) {
                    self.answers.insert(answer);
                }
                if response.status == 202 {
                    self.rules_202.insert(*rule);
                }
                if let Some((m, e)) = route.owner {
                    self.tie_numbers(m, e, &response.body);
                }
                // What the client gets: a 500 in place of the answer carries no Retry-After.
                if route.awaited && !route.edge_500 {
                    let scope = route.scope.as_ref();
                    self.on_awaited_answer(at, *id, route.merchant, scope, response);
                }
            }
            What::UpstreamCalled { rule, .. } | What::WebhookEmitted { rule, .. } => {
                self.note_rule(*rule)
            }
            What::ClientSends {
                node,
                request,
                owner,
                held,
                rule,
                ..
            } => {
                self.client_rules.0.insert(*rule);
                if !held {
                    self.on_client_send(at, *node, request, *owner);
                }
            }
            What::ClientDecided { rule, .. } => self.client_rules.0.insert(*rule),
            What::Crashed { node } => {
                self.retry_not_before.retain(|(n, _), _| n != node);
                self.rate_limited_in_flight.retain(|_, (n, ..)| n != node);
            }
            // RATE-03: the 429 reaches the client now; Retry-After counts from here.
            What::Delivered { id, to, .. } => {
                if let Some((node, scope, seconds)) = self.rate_limited_in_flight.remove(id)
                    && node == *to
                {
                    let until = at.after(Millis::secs(u64::from(seconds)));
                    self.retry_not_before.insert((node, scope), until);
                }
            }
            // The client gave up before the 429 came: it never read its Retry-After.
            What::TimedOut { id, .. } => {
                self.rate_limited_in_flight.remove(id);
            }
            _ => {}
        }
    }

    fn note_rule(&mut self, rule: Rule) {
        if !self.rules_exercised.contains(rule) {
            self.rules_exercised.insert(rule);
        }
    }

    /// RATE-03: a 429's Retry-After binds the client that waits for it, from when it
    /// reaches the client (`What::Delivered`): one still in the network when the client
    /// times out was never read, and the client retries on its backoff (RETRY-02).
    fn on_awaited_answer(
        &mut self,
        now: Millis,
        id: RequestId,
        node: u8,
        scope: Option<&ScopeKey>,
        response: &ApiResponse,
    ) {
        if let (Some(scope), Some(seconds)) = (scope, response.retry_after_s) {
            if response.status == 429 {
                if self.binds_unread_429 {
                    let until = now.after(Millis::secs(u64::from(seconds)));
                    self.retry_not_before.insert((node, scope.clone()), until);
                }
                let pending = (node, scope.clone(), seconds);
                self.rate_limited_in_flight.insert(id, pending);
            }
        }
    }

    /// SCHED-02: an answer ties numbers to ids; the queries already sent by a number
    /// were queries of the id's object.
    fn tie_numbers(&mut self, m: MerchantId, e: Environment, body: &payhub_model::ResponseBody) {
        let pairs = query_object::tie(
            &mut self.last_query,
            &mut self.query_aliases,
            (m, e),
            ties(body),
            |(t, _)| *t,
        );
        for ((last, last_path), (at, path)) in pairs {
            self.note_pair(QueryPair {
                path,
                at,
                last,
                last_path,
            });
        }
    }

    /// Keeps `pair` if no pair held is as close.
    fn note_pair(&mut self, pair: QueryPair) {
        if self.closer(pair.gap()) {
            self.closest_queries = Some(Shared::new(pair));
        }
    }

    /// Whether two queries `gap` apart are closer than the closest pair held.
    fn closer(&self, gap: Millis) -> bool {
        self.closest_queries
            .as_ref()
            .is_none_or(|held| gap < held.gap())
    }

    /// SCHED-02 and RATE-03 for a request a client sends.
    fn on_client_send(&mut self, now: Millis, node: u8, request: &ApiRequest, owner: Owner) {
        let Some((merchant, environment)) = owner else {
            return;
        };
        if let Some(object) = QueryObject::named_by(&request.endpoint) {
            let path = request.endpoint.path();
            let object =
                query_object::resolve(&self.query_aliases, (merchant, environment), object);
            let object = (merchant, environment, object);
            if let Some((last, last_path)) = self.last_query.get(&object)
                && self.closer(now.since(*last))
            {
                let pair = QueryPair {
                    path: path.clone(),
                    at: now,
                    last: *last,
                    last_path: last_path.clone(),
                };
                self.closest_queries = Some(Shared::new(pair));
            }
            self.last_query.insert(object, (now, path));
        }
        let Some(scope) = ScopeKey::of(owner, request) else {
            return;
        };
        if let Some(until) = self.retry_not_before.get(&(node, scope.clone())).copied() {
            note_first(&mut self.retry_after_ignored, now < until, || {
                Box::new(EarlyRetry {
                    node,
                    scope,
                    at: now,
                    until,
                })
            });
        }
    }
}

/// The rules a client acted on, for the rule-coverage table only: not part of a state's
/// identity (it hashes as nothing and compares equal). No property reads it, so no
/// verdict depends on which path reached a state first; and the checker takes the union
/// over every state it generates, before it looks the state up, so every transition's
/// rule is counted whichever path is kept. In the identity it would tell apart states
/// that differ only by the history of rules cited, and grow every preset's state space
/// for a table.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Coverage(pub RuleSet);

impl PartialEq for Coverage {
    fn eq(&self, _: &Coverage) -> bool {
        true
    }
}
impl Eq for Coverage {}
impl std::hash::Hash for Coverage {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// A set of rules as a bitset over the catalogue order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RuleSet(pub u128);

impl RuleSet {
    /// The rule's place in the catalogue: its discriminant, as the catalogue lists the
    /// rules in declaration order (a test checks it), so no search on every answer.
    fn index(rule: Rule) -> u32 {
        rule as u32
    }
    pub fn insert(&mut self, rule: Rule) {
        self.0 |= 1u128 << Self::index(rule);
    }
    pub fn contains(&self, rule: Rule) -> bool {
        self.0 & (1u128 << Self::index(rule)) != 0
    }
    pub fn iter(&self) -> impl Iterator<Item = Rule> + '_ {
        Rule::ALL.iter().copied().filter(|r| self.contains(*r))
    }
}

#[cfg(test)]
mod tests {
    use super::RuleSet;
    use payhub_model::Rule;

    #[test]
    fn a_rule_s_bit_is_its_place_in_the_catalogue() {
        assert!(Rule::ALL.len() <= 128, "a RuleSet holds 128 rules");
        for (i, rule) in Rule::ALL.iter().enumerate() {
            assert_eq!(RuleSet::index(*rule) as usize, i, "{}", rule.id());
        }
        let mut set = RuleSet::default();
        set.insert(Rule::ALL[3]);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![Rule::ALL[3]]);
    }
}
