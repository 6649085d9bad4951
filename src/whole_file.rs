//! Every file a command writes for a reader (reports, `--out`, tapes) is written whole or
//! not at all: into a temporary file beside it, synced, then renamed over it. A write
//! that fails (a full disk, a read-only folder) leaves the file that was there before,
//! or none, and is an error naming the path: never a report cut off mid-page that still
//! reads "all hold".

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` whole, or leaves `path` as it was and says why.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), String> {
    write_with(path, &mut |out| out.write_all(bytes.as_ref()))
}

/// Writes to `path` whatever `fill` writes, whole: `fill` writes into a temporary file
/// in the same folder, which replaces `path` only once every byte is on the disk.
pub fn write_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let failed = |e: std::io::Error| {
        format!(
            "cannot write {}: {e}; not written (a file there before is left as it was)",
            path.display()
        )
    };
    let name = path
        .file_name()
        .ok_or_else(|| format!("cannot write {}: not a file name", path.display()))?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let temporary = dir.join(format!(
        ".{}.{}.partial",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&temporary).and_then(|mut file| {
        fill(&mut file)?;
        file.flush()?;
        // A full disk may only say so when the data reaches it.
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            // Nothing half-written is left behind, under any name.
            let _ = std::fs::remove_file(&temporary);
            Err(failed(e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "payhub-verify-whole-file-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_write_that_fails_midway_leaves_the_file_before_it_and_nothing_else() {
        let dir = scratch("fails");
        let path = dir.join("report.html");
        write(&path, "<h1>the previous report</h1>").unwrap();
        let e = write_with(&path, &mut |out| {
            out.write_all(b"<h1>all hold</h1><p>cut")?;
            Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "No space left on device",
            ))
        })
        .unwrap_err();
        assert!(
            e.contains(&path.display().to_string()) && e.contains("No space left"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "<h1>the previous report</h1>"
        );
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "a temporary file was left: {left:?}");
    }

    #[test]
    fn a_write_that_fails_where_there_was_no_file_leaves_none() {
        let dir = scratch("none");
        let path = dir.join("report.json");
        let e = write_with(&path, &mut |out| {
            out.write_all(b"{\"verdict\":")?;
            Err(std::io::Error::other("injected"))
        })
        .unwrap_err();
        assert!(e.contains("injected"), "{e}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }

    #[test]
    fn a_whole_write_replaces_the_file() {
        let dir = scratch("whole");
        let path = dir.join("tape.json");
        write(&path, "old").unwrap();
        write(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }

    #[test]
    fn a_folder_that_does_not_exist_is_an_error_naming_the_path() {
        let dir = scratch("missing");
        let path = dir.join("no/such/folder/report.md");
        let e = write(&path, "x").unwrap_err();
        assert!(e.contains("no/such/folder/report.md"), "{e}");
    }
}
