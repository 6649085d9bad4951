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

/// One session's file; `None` after the first write error (printed once: the session
/// goes on without its file).
pub struct TapeFile {
    path: PathBuf,
    out: Option<BufWriter<File>>,
}

impl TapeFile {
    pub fn create(path: &Path) -> Result<TapeFile, String> {
        let file =
            File::create(path).map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        let (path, out) = (path.to_owned(), Some(BufWriter::new(file)));
        Ok(TapeFile { path, out })
    }

    /// Appends one event as a line (as the events export writes it).
    pub fn write(&mut self, event: &Event) {
        let mut line = String::new();
        super::record::push_line(&mut line, event);
        self.io(|out| out.write_all(line.as_bytes()));
    }

    /// Pushes what was written to the file.
    pub fn flush(&mut self) {
        self.io(|out| out.flush());
    }

    fn io(&mut self, f: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) {
        if let Some(Err(e)) = self.out.as_mut().map(f) {
            let path = self.path.display();
            eprintln!("payhub-verify serve: --tape {path}: {e}; the session goes on unrecorded");
            self.out = None;
        }
    }

    /// Starts the file again for a new session.
    pub fn restart(&mut self) {
        match TapeFile::create(&self.path) {
            Ok(fresh) => *self = fresh,
            Err(e) => {
                eprintln!("payhub-verify serve: --tape: {e}");
                self.out = None;
            }
        }
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
