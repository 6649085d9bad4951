//! Files are written whole or not at all: on a full disk (a 2 MiB tmpfs, filled to the
//! last page), a tape or a report that cannot be written is an error naming the file
//! (exit 2), and leaves the file that was there before, or none; never a file cut off
//! mid-way. Mounting needs root (CI runs as root); elsewhere this prints SKIPPED unless
//! `PAYHUB_REQUIRE_TMPFS=1`. Output to a full stdout is one line and exit 2.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A 2 MiB tmpfs, unmounted when dropped.
struct Tiny(PathBuf);

impl Tiny {
    fn mount(name: &str) -> Option<Tiny> {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("full-disk-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
            .arg(&dir)
            .output()
            .is_ok_and(|o| o.status.success());
        if !mounted {
            assert!(
                std::env::var_os("PAYHUB_REQUIRE_TMPFS").is_none(),
                "PAYHUB_REQUIRE_TMPFS is set and a tmpfs cannot be mounted at {}",
                dir.display()
            );
            println!("SKIPPED cli_full_disk: cannot mount a tmpfs (not root)");
            return None;
        }
        Some(Tiny(dir))
    }

    /// Fills the disk to its last byte.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        let chunk = vec![b'x'; 4096];
        while f.write_all(&chunk).is_ok() {}
        while f.write_all(b"x").is_ok() {}
    }

    /// The files in it other than the filler.
    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "filler")
            .collect();
        names.sort();
        names
    }
}

impl Drop for Tiny {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn write_fails_naming(o: &std::process::Output, path: &Path) {
    assert_eq!(code(o), 2, "{}", stdout(o));
    let err = stderr(o);
    assert!(
        err.contains(&format!("cannot write {}", path.display())) && err.contains("space"),
        "{err}"
    );
}

#[test]
fn a_tape_on_a_full_disk_is_refused_and_the_one_before_is_left_whole() {
    let Some(tiny) = Tiny::mount("tape") else {
        return;
    };
    let tape = tiny.0.join("tape.json");
    std::fs::write(&tape, "the previous tape").unwrap();
    tiny.fill();
    let o = run(&[
        "mutants",
        "--show",
        "card_in_fingerprint",
        "--save-tape",
        tape.to_str().unwrap(),
    ]);
    write_fails_naming(&o, &tape);
    assert_eq!(std::fs::read_to_string(&tape).unwrap(), "the previous tape");
    assert_eq!(tiny.files(), ["tape.json"], "nothing half-written is left");
}

#[test]
fn a_report_on_a_full_disk_is_refused_and_none_is_left_cut_off() {
    let Some(tiny) = Tiny::mount("report") else {
        return;
    };
    let out = tiny.0.join("report");
    std::fs::create_dir(&out).unwrap();
    tiny.fill();
    let o = run(&[
        "verify",
        "--quick",
        "--no-mutants",
        "--out",
        out.to_str().unwrap(),
    ]);
    write_fails_naming(&o, &out.join("report.html"));
    // The edges' own captures may sit beside it (a folder); no report, whole or cut.
    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("report"))
        .collect();
    assert!(left.is_empty(), "a report was left: {left:?}");
}

/// Output on stdout that cannot be written (`/dev/full`: every write fails with "no
/// space") is one line on stderr and exit 2, never a panic with a backtrace.
#[test]
fn output_that_cannot_be_written_is_one_line_and_exit_2() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_payhub-verify"))
        .args(["rules"])
        .stdout(std::fs::File::create(full).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("payhub-verify: cannot write the output: No space left on device"),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && err.lines().count() == 1,
        "{err}"
    );
}
