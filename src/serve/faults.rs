//! Faults on the wire: a plan of rules, each matching requests by endpoint, API key,
//! idempotency key or order number, and faulting the Nth match and the `times - 1` after
//! it. Given at start (`--faults FILE`) or at run time (`POST /__sandbox/faults`):
//! `{"faults":[{"endpoint":"create_payment","order":"ORDER-1","nth":1,"action":"reset_after"}]}`.
//!
//! Every fault is a choice of the world, so the events and the script show it; what each
//! action does is on [`Action`].

use payhub_model::{ApiRequest, Endpoint, Json};
use serde::{Deserialize, Serialize};

/// What a matching request suffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The connection is reset before the request reaches the platform.
    ResetBefore,
    /// The platform executes the request; the connection is then reset, unanswered.
    ResetAfter,
    /// The platform's edge answers 500 without executing.
    #[serde(rename = "500_before")]
    Fail500Before,
    /// The platform executes, its edge answers 500.
    #[serde(rename = "500_after")]
    Fail500After,
    /// The platform answers 429 with its `Retry-After`.
    RateLimited,
    /// The platform answers 503 `temporarily_unavailable` (a create; the channel is paused).
    Unavailable,
    /// The acquirer answers the request's upstream calls only `ms` after they were sent
    /// (the session's time then follows the clock: concurrent requests meet it in flight).
    SlowUpstream,
    /// The platform executes; its answer is held `ms` before it is written (a client
    /// whose timeout is shorter gives up: the answer is then lost, the result unknown).
    Hold,
}

/// One rule of the plan. Every matcher given must match; `nth` counts matches from 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// `create_payment`, `confirm_payment`, `cancel_payment`, `create_checkout_session`,
    /// `create_refund`, `get_payment`, `list_payments`, `get_refund`, … (the model's names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// `ak_1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// The `Idempotency-Key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The body's `merchant_order_no`, or the one a `list_payments` query names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// The first match faulted (1 = the first).
    #[serde(default = "one")]
    pub nth: u32,
    /// How many matches in a row, from the `nth`, are faulted.
    #[serde(default = "one")]
    pub times: u32,
    pub action: Action,
    /// Instead of the `nth` .. `nth + times` window: every match is faulted with this
    /// chance (0 < p ≤ 1), drawn from the sandbox's `--seed`, so a run repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// For `slow_upstream` and `hold`: how long, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

fn one() -> u32 {
    1
}

/// What a matching webhook suffers on its way to the merchant's URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WebhookAction {
    /// Lost before it is POSTed (the platform re-delivers as time passes).
    Drop,
    /// POSTed twice.
    Duplicate,
    /// POSTed `ms` later (a later webhook may overtake it: reordering).
    Delay,
}

/// One webhook rule: the `nth` webhook of a `type` (`payment.succeeded`; any if absent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookRule {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default = "one")]
    pub nth: u32,
    #[serde(default = "one")]
    pub times: u32,
    pub action: WebhookAction,
    /// For `delay`: how long, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

/// A fault plan: its rules, and the platform's `Retry-After` (A-RETRY-AFTER, default 2).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    #[serde(default)]
    pub faults: Vec<Rule>,
    /// Faults of webhooks (`--webhooks URL`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub webhook_faults: Vec<WebhookRule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u32>,
}

impl Plan {
    /// Reads a plan; one clear sentence for a bad one.
    pub fn from_json(text: &str) -> Result<Plan, String> {
        let plan: Plan =
            serde_json::from_str(text).map_err(|e| format!("not a fault plan: {e}"))?;
        // What the text wrote, defaults aside (a probability with an explicit nth).
        let written: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        for (i, rule) in plan.faults.iter().enumerate() {
            let fault = format!("fault {}", i + 1);
            let wrong = |why: &str| Err(format!("{fault}: {why}"));
            let given = |field: &str| written["faults"][i].get(field).is_some();
            if rule.probability.is_some() && (given("nth") || given("times")) {
                return wrong("a probability replaces nth and times");
            }
            counted(&fault, (rule.nth, rule.times), rule.ms)?;
            if rule.probability.is_some_and(|p| !(p > 0.0 && p <= 1.0)) {
                return wrong("a probability is in (0, 1]");
            }
            let timed = matches!(rule.action, Action::SlowUpstream | Action::Hold);
            if timed != rule.ms.is_some() {
                return wrong(
                    "\"ms\" goes with the actions slow_upstream and hold, and only with them",
                );
            }
            if let Some(e) = &rule.endpoint
                && !ENDPOINTS.contains(&e.as_str())
            {
                let endpoints = ENDPOINTS.join(", ");
                return wrong(&format!("unknown endpoint '{e}' (endpoints: {endpoints})"));
            }
        }
        for (i, rule) in plan.webhook_faults.iter().enumerate() {
            let fault = format!("webhook fault {}", i + 1);
            let wrong = |why: &str| Err(format!("{fault}: {why}"));
            counted(&fault, (rule.nth, rule.times), rule.ms)?;
            if let Some(kind) = &rule.kind
                && !webhook_kinds().any(|k| &k == kind)
            {
                let types = webhook_kinds().collect::<Vec<_>>().join(", ");
                return wrong(&format!("unknown type '{kind}' (types: {types})"));
            }
            if (rule.action == WebhookAction::Delay) != rule.ms.is_some() {
                return wrong("\"ms\" goes with the action delay, and only with it");
            }
        }
        Ok(plan)
    }
}

/// The longest `ms` of a rule: a day (86 400 000 ms).
pub const HOLD_MS_MAX: u64 = 86_400_000;

/// What a rule and a webhook rule share: `nth` and `times` count from 1, `ms` is at
/// most [`HOLD_MS_MAX`].
fn counted(fault: &str, (nth, times): (u32, u32), ms: Option<u64>) -> Result<(), String> {
    if ms.is_some_and(|ms| ms > HOLD_MS_MAX) {
        return Err(format!(
            "{fault}: \"ms\" is at most {HOLD_MS_MAX} (one day)"
        ));
    }
    if nth == 0 || times == 0 {
        return Err(format!("{fault}: nth and times count from 1"));
    }
    Ok(())
}

/// The webhook types the platform sends: `payment.<status>` and `refund.<status>`.
fn webhook_kinds() -> impl Iterator<Item = String> {
    use payhub_model::{PaymentStatus, RefundStatus};
    let payments = PaymentStatus::ALL
        .iter()
        .map(|s| format!("payment.{}", s.as_str()));
    payments.chain(
        RefundStatus::ALL
            .iter()
            .map(|s| format!("refund.{}", s.as_str())),
    )
}

/// The endpoint names a rule may match.
pub const ENDPOINTS: &[&str] = &[
    "create_payment",
    "confirm_payment",
    "cancel_payment",
    "create_checkout_session",
    "create_refund",
    "get_payment",
    "list_payments",
    "get_refund",
    "list_refunds_by_no",
    "list_refunds_processing",
    "other",
];

/// The model's name of an endpoint.
pub fn endpoint_name(endpoint: &Endpoint) -> &'static str {
    match endpoint {
        Endpoint::CreatePayment { .. } => "create_payment",
        Endpoint::ConfirmPayment { .. } => "confirm_payment",
        Endpoint::CancelPayment { .. } => "cancel_payment",
        Endpoint::CreateCheckoutSession { .. } => "create_checkout_session",
        Endpoint::CreateRefund { .. } => "create_refund",
        Endpoint::GetPayment { .. } => "get_payment",
        Endpoint::ListPayments { .. } => "list_payments",
        Endpoint::GetRefund { .. } => "get_refund",
        Endpoint::ListRefundsByNo { .. } => "list_refunds_by_no",
        Endpoint::ListRefundsProcessing => "list_refunds_processing",
        Endpoint::Other { .. } => "other",
    }
}

/// The order number a request names, if any.
pub fn order_of(request: &ApiRequest) -> Option<&str> {
    match &request.endpoint {
        Endpoint::CreatePayment {
            body: Json::Parsed(b),
        } => b.merchant_order_no.as_ref().map(|t| t.as_str()),
        Endpoint::CreateCheckoutSession {
            body: Json::Parsed(b),
        } => b.merchant_order_no.as_ref().map(|t| t.as_str()),
        Endpoint::ListPayments { merchant_order_no } => Some(merchant_order_no.as_str()),
        _ => None,
    }
}

impl Rule {
    fn matches(&self, request: &ApiRequest) -> bool {
        let is = |want: &Option<String>, got: Option<&str>| {
            want.as_deref().is_none_or(|w| Some(w) == got)
        };
        let key = request.idempotency_key.as_ref().map(|t| t.as_str());
        is(&self.endpoint, Some(endpoint_name(&request.endpoint)))
            && is(&self.api_key, Some(&request.api_key.to_string()))
            && is(&self.key, key)
            && is(&self.order, order_of(request))
    }
}

/// A plan in force: its rules and how many requests each has matched.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    plan: Plan,
    matched: Vec<u32>,
    webhooks_matched: Vec<u32>,
    seed: u64,
}

impl Faults {
    pub fn new(plan: Plan, seed: u64) -> Faults {
        let matched = vec![0; plan.faults.len()];
        let webhooks_matched = vec![0; plan.webhook_faults.len()];
        Faults {
            plan,
            matched,
            webhooks_matched,
            seed,
        }
    }

    /// Counts a webhook of type `kind` against the webhook rules; the first that hits.
    pub fn next_webhook(&mut self, kind: &str) -> Option<&WebhookRule> {
        let mut hit = None;
        let rules = self.plan.webhook_faults.iter();
        for (i, (rule, n)) in rules.zip(&mut self.webhooks_matched).enumerate() {
            if rule.kind.as_deref().is_some_and(|k| k != kind) {
                continue;
            }
            *n += 1;
            if hit.is_none() && (rule.nth..rule.nth.saturating_add(rule.times)).contains(n) {
                hit = Some(i);
            }
        }
        hit.map(|i| &self.plan.webhook_faults[i])
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Counts `request` against every rule; the first rule whose window
    /// (`nth` .. `nth + times`) it falls in.
    pub fn next(&mut self, request: &ApiRequest) -> Option<&Rule> {
        let mut hit = None;
        for (i, (rule, n)) in self.plan.faults.iter().zip(&mut self.matched).enumerate() {
            if !rule.matches(request) {
                continue;
            }
            *n += 1;
            let faulted = match rule.probability {
                Some(p) => chance(self.seed, i, *n) < p,
                None => (rule.nth..rule.nth.saturating_add(rule.times)).contains(n),
            };
            if hit.is_none() && faulted {
                hit = Some(i);
            }
        }
        hit.map(|i| &self.plan.faults[i])
    }
}

/// A uniform draw in [0, 1) for the `n`th match of rule `rule`.
fn chance(seed: u64, rule: usize, n: u32) -> f64 {
    let x = splitmix64(seed ^ ((rule as u64) << 32) ^ u64::from(n));
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// SplitMix64: the seeded draws of the sandbox (faults, branches), no RNG crate needed.
pub use payhub_model::splitmix::splitmix64;

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::api::req;

    #[test]
    fn the_nth_match_and_the_times_after_it_are_faulted() {
        let plan = Plan::from_json(
            r#"{"faults":[{"endpoint":"create_payment","order":"ORDER-1","nth":2,"times":2,"action":"500_after"}]}"#,
        )
        .unwrap();
        let mut faults = Faults::new(plan, 0);
        let create = req::create("K", "ORDER-1", 100, "USD", 'A');
        let other = req::create("K", "ORDER-2", 100, "USD", 'A');
        let mut next = |r| faults.next(r).map(|rule| rule.action);
        assert_eq!(next(&create), None);
        assert_eq!(next(&other), None);
        assert_eq!(next(&create), Some(Action::Fail500After));
        assert_eq!(next(&create), Some(Action::Fail500After));
        assert_eq!(next(&create), None);
    }

    #[test]
    fn a_probability_faults_a_seeded_share_of_the_matches() {
        let plan = Plan::from_json(
            r#"{"faults":[{"endpoint":"create_payment","probability":0.25,"action":"500_after"}]}"#,
        )
        .unwrap();
        let create = req::create("K", "ORDER-1", 100, "USD", 'A');
        let run = |seed| {
            let mut faults = Faults::new(plan.clone(), seed);
            (0..400)
                .map(|_| faults.next(&create).is_some())
                .collect::<Vec<bool>>()
        };
        let hits = run(3).iter().filter(|h| **h).count();
        assert!((60..140).contains(&hits), "{hits} of 400 at 0.25");
        assert_eq!(run(3), run(3), "the same seed, the same faults");
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn bad_plans_say_what_is_wrong() {
        for (text, want) in [
            ("{", "not a fault plan"),
            (r#"{"faults":[{"action":"explode"}]}"#, "unknown variant"),
            (
                r#"{"faults":[{"nth":0,"action":"reset_after"}]}"#,
                "count from 1",
            ),
            (
                r#"{"faults":[{"endpoint":"pay","action":"reset_after"}]}"#,
                "unknown endpoint 'pay'",
            ),
            (
                r#"{"faults":[{"action":"slow_upstream"}]}"#,
                "\"ms\" goes with the actions",
            ),
            (
                r#"{"faults":[{"probability":1.5,"action":"reset_after"}]}"#,
                "in (0, 1]",
            ),
            (
                r#"{"faults":[{"probability":0.5,"nth":2,"action":"reset_after"}]}"#,
                "replaces nth and times",
            ),
            (
                r#"{"faults":[{"action":"reset_after","ms":5}]}"#,
                "\"ms\" goes with the actions",
            ),
            (
                r#"{"faults":[{"probability":0.5,"nth":1,"action":"reset_after"}]}"#,
                "replaces nth and times",
            ),
            (
                r#"{"faults":[{"action":"hold","ms":18446744073709551615}]}"#,
                "is at most 86400000",
            ),
            (
                r#"{"webhook_faults":[{"type":"payment.exploded","action":"drop"}]}"#,
                "unknown type 'payment.exploded'",
            ),
        ] {
            let e = Plan::from_json(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
