//! [`ApiResponse`]: one HTTP response from the platform, and its body.

use super::error::{ApiError, ErrorCode};
use super::objects::{PaymentView, RefundView, SessionView};
use serde::{Deserialize, Serialize};

/// A response body.
///
/// Untagged: each object has its own set of fields (the objects refuse unknown ones) and
/// its own id prefix, so a body reads back as the variant it was written as. The one
/// exception would be an empty list, `{"data":[]}`, which could be either list; a list of
/// refunds is therefore written `{"list":"refunds","data":[…]}`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResponseBody {
    Payment(PaymentView),
    Refund(RefundView),
    Session(SessionView),
    /// `{"data":[…]}` of a list query.
    #[serde(deserialize_with = "list::payments")]
    Payments {
        data: Vec<PaymentView>,
    },
    /// `{"list":"refunds","data":[…]}` of a list query.
    #[serde(
        serialize_with = "list::serialize_refunds",
        deserialize_with = "list::refunds"
    )]
    Refunds {
        data: Vec<RefundView>,
    },
    Error {
        error: ApiError,
    },
}

/// The two list bodies on the wire: each refuses the other's fields, so that the empty
/// lists stay apart.
mod list {
    use super::{PaymentView, RefundView};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// The value of `"list"`: only lists of refunds carry it.
    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Of {
        Refunds,
    }

    #[derive(Serialize)]
    struct RefundsOut<'a> {
        list: Of,
        data: &'a [RefundView],
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct PaymentsIn {
        data: Vec<PaymentView>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct RefundsIn {
        #[serde(rename = "list")]
        _list: Of,
        data: Vec<RefundView>,
    }

    pub(super) fn payments<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PaymentView>, D::Error> {
        PaymentsIn::deserialize(d).map(|p| p.data)
    }

    pub(super) fn serialize_refunds<S: Serializer>(
        data: &[RefundView],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        RefundsOut {
            list: Of::Refunds,
            data,
        }
        .serialize(s)
    }

    pub(super) fn refunds<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RefundView>, D::Error> {
        RefundsIn::deserialize(d).map(|r| r.data)
    }
}

/// One HTTP response from the platform.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiResponse {
    pub status: u16,
    /// `Retry-After` in seconds (429 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u32>,
    pub body: ResponseBody,
}

impl ApiResponse {
    pub fn ok(status: u16, body: ResponseBody) -> ApiResponse {
        ApiResponse {
            status,
            retry_after_s: None,
            body,
        }
    }

    pub fn error(error: ApiError) -> ApiResponse {
        ApiResponse {
            status: error.code.http_status(),
            retry_after_s: None,
            body: ResponseBody::Error { error },
        }
    }

    /// The error object, for non-2xx responses.
    pub fn api_error(&self) -> Option<&ApiError> {
        match &self.body {
            ResponseBody::Error { error } => Some(error),
            _ => None,
        }
    }

    /// The error code, for non-2xx responses.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.api_error().map(|e| e.code)
    }

    /// The Payment carried by this response, if any.
    pub fn payment(&self) -> Option<&PaymentView> {
        match &self.body {
            ResponseBody::Payment(p) => Some(p),
            ResponseBody::Payments { data } => data.first(),
            _ => None,
        }
    }

    /// The Refund carried by this response, if any.
    pub fn refund(&self) -> Option<&RefundView> {
        match &self.body {
            ResponseBody::Refund(r) => Some(r),
            ResponseBody::Refunds { data } => data.first(),
            _ => None,
        }
    }

    /// 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// `200 {"id":"pay_demo_001","status":"succeeded",…}` / `409 {"error":{"code":"idempotency_conflict",…}}`.
impl std::fmt::Display for ApiResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.status)?;
        if let Some(s) = self.retry_after_s {
            write!(f, "  Retry-After: {s}")?;
        }
        match &self.body {
            ResponseBody::Payment(p) => write_payment(f, p),
            ResponseBody::Refund(r) => write!(
                f,
                " {{\"id\":\"{}\",\"status\":\"{}\",\"resolution_status\":\"{}\",\"version\":{},…}}",
                r.id,
                r.status.as_str(),
                r.resolution_status.as_str(),
                r.version
            ),
            ResponseBody::Session(s) => write!(
                f,
                " {{\"id\":\"{}\",\"payment_id\":\"{}\",…}}",
                s.id, s.payment_id
            ),
            ResponseBody::Payments { data } => write_list(
                f,
                data.iter().map(|p| (p.id.to_string(), p.status.as_str())),
            ),
            ResponseBody::Refunds { data } => write_list(
                f,
                data.iter().map(|r| (r.id.to_string(), r.status.as_str())),
            ),
            ResponseBody::Error { error } => {
                write!(f, " {{\"error\":{{\"code\":\"{}\"", error.code.as_str())?;
                if let Some(field) = error.field {
                    let name = serde_json::to_string(&field).unwrap_or_default();
                    write!(f, ",\"field\":{name}")?;
                }
                if let Some(related) = error.related_resource_id {
                    write!(f, ",\"related_resource_id\":\"{related}\"")?;
                }
                write!(f, ",\"retryable\":{}}}}}", error.retryable)
            }
        }
    }
}

/// ` {"data":[{"id":…,"status":…,…},…]}`.
fn write_list<'a>(
    f: &mut std::fmt::Formatter<'_>,
    items: impl Iterator<Item = (String, &'a str)>,
) -> std::fmt::Result {
    f.write_str(" {\"data\":[")?;
    for (i, (id, status)) in items.enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{{\"id\":\"{id}\",\"status\":\"{status}\",…}}")?;
    }
    f.write_str("]}")
}

fn write_payment(f: &mut std::fmt::Formatter<'_>, p: &PaymentView) -> std::fmt::Result {
    write!(
        f,
        " {{\"id\":\"{}\",\"status\":\"{}\",\"resolution_status\":\"{}\",\"attempt_count\":{},\"version\":{}",
        p.id,
        p.status.as_str(),
        p.resolution_status.as_str(),
        p.attempt_count,
        p.version
    )?;
    if let Some(failure) = &p.failure {
        let code = serde_json::to_string(&failure.code).unwrap_or_default();
        write!(
            f,
            ",\"failure\":{{\"code\":{code},\"attempt_id\":\"{}\"}}",
            failure.attempt_id
        )?;
    }
    f.write_str(",…}")
}
