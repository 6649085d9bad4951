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
