//! HAR 1.2, read leniently and streamed: `log.entries` one entry at a time (kept as raw JSON
//! only until read), so memory holds one entry, not the file. Fields the judge does not
//! read may be absent; `_`-prefixed fields are ignored but `_error`; no `response`, status 0
//! or an `_error` is an unknown outcome; bodies as text or base64. An entry that does not
//! read is skipped with why; broken JSON rejects the file at its line and column.

use super::entry::{Entry, Label, Reply, bearer, target_of};
use crate::http_map::HttpRequest;
use crate::serve::seam::EdgeSeam;
use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::io::Read;
use std::ops::ControlFlow;

/// One entry as read: strings borrowed from the entry's JSON where they hold no escape;
/// what the judge does not read (`cache`, `timings`, cookies, `_error`'s text) skipped.
#[derive(Deserialize)]
struct HarEntry<'a> {
    #[serde(rename = "startedDateTime", borrow)]
    started: Cow<'a, str>,
    #[serde(default)]
    time: Option<f64>,
    #[serde(borrow)]
    request: HarRequest<'a>,
    #[serde(default, borrow)]
    response: Option<HarResponse<'a>>,
    #[serde(rename = "_error", default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct HarRequest<'a> {
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    url: Cow<'a, str>,
    #[serde(default, borrow)]
    headers: Vec<Header<'a>>,
    #[serde(rename = "postData", default, borrow)]
    post_data: Option<Body<'a>>,
}

#[derive(Deserialize)]
struct HarResponse<'a> {
    status: i64,
    #[serde(default, borrow)]
    headers: Vec<Header<'a>>,
    #[serde(default, borrow)]
    content: Option<Body<'a>>,
    #[serde(rename = "_error", default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Header<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    value: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    encoding: Option<Cow<'a, str>>,
}

/// Header `name`, matched in any case (RFC 9110 §5.1; the seam's reference answer).
fn header<'a>(headers: &'a [Header], name: &str, seam: EdgeSeam) -> Option<&'a str> {
    headers
        .iter()
        .find(|h| {
            if seam.headers_any_case() {
                h.name.eq_ignore_ascii_case(name)
            } else {
                h.name == name
            }
        })
        .map(|h| &*h.value)
}

impl Body<'_> {
    fn bytes(&self) -> Result<Option<Vec<u8>>, String> {
        let Some(text) = &self.text else {
            return Ok(None);
        };
        match self.encoding.as_deref() {
            None | Some("") => Ok(Some(text.as_bytes().to_vec())),
            Some(e) if e.eq_ignore_ascii_case("base64") => base64(text)
                .map(Some)
                .ok_or_else(|| "a body marked base64 is not base64".to_owned()),
            Some(other) => Err(format!("a body in encoding '{other}'")),
        }
    }
}

/// Standard base64 (padding optional, whitespace ignored).
fn base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

fn to_entry(i: u64, e: HarEntry, seam: EdgeSeam) -> Result<Entry, String> {
    let duration_ms = e.time.filter(|t| *t > 0.0).map_or(0, |t| t as u64);
    let started_ms = crate::utc::parse_ms(&e.started)
        .map(|t| seam.har_start(t, duration_ms))
        .ok_or_else(|| format!("startedDateTime '{}' is not a date", e.started))?;
    let r = &e.request;
    let body = match &r.post_data {
        Some(b) => b.bytes()?.unwrap_or_default(),
        None => Vec::new(),
    };
    let http = HttpRequest {
        method: r.method.to_ascii_uppercase(),
        target: target_of(&r.url),
        authorization: None,
        idempotency_key: header(&r.headers, "Idempotency-Key", seam).map(|k| k.as_bytes().to_vec()),
        body,
    };
    let outcome = match &e.response {
        Some(resp) if resp.status > 0 && resp.error.is_none() && e.error.is_none() => {
            // A-RETRY-AFTER-429: as the reference code reads it (an HTTP date, like no
            // header, leaves the wait to the client's backoff).
            let retry_after_s = crate::retry_after::seconds(
                header(&resp.headers, "Retry-After", seam).filter(|_| seam.har_reads_retry_after()),
            );
            let content = if seam.har_response_body_from_response() {
                resp.content.as_ref()
            } else {
                r.post_data.as_ref()
            };
            let body = match content {
                Some(c) => c.bytes()?,
                None => None,
            };
            Reply::Answered {
                status: u16::try_from(resp.status)
                    .map_err(|_| format!("status {}", resp.status))?,
                retry_after_s,
                body,
            }
        }
        _ => Reply::NoAnswer,
    };
    Ok(Entry {
        label: Label::HarEntry(i),
        started_ms,
        duration_ms,
        api_key: header(&r.headers, "Authorization", seam).and_then(bearer),
        http,
        outcome,
    })
}

/// Entry `i` (1-based) of a HAR, from its raw JSON, or why it does not read. `seam`: the
/// reader's decision points ([`EdgeSeam::REFERENCE`]: as documented here; the edge zoo
/// plants a defect of the reader there).
pub fn entry(i: u64, raw: &str, seam: EdgeSeam) -> Result<Entry, (Label, String)> {
    serde_json::from_str::<HarEntry>(raw)
        .map_err(|e| e.to_string())
        .and_then(|e| to_entry(i, e, seam))
        .map_err(|why| (Label::HarEntry(i), why))
}

/// Streams `reader`'s `log.entries`, calling `each` with each entry's raw JSON and its
/// 1-based index ([`entry`] reads it), until `each` breaks (the rest is then not read).
/// `Err` for a file that is not a HAR.
pub fn read_raw(
    reader: impl Read,
    each: &mut dyn FnMut(u64, Box<RawValue>) -> ControlFlow<()>,
) -> Result<(), String> {
    let spent = Cell::new(0u64);
    let stopped = Cell::new(false);
    let bounded = Bounded {
        inner: reader,
        spent: &spent,
    };
    // Buffered above the bound's count: serde reads a byte at a time, the count and
    // the layers below see whole chunks.
    let mut de =
        serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 16, bounded));
    let found = Within {
        cx: Cx {
            each,
            spent: &spent,
            stopped: &stopped,
        },
        path: &["log", "entries"],
    }
    .deserialize(&mut de);
    if stopped.get() {
        return Ok(());
    }
    let found = found.map_err(|e| {
        if e.is_io() && spent.get() > ENTRY_MAX {
            format!(
                "{}:{}: a HAR entry longer than {} MiB, the bound of an entry: refused, not judged",
                e.line(),
                e.column(),
                ENTRY_MAX >> 20
            )
        } else {
            format!("{}:{}: not a HAR: {e}", e.line(), e.column())
        }
    })?;
    de.end()
        .map_err(|e| format!("{}:{}: not a HAR: trailing data", e.line(), e.column()))?;
    if !found {
        return Err("1: not a HAR: no log.entries".into());
    }
    Ok(())
}

/// The largest HAR entry read (and the most bytes read outside `log.entries`): 64 MiB.
/// A larger one is refused naming the bound, not held whole.
pub const ENTRY_MAX: u64 = 64 << 20;

/// A reader that fails once more than [`ENTRY_MAX`] bytes were read since `spent` was
/// last reset (at the end of each entry).
struct Bounded<'a, R> {
    inner: R,
    spent: &'a Cell<u64>,
}

impl<R: Read> Read for Bounded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.spent.get() > ENTRY_MAX {
            return Err(std::io::Error::other("past the bound of an entry"));
        }
        let n = self.inner.read(buf)?;
        self.spent.set(self.spent.get() + n as u64);
        Ok(n)
    }
}

/// What every level of the reader shares: the callback, the bytes of the entry being
/// read, whether the callback stopped.
struct Cx<'a, 'b> {
    each: &'a mut (dyn FnMut(u64, Box<RawValue>) -> ControlFlow<()> + 'b),
    spent: &'a Cell<u64>,
    stopped: &'a Cell<bool>,
}

impl<'b> Cx<'_, 'b> {
    fn again(&mut self) -> Cx<'_, 'b> {
        Cx {
            each: &mut *self.each,
            spent: self.spent,
            stopped: self.stopped,
        }
    }
}

/// An object on the way to `log.entries`, `path` the keys left; `true` once the entries
/// were read.
struct Within<'a, 'b> {
    cx: Cx<'a, 'b>,
    path: &'static [&'static str],
}

impl<'de> DeserializeSeed<'de> for Within<'_, '_> {
    type Value = bool;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Within<'_, '_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self.path.len() {
            2 => "a HAR object {\"log\": {\"entries\": […]}}",
            _ => "the HAR's log object",
        })
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<String>()? {
            let cx = self.cx.again();
            match self.path {
                [only] if key == *only => {
                    map.next_value_seed(Entries { cx })?;
                    found = true;
                }
                [first, rest @ ..] if key == *first => {
                    found = map.next_value_seed(Within { cx, path: rest })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

struct Entries<'a, 'b> {
    cx: Cx<'a, 'b>,
}

impl<'de> DeserializeSeed<'de> for Entries<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the array log.entries")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0u64;
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            self.cx.spent.set(0);
            i += 1;
            if (self.cx.each)(i, raw).is_break() {
                // Unwinds the reader: `read_with` answers Ok for a stop.
                self.cx.stopped.set(true);
                return Err(serde::de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_reads_standard_and_url_safe() {
        assert_eq!(base64("eyJhIjoxfQ==").unwrap(), br#"{"a":1}"#);
        assert_eq!(base64("eyJhIjoxfQ").unwrap(), br#"{"a":1}"#);
        assert!(base64("not*base64").is_none());
    }
}
