//! What a file's verdict is made of, and the exit code it gives (its closing line is
//! [`super::report`]'s).

/// What a file's exit code and closing line are made of: of a [`Judged`], or of the
/// shards [`super::merge`] joins.
pub struct Closing<'a> {
    /// The first property violated: its name, its rules, its detail.
    pub violated: Option<(&'a str, String, &'a str)>,
    pub stopped: Option<&'a str>,
    /// A shard's run (`--shard`).
    pub sharded: bool,
    /// Requests judged; entries unreadable.
    pub judged_entries: u64,
    pub skipped: u64,
    /// Properties judged, and those that cannot judge.
    pub judged: usize,
    pub cannot: usize,
    /// Of those judged, the ones that hold vacuously (none of their requests in the log).
    pub vacuous: usize,
}

impl Closing<'_> {
    pub fn exit(&self) -> u8 {
        if self.violated.is_some() {
            1
        } else if self.stopped.is_some() {
            3
        } else if self.judged_entries == 0 && self.sharded {
            // A shard with none of the log's merchants: the merge judges.
            0
        } else if self.judged_entries == 0 || self.judged == 0 {
            2
        } else if self.skipped > 0 {
            3
        } else {
            0
        }
    }
}
