//! A spinner on stderr for long runs; silent when stderr is not a terminal (CI, pipes).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A spinner if `wanted` and stderr is a terminal; otherwise nothing.
    pub fn new(wanted: bool) -> Progress {
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar: Some(bar) }
    }

    pub fn say(&self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.to_owned());
        }
    }

    /// Clears the spinner: it leaves nothing behind in the terminal.
    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
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
