//! The contract's routes: which operation a method, path and query name. One table for
//! every reader of HTTP: the sandbox's edge (`serve`) and the reader of recorded traffic
//! (`check-log`). An id in a path is returned as written (percent-decoded by the
//! reader that turns it into an id); a query names a lookup only through the parameter
//! the contract gives it. A POST's query string is not read.

use super::Method;

/// An operation of the contract's API, its path's ids as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route<'a> {
    CreatePayment,
    ConfirmPayment(&'a str),
    CancelPayment(&'a str),
    CreateCheckoutSession,
    CreateRefund,
    GetPayment(&'a str),
    GetRefund(&'a str),
    /// `GET /v1/payments?merchant_order_no=…` (QUERY-02), the number decoded.
    ListPayments(String),
    /// `GET /v1/refunds?merchant_refund_no=…`, the number decoded.
    ListRefundsByNo(String),
    /// `GET /v1/refunds?status=processing` (SCHED-03's daily check).
    ListRefundsProcessing,
}

/// The operation `method` on `path` (without its query) with `query` names, if any.
pub fn route<'a>(method: Method, path: &'a str, query: Option<&str>) -> Option<Route<'a>> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    Some(match (method, segments.as_slice(), query) {
        (Method::Post, ["v1", "payments"], _) => Route::CreatePayment,
        (Method::Post, ["v1", "payments", id, "confirm"], _) => Route::ConfirmPayment(id),
        (Method::Post, ["v1", "payments", id, "cancel"], _) => Route::CancelPayment(id),
        (Method::Post, ["v1", "checkout", "sessions"], _) => Route::CreateCheckoutSession,
        (Method::Post, ["v1", "refunds"], _) => Route::CreateRefund,
        (Method::Get, ["v1", "payments", id], None) => Route::GetPayment(id),
        (Method::Get, ["v1", "refunds", id], None) => Route::GetRefund(id),
        (Method::Get, ["v1", "payments"], Some(q)) => {
            Route::ListPayments(param(q, "merchant_order_no")?)
        }
        (Method::Get, ["v1", "refunds"], Some(q)) => match param(q, "merchant_refund_no") {
            Some(no) => Route::ListRefundsByNo(no),
            None if param(q, "status").as_deref() == Some("processing") => {
                Route::ListRefundsProcessing
            }
            None => return None,
        },
        _ => return None,
    })
}

/// Whether `path` is one of the contract's paths, whatever the method (a wrong method
/// there is 405, elsewhere 404).
pub fn is_contract_path(path: &str) -> bool {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    matches!(
        segments.as_slice(),
        ["v1", "payments"]
            | ["v1", "payments", _]
            | ["v1", "payments", _, "confirm" | "cancel"]
            | ["v1", "checkout", "sessions"]
            | ["v1", "refunds"]
            | ["v1", "refunds", _]
    )
}

/// The percent-decoded value of `name` in a query string (`+` is a space).
pub fn param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(k)? == name).then(|| percent_decode(&v.replace('+', " ")))?
    })
}

/// `%41` → `A`; `None` for a bad escape or bytes that are not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_operation_has_its_route() {
        let r = |m, p, q| route(m, p, q);
        assert_eq!(
            r(Method::Post, "/v1/payments", None),
            Some(Route::CreatePayment)
        );
        assert_eq!(
            r(Method::Post, "/v1/payments", Some("expand=x")),
            Some(Route::CreatePayment)
        );
        assert_eq!(
            r(Method::Post, "/v1/payments/pay_1/confirm", None),
            Some(Route::ConfirmPayment("pay_1"))
        );
        assert_eq!(
            r(Method::Get, "/v1/payments/pay_1", None),
            Some(Route::GetPayment("pay_1"))
        );
        assert_eq!(r(Method::Get, "/v1/payments/pay_1", Some("a=b")), None);
        assert_eq!(
            r(
                Method::Get,
                "/v1/payments",
                Some("merchant_order_no=O%2D1+x")
            ),
            Some(Route::ListPayments("O-1 x".into()))
        );
        assert_eq!(r(Method::Get, "/v1/payments", Some("other=1")), None);
        assert_eq!(r(Method::Get, "/v1/payments", None), None);
        assert_eq!(
            r(Method::Get, "/v1/refunds", Some("status=processing")),
            Some(Route::ListRefundsProcessing)
        );
        assert_eq!(r(Method::Delete, "/v1/payments", None), None);
        assert!(is_contract_path("/v1/refunds/re_1"));
        assert!(!is_contract_path("/v1/refunds/re_1/cancel"));
        assert_eq!(percent_decode("%zz"), None);
    }
}
