//! `serve --tape FILE`: the session's events written to a file as JSON Lines as they
//! happen (the lines of `GET /__sandbox/events`, which `payhub-verify judge FILE` reads),
//! flushed after every call into the session, so the file has every event even once the
//! record in memory has dropped the first ones. Merchant 1's session goes to `FILE`,
//! merchant 2's to `FILE` with `-merchant-2` before its extension. `POST /__sandbox/reset`
//! starts the file again: it always holds one session.
//!
//! The edge's I/O, not the core's: the core hands out its events, this writes them.

use payhub_model::event::Event;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

/// One session's file.
pub struct TapeFile {
    path: PathBuf,
    out: BufWriter<File>,
    /// The first write error, printed once; the session goes on without its file.
    failed: bool,
}

impl TapeFile {
    pub fn create(path: &Path) -> Result<TapeFile, String> {
        let file =
            File::create(path).map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        Ok(TapeFile {
            path: path.to_owned(),
            out: BufWriter::new(file),
            failed: false,
        })
    }

    /// Appends one event as a line.
    pub fn write(&mut self, event: &Event) {
        if self.failed {
            return;
        }
        let written = serde_json::to_writer(&mut self.out, event)
            .map_err(std::io::Error::other)
            .and_then(|()| self.out.write_all(b"\n"));
        if let Err(e) = written {
            self.fail(e);
        }
    }

    /// Pushes what was written to the file.
    pub fn flush(&mut self) {
        if !self.failed {
            if let Err(e) = self.out.flush() {
                self.fail(e);
            }
        }
    }

    /// Starts the file again for a new session.
    pub fn restart(&mut self) {
        match TapeFile::create(&self.path) {
            Ok(fresh) => *self = fresh,
            Err(e) => {
                eprintln!("payhub-verify serve: --tape: {e}");
                self.failed = true;
            }
        }
    }

    fn fail(&mut self, e: std::io::Error) {
        eprintln!(
            "payhub-verify serve: --tape {}: {e}; the session goes on unrecorded",
            self.path.display()
        );
        self.failed = true;
    }
}

/// The file of namespace `ns`: `FILE` for merchant 1, `FILE` with `-merchant-2` before
/// its extension for merchant 2 (`s.jsonl` → `s-merchant-2.jsonl`).
pub fn path_of(base: &Path, ns: usize) -> PathBuf {
    if ns == 0 {
        return base.to_owned();
    }
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match base.extension() {
        Some(ext) => format!("{stem}-merchant-{}.{}", ns + 1, ext.to_string_lossy()),
        None => format!("{stem}-merchant-{}", ns + 1),
    };
    base.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merchant_twos_file_sits_beside_merchant_ones() {
        let base = Path::new("/tmp/s.jsonl");
        assert_eq!(path_of(base, 0), base);
        assert_eq!(path_of(base, 1), Path::new("/tmp/s-merchant-2.jsonl"));
        assert_eq!(path_of(Path::new("tape"), 1), Path::new("tape-merchant-2"));
    }
}
