//! The Python implementation of the contract in `tests/platform_py`, as a child process
//! on a free loopback port: started, read until it listens, killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// `tests/platform_py`.
pub const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/platform_py");

/// The platform as a child process, killed when dropped.
pub struct PyPlatform {
    child: Child,
    pub url: String,
}

impl Drop for PyPlatform {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `python3` runs; if not, says that `which` tests are skipped.
pub fn python(which: &str) -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("python3 is not installed: the Python platform's {which} tests are skipped");
    }
    ok
}

/// `platform.py --port 0 ARGS…`, once it listens.
pub fn start(args: &[&std::ffi::OsStr]) -> PyPlatform {
    let mut child = Command::new("python3")
        .arg(format!("{DIR}/platform.py"))
        .args(["--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the platform's first line: {line:?}"))
        .to_owned();
    PyPlatform { child, url }
}
