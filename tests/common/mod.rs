//! Helpers the command-line tests share: run the binary, read what it printed, write
//! input files. Each test crate uses some of them.
#![allow(dead_code)]

pub mod browser;
pub mod platform_py;

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_payhub-verify"))
}

/// Runs the binary with `args` (a backtrace would show if it panicked).
pub fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the binary runs")
}

pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the binary printed on stderr, which never shows a panic.
pub fn stderr(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        !err.contains("panicked") && !err.contains("stack backtrace"),
        "{err}"
    );
    err
}

pub fn no_panic(o: &Output) {
    stderr(o);
}

/// Writes `bytes` to `name` in a directory of this test process and returns its path.
pub fn temp(name: &str, bytes: &(impl AsRef<[u8]> + ?Sized)) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "payhub-verify-{}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes.as_ref()).unwrap();
    path
}

/// Starts the Explorer for `preset` on port 0 of loopback: the process and the address
/// it prints (the port the system chose, not 0).
pub fn explorer(preset: &str) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = bin()
        .args(["explore", "--preset", preset, "--addr", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    stderr.read_line(&mut first).unwrap();
    // The rest is drained, so a later line neither blocks nor fails on a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("explore's first line names no address: {first:?}"))
        .to_owned();
    assert!(
        !addr.ends_with(":0"),
        "explore printed port 0, not the port it took: {first:?}"
    );
    (child, addr)
}

/// `GET path` from the server at `addr` (HTTP/1.0), retried until it answers: the raw
/// answer, status line included.
pub fn http_get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    for _ in 0..100 {
        if let Ok(mut stream) = std::net::TcpStream::connect(addr) {
            let request = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
            stream.write_all(request.as_bytes()).unwrap();
            let mut body = String::new();
            stream.read_to_string(&mut body).unwrap();
            if !body.is_empty() {
                return body;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("no answer to GET {path} from {addr}");
}
