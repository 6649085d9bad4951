//! An answer's body read for the fields the contract names, in one pass and without a
//! `serde_json::Value` of the whole: what [`super::ObservedAnswer::read`] needs, strings
//! borrowed from the body where they hold no escape, everything else checked and
//! skipped.
//!
//! It reads exactly what a `Value` would have: a body that is not JSON (to its nesting
//! bound of 128 and UTF-8 text in every string, which skipping checks as a `Value`
//! does) is not read at all; a field of the wrong type is absent; of a key written twice
//! the last counts.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// An object of the body (the top level, or an element of `data`): the fields any
/// object of the contract may have.
#[derive(Default)]
pub(super) struct Fields<'a> {
    pub error: Option<Error<'a>>,
    pub data: Option<Vec<Option<Fields<'a>>>>,
    pub id: Option<Cow<'a, str>>,
    pub merchant_order_no: Option<Cow<'a, str>>,
    pub merchant_refund_no: Option<Cow<'a, str>>,
    pub payment_id: Option<Cow<'a, str>>,
    /// `version`, unless absent (`null`).
    pub version: Option<Value>,
    pub status: Option<Cow<'a, str>>,
    pub amount: Option<i64>,
    pub attempt_count: Option<u64>,
}

/// `error`, when it is an object.
#[derive(Default)]
pub(super) struct Error<'a> {
    pub code: Option<Cow<'a, str>>,
    /// `related_resource_id` is present and not `null`.
    pub related: bool,
    /// `related_resource_id` as written, when a string.
    pub related_id: Option<Cow<'a, str>>,
    pub field: Option<Cow<'a, str>>,
}

/// The top level of `body`, if it is a JSON object.
pub(super) fn read(body: &[u8]) -> Option<Fields<'_>> {
    serde_json::from_slice::<Lenient<Fields<'_>>>(body).ok()?.0
}

/// Any JSON value (checked as a `Value` is, kept as nothing).
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
        d.deserialize_any(Lenient::<Never>::visitor()).map(|_| Skip)
    }
}

/// A value that reads as `T` when it has `T`'s JSON type, as `None` otherwise.
struct Lenient<T>(Option<T>);

/// A type no JSON value has (for [`Skip`]).
enum Never {}

/// How a JSON value of each type reads as `Self` (`None`: not this type); a type not
/// read otherwise reads as [`FromJson::from_any`].
trait FromJson<'de>: Sized {
    fn from_any() -> Option<Self> {
        None
    }
    fn from_bool(_: bool) -> Option<Self> {
        Self::from_any()
    }
    fn from_f64(_: f64) -> Option<Self> {
        Self::from_any()
    }
    fn from_str(_: Cow<'de, str>) -> Option<Self> {
        Self::from_any()
    }
    fn from_i64(_: i64) -> Option<Self> {
        Self::from_any()
    }
    fn from_u64(_: u64) -> Option<Self> {
        Self::from_any()
    }
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        drain_map(map).map(|()| Self::from_any())
    }
    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Option<Self>, A::Error> {
        drain_seq(seq).map(|()| Self::from_any())
    }
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<Skip, Skip>()?.is_some() {}
    Ok(())
}

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<Skip>()?.is_some() {}
    Ok(())
}

impl FromJson<'_> for Never {}

impl<'de> FromJson<'de> for Cow<'de, str> {
    fn from_str(s: Cow<'de, str>) -> Option<Self> {
        Some(s)
    }
}

/// A number written with a fraction of zero, as the integer it is (JSON does not tell
/// `12000` from `12000.0`), below 2^53 where every integer is exact.
pub fn whole(n: f64) -> Option<i64> {
    (n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0).then_some(n as i64)
}

/// `as_i64`: an integer within `i64`, or a float that is [`whole`].
impl FromJson<'_> for i64 {
    fn from_f64(n: f64) -> Option<Self> {
        whole(n)
    }
    fn from_i64(n: i64) -> Option<Self> {
        Some(n)
    }
    fn from_u64(n: u64) -> Option<Self> {
        i64::try_from(n).ok()
    }
}

/// `as_u64`: a non-negative integer.
impl FromJson<'_> for u64 {
    fn from_u64(n: u64) -> Option<Self> {
        Some(n)
    }
}

impl<'de, T: FromJson<'de>> FromJson<'de> for Vec<Option<T>> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let mut all = Vec::new();
        while let Some(Lenient(each)) = seq.next_element::<Lenient<T>>()? {
            all.push(each);
        }
        Ok(Some(all))
    }
}

impl<'de> FromJson<'de> for Fields<'de> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut f = Fields::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Error => f.error = map.next_value::<Lenient<Error<'de>>>()?.0,
                Key::Data => f.data = map.next_value::<Lenient<_>>()?.0,
                Key::Id => f.id = map.next_value::<Lenient<_>>()?.0,
                Key::MerchantOrderNo => f.merchant_order_no = map.next_value::<Lenient<_>>()?.0,
                Key::MerchantRefundNo => f.merchant_refund_no = map.next_value::<Lenient<_>>()?.0,
                Key::PaymentId => f.payment_id = map.next_value::<Lenient<_>>()?.0,
                Key::Version => {
                    f.version = Some(map.next_value::<Value>()?).filter(|v| !v.is_null());
                }
                Key::Status => f.status = map.next_value::<Lenient<_>>()?.0,
                Key::Amount => f.amount = map.next_value::<Lenient<_>>()?.0,
                Key::AttemptCount => f.attempt_count = map.next_value::<Lenient<_>>()?.0,
                Key::RelatedResourceId | Key::Code | Key::Field | Key::Other => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(Some(f))
    }
}

impl<'de> FromJson<'de> for Error<'de> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut e = Error::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Code => e.code = map.next_value::<Lenient<_>>()?.0,
                Key::Field => e.field = map.next_value::<Lenient<_>>()?.0,
                Key::RelatedResourceId => {
                    let named = map.next_value::<Lenient<Present<'de>>>()?.0;
                    e.related = named.is_some();
                    e.related_id = named.and_then(|p| p.0);
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(Some(e))
    }
}

/// Any value but `null` (`absent` is `null` or missing), with its text when a string.
struct Present<'de>(Option<Cow<'de, str>>);

impl<'de> FromJson<'de> for Present<'de> {
    fn from_any() -> Option<Self> {
        Some(Present(None))
    }
    fn from_str(s: Cow<'de, str>) -> Option<Self> {
        Some(Present(Some(s)))
    }
}

impl<'de, T: FromJson<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lenient<T>, D::Error> {
        d.deserialize_any(Lenient::<T>::visitor())
    }
}

impl<'de, T: FromJson<'de>> Lenient<T> {
    fn visitor() -> LenientVisitor<T> {
        LenientVisitor(std::marker::PhantomData)
    }
}

struct LenientVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: FromJson<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = Lenient<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_bool(b)))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_i64(n)))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_u64(n)))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_f64(n)))
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_str(Cow::Borrowed(s))))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_str(Cow::Owned(s.to_owned()))))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::from_map(map).map(Lenient)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        T::from_seq(seq).map(Lenient)
    }
}

/// The keys the contract's objects name.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Key {
    Error,
    Data,
    Id,
    MerchantOrderNo,
    MerchantRefundNo,
    PaymentId,
    Version,
    Status,
    Amount,
    AttemptCount,
    Code,
    Field,
    RelatedResourceId,
    #[serde(other)]
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observation::absent;

    /// What an object's fields read as, compared as text.
    type Seen = Vec<Option<String>>;

    /// The fields as the reader of a whole `Value` took them.
    fn by_value(v: &Value) -> Seen {
        let text = |name: &str| {
            let x = v.get(name);
            (!absent(x)).then(|| x.and_then(Value::as_str).map(str::to_owned))?
        };
        let error = v.get("error").and_then(Value::as_object);
        vec![
            text("id"),
            text("merchant_order_no"),
            text("merchant_refund_no"),
            v.get("payment_id")
                .and_then(Value::as_str)
                .map(str::to_owned),
            v.get("version")
                .filter(|x| !x.is_null())
                .map(Value::to_string),
            text("status"),
            v.get("amount")
                .and_then(|a| a.as_i64().or_else(|| a.as_f64().and_then(whole)))
                .map(|n| n.to_string()),
            v.get("attempt_count")
                .and_then(Value::as_u64)
                .map(|n| n.to_string()),
            error.map(|e| {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("-");
                let field = e.get("field").and_then(Value::as_str).unwrap_or("-");
                let related = !absent(e.get("related_resource_id"));
                format!("{code} {field} {related}")
            }),
            v.get("data").and_then(Value::as_array).map(|d| {
                let each = d.iter().map(|x| match x.is_object() {
                    true => format!("{:?}", by_value(x)),
                    false => "-".to_owned(),
                });
                each.collect::<Vec<_>>().join(",")
            }),
        ]
    }

    /// The same of this reader's [`Fields`].
    fn by_fields(f: &Fields<'_>) -> Seen {
        let s = |x: &Option<Cow<'_, str>>| x.as_deref().map(str::to_owned);
        vec![
            s(&f.id),
            s(&f.merchant_order_no),
            s(&f.merchant_refund_no),
            s(&f.payment_id),
            f.version.as_ref().map(Value::to_string),
            s(&f.status),
            f.amount.map(|n| n.to_string()),
            f.attempt_count.map(|n| n.to_string()),
            f.error.as_ref().map(|e| {
                let code = e.code.as_deref().unwrap_or("-");
                let field = e.field.as_deref().unwrap_or("-");
                format!("{code} {field} {}", e.related)
            }),
            f.data.as_ref().map(|d| {
                let each = d.iter().map(|x| match x {
                    Some(x) => format!("{:?}", by_fields(x)),
                    None => "-".to_owned(),
                });
                each.collect::<Vec<_>>().join(",")
            }),
        ]
    }

    #[test]
    fn a_body_reads_as_its_whole_value_read() {
        let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
        let bodies: Vec<Vec<u8>> = [
            r#"{"id":"p-1","status":"succeeded","trace":{"x":[1,2,{"y":null}]}}"#,
            r#"{"id":"p-1","version":null,"merchant_order_no":"O-1","amount":100}"#,
            r#"{"id":"p-1","version":"7","amount":1.5,"attempt_count":-1}"#,
            r#"{"id":"p-1","version":{"a":1},"amount":"100","attempt_count":2.0}"#,
            r#"{"id":"p-1","amount":18446744073709551615,"attempt_count":4294967296}"#,
            r#"{"id":"p-1","id":"p-2","status":"a","status":7}"#,
            r#"{"\u0069d":"p-\u00e9","merchant_order_no":"O\"1"}"#,
            r#"{"id":7,"status":null,"payment_id":"p-0"}"#,
            r#"{"error":{"code":"order_no_conflict","related_resource_id":"p-1","field":"Idempotency-KEY"}}"#,
            r#"{"error":{"code":7,"related_resource_id":false}}"#,
            r#"{"error":{"related_resource_id":null},"error":"no"}"#,
            r#"{"error":"no","error":{"code":"a","related_resource_id":[]}}"#,
            r#"{"data":[{"id":"r-1","payment_id":"p-1"},7,null,{"no":1},{"id":"r-2"}]}"#,
            r#"{"data":{"id":"r-1"}}"#,
            r#"{"data":[{"data":[{"id":"x"}],"error":{"code":"b"}}]}"#,
            r#"[{"id":"p-1"}]"#,
            r#""text""#,
            r#"{"id":"p-1"} trailing"#,
            r#"{"id":"p-1","x":"\ud800"}"#,
            r#"{"id":"p-1","x":"\x"}"#,
            "<html>",
            "",
        ]
        .into_iter()
        .map(|b| b.as_bytes().to_vec())
        .chain([
            format!(r#"{{"id":"p-1","deep":{deep}}}"#).into_bytes(),
            b"{\"id\":\"p-1\",\"x\":\"\xff\"}".to_vec(),
            b"{\"id\":\"p-1\",\"x\xff\":1}".to_vec(),
            b"{\"id\":\"p-1\",\"x\":\"a\tb\"}".to_vec(),
        ])
        .collect();
        for body in &bodies {
            let whole = serde_json::from_slice::<Value>(body).ok();
            let want = whole.as_ref().filter(|v| v.is_object()).map(by_value);
            let got = read(body).as_ref().map(by_fields);
            assert_eq!(got, want, "{}", String::from_utf8_lossy(body));
        }
    }
}
