//! What the properties tell the facts: how an answer is judged against the contract, and
//! how long a scope's history is kept. The facts record; the properties decide.
//!
//! The responses family must judge each answer against the store as it was when the
//! answer left (it cannot keep every answer in the hashed state); the money family must
//! read each answer under a scope against the scope's execution as it stood then
//! ([`ScopeAnswers`]), and forget a scope's history once its retention has passed
//! (RET-01). Neither knows
//! the contract: `payhub-properties` supplies one [`Judging`] (`payhub_properties::JUDGING`)
//! and installs it where a world ([`crate::WorldConfig::judging`]) or a judge of recorded
//! events ([`crate::Facts::judged_by`]) builds its facts. Facts folded without one judge
//! no answer and keep every scope's history: nothing decides without the properties.

use super::responses::{Misanswer, Responses, Slot, Store};
use payhub_model::event::What;
use payhub_model::{ApiResponse, Millis};

/// Judges one event the responses family folds: reports every misanswer `what` shows,
/// with the witness it fills, against the executions in flight (`flight`) and the store
/// as the event found it.
pub type AnswerJudge =
    fn(flight: &Responses, what: &What, store: &Store<'_>, found: &mut dyn FnMut(Slot, Misanswer));

/// How the money family reads an answer under an idempotency scope, against the scope's
/// execution within retention (the properties' reading of CONFLICT-01, REPLAY-01 and
/// REJECT-01). The family records the first request each reading finds.
#[derive(Clone, Copy, Debug)]
pub struct ScopeAnswers {
    /// Whether `answer` misjudges the conflict, given whether the request's
    /// safety-relevant parameters differ from its scope's execution (`params_differ`;
    /// `false` when nothing executed).
    pub conflict_misjudged: fn(answer: &ApiResponse, params_differ: bool) -> bool,
    /// Whether `answer` treats the request as new business: never right under a scope
    /// that executed within retention.
    pub as_new_business: fn(answer: &ApiResponse) -> bool,
    /// Whether `answer` says the request executed nothing: a step that changed the
    /// store or called the upstream contradicts it.
    pub executes_nothing: fn(answer: &ApiResponse) -> bool,
}

/// The judgements and horizons the properties hand the facts.
#[derive(Clone, Copy, Debug)]
pub struct Judging {
    /// Judges every answer, store change and webhook (the responses family).
    pub answers: AnswerJudge,
    /// Reads the answers under a scope (the money family).
    pub scope_answers: ScopeAnswers,
    /// How long the money family keeps a scope's execution, charges and answered object
    /// before a new window begins (the properties read RET-01 here).
    pub scope_history: Millis,
}

/// The [`Judging`] a fold runs with, if any. Not part of the state: facts compare equal
/// and hash alike whatever judges them (one judging per run).
#[derive(Clone, Copy, Default)]
pub struct JudgedBy(pub Option<&'static Judging>);

impl JudgedBy {
    /// How long a scope's history is kept: forever when nothing judges.
    pub fn scope_history(self) -> Millis {
        self.0.map_or(Millis(u64::MAX), |j| j.scope_history)
    }

    /// The judge of answers, if any.
    pub fn answers(self) -> Option<AnswerJudge> {
        self.0.map(|j| j.answers)
    }

    /// The reading of answers under a scope, if any: without one no answer is read.
    pub fn scope_answers(self) -> Option<&'static ScopeAnswers> {
        self.0.map(|j| &j.scope_answers)
    }

    /// Whether a judging is installed.
    pub fn is_installed(self) -> bool {
        self.0.is_some()
    }
}

impl PartialEq for JudgedBy {
    fn eq(&self, _: &JudgedBy) -> bool {
        true
    }
}

impl Eq for JudgedBy {}

impl std::hash::Hash for JudgedBy {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl std::fmt::Debug for JudgedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Some(_) => "JudgedBy(installed)",
            None => "JudgedBy(none)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Facts;
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

    fn judges_nothing(_: &Responses, _: &What, _: &Store<'_>, _: &mut dyn FnMut(Slot, Misanswer)) {}

    static ONE_DAY: Judging = Judging {
        answers: judges_nothing,
        scope_answers: ScopeAnswers {
            conflict_misjudged: |_, _| false,
            as_new_business: |_| false,
            executes_nothing: |_| false,
        },
        scope_history: Millis::days(1),
    };

    /// The checker hashes and compares facts: what judges them is no part of either.
    #[test]
    fn the_judging_is_no_part_of_the_state() {
        let judged = Facts::judged_by(&ONE_DAY);
        let unjudged = Facts::default();
        assert_eq!(judged, unjudged);
        let hash = |f: &Facts| BuildHasherDefault::<DefaultHasher>::default().hash_one(f);
        assert_eq!(hash(&judged), hash(&unjudged));
        assert!(judged.judged_by.is_installed() && !unjudged.judged_by.is_installed());
        assert_eq!(judged.judged_by.scope_history(), Millis::days(1));
    }
}
