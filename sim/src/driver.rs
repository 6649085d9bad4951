//! The seeded driver: a ChaCha RNG picks among the enabled choices, weighted by a fault
//! profile that the seed also draws (swarm testing), and the properties are checked
//! after every step. A run is fully described by its seed, or by its tape of choices.

use crate::choice::Choice;
use crate::config::WorldConfig;
use crate::error::ReplayError;
use crate::event_fold::EventFold;
use crate::sink::Sink;
use crate::trace::Trace;
use crate::world::{ApplyError, World};
use payhub_model::{AcquirerDecision, Control};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;

/// How likely each kind of choice is, relative to delivering a message (weight 1000).
/// Drawn per seed by [`FaultProfile::for_seed`]; printed as `key=value` before a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FaultProfile {
    pub drop_weight: u32,
    pub duplicate_weight: u32,
    pub fail_500_weight: u32,
    pub upstream_drop_weight: u32,
    /// Environment controls: in the simulation world merchant 1's rate limit (429) and
    /// the channel pause (503), switched on and off.
    pub control_weight: u32,
    pub crash_weight: u32,
    pub send_weight: u32,
    /// Letting time pass while messages are in flight (delay, timeouts).
    pub tick_weight: u32,
    pub approve_weight: u32,
    pub decline_weight: u32,
    pub require_action_weight: u32,
    pub upstream_fail_weight: u32,
    pub approve_silently_weight: u32,
    pub authenticate_weight: u32,
}

impl Default for FaultProfile {
    /// The default profile: a mildly lossy network, a mostly approving acquirer.
    fn default() -> Self {
        FaultProfile {
            drop_weight: 60,
            duplicate_weight: 30,
            fail_500_weight: 20,
            upstream_drop_weight: 20,
            control_weight: 5,
            crash_weight: 10,
            send_weight: 100,
            tick_weight: 50,
            approve_weight: 600,
            decline_weight: 150,
            require_action_weight: 50,
            upstream_fail_weight: 50,
            approve_silently_weight: 50,
            authenticate_weight: 200,
        }
    }
}

/// Mixed into a seed before it draws the fault profile of its run ([`FaultProfile::for_seed`]),
/// so that the profile's draws are not the run's own choices.
const PROFILE_SALT: u64 = 0x5EED_5EED_5EED_5EED;

impl FaultProfile {
    /// The swarm profile of seed `seed`: the one derivation of a profile from a seed, so
    /// that every sweep (simulate, verify's chaos sweep, bench, the bug zoo, the pinned
    /// traces) runs seed N exactly as `replay --seed N` shows it.
    pub fn for_seed(seed: u64) -> FaultProfile {
        FaultProfile::swarm(&mut ChaCha8Rng::seed_from_u64(seed ^ PROFILE_SALT))
    }

    /// Swarm testing: each seed draws its own mix, from fault-free to very hostile.
    pub fn swarm(rng: &mut ChaCha8Rng) -> FaultProfile {
        let mut w = |max: u32| {
            if rng.gen_bool(0.25) {
                0
            } else {
                rng.gen_range(0..=max)
            }
        };
        FaultProfile {
            drop_weight: w(300),
            duplicate_weight: w(150),
            fail_500_weight: w(100),
            upstream_drop_weight: w(100),
            control_weight: w(40),
            crash_weight: w(60),
            send_weight: w(300),
            tick_weight: w(300).max(1),
            approve_weight: w(1000).max(1),
            decline_weight: w(500),
            require_action_weight: w(200),
            upstream_fail_weight: w(200),
            approve_silently_weight: w(200),
            authenticate_weight: w(500).max(1),
        }
    }

    /// `drop_weight=60 duplicate_weight=30 …`, the way a run prints its settings.
    pub fn key_values(&self) -> String {
        let v = serde_json::to_value(self).unwrap_or_default();
        let mut parts = Vec::new();
        if let Some(map) = v.as_object() {
            // serde_json keeps declaration order only with preserve_order; sort for stability.
            let ordered: BTreeMap<_, _> = map.iter().collect();
            for (k, v) in ordered {
                parts.push(format!("{k}={v}"));
            }
        }
        parts.join(" ")
    }

    fn weight(&self, choice: &Choice, quiet_otherwise: bool) -> u32 {
        match choice {
            Choice::Deliver { .. } | Choice::DeliverUpstream { .. } => 1000,
            Choice::Drop { .. } => self.drop_weight,
            Choice::Duplicate { .. } => self.duplicate_weight,
            Choice::Fail500Before { .. } | Choice::Fail500After { .. } => self.fail_500_weight,
            Choice::DropUpstream { .. } => self.upstream_drop_weight,
            Choice::Control(_) => self.control_weight,
            Choice::Crash { .. } => self.crash_weight,
            Choice::Restart { .. } => 1000,
            Choice::Command {
                crash_after: true, ..
            } => self.crash_weight,
            Choice::Command { .. } => self.send_weight,
            Choice::Send { .. } => self.send_weight,
            Choice::Tick | Choice::Advance(_) => {
                if quiet_otherwise {
                    1000
                } else {
                    self.tick_weight
                }
            }
            Choice::Acquire { decision, .. } => match decision {
                AcquirerDecision::Approve => self.approve_weight,
                AcquirerDecision::Decline => self.decline_weight,
                AcquirerDecision::RequireAction => self.require_action_weight,
                AcquirerDecision::Fail => self.upstream_fail_weight,
                AcquirerDecision::ApproveSilently => self.approve_silently_weight,
            },
            Choice::Authenticate { .. } => self.authenticate_weight,
        }
    }
}

/// A property violation found by a check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub property: String,
    /// What exactly went wrong.
    pub detail: String,
}

/// Evaluates properties on a state; `None` when all hold.
pub trait Check<F: EventFold> {
    fn check(&mut self, world: &World<F>) -> Option<Violation>;
}

impl<F: EventFold, C: FnMut(&World<F>) -> Option<Violation>> Check<F> for C {
    fn check(&mut self, world: &World<F>) -> Option<Violation> {
        self(world)
    }
}

/// What one run did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunOutcome {
    pub seed: Option<u64>,
    pub steps: usize,
    /// The choices applied, in order: the run's tape.
    pub tape: Vec<Choice>,
    pub violation: Option<Violation>,
    /// Whether the run stopped because nothing was enabled any more.
    pub quiescent: bool,
}

/// Runs `config` from seed `seed` for at most `max_steps` choices, checking after each.
pub fn run_seed<F: EventFold>(
    config: &WorldConfig,
    seed: u64,
    profile: &FaultProfile,
    max_steps: usize,
    check: &mut dyn Check<F>,
    trace: Option<&mut Trace>,
) -> (World<F>, RunOutcome) {
    let mut sink = Sink::new(trace);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut world = World::new(config);
    let mut enabled = Vec::new();
    let mut tape = Vec::new();
    let mut violation = check.check(&world);
    let mut quiescent = false;
    while violation.is_none() && tape.len() < max_steps {
        world.enabled(config, &mut enabled);
        if enabled.is_empty() || only_controls(config, &enabled) {
            quiescent = true;
            break;
        }
        let choice = pick(
            &mut rng,
            profile,
            (!config.clients.is_empty()).then_some(&world),
            &enabled,
        );
        sink.begin_step(tape.len() as u32);
        world
            .apply_in(config, &choice, &mut sink)
            .expect("an enabled choice applies");
        tape.push(choice);
        violation = check.check(&world);
    }
    let outcome = RunOutcome {
        seed: Some(seed),
        steps: tape.len(),
        tape,
        violation,
        quiescent,
    };
    (world, outcome)
}

/// Whether, in a world of client servers, only the environment could act (switch a
/// control): nothing the merchants or the platform wait for is left, and the run is over.
/// The simulation world's rate limits and pauses do not keep a finished run going; the
/// chaos world, of scripted senders only, runs its full length as before.
fn only_controls(config: &WorldConfig, enabled: &[Choice]) -> bool {
    !config.clients.is_empty() && enabled.iter().all(|c| matches!(c, Choice::Control(_)))
}

/// How readily an outage of a world of client servers ends once it began, relative to a
/// delivery (1000): a rate limit or a channel pause lasts a few steps, not the rest of a
/// run whose clock jumps hours at a time; when only time could pass otherwise, it ends
/// before the clock jumps four times in five ([`OUTAGE_END_WEIGHT_QUIET`]).
const OUTAGE_END_WEIGHT: u32 = 250;

/// [`OUTAGE_END_WEIGHT`] when nothing but time is pending (a tick weighs 1000 then).
const OUTAGE_END_WEIGHT_QUIET: u32 = 4000;

/// The weight of a control in a world of client servers, by the outage it changes
/// (merchants rate-limited, the channel paused): one that changes nothing weighs 0,
/// ending an outage [`OUTAGE_END_WEIGHT`] (or [`OUTAGE_END_WEIGHT_QUIET`]), beginning one
/// `control_weight`. In a world of scripted senders only (chaos) every control weighs
/// `control_weight`, as before.
fn control_weight<F: EventFold>(
    world: Option<&World<F>>,
    profile: &FaultProfile,
    control: &Control,
    quiet: bool,
) -> u32 {
    let Some(world) = world else {
        return profile.control_weight;
    };
    let (now, on) = match control {
        Control::SetRateLimited { merchant, on } => {
            (world.platform.is_rate_limited(*merchant), *on)
        }
        Control::SetChannelPaused { on } => (world.platform.channel_paused(), *on),
        _ => return profile.control_weight,
    };
    match (now == on, on) {
        (true, _) => 0,
        (false, true) => profile.control_weight,
        (false, false) if quiet => OUTAGE_END_WEIGHT_QUIET,
        (false, false) => OUTAGE_END_WEIGHT,
    }
}

fn pick(
    rng: &mut ChaCha8Rng,
    profile: &FaultProfile,
    // The world whose outages weigh its controls: one of client servers, else none.
    outages: Option<&World<impl EventFold>>,
    enabled: &[Choice],
) -> Choice {
    let only_time = enabled.iter().all(|c| matches!(c, Choice::Tick));
    let quiet_otherwise = only_time
        || !enabled.iter().any(|c| {
            matches!(
                c,
                Choice::Deliver { .. } | Choice::DeliverUpstream { .. } | Choice::Acquire { .. }
            )
        });
    let weights: Vec<u64> = enabled
        .iter()
        .map(|c| match c {
            Choice::Control(control) => control_weight(outages, profile, control, quiet_otherwise),
            c => profile.weight(c, quiet_otherwise),
        } as u64)
        .collect();
    let total: u64 = weights.iter().sum();
    if total == 0 {
        // Nothing weighs: any choice, but not a control that changes nothing.
        let pool: Vec<&Choice> = enabled
            .iter()
            .filter(|c| !matches!(c, Choice::Control(k) if control_weight(outages, profile, k, true) == 0))
            .collect();
        if outages.is_some() && !pool.is_empty() {
            return pool[rng.gen_range(0..pool.len())].clone();
        }
        return enabled[rng.gen_range(0..enabled.len())].clone();
    }
    let mut x = rng.gen_range(0..total);
    for (choice, w) in enabled.iter().zip(&weights) {
        if x < *w {
            return choice.clone();
        }
        x -= w;
    }
    enabled[enabled.len() - 1].clone()
}

/// Replays a tape strictly: every choice must be enabled when its turn comes.
/// Returns the outcome, or the index and error of the first choice that does not apply.
pub fn replay<F: EventFold>(
    config: &WorldConfig,
    tape: &[Choice],
    check: &mut dyn Check<F>,
    trace: Option<&mut Trace>,
) -> Result<(World<F>, RunOutcome), (usize, ApplyError)> {
    let mut sink = Sink::new(trace);
    let mut world = World::new(config);
    let mut violation = check.check(&world);
    let mut applied = Vec::new();
    for (i, choice) in tape.iter().enumerate() {
        if violation.is_some() {
            break;
        }
        sink.begin_step(i as u32);
        world
            .apply_in(config, choice, &mut sink)
            .map_err(|e| (i, e))?;
        applied.push(choice.clone());
        violation = check.check(&world);
    }
    let outcome = RunOutcome {
        seed: None,
        steps: applied.len(),
        tape: applied,
        violation,
        quiescent: false,
    };
    Ok((world, outcome))
}

/// Checks that a saved tape replays as a run: each choice must be enabled at its turn,
/// or be one the world applies without listing it (a scripted `send`, an `advance`, an
/// `env` control, a `tick`), and must apply. Errors name the step, the choice's label and
/// the labels that were enabled.
pub fn check_enabled(config: &WorldConfig, tape: &[Choice]) -> Result<(), ReplayError> {
    // What is enabled never depends on the fold: this world folds nothing.
    let mut world = World::<()>::new(config);
    let mut enabled = Vec::new();
    for (i, choice) in tape.iter().enumerate() {
        world.enabled(config, &mut enabled);
        let listed = || {
            let listed: Vec<String> = enabled.iter().map(|c| c.to_string()).collect();
            if listed.is_empty() {
                "nothing".to_owned()
            } else {
                listed.join(" | ")
            }
        };
        if !is_free(choice) && !enabled.contains(choice) {
            return Err(ReplayError::NotEnabled {
                step: i + 1,
                choice: choice.to_string(),
                enabled: listed(),
            });
        }
        world
            .apply(config, choice, None)
            .map_err(|error| ReplayError::Refused {
                step: i + 1,
                choice: choice.to_string(),
                error,
                enabled: listed(),
            })?;
    }
    Ok(())
}

/// Reads a tape of choice labels (each as its `Display` writes it) and checks it with
/// [`check_enabled`]. Errors name the step and the label.
pub fn resolve_labels(config: &WorldConfig, labels: &[String]) -> Result<Vec<Choice>, ReplayError> {
    let tape = labels
        .iter()
        .enumerate()
        .map(|(i, label)| Choice::of_step(i, label))
        .collect::<Result<Vec<Choice>, ReplayError>>()?;
    check_enabled(config, &tape)?;
    Ok(tape)
}

/// The choices a world applies without listing them as enabled: the ones a script makes
/// (`World::apply` takes them outside the configuration's alphabet, waits and controls,
/// without spending its budget). Every other choice of a tape must be enabled.
pub fn is_free(choice: &Choice) -> bool {
    matches!(
        choice,
        Choice::Send { .. } | Choice::Advance(_) | Choice::Control(_) | Choice::Tick
    )
}

/// Stops every fault and lets the world settle: deliveries first, then approving
/// acquirers, restarts, successful authentications, and time, in that order of
/// preference, until nothing is enabled, `span` of simulated time has passed, or
/// `max_steps` choices were applied. The liveness property is judged on the result.
/// Returns how many choices of the world it applied.
pub fn heal<F: EventFold>(
    config: &WorldConfig,
    world: &mut World<F>,
    span: payhub_model::Millis,
    max_steps: usize,
) -> usize {
    heal_recorded(config, world, span, max_steps, None).steps
}

/// What [`heal_recorded`] did.
#[derive(Clone, Debug, Default)]
pub struct Healing {
    /// Every choice it applied, in order: the environment's own controls that end the
    /// outages first, then the world's choices.
    pub choices: Vec<Choice>,
    /// How many of them were the world's choices (the controls not counted).
    pub steps: usize,
}

/// [`heal`], recording every event it makes into `trace` (when given), and returning
/// the choices it applied.
pub fn heal_recorded<F: EventFold>(
    config: &WorldConfig,
    world: &mut World<F>,
    span: payhub_model::Millis,
    max_steps: usize,
    mut trace: Option<&mut Trace>,
) -> Healing {
    let mut healing = Healing::default();
    let until = world.now.after(span);
    // The outages end with the faults: a rate limit or a channel pause still on is
    // switched off first (RATE-01, RATE-04), as the environment's own control, outside
    // the run's budget (whatever the run spent of it).
    let ends: Vec<Control> = config
        .controls
        .iter()
        .filter(|c| {
            matches!(
                c,
                Control::SetRateLimited { on: false, .. } | Control::SetChannelPaused { on: false }
            )
        })
        .cloned()
        .collect();
    if !ends.is_empty() {
        let free = WorldConfig {
            controls: Vec::new(),
            ..config.clone()
        };
        for control in ends {
            let choice = Choice::Control(control);
            let _ = world.apply(&free, &choice, trace.as_deref_mut());
            healing.choices.push(choice);
        }
    }
    let mut enabled = Vec::new();
    let rank = |c: &Choice| -> Option<u8> {
        Some(match c {
            Choice::Deliver { .. } | Choice::DeliverUpstream { .. } => 0,
            Choice::Acquire {
                decision: AcquirerDecision::Approve,
                ..
            } => 1,
            Choice::Restart { .. } => 2,
            Choice::Authenticate { ok: true, .. } => 3,
            Choice::Tick => 4,
            _ => return None,
        })
    };
    for step in 0..max_steps {
        healing.steps = step;
        if world.now > until {
            return healing;
        }
        world.enabled(config, &mut enabled);
        let Some(choice) = enabled
            .iter()
            .filter_map(|c| rank(c).map(|r| (r, c)))
            .min_by_key(|(r, _)| *r)
            .map(|(_, c)| c.clone())
        else {
            return healing;
        };
        let applied = world.apply(config, &choice, trace.as_deref_mut());
        healing.choices.push(choice);
        if applied.is_err() {
            return healing;
        }
    }
    healing.steps = max_steps;
    healing
}

#[cfg(test)]
mod tests {
    use super::*;
    use payhub_model::client::Policy;

    fn choices(labels: &[&str]) -> Vec<Choice> {
        labels.iter().map(|l| l.parse().unwrap()).collect()
    }

    /// Choices a script's tape holds (a send outside the alphabet, an advance, a control)
    /// replay without being listed as enabled.
    #[test]
    fn free_send_advance_and_control_choices_replay() {
        let config = crate::worlds::simulation(&Policy::reference(), 2);
        let tape = choices(&[
            r#"send merchant-5 POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-9","amount":10000,"currency":"USD","card":"A"}"#,
            "deliver m1",
            "advance 15s",
            "fee-rate 350",
            r#"send merchant-5 GET /v1/payments?merchant_order_no=ORDER-9  Authorization: Bearer ak_3"#,
        ]);
        assert!(matches!(tape[0], Choice::Send { merchant: 5, .. }));
        assert_eq!(tape[2], Choice::Advance(payhub_model::Millis::secs(15)));
        assert_eq!(check_enabled(&config, &tape), Ok(()));
    }

    #[test]
    fn labels_resolve_to_the_choices_they_name() {
        let config = crate::worlds::simulation(&Policy::reference(), 2);
        let labels: Vec<String> = ["command 0", "deliver m1"].map(String::from).to_vec();
        let tape = resolve_labels(&config, &labels).unwrap();
        assert_eq!(tape, choices(&["command 0", "deliver m1"]));
        let e = resolve_labels(&config, &["fly m1".to_owned()])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("step 1: 'fly m1' is not a choice label"),
            "{e}"
        );
        assert!(e.contains("unknown choice 'fly'"), "{e}");
    }

    #[test]
    fn disabled_choices_are_named_with_what_was_enabled() {
        let config = crate::worlds::simulation(&Policy::reference(), 2);
        let e = check_enabled(&config, &choices(&["deliver m99"]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("step 1: 'deliver m99' is not enabled"), "{e}");
        assert!(e.contains("enabled: rate-limit merchant_1 on | "), "{e}");
        assert!(e.contains(" | command 0 | "), "{e}");
        let e = check_enabled(&config, &choices(&["tick"]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("step 1: 'tick': "), "{e}");
    }
}
