//! One exchange as the facts keep it ([`Record`]): its id, method and times unpacked, the
//! rest (its places in the fold, the close's as its distance from the send's, key, path,
//! parameters and answer) packed in one byte string, read back one field at a time, and
//! whole for a witness ([`Record::seen`]). A [`Seen`] takes about 350 bytes whatever it
//! holds (each string 32); a record of a create about 120. Paths, ids and numbers are
//! packed by their shape ([`shaped`]): a known prefix by its index, a trailing decimal
//! number as a number (`/v1/payments/pay_demo_123456` in 5 bytes, not 29), read back as
//! written.

use super::{Answer, Seen, WireParams};
use payhub_model::observation::VersionMark;
use payhub_model::{ErrorCode, Method, Millis, RequestId, Text};

/// One exchange kept (see the module doc).
#[derive(Clone, Debug)]
pub(super) struct Record {
    pub(super) id: RequestId,
    pub(super) method: Method,
    pub(super) open: bool,
    pub(super) sent: Millis,
    pub(super) closed: Millis,
    /// The places in the fold, the key, the path, the parameters, the answer.
    packed: Packed,
}

/// A record's packed bytes: in the record's own allocation up to 72 of them (a create's
/// with a key of up to about 25 characters fit), else on their own.
type Packed = smallvec::SmallVec<[u8; 72]>;

// With its two counts, a record is one allocation of 120 bytes (128 with the allocator's).
const _: () = assert!(size_of::<Record>() == 104);

impl Record {
    /// `s`, sent and closed at places `seqs` in the fold ([`super::WireFacts::after`]: the
    /// order of events that share a millisecond, where the source keeps it).
    pub(super) fn of(s: &Seen, seqs: (u64, u64)) -> Record {
        let mut w = Packed::new();
        num(&mut w, u128::from(seqs.0));
        num(&mut w, u128::from(seqs.1.wrapping_sub(seqs.0)));
        text(&mut w, s.key.as_deref());
        shaped(&mut w, Some(&s.path));
        let (tag, a, b, n) = match &s.params {
            WireParams::None => (0, &None, &None, &None),
            WireParams::Order {
                merchant_order_no: a,
                amount,
                currency: b,
            } => (1, a, b, amount),
            WireParams::Refund {
                payment_id: a,
                merchant_refund_no: b,
                amount,
            } => (2, a, b, amount),
        };
        w.push(tag);
        shaped(&mut w, a.as_deref());
        shaped(&mut w, b.as_deref());
        int(&mut w, n.map(i128::from));
        answered(&mut w, s.answer.as_ref());
        Record {
            id: s.id,
            method: s.method,
            open: s.open,
            sent: s.sent,
            closed: s.closed,
            packed: shrunk(w),
        }
    }

    /// The exchange whole, as a witness shows it.
    pub(super) fn seen(&self) -> Seen {
        let mut r = self.at(0);
        Seen {
            id: self.id,
            sent: self.sent,
            closed: self.closed,
            method: self.method,
            key: r.text().map(Text::from),
            path: r.shaped().unwrap_or_default(),
            params: r.params(),
            answer: r.answer(),
            open: self.open,
        }
    }

    /// Where its send and its close came in the fold.
    pub(super) fn seqs(&self) -> (u64, u64) {
        Reader(&self.packed).seqs()
    }

    pub(super) fn key(&self) -> Option<&str> {
        self.at(0).text()
    }

    pub(super) fn path(&self) -> Text {
        self.at(1).shaped().unwrap_or_default()
    }

    pub(super) fn params(&self) -> WireParams {
        self.at(2).params()
    }

    pub(super) fn answer(&self) -> Option<Answer> {
        self.at(3).answer()
    }

    /// Whether its path is `path`, read without being put together.
    pub(super) fn path_is(&self, path: &str) -> bool {
        self.at(1).shaped_is(path)
    }

    /// Whether `other` has its path: a string packs one way, so the packed bytes compare.
    pub(super) fn same_path(&self, other: &Record) -> bool {
        self.field(1) == other.field(1)
    }

    /// Whether `other` has its parameters, as packed (then they compare as the same).
    pub(super) fn same_params(&self, other: &Record) -> bool {
        self.field(2) == other.field(2)
    }

    /// Whether it names parameters (not [`WireParams::None`]), read from their tag.
    pub(super) fn has_params(&self) -> bool {
        self.at(2).byte() != 0
    }

    /// The exchange closed at `closed`, place `seq` in the fold, with `answer`: its key,
    /// path and parameters copied as packed, not read back and packed again.
    pub(super) fn closed(&self, closed: Millis, seq: u64, answer: Option<&Answer>) -> Record {
        let sent = self.seqs().0;
        let mut w = Packed::new();
        num(&mut w, u128::from(sent));
        num(&mut w, u128::from(seq.wrapping_sub(sent)));
        let (fields, rest) = (self.at(0).0, self.at(3).0);
        w.extend_from_slice(&fields[..fields.len() - rest.len()]);
        answered(&mut w, answer);
        Record {
            closed,
            open: false,
            packed: shrunk(w),
            ..*self
        }
    }

    /// The packed bytes of field `i` (see [`Record::at`]).
    fn field(&self, i: usize) -> &[u8] {
        let start = self.at(i).0;
        let mut end = Reader(start);
        end.skip(i);
        &start[..start.len() - end.0.len()]
    }

    /// A reader at packed field `i`: 0 the key, 1 the path, 2 the parameters, 3 the answer.
    fn at(&self, i: usize) -> Reader<'_> {
        let mut r = Reader(&self.packed);
        r.seqs();
        for skipped in 0..i {
            r.skip(skipped);
        }
        r
    }
}

/// `a` as its fields, `None` as nothing (read back as no answer).
fn answered(w: &mut Packed, a: Option<&Answer>) {
    let Some(a) = a else { return };
    w.push(1);
    num(w, u128::from(a.status));
    let code = a
        .code
        .and_then(|c| ErrorCode::ALL.iter().position(|x| *x == c));
    num(w, code.map_or(0, |i| i as u128 + 1));
    text(w, a.unnamed_code.as_deref());
    shaped(w, a.object.as_deref());
    match &a.version {
        None => w.push(0),
        Some(VersionMark::Number(v)) => {
            w.push(1);
            int(w, Some(*v));
        }
        Some(VersionMark::Text(t)) => {
            w.push(2);
            text(w, Some(t));
        }
    }
    for n in [a.retry_after_s, a.attempt_count] {
        int(w, n.map(i128::from));
    }
    int(w, a.amount.map(i128::from));
    w.push(u8::from(a.related));
    shaped(w, a.related_id.as_deref());
}

/// `w` in as few bytes as it takes.
fn shrunk(mut w: Packed) -> Packed {
    w.shrink_to_fit();
    w
}

/// `n` in 7-bit groups, the lowest first.
fn num(w: &mut Packed, mut n: u128) {
    while n >= 0x80 {
        w.push(n as u8 | 0x80);
        n >>= 7;
    }
    w.push(n as u8);
}

/// A string as its length plus one, then its bytes; `None` as 0.
fn text(w: &mut Packed, t: Option<&str>) {
    num(w, t.map_or(0, |t| t.len() as u128 + 1));
    w.extend_from_slice(t.unwrap_or_default().as_bytes());
}

/// The prefixes a shaped string is packed by: the longest that starts it (one byte, 0
/// for `None`, names its prefix, its ending, whether a number ends it and whether text
/// is left between).
const PREFIXES: [&str; 11] = [
    "",
    "/v1/payments/pay_demo_",
    "/v1/payments?merchant_order_no=",
    "/v1/payments/",
    "/v1/payments",
    "/v1/refunds/ref_demo_",
    "/v1/refunds/",
    "/v1/refunds",
    "/v1/checkout/sessions",
    "pay_demo_",
    "ref_demo_",
];
/// The endings a shaped string is packed by.
const SUFFIXES: [&str; 3] = ["", "/confirm", "/cancel"];
/// The most digits of a trailing number read as one.
const DIGITS: usize = 19;

/// The longest of `words` that `fits`, and its index.
fn longest(words: &[&'static str], fits: impl Fn(&str) -> bool) -> (usize, &'static str) {
    let fitting = words.iter().copied().enumerate().filter(|(_, w)| fits(w));
    fitting.max_by_key(|(_, w)| w.len()).unwrap_or((0, ""))
}

/// `t` as its longest known prefix and ending (their indexes), the text between, and
/// the decimal number that ends it (its digits, leading zeros kept, and its value).
fn shaped(w: &mut Packed, t: Option<&str>) {
    let Some(t) = t else { return w.push(0) };
    let (p, prefix) = longest(&PREFIXES, |p| t.starts_with(p));
    let (x, suffix) = longest(&SUFFIXES, |x| t[prefix.len()..].ends_with(x));
    let rest = &t[prefix.len()..t.len() - suffix.len()];
    let digits = rest.bytes().rev().take_while(u8::is_ascii_digit).count();
    let digits = if digits > DIGITS { 0 } else { digits };
    let (stem, number) = rest.split_at(rest.len() - digits);
    let (numbered, stemmed) = (usize::from(digits > 0), usize::from(!stem.is_empty()));
    w.push((((p * 3 + x) * 2 + numbered) * 2 + stemmed) as u8 + 1);
    if stemmed == 1 {
        text(w, Some(stem));
    }
    if digits > 0 {
        num(w, digits as u128);
        num(w, u128::from(number.parse::<u64>().unwrap_or_default()));
    }
}

/// `None` as 0; a number as 1, then its zigzag form.
fn int(w: &mut Packed, n: Option<i128>) {
    w.push(u8::from(n.is_some()));
    if let Some(n) = n {
        num(w, ((n << 1) ^ (n >> 127)) as u128);
    }
}

/// Reads back what [`Record::of`] packed, field by field.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }

    fn num(&mut self) -> u128 {
        let (mut n, mut shift) = (0u128, 0);
        while shift < 128 {
            let b = self.byte();
            n |= u128::from(b & 0x7f) << shift;
            if b < 0x80 {
                break;
            }
            shift += 7;
        }
        n
    }

    fn seqs(&mut self) -> (u64, u64) {
        let mut seq = || u64::try_from(self.num()).unwrap_or(u64::MAX);
        let sent = seq();
        (sent, sent.wrapping_add(seq()))
    }

    fn text(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.num().checked_sub(1)?).unwrap_or(usize::MAX);
        let (t, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        std::str::from_utf8(t).ok()
    }

    /// What [`shaped`] packed, as written.
    fn shaped(&mut self) -> Option<Text> {
        let (prefix, stem, digits, mut n, suffix) = self.shape()?;
        let mut number = [b'0'; DIGITS];
        for d in number[..digits].iter_mut().rev() {
            *d = b'0' + (n % 10) as u8;
            n /= 10;
        }
        let number = std::str::from_utf8(&number[..digits]).unwrap_or_default();
        let (parts, mut t, mut at) = ([prefix, stem, number, suffix], [0u8; 64], 0);
        for part in parts {
            let Some(slot) = t.get_mut(at..at + part.len()) else {
                return Some(Text::from(parts.concat().as_str()));
            };
            slot.copy_from_slice(part.as_bytes());
            at += part.len();
        }
        Some(Text::from(
            std::str::from_utf8(&t[..at]).unwrap_or_default(),
        ))
    }

    /// A shaped string's parts: its prefix, the text between, its number's digits and
    /// value, its ending (skipped without being put together).
    fn shape(&mut self) -> Option<(&'static str, &'a str, usize, u128, &'static str)> {
        let shape = usize::from(self.byte()).checked_sub(1)?;
        let stem = if shape % 2 == 1 { self.text() } else { None };
        let numbered = shape / 2 % 2 == 1;
        let digits = if numbered { self.num() as usize } else { 0 };
        let n = if numbered { self.num() } else { 0 };
        let prefix = PREFIXES.get(shape / 12).copied().unwrap_or_default();
        let suffix = SUFFIXES.get(shape / 4 % 3).copied().unwrap_or_default();
        Some((
            prefix,
            stem.unwrap_or_default(),
            digits.min(DIGITS),
            n,
            suffix,
        ))
    }

    /// Skips packed field `i` (see [`Record::at`]) without putting it together.
    fn skip(&mut self, i: usize) {
        match i {
            0 => drop(self.text()),
            1 => drop(self.shape()),
            _ => {
                self.byte();
                let _ = (self.shape(), self.shape(), self.int());
            }
        }
    }

    /// Whether the shaped string here is `t`, compared part by part.
    fn shaped_is(&mut self, t: &str) -> bool {
        let Some((prefix, stem, digits, n, suffix)) = self.shape() else {
            return false;
        };
        let number = t.strip_prefix(prefix).and_then(|t| t.strip_suffix(suffix));
        let Some(number) = number.and_then(|t| t.strip_prefix(stem)) else {
            return false;
        };
        number.len() == digits
            && number.bytes().all(|b| b.is_ascii_digit())
            && (digits == 0 || number.parse::<u128>().ok() == Some(n))
    }

    fn int(&mut self) -> Option<i128> {
        let z = (self.byte() == 1).then(|| self.num())?;
        Some((z >> 1) as i128 ^ -((z & 1) as i128))
    }

    fn params(&mut self) -> WireParams {
        let tag = self.byte();
        let (a, b) = (self.shaped(), self.shaped());
        let amount = self.int().and_then(|n| i64::try_from(n).ok());
        match tag {
            1 => WireParams::Order {
                merchant_order_no: a,
                amount,
                currency: b,
            },
            2 => WireParams::Refund {
                payment_id: a,
                merchant_refund_no: b,
                amount,
            },
            _ => WireParams::None,
        }
    }

    fn answer(&mut self) -> Option<Answer> {
        if self.byte() != 1 {
            return None;
        }
        let status = u16::try_from(self.num()).unwrap_or_default();
        let code = usize::try_from(self.num())
            .ok()
            .and_then(|i| i.checked_sub(1));
        let (unnamed_code, object) = (self.text().map(Text::from), self.shaped());
        let version = match self.byte() {
            1 => self.int().map(VersionMark::Number),
            2 => self.text().map(|t| VersionMark::Text(t.to_owned())),
            _ => None,
        };
        let mut small = || self.int().and_then(|n| u32::try_from(n).ok());
        let (retry_after_s, attempt_count) = (small(), small());
        Some(Answer {
            status,
            code: code.and_then(|i| ErrorCode::ALL.get(i).copied()),
            unnamed_code,
            object,
            version,
            retry_after_s,
            attempt_count,
            amount: self.int().and_then(|n| i64::try_from(n).ok()),
            related: self.byte() == 1,
            related_id: self.shaped(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shaped_strings_read_back_as_written() {
        let long = format!("/v1/payments/{}/confirm", "é".repeat(40));
        let many = format!("pay_demo_{}", "9".repeat(25));
        let written = [
            "",
            "007",
            "/v1/payments",
            "/v1/payments/pay_demo_001/confirm",
            "/v1/payments/pay_demo_18446744073709551615",
            "/v1/payments/pay_demo_99999999999999999999",
            "/v1/payments?merchant_order_no=ORDER-0042",
            "/v1/refunds/ref_demo_010/cancel",
            "pay_557eff458b794164bc1a",
            "/cancel",
            &long,
            &many,
        ];
        for t in written {
            let mut w = Packed::new();
            shaped(&mut w, Some(t));
            shaped(&mut w, None);
            let mut r = Reader(&w);
            assert_eq!(r.shaped().as_deref(), Some(t));
            assert_eq!(r.shaped(), None);
            assert!(Reader(&w).shaped_is(t) && !Reader(&w).shaped_is(&format!("{t}0")));
            assert!(!Reader(&w).shaped_is(&format!("0{t}")));
        }
        let mut w = Packed::new();
        shaped(&mut w, Some("/v1/payments/pay_demo_123456"));
        assert_eq!(w.len(), 5);
    }
}
