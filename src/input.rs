//! The commands' inputs, read once and bounded: a path or `-` (standard input), so that
//! a pipe, a FIFO or a process substitution (`<(zcat x.gz)`) gives what the file gives;
//! a gzip stream is refused naming how to read it; a line longer than [`LINE_MAX`] is
//! an error naming the bound (exit 2), never an allocation the size of the line; a FIFO
//! no writer opens within [`writer_wait`] is an error, not a silent wait for ever.

use payhub_model::Millis;
use std::cell::Cell;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

/// The longest line a JSON Lines input may have (an event, an access-log record with
/// its bodies, a script line): 16 MiB. A longer one is refused, not read whole.
pub const LINE_MAX: usize = 16 << 20;

/// The largest script `run` reads: 16 MiB.
pub const SCRIPT_MAX: usize = 16 << 20;

/// Seconds to wait for a writer to open a FIFO given as input (`check-log --wait`).
static WRITER_WAIT_S: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(30);

/// How long opening a FIFO waits for its writer: 30 s unless [`set_writer_wait`] said.
pub fn writer_wait() -> u64 {
    WRITER_WAIT_S.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether the command has a `--wait` (it called [`set_writer_wait`]): the FIFO error
/// names it only then.
static WAIT_FLAG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets [`writer_wait`] for the process (a command's `--wait`).
pub fn set_writer_wait(seconds: u64) {
    WRITER_WAIT_S.store(seconds, std::sync::atomic::Ordering::Relaxed);
    WAIT_FLAG.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Opens `path`; a FIFO is opened on a thread of its own, and refused if no writer
/// opens it within [`writer_wait`] (the blocked open is left behind: the command ends).
fn open_file(path: &Path, name: &str) -> Result<std::fs::File, String> {
    let cannot = |e: std::io::Error| format!("{name}: cannot read: {e}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            let (tx, rx) = std::sync::mpsc::channel();
            let fifo = path.to_owned();
            std::thread::spawn(move || tx.send(std::fs::File::open(fifo)));
            let wait = writer_wait();
            let longer = if WAIT_FLAG.load(std::sync::atomic::Ordering::Relaxed) {
                " (--wait S waits longer)"
            } else {
                ""
            };
            return match rx.recv_timeout(std::time::Duration::from_secs(wait)) {
                Ok(opened) => opened.map_err(cannot),
                Err(_) => Err(format!(
                    "{name}: a FIFO that no writer opened in {wait} s: nothing to read{longer}"
                )),
            };
        }
    }
    std::fs::File::open(path).map_err(cannot)
}

/// The two bytes every gzip stream starts with (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// An input opened for one pass.
pub struct Input {
    /// The name errors give it: the path, or `-`.
    pub name: String,
    pub reader: Box<dyn BufRead>,
    /// What has been read of it so far, counted and digested as it passed.
    pub read: Rc<Cell<Identity>>,
}

/// The identity of the bytes read of an input: how many, and their FNV-1a 64 digest,
/// computed as they are read (no second pass). Two shards of one log read the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub bytes: u64,
    pub digest: u64,
}

impl Default for Identity {
    fn default() -> Identity {
        Identity {
            bytes: 0,
            digest: 0xcbf2_9ce4_8422_2325,
        }
    }
}

impl Identity {
    fn add(self, bytes: &[u8]) -> Identity {
        let digest = bytes.iter().fold(self.digest, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Identity {
            bytes: self.bytes + bytes.len() as u64,
            digest,
        }
    }
}

/// A reader noting each byte it hands over in an [`Identity`].
struct Digesting<R> {
    inner: R,
    read: Rc<Cell<Identity>>,
}

impl<R: BufRead> Read for Digesting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get().add(&buf[..n]));
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Digesting<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        // What `fill_buf` handed out is still buffered: note the part consumed.
        if let Ok(buf) = self.inner.fill_buf() {
            self.read
                .set(self.read.get().add(&buf[..amt.min(buf.len())]));
        }
        self.inner.consume(amt);
    }
}

/// Opens `path` (`-`: standard input) for one pass, refusing a gzip stream.
pub fn open(path: &Path) -> Result<Input, String> {
    let name = path.display().to_string();
    let raw: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(open_file(path, &name)?)
    };
    let mut reader = BufReader::with_capacity(1 << 16, raw);
    // Two bytes, however a pipe hands them over, replayed in front of the rest.
    let mut head = Vec::new();
    (&mut reader)
        .take(2)
        .read_to_end(&mut head)
        .map_err(|e| format!("{name}: cannot read: {e}"))?;
    if head == GZIP_MAGIC {
        return Err(format!(
            "{name}: gzip-compressed: not read as such; decompress it first (`zcat {name} | payhub-verify … -`)"
        ));
    }
    let read = Rc::new(Cell::new(Identity::default()));
    let reader = Digesting {
        inner: std::io::Cursor::new(head).chain(reader),
        read: read.clone(),
    };
    Ok(Input {
        name,
        reader: Box::new(reader),
        read,
    })
}

/// Reads the next line into `line` (without its `\n`), at most [`LINE_MAX`] bytes:
/// `None` at the end, else whether the input ended inside the line (no `\n`); `Err`
/// naming `name:n` and the bound for a longer line.
pub fn next_line(
    reader: &mut dyn BufRead,
    name: &str,
    n: u64,
    line: &mut Vec<u8>,
) -> Result<Option<bool>, String> {
    line.clear();
    let got = reader
        .take(LINE_MAX as u64 + 1)
        .read_until(b'\n', line)
        .map_err(|e| format!("{name}:{n}: cannot read: {e}"))?;
    if got == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        return Ok(Some(false));
    }
    if line.len() > LINE_MAX {
        return Err(too_long(name, n));
    }
    Ok(Some(true))
}

/// The error for a line past [`LINE_MAX`].
pub fn too_long(name: &str, n: u64) -> String {
    format!(
        "{name}:{n}: a line longer than {} MiB, the bound of a line: refused, not judged",
        LINE_MAX >> 20
    )
}

/// One line [`each_line`] hands over.
pub struct Line<'a> {
    /// Its number, from 1.
    pub n: u64,
    /// Its text; `None`: not UTF-8.
    pub text: Option<&'a str>,
    /// The input ends inside it, with no end of line: the last line. When it does not
    /// read, it was cut off (a writer stopped mid-line, a full disk).
    pub unended: bool,
}

/// What [`each_line`] calls with each line.
pub type EachLine<'a> = dyn FnMut(Line) -> Result<(), String> + 'a;

/// Each non-blank line of `reader`, numbered from 1.
pub fn each_line(reader: &mut dyn BufRead, name: &str, each: &mut EachLine) -> Result<(), String> {
    let mut line = Vec::new();
    let mut n = 0u64;
    loop {
        n += 1;
        let Some(unended) = next_line(reader, name, n, &mut line)? else {
            return Ok(());
        };
        let text = std::str::from_utf8(&line).ok();
        if text.is_some_and(|t| t.trim().is_empty()) {
            continue;
        }
        each(Line { n, text, unended })?;
    }
}

/// The reason given for an unreadable last line the input ends inside: the line is cut
/// off, and what follows the cut was never recorded.
pub fn torn(why: &str) -> String {
    format!("cut off: the input ends inside this line, with no end of line ({why})")
}

/// Checks that an event stamped `at`, at `place` (`file:line`), is not before the one
/// above it (`last`, then updated): a stream's order is evidence, never re-timed.
pub fn in_order(last: &mut Option<Millis>, at: Millis, place: &str) -> Result<(), String> {
    if let Some(before) = *last
        && at < before
    {
        return Err(format!(
            "{place}: at {} ms, before the event above it (at {} ms): the stream is not in the order it happened, and its order is evidence: refused, not re-ordered",
            at.0, before.0
        ));
    }
    *last = Some(at);
    Ok(())
}

/// The whole of a small input (a script), at most `max` bytes.
pub fn read_all(path: &Path, max: usize) -> Result<Vec<u8>, String> {
    let input = open(path)?;
    let mut bytes = Vec::new();
    input
        .reader
        .take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: cannot read: {e}", input.name))?;
    if bytes.len() > max {
        return Err(format!(
            "{}: longer than {} MiB, the bound of this input: refused",
            input.name,
            max >> 20
        ));
    }
    Ok(bytes)
}

/// The largest side input (a log profile, an API key map, a fault plan): 16 MiB.
pub const SIDE_MAX: usize = 16 << 20;

/// A side input read whole as text, at most [`SIDE_MAX`] bytes ([`read_all`]).
pub fn read_text(path: &Path) -> Result<String, String> {
    String::from_utf8(read_all(path, SIDE_MAX)?)
        .map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_bound_is_refused_without_reading_it_whole() {
        let mut big = vec![b'x'; LINE_MAX + 10];
        big.push(b'\n');
        let mut r: &[u8] = &big;
        let mut line = Vec::new();
        let e = next_line(&mut r, "f", 1, &mut line).unwrap_err();
        assert!(e.contains("16 MiB"), "{e}");
        assert!(line.len() <= LINE_MAX + 1);
    }

    #[test]
    fn the_identity_counts_and_digests_what_was_read_however_it_was_read() {
        let dir = std::env::temp_dir().join(format!("payhub-identity-{}", std::process::id()));
        std::fs::write(&dir, "one\ntwo\n").unwrap();
        let mut by_lines = open(&dir).unwrap();
        each_line(&mut by_lines.reader, "f", &mut |_| Ok(())).unwrap();
        let mut whole = open(&dir).unwrap();
        whole.reader.read_to_end(&mut Vec::new()).unwrap();
        assert_eq!(by_lines.read.get(), whole.read.get());
        assert_eq!(whole.read.get().bytes, 8);
        std::fs::write(&dir, "one\ntwo\r").unwrap();
        let mut other = open(&dir).unwrap();
        other.reader.read_to_end(&mut Vec::new()).unwrap();
        assert_ne!(other.read.get(), whole.read.get());
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn a_line_at_the_bound_is_read() {
        let mut exact = vec![b'x'; LINE_MAX];
        exact.push(b'\n');
        let mut r: &[u8] = &exact;
        let mut line = Vec::new();
        assert_eq!(next_line(&mut r, "f", 1, &mut line).unwrap(), Some(false));
        assert_eq!(line.len(), LINE_MAX);
        assert_eq!(next_line(&mut r, "f", 2, &mut line).unwrap(), None);
    }
}
