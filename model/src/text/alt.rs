//! `Text` over a kept crate, for measuring it against its own representation: with the
//! feature `text-compact-str` a `compact_str::CompactString` (24 bytes inline), with
//! `text-smol-str` a `smol_str::SmolStr` (23 bytes inline, `Arc<str>` beyond; the
//! former wins if both are on). Everything else `Text` does (comparisons, hashing,
//! printing, serde) is `text.rs`'s, on the `str` this holds.

use super::Text;
use std::fmt;

#[cfg(feature = "text-compact-str")]
pub(super) type Repr = compact_str::CompactString;
#[cfg(all(feature = "text-smol-str", not(feature = "text-compact-str")))]
pub(super) type Repr = smol_str::SmolStr;

impl Text {
    /// The empty string.
    pub const fn new() -> Text {
        #[cfg(feature = "text-compact-str")]
        return Text(compact_str::CompactString::const_new(""));
        #[cfg(all(feature = "text-smol-str", not(feature = "text-compact-str")))]
        return Text(smol_str::SmolStr::new_inline(""));
    }

    /// The string.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// `format!` straight into a `Text`.
    pub fn format(args: fmt::Arguments<'_>) -> Text {
        if let Some(s) = args.as_str() {
            return Text::from(s);
        }
        #[cfg(feature = "text-compact-str")]
        return Text(compact_str::format_compact!("{args}"));
        #[cfg(all(feature = "text-smol-str", not(feature = "text-compact-str")))]
        return Text(smol_str::format_smolstr!("{args}"));
    }

    pub(super) fn bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(Repr::new(s))
    }
}
