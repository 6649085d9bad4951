//! The chaos sweep: adversarial raw requests against the reference platform, every
//! always property checked after every step.

use payhub_properties::AlwaysCheck;
use payhub_sim::driver::{self, FaultProfile};
use payhub_sim::worlds;
use serde::Serialize;

/// The chaos sweep: adversarial raw requests against the reference platform.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ChaosSummary {
    pub seeds: u64,
    pub steps: u64,
    pub violations: u64,
    pub first_violation: Option<String>,
}

/// Runs the chaos world over `seeds` seeds, checking every always property after every step.
pub fn chaos_sweep(seeds: u64, threads: usize) -> ChaosSummary {
    let config = worlds::chaos();
    let (chaos, _) = payhub_sim::sweep::fan_out(
        threads,
        |i| (i < seeds).then_some(i),
        &payhub_sim::sweep::never,
        |seed, chaos: &mut Chaos| {
            let mut check = AlwaysCheck { config: &config };
            let profile = FaultProfile::for_seed(seed);
            let (_, outcome) = driver::run_seed(&config, seed, &profile, 200, &mut check, None);
            chaos.steps += outcome.steps as u64;
            if let Some(v) = outcome.violation {
                chaos.violations += 1;
                if chaos.first.as_ref().is_none_or(|(s, _)| seed < *s) {
                    chaos.first =
                        Some((seed, format!("seed {seed}: {}: {}", v.property, v.detail)));
                }
            }
        },
    );
    ChaosSummary {
        seeds,
        steps: chaos.steps,
        violations: chaos.violations,
        first_violation: chaos.first.map(|(_, text)| text),
    }
}

/// The chaos sweep's runs, per worker.
#[derive(Default)]
struct Chaos {
    steps: u64,
    violations: u64,
    /// The lowest violating seed, with its violation.
    first: Option<(u64, String)>,
}

impl payhub_sim::sweep::Fold for Chaos {
    fn merge(&mut self, other: Chaos) {
        self.steps += other.steps;
        self.violations += other.violations;
        if let Some((seed, text)) = other.first
            && self.first.as_ref().is_none_or(|(s, _)| seed < *s)
        {
            self.first = Some((seed, text));
        }
    }
}
