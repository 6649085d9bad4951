//! What happens to a failing tape once it is found: one pipeline for every finder.
//!
//! [`prove`] replays a tape (choices from the initial world) strictly with a [`Check`],
//! to show that it reaches a violation; shrinks it with [`crate::shrink`] unless it is
//! already shortest; replays the kept choices again with a trace and checks that they
//! still violate the same property; and returns one [`Counterexample`]: the property,
//! the detail, the choices, the world at the violation, the trace, and
//! ([`Counterexample::script`]) the what-if script or the reason there is none.
//!
//! The exhaustive checker (`payhub-verify check`, whose shortest paths come from a
//! breadth-first search and are not shrunk), the bug zoo and `payhub-verify simulate` all
//! hand their tapes to it.

use crate::choice::Choice;
use crate::config::WorldConfig;
use crate::driver::{self, Check, Violation};
use crate::event_fold::EventFold;
use crate::trace::Trace;
use crate::world::{ApplyError, World};

/// Whether [`prove`] shrinks the tape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shrink {
    /// Shrink it (delta debugging over its choices); the shorter tape is kept.
    Yes,
    /// Keep it as it is: it is already shortest (a breadth-first path).
    No,
}

/// A tape proved to violate a property, shrunk, and proved again.
#[derive(Clone, Debug)]
pub struct Counterexample<F: EventFold> {
    pub config: WorldConfig,
    /// The property it violates.
    pub property: String,
    /// What exactly went wrong, on the kept choices.
    pub detail: String,
    /// Choices from the initial world to the violation as the tape had them, before
    /// shrinking.
    pub found_steps: usize,
    /// The kept choices, from the initial world to the violation.
    pub choices: Vec<Choice>,
    /// The world right after the violating choice.
    pub world: World<F>,
    /// The trace of the kept choices.
    pub trace: Trace,
}

/// Why a tape could not be proved: a bug of the finder or of the shrinker, never of
/// the system under test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProveError {
    pub world: String,
    /// Whether the shrunk tape failed (else the tape as found).
    pub shrunk: bool,
    pub failure: Failure,
}

/// How a tape failed to prove its violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Choice `step` (1-based) does not apply.
    DoesNotReplay { step: usize, error: ApplyError },
    /// The tape ends without a violation (of `property`, once it is known).
    NoViolation { property: Option<String> },
}
impl std::fmt::Display for ProveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let which = if self.shrunk {
            "the shrunk counterexample"
        } else {
            "the counterexample"
        };
        match &self.failure {
            Failure::DoesNotReplay { step, error } => write!(
                f,
                "{}: {which} does not replay at step {step}: {error}",
                self.world
            ),
            Failure::NoViolation { property: None } => {
                write!(f, "{}: {which} replays without a violation", self.world)
            }
            Failure::NoViolation {
                property: Some(property),
            } => write!(
                f,
                "{}: {which} replays without violating {property}",
                self.world
            ),
        }
    }
}

impl std::error::Error for ProveError {}

impl From<ProveError> for String {
    fn from(e: ProveError) -> String {
        e.to_string()
    }
}

/// Proves that `tape` (choices from the initial world of `config`) violates a property
/// of `check`, shrinks it if asked (a candidate is kept while the same property fails
/// first under `check`), and proves the kept choices again, with their trace.
pub fn prove<F: EventFold>(
    config: &WorldConfig,
    tape: &[Choice],
    check: &mut dyn Check<F>,
    shrink: Shrink,
) -> Result<Counterexample<F>, ProveError> {
    let error = |shrunk, failure| ProveError {
        world: config.name.clone(),
        shrunk,
        failure,
    };
    let (_, found) = driver::replay(config, tape, check, None)
        .map_err(|(i, e)| error(false, does_not_replay(i, e)))?;
    let Some(violation) = found.violation else {
        return Err(error(false, Failure::NoViolation { property: None }));
    };
    let found_steps = found.steps;
    let choices = match shrink {
        Shrink::No => found.tape,
        Shrink::Yes => {
            let shrunk = crate::shrink::shrink(config, &found.tape, &violation.property, check);
            if shrunk.len() < found.tape.len() {
                shrunk
            } else {
                found.tape
            }
        }
    };
    let shrunk = shrink == Shrink::Yes;
    let mut trace = Trace::new();
    let (world, proved) = driver::replay(config, &choices, check, Some(&mut trace))
        .map_err(|(i, e)| error(shrunk, does_not_replay(i, e)))?;
    let detail = match proved.violation {
        Some(v) if v.property == violation.property => v.detail,
        _ => {
            let property = Some(violation.property);
            return Err(error(shrunk, Failure::NoViolation { property }));
        }
    };
    Ok(Counterexample {
        config: config.clone(),
        property: violation.property,
        detail,
        found_steps,
        choices,
        world,
        trace,
    })
}

fn does_not_replay(index: usize, error: ApplyError) -> Failure {
    Failure::DoesNotReplay {
        step: index + 1,
        error,
    }
}

impl<F: EventFold> Counterexample<F> {
    /// The violation the kept choices end in.
    pub fn violation(&self) -> Violation {
        Violation {
            property: self.property.clone(),
            detail: self.detail.clone(),
        }
    }

    /// The kept choices as labels: a tape that replays as printed.
    pub fn labels(&self) -> Vec<String> {
        self.choices.iter().map(|c| c.to_string()).collect()
    }

    /// The counterexample as a what-if script titled `about`, or why it cannot be one
    /// (a world the script language cannot declare, such as a platform mutant's).
    ///
    /// `run_check` is how `payhub-verify run` judges a script: every *always* property
    /// after every step. The choices are cut at its first violation, which becomes the
    /// script's `expect violation`; if that is not [`Counterexample::property`] (another
    /// property is violated first on the way) or there is none, the title says so.
    pub fn script(
        &self,
        run_check: &mut dyn Check<F>,
        about: &str,
    ) -> Result<String, crate::error::ExportError> {
        let (_, run) = driver::replay(&self.config, &self.choices, run_check, None).map_err(
            |(i, error)| crate::error::ExportError::DoesNotReplay { step: i + 1, error },
        )?;
        let violated = run.violation.as_ref().map(|v| v.property.as_str());
        let about = match violated {
            Some(p) if p == self.property => about.to_owned(),
            Some(p) => format!("{about} (on this path {p} is violated first)"),
            None => format!("{about} (replayed, it violates no always property)"),
        };
        crate::script::script_from_tape(&self.config, &run.tape, violated, &about)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::FaultProfile;
    use payhub_model::Millis;
    use payhub_model::client::Policy;

    /// A stand-in property: the clock never reaches 20 s.
    fn before_20s(world: &World<()>) -> Option<Violation> {
        (world.now >= Millis::secs(20)).then(|| Violation {
            property: "clock-before-20s".into(),
            detail: format!("the clock is at {}", world.now),
        })
    }

    fn failing_run(config: &WorldConfig) -> Vec<Choice> {
        (0..50)
            .find_map(|seed| {
                let profile = FaultProfile::for_seed(seed);
                let mut check = before_20s;
                let (_, run) = driver::run_seed(config, seed, &profile, 400, &mut check, None);
                (run.violation.is_some() && run.steps > 4).then_some(run.tape)
            })
            .expect("some seed lets 20 s pass")
    }

    #[test]
    fn a_failing_tape_is_proved_shrunk_and_proved_again() {
        let config = crate::worlds::simulation(&Policy::reference(), 2);
        let tape = failing_run(&config);
        let cx = prove(&config, &tape, &mut before_20s, Shrink::Yes).unwrap();
        assert_eq!(cx.property, "clock-before-20s");
        assert_eq!(cx.found_steps, tape.len());
        assert!(cx.choices.len() < tape.len(), "{:?}", cx.labels());
        assert!(cx.world.now >= Millis::secs(20));
        assert_eq!(cx.detail, format!("the clock is at {}", cx.world.now));
        assert!(!cx.trace.events.is_empty());
        assert_eq!(cx.labels().len(), cx.choices.len());
        // Not shrunk: the tape as found.
        let kept = prove(&config, &tape, &mut before_20s, Shrink::No).unwrap();
        assert_eq!(kept.choices, tape);
        // Its script (the reference platform and client: a script can say it), whose
        // run is judged by a check that finds nothing, says so in its title.
        let script = cx.script(&mut |_: &World<()>| None, "clock").unwrap();
        assert!(
            script.starts_with("# clock (replayed, it violates no always property)"),
            "{script}"
        );
    }

    #[test]
    fn a_tape_that_does_not_fail_or_does_not_replay_is_an_error() {
        let config = crate::worlds::simulation(&Policy::reference(), 2);
        let e = prove(&config, &[], &mut before_20s, Shrink::Yes).unwrap_err();
        assert_eq!(e.failure, Failure::NoViolation { property: None });
        assert!(!e.shrunk);
        assert_eq!(
            e.to_string(),
            format!(
                "{}: the counterexample replays without a violation",
                config.name
            )
        );
        let e = prove(&config, &[Choice::Tick], &mut before_20s, Shrink::Yes).unwrap_err();
        assert!(
            matches!(e.failure, Failure::DoesNotReplay { step: 1, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("does not replay at step 1"), "{e}");
    }
}
