//! One exchange as the facts keep it ([`Record`]): its id, method and times unpacked, the
//! rest (its places in the fold, key, path, parameters and answer) packed in one byte
//! string, read back one field at a time, and whole for a witness ([`Record::seen`]). A
//! [`Seen`] takes about 350 bytes whatever it holds (each string 32); a record of a
//! create about 150.

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
    packed: Box<[u8]>,
}

// With its two counts, a record is one allocation of 56 bytes and its packed string.
const _: () = assert!(size_of::<Record>() == 40);

impl Record {
    /// `s`, sent and closed at places `seqs` in the fold ([`super::WireFacts::after`]: the
    /// order of events that share a millisecond, where the source keeps it).
    pub(super) fn of(s: &Seen, seqs: (u64, u64)) -> Record {
        let mut w = Vec::with_capacity(96);
        num(&mut w, u128::from(seqs.0));
        num(&mut w, u128::from(seqs.1));
        text(&mut w, s.key.as_deref());
        text(&mut w, Some(&s.path));
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
        text(&mut w, a.as_deref());
        text(&mut w, b.as_deref());
        int(&mut w, n.map(i128::from));
        if let Some(a) = &s.answer {
            w.push(1);
            num(&mut w, u128::from(a.status));
            let code = a
                .code
                .and_then(|c| ErrorCode::ALL.iter().position(|x| *x == c));
            num(&mut w, code.map_or(0, |i| i as u128 + 1));
            text(&mut w, a.unnamed_code.as_deref());
            text(&mut w, a.object.as_deref());
            match &a.version {
                None => w.push(0),
                Some(VersionMark::Number(v)) => {
                    w.push(1);
                    int(&mut w, Some(*v));
                }
                Some(VersionMark::Text(t)) => {
                    w.push(2);
                    text(&mut w, Some(t));
                }
            }
            for n in [a.retry_after_s, a.attempt_count] {
                int(&mut w, n.map(i128::from));
            }
            int(&mut w, a.amount.map(i128::from));
            w.push(u8::from(a.related));
            text(&mut w, a.related_id.as_deref());
        }
        Record {
            id: s.id,
            method: s.method,
            open: s.open,
            sent: s.sent,
            closed: s.closed,
            packed: w.into_boxed_slice(),
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
            path: Text::from(r.text().unwrap_or_default()),
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

    pub(super) fn path(&self) -> &str {
        self.at(1).text().unwrap_or_default()
    }

    pub(super) fn params(&self) -> WireParams {
        self.at(2).params()
    }

    pub(super) fn answer(&self) -> Option<Answer> {
        self.at(3).answer()
    }

    /// A reader at packed field `i`: 0 the key, 1 the path, 2 the parameters, 3 the answer.
    fn at(&self, i: usize) -> Reader<'_> {
        let mut r = Reader(&self.packed);
        r.seqs();
        for skipped in 0..i {
            if skipped < 2 {
                r.text();
            } else {
                r.params();
            }
        }
        r
    }
}

/// `n` in 7-bit groups, the lowest first.
fn num(w: &mut Vec<u8>, mut n: u128) {
    while n >= 0x80 {
        w.push(n as u8 | 0x80);
        n >>= 7;
    }
    w.push(n as u8);
}

/// A string as its length plus one, then its bytes; `None` as 0.
fn text(w: &mut Vec<u8>, t: Option<&str>) {
    num(w, t.map_or(0, |t| t.len() as u128 + 1));
    w.extend_from_slice(t.unwrap_or_default().as_bytes());
}

/// `None` as 0; a number as 1, then its zigzag form.
fn int(w: &mut Vec<u8>, n: Option<i128>) {
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
        (seq(), seq())
    }

    fn text(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.num().checked_sub(1)?).unwrap_or(usize::MAX);
        let (t, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        std::str::from_utf8(t).ok()
    }

    fn int(&mut self) -> Option<i128> {
        let z = (self.byte() == 1).then(|| self.num())?;
        Some((z >> 1) as i128 ^ -((z & 1) as i128))
    }

    fn params(&mut self) -> WireParams {
        let tag = self.byte();
        let (a, b) = (self.text().map(Text::from), self.text().map(Text::from));
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
        let (unnamed_code, object) = (self.text().map(Text::from), self.text().map(Text::from));
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
            related_id: self.text().map(Text::from),
        })
    }
}
