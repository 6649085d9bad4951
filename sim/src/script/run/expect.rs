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
use payhub_model::{ApiResponse, LedgerEntry, MerchantId, ResponseBody};
use serde_json::Value;

/// `Ok` when the expectation holds, else what was found instead.
pub(crate) fn evaluate<F: EventFold>(r: &Runner<'_, F>, e: &Expectation) -> Result<(), String> {
    match e {
        Expectation::Response { server, want } => response(r, *server, want),
        Expectation::Count { scope, counter } => {
            let got = count(r, *scope, counter);
            if counter.cmp.holds(got, counter.value) {
                Ok(())
            } else {
                Err(format!(
                    "{} is {got}, expected {} {}",
                    counter.term,
                    counter.cmp.as_str(),
                    counter.value
                ))
            }
        }
        Expectation::Object { kind, id, fields } => object(r, *kind, *id, fields),
        Expectation::Webhook {
            present,
            kind,
            fields,
        } => webhook(r, *present, kind, fields),
        Expectation::ClientOrder {
            server,
            order,
            fields,
        } => client_order(r, *server, order, fields),
    }
}

/// `expect payment pay_demo_001: …`: the object as the platform holds it now.
fn object<F: EventFold>(
    r: &Runner<'_, F>,
    kind: ObjectKind,
    id: u32,
    fields: &[FieldCheck],
) -> Result<(), String> {
    let value = match kind {
        ObjectKind::Payment => r
            .world
            .platform
            .payment_view(payhub_model::PaymentId(id))
            .map(|v| serde_json::to_value(v).unwrap_or_default()),
        ObjectKind::Refund => r
            .world
            .platform
            .refund_view(payhub_model::RefundId(id))
            .map(|v| serde_json::to_value(v).unwrap_or_default()),
    };
    let value = value.ok_or_else(|| "the platform has no such object".to_owned())?;
    compare(fields, |name| lookup(&value, name))
}

/// `expect webhook KIND …` / `expect no webhook KIND`: the latest delivered of that kind.
fn webhook<F: EventFold>(
    r: &Runner<'_, F>,
    present: bool,
    kind: &str,
    fields: &[FieldCheck],
) -> Result<(), String> {
    let latest = r.webhooks.iter().rev().find(|(_, w)| w.kind == *kind);
    match (present, latest) {
        (false, None) => Ok(()),
        (false, Some((_, w))) => Err(format!("{w} was delivered")),
        (true, None) => {
            let seen: Vec<&str> = r.webhooks.iter().map(|(_, w)| w.kind.as_str()).collect();
            Err(format!(
                "no {kind} webhook was delivered (delivered: {})",
                if seen.is_empty() {
                    "none".to_owned()
                } else {
                    seen.join(", ")
                }
            ))
        }
        (true, Some((_, w))) => {
            let object = serde_json::to_value(&w.object).unwrap_or_default();
            compare(fields, |name| match name {
                "event" => w.id.to_string(),
                "delivery" => w.delivery.to_string(),
                _ => lookup(&object, name),
            })
        }
    }
}

/// `expect A order ORDER-1: …`: the order as the server's database holds it.
fn client_order<F: EventFold>(
    r: &Runner<'_, F>,
    server: usize,
    order: &str,
    fields: &[FieldCheck],
) -> Result<(), String> {
    let s = &r.script.servers[server];
    let db = r
        .world
        .dbs
        .get(s.db as usize)
        .ok_or_else(|| format!("server {} has no database", s.name))?;
    let rec = db
        .order(order)
        .ok_or_else(|| format!("server {}'s database has no order {order}", s.name))?;
    let tag = |v: Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or("none")
            .to_owned()
    };
    compare(fields, |name| match name {
        "state" => tag(
            serde_json::to_value(rec.state()).unwrap_or_default(),
            "state",
        ),
        "status" => rec
            .status()
            .map_or_else(|| "none".to_owned(), |s| s.as_str().to_owned()),
        "version" => rec.version().to_string(),
        "payment_id" => rec
            .payment_id
            .map_or_else(|| "none".to_owned(), |p| p.to_string()),
        "key" => rec.submission.key.as_deref().unwrap_or("none").to_owned(),
        "seq" => rec.submission.seq.to_string(),
        "card" => rec.submission.card.0.to_string(),
        "outcome" => tag(
            serde_json::to_value(rec.submission.outcome).unwrap_or_default(),
            "outcome",
        ),
        "attempt_count" => rec
            .applied
            .as_ref()
            .map_or_else(|| "none".to_owned(), |a| a.attempt_count.to_string()),
        "fulfilled" => rec
            .fulfilled
            .map_or_else(|| "none".to_owned(), |p| p.to_string()),
        _ => "none".to_owned(),
    })
}

fn response<F: EventFold>(
    r: &Runner<'_, F>,
    server: Option<usize>,
    want: &Want,
) -> Result<(), String> {
    let x = match server {
        Some(s) => {
            let name = &r.script.servers[s].name;
            r.exchanges.iter().rev().find(|x| x.server == *name)
        }
        None => r.exchanges.last(),
    }
    .ok_or_else(|| "no request was sent".to_owned())?;
    let what = format!("the response to line {}", x.line);
    match (want, &x.response) {
        (Want::Lost, None) if x.lost => Ok(()),
        (Want::Lost, None) => Err(format!("{what} is still pending, not lost")),
        (Want::Lost, Some(got)) => Err(format!("{what} arrived: {got}")),
        (Want::Pending, None) if !x.lost => Ok(()),
        (Want::Pending, None) => Err(format!("{what} was lost")),
        (Want::Pending, Some(got)) => Err(format!("{what} arrived: {got}")),
        (Want::Answer { .. }, None) if x.lost => Err(format!("{what} was lost")),
        (Want::Answer { .. }, None) => Err(format!("{what} has not arrived (pending)")),
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
            compare(fields, |name| response_field(got, name)).map_err(|e| format!("{e} in {got}"))
        }
    }
}

/// One field of a response: the object's, the first item's of a list, or the error's.
pub(crate) fn response_field(response: &ApiResponse, name: &str) -> String {
    if name == "retry_after" {
        return response
            .retry_after_s
            .map_or_else(|| "none".to_owned(), |s| s.to_string());
    }
    let body = serde_json::to_value(&response.body).unwrap_or_default();
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
    let mut v = value;
    for part in name.split('.') {
        match v.get(part) {
            Some(next) => v = next,
            None => return "none".to_owned(),
        }
    }
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

fn merchant_is(m: MerchantId, v: &str) -> bool {
    m.to_string() == v || m.0.to_string() == v
}

/// The `name=value` filters of a counter: an entry counts if it matches every one.
struct Filters<'a>(&'a [FieldCheck]);

impl Filters<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|x| x.name == name)
            .map(|x| x.value.as_str())
    }

    fn ok(&self, name: &str, got: String) -> bool {
        self.get(name).is_none_or(|v| v == got)
    }

    fn merchant(&self, m: MerchantId) -> bool {
        self.get("merchant").is_none_or(|v| merchant_is(m, v))
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

/// `expect ledger: …`: money that moved, and the upstream calls the runner saw.
fn ledger_count<F: EventFold>(r: &Runner<'_, F>, term: &str, f: &Filters<'_>) -> usize {
    match term {
        "charges" => r
            .world
            .acquirer
            .ledger
            .entries
            .iter()
            .filter(|e| charge_matches(r, e, f))
            .count(),
        "refunds" => r
            .world
            .acquirer
            .ledger
            .entries
            .iter()
            .filter(|e| match e {
                LedgerEntry::Refund {
                    refund, attempt, ..
                } => {
                    let payment = r
                        .world
                        .platform
                        .attempts()
                        .get(attempt)
                        .map(|a| a.payment.to_string())
                        .unwrap_or_default();
                    f.ok("refund", refund.to_string()) && f.ok("payment", payment)
                }
                LedgerEntry::Capture { .. } => false,
            })
            .count(),
        "charge-calls" => r
            .calls
            .iter()
            .filter(|c| {
                f.ok("payment", c.payment.to_string())
                    && f.ok("card", c.card.0.to_string())
                    && f.ok("key", c.key.clone().unwrap_or_else(|| "none".to_owned()))
            })
            .count(),
        "refund-calls" => r
            .refund_calls
            .iter()
            .filter(|(id, _)| f.ok("refund", id.to_string()))
            .map(|(_, n)| *n as usize)
            .sum(),
        _ => 0,
    }
}

/// Whether a ledger entry is a capture that matches the filters of `charges(…)`.
fn charge_matches<F: EventFold>(r: &Runner<'_, F>, e: &LedgerEntry, f: &Filters<'_>) -> bool {
    match e {
        LedgerEntry::Capture {
            attempt,
            payment,
            merchant,
            environment,
            card,
            ..
        } => {
            let key = r
                .calls
                .iter()
                .find(|c| c.attempt == *attempt)
                .and_then(|c| c.key.clone())
                .unwrap_or_else(|| "none".to_owned());
            let order = r
                .world
                .platform
                .payments()
                .get(payment)
                .map(|p| p.merchant_order_no.to_string())
                .unwrap_or_default();
            f.ok("payment", payment.to_string())
                && f.ok("card", card.0.to_string())
                && f.ok("key", key)
                && f.ok("order", order)
                && f.merchant(*merchant)
                && f.ok("env", environment.to_string())
        }
        LedgerEntry::Refund { .. } => false,
    }
}

/// `expect platform: …`: the platform's records.
fn platform_count<F: EventFold>(r: &Runner<'_, F>, term: &str, f: &Filters<'_>) -> usize {
    let platform = &r.world.platform;
    match term {
        "payments" => platform
            .payments()
            .values()
            .filter(|p| {
                f.ok("order", p.merchant_order_no.to_string())
                    && f.merchant(p.merchant)
                    && f.ok("env", p.environment.to_string())
                    && f.ok("status", p.status.as_str().to_owned())
            })
            .count(),
        "attempts" => platform
            .attempts()
            .values()
            .filter(|a| f.ok("payment", a.payment.to_string()))
            .count(),
        "refunds" => platform
            .refunds()
            .values()
            .filter(|x| {
                f.ok("payment", x.payment.to_string())
                    && f.ok("refund_no", x.merchant_refund_no.to_string())
            })
            .count(),
        "sessions" => platform
            .sessions()
            .values()
            .filter(|s| f.ok("payment", s.payment.to_string()))
            .count(),
        "records" => platform.records().len(),
        _ => 0,
    }
}
