//! A spinner on stderr for long runs on a terminal; for `verify` in CI or a pipe, a line
//! on stderr at most every [`LINE_EVERY`] saying what the run is doing.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often, at most, a run not on a terminal prints a progress line.
pub const LINE_EVERY: Duration = Duration::from_secs(10);

pub struct Progress {
    bar: Option<ProgressBar>,
    lines: Option<Lines>,
}

/// The progress lines' thread: the current message, whether the run is over, and a
/// condition the end wakes it with.
struct Lines {
    state: Arc<(Mutex<(String, bool)>, Condvar)>,
    handle: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Lines {
    fn start(what: &'static str) -> Lines {
        let state = Arc::new((Mutex::new((String::new(), false)), Condvar::new()));
        let shared = state.clone();
        let started = Instant::now();
        let handle = std::thread::spawn(move || {
            let (lock, wake) = &*shared;
            let mut guard = lock.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                let (g, timeout) = wake
                    .wait_timeout(guard, LINE_EVERY)
                    .unwrap_or_else(|e| e.into_inner());
                guard = g;
                if guard.1 {
                    break;
                }
                if timeout.timed_out() {
                    eprintln!("{what}: {}s: {}", started.elapsed().as_secs(), guard.0);
                }
            }
        });
        Lines {
            state,
            handle: Mutex::new(Some(handle)),
        }
    }

    fn say(&self, message: &str) {
        let mut g = self.state.0.lock().unwrap_or_else(|e| e.into_inner());
        g.0 = message.to_owned();
    }

    fn stop(&self) {
        {
            let mut g = self.state.0.lock().unwrap_or_else(|e| e.into_inner());
            g.1 = true;
        }
        self.state.1.notify_all();
        let handle = self.handle.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Progress {
    /// A spinner if `wanted` and stderr is a terminal; otherwise nothing.
    pub fn new(wanted: bool) -> Progress {
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                lines: None,
            };
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress {
            bar: Some(bar),
            lines: None,
        }
    }

    /// As [`Progress::new`] on a terminal; elsewhere (CI, a pipe) a line on stderr every
    /// [`LINE_EVERY`] at most, `WHAT: 20s: MESSAGE`, until [`Progress::done`], so a long
    /// run never looks hung. Nothing is printed for a run shorter than that.
    pub fn with_lines(wanted: bool, what: &'static str) -> Progress {
        if std::io::stderr().is_terminal() {
            return Progress::new(wanted);
        }
        Progress {
            bar: None,
            lines: Some(Lines::start(what)),
        }
    }

    pub fn say(&self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.to_owned());
        }
        if let Some(lines) = &self.lines {
            lines.say(message);
        }
    }

    /// Clears the spinner: it leaves nothing behind in the terminal.
    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if let Some(lines) = &self.lines {
            lines.stop();
        }
    }
}

/// A progress bar over a known number of items on stderr; nothing when stderr is not a
/// terminal. Workers share it (`inc` takes `&self`).
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub fn new(wanted: bool, len: u64, what: &str) -> Bar {
        if !wanted || !std::io::stderr().is_terminal() {
            return Bar { bar: None };
        }
        let bar = ProgressBar::new(len);
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{bar:30}} {{pos}}/{{len}} {what} {{elapsed}} (eta {{eta}}, Ctrl-C: stop and report)"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Bar { bar: Some(bar) }
    }

    pub fn inc(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Follows the bug zoo's jobs from another thread: a bar of jobs done on a terminal
/// (nothing otherwise), and Ctrl-C turned into the stop flag the zoo's workers read
/// before each job (they finish the job in hand).
pub struct FollowZoo {
    finished: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl FollowZoo {
    pub fn start(wanted: bool, control: &'static payhub_properties::zoo::ZooControl) -> FollowZoo {
        use std::sync::atomic::Ordering;
        let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let bar = (wanted && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} bug zoo jobs {elapsed} (Ctrl-C: stop and report)",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        let done = finished.clone();
        let handle = std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                if crate::interrupt::requested() {
                    control.stop.store(true, Ordering::SeqCst);
                }
                if let Some(bar) = &bar {
                    bar.set_length(control.total.load(Ordering::SeqCst) as u64);
                    bar.set_position(control.done.load(Ordering::SeqCst) as u64);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
        });
        FollowZoo {
            finished,
            handle: Some(handle),
        }
    }

    /// Stops following (and clears the bar).
    pub fn done(mut self) {
        self.finished
            .store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
