//! What the properties tell the facts ([`Judging`]): the judge of every answer, store
//! change and webhook ([`crate::responses`]), the reading of answers under a scope
//! ([`crate::scope_answers`]), and how long a scope's history is kept,
//! RET-01's retention. The facts record; these decide. Installed wherever facts are
//! built for the properties to read: [`WorldConfig::judged_by`] for a world (the
//! checker's presets, the simulator, the zoo, the sandbox, scripts, replays),
//! [`Facts::judged_by`] for a recorded stream (`judge`, `check-log`).
//!
//! [`WorldConfig::judged_by`]: payhub_sim::WorldConfig::judged_by
//! [`Facts::judged_by`]: payhub_sim::Facts::judged_by

use payhub_model::Contract;
use payhub_sim::facts::Judging;

/// The contract's judging: answers as [`crate::responses`] reads them; a scope's history
/// for RET-01's retention ("Idempotency records are retained online for 7 days.",
/// 幂等记录在线保留 7 天。).
pub static JUDGING: Judging = Judging {
    answers: crate::responses::answers::judge,
    scope_answers: crate::scope_answers::CONTRACT,
    scope_history: Contract::RETENTION,
};
