//! [`Text`]: an immutable string whose clone never allocates.
//!
//! The exhaustive checker clones the whole world for every generated state and then
//! mutates the clone copy-on-write. The world's strings are short identifiers (order
//! numbers, currencies, idempotency keys, webhook kinds, paths); as `String`s every
//! clone of a record holding one was an allocation, a copy and later a free. A `Text`
//! keeps up to [`Text::INLINE_CAP`] bytes inline and a longer string behind an
//! `Arc<str>`, so cloning it is a 32-byte copy or a reference-count increment.
//!
//! It is interchangeable with `String` wherever the state is compared, hashed, printed
//! or serialized: `Eq`, `Ord`, `Hash`, `Debug`, `Display` and `Serialize` all act on the
//! `str` it holds, so orderings, fingerprints, cached digests, traces and snapshots are
//! the same as with `String`; `Deserialize` reads it back from a string.
//!
//! Measured against compact_str and smol_str in the checker (docs/performance.md,
//! "Cheap-clone strings").

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// An immutable string that clones without allocating: inline up to
/// [`Text::INLINE_CAP`] bytes, shared (`Arc<str>`) beyond. See the [module](self).
#[derive(Clone)]
pub struct Text(Repr);

/// A string of at most `INLINE_CAP` bytes is always inline, a longer one always on the
/// heap (no comparison relies on it: they all look at the bytes).
#[derive(Clone)]
enum Repr {
    /// `buf[..len]` is made of whole `&str`s copied in (`From<&str>`, [`Text::format`]);
    /// the rest is zeros.
    Inline {
        len: u8,
        buf: [u8; Text::INLINE_CAP],
    },
    Heap(Arc<str>),
}

// Inline strings fill the enum exactly, and `Option<Text>` uses the enum's spare tags.
const _: () = assert!(size_of::<Text>() == 32);
const _: () = assert!(size_of::<Option<Text>>() == 32);

impl Text {
    /// The longest string kept inline, in bytes.
    pub const INLINE_CAP: usize = 30;
}

impl Text {
    pub const fn new() -> Text {
        Text(Repr::Inline {
            len: 0,
            buf: [0; Text::INLINE_CAP],
        })
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, buf } => inline_str(&buf[..*len as usize]),
            Repr::Heap(s) => s,
        }
    }

    /// `format!` straight into a `Text`: no allocation at all when the result fits
    /// inline (`Text::format(format_args!("payment.{}", status))`).
    pub fn format(args: fmt::Arguments<'_>) -> Text {
        if let Some(s) = args.as_str() {
            return Text::from(s);
        }
        let mut writer = Writer::Inline {
            len: 0,
            buf: [0; Text::INLINE_CAP],
        };
        fmt::Write::write_fmt(&mut writer, args)
            .expect("a Display implementation returned an error unexpectedly");
        match writer {
            Writer::Inline { len, buf } => Text(Repr::Inline { len, buf }),
            Writer::Spilled(s) => Text(Repr::Heap(Arc::from(s))),
        }
    }

    /// The string's bytes: what comparisons need (`str` compares byte-wise).
    fn bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, buf } => &buf[..*len as usize],
            Repr::Heap(s) => s.as_bytes(),
        }
    }
}

/// The `str` in the used part of an inline buffer, without checking it again.
///
/// Every `Text` hash and every `&str` lookup in a `CowMap<Text, _>` comes here:
/// `std::str::from_utf8` on each call was measured at a tenth of the checker's
/// instructions (`check --preset create-lossy` under callgrind), more than the `String`
/// clones `Text` replaces.
fn inline_str(bytes: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(bytes).is_ok());
    // SAFETY: `bytes` is the used part of a `Repr::Inline` or `Writer::Inline` buffer.
    // Both types are private to this module, which only ever fills their used part with
    // whole `&str`s, one after the other (`From<&str>`, `Writer::write_str`), and never
    // changes a `Text` once built. A concatenation of valid UTF-8 is valid UTF-8.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// [`Text::format`]'s buffer: inline while the text fits, a `String` once it does not
/// (so a spilled text is always longer than `INLINE_CAP`, as the representation wants).
enum Writer {
    Inline {
        len: u8,
        buf: [u8; Text::INLINE_CAP],
    },
    Spilled(String),
}

impl fmt::Write for Writer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self {
            Writer::Inline { len, buf } => {
                let (start, end) = (*len as usize, *len as usize + s.len());
                if end <= Text::INLINE_CAP {
                    buf[start..end].copy_from_slice(s.as_bytes());
                    *len = end as u8;
                } else {
                    let written = inline_str(&buf[..start]);
                    let mut spilled = String::with_capacity(end.max(2 * Text::INLINE_CAP));
                    spilled.push_str(written);
                    spilled.push_str(s);
                    *self = Writer::Spilled(spilled);
                }
            }
            Writer::Spilled(spilled) => spilled.push_str(s),
        }
        Ok(())
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::new()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        if s.len() <= Text::INLINE_CAP {
            let mut buf = [0; Text::INLINE_CAP];
            buf[..s.len()].copy_from_slice(s.as_bytes());
            Text(Repr::Inline {
                len: s.len() as u8,
                buf,
            })
        } else {
            Text(Repr::Heap(Arc::from(s)))
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::from(s.as_str())
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::from(s.as_str())
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.as_str().to_owned()
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// Lookups by `&str` in maps keyed by `Text`: `Eq`, `Ord` and `Hash` agree with `str`'s.
impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        if let (Repr::Heap(a), Repr::Heap(b)) = (&self.0, &other.0) {
            if Arc::ptr_eq(a, b) {
                return true;
            }
        }
        self.bytes() == other.bytes()
    }
}

impl Eq for Text {}

/// Compared with a string as `String` is: byte-wise.
macro_rules! eq_str {
    ($($t:ty),*) => {$(
        impl PartialEq<$t> for Text {
            fn eq(&self, other: &$t) -> bool {
                self.bytes() == AsRef::<str>::as_ref(other).as_bytes()
            }
        }

        impl PartialEq<Text> for $t {
            fn eq(&self, other: &Text) -> bool {
                other == self
            }
        }
    )*};
}

eq_str!(str, &str, String);

/// Byte-wise, as `str`'s.
impl Ord for Text {
    fn cmp(&self, other: &Text) -> Ordering {
        self.bytes().cmp(other.bytes())
    }
}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Exactly what `str` feeds the hasher, so digests and fingerprints match `String`'s.
impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// From a string, as `String` (inline or shared by its length, as `From<&str>`).
impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Str;
        impl serde::de::Visitor<'_> for Str {
            type Value = Text;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text, E> {
                Ok(Text::from(s))
            }
        }
        deserializer.deserialize_str(Str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, DefaultHasher};

    const SAMPLES: &[&str] = &[
        "",
        "A",
        "USD",
        "ORDER-1",
        "ORDER-10",
        "payment.succeeded",
        "payment.create:ORDER-1:1",
        "payment.confirm:ORDER-DEMO-001:2",
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "/v1/payments/pay_demo_001/confirm",
        "ünïcödé \"quoted\" \\ tab\t",
        "012345678901234567890123456789",  // 30 bytes: inline
        "0123456789012345678901234567890", // 31 bytes: heap
        "0123456789012345678901234567é",   // 30 bytes, a two-byte char at the end
        "01234567890123456789012345678é",  // 31 bytes, a two-byte char across the boundary
        "012345678901234567890123456€",    // 30 bytes, a three-byte char at the end
    ];

    fn is_inline(t: &Text) -> bool {
        matches!(t.0, Repr::Inline { .. })
    }

    #[test]
    fn inline_up_to_30_bytes_heap_beyond() {
        for s in SAMPLES {
            let t = Text::from(*s);
            assert_eq!(is_inline(&t), s.len() <= 30, "{s:?}");
            assert_eq!(t.as_str(), *s);
            assert_eq!(t.len(), s.len());
        }
        assert_eq!(SAMPLES[11].len(), 30);
        assert_eq!(SAMPLES[12].len(), 31);
        assert_eq!(SAMPLES[13].len(), 30);
        assert_eq!(SAMPLES[14].len(), 31);
        assert_eq!(SAMPLES[15].len(), 30);
        assert_eq!(Text::default(), "");
        assert!(is_inline(&Text::new()));
    }

    #[test]
    fn compares_like_string() {
        for a in SAMPLES {
            for b in SAMPLES {
                let (ta, tb) = (Text::from(*a), Text::from(*b));
                let (sa, sb) = (a.to_string(), b.to_string());
                assert_eq!(ta.cmp(&tb), sa.cmp(&sb), "{a:?} vs {b:?}");
                assert_eq!(ta.partial_cmp(&tb), sa.partial_cmp(&sb));
                assert_eq!(ta == tb, sa == sb);
                assert_eq!(ta == *b, sa == *b);
                assert_eq!(ta == sb, sa == sb);
                assert_eq!(*b == ta, sa == sb);
            }
        }
        let heap = Text::from(SAMPLES[12]);
        assert_eq!(heap.clone(), heap);
    }

    /// The same `u64` from the same hasher, alone and followed by more data (as in a
    /// derived `Hash` of a struct or tuple).
    #[test]
    fn hashes_like_string() {
        fn digest(build: &impl BuildHasher, x: impl Hash) -> u64 {
            build.hash_one(x)
        }
        let fixed = ahash::RandomState::with_seeds(1, 2, 3, 4);
        let std = std::hash::BuildHasherDefault::<DefaultHasher>::default();
        for s in SAMPLES {
            let (t, string) = (Text::from(*s), s.to_string());
            assert_eq!(digest(&fixed, &t), digest(&fixed, &string), "{s:?}");
            assert_eq!(digest(&std, &t), digest(&std, &string), "{s:?}");
            assert_eq!(
                digest(&fixed, (&t, 7u8, &t)),
                digest(&fixed, (&string, 7u8, &string))
            );
            assert_eq!(digest(&std, (&t, 7u8)), digest(&std, (&string, 7u8)));
        }
    }

    /// Serializes as `String` does, and reads back the same text, kept the same way.
    #[test]
    fn prints_and_serializes_like_string() {
        for s in SAMPLES {
            let (t, string) = (Text::from(*s), s.to_string());
            assert_eq!(format!("{t:?}"), format!("{string:?}"));
            assert_eq!(format!("{t}"), format!("{string}"));
            assert_eq!(
                format!("{t:>40}|{t:<3}|"),
                format!("{string:>40}|{string:<3}|")
            );
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, serde_json::to_string(&string).unwrap());
            let back: Text = serde_json::from_str(&json).unwrap();
            assert_eq!((back.as_str(), is_inline(&back)), (*s, is_inline(&t)));
            assert_eq!(format!("{:?}", Some(t)), format!("{:?}", Some(string)));
        }
    }

    #[test]
    fn looks_up_by_str_in_maps() {
        use crate::cow::CowMap;
        use std::collections::BTreeMap;
        let cow: CowMap<Text, u8> = SAMPLES.iter().map(|s| (Text::from(*s), 1)).collect();
        let std: BTreeMap<String, u8> = SAMPLES.iter().map(|s| (s.to_string(), 1)).collect();
        assert!(
            cow.keys()
                .map(Text::as_str)
                .eq(std.keys().map(String::as_str))
        );
        for s in SAMPLES {
            assert_eq!(cow.get(*s), Some(&1));
        }
        assert_eq!(cow.get("ORDER-2"), None);
    }

    #[test]
    fn formats_like_format() {
        for s in SAMPLES {
            for n in [0u32, 7, 4_294_967_295] {
                let text = Text::format(format_args!("{s}:{n}"));
                let string = format!("{s}:{n}");
                assert_eq!(text, string);
                assert_eq!(is_inline(&text), string.len() <= 30, "{string:?}");
            }
            assert_eq!(Text::format(format_args!("{s}")), *s);
        }
        assert_eq!(Text::format(format_args!("static")), "static");
        let spilled = Text::format(format_args!("{}{}", "0123456789".repeat(2), "é".repeat(6)));
        assert_eq!(
            spilled,
            format!("{}{}", "0123456789".repeat(2), "é".repeat(6))
        );
        assert!(!is_inline(&spilled));
    }

    #[test]
    fn converts_both_ways() {
        for s in SAMPLES {
            let owned = s.to_string();
            assert_eq!(Text::from(owned.clone()), *s);
            assert_eq!(Text::from(&owned), *s);
            assert_eq!(String::from(Text::from(*s)), owned);
            let t = Text::from(*s);
            let as_ref: &str = t.as_ref();
            let borrowed: &str = t.borrow();
            assert_eq!((as_ref, borrowed, &*t), (*s, *s, *s));
        }
    }
}
