//! Who made a report, when, how, and against which contract.

use serde::Serialize;

/// Who made a report, when, and how: read at the edge of the run (the wall clock, the
/// build's commit), never by the model.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    /// The contract judged: its title, version and date.
    pub contract: ContractNamed,
    pub version: &'static str,
    /// The commit the binary was built from, or `unknown`.
    pub commit: String,
    /// UTC, `2026-12-01 09:51:02 UTC`.
    pub date: String,
    /// The command line, as a shell takes it back: also the reproduce command.
    pub command: String,
    pub cores: usize,
}

impl Header {
    pub fn now() -> Header {
        let commit = commit().unwrap_or_else(|| "unknown".to_owned());
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Header {
            contract: ContractNamed::JUDGED,
            version: env!("CARGO_PKG_VERSION"),
            commit,
            date: crate::utc::date_time(secs),
            command: crate::usage::command_line(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// The contract a verdict is given against, as every report names it.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ContractNamed {
    pub title: &'static str,
    /// The title in the Chinese original, which is authoritative.
    pub title_zh: &'static str,
    pub version: &'static str,
    pub updated: &'static str,
}

impl ContractNamed {
    /// The contract this build judges.
    pub const JUDGED: ContractNamed = ContractNamed {
        title: payhub_model::Contract::TITLE,
        title_zh: payhub_model::Contract::TITLE_ZH,
        version: payhub_model::Contract::VERSION,
        updated: payhub_model::Contract::UPDATED,
    };
}

/// The commit this binary was built from (`git rev-parse --short HEAD` at build time,
/// by `build.rs`), where it was built from a git checkout.
pub fn commit() -> Option<String> {
    option_env!("PAYHUB_COMMIT").map(str::to_owned)
}
