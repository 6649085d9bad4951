//! [`ApiResponse`]: one HTTP response from the platform, and its body.

use super::error::{ApiError, ErrorCode};
use super::objects::{PaymentView, RefundView, SessionView};
use serde::Serialize;

/// A response body.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(untagged)]
pub enum ResponseBody {
    Payment(PaymentView),
    Refund(RefundView),
    Session(SessionView),
    /// `{"data":[…]}` of a list query.
    Payments {
        data: Vec<PaymentView>,
    },
    Refunds {
        data: Vec<RefundView>,
    },
    Error {
        error: ApiError,
    },
}

/// One HTTP response from the platform.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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

    /// The error code, for non-2xx responses.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match &self.body {
            ResponseBody::Error { error } => Some(error.code),
            _ => None,
        }
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
            ResponseBody::Payments { data } => {
                f.write_str(" {\"data\":[")?;
                for (i, p) in data.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(
                        f,
                        "{{\"id\":\"{}\",\"status\":\"{}\",…}}",
                        p.id,
                        p.status.as_str()
                    )?;
                }
                f.write_str("]}")
            }
            ResponseBody::Refunds { data } => {
                f.write_str(" {\"data\":[")?;
                for (i, r) in data.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(
                        f,
                        "{{\"id\":\"{}\",\"status\":\"{}\",…}}",
                        r.id,
                        r.status.as_str()
                    )?;
                }
                f.write_str("]}")
            }
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
