//! One answer as the contract sees it: what of a status, a refusal and an object the
//! contract names, read through a platform's own dialect (its error codes, its ids, its
//! extra fields, its version numbering), so that an answer is judged by the contract and
//! not by this model's representation of it (Knossos, Porcupine: an oracle over another
//! system is a relation, "allowed or not", not an equality with our own answer).
//!
//! [`Dialect`] says how a platform speaks; [`Judge`] says how each field of an answer is
//! judged; [`Refusal`] is an error answer at the contract's level; [`version_step`] is
//! the contract's only statement on versions ("以最新版本为准", the latest version
//! prevails, WEBHOOK-02): they rise with every visible change and stay equal across a
//! replay that changed nothing, whatever their numbers (A-VERSION).
//!
//! The rules of the reading, each from the contract's text:
//! - the status code is judged as it is; a status the contract never names (404, 405) by
//!   its class only (4xx);
//! - `error.code` is judged where the contract names the code (A-ERROR-CODES lists the
//!   seven it names) or the platform's profile maps it to one of the model's; any other
//!   code is "a refusal the contract does not name", judged by its status alone;
//! - ids are opaque: any string, bound one to one to the model's, per kind;
//! - only the fields the contract names are judged, each only where the platform wrote
//!   it (a partial body is judged on what it holds; `null` is absent), unless the
//!   platform is `strict` (whole bodies, no field the contract does not name);
//! - where the contract is silent or ambiguous every reading is accepted:
//!   `error.retryable` is judged only for the codes whose flag the contract shows
//!   (A-RETRYABLE), `next_action` by its presence only (its shape is not given), and the
//!   422 that answers a confirm of a Payment that is both closed and past `expires_at`
//!   is any of the three the model could give (A-EXPIRY-STATUSES: the order of those
//!   checks is not given).

use serde_json::Value;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The error codes the contract names (A-ERROR-CODES).
pub const NAMED_CODES: &[&str] = &[
    "idempotency_conflict",
    "operation_in_progress",
    "order_no_conflict",
    "payment_in_progress",
    "rate_limited",
    "internal_error",
    "temporarily_unavailable",
];

/// The status codes the contract names; any other is judged by its class.
pub const NAMED_STATUSES: &[u16] = &[200, 201, 202, 400, 401, 403, 409, 422, 429, 500, 503];

/// The answer fields the contract names (its tables, its scenarios' bodies, RES-05).
pub const NAMED_FIELDS: &[&str] = &[
    "id",
    "merchant_order_no",
    "merchant_refund_no",
    "amount",
    "currency",
    "status",
    "resolution_status",
    "attempt_count",
    "attempt_id",
    "failure",
    "next_action",
    "expires_at",
    "payment_id",
    "refund_id",
    "related_resource_id",
    "version",
    "error",
    "code",
    "retryable",
    "field",
    "data",
];

/// The codes whose `retryable` the contract shows: S2 (internal_error) and S13
/// (temporarily_unavailable), both `true` (A-RETRYABLE).
pub const RETRYABLE_SHOWN: &[&str] = &["internal_error", "temporarily_unavailable"];

/// Refusals among which the contract does not say which comes first: the 422s a confirm
/// of a Payment may get when it is closed, past `expires_at` or out of attempts at once
/// (A-EXPIRY-STATUSES, A-FAILED-AFTER-EXPIRY).
///
/// Likewise a request both malformed and about an object the platform does not have:
/// whether the body or the object is checked first is not said.
pub const SAME_READING: &[&[&str]] = &[
    &[
        "payment_expired",
        "payment_not_confirmable",
        "attempts_exhausted",
    ],
    &["invalid_request", "resource_missing"],
];

/// The `resolution_status` values of a `processing` Payment the status table gives one
/// action ("same as above"): either is a reading while the upstream has not answered.
pub const PROCESSING_READINGS: &[&str] = &["known", "needs_query"];

/// Whether `got` is a reading of `resolution_status` the contract allows where the model
/// answers `model` for a Payment in `status`: processing/known and processing/needs_query
/// ([`PROCESSING_READINGS`]); requires_action/known and requires_action/manual_review (the
/// table lists both; when a Payment waiting for its payer passes to manual follow-up is
/// not said: A-AUTO-WINDOW).
pub fn resolution_readings(status: &str, model: &str, got: &str) -> bool {
    match status {
        "processing" => PROCESSING_READINGS.contains(&model) && PROCESSING_READINGS.contains(&got),
        "requires_action" => {
            let both = ["known", "manual_review"];
            both.contains(&model) && both.contains(&got)
        }
        _ => false,
    }
}

/// How one platform speaks the contract (from its profile).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dialect {
    /// The platform's error codes that stand for one of the model's (`resource_not_found`
    /// → `resource_missing`): each is then judged as the model's code.
    pub error_codes: BTreeMap<String, String>,
    /// Whole bodies: every field the model answers must be present, and a field the
    /// contract does not name (nor `extra`, `model_fields`) is refused.
    pub strict: bool,
    /// Fields the contract does not name that the platform answers exactly as the model
    /// does (the sandbox: `amount_refunded`, `fee_rate_bps`, `list`, absolute `version`).
    pub model_fields: Vec<String>,
    /// Fields compared for presence only (timestamps of the platform's own clock).
    pub volatile: Vec<String>,
    /// Fields the platform adds, accepted even when `strict`.
    pub extra: Vec<String>,
}

/// How one field of an answer is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judge {
    /// Equal to the model's (ids bound one to one).
    Exact,
    /// Present where the model has it; its value not judged.
    Presence,
    /// `version`: by its relation to the object's earlier versions ([`version_step`]).
    Version,
    /// `next_action`: present (and not `false`) exactly while the model has it.
    Flag,
    /// `error.code`: see [`Dialect::refusal_matches`].
    Code,
    /// `error.retryable`: judged only for the codes whose flag the contract shows.
    Retryable,
    /// Not judged: a field the contract does not name.
    Skip,
}

impl Dialect {
    /// How field `name` is judged.
    pub fn judge(&self, name: &str) -> Judge {
        let listed = |l: &[String]| l.iter().any(|f| f == name);
        if listed(&self.volatile) {
            return Judge::Presence;
        }
        if listed(&self.model_fields) {
            return Judge::Exact;
        }
        match name {
            "version" => Judge::Version,
            "next_action" => Judge::Flag,
            "code" => Judge::Code,
            "retryable" => Judge::Retryable,
            n if NAMED_FIELDS.contains(&n) => Judge::Exact,
            _ => Judge::Skip,
        }
    }

    /// Whether a field the model answers must be present in the platform's answer: every
    /// one when `strict`; else those the contract requires on that answer (the object's
    /// `id` and `status`, the error's `code`, `related_resource_id` of the 409s that name
    /// one, S4 and S8).
    pub fn required(&self, name: &str, model_code: Option<&str>) -> bool {
        if self.strict {
            return true;
        }
        match name {
            "id" | "status" | "error" | "code" | "data" => true,
            "related_resource_id" => {
                matches!(
                    model_code,
                    Some("order_no_conflict" | "payment_in_progress")
                )
            }
            _ => false,
        }
    }

    /// Whether a field the platform answers and the model does not is allowed.
    pub fn allows_extra(&self, name: &str) -> bool {
        !self.strict || self.extra.iter().any(|e| e == name)
    }

    /// The platform's code as one of the model's: mapped by the profile, else as written.
    pub fn model_code<'a>(&'a self, written: &'a str) -> &'a str {
        self.error_codes
            .get(written)
            .map_or(written, String::as_str)
    }

    /// Whether the model's code is one the contract names or the profile maps to.
    pub fn judges_code(&self, model: &str) -> bool {
        NAMED_CODES.contains(&model) || self.error_codes.values().any(|m| m == model)
    }

    /// The platform's refusal as the contract sees it.
    pub fn refusal(&self, written: &str) -> Refusal {
        let model = self.model_code(written);
        if self.judges_code(model) || self.error_codes.contains_key(written) {
            Refusal::Named(model.to_owned())
        } else {
            Refusal::Unnamed(written.to_owned())
        }
    }

    /// Whether the platform's `error.code` is allowed where the model answers `model`
    /// (the status already matched): equal where the contract names the code or the
    /// profile maps it; any of one [`SAME_READING`] group (not for a `strict` target);
    /// any code the contract does not name where the model's is not named either.
    pub fn refusal_matches(&self, model: &str, written: &str) -> bool {
        // A whole-body target answers the model's own reading.
        let reading = |a: &str, b: &str| {
            !self.strict
                && SAME_READING
                    .iter()
                    .any(|g| g.contains(&a) && g.contains(&b))
        };
        match self.refusal(written) {
            Refusal::Named(got) => got == model || reading(model, &got),
            Refusal::Unnamed(_) => !self.judges_code(model),
        }
    }
}

/// An error answer at the contract's level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A code the contract names (or the profile maps), as the model's code.
    Named(String),
    /// "A refusal the contract does not name", as the platform wrote it.
    Unnamed(String),
}

/// A reading of a point where the contract is silent or ambiguous, other than the
/// model's, that the target took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// A-STATUS-CODES, UNKNOWN-02: "超时、5xx、202 都可能已经扣款" (a timeout, a 5xx or a
    /// 202 may all have charged): an upstream that gave no definite answer is told as
    /// 500 `internal_error` where the model answers 202.
    UnknownAs500,
    /// A-CKO-ANY-STATUS: what a new checkout session means for a Payment no longer open
    /// is not said: the target refuses it (a 4xx other than the conflicts CKO-01 rules
    /// out) where the model opens a session.
    SessionRefused,
    /// A-PAUSE-SCOPE: whether a paused channel is checked before or after the object a
    /// confirm names is looked up is not said: 503 where the model answers 404.
    PausedBeforeLookup,
}

impl Reading {
    /// What the target did, for reports.
    pub fn text(self) -> &'static str {
        match self {
            Reading::UnknownAs500 => {
                "an upstream without a definite answer told as 500 internal_error, not 202"
            }
            Reading::SessionRefused => {
                "a new checkout session for a Payment no longer open refused"
            }
            Reading::PausedBeforeLookup => {
                "a paused channel checked before the Payment is looked up (503, not 404)"
            }
        }
    }

    /// The assumption whose other reading it is.
    pub fn assumption(self) -> &'static str {
        match self {
            Reading::UnknownAs500 => "A-STATUS-CODES",
            Reading::SessionRefused => "A-CKO-ANY-STATUS",
            Reading::PausedBeforeLookup => "A-PAUSE-SCOPE",
        }
    }
}

/// The reading the target's whole answer takes where the model answered another one
/// the contract allows as well, if any.
pub fn other_reading(
    model_status: u16,
    model: &Value,
    got_status: u16,
    got: &Value,
) -> Option<Reading> {
    let got_code = got.pointer("/error/code").and_then(Value::as_str);
    if model_status == 202 && got_status == 500 && got_code == Some("internal_error") {
        return Some(Reading::UnknownAs500);
    }
    if model_status == 404 && got_status == 503 && got_code == Some("temporarily_unavailable") {
        return Some(Reading::PausedBeforeLookup);
    }
    let is_session = model
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(|i| i.starts_with("cs_"));
    let ruled_out = ["order_no_conflict", "idempotency_conflict"];
    if is_session
        && matches!(model_status, 200 | 201)
        && matches!(got_status, 409 | 422)
        && got_code.is_some_and(|c| !ruled_out.contains(&c))
    {
        return Some(Reading::SessionRefused);
    }
    None
}

/// Whether two statuses agree: equal, or of one class where the contract names neither.
pub fn status_matches(model: u16, got: u16) -> bool {
    model == got
        || (!NAMED_STATUSES.contains(&model)
            && !NAMED_STATUSES.contains(&got)
            && model / 100 == got / 100)
}

/// Whether a value is absent at the contract's level (`null` is).
pub fn absent(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// A platform's version as something ordered: a number, or else its text (compared for
/// equality only).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VersionMark {
    Number(i128),
    Text(String),
}

impl std::fmt::Display for VersionMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VersionMark::Number(n) => write!(f, "{n}"),
            VersionMark::Text(t) => f.write_str(t),
        }
    }
}

/// A number as a JSON number (a string past 64 bits), a text as a string.
impl serde::Serialize for VersionMark {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            VersionMark::Number(n) => match i64::try_from(*n) {
                Ok(v) => s.serialize_i64(v),
                Err(_) => s.collect_str(n),
            },
            VersionMark::Text(t) => s.serialize_str(t),
        }
    }
}

impl VersionMark {
    pub fn of(v: &Value) -> VersionMark {
        match v {
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .map_or_else(|| VersionMark::Text(n.to_string()), VersionMark::Number),
            Value::String(s) => s
                .parse::<i128>()
                .map_or_else(|_| VersionMark::Text(s.clone()), VersionMark::Number),
            other => VersionMark::Text(other.to_string()),
        }
    }
}

/// WEBHOOK-02, read as a relation: from one sight of an object to the next, the
/// platform's version moves as the model's does — rises when the model's rises, stays
/// when it stays, falls when it falls (an older snapshot) — whatever the numbers.
pub fn version_step(
    model_before: u64,
    got_before: &VersionMark,
    model_now: u64,
    got_now: &VersionMark,
) -> Result<(), String> {
    let want = model_now.cmp(&model_before);
    let got = match (got_before, got_now) {
        (VersionMark::Number(a), VersionMark::Number(b)) => b.cmp(a),
        (a, b) if a == b => Ordering::Equal,
        // Text versions that differ: a change, direction unknown.
        _ => {
            return if want == Ordering::Equal {
                Err("the version changed where nothing visible did".into())
            } else {
                Ok(())
            };
        }
    };
    let word = |o: Ordering| match o {
        Ordering::Less => "fell",
        Ordering::Equal => "stayed",
        Ordering::Greater => "rose",
    };
    if want == got {
        Ok(())
    } else {
        Err(format!(
            "the version {} ({got_before:?} → {got_now:?}) where the object's {} (WEBHOOK-02)",
            word(got),
            match want {
                Ordering::Greater => "changed since it was last seen",
                Ordering::Equal => "is unchanged since it was last seen",
                Ordering::Less => "is an older snapshot",
            }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pyplat() -> Dialect {
        Dialect {
            error_codes: [(
                "resource_not_found".to_owned(),
                "resource_missing".to_owned(),
            )]
            .into_iter()
            .collect(),
            ..Dialect::default()
        }
    }

    #[test]
    fn codes_the_contract_names_are_judged_others_by_status_alone() {
        let d = Dialect::default();
        assert!(d.refusal_matches("idempotency_conflict", "idempotency_conflict"));
        assert!(!d.refusal_matches("idempotency_conflict", "order_no_conflict"));
        assert!(!d.refusal_matches("order_no_conflict", "duplicate_order"));
        assert!(d.refusal_matches("resource_missing", "resource_not_found"));
        assert!(d.refusal_matches("payment_not_confirmable", "payment_expired"));
        // Mapped: judged as the model's code.
        let p = pyplat();
        assert!(p.refusal_matches("resource_missing", "resource_not_found"));
        assert!(!p.refusal_matches("permission_denied", "resource_not_found"));
        assert_eq!(
            p.refusal("invalid_parameter"),
            Refusal::Unnamed("invalid_parameter".into())
        );
    }

    #[test]
    fn statuses_the_contract_never_names_are_judged_by_class() {
        assert!(status_matches(404, 410));
        assert!(!status_matches(404, 403));
        assert!(!status_matches(409, 422));
    }

    #[test]
    fn fields_are_judged_as_the_contract_names_them() {
        let d = Dialect::default();
        assert_eq!(d.judge("amount_refunded"), Judge::Skip);
        assert_eq!(d.judge("status"), Judge::Exact);
        assert_eq!(d.judge("version"), Judge::Version);
        assert!(d.required("id", None) && !d.required("attempt_count", None));
        assert!(d.allows_extra("trace_id"));
        let strict = Dialect {
            strict: true,
            model_fields: vec!["version".into()],
            ..Dialect::default()
        };
        assert_eq!(strict.judge("version"), Judge::Exact);
        assert!(!strict.allows_extra("trace_id") && strict.required("attempt_count", None));
    }

    #[test]
    fn versions_are_judged_by_their_steps_not_their_numbers() {
        let n = |v: i128| VersionMark::Number(v);
        assert!(version_step(1, &n(7), 2, &n(9)).is_ok());
        assert!(version_step(2, &n(9), 2, &n(9)).is_ok());
        assert!(version_step(2, &n(9), 2, &n(10)).is_err());
        assert!(version_step(1, &n(7), 2, &n(7)).is_err());
        assert!(version_step(2, &n(9), 3, &n(8)).is_err());
        assert_eq!(VersionMark::of(&Value::String("12".into())), n(12));
    }
}
