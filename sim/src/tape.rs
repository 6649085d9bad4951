//! A saved run: the simulation settings it ran under, the seed that drew it (if any), and
//! its choices from the initial world.
//!
//! `payhub-verify simulate` writes the shrunk counterexample of a failing seed as a tape
//! (`tapes/seed-N.tape` in its report folder), and `payhub-verify replay --tape FILE`
//! replays one. The file is JSON, through serde; each choice is written as its label (its
//! `Display`), one per line, and read back through the label parser (`FromStr`):
//!
//! ```json
//! {
//!   "format": "payhub-verify tape v2",
//!   "simulation": { "policy": "reference", "clients": 2, "steps": 400, "no_swarm": false },
//!   "seed": 17,
//!   "choices": [
//!     "command 0",
//!     "deliver m1"
//!   ]
//! }
//! ```

use crate::choice::Choice;
use crate::config::{Readings, WorldConfig, reading_name};
use crate::driver::FaultProfile;
use crate::error::{SettingsError, TapeError};
use crate::worlds;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// A saved run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tape {
    /// Tells a tape from any other JSON file (and from the line-based tapes of v1).
    pub format: Version,
    /// The world and the driver's settings.
    pub simulation: SimulationArgs,
    /// The seed that drew the run, if a seed did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// A bug zoo counterexample (`mutants --show NAME --save-tape FILE`): the run is in
    /// the zoo's world with the mutant planted, not in the simulation world `simulation`
    /// names (which `replay` then does not use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoo: Option<ZooWorld>,
    /// The choices, from the initial world.
    #[serde(with = "labels")]
    pub choices: Vec<Choice>,
}

/// The world of a bug zoo counterexample: the planted bug and where the kill matrix
/// found it, as its method names it (`exhaustive:cancel`, `simulation`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZooWorld {
    /// The mutant, parameter mutant or client anti-pattern (`card_in_fingerprint`).
    pub mutant: String,
    /// The method that found it: `exhaustive:PRESET` or `simulation`.
    pub method: String,
}

/// The version of the tape format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Version {
    #[serde(rename = "payhub-verify tape v2")]
    V2,
}

/// The settings of a simulation run, as `payhub-verify simulate`'s world flags give them:
/// the world (`policy`, `clients`) and the driver's settings (`steps`, `no_swarm`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationArgs {
    /// `reference`, `reference-random`, or anti-patterns joined by '+'.
    pub policy: String,
    /// Servers of merchant 1 (test) sharing one database, 1 to 8.
    pub clients: u8,
    /// Most choices per run.
    pub steps: usize,
    /// The default fault profile for every seed instead of one drawn per seed.
    pub no_swarm: bool,
    /// The clients' readings of the 503 and 429 contradictions (A-S13-REFERENCE-CODE,
    /// A-429-REFERENCE-CODE); absent from a tape: the reference client's.
    #[serde(default, skip_serializing_if = "Readings::is_default")]
    pub readings: Readings,
}

impl Default for SimulationArgs {
    fn default() -> Self {
        SimulationArgs {
            policy: "reference".into(),
            clients: 2,
            steps: 400,
            no_swarm: false,
            readings: Readings::default(),
        }
    }
}

impl SimulationArgs {
    /// The simulation world these settings name.
    pub fn config(&self) -> Result<WorldConfig, SettingsError> {
        if self.clients == 0 || self.clients > 8 {
            return Err(SettingsError::Clients(self.clients));
        }
        let policy = worlds::parse_policy(&self.policy)?;
        let mut config = worlds::simulation(&policy, self.clients);
        for client in &mut config.clients {
            client.readings = self.readings;
        }
        Ok(config)
    }

    /// The fault profile seed `seed` runs under.
    pub fn profile(&self, seed: u64) -> FaultProfile {
        if self.no_swarm {
            FaultProfile::default()
        } else {
            FaultProfile::for_seed(seed)
        }
    }

    /// The flags that give these settings: `--policy P --clients N --steps N [--no-swarm]`.
    pub fn flags(&self) -> String {
        let mut s = format!(
            "--policy {} --clients {} --steps {}",
            self.policy, self.clients, self.steps
        );
        if self.no_swarm {
            s.push_str(" --no-swarm");
        }
        if !self.readings.is_default() {
            let _ = write!(
                s,
                " --after-503 {} --after-429 {}",
                reading_name(self.readings.after_503),
                reading_name(self.readings.after_429)
            );
        }
        s
    }
}

/// The first line of a tape written by payhub-verify before v2.
const V1_HEADER: &str = "# payhub-verify tape v1";

impl Tape {
    pub fn new(simulation: SimulationArgs, seed: Option<u64>, choices: Vec<Choice>) -> Tape {
        Tape {
            format: Version::V2,
            simulation,
            seed,
            zoo: None,
            choices,
        }
    }

    /// A bug zoo counterexample's tape: its choices from the initial world of `zoo`.
    pub fn of_zoo(zoo: ZooWorld, choices: Vec<Choice>) -> Tape {
        Tape {
            zoo: Some(zoo),
            ..Tape::new(SimulationArgs::default(), None, choices)
        }
    }

    /// The tape as its file holds it (pretty JSON, one choice label per line).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a tape serializes");
        s.push('\n');
        s
    }

    /// Reads a tape file's text. Errors say what is wrong and where (`line L column C`).
    pub fn from_json(text: &str) -> Result<Tape, TapeError> {
        if text.starts_with(V1_HEADER) {
            return Err(TapeError::OlderVersion);
        }
        serde_json::from_str(text).map_err(|e| match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                TapeError::NotJson(e)
            }
            _ => TapeError::Invalid(e),
        })
    }
}

/// A tape's choices as their labels: written with `Display`, read with `FromStr`; an
/// error names the step.
mod labels {
    use crate::choice::Choice;
    use serde::de::{Error, SeqAccess, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(choices: &[Choice], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(choices.iter().map(|c| c.to_string()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Choice>, D::Error> {
        deserializer.deserialize_seq(Labels)
    }

    struct Labels;

    impl<'de> Visitor<'de> for Labels {
        type Value = Vec<Choice>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of choice labels")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Choice>, A::Error> {
            let mut choices = Vec::new();
            while let Some(label) = seq.next_element::<String>()? {
                let choice = Choice::of_step(choices.len(), &label).map_err(A::Error::custom)?;
                choices.push(choice);
            }
            Ok(choices)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One choice of every variant (and every control, branch and decision) survives the
    /// round trip through a tape file.
    #[test]
    fn a_tape_round_trips_every_choice_variant() {
        let choices = crate::choice::examples();
        let tape = Tape::new(
            SimulationArgs {
                policy: "new_key_after_timeout+poll_too_fast".into(),
                clients: 3,
                steps: 120,
                no_swarm: true,
                readings: Readings::other(),
            },
            Some(42),
            choices.clone(),
        );
        let text = tape.to_json();
        assert!(
            text.contains("\"format\": \"payhub-verify tape v2\""),
            "{text}"
        );
        assert!(text.contains("\n    \"command 0 then crash\",\n"), "{text}");
        let back = Tape::from_json(&text).unwrap();
        assert_eq!(back, tape);
        assert_eq!(back.choices, choices);
        let unseeded = Tape::new(SimulationArgs::default(), None, Vec::new());
        assert!(!unseeded.to_json().contains("seed"));
        assert_eq!(Tape::from_json(&unseeded.to_json()).unwrap(), unseeded);
    }

    #[test]
    fn bad_tapes_say_what_is_wrong() {
        let simulation = r#""simulation": {"policy": "reference", "clients": 2, "steps": 10, "no_swarm": false}"#;
        for (text, expected) in [
            ("hello\n".to_owned(), "not a payhub-verify tape"),
            (
                format!("{V1_HEADER}\nworld-flags: --steps 3\n"),
                "an older payhub-verify (v1",
            ),
            (
                format!(r#"{{"format": "payhub-verify tape v1", {simulation}, "choices": []}}"#),
                "unknown variant `payhub-verify tape v1`",
            ),
            (
                format!(
                    r#"{{"format": "payhub-verify tape v2", {simulation}, "choices": [], "bogus": 3}}"#
                ),
                "unknown field `bogus`",
            ),
            (
                r#"{"format": "payhub-verify tape v2", "choices": []}"#.to_owned(),
                "missing field `simulation`",
            ),
            (
                format!(
                    r#"{{"format": "payhub-verify tape v2", {simulation}, "choices": ["tick", "warp 15s"]}}"#
                ),
                "step 2: 'warp 15s' is not a choice label (column 1: unknown choice 'warp'",
            ),
            (
                format!(r#"{{"format": "payhub-verify tape v2", {simulation}, "choices": [3]}}"#),
                "invalid type: integer `3`, expected a string",
            ),
        ] {
            let e = Tape::from_json(&text).unwrap_err().to_string();
            assert!(e.contains(expected), "{text}: {e}");
        }
    }

    #[test]
    fn settings_name_their_world_and_flags() {
        let args = SimulationArgs {
            clients: 9,
            ..SimulationArgs::default()
        };
        assert_eq!(args.config().unwrap_err(), SettingsError::Clients(9));
        let args = SimulationArgs {
            policy: "nope".into(),
            ..SimulationArgs::default()
        };
        assert!(
            args.config()
                .unwrap_err()
                .to_string()
                .contains("unknown policy 'nope'")
        );
        let args = SimulationArgs {
            no_swarm: true,
            ..SimulationArgs::default()
        };
        assert_eq!(
            args.flags(),
            "--policy reference --clients 2 --steps 400 --no-swarm"
        );
        let other = SimulationArgs {
            readings: Readings::other(),
            ..SimulationArgs::default()
        };
        assert_eq!(
            other.flags(),
            "--policy reference --clients 2 --steps 400 --after-503 result_unknown --after-429 not_accepted"
        );
        let config = other.config().unwrap();
        assert!(
            config
                .clients
                .iter()
                .all(|c| c.readings == Readings::other())
        );
        assert_eq!(args.profile(7), FaultProfile::default());
        assert_eq!(
            SimulationArgs::default().profile(7),
            FaultProfile::for_seed(7)
        );
        assert_eq!(
            SimulationArgs::default().config().unwrap().name,
            "simulation policy=reference servers=2"
        );
    }
}
