//! `bench --traffic N`: check-log's throughput and memory on a generated log of N
//! exchanges (`check-log --generate`, written streamed into a temporary file), judged on
//! 1 and on 2 threads by the same binary, one run right after the other, each in a
//! process of its own: seconds, MB/s, exchanges/s, peak resident memory (the child's,
//! from the system), the memory held at the end and per retained idempotency key (the
//! child's `--stats`), and whether the two outputs are the same byte for byte.

use crate::check_log::generate::{self, Shape};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// One run of check-log over the generated log.
struct Row {
    threads: usize,
    seconds: f64,
    peak_rss: u64,
    /// The child's `--stats` line.
    stats: String,
    output: Vec<u8>,
    exit: i32,
}

pub fn traffic(n: u64, shape: Shape, merchants: u32) -> Result<ExitCode, String> {
    let dir = std::env::temp_dir().join(format!("payhub-bench-traffic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = measure(&dir, n, shape, merchants);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn measure(dir: &Path, n: u64, shape: Shape, merchants: u32) -> Result<ExitCode, String> {
    let har = shape == Shape::Har;
    let log = dir.join(["log.jsonl", "log.har"][usize::from(har)]);
    let started = Instant::now();
    let mut file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    generate::write(n, shape, merchants, &mut file).map_err(|e| format!("cannot write: {e}"))?;
    let size = std::fs::metadata(&log).map_err(|e| e.to_string())?.len();
    println!(
        "traffic: {n} exchanges, {}, {merchants} merchant(s), {:.1} MB, generated in {:.1} s",
        ["access log", "HAR"][usize::from(har)],
        size as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let rows = [run_one(dir, &log, 1)?, run_one(dir, &log, 2)?];
    println!(
        "{:>7} {:>8} {:>7} {:>12} {:>10} {:>8}  stats",
        "threads", "seconds", "MB/s", "exchanges/s", "peak RSS", "of file"
    );
    for r in &rows {
        println!(
            "{:>7} {:>8.2} {:>7.1} {:>12.0} {:>10} {:>7.1}%  {}",
            r.threads,
            r.seconds,
            size as f64 / 1e6 / r.seconds,
            n as f64 / r.seconds,
            crate::heap::show(r.peak_rss),
            r.peak_rss as f64 * 100.0 / size as f64,
            r.stats
        );
    }
    let same = rows[0].output == rows[1].output && rows[0].exit == rows[1].exit;
    println!(
        "1 → 2 threads: {:.2}x exchanges/s; outputs {}",
        rows[0].seconds / rows[1].seconds,
        ["DIFFER", "identical, byte for byte"][usize::from(same)]
    );
    Ok(ExitCode::from(u8::from(!same)))
}

/// `check-log LOG --threads T --stats --format json` in a child, its output in files (no
/// pipe to drain while waiting), its peak resident memory from `wait4`.
fn run_one(dir: &Path, log: &Path, threads: usize) -> Result<Row, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let (out, err) = (dir.join("out.json"), dir.join("stats.txt"));
    let file = |p: &PathBuf| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let started = Instant::now();
    let child = Command::new(exe)
        .args(["check-log", "--stats", "--format", "json", "--threads"])
        .arg(threads.to_string())
        .arg(log)
        .stdin(Stdio::null())
        .stdout(file(&out)?)
        .stderr(file(&err)?)
        .spawn()
        .map_err(|e| format!("cannot start check-log: {e}"))?;
    let (exit, peak_rss) = wait_with_peak(child.id())?;
    let seconds = started.elapsed().as_secs_f64();
    let stats = std::fs::read_to_string(&err).unwrap_or_default();
    let stats = stats
        .lines()
        .find_map(|l| l.strip_prefix("stats: "))
        .and_then(|l| l.split_once("; ").map(|(_, rest)| rest.to_owned()))
        .ok_or_else(|| format!("check-log printed no stats: {stats}"))?;
    Ok(Row {
        threads,
        seconds,
        peak_rss,
        stats,
        output: std::fs::read(&out).map_err(|e| e.to_string())?,
        exit,
    })
}

/// Waits for child `pid`: its exit code and its peak resident memory in bytes.
#[cfg(unix)]
fn wait_with_peak(pid: u32) -> Result<(i32, u64), String> {
    let mut status = 0;
    // SAFETY: rusage is plain data the call fills in; the pid is our child's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the child is waited for once, here.
    let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    if r < 0 {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let exit = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Ok((exit, usage.ru_maxrss as u64 * 1024))
}

#[cfg(not(unix))]
fn wait_with_peak(_pid: u32) -> Result<(i32, u64), String> {
    Err("bench --traffic measures peak memory on Unix only".into())
}
