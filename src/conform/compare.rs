//! An answer of the target against an answer of the model, field by field: the target's
//! ids mapped to the model's (one to one, per model state), fields the profile marks
//! volatile compared for presence only.

use payhub_model::ApiResponse;
use serde_json::Value;
use std::collections::BTreeMap;

/// What the target answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Value,
}

impl Observed {
    /// `201 {"id":…}`, the contract's notation.
    pub fn notation(&self) -> String {
        let mut s = format!("{}", self.status);
        if let Some(r) = &self.retry_after {
            s.push_str(&format!("  Retry-After: {r}"));
        }
        format!("{s} {}", self.body)
    }
}

/// The target's ids ⇄ the model's, one to one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct IdMap {
    to_model: BTreeMap<String, String>,
    to_target: BTreeMap<String, String>,
}

impl IdMap {
    pub fn model_of(&self, target: &str) -> Option<&str> {
        self.to_model.get(target).map(String::as_str)
    }

    /// Binds `target` to `model`, or says why they cannot be.
    fn bind(&mut self, target: &str, model: &str) -> Result<(), String> {
        match (self.to_model.get(target), self.to_target.get(model)) {
            (Some(m), _) if m == model => Ok(()),
            (Some(m), _) => Err(format!("{target} was {m} before, here it is {model}")),
            (None, Some(t)) => Err(format!("{model} was {t} before, here it is {target}")),
            (None, None) => {
                self.to_model.insert(target.to_owned(), model.to_owned());
                self.to_target.insert(model.to_owned(), target.to_owned());
                Ok(())
            }
        }
    }
}

/// Every field name an answer of the contract has (the model's objects and errors).
pub const KNOWN_FIELDS: &[&str] = &[
    "id",
    "merchant_order_no",
    "amount",
    "currency",
    "status",
    "resolution_status",
    "attempt_count",
    "failure",
    "code",
    "attempt_id",
    "next_action",
    "expires_at",
    "fee_rate_bps",
    "amount_refunded",
    "version",
    "payment_id",
    "merchant_refund_no",
    "data",
    "list",
    "error",
    "field",
    "retryable",
    "related_resource_id",
];

/// The first field of `body` the contract does not name and the profile does not list.
pub fn unexpected_field(body: &Value, extra: &[String]) -> Option<String> {
    fn walk(v: &Value, path: &str, extra: &[String]) -> Option<String> {
        match v {
            Value::Object(m) => m.iter().find_map(|(k, v)| {
                let here = format!("{path}.{k}");
                if !KNOWN_FIELDS.contains(&k.as_str()) && !extra.iter().any(|e| e == k) {
                    return Some(here);
                }
                walk(v, &here, extra)
            }),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(v, &format!("{path}[{i}]"), extra)),
            _ => None,
        }
    }
    walk(body, "", extra)
}

/// Whether a model string is one of the model's ids (`pay_demo_001`, `att_001`, …).
fn is_model_id(s: &str) -> bool {
    ["pay_demo_", "att_", "ref_demo_", "cs_demo_"]
        .iter()
        .any(|p| {
            s.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// A target id as the id map keys it: with its namespace (`2/pay_1`) when ids are per
/// merchant, as it is otherwise (namespace 0).
pub fn qualified(ns: u32, target: &str) -> String {
    if ns == 0 {
        target.to_owned()
    } else {
        format!("{ns}/{target}")
    }
}

/// Compares; on success `ids` has the answer's new bindings, on failure it is unchanged.
pub fn matches(
    model: &ApiResponse,
    seen: &Observed,
    ns: u32,
    ids: &mut IdMap,
    volatile: &[String],
    extra: &[String],
) -> Result<(), String> {
    if model.status != seen.status {
        return Err(format!(
            "status {} where the model answers {}",
            seen.status, model.status
        ));
    }
    let want_retry = model.retry_after_s.map(|s| s.to_string());
    if want_retry != seen.retry_after {
        return Err(format!(
            "Retry-After {:?} where the model answers {:?}",
            seen.retry_after, want_retry
        ));
    }
    let want = serde_json::to_value(&model.body).map_err(|e| e.to_string())?;
    let mut trial = ids.clone();
    value(&want, &seen.body, "", ns, &mut trial, volatile, extra)?;
    *ids = trial;
    Ok(())
}

fn value(
    want: &Value,
    got: &Value,
    path: &str,
    ns: u32,
    ids: &mut IdMap,
    volatile: &[String],
    extra: &[String],
) -> Result<(), String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let here = format!("{path}.{k}");
                let Some(gv) = g.get(k) else {
                    return Err(format!("{here} missing (the model answers {wv})"));
                };
                if volatile.iter().any(|v| v == k) {
                    continue;
                }
                value(wv, gv, &here, ns, ids, volatile, extra)?;
            }
            if let Some(k) = g
                .keys()
                .find(|k| !w.contains_key(*k) && !extra.iter().any(|e| e == *k))
            {
                return Err(format!("{path}.{k} present where the model has none"));
            }
            Ok(())
        }
        (Value::Array(w), Value::Array(g)) => {
            if w.len() != g.len() {
                return Err(format!(
                    "{path}: {} items where the model has {}",
                    g.len(),
                    w.len()
                ));
            }
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                value(wv, gv, &format!("{path}[{i}]"), ns, ids, volatile, extra)?;
            }
            Ok(())
        }
        (Value::String(w), Value::String(g)) if is_model_id(w) => ids
            .bind(&qualified(ns, g), w)
            .map_err(|e| format!("{path}: {e}")),
        (w, g) if w == g => Ok(()),
        (w, g) => Err(format!("{path} is {g} where the model answers {w}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::{ApiError, ErrorCode, ResponseBody};

    fn error(code: ErrorCode) -> ApiResponse {
        ApiResponse::error(ApiError::new(code))
    }

    #[test]
    fn ids_map_one_to_one_and_volatile_fields_are_skipped() {
        let mut ids = IdMap::default();
        let model = ApiResponse {
            status: 409,
            retry_after_s: None,
            body: ResponseBody::Error {
                error: ApiError {
                    related_resource_id: Some(payhub_model::ResourceId::Payment(
                        payhub_model::PaymentId(1),
                    )),
                    ..ApiError::new(ErrorCode::OrderNoConflict)
                },
            },
        };
        let seen = |id: &str| Observed {
            status: 409,
            retry_after: None,
            body: serde_json::json!({"error":{"code":"order_no_conflict","retryable":false,"related_resource_id":id}}),
        };
        matches(&model, &seen("pay_X"), 0, &mut ids, &[], &[]).unwrap();
        assert_eq!(ids.model_of("pay_X"), Some("pay_demo_001"));
        matches(&model, &seen("pay_X"), 0, &mut ids, &[], &[]).unwrap();
        let e = matches(&model, &seen("pay_Y"), 0, &mut ids, &[], &[]).unwrap_err();
        assert!(e.contains("pay_demo_001 was pay_X"), "{e}");
        let e = matches(
            &error(ErrorCode::RateLimited),
            &seen("pay_X"),
            0,
            &mut ids,
            &[],
            &[],
        )
        .unwrap_err();
        assert!(e.contains("status 409"), "{e}");
    }

    #[test]
    fn unexpected_fields_are_found_at_any_depth() {
        let body = serde_json::json!({"error":{"code":"x","trace_id":"abc"}});
        assert_eq!(unexpected_field(&body, &[]), Some(".error.trace_id".into()));
        assert_eq!(unexpected_field(&body, &["trace_id".into()]), None);
    }
}
