//! A generated case: rounds of requests, each with its fault, a round's requests sent at
//! once. Requests name objects by slot (`o1`, `r1`, `k1`), so one case renders for the
//! target (its keys, cards, ids) and for each model state (the ids it mapped them to).

use super::compare::{IdMap, qualified};
use super::profile::{CardOutcome, Loaded};
use crate::http_map::HttpRequest;
use payhub_model::Millis;
use std::collections::BTreeMap;

/// The fault one request is sent with (`run.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    ResetBefore,
    ResetAfter,
    Hold(u16),
    Duplicate,
}

impl Fault {
    fn note(self) -> String {
        match self {
            Fault::None => String::new(),
            Fault::ResetBefore => "  [proxy: reset before forwarding]".into(),
            Fault::ResetAfter => "  [proxy: forwarded, then reset]".into(),
            Fault::Hold(ms) => format!("  [proxy: held {ms} ms]"),
            Fault::Duplicate => "  [proxy: sent twice]".into(),
        }
    }
}

/// Which `Idempotency-Key` a request carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyUse {
    /// No header.
    Missing,
    /// Key slot N of the case.
    Slot(u8),
    /// 256 characters: one over the limit (KEY-07).
    TooLong,
    /// 200 two-byte characters, slot N: under the limit in characters, over it in bytes.
    Wide(u8),
    /// Two non-ASCII characters, slot N: under the limit in characters and in bytes
    /// (beside [`KeyUse::Wide`], it tells a key counted in bytes from one refused for its
    /// characters, A-KEY-LENGTH).
    Accented(u8),
}

/// One operation of the contract, its objects named by slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Create {
        order: u8,
        amount: i64,
        currency: &'static str,
        card: Option<CardOutcome>,
    },
    Confirm {
        order: u8,
        card: CardOutcome,
    },
    /// A confirm that also carries an amount: the new attempt keeps the original Payment
    /// (ATTEMPT-06), so a confirm cannot change it.
    ConfirmWithAmount {
        order: u8,
        card: CardOutcome,
        amount: i64,
    },
    Cancel {
        order: u8,
    },
    Session {
        order: u8,
        amount: i64,
    },
    Refund {
        order: u8,
        refund: u8,
        amount: i64,
    },
    GetPayment {
        order: u8,
    },
    FindPayment {
        order: u8,
    },
    /// The order number in another letter case (the lookup is exact and case-sensitive).
    FindPaymentOtherCase {
        order: u8,
    },
    GetRefund {
        refund: u8,
    },
    FindRefund {
        refund: u8,
    },
}

impl Op {
    /// A create of order slot `order` for 100.00 USD with the approving card.
    pub fn approved(order: u8) -> Op {
        Op::Create {
            order,
            amount: 10000,
            currency: "USD",
            card: Some(CardOutcome::Approve),
        }
    }

    /// A checkout session of order slot `order` for 50.00 USD.
    pub fn session(order: u8) -> Op {
        Op::Session {
            order,
            amount: 5000,
        }
    }
}

/// One request of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Req {
    /// The model key it is sent with (`ak_N`; the profile names the target's).
    pub key_of: u32,
    pub key: KeyUse,
    pub op: Op,
    pub fault: Fault,
    /// Which of the target's keys for `key_of` it is sent with: 0 the first, 1 the next
    /// (API key rotation: the same merchant, environment and scope).
    pub rotation: u8,
}

/// One of the platform's own inputs a profile's controls switch (`controls` in the
/// profile): the contract's 429 and 503 are "not executed" answers of the platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Model merchant N rate-limited (429 with `Retry-After`) or not.
    RateLimit { merchant: u32, on: bool },
    /// The payment channel paused (503 `temporarily_unavailable`) or not.
    Pause { on: bool },
}

impl std::fmt::Display for Switch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, on) = match *self {
            Switch::RateLimit { merchant, on } => {
                (format!("rate limit for merchant {merchant}"), on)
            }
            Switch::Pause { on } => ("channel pause".to_owned(), on),
        };
        write!(
            f,
            "(the target's {what}: {})",
            if on { "on" } else { "off" }
        )
    }
}

/// One round: requests sent at once, the target's clock moved, or one of its inputs
/// switched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Round {
    Send(Vec<Req>),
    Advance(Millis),
    Control(Switch),
}

/// A generated case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub seed: u64,
    pub rounds: Vec<Round>,
}

impl Case {
    /// Requests in all rounds.
    pub fn requests(&self) -> usize {
        let requests = |r: &Round| match r {
            Round::Send(v) => v.len(),
            Round::Advance(_) | Round::Control(_) => 1,
        };
        self.rounds.iter().map(requests).sum()
    }

    pub fn is_concurrent(&self) -> bool {
        (self.rounds.iter()).any(|r| matches!(r, Round::Send(v) if v.len() > 1))
    }
}

/// The names a case's slots take in one run: `PREFIX-TAG-o1`, `PREFIX-TAG-r1`, `PREFIX-TAG-k1`.
#[derive(Clone, Debug)]
pub struct Names {
    pub stem: String,
}

impl Names {
    pub fn new(prefix: &str, tag: &str) -> Names {
        Names {
            stem: format!("{prefix}-{tag}"),
        }
    }
    pub fn order(&self, slot: u8) -> String {
        format!("{}-o{slot}", self.stem)
    }
    pub fn refund(&self, slot: u8) -> String {
        format!("{}-r{slot}", self.stem)
    }
    pub fn key(&self, key: KeyUse) -> Option<String> {
        match key {
            KeyUse::Missing => None,
            KeyUse::Slot(n) => Some(format!("{}-k{n}", self.stem)),
            KeyUse::TooLong => Some("k".repeat(256)),
            KeyUse::Wide(n) => Some(format!("{}{}-k{n}", "é".repeat(200), self.stem)),
            KeyUse::Accented(n) => Some(format!("{}-éé{n}", self.stem)),
        }
    }
}

/// The target's ids for the objects a case names, read off its answers: by kind (`pay`,
/// `ref`), namespace (see [`super::profile::Loaded::namespace`]) and number.
#[derive(Clone, Debug, Default)]
pub struct TargetRefs(BTreeMap<(&'static str, u32, String), String>);

impl TargetRefs {
    /// Reads the Payments and Refunds of an answer body seen in namespace `ns`.
    pub fn learn(&mut self, ns: u32, body: &serde_json::Value) {
        let data = body.get("data").and_then(|d| d.as_array());
        for o in std::iter::once(body).chain(data.into_iter().flatten()) {
            let Some(id) = o.get("id").and_then(|v| v.as_str()) else {
                continue;
            };
            for (kind, field) in [("pay", "merchant_order_no"), ("ref", "merchant_refund_no")] {
                if let Some(no) = o.get(field).and_then(|v| v.as_str()) {
                    self.0.insert((kind, ns, no.to_owned()), id.to_owned());
                }
            }
        }
    }
}

/// How one side spells what a request names: the target (its profile's keys, cards and
/// card field, its ids), or a model state (the model's keys and cards, the model ids that
/// state bound the target's to). An object no id is known for gets one that exists
/// nowhere: `pay_demo_9NN`, `ref_demo_9NN` (the model numbers from 1).
pub struct Side<'a> {
    pub of: Of<'a>,
    /// The target's ids read off its answers, and the namespace of the request.
    pub refs: &'a TargetRefs,
    pub ns: u32,
}

/// Whose spelling a [`Side`] is.
#[derive(Clone, Copy)]
pub enum Of<'a> {
    Target(&'a Loaded),
    Model(&'a IdMap),
}

impl Side<'_> {
    /// The key standing for model key `ak_N`, the `rotation`-th of them (rotation).
    fn api_key(&self, model_key: u32, rotation: u8) -> String {
        let Of::Target(p) = self.of else {
            return format!("ak_{model_key}");
        };
        let keys = p.target_keys(model_key);
        let key = keys.get(rotation as usize % keys.len().max(1));
        key.copied().unwrap_or("none").to_owned()
    }

    fn card(&self, outcome: CardOutcome) -> serde_json::Value {
        match self.of {
            Of::Model(_) => outcome.model_card().unwrap_or('A').to_string().into(),
            Of::Target(p) => (p.card(outcome).or_else(|| p.card(CardOutcome::Approve)))
                .cloned()
                .unwrap_or_else(|| "A".into()),
        }
    }

    /// The id of the Payment (`kind` `pay`) of order number `no`, or of the Refund
    /// (`ref`) of refund number `no`, of slot `slot`.
    fn id(&self, kind: &'static str, no: &str, slot: u8) -> String {
        let target = self.refs.0.get(&(kind, self.ns, no.to_owned()));
        let id = match self.of {
            Of::Target(_) => target.map(String::as_str),
            Of::Model(ids) => target.and_then(|t| ids.model_of(kind, &qualified(self.ns, t))),
        };
        id.map_or_else(
            || format!("{kind}_demo_{}", 900 + u32::from(slot)),
            str::to_owned,
        )
    }
}

fn query_escape(s: &str) -> String {
    let escape = |b: u8| match b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
        true => (b as char).to_string(),
        false => format!("%{b:02X}"),
    };
    s.bytes().map(escape).collect()
}

/// `s` with the case of each ASCII letter swapped (`CF-s1-o1` → `cf-S1-O1`).
pub fn other_case(s: &str) -> String {
    let swap = |c: char| match c.is_ascii_lowercase() {
        true => c.to_ascii_uppercase(),
        false => c.to_ascii_lowercase(),
    };
    s.chars().map(swap).collect()
}

impl Req {
    /// Sent as `ak_N`'s first key, with no fault.
    pub fn new(key_of: u32, key: KeyUse, op: Op) -> Req {
        let (fault, rotation) = (Fault::None, 0);
        Req {
            key_of,
            key,
            op,
            fault,
            rotation,
        }
    }

    /// The request as `side` spells it (for the target, its body with its card field),
    /// as every edge reads one ([`HttpRequest`]: the model's side, the target's, the
    /// record).
    pub fn render(&self, names: &Names, side: &Side) -> HttpRequest {
        use serde_json::{Value, json};
        let pay = |o: u8| side.id("pay", &names.order(o), o);
        let refund_id = |r: u8| side.id("ref", &names.refund(r), r);
        let post = |target: String, body: Option<Value>| ("POST", target, body);
        let get = |target: String| ("GET", target, None);
        let find = |query: &str, no: &str| get(format!("/v1/{query}={}", query_escape(no)));
        let by_order = |no: String| find("payments?merchant_order_no", &no);
        let (method, target, body) = match self.op {
            Op::Create {
                order,
                amount,
                currency,
                card,
            } => {
                let mut b = json!({"merchant_order_no": names.order(order), "amount": amount, "currency": currency});
                if let Some(c) = card {
                    b["card"] = side.card(c);
                }
                post("/v1/payments".into(), Some(b))
            }
            Op::Confirm { order, card } => {
                let body = json!({"card": side.card(card)});
                post(format!("/v1/payments/{}/confirm", pay(order)), Some(body))
            }
            Op::ConfirmWithAmount {
                order,
                card,
                amount,
            } => {
                let body = json!({"card": side.card(card), "amount": amount});
                post(format!("/v1/payments/{}/confirm", pay(order)), Some(body))
            }
            Op::Cancel { order } => post(format!("/v1/payments/{}/cancel", pay(order)), None),
            Op::Session { order, amount } => {
                let body = json!({"merchant_order_no": names.order(order), "amount": amount, "currency": "USD"});
                post("/v1/checkout/sessions".into(), Some(body))
            }
            Op::Refund {
                order,
                refund,
                amount,
            } => {
                let body = json!({"payment_id": pay(order),
                    "merchant_refund_no": names.refund(refund), "amount": amount});
                post("/v1/refunds".into(), Some(body))
            }
            Op::GetPayment { order } => get(format!("/v1/payments/{}", pay(order))),
            Op::FindPayment { order } => by_order(names.order(order)),
            Op::FindPaymentOtherCase { order } => by_order(other_case(&names.order(order))),
            Op::GetRefund { refund } => get(format!("/v1/refunds/{}", refund_id(refund))),
            Op::FindRefund { refund } => find("refunds?merchant_refund_no", &names.refund(refund)),
        };
        let body = body.map(|b| b.to_string());
        let body = match side.of {
            Of::Target(p) => p.target_body(body.as_deref()),
            Of::Model(_) => body,
        };
        let authorization = format!("Bearer {}", side.api_key(self.key_of, self.rotation));
        let key = (method == "POST").then(|| names.key(self.key)).flatten();
        HttpRequest {
            method: method.to_owned(),
            target,
            authorization: Some(authorization.into_bytes()),
            idempotency_key: key.map(String::into_bytes),
            body: body.map(String::into_bytes).unwrap_or_default(),
        }
    }
}

/// A rendered request as conform sends and prints it (rendered from text: every part
/// UTF-8, an empty body none).
impl HttpRequest {
    /// The request as the wire sends it: `Authorization`, then `Idempotency-Key` if any.
    pub fn wire(&self) -> crate::wire::WireRequest {
        let body = (!self.body.is_empty()).then(|| String::from_utf8_lossy(&self.body).into());
        let auth = String::from_utf8_lossy(self.authorization.as_deref().unwrap_or_default());
        let key = self.idempotency_key.as_deref().map(String::from_utf8_lossy);
        crate::wire::WireRequest::api(&self.method, &self.target, &auth, key.as_deref(), body)
    }

    /// `POST /v1/payments  Idempotency-Key: K  {…}`, the contract's notation.
    pub fn notation(&self) -> String {
        let mut s = format!("{} {}", self.method, self.target);
        if let Some(k) = self.idempotency_key.as_deref().map(String::from_utf8_lossy) {
            let shown = match k.chars().count() {
                n if n > 40 => format!("{}…({n} chars)", k.chars().take(12).collect::<String>()),
                _ => k.into_owned(),
            };
            s.push_str(&format!("  Idempotency-Key: {shown}"));
        }
        if !self.body.is_empty() {
            s.push_str(&format!("  {}", String::from_utf8_lossy(&self.body)));
        }
        s
    }
}

/// One request in the notation, with its API key when not the first merchant's first
/// (a rotated key shown: the same scope, SCOPE-03) and its fault.
pub fn line(req: &Req, http: &HttpRequest) -> String {
    let key = match (req.key_of, req.rotation) {
        (1, 0) => String::new(),
        (k, 0) => format!("  (as ak_{k})"),
        (k, r) => format!("  (as ak_{k}, its rotated key #{})", r + 1),
    };
    format!("{}{key}{}", http.notation(), req.fault.note())
}
