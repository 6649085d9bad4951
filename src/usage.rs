//! What every subcommand validates the same way: thread, client and seed counts, policy
//! and preset names, with a did-you-mean for a near miss. One place, so that
//! `--threads 0` reads the same in `check`, `simulate`, `verify`, `mutants` and `bench`.

use payhub_model::client::AntiPattern;

/// Most worker threads a command takes.
pub const THREADS_MAX: usize = 1024;
/// Most merchant servers a simulation world has (`--clients`).
pub const CLIENTS_MAX: u8 = 8;

fn count<T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy>(
    s: &str,
    min: T,
    max: T,
    what: &str,
) -> Result<T, String> {
    let bad = || format!("must be a number of {what} from {min} to {max}, not '{s}'");
    let n: T = s.trim().parse().map_err(|_| bad())?;
    if n < min || n > max {
        return Err(bad());
    }
    Ok(n)
}

/// `--threads N` (and `--checker-threads`): 1 to [`THREADS_MAX`].
pub fn threads(s: &str) -> Result<usize, String> {
    count(s, 1, THREADS_MAX, "threads")
}

/// `--clients N`: 1 to [`CLIENTS_MAX`].
pub fn clients(s: &str) -> Result<u8, String> {
    count(s, 1, CLIENTS_MAX, "merchant servers")
}

/// A count of seeds (`verify --seeds N`, `mutants --seeds N`): at least 1, since a run
/// over no seed checks nothing.
pub fn seeds(s: &str) -> Result<u64, String> {
    at_least_one(s, "seed")
}

/// `--steps N`: at least 1, since a run of no step checks nothing.
pub fn steps(s: &str) -> Result<usize, String> {
    at_least_one(s, "step")
}

fn at_least_one<T: std::str::FromStr + PartialEq + From<u8>>(
    s: &str,
    what: &str,
) -> Result<T, String> {
    match s.trim().parse::<T>() {
        Ok(n) if n != T::from(0) => Ok(n),
        Ok(_) => Err(format!(
            "nothing to check: a run of 0 {what}s checks nothing (give 1 or more)"
        )),
        Err(_) => Err(format!("'{s}' is not a number of {what}s")),
    }
}

/// Where a command writes its report and tapes: `out` if given, else
/// `target/payhub-report` of the repository when run inside it (from any subfolder: no
/// stray `target/` there), else of the current folder.
pub fn out_dir(out: Option<&std::path::Path>) -> Result<std::path::PathBuf, String> {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let here = std::env::current_dir().unwrap_or_default();
    let dir = match (out, repo.canonicalize()) {
        (Some(out), _) => out.to_path_buf(),
        (None, Ok(root)) if here != root && here.starts_with(&root) => {
            root.join("target/payhub-report")
        }
        (None, _) => std::path::PathBuf::from("target/payhub-report"),
    };
    // Checked before the run: a run's verdict is never lost to where it is written.
    match dir.exists() && !dir.is_dir() {
        true => Err(format!("--out {}: not a folder", dir.display())),
        false => Ok(dir),
    }
}

/// The command line this process was started with, as a shell would take it back.
pub fn command_line() -> String {
    line_of(std::env::args().skip(1))
}

/// Flags whose value is a secret: a report names the flag, never the value.
const SECRET_FLAGS: [&str; 1] = ["--control-token"];

/// The command line of `args`, each secret flag's value written `***`.
fn line_of(args: impl Iterator<Item = String>) -> String {
    let mut line = String::from("payhub-verify");
    let mut secret_next = false;
    for arg in args {
        let arg = if std::mem::take(&mut secret_next) {
            "***".to_owned()
        } else if let Some(flag) = SECRET_FLAGS.iter().find(|f| arg.starts_with(*f)) {
            secret_next = arg == *flag;
            if secret_next {
                arg
            } else {
                format!("{flag}=***")
            }
        } else {
            arg
        };
        line.push(' ');
        if arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@".contains(c))
        {
            line.push_str(&arg);
        } else {
            line.push('\'');
            line.push_str(&arg.replace('\'', "'\\''"));
            line.push('\'');
        }
    }
    line
}

/// The closest of `candidates` to `word`, if it is close enough to be a typo (one
/// implementation for the scripts and the command line).
pub use payhub_sim::script::closest;

/// `unknown WHAT 'word' (did you mean 'x'?; WHATs: a, b, c)`.
pub fn unknown<'a>(
    what: &str,
    word: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> String {
    let names: Vec<&str> = candidates.clone().into_iter().collect();
    let hint = closest(word, candidates)
        .map(|c| format!("did you mean '{c}'? "))
        .unwrap_or_default();
    let plural = match what.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{what}s"),
    };
    format!(
        "unknown {what} '{word}' ({hint}{plural}: {})",
        names.join(", ")
    )
}

/// A `--policy` value: `reference`, `reference-random`, or distinct anti-patterns joined
/// by `+` (each already is the reference client plus one deviation). Returns it as given.
/// `--after-503 R`, `--after-429 R`: a client's reading of a contradiction
/// (`not_accepted` or `result_unknown`).
pub fn reading(s: &str) -> Result<payhub_model::client::After503, String> {
    payhub_sim::reading_named(s.trim())
        .ok_or_else(|| format!("'{s}' is not a reading (not_accepted or result_unknown)"))
}

pub fn policy(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s == "reference" || s == "reference-random" {
        return Ok(s.to_owned());
    }
    let names = || {
        ["reference", "reference-random"]
            .into_iter()
            .chain(AntiPattern::ALL.iter().map(|p| p.name()))
    };
    let parts: Vec<&str> = s.split(['+', ',']).map(str::trim).collect();
    let mut seen: Vec<&str> = Vec::new();
    for part in &parts {
        if *part == "reference" || *part == "reference-random" {
            let rest: Vec<&str> = parts
                .iter()
                .copied()
                .filter(|p| !p.starts_with("reference"))
                .collect();
            let instead = if rest.is_empty() {
                *part
            } else {
                &rest.join("+")
            };
            return Err(format!(
                "'{part}' cannot be combined: each anti-pattern already is the reference client plus one deviation (write --policy {instead})"
            ));
        }
        if AntiPattern::from_name(part).is_none() {
            return Err(unknown("policy", part, names()));
        }
        if seen.contains(part) {
            return Err(format!("policy '{s}' names '{part}' twice"));
        }
        seen.push(part);
    }
    Ok(s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_never_shows_a_secret() {
        let args = |a: &[&str]| {
            a.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .into_iter()
        };
        assert_eq!(
            line_of(args(&["serve", "--control-token", "s3cret", "--port", "0"])),
            "payhub-verify serve --control-token '***' --port 0"
        );
        assert_eq!(
            line_of(args(&["serve", "--control-token=s3cret"])),
            "payhub-verify serve '--control-token=***'"
        );
        assert_eq!(
            line_of(args(&["check", "--preset", "it's"])),
            "payhub-verify check --preset 'it'\\''s'"
        );
    }

    #[test]
    fn counts_read_the_same_everywhere() {
        assert_eq!(threads("2"), Ok(2));
        assert_eq!(
            threads("0").unwrap_err(),
            "must be a number of threads from 1 to 1024, not '0'"
        );
        assert_eq!(
            clients("1000").unwrap_err(),
            "must be a number of merchant servers from 1 to 8, not '1000'"
        );
        assert_eq!(
            clients("0").unwrap_err(),
            "must be a number of merchant servers from 1 to 8, not '0'"
        );
        assert_eq!(
            seeds("0").unwrap_err(),
            "nothing to check: a run of 0 seeds checks nothing (give 1 or more)"
        );
        assert!(steps("0").is_err());
        assert_eq!(seeds("10"), Ok(10));
    }

    #[test]
    fn policies_are_checked_and_near_misses_named() {
        assert_eq!(policy("reference").as_deref(), Ok("reference"));
        assert!(policy("new_key_after_timeout+poll_too_fast").is_ok());
        let e = policy("reference+new_key_after_timeout").unwrap_err();
        assert!(e.contains("write --policy new_key_after_timeout"), "{e}");
        let e = policy("reference+reference").unwrap_err();
        assert!(e.ends_with("(write --policy reference)"), "{e}");
        let e = policy("poll_too_fast+poll_too_fast").unwrap_err();
        assert!(e.contains("twice"), "{e}");
        let e = policy("new_key_after_timout").unwrap_err();
        assert!(e.contains("did you mean 'new_key_after_timeout'?"), "{e}");
    }

    #[test]
    fn closest_names_a_typo_only() {
        assert_eq!(
            closest("card-rerty", ["card-retry", "scope"]),
            Some("card-retry")
        );
        assert_eq!(closest("zzz", ["card-retry", "scope"]), None);
    }
}
