//! `--memory-max` over one file ([`crate::heap`]'s reading of the resident memory, taken
//! between two entries every [`EVERY`] entries), and what the judgement held (`--stats`).

use super::Held;
use super::entry::Label;

/// What `each_line` is stopped with when the bound is reached (not an error).
pub const STOPPED: &str = "\u{0}stopped at the bound of memory";

/// Entries between two readings of the memory held: a reading is a small file read.
pub const EVERY: u64 = 256;

/// `--memory-max` over one file: checked between two entries.
pub struct Bound {
    pub max: u64,
    /// Memory held before the file was read.
    pub before: u64,
    pub peak: u64,
    /// Why reading stopped, once it did.
    pub stopped: Option<String>,
}

impl Bound {
    /// Whether to read on after `label`, the `entries`th entry: not once the memory held
    /// is past the bound (then why is kept).
    pub fn check(&mut self, label: Label, entries: u64) -> std::ops::ControlFlow<()> {
        if entries % EVERY != 0 {
            return std::ops::ControlFlow::Continue(());
        }
        let now = crate::heap::in_use();
        self.peak = self.peak.max(now.saturating_sub(self.before));
        if now <= self.max {
            return std::ops::ControlFlow::Continue(());
        }
        self.stopped = Some(format!(
            "stopped after {label} ({entries} entries read): the process held {} resident, past --memory-max {}; what came before was judged, the rest of the file was not",
            crate::heap::show(now),
            crate::heap::show(self.max)
        ));
        std::ops::ControlFlow::Break(())
    }

    pub fn held(&mut self, retained: payhub_properties::facts::wire::Retained) -> Held {
        let end = crate::heap::in_use().saturating_sub(self.before);
        self.peak = self.peak.max(end);
        Held {
            end,
            peak: self.peak,
            retained,
        }
    }
}
