//! Expectations: what a script says must hold at its line, judged against the world.
//!
//! Responses are read as the merchant received them; counters over the acquirer's
//! ledger (money that moved) and the upstream calls the runner saw; objects as the
//! platform holds them now; a client's order as its database holds it. A field is
//! compared as text: strings as they are, numbers in decimal, booleans as `true` and
//! `false`, a missing field as `none`, an object as `present`.

use super::Runner;
use crate::event_fold::EventFold;
use crate::script::ast::*;
use payhub_model::{ApiResponse, LedgerEntry, MerchantId, PaymentId, RefundId, ResponseBody};
use serde_json::Value;

/// What an expectation found instead, when it does not hold.
type Verdict = Result<(), String>;

impl<F: EventFold> Runner<'_, F> {
    /// `Ok` when the expectation holds, else what was found instead.
    pub(super) fn evaluate(&self, e: &Expectation) -> Verdict {
        let platform = &self.world.platform;
        match e {
            Expectation::Response { server, want } => self.response(*server, want),
            Expectation::Count { scope, counter } => {
                let got = count(self, *scope, counter);
                let Counter {
                    term, cmp, value, ..
                } = counter;
                if cmp.holds(got, *value) {
                    return Ok(());
                }
                let cmp = cmp.as_str();
                Err(format!("{term} is {got}, expected {cmp} {value}"))
            }
            // `expect payment pay_demo_001: …`: the object as the platform holds it now.
            Expectation::Object { kind, id, fields } => {
                let value = match kind {
                    ObjectKind::Payment => platform.payment_view(PaymentId(*id)).map(json),
                    ObjectKind::Refund => platform.refund_view(RefundId(*id)).map(json),
                };
                let value = value.ok_or_else(|| "the platform has no such object".to_owned())?;
                compare(fields, |name| lookup(&value, name))
            }
            Expectation::Webhook {
                present,
                kind,
                fields,
            } => self.webhook(*present, kind, fields),
            Expectation::ClientOrder {
                server,
                order,
                fields,
            } => self.client_order(*server, order, fields),
        }
    }

    /// `expect webhook KIND …` / `expect no webhook KIND`: the latest delivered of that kind.
    fn webhook(&self, present: bool, kind: &str, fields: &[FieldCheck]) -> Verdict {
        let latest = self.webhooks.iter().rev().find(|(_, w)| w.kind == *kind);
        match (present, latest) {
            (false, None) => Ok(()),
            (false, Some((_, w))) => Err(format!("{w} was delivered")),
            (true, None) => {
                let seen: Vec<&str> = self.webhooks.iter().map(|(_, w)| w.kind.as_str()).collect();
                let seen = if seen.is_empty() {
                    "none".to_owned()
                } else {
                    seen.join(", ")
                };
                Err(format!(
                    "no {kind} webhook was delivered (delivered: {seen})"
                ))
            }
            (true, Some((_, w))) => {
                let object = json(&w.object);
                compare(fields, |name| match name {
                    "event" => w.id.to_string(),
                    "delivery" => w.delivery.to_string(),
                    _ => lookup(&object, name),
                })
            }
        }
    }

    /// `expect A order ORDER-1: …`: the order as the server's database holds it.
    fn client_order(&self, server: usize, order: &str, fields: &[FieldCheck]) -> Verdict {
        let s = &self.script.servers[server];
        let db = self.world.dbs.get(s.db as usize);
        let db = db.ok_or_else(|| format!("server {} has no database", s.name))?;
        let rec = db.order(order);
        let rec =
            rec.ok_or_else(|| format!("server {}'s database has no order {order}", s.name))?;
        // The tag of a state or an outcome, as it serializes.
        fn tag(v: impl serde::Serialize, key: &str) -> String {
            or_none(json(v).get(key).and_then(Value::as_str))
        }
        compare(fields, |name| match name {
            "state" => tag(rec.state(), "state"),
            "status" => or_none(rec.status().map(|s| s.as_str())),
            "version" => rec.version().to_string(),
            "payment_id" => or_none(rec.payment_id),
            "key" => or_none(rec.submission.key.as_deref()),
            "seq" => rec.submission.seq.to_string(),
            "card" => rec.submission.card.0.to_string(),
            "outcome" => tag(rec.submission.outcome, "outcome"),
            "attempt_count" => or_none(rec.applied.as_ref().map(|a| a.attempt_count)),
            "fulfilled" => or_none(rec.fulfilled),
            _ => "none".to_owned(),
        })
    }

    fn response(&self, server: Option<usize>, want: &Want) -> Verdict {
        let x = match server {
            Some(s) => (self.exchanges.iter()).rfind(|x| x.server == self.script.servers[s].name),
            None => self.exchanges.last(),
        };
        let x = x.ok_or_else(|| "no request was sent".to_owned())?;
        let what = format!("the response to line {}", x.line);
        match (want, &x.response) {
            (Want::Lost, None) if x.lost => Ok(()),
            (Want::Pending, None) if !x.lost => Ok(()),
            (Want::Lost, None) => Err(format!("{what} is still pending, not lost")),
            (_, None) if x.lost => Err(format!("{what} was lost")),
            (_, None) => Err(format!("{what} has not arrived (pending)")),
            (Want::Lost | Want::Pending, Some(got)) => Err(format!("{what} arrived: {got}")),
            (
                Want::Answer {
                    status,
                    code,
                    fields,
                },
                Some(got),
            ) => {
                if got.status != *status || (code.is_some() && got.error_code() != *code) {
                    let want = match code {
                        Some(c) => format!("{status} {}", c.as_str()),
                        None => status.to_string(),
                    };
                    return Err(format!("expected {want}, got {got}"));
                }
                compare(fields, |name| response_field(got, name))
                    .map_err(|e| format!("{e} in {got}"))
            }
        }
    }
}

fn json(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or_default()
}

/// A value as an expectation compares it, `none` when absent.
fn or_none(v: Option<impl ToString>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

/// One field of a response: the object's, the first item's of a list, or the error's.
pub(crate) fn response_field(response: &ApiResponse, name: &str) -> String {
    if name == "retry_after" {
        return or_none(response.retry_after_s);
    }
    let body = json(&response.body);
    match &response.body {
        ResponseBody::Error { .. } => lookup(&body["error"], name),
        ResponseBody::Payments { data } if name == "count" => data.len().to_string(),
        ResponseBody::Refunds { data } if name == "count" => data.len().to_string(),
        ResponseBody::Payments { .. } | ResponseBody::Refunds { .. } => {
            lookup(&body["data"][0], name)
        }
        _ => lookup(&body, name),
    }
}

/// `failure.code` in a JSON value, as text.
fn lookup(value: &Value, name: &str) -> String {
    let Some(v) = name.split('.').try_fold(value, |v, part| v.get(part)) else {
        return "none".to_owned();
    };
    match v {
        Value::Null => "none".to_owned(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Object(_) | Value::Array(_) => "present".to_owned(),
    }
}

fn compare(fields: &[FieldCheck], get: impl Fn(&str) -> String) -> Result<(), String> {
    let wrong: Vec<String> = fields
        .iter()
        .filter_map(|f| {
            let got = get(&f.name);
            (got != f.value).then(|| format!("{} is {got}, expected {}", f.name, f.value))
        })
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

/// The `name=value` filters of a counter: an entry counts if it matches every one.
struct Filters<'a>(&'a [FieldCheck]);

impl Filters<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        let filter = self.0.iter().find(|x| x.name == name);
        filter.map(|x| x.value.as_str())
    }

    /// Whether every `(name, value)` matches its filter, if there is one.
    fn ok<const N: usize>(&self, got: [(&str, String); N]) -> bool {
        got.into_iter()
            .all(|(name, got)| self.get(name).is_none_or(|v| v == got))
    }

    fn merchant(&self, m: MerchantId) -> bool {
        self.get("merchant")
            .is_none_or(|v| m.to_string() == v || m.0.to_string() == v)
    }
}

fn count<F: EventFold>(r: &Runner<'_, F>, scope: CounterScope, c: &Counter) -> u64 {
    let f = Filters(&c.filters);
    let n = match scope {
        CounterScope::Ledger => ledger_count(r, &c.term, &f),
        CounterScope::Platform => platform_count(r, &c.term, &f),
    };
    n as u64
}

/// How many of `items` `keep` holds for.
fn how_many<T>(items: impl IntoIterator<Item = T>, keep: impl FnMut(&T) -> bool) -> usize {
    items.into_iter().filter(keep).count()
}

/// `expect ledger: …`: money that moved, and the upstream calls the runner saw.
fn ledger_count<F: EventFold>(r: &Runner<'_, F>, term: &str, f: &Filters<'_>) -> usize {
    let (entries, platform) = (&r.world.acquirer.ledger.entries, &r.world.platform);
    match term {
        "charges" => how_many(entries, |e| charge_matches(r, e, f)),
        "refunds" => how_many(entries, |e| {
            let LedgerEntry::Refund {
                refund, attempt, ..
            } = e
            else {
                return false;
            };
            let attempt = platform.attempts().get(attempt);
            let payment = attempt.map(|a| a.payment.to_string());
            f.ok([
                ("refund", refund.to_string()),
                ("payment", payment.unwrap_or_default()),
            ])
        }),
        "charge-calls" => how_many(&r.calls, |c| {
            let (payment, card) = (c.payment.to_string(), c.card.0.to_string());
            let key = or_none(c.key.as_deref());
            f.ok([("payment", payment), ("card", card), ("key", key)])
        }),
        "refund-calls" => {
            let calls = r.refund_calls.iter();
            let calls = calls.filter(|(id, _)| f.ok([("refund", id.to_string())]));
            calls.map(|(_, n)| *n as usize).sum()
        }
        _ => 0,
    }
}

/// Whether a ledger entry is a capture that matches the filters of `charges(…)`.
fn charge_matches<F: EventFold>(r: &Runner<'_, F>, e: &LedgerEntry, f: &Filters<'_>) -> bool {
    let LedgerEntry::Capture {
        attempt,
        payment,
        merchant,
        environment,
        card,
        ..
    } = e
    else {
        return false;
    };
    let call = r.calls.iter().find(|c| c.attempt == *attempt);
    let key = or_none(call.and_then(|c| c.key.as_deref()));
    let order = r.world.platform.payments().get(payment);
    let order = order.map(|p| p.merchant_order_no.to_string());
    let (payment, card) = (payment.to_string(), card.0.to_string());
    let env = environment.to_string();
    f.merchant(*merchant)
        && f.ok([
            ("payment", payment),
            ("card", card),
            ("key", key),
            ("order", order.unwrap_or_default()),
            ("env", env),
        ])
}

/// `expect platform: …`: the platform's records.
fn platform_count<F: EventFold>(r: &Runner<'_, F>, term: &str, f: &Filters<'_>) -> usize {
    let platform = &r.world.platform;
    let of_payment = |payment: PaymentId| f.ok([("payment", payment.to_string())]);
    match term {
        "payments" => how_many(platform.payments().values(), |p| {
            let (order, env) = (p.merchant_order_no.to_string(), p.environment.to_string());
            let status = p.status.as_str().to_owned();
            f.merchant(p.merchant) && f.ok([("order", order), ("env", env), ("status", status)])
        }),
        "attempts" => how_many(platform.attempts().values(), |a| of_payment(a.payment)),
        "refunds" => how_many(platform.refunds().values(), |x| {
            let no = x.merchant_refund_no.to_string();
            f.ok([("payment", x.payment.to_string()), ("refund_no", no)])
        }),
        "sessions" => how_many(platform.sessions().values(), |s| of_payment(s.payment)),
        "records" => platform.records().len(),
        _ => 0,
    }
}
