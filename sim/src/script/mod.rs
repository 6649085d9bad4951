//! What-if scripts: scenarios written in the contract's own notation, run in the world.
//!
//! A script is a text file of one statement per line (grammar: `docs/scripts.md`):
//!
//! ```text
//! # S7: replay with a different card after a timeout
//! use platform=reference max_attempts=3
//! A: POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"A"}
//! upstream: approve
//! net: drop response
//! A: POST /v1/payments  Idempotency-Key: K  {"merchant_order_no":"ORDER-001","amount":10000,"currency":"USD","card":"B"}
//! expect: 200 status=succeeded
//! expect ledger: charges(card=B) = 0
//! ```
//!
//! [`parse`] reads a file into a [`Script`] (its [`crate::WorldConfig`] and statements)
//! or fails before anything runs; [`parse_all`] names every error of the file (the
//! first [`ERRORS_SHOWN`]), one `file:line:column: what is wrong` each. [`run`]
//! compiles each statement to world [`crate::Choice`]s and applies them with
//! [`crate::World::apply`], so traces, properties and replays are the world's own; a
//! [`crate::driver::Check`] (every *always* property) runs after every step, and the
//! script's own expectations at their lines. [`Report`] renders the run as text, JSON
//! or Mermaid. [`script_from_tape`] writes any tape as a script that `run` reproduces
//! choice for choice: the round trip from a counterexample back to a file a reviewer
//! can read, edit and run again.

pub mod ast;
mod command;
mod cursor;
mod export;
mod label;
mod parse;
mod parse_expect;
mod parse_settings;
mod parse_step;
mod report;
mod request;
mod run;
mod suggest;

pub use ast::{Script, Server, Statement};
pub use export::{script_from_tape, script_from_tape_filed};
pub(crate) use label::{parse_label, render_send};
pub use parse::{parse, parse_all};
pub use parse_settings::{DURATION_MAX, parse_duration};
pub use report::{Exchange, ExpectResult, Report};
pub use run::run;
pub use suggest::closest;

use serde::Serialize;

/// A malformed script: where, and what is wrong. Nothing ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScriptError {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl ScriptError {
    pub fn new(file: &str, line: u32, column: u32, message: impl Into<String>) -> ScriptError {
        ScriptError {
            file: file.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// `file:line:column: what is wrong`.
impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScriptError {}

/// At most this many errors of one file are reported (with how many there are).
pub const ERRORS_SHOWN: usize = 20;

/// Every error of a malformed script, in file order: the first [`ERRORS_SHOWN`] and
/// how many there are. Never empty. Nothing ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ScriptErrors {
    pub file: String,
    pub errors: Vec<ScriptError>,
    /// How many errors the file has (more than `errors.len()` when some were cut).
    pub total: usize,
}

impl ScriptErrors {
    /// The first error of the file.
    pub fn first(self) -> ScriptError {
        let first = self.errors.into_iter().next();
        first.unwrap_or_else(|| ScriptError::new(&self.file, 1, 1, "malformed script"))
    }
}

impl From<ScriptError> for ScriptErrors {
    fn from(e: ScriptError) -> ScriptErrors {
        ScriptErrors {
            file: e.file.clone(),
            errors: vec![e],
            total: 1,
        }
    }
}

/// One `file:line:column: what is wrong` line per error; with more than one, a last
/// line `N errors in FILE` (and how many are shown, past [`ERRORS_SHOWN`]).
impl std::fmt::Display for ScriptErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines: Vec<String> = self.errors.iter().map(|e| e.to_string()).collect();
        f.write_str(&lines.join("\n"))?;
        if self.total > 1 {
            write!(f, "\n{} errors in {}", self.total, self.file)?;
            if self.total > self.errors.len() {
                write!(f, " (the first {} shown)", self.errors.len())?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ScriptErrors {}
