//! An answer of the target against an answer of the model, as the contract sees both
//! (`payhub_model::observation`; docs/conform.md, "The oracle"): ids bound one to one
//! per kind, versions judged by their steps (WEBHOOK-02), never by their number.

use super::readings::Reading;
use crate::retry_after::RetryAfter;
use payhub_model::ApiResponse;
use payhub_model::observation::{self, Dialect, Judge, VersionMark};
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
        let retry = (self.retry_after.as_ref()).map(|r| format!("  Retry-After: {r}"));
        format!("{}{} {}", self.status, retry.unwrap_or_default(), self.body)
    }
}

/// The target's ids ⇄ the model's, one to one per kind, and the version each object was
/// last seen at, on both sides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct IdMap {
    to_model: BTreeMap<String, String>,
    to_target: BTreeMap<String, String>,
    versions: BTreeMap<String, (u64, String, VersionMark)>,
}

impl IdMap {
    /// The model's id the target's `target` (qualified, [`qualified`]) of `kind` stands for.
    pub fn model_of(&self, kind: &str, target: &str) -> Option<&str> {
        self.to_model
            .get(&format!("{kind}:{target}"))
            .map(String::as_str)
    }

    /// Binds `target` to `model`, or says why they cannot be.
    fn bind(&mut self, target: &str, model: &str) -> Result<(), String> {
        let key = format!("{}:{target}", kind_of(model));
        match (self.to_model.get(&key), self.to_target.get(model)) {
            (Some(m), _) if m == model => Ok(()),
            (Some(m), _) => Err(format!("{target} was {m} before, here it is {model}")),
            (None, Some(t)) => Err(format!("{model} was {t} before, here it is {target}")),
            (None, None) => {
                self.to_model.insert(key, model.to_owned());
                self.to_target.insert(model.to_owned(), target.to_owned());
                Ok(())
            }
        }
    }

    /// WEBHOOK-02 on the object `model` seen at `model_v` (the model) and `got` (the
    /// target), `visible` being the target's object as it shows it (all but its
    /// version and volatile fields): a
    /// change the target shows must come with a higher version; an object the model did
    /// not change keeps its version; a model step the target does not show (a reading of
    /// its own, a field the contract does not name) may or may not move it, never back.
    fn version(
        &mut self,
        model: &str,
        model_v: u64,
        visible: String,
        got: &Value,
    ) -> Result<(), String> {
        let got = VersionMark::of(got);
        if let Some((mv, seen, gv)) = self.versions.get(model) {
            let shown = *seen != visible;
            let step = match model_v {
                v if v < *mv => Some(v),
                _ if shown => Some(mv + 1),
                v => (v == *mv).then_some(v),
            };
            match step {
                Some(step) => observation::version_step(*mv, gv, step, &got)?,
                None if got < *gv => {
                    return Err(format!(
                        "the version fell ({gv:?} → {got:?}) on an object the target shows unchanged (WEBHOOK-02)"
                    ));
                }
                None => {}
            }
        }
        (self.versions).insert(model.to_owned(), (model_v, visible, got));
        Ok(())
    }
}

/// The kind of a model id: its prefix (`pay`, `att`, `ref`, `cs`).
fn kind_of(model: &str) -> &str {
    model.split('_').next().unwrap_or(model)
}

/// The fields the model answers beyond those the contract names
/// ([`observation::NAMED_FIELDS`]).
pub const MODEL_ONLY_FIELDS: [&str; 3] = ["fee_rate_bps", "amount_refunded", "list"];

/// Whether the model's answers have a field `name`.
pub fn known_field(name: &str) -> bool {
    observation::NAMED_FIELDS.contains(&name) || MODEL_ONLY_FIELDS.contains(&name)
}

/// The first field of `body` the contract does not name and the profile does not list.
pub fn unexpected_field(body: &Value, extra: &[String]) -> Option<String> {
    fn walk(v: &Value, path: &str, extra: &[String]) -> Option<String> {
        match v {
            Value::Object(m) => m.iter().find_map(|(k, v)| {
                let here = format!("{path}.{k}");
                if !known_field(k) && !extra.iter().any(|e| e == k) {
                    return Some(here);
                }
                walk(v, &here, extra)
            }),
            Value::Array(a) => {
                (a.iter().enumerate()).find_map(|(i, v)| walk(v, &format!("{path}[{i}]"), extra))
            }
            _ => None,
        }
    }
    walk(body, "", extra)
}

/// Whether a model string is one of the model's ids (`pay_demo_001`, `att_001`, …).
fn is_model_id(s: &str) -> bool {
    let number = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let prefixes = ["pay_demo_", "att_", "ref_demo_", "cs_demo_"];
    prefixes
        .iter()
        .any(|p| s.strip_prefix(p).is_some_and(number))
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

/// Compares; on success `ids` has the answer's new bindings, and the answer shows the
/// readings returned (`readings.rs`: where the contract is silent, which one the target
/// took); on failure `ids` is unchanged.
pub fn matches(
    model: &ApiResponse,
    seen: &Observed,
    ns: u32,
    ids: &mut IdMap,
    dialect: &Dialect,
) -> Result<Vec<Reading>, String> {
    let want = serde_json::to_value(&model.body).map_err(|e| e.to_string())?;
    if !dialect.strict
        && let Some(reading) =
            observation::other_reading(model.status, &want, seen.status, &seen.body)
    {
        // The contract allows the target's answer where the model took another reading.
        return Ok(vec![Reading::of_observation(reading)]);
    }
    let mut shown = Vec::new();
    let code = want.pointer("/error/code").and_then(Value::as_str);
    // A refusal whose code the contract does not name is judged by its status class:
    // which 4xx the target gives it is the target's choice (A-ERROR-CODES), even where
    // the profile maps the code. A whole-body (strict) target answers the model's status.
    let by_class = !dialect.strict && code.is_some_and(|c| !observation::NAMED_CODES.contains(&c));
    if by_class {
        let theirs = seen.body.pointer("/error/code").and_then(Value::as_str);
        shown.push(if theirs == code {
            Reading::ModelCodes
        } else {
            Reading::OwnCodes
        });
    }
    // A-RETRY-AFTER: the contract shows Retry-After on a 429 only; on a 503 it is the
    // platform's choice (any value, or none).
    if model.status == 503 && seen.status == 503 && !dialect.strict {
        shown.push(if seen.retry_after.is_some() {
            Reading::With503RetryAfter
        } else {
            Reading::No503RetryAfter
        });
    }
    // Every field that differs is named (the report prints the target's answer and the
    // closest allowed one side by side on them), not only the first.
    let mut diffs = Vec::new();
    if !(observation::status_matches(model.status, seen.status)
        || by_class && model.status / 100 == seen.status / 100)
    {
        diffs.push(format!(
            "status {} where the model answers {}",
            seen.status, model.status
        ));
    }
    let want_retry = model.retry_after_s.map(|s| s.to_string());
    // RATE-03 names Retry-After on a 429 in seconds, the reference code reads it as
    // seconds from 0 or not at all (A-RETRY-AFTER-429): a whole-body target answers the
    // model's, any other one a reading: seconds, 0, none or an HTTP date.
    let retry_ok = if dialect.strict {
        want_retry == seen.retry_after
    } else if model.status == 429 && seen.status == 429 {
        let read = seen.retry_after.as_deref().map(RetryAfter::read);
        shown.push(match read {
            None => Reading::Absent429,
            Some(Some(RetryAfter::Zero)) => Reading::Zero429,
            Some(Some(RetryAfter::HttpDate)) => Reading::HttpDate429,
            Some(_) => Reading::Seconds429,
        });
        read != Some(None)
    } else {
        true
    };
    if !retry_ok {
        diffs.push(format!(
            "Retry-After {:?} is neither seconds nor an HTTP date (A-RETRY-AFTER-429; the model answers {:?})",
            seen.retry_after, want_retry
        ));
    }
    let mut trial = ids.clone();
    let mut walk = Walk {
        ns,
        ids: &mut trial,
        dialect,
        model_code: code,
        diffs,
    };
    walk.value(&want, &seen.body, "");
    if !walk.diffs.is_empty() {
        return Err(walk.diffs.join("; "));
    }
    *ids = trial;
    Ok(shown)
}

struct Walk<'a> {
    ns: u32,
    ids: &'a mut IdMap,
    dialect: &'a Dialect,
    model_code: Option<&'a str>,
    /// The differences found so far, in the order of the model's fields.
    diffs: Vec<String>,
}

impl Walk<'_> {
    /// `got` against `want` at `path`: each difference noted in `diffs`.
    fn value(&mut self, want: &Value, got: &Value, path: &str) {
        let diff = match (want, got) {
            (Value::Object(w), Value::Object(g)) => return self.object(w, g, path),
            (Value::Array(w), Value::Array(g)) if w.len() != g.len() => Err(format!(
                "{path}: {} items where the model has {}",
                g.len(),
                w.len()
            )),
            (Value::Array(w), Value::Array(g)) => {
                for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                    self.value(wv, gv, &format!("{path}[{i}]"));
                }
                Ok(())
            }
            (Value::String(w), Value::String(g)) if is_model_id(w) => {
                let bound = self.ids.bind(&qualified(self.ns, g), w);
                bound.map_err(|e| format!("{path}: {e}"))
            }
            (w, g) if w == g => Ok(()),
            (w, g) => Err(format!("{path} is {g} where the model answers {w}")),
        };
        self.diffs.extend(diff.err());
    }

    fn object(
        &mut self,
        w: &serde_json::Map<String, Value>,
        g: &serde_json::Map<String, Value>,
        path: &str,
    ) {
        for (k, wv) in w {
            let diff = self.field((k, wv), w, g, path);
            self.diffs.extend(diff.err());
        }
        let extra = g
            .iter()
            .filter(|(k, v)| !w.contains_key(*k) && !v.is_null() && !self.dialect.allows_extra(k));
        let extra = extra.map(|(k, _)| format!("{path}.{k} present where the model has none"));
        self.diffs.extend(extra);
    }

    /// Field `k` of the model's object (`wv`) against the target's object `g`.
    fn field(
        &mut self,
        (k, wv): (&str, &Value),
        w: &serde_json::Map<String, Value>,
        g: &serde_json::Map<String, Value>,
        path: &str,
    ) -> Result<(), String> {
        let here = format!("{path}.{k}");
        let judge = self.dialect.judge(k);
        let gv = g.get(k).filter(|v| !v.is_null());
        if judge == Judge::Flag {
            // RES-05: next_action guides the payer while requires_action; its shape
            // is not given: present (and not false) exactly when the model has it.
            let has = |v: Option<&Value>| !matches!(v, None | Some(Value::Bool(false)));
            if has(Some(wv)) != has(gv) {
                return Err(format!(
                    "{here} is {} where the model answers {wv}",
                    gv.map_or_else(|| "absent".to_owned(), Value::to_string)
                ));
            }
            return Ok(());
        }
        if judge == Judge::Skip && !self.dialect.strict {
            return Ok(());
        }
        // The status table gives processing/known ("submitted, being processed") and
        // processing/needs_query ("result unknown") one and the same action: which
        // of the two a platform shows while its upstream has not answered is its
        // reading (its synchronous wait may not have run out on its own clock).
        if k == "resolution_status"
            && !self.dialect.strict
            && observation::resolution_readings(
                w.get("status").and_then(Value::as_str).unwrap_or(""),
                wv.as_str().unwrap_or(""),
                g.get(k).and_then(Value::as_str).unwrap_or(""),
            )
        {
            return Ok(());
        }
        // KEY-07 names error.field for a missing Idempotency-Key only (A-ERROR-CODES).
        if k == "field" && !self.dialect.strict && wv != "Idempotency-Key" {
            return Ok(());
        }
        let Some(gv) = gv else {
            if wv.is_null() || !self.dialect.required(k, self.model_code) {
                return Ok(());
            }
            return Err(format!("{here} missing (the model answers {wv})"));
        };
        match judge {
            Judge::Presence | Judge::Skip => {}
            Judge::Version => {
                let (Some(id), Some(v)) = (w.get("id").and_then(Value::as_str), wv.as_u64()) else {
                    return Ok(());
                };
                let hidden =
                    |f: &str| matches!(self.dialect.judge(f), Judge::Version | Judge::Presence);
                let visible = g.iter().filter(|(f, x)| !x.is_null() && !hidden(f));
                let visible: serde_json::Map<String, Value> =
                    visible.map(|(f, x)| (f.clone(), x.clone())).collect();
                let versioned = self
                    .ids
                    .version(id, v, Value::Object(visible).to_string(), gv);
                versioned.map_err(|e| format!("{here}: {e}"))?;
            }
            Judge::Code => {
                let (wc, gc) = (wv.as_str(), gv.as_str());
                if !matches!((wc, gc), (Some(w), Some(g)) if self.dialect.refusal_matches(w, g)) {
                    return Err(format!("{here} is {gv} where the model answers {wv}"));
                }
            }
            Judge::Retryable => {
                // A-RETRYABLE: the contract shows the flag for two codes only.
                let shown =
                    (self.model_code).is_some_and(|c| observation::RETRYABLE_SHOWN.contains(&c));
                if (shown || self.dialect.strict) && wv != gv {
                    return Err(format!("{here} is {gv} where the model answers {wv}"));
                }
            }
            Judge::Exact | Judge::Flag => self.value(wv, gv, &here),
        }
        Ok(())
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
        let d = Dialect::default();
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
        matches(&model, &seen("pay_X"), 0, &mut ids, &d).unwrap();
        assert_eq!(ids.model_of("pay", "pay_X"), Some("pay_demo_001"));
        matches(&model, &seen("pay_X"), 0, &mut ids, &d).unwrap();
        let e = matches(&model, &seen("pay_Y"), 0, &mut ids, &d).unwrap_err();
        assert!(e.contains("pay_demo_001 was pay_X"), "{e}");
        let e = matches(
            &error(ErrorCode::RateLimited),
            &seen("pay_X"),
            0,
            &mut ids,
            &d,
        )
        .unwrap_err();
        assert!(e.contains("status 409"), "{e}");
    }

    /// Every field where the target differs is named, not only the first: the report
    /// prints them beside the closest answer the model allows.
    #[test]
    fn every_differing_field_is_named() {
        let d = Dialect::default();
        let mut ids = IdMap::default();
        let got = serde_json::json!({"id":"pay_X","merchant_order_no":"O2","amount":999,
            "currency":"USD","status":"failed","trace":1});
        let strict = Dialect {
            strict: true,
            ..Dialect::default()
        };
        let e = matches(
            &payment("succeeded", 1, false),
            &seen(201, got.clone()),
            0,
            &mut ids,
            &d,
        )
        .unwrap_err();
        for field in ["status 201", ".merchant_order_no", ".amount", ".status is"] {
            assert!(e.contains(field), "{field}: {e}");
        }
        let e = matches(
            &payment("succeeded", 1, false),
            &seen(200, got),
            0,
            &mut ids,
            &strict,
        )
        .unwrap_err();
        assert!(
            e.contains(".trace present") && e.contains(".attempt_count missing"),
            "{e}"
        );
    }

    #[test]
    fn unexpected_fields_are_found_at_any_depth() {
        let body = serde_json::json!({"error":{"code":"x","trace_id":"abc"}});
        assert_eq!(unexpected_field(&body, &[]), Some(".error.trace_id".into()));
        assert_eq!(unexpected_field(&body, &["trace_id".into()]), None);
    }

    fn payment(status: &str, version: u32, next_action: bool) -> ApiResponse {
        let body = serde_json::json!({"id":"pay_demo_001","merchant_order_no":"O1","amount":100,
            "currency":"USD","status":status,"resolution_status":"known","attempt_count":1,
            "next_action":next_action,"expires_at":86400000,"fee_rate_bps":250,
            "amount_refunded":0,"version":version});
        ApiResponse {
            status: 200,
            retry_after_s: None,
            body: serde_json::from_value(body).unwrap(),
        }
    }

    fn seen(status: u16, body: Value) -> Observed {
        Observed {
            status,
            retry_after: None,
            body,
        }
    }

    /// A platform in its own dialect: ids of its own, fields of its own, nulls, a
    /// `next_action` object, its own version numbers, its own code for a 404.
    #[test]
    fn a_foreign_dialect_is_judged_on_what_the_contract_names() {
        let d = Dialect {
            error_codes: [("resource_not_found".into(), "resource_missing".into())]
                .into_iter()
                .collect(),
            ..Dialect::default()
        };
        let mut ids = IdMap::default();
        let theirs = |status: &str, version: u64, next: Value| {
            seen(
                200,
                serde_json::json!({"id":"pay_557eff458b794164bc1a","object":"payment",
                "merchant_order_no":"O1","amount":100,"currency":"USD","status":status,
                "failure":null,"next_action":next,"version":version,"created":1}),
            )
        };
        let next = serde_json::json!({"type":"redirect"});
        matches(
            &payment("requires_action", 2, true),
            &theirs("requires_action", 5, next.clone()),
            0,
            &mut ids,
            &d,
        )
        .unwrap();
        // The same object, nothing changed: the version stays.
        matches(
            &payment("requires_action", 2, true),
            &theirs("requires_action", 5, next.clone()),
            0,
            &mut ids,
            &d,
        )
        .unwrap();
        let e = matches(
            &payment("requires_action", 2, true),
            &theirs("requires_action", 6, next.clone()),
            0,
            &mut ids,
            &d,
        )
        .unwrap_err();
        assert!(e.contains("version"), "{e}");
        // A visible change: it must rise, by any step.
        let e = matches(
            &payment("succeeded", 3, false),
            &theirs("succeeded", 5, Value::Null),
            0,
            &mut ids,
            &d,
        )
        .unwrap_err();
        assert!(e.contains("version stayed"), "{e}");
        matches(
            &payment("succeeded", 3, false),
            &theirs("succeeded", 9, Value::Null),
            0,
            &mut ids,
            &d,
        )
        .unwrap();
        // next_action while not requires_action is a difference the contract names.
        let e = matches(
            &payment("succeeded", 3, false),
            &theirs("succeeded", 9, next),
            0,
            &mut ids,
            &d,
        )
        .unwrap_err();
        assert!(e.contains("next_action"), "{e}");
        // Its own code for an unknown Payment, mapped; an unmapped one by its status.
        let missing = error(ErrorCode::ResourceMissing);
        let got = |code: &str| {
            seen(
                404,
                serde_json::json!({"error":{"code":code,"message":"no"}}),
            )
        };
        matches(&missing, &got("resource_not_found"), 0, &mut ids, &d).unwrap();
        // Once the profile maps a code to resource_missing, that is the code to answer.
        assert!(matches(&missing, &got("forbidden"), 0, &mut ids, &d).is_err());
        let plain = Dialect::default();
        let e = matches(&missing, &got("forbidden"), 0, &mut ids, &plain);
        assert!(e.is_ok(), "an unmapped code is judged by its status: {e:?}");
        let d2 = Dialect {
            error_codes: [("forbidden".into(), "permission_denied".into())]
                .into_iter()
                .collect(),
            ..Dialect::default()
        };
        assert!(matches(&missing, &got("forbidden"), 0, &mut ids, &d2).is_err());
        // A code the contract names is judged wherever the model answers it.
        let conflict = error(ErrorCode::IdempotencyConflict);
        let got409 = |code: &str| seen(409, serde_json::json!({"error":{"code":code}}));
        matches(&conflict, &got409("idempotency_conflict"), 0, &mut ids, &d).unwrap();
        assert!(matches(&conflict, &got409("duplicate_request"), 0, &mut ids, &d).is_err());
        // A-RETRYABLE: payment_in_progress's flag is the platform's to choose.
        let busy = error(ErrorCode::PaymentInProgress);
        let got = seen(
            409,
            serde_json::json!({"error":{"code":"payment_in_progress","retryable":true}}),
        );
        matches(&busy, &got, 0, &mut ids, &d).unwrap();
    }

    #[test]
    fn a_strict_target_answers_whole_bodies() {
        let d = Dialect {
            strict: true,
            ..Dialect::default()
        };
        let mut ids = IdMap::default();
        let body = serde_json::to_value(&payment("succeeded", 2, false).body).unwrap();
        let mut partial = body.clone();
        partial.as_object_mut().unwrap().remove("attempt_count");
        let e = matches(
            &payment("succeeded", 2, false),
            &seen(200, partial),
            0,
            &mut ids,
            &d,
        )
        .unwrap_err();
        assert!(e.contains("attempt_count missing"), "{e}");
        let mut extra = body;
        extra["trace"] = Value::from(1);
        let e = matches(
            &payment("succeeded", 2, false),
            &seen(200, extra),
            0,
            &mut ids,
            &d,
        )
        .unwrap_err();
        assert!(e.contains(".trace present"), "{e}");
    }
}
