//! The errors sim's operations return: one enum per operation, each variant a way the
//! input can be wrong, its message naming where (a step, a label, a column). A choice is
//! named by its label, so these errors import nothing of the world but its refusal.

use crate::world::ApplyError;

/// Reading a tape file ([`crate::tape::Tape::from_json`]).
#[derive(Debug, thiserror::Error)]
pub enum TapeError {
    /// A tape written before v2 (one label per line), which this version does not read.
    #[error(
        "a tape of an older payhub-verify (v1, one label per line); run the seed again with `simulate` to write it as v2"
    )]
    OlderVersion,
    /// The text is not JSON, or stops before the object ends.
    #[error(
        "not a payhub-verify tape (a JSON object with \"format\": \"payhub-verify tape v2\"): {0}"
    )]
    NotJson(serde_json::Error),
    /// JSON, but a field is missing, unknown or of the wrong shape (a label included).
    #[error("{0}")]
    Invalid(serde_json::Error),
}

/// A choice label that does not parse (`Choice`'s `FromStr`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct LabelError {
    /// 1-based column of the label where it goes wrong.
    pub column: u32,
    /// What was expected there.
    pub message: String,
}

/// Replaying a tape's choices on a fresh world ([`crate::driver::check_enabled`],
/// [`crate::driver::resolve_labels`]); `enabled` lists what the world offered instead.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReplayError {
    /// Step `step` (1-based) is not a choice label.
    #[error("step {step}: '{label}' is not a choice label ({error})")]
    NotALabel {
        step: usize,
        label: String,
        error: LabelError,
    },
    /// The choice at `step` is not enabled there.
    #[error("step {step}: '{choice}' is not enabled; enabled: {enabled}")]
    NotEnabled {
        step: usize,
        choice: String,
        enabled: String,
    },
    /// The choice at `step` is enabled but the world refuses it.
    #[error("step {step}: '{choice}': {error}; enabled: {enabled}")]
    Refused {
        step: usize,
        choice: String,
        error: ApplyError,
        enabled: String,
    },
}

/// Naming a simulation's world ([`crate::tape::SimulationArgs::config`],
/// [`crate::worlds::parse_policy`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// `--clients` outside 1..=8.
    #[error("--clients must be 1..=8, not {0}")]
    Clients(u8),
    /// A policy name that is neither a reference policy nor an anti-pattern.
    #[error("unknown policy '{name}' (policies: reference, reference-random, {known})")]
    UnknownPolicy { name: String, known: String },
}

/// Writing a tape as a what-if script ([`crate::script::script_from_tape`],
/// [`crate::prove::Counterexample::script`]): what the script language cannot say.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// The world runs a planted bug; a script declares only the reference platform.
    #[error(
        "the world runs the platform mutant {0} (a planted bug), and a script runs only the reference platform (use platform=reference)"
    )]
    Mutant(&'static str),
    /// The world accepts other currencies than the default ones.
    #[error("a script cannot set the accepted currencies")]
    Currencies,
    /// The world holds other API keys than the default ones.
    #[error("a script uses the default API keys (ak_1 … ak_5) only")]
    ApiKeys,
    /// A step filed under a business order is not a request.
    #[error("step {0} is filed under a business order but is not a request")]
    FiledNotARequest(usize),
    /// The tape names a workload item the world does not have.
    #[error("the tape names workload item {0}, which the world does not have")]
    NoWorkItem(u16),
    /// A request's line does not parse back.
    #[error("step {step}: '{line}' does not read back (column {column}: {message})")]
    RequestUnreadable {
        step: usize,
        line: String,
        column: u32,
        message: String,
    },
    /// A request's line parses back as another request.
    #[error("step {step}: '{line}' does not read back as the same request")]
    RequestChanged { step: usize, line: String },
    /// A duration's text parses back as another duration.
    #[error("step {step}: duration {text} does not read back")]
    DurationChanged { step: usize, text: String },
    /// A control issues an API key the script language does not name.
    #[error("a script cannot issue the key {0}")]
    UnknownKey(String),
    /// The tape does not replay on its world.
    #[error("the tape does not replay at step {step}: {error}")]
    DoesNotReplay { step: usize, error: ApplyError },
}
