//! One recorded answer as the contract sees it, for the judges of traffic this project
//! did not produce (`check-log`) and of its own (`judge`, the sandbox's verdict) alike:
//! the status, `Retry-After`, the refusal, and what the body shows of the objects the
//! contract names, read through [`crate::observation`]'s rules:
//!
//! - `error.code` is taken where the contract names it or the [`Dialect`] maps it
//!   ([`Dialect::refusal`]); any other code is kept as written and judged by its status;
//! - ids are opaque: any string, interned per kind ([`Interner`]) so that a request's
//!   path and an answer's body name one object by one number, and printed back as the
//!   source wrote them;
//! - a partial body is read for what it holds: a field absent or `null` ([`absent`]) is
//!   not known, never a breach; fields the contract does not name are ignored;
//! - a version is an ordered mark ([`VersionMark`]), compared only between sightings of
//!   one object (WEBHOOK-02), never by its absolute number.
//!
//! Which kind of object an answer shows is the request's to say ([`Shape::of`]): the
//! answer to `POST /v1/refunds` is a Refund whatever its id looks like.

mod body;
pub use body::whole;

use crate::observation::{Dialect, Refusal, VersionMark};
use crate::{
    ApiResponse, Endpoint, ErrorCode, Method, PaymentId, RefundId, ResponseBody, SessionId, Text,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// The kinds of object whose ids are interned apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IdKind {
    Payment,
    Refund,
    Session,
}

/// Numbers given to ids that are not of the model's own form start here (the model's
/// own, `pay_demo_007`, keep their number).
const FOREIGN_FROM: u32 = 1 << 30;

/// The ids of one source, each bound to a number of its kind, one to one; an id of the
/// model's own form (`pay_demo_007`) keeps its number, so the model's traffic reads as
/// it always did.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    numbers: BTreeMap<(IdKind, Text), u32>,
    written: BTreeMap<(IdKind, u32), Text>,
}

impl Interner {
    /// The number of `written` among the ids of `kind`.
    pub fn intern(&mut self, kind: IdKind, written: &str) -> u32 {
        if let Some(n) = model_number(kind, written) {
            return n;
        }
        if let Some(n) = self.numbers.get(&(kind, Text::from(written))) {
            return *n;
        }
        let n = FOREIGN_FROM.saturating_add(self.numbers.len() as u32);
        self.numbers.insert((kind, Text::from(written)), n);
        self.written.insert((kind, n), Text::from(written));
        n
    }

    /// Id number `n` of `kind` as the source wrote it (the model's rendering for the
    /// model's own).
    pub fn name(&self, kind: IdKind, n: u32) -> Text {
        let written = self.written.get(&(kind, n)).cloned();
        written.unwrap_or_else(|| model_name(kind, n))
    }

    /// The endpoint's path with its ids as the source wrote them.
    pub fn path(&self, endpoint: &Endpoint) -> Text {
        if self.written.is_empty() {
            return endpoint.path();
        }
        let (kind, n) = match endpoint {
            Endpoint::ConfirmPayment { payment_id, .. }
            | Endpoint::CancelPayment { payment_id }
            | Endpoint::GetPayment { payment_id } => (IdKind::Payment, payment_id.0),
            Endpoint::GetRefund { refund_id } => (IdKind::Refund, refund_id.0),
            other => return other.path(),
        };
        // The id is the path's only segment in the model's rendering.
        let path = endpoint.path();
        Text::from(path.replacen(model_name(kind, n).as_str(), &self.name(kind, n), 1))
    }
}

/// Id number `n` of `kind` in the model's rendering (`pay_demo_007`).
fn model_name(kind: IdKind, n: u32) -> Text {
    match kind {
        IdKind::Payment => Text::format(format_args!("{}", PaymentId(n))),
        IdKind::Refund => Text::format(format_args!("{}", RefundId(n))),
        IdKind::Session => Text::format(format_args!("{}", SessionId(n))),
    }
}

/// The number of an id of the model's own form for `kind`, if it is one.
fn model_number(kind: IdKind, s: &str) -> Option<u32> {
    let digits = s.len() - s.bytes().rev().take_while(u8::is_ascii_digit).count();
    let n: u32 = s[digits..].parse().ok()?;
    (model_name(kind, n) == s).then_some(n)
}

/// What a successful answer to a request shows, by the request's endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One object of this kind.
    One(IdKind),
    /// A list (`data`) of objects of this kind.
    List(IdKind),
    /// Nothing the contract names (an unknown route).
    Unknown,
}

impl Shape {
    pub fn of(endpoint: &Endpoint) -> Shape {
        match endpoint {
            Endpoint::CreatePayment { .. }
            | Endpoint::ConfirmPayment { .. }
            | Endpoint::CancelPayment { .. }
            | Endpoint::GetPayment { .. } => Shape::One(IdKind::Payment),
            Endpoint::CreateRefund { .. } | Endpoint::GetRefund { .. } => {
                Shape::One(IdKind::Refund)
            }
            Endpoint::CreateCheckoutSession { .. } => Shape::One(IdKind::Session),
            Endpoint::ListPayments { .. } => Shape::List(IdKind::Payment),
            Endpoint::ListRefundsByNo { .. } | Endpoint::ListRefundsProcessing => {
                Shape::List(IdKind::Refund)
            }
            Endpoint::Other { method, path }
                if *method == Method::Get && path.starts_with("/v1/checkout/sessions/") =>
            {
                Shape::One(IdKind::Session)
            }
            Endpoint::Other { .. } => Shape::Unknown,
        }
    }
}

/// One object an answer shows, with what it holds of the fields the contract names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedObject {
    pub kind: IdKind,
    /// Its id's number among its kind ([`Interner`]).
    pub id: u32,
    /// Its id as written.
    pub written: Text,
    pub version: Option<VersionMark>,
    /// `merchant_order_no` of a Payment, `merchant_refund_no` of a Refund.
    pub number: Option<Text>,
    /// `payment_id` of a Refund or a checkout session (interned).
    pub payment: Option<u32>,
    pub status: Option<Text>,
    pub amount: Option<i64>,
    /// `attempt_count` of a Payment (S9: `"attempt_count":2`).
    pub attempt_count: Option<u32>,
}

/// One answer as the contract sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedAnswer {
    pub status: u16,
    pub retry_after_s: Option<u32>,
    /// `error.code` where the contract names it or the dialect maps it, as the model's.
    pub code: Option<ErrorCode>,
    /// `error.code` as written, named or not.
    pub written_code: Option<Text>,
    /// `error.related_resource_id` is present (not `null`).
    pub related: bool,
    /// `error.related_resource_id` as written, when a string (ORDER-01: the existing
    /// Payment's id).
    pub related_id: Option<Text>,
    /// `error.field` names the `Idempotency-Key` header (KEY-07: "error.field 为
    /// Idempotency-Key"), whatever the code.
    pub about_key: bool,
    /// The object shown; for a list, each object of `data`, in order.
    pub objects: Vec<ObservedObject>,
}

impl ObservedAnswer {
    /// The answer a body holds, read through `dialect` for a request of `shape`; `None`
    /// when the body is not a JSON object (an answer then keeps its status only).
    pub fn read(
        status: u16,
        retry_after_s: Option<u32>,
        body: &[u8],
        shape: Shape,
        dialect: &Dialect,
        ids: &mut Interner,
    ) -> Option<ObservedAnswer> {
        let top = body::read(body)?;
        let mut answer = ObservedAnswer {
            status,
            retry_after_s,
            ..ObservedAnswer::default()
        };
        if let Some(error) = &top.error {
            if let Some(written) = error.code.as_deref() {
                answer.written_code = Some(Text::from(written));
                if let Refusal::Named(model) = dialect.refusal(written) {
                    answer.code = serde_json::from_value(Value::String(model)).ok();
                }
            }
            answer.related = error.related;
            answer.related_id = error.related_id.as_deref().map(Text::from);
            answer.about_key = error
                .field
                .as_deref()
                .is_some_and(|f| f.eq_ignore_ascii_case("Idempotency-Key"));
            return Some(answer);
        }
        if !(200..300).contains(&status) {
            return Some(answer);
        }
        match shape {
            Shape::One(kind) => answer.objects.extend(object(kind, &top, ids)),
            Shape::List(kind) => {
                let data = top.data.iter().flatten().flatten();
                answer
                    .objects
                    .extend(data.filter_map(|f| object(kind, f, ids)));
            }
            Shape::Unknown => {}
        }
        Some(answer)
    }

    /// The model's own answer, its ids in the model's rendering.
    pub fn of_response(r: &ApiResponse) -> ObservedAnswer {
        let mut objects = Vec::new();
        let payment = |p: &crate::PaymentView| ObservedObject {
            kind: IdKind::Payment,
            id: p.id.0,
            written: Text::format(format_args!("{}", p.id)),
            version: Some(VersionMark::Number(i128::from(p.version))),
            number: Some(p.merchant_order_no.clone()),
            payment: None,
            status: Some(Text::from(p.status.as_str())),
            amount: i64::try_from(p.amount).ok(),
            attempt_count: Some(u32::from(p.attempt_count)),
        };
        let refund = |x: &crate::RefundView| ObservedObject {
            kind: IdKind::Refund,
            id: x.id.0,
            written: Text::format(format_args!("{}", x.id)),
            version: Some(VersionMark::Number(i128::from(x.version))),
            number: Some(x.merchant_refund_no.clone()),
            payment: Some(x.payment_id.0),
            status: Some(Text::from(x.status.as_str())),
            amount: i64::try_from(x.amount).ok(),
            attempt_count: None,
        };
        let (mut code, mut related, mut about_key) = (None, None, false);
        match &r.body {
            ResponseBody::Payment(p) => objects.push(payment(p)),
            ResponseBody::Payments { data } => objects.extend(data.iter().map(payment)),
            ResponseBody::Refund(x) => objects.push(refund(x)),
            ResponseBody::Refunds { data } => objects.extend(data.iter().map(refund)),
            ResponseBody::Session(s) => objects.push(ObservedObject {
                kind: IdKind::Session,
                id: s.id.0,
                written: Text::format(format_args!("{}", s.id)),
                version: None,
                number: None,
                payment: Some(s.payment_id.0),
                status: None,
                amount: None,
                attempt_count: None,
            }),
            ResponseBody::Error { error } => {
                code = Some(error.code);
                related = error.related_resource_id;
                about_key = error.field == Some(crate::Field::IdempotencyKey);
            }
        }
        ObservedAnswer {
            status: r.status,
            retry_after_s: r.retry_after_s,
            code,
            written_code: code.map(|c| Text::from(c.as_str())),
            related: related.is_some(),
            related_id: related.map(|r| Text::format(format_args!("{r}"))),
            about_key,
            objects,
        }
    }

    /// 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The first object of `kind` shown.
    pub fn first(&self, kind: IdKind) -> Option<&ObservedObject> {
        self.objects.iter().find(|o| o.kind == kind)
    }
}

/// One object of `kind` as the body's `fields` show it; `None` without a string `id`
/// (an object that cannot be named is not one the facts can follow).
fn object(kind: IdKind, fields: &body::Fields<'_>, ids: &mut Interner) -> Option<ObservedObject> {
    let text = |t: &Option<std::borrow::Cow<'_, str>>| t.as_deref().map(Text::from);
    let written = fields.id.as_deref()?;
    let number = match kind {
        IdKind::Payment => text(&fields.merchant_order_no),
        IdKind::Refund => text(&fields.merchant_refund_no),
        IdKind::Session => None,
    };
    let payment = fields
        .payment_id
        .as_deref()
        .map(|p| ids.intern(IdKind::Payment, p));
    Some(ObservedObject {
        kind,
        id: ids.intern(kind, written),
        written: Text::from(written),
        version: fields.version.as_ref().map(VersionMark::of),
        number,
        payment,
        status: text(&fields.status),
        amount: fields.amount,
        attempt_count: match kind {
            IdKind::Payment => fields.attempt_count.and_then(|n| u32::try_from(n).ok()),
            _ => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_any_form_are_interned_per_kind_and_named_back() {
        let mut ids = Interner::default();
        let a = ids.intern(IdKind::Payment, "pay_557eff458b794164bc1a");
        assert_eq!(ids.intern(IdKind::Payment, "pay_557eff458b794164bc1a"), a);
        assert_ne!(ids.intern(IdKind::Refund, "pay_557eff458b794164bc1a"), a);
        assert_eq!(ids.intern(IdKind::Payment, "pay_demo_007"), 7);
        assert_eq!(
            ids.name(IdKind::Payment, a).as_str(),
            "pay_557eff458b794164bc1a"
        );
        assert_eq!(ids.name(IdKind::Payment, 7).as_str(), "pay_demo_007");
        let path = ids.path(&Endpoint::GetPayment {
            payment_id: PaymentId(a),
        });
        assert_eq!(path.as_str(), "/v1/payments/pay_557eff458b794164bc1a");
    }

    #[test]
    fn a_partial_body_is_read_for_what_it_holds() {
        let mut ids = Interner::default();
        let d = Dialect::default();
        let one = Shape::One(IdKind::Payment);
        let a = ObservedAnswer::read(
            200,
            None,
            br#"{"id":"p-1","status":"succeeded","trace":{"x":1}}"#,
            one,
            &d,
            &mut ids,
        )
        .unwrap();
        let p = &a.objects[0];
        assert_eq!(
            (p.written.as_str(), p.status.as_deref()),
            ("p-1", Some("succeeded"))
        );
        assert_eq!((p.version.clone(), p.number.clone()), (None, None));
        let v = br#"{"id":"p-1","version":null,"merchant_order_no":"O-1"}"#;
        let a = ObservedAnswer::read(200, None, v, one, &d, &mut ids).unwrap();
        assert_eq!(a.objects[0].number.as_deref(), Some("O-1"));
        assert_eq!(a.objects[0].version, None);
        // A refusal the contract does not name keeps its status only; a named one is read.
        let e = br#"{"error":{"code":"resource_not_found","related_resource_id":null}}"#;
        let a = ObservedAnswer::read(404, None, e, one, &d, &mut ids).unwrap();
        assert_eq!((a.code, a.related), (None, false));
        assert_eq!(a.written_code.as_deref(), Some("resource_not_found"));
        let e = br#"{"error":{"code":"order_no_conflict","related_resource_id":"p-1"}}"#;
        let a = ObservedAnswer::read(409, None, e, one, &d, &mut ids).unwrap();
        assert_eq!(
            (a.code, a.related),
            (Some(ErrorCode::OrderNoConflict), true)
        );
        assert!(ObservedAnswer::read(200, None, b"<html>", one, &d, &mut ids).is_none());
    }
}
