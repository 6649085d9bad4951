//! What can go wrong when a preset is checked: one enum, each variant naming the preset.

use payhub_sim::Choice;
use payhub_sim::prove::ProveError;
use payhub_sim::world::ApplyError;

/// Checking a preset ([`super::check_with`], [`super::search`], [`super::PresetModel`]).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A setup choice of the preset does not apply to its world (a preset defect).
    #[error("preset {preset}: setup step {step} ('{choice}'): {error}")]
    Setup {
        preset: String,
        step: usize,
        choice: Choice,
        error: ApplyError,
    },
    /// A counterexample the search found does not replay on the world.
    #[error("preset {preset}, {property}: {error}")]
    Unproved {
        preset: String,
        property: &'static str,
        error: ProveError,
    },
}
